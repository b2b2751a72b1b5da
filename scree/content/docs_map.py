"""A map of a folder's docs for an agent (issue 36, R-M11): counts by top folder and format, and the most useful
pages first, cut to a character budget (pure: pages in, text out; the same rule for the instructions and AGENTS.md).

The rule that orders pages, stated in the map itself: READMEs, then index pages, then guides, then the rest; within
each, shallower paths first, then larger files (by power-of-two size class, so a small edit rarely reorders them),
then by path. Ties never depend on the order pages came in, so one index always gives one text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from scree.content.chunking import HEADING_SEPARATOR
from scree.content.fixtures import docs_sections, is_test_page
from scree.content.languages import ORIGINAL, copy_of
from scree.content.versions import CURRENT, NEWER, OLD, VersionTrees

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
KEEP_PAGES = 60  # the ranked entries a summary carries (a page with its versions and translations is one): more
# than any map within 8 KB shows
KEEP_COPIES = 8 * KEEP_PAGES  # ... and the pages they stand for, at most (Astro's 14 languages: 60 entries, 438 pages)
SUMMARY_VERSION = 1
MORE_LINE_CHARS = 40  # "(+12345 more: search_docs finds them)"


@dataclass(frozen=True, slots=True)
class Copy:
    """Where a page stands among the site's version trees (scree.content.versions, issue 32): the page it is a copy
    of (one for all its versions), its tree's folder and that tree's status (current, old or unreleased)."""

    page: str
    tree: str
    status: str


Copies = Mapping[str, Copy]  # path -> where it stands, for the pages of version trees
NO_COPIES: Copies = MappingProxyType({})


def copies_of(trees: VersionTrees) -> Copies:
    """Where each page of the version trees stands, as the map keeps it."""
    return {path: Copy(found.page, found.tree.root, found.tree.status) for path, found in trees.copies.items()}


@dataclass(frozen=True, slots=True)
class Page:
    """One indexed file as the map sees it: its path (relative, '/'-separated), title ('' for none), size, and
    where it stands among version trees (None: in none)."""

    path: str
    title: str
    size: int
    copy: Copy | None = None

    def row(self) -> list[str | int]:
        found = self.copy
        head: list[str | int] = [self.path, self.title, self.size]
        return head if found is None else [*head, found.page, found.tree, found.status]

    @classmethod
    def of_row(cls, row: list[Any]) -> Page:
        path, title, size, *rest = row
        found = Copy(*(str(part) for part in rest)) if len(rest) == 3 else None
        if rest and found is None:
            raise ValueError("a page's row has 3 or 6 fields")
        return cls(str(path), str(title), int(size), found)


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


def rank_key(path: str, size: int, sections: Collection[str] = frozenset()) -> tuple[bool, int, int, int, str]:
    """The order of RULE: kind, depth, larger size class first, path; the pages of a repository's tests after all
    others (scree.content.fixtures, `sections` the docs' own folders named like tests: Prettier's 315 under tests/,
    their READMEs ranked as READMEs, had come before its options page)."""
    return is_test_page(path, sections), _kind(path), path.count("/"), -max(size, 0).bit_length(), path


@dataclass(frozen=True, slots=True)
class DocsSummary:
    """What a map is made of: how many files by top folder and format, the best pages in rank order, and whether
    the index they came from was complete."""

    files: int
    by_folder: dict[str, int]
    by_format: dict[str, int]
    pages: tuple[Page, ...]  # the first KEEP_PAGES in rank order, with titles
    complete: bool
    test_sections: frozenset[str] = frozenset()  # folders named like tests that are the docs' (fixtures.docs_sections)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SUMMARY_VERSION,
            "files": self.files,
            "complete": self.complete,
            "by_folder": self.by_folder,
            "by_format": self.by_format,
            "pages": [page.row() for page in self.pages],
            "test_sections": sorted(self.test_sections),
        }

    @classmethod
    def from_json(cls, data: Any) -> DocsSummary | None:
        """The summary a map file holds; None for anything else (another version, a damaged file)."""
        try:
            if data["version"] != SUMMARY_VERSION:
                return None
            pages = tuple(Page.of_row(row) for row in data["pages"])
            return cls(
                files=int(data["files"]),
                by_folder=_by_count({str(k): int(v) for k, v in data["by_folder"].items()}),
                by_format=_by_count({str(k): int(v) for k, v in data["by_format"].items()}),
                pages=pages,
                complete=bool(data["complete"]),
                test_sections=frozenset(str(folder) for folder in data.get("test_sections", ())),
            )
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


def _by_count(counts: dict[str, int]) -> dict[str, int]:
    """Most files first, then by name: the order the map shows counts in, whatever order they were stored in."""
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def ranked_paths(sizes: dict[str, int]) -> list[str]:
    """Every path in RULE's order, LEFT_OUT aside."""
    sections = docs_sections(sizes)
    return sorted(
        (path for path in sizes if path not in LEFT_OUT), key=lambda path: rank_key(path, sizes[path], sections)
    )


