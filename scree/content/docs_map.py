"""A map of a folder's docs for an agent (issue 36, R-M11): counts by top folder and format, and the most useful
pages first, cut to a character budget (pure: pages in, text out; the same rule for the instructions and AGENTS.md).

The rule that orders pages, stated in the map itself: READMEs, then index pages, then guides, then the rest; within
each, shallower paths first, then larger files (by power-of-two size class, so a small edit rarely reorders them),
then by path. Ties never depend on the order pages came in, so one index always gives one text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scree.content.chunking import HEADING_SEPARATOR

RULE = "READMEs, index pages, guides, then the largest"
README_STEMS = frozenset({"readme"})
INDEX_STEMS = frozenset({"index", "_index", "overview", "introduction", "intro", "home", "welcome", "summary"})
GUIDE_WORDS = (
    "guide",
    "tutorial",
    "getting-started",
    "getting_started",
    "quickstart",
    "quick-start",
    "howto",
    "how-to",
)
ROOT = "./"  # the top folder of a file at the root
# Guidance files the agent reads already, not docs to find: a map listing them would also change with each write of
# the block that `scree init --agents-md` puts in them.
LEFT_OUT = frozenset({"AGENTS.md", "CLAUDE.md"})
TITLE_CHARS = 60  # a page's title is cut to this many characters in the map
KEEP_PAGES = 60  # the ranked pages a summary carries: more than any map within 8 KB shows
SUMMARY_VERSION = 1
MORE_LINE_CHARS = 40  # "(+12345 more: search_docs finds them)"


@dataclass(frozen=True, slots=True)
class Page:
    """One indexed file as the map sees it: its path (relative, '/'-separated), title ('' for none) and size."""

    path: str
    title: str
    size: int


def title_of(headings: list[str]) -> str:
    """A page's title from its chunks' heading trails, in order: the top of the first trail that has one (the
    front matter's `title:` or the first heading, as chunking put them)."""
    for heading in headings:
        if heading:
            return heading.split(HEADING_SEPARATOR, 1)[0].strip()
    return ""


def top_folder(path: str) -> str:
    head, sep, _ = path.partition("/")
    return f"{head}/" if sep else ROOT


def file_format(path: str) -> str:
    """The file's suffix, lower case (".md", ".rst", ...); "(none)" for a name without one."""
    name = path.rsplit("/", 1)[-1]
    stem, dot, suffix = name.rpartition(".")
    return f".{suffix.lower()}" if dot and stem else "(none)"


def _kind(path: str) -> int:
    """0 README, 1 index page, 2 guide, 3 the rest."""
    name = path.rsplit("/", 1)[-1].lower()
    stem = name.rpartition(".")[0] or name
    if stem in README_STEMS:
        return 0
    if stem in INDEX_STEMS:
        return 1
    lowered = path.lower()
    if any(word in lowered for word in GUIDE_WORDS):
        return 2
    return 3


def rank_key(path: str, size: int) -> tuple[int, int, int, str]:
    """The order of RULE: kind, depth, larger size class first, path."""
    return _kind(path), path.count("/"), -max(size, 0).bit_length(), path


@dataclass(frozen=True, slots=True)
class DocsSummary:
    """What a map is made of: how many files by top folder and format, the best pages in rank order, and whether
    the index they came from was complete."""

    files: int
    by_folder: dict[str, int]
    by_format: dict[str, int]
    pages: tuple[Page, ...]  # the first KEEP_PAGES in rank order, with titles
    complete: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SUMMARY_VERSION,
            "files": self.files,
            "complete": self.complete,
            "by_folder": self.by_folder,
            "by_format": self.by_format,
            "pages": [[page.path, page.title, page.size] for page in self.pages],
        }

    @classmethod
    def from_json(cls, data: Any) -> DocsSummary | None:
        """The summary a map file holds; None for anything else (another version, a damaged file)."""
        try:
            if data["version"] != SUMMARY_VERSION:
                return None
            pages = tuple(Page(str(p), str(t), int(s)) for p, t, s in data["pages"])
            return cls(
                files=int(data["files"]),
                by_folder=_by_count({str(k): int(v) for k, v in data["by_folder"].items()}),
                by_format=_by_count({str(k): int(v) for k, v in data["by_format"].items()}),
                pages=pages,
                complete=bool(data["complete"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def _by_count(counts: dict[str, int]) -> dict[str, int]:
    """Most files first, then by name: the order the map shows counts in, whatever order they were stored in."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def ranked_paths(sizes: dict[str, int]) -> list[str]:
    """Every path in RULE's order, LEFT_OUT aside."""
    return sorted((path for path in sizes if path not in LEFT_OUT), key=lambda path: rank_key(path, sizes[path]))


def summarise(sizes: dict[str, int], titles: dict[str, str], *, complete: bool) -> DocsSummary:
    """A summary of the files in `sizes` (path -> bytes), LEFT_OUT aside; `titles` needs only the first KEEP_PAGES
    of ranked_paths(sizes)."""
    sizes = {path: size for path, size in sizes.items() if path not in LEFT_OUT}
    by_folder = Counter(top_folder(path) for path in sizes)
    by_format = Counter(file_format(path) for path in sizes)
    top = ranked_paths(sizes)[:KEEP_PAGES]
    return DocsSummary(
        files=len(sizes),
        by_folder=_by_count(by_folder),
        by_format=_by_count(by_format),
        pages=tuple(Page(path, titles.get(path, ""), sizes[path]) for path in top),
        complete=complete,
    )


def _counts(counts: dict[str, int], limit: int) -> str:
    shown = [f"{name} {count}" for name, count in list(counts.items())[:limit]]
    more = len(counts) - limit
    return ", ".join(shown) + (f", {more} more" if more > 0 else "")


def _clean(title: str) -> str:
    """A title on one line, quotes made single, cut to TITLE_CHARS."""
    text = " ".join(title.replace('"', "'").split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"


def counts_line(summary: DocsSummary, *, folders: int = 8, formats: int = 5) -> str:
    return (
        f"{summary.files} files; by top folder: {_counts(summary.by_folder, folders)}; "
        f"by format: {_counts(summary.by_format, formats)}."
    )


def outline(
    summary: DocsSummary, budget: int, *, header: str | None = None, measure: Callable[[str], int] = len
) -> str:
    """The entry points grouped by top folder, folders in the order of their best page, pages in rank order, as
    many as fit in `budget` (characters, or what `measure` counts; whole lines only); a last line says how many
    pages were left out."""
    header = header or f"Entry points ({RULE}; path: title):"
    groups: dict[str, list[Page]] = {}
    for page in summary.pages:
        groups.setdefault(top_folder(page.path), []).append(page)
    lines = [header]
    used = measure(header) + MORE_LINE_CHARS  # room for the last line, should any page be left out
    shown = 0
    for folder, pages in groups.items():
        count = summary.by_folder.get(folder, len(pages))
        folder_line = f"{folder} ({count} file{'' if count == 1 else 's'})"
        entries: list[str] = []
        for page in pages:
            entry = f"  - {page.path}" + (f': "{_clean(page.title)}"' if page.title else "")
            cost = measure(entry) + 1 + (0 if entries else measure(folder_line) + 1)
            if used + cost > budget:
                break
            entries.append(entry)
            used += cost
        if not entries:
            break
        lines.append(folder_line)
        lines.extend(entries)
        shown += len(entries)
    left = summary.files - shown
    if left > 0:
        lines.append(f"(+{left} more: search_docs finds them)")
    return "\n".join(lines) if shown else ""
