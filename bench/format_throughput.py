"""Indexing throughput per docs format (issue 33): MB/s and peak RSS of a sync with an instant embedder.

Run: python -m bench.format_throughput [--eval DIR] [--mb 5] [--json PATH]

Each format gets a tree of about --mb MB made of copies of a real tree: markdown from eval/docs (uv, pydantic), rst
from eval/formats' Flask docs, AsciiDoc from its Asciidoctor docs, plain text from the markdown files named .txt
(read as plain text: they have no rst titles). Each is synced into a new index in a fresh process
(scree.benchmarks.sync_throughput.measure: the instant embedder, the real syncer and store), so the figures are
scree's own chunking, hashing and writing. A last tree holds the issue's hostile files (100,000 adornment lines,
1,000 nested directives, attribute-only AsciiDoc, a binary .rst, includes of /etc/passwd, a 50 MB .txt) with the
default 1 MB file cap: its peak RSS is the writer's on them. Ratios within one run are what to compare.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tarfile
import tempfile
from pathlib import Path

from bench.quality import EVAL
from scree.benchmarks.sync_throughput import measure

SOURCES = {  # format -> (archive under the eval folder, ending of the files to copy, their ending in the tree)
    "markdown": ("docs/corpora.tar.gz", ".md", ".md"),
    "rst": ("formats/flask-docs.tar.gz", ".rst", ".rst"),
    "asciidoc": ("formats/asciidoctor-docs.tar.gz", ".adoc", ".adoc"),
    "text": ("docs/corpora.tar.gz", ".md", ".txt"),
}


def make_tree(eval_dir: Path, fmt: str, target: Path, size_mb: float, scratch: Path) -> int:
    """Copies of the format's real tree under target/copy-N/ until it holds size_mb MB; its bytes."""
    archive, ending, new_ending = SOURCES[fmt]
    unpacked = scratch / archive.replace("/", "-")
    if not unpacked.exists():
        unpacked.mkdir(parents=True)
        with tarfile.open(eval_dir / archive) as tar:
            tar.extractall(unpacked, filter="data")
    files = sorted(path for path in unpacked.rglob(f"*{ending}") if path.is_file() and not path.is_symlink())
    total = copy = 0
    while total < size_mb * 1_000_000:
        for path in files:
            rel = path.relative_to(unpacked).with_suffix(new_ending)
            out = target / f"copy-{copy}" / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)
            total += out.stat().st_size
        copy += 1
    return total


def make_hostile(target: Path) -> None:
    target.mkdir(parents=True)
    (target / "many-adornments.rst").write_text("Title\n=====\n\n" + "=====\n\n" * 100_000)
    (target / "nested.rst").write_text("".join("   " * depth + ".. note::\n\n" for depth in range(1000)) + "deep\n")
    (target / "attributes.adoc").write_text("".join(f":attr-{n}: value {n}\n" for n in range(20_000)))
    (target / "binary.rst").write_bytes(b"Title\n=====\n\x00" + bytes(range(256)) * 40)
    (target / "include.rst").write_text("Inc\n===\n\n.. include:: /etc/passwd\n")
    block = "Words of a long plain text file, one sentence after another, to be indexed in pieces.\n" * 12 + "\n"
    with (target / "huge.txt").open("w") as out:
        for _ in range(50_000_000 // len(block)):
            out.write(block)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eval", type=Path, default=EVAL, help="the shared eval folder (holds docs/ and formats/)")
    parser.add_argument("--mb", type=float, default=5.0, help="size of each format's tree in MB")
    parser.add_argument("--json", type=Path, default=Path("bench/results/format_throughput.json"))
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="scree-bench-formats-") as tmp:
        scratch = Path(tmp) / "sources"
        for fmt in SOURCES:
            folder = Path(tmp) / fmt
            size = make_tree(args.eval, fmt, folder, args.mb, scratch)
            figures = measure(folder)
            results[fmt] = {
                "mb": round(size / 1e6, 2),
                "files": figures["files"],
                "chunks": figures["chunks"],
                "mb_per_s": round(figures["mb_per_s"], 2),
                "mb_per_cpu_s": round(figures["mb_per_cpu_s"], 2),
                "peak_rss_mb": round(figures["peak_rss_mb"], 1),
            }
        hostile = Path(tmp) / "hostile"
        make_hostile(hostile)
        figures = measure(hostile)
        results["hostile"] = {
            "files": figures["files"],
            "chunks": figures["chunks"],
            "seconds": round(figures["seconds"], 2),
            "peak_rss_mb": round(figures["peak_rss_mb"], 1),
        }
    print(f"{'format':10} {'MB':>6} {'files':>6} {'chunks':>7} {'MB/s':>7} {'MB/cpu-s':>9} {'peak RSS MB':>12}")
    for fmt, row in results.items():
        if fmt == "hostile":
            continue
        print(
            f"{fmt:10} {row['mb']:6.2f} {row['files']:6.0f} {row['chunks']:7.0f} {row['mb_per_s']:7.2f} "
            f"{row['mb_per_cpu_s']:9.2f} {row['peak_rss_mb']:12.1f}"
        )
    row = results["hostile"]
    print(
        f"hostile files: {row['files']:.0f} indexed, {row['chunks']:.0f} chunks in {row['seconds']:.1f}s, "
        f"peak RSS {row['peak_rss_mb']:.1f} MB"
    )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
