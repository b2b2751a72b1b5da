"""A map of a folder's docs for an agent (issue 36, R-M11): counts by top folder and format, and the most useful
pages first, cut to a character budget (pure: pages in, text out; the same rule for the instructions and AGENTS.md).

The rule that orders pages, stated in the map itself: READMEs, then index pages, then guides, then the rest; within
each, shallower paths first, then larger files (by power-of-two size class, so a small edit rarely reorders them),
then by path. Ties never depend on the order pages came in, so one index always gives one text.
"""

from __future__ import annotations

import re
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
        f"by format: {_counts(summary.by_format, formats)}"
    )


# A path segment naming a version of the docs (v3.4, version-30.0, 2.1.x): the same page in several versions is one
# entry of the map, not one per version.
_VERSION = re.compile(r"(?:v|version-?)\d+(?:\.\d+)*(?:\.x)?|\d+\.\d+(?:\.\d+)*(?:\.x)?", re.IGNORECASE)
PER_ROUND = 4  # each folder shows this many pages before any folder shows more


@dataclass(frozen=True, slots=True)
class _Entry:
    folder: str
    nth: int  # its place among its folder's entries
    text: str
    pages: int  # the pages it stands for: one, or the same page in several versions


def _version_key(segment: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", segment))


def _entries(pages: tuple[Page, ...]) -> list[_Entry]:
    """The outline's entries in rank order: pages that differ only in a version segment are one entry, shown by the
    highest version (by number) and counting the others."""
    versions: dict[str, list[Page]] = {}
    for page in pages:
        key = "/".join("*" if _VERSION.fullmatch(part) else part for part in page.path.split("/"))
        versions.setdefault(key, []).append(page)
    entries: list[_Entry] = []
    per_folder: Counter[str] = Counter()
    for group in versions.values():
        shown = max(group, key=lambda page: [_version_key(part) for part in page.path.split("/")])
        text = f"  - {shown.path}" + (f': "{_clean(shown.title)}"' if shown.title else "")
        if len(group) > 1:
            text += f" (and {len(group) - 1} other version{'' if len(group) == 2 else 's'})"
        folder = top_folder(shown.path)
        entries.append(_Entry(folder, per_folder[folder], text, len(group)))
        per_folder[folder] += 1
    return entries


def _folder_line(summary: DocsSummary, folder: str) -> str:
    count = summary.by_folder.get(folder, 0)
    return f"{folder} ({count} file{'' if count == 1 else 's'})"


def outline(
    summary: DocsSummary, budget: int, *, header: str | None = None, measure: Callable[[str], int] = len
) -> str:
    """The entry points grouped by top folder, as many as fit in `budget` (characters, or what `measure` counts;
    whole lines only), chosen PER_ROUND pages of each folder at a time in rank order, so one big folder cannot take
    the whole map; folders in the order of their best page, pages in rank order; a last line says how many pages
    were left out."""
    header = header or f"Entry points ({RULE}; path: title):"
    entries = _entries(summary.pages)
    used = measure(header) + MORE_LINE_CHARS  # room for the last line, should any page be left out
    chosen: set[int] = set()
    folders: set[str] = set()
    for i in sorted(range(len(entries)), key=lambda i: (entries[i].nth // PER_ROUND, i)):
        entry = entries[i]
        cost = measure(entry.text) + 1
        if entry.folder not in folders:
            cost += measure(_folder_line(summary, entry.folder)) + 1
        if used + cost > budget:
            break
        chosen.add(i)
        folders.add(entry.folder)
        used += cost
    if not chosen:
        return ""
    lines = [header]
    for folder in dict.fromkeys(entries[i].folder for i in sorted(chosen)):
        lines.append(_folder_line(summary, folder))
        lines.extend(entry.text for i, entry in enumerate(entries) if i in chosen and entry.folder == folder)
    left = summary.files - sum(entries[i].pages for i in chosen)
    if left > 0:
        lines.append(f"(+{left} more: search_docs finds them)")
    return "\n".join(lines)
