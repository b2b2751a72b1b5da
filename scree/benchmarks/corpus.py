"""Generate markdown trees of a given size for benchmarks (deterministic for a seed)."""

from __future__ import annotations

import random
from pathlib import Path

WORDS = (
    "index search vector writer reader lock folder markdown chunk heading token embed query store sqlite "
    "process signal thread queue memory latency batch request server client cache config error retry "
    "network file watch event debounce health sync model dimension cosine distance keyword fusion rank "
    "the a of to and in is for on with as by this that it be are from or an at which when each"
).split()


def _paragraph(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def markdown_file(rng: random.Random, target_bytes: int) -> str:
    parts: list[str] = [f"# {_paragraph(rng, 4)[:-1]}", ""]
    size = 0
    while size < target_bytes:
        roll = rng.random()
        if roll < 0.12:
            block = f"{'#' * rng.randint(2, 4)} {_paragraph(rng, rng.randint(2, 6))[:-1]}"
        elif roll < 0.18:
            block = (
                "```python\n" + "\n".join(f"x_{i} = {rng.randint(0, 999)}" for i in range(rng.randint(2, 8))) + "\n```"
            )
        elif roll < 0.25:
            block = "\n".join(f"- {_paragraph(rng, rng.randint(3, 10))}" for _ in range(rng.randint(2, 5)))
        else:
            block = _paragraph(rng, rng.randint(20, 90))
        parts.extend([block, ""])
        size += len(block) + 2
    return "\n".join(parts)


def generate_tree(root: Path, total_bytes: int, seed: int = 0, mean_file_bytes: int = 8_000) -> int:
    """Write markdown files under `root` (nested folders) until `total_bytes`; returns how many files."""
    rng = random.Random(seed)
    written = 0
    count = 0
    while written < total_bytes:
        folder = root / f"d{count // 50:03d}" / f"s{count % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        size = max(200, int(rng.expovariate(1 / mean_file_bytes)))
        text = markdown_file(rng, min(size, 200_000))
        (folder / f"note{count:05d}.md").write_text(text, encoding="utf-8")
        written += len(text.encode("utf-8"))
        count += 1
    return count


def folder_to_measure(given: Path | None, tmp: Path, total_bytes: int, seed: int) -> Path:
    """The folder a benchmark measures in: `given` when the user named one, else a tree of `total_bytes` generated
    in `tmp`."""
    if given is not None:
        return given
    folder = tmp / "notes"
    folder.mkdir()
    generate_tree(folder, total_bytes, seed=seed)
    return folder