def kept_paths(sizes: dict[str, int], copies: Copies = NO_COPIES) -> list[str]:
    """The paths a summary keeps, in RULE's order: those of the first KEEP_PAGES entries (a page, its versions and
    its translations: entry_key), at most KEEP_COPIES in all."""
    paths = set(sizes)
    entries: set[str] = set()
    kept: list[str] = []
    for path in ranked_paths(sizes):
        key = entry_key(path, paths, copies)
        if key not in entries and len(entries) == KEEP_PAGES:
            continue
        entries.add(key)
        kept.append(path)
        if len(kept) == KEEP_COPIES:
            break
    return kept


def shown_paths(paths: list[str], copies: Copies = NO_COPIES) -> list[str]:
    """Of `paths` (kept_paths), the one each entry is shown by: the titles a summary needs."""
    return [_shown(group, copies) for group in _grouped(paths, copies)]


def _grouped(paths: list[str], copies: Copies) -> list[list[str]]:
    """`paths` grouped by entry_key, in the order each entry's first copy comes."""
    known = set(paths)
    groups: dict[str, list[str]] = {}
    for path in paths:
        groups.setdefault(entry_key(path, known, copies), []).append(path)
    return list(groups.values())


def summarise(
    sizes: dict[str, int], titles: dict[str, str], *, complete: bool, copies: Copies = NO_COPIES
) -> DocsSummary:
    """A summary of the files in `sizes` (path -> bytes), LEFT_OUT aside; `titles` needs only those of
    shown_paths(kept_paths(sizes, copies), copies); `copies` says where the pages of version trees stand."""
    sizes = {path: size for path, size in sizes.items() if path not in LEFT_OUT}
    by_folder = Counter(top_folder(path) for path in sizes)
    by_format = Counter(file_format(path) for path in sizes)
    top = kept_paths(sizes, copies)
    return DocsSummary(
        files=len(sizes),
        by_folder=_by_count(by_folder),
        by_format=_by_count(by_format),
        pages=tuple(Page(path, titles.get(path, ""), sizes[path], copies.get(path)) for path in top),
        complete=complete,
        test_sections=docs_sections(sizes),
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
# entry of the map, not one per version; so is a page in several languages (languages.copy_of: `docs/fr/x.md`,
# Docusaurus's i18n folders, `x.de.md`), shown in English or untagged where it is.
_VERSION = re.compile(r"(?:v|version-?)\d+(?:\.\d+)*(?:\.x)?|\d+\.\d+(?:\.\d+)*(?:\.x)?", re.IGNORECASE)
PER_ROUND = 4  # each folder shows this many pages before any folder shows more


def entry_key(path: str, paths: set[str], copies: Copies = NO_COPIES) -> str:
    """What `path` is a copy of, the same for each of its versions and translations among `paths`: the page a
    version tree's copy stands for (`copies`), its version segments and its language part as `*`; an untagged
    original among `paths` (`docs/x.md` beside `docs/fr/x.md`, README.md beside README_zh.md) is the copy's key."""
    found = copies.get(path)
    copy = copy_of(found.page if found is not None else path)
    page = copy.page if copy is not None else found.page if found is not None else path
    for untagged in (page.replace("/*/", "/", 1), page.removeprefix("*/"), page.replace(".*.", ".", 1)):
        if untagged != page and untagged in paths:  # README_zh.md and x.de.md beside README.md and x.md
            page = untagged
            break
    return "/".join("*" if _VERSION.fullmatch(part) else part for part in page.split("/"))


def _language(path: str) -> str:
    copy = copy_of(path)
    return copy.language if copy is not None else ORIGINAL


# The copy an entry is shown by, of a version tree's (scree.content.versions): the current version's, then a page
# in no version tree, then an old version's, then an unreleased one's (Jest's docs/ is the next release, etcd's v3.8
# a draft: the map had shown both, as the highest versions by number).
_STANDING = {CURRENT: 3, None: 2, OLD: 1, NEWER: 0}
_MARKS = {OLD: "an old version", NEWER: "unreleased"}  # said of an entry shown by such a copy


def _shown(group: list[str], copies: Copies) -> str:
    """The copy an entry is shown by: in English or untagged where one is, then by where its version tree stands
    (_STANDING), then the highest version by number."""

    def standing(path: str) -> int:
        found = copies.get(path)
        return _STANDING.get(found.status if found is not None else None, 0)

    return max(
        group,
        key=lambda path: (
            _language(path).split("-")[0] in ("en", ORIGINAL),
            standing(path),
            [_version_key(part) for part in path.split("/")],
        ),
    )


@dataclass(frozen=True, slots=True)
class _Entry:
    folder: str
    nth: int  # its place among its folder's entries
    text: str
    pages: int  # the pages it stands for: one, or the same page in several versions
    tests: bool  # a page of the repository's tests: shown once every other folder has had its turns


def _version_key(segment: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", segment))


def _entries(pages: tuple[Page, ...], sections: Collection[str]) -> list[_Entry]:
    """The outline's entries in rank order: pages that differ only in a version segment or their language, or that
    the version trees take for copies of one page, are one entry, shown in English or untagged where one is, by the
    current version's copy (else the highest version by number), counting the others; each says whether it is a
    page of the repository's tests (`sections`: the docs' own folders named like tests, fixtures.docs_sections)."""
    by_path = {page.path: page for page in pages}
    copies = {page.path: page.copy for page in pages if page.copy is not None}
    entries: list[_Entry] = []
    per_folder: Counter[str] = Counter()
    for paths in _grouped(list(by_path), copies):
        group = [by_path[path] for path in paths]
        shown = by_path[_shown(paths, copies)]
        text = f"  - {shown.path}" + (f': "{_clean(shown.title)}"' if shown.title else "")
        said = [_MARKS[shown.copy.status]] if shown.copy is not None and shown.copy.status in _MARKS else []
        if len(group) > 1:
            said.append(f"and {_others(group)}")
        if said:
            text += f" ({'; '.join(said)})"
        folder = top_folder(shown.path)
        entries.append(_Entry(folder, per_folder[folder], text, len(group), is_test_page(shown.path, sections)))
        per_folder[folder] += 1
    return entries


def _others(group: list[Page]) -> str:
    """`3 other versions`, `7 translations`, or both, of the pages an entry stands for besides the one shown."""
    versions = {
        (page.copy.tree,)
        if page.copy is not None
        else tuple(part for part in page.path.split("/") if _VERSION.fullmatch(part))
        for page in group
    }
    languages = {_language(page.path) for page in group}
    said = []
    if len(versions) > 1 or (len(languages) == 1 and len(group) > 1):
        count = len(versions) - 1 if len(versions) > 1 else len(group) - 1
        said.append(f"{count} other version{'' if count == 1 else 's'}")
    if len(languages) > 1:
        count = len(languages) - 1
        said.append(f"{count} translation{'' if count == 1 else 's'}")
    return " and ".join(said)


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
    entries = _entries(summary.pages, summary.test_sections)
    used = measure(header) + MORE_LINE_CHARS  # room for the last line, should any page be left out
    chosen: set[int] = set()
    folders: set[str] = set()
    for i in sorted(range(len(entries)), key=lambda i: (entries[i].tests, entries[i].nth // PER_ROUND, i)):
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
