"""Test pages: the markdown a repository's tests read or write, not its docs (pure).

A code repository opted into scree keeps its tests beside its docs, and a formatter's, a linter's or a site
generator's tests are markdown files by the hundred: Prettier's `tests/format/markdown/` holds 314 of its 430 .md
files, one of them an old copy of its README, which came first for "How do I configure trailing commas?" before the
options page. Such a page stays indexed (R-I1 skips no folder by this name); search ranks it after the docs pages
of similar rank, as it does a changelog, unless the query asks about tests and the page sits in the docs' own top
folder, or the query names a test suite's files (a fixture): on a testing tool's site every question says "test",
and the repository's own test pages beside the docs (Vitest's `test/`) answer none of them. A folder named test or
tests inside the docs, among many more pages, is the docs' section on testing (Deno's `runtime/test/`), not a suite.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from scree.replies import first_few

# Folders whose pages are tests' inputs and outputs: a folder of tests, of fixtures, of test data, of snapshots.
TEST_FOLDERS = frozenset(
    {"test", "tests", "__tests__", "fixtures", "fixture", "__fixtures__", "testdata", "test-data", "test_data"}
    | {"__snapshots__"}
)
# ... and one named for a kind of test suite: Ruff's and ty's `resources/mdtest/` (388 of the repository's 636 .md
# files, markdown test suites), `integration-tests/`, `e2e_tests/`, `unittest/`; not any name ending so (`latest/`,
# k6's docs sections `end-of-test/` and `how-to-write-browser-tests/`).
TEST_FOLDER_NAME = re.compile(
    r"(?:md|e2e|unit|integration|ui|snapshot|smoke|golden|regression|conformance|system|acceptance)[-_]?tests?"
)
TEST_WORDS = frozenset({"test", "tests", "testing", "fixture", "fixtures", "snapshot", "snapshots"})  # a query's
# Of those, the words that name a test suite's own files wherever they sit: on a testing tool's site every question
# says "test" (Vitest: "How do I run tests in the browser?"), and its repository's own test pages beside the docs
# answer none of them; "the trailing commas test fixture" asks for Prettier's tests/format/markdown/.
SUITE_WORDS = frozenset({"fixture", "fixtures", "testdata"})
SHOWN = 3  # test pages `scree doctor` names
# Of TEST_FOLDERS, the names a docs site's own section on testing bears too: Deno's `runtime/test/` (coverage,
# mocking, snapshots), Tauri's `develop/Tests/`, KubeEdge's `docs/developer/test/` are pages of the docs.
SECTION_NAMES = frozenset({"test", "tests"})
SECTION_LEAST = 4  # pages a section's parent folder holds outside test folders, at the least


def is_test_page(path: str, sections: Collection[str] = frozenset()) -> bool:
    """Whether a page sits in a folder of tests, fixtures, test data or snapshots (TEST_FOLDERS), at any depth; a
    folder among `sections` (docs_sections) is a part of the docs, not of the tests."""
    parts = path.split("/")[:-1]
    for depth, part in enumerate(parts, start=1):
        name = part.lower()
        if TEST_FOLDER_NAME.fullmatch(name) is not None:
            return True
        if name in TEST_FOLDERS and not (name in SECTION_NAMES and "/".join(parts[:depth]) in sections):
            return True
    return False


def docs_sections(paths: Iterable[str]) -> frozenset[str]:
    """The folders named test or tests (any case) that are sections of the docs, not a test suite: below the top of
    the repository, in a folder holding at least as many pages outside any test folder (and at least SECTION_LEAST).
    Deno's `runtime/test/` (7 pages beside 124 in `runtime/`) and Tauri's Chinese `develop/Tests/` (5 beside 9) are
    sections; a repository's `tests/` at its top (Vitest's, Prettier's), SvelteKit's `packages/kit/test/` (4 beside
    3), MkDocs' `mkdocs/tests/` (14 beside none) are suites."""
    pages: Counter[str] = Counter()  # pages under each folder that sit in no test folder by name
    tests: Counter[str] = Counter()  # pages under each folder named test or tests, the first on their path
    for path in paths:
        parts = path.split("/")[:-1]
        if is_test_page(path):
            named = next((depth for depth, part in enumerate(parts, 1) if part.lower() in SECTION_NAMES), 0)
            if named > 1:
                tests["/".join(parts[:named])] += 1
            continue
        for depth in range(1, len(parts) + 1):
            pages["/".join(parts[:depth])] += 1
    return frozenset(
        folder for folder, count in tests.items() if pages[folder.rpartition("/")[0]] >= max(count, SECTION_LEAST)
    )


def asks_about_tests(words: Iterable[str]) -> bool:
    """Whether a query (its case-folded words) asks about tests: a test page in the docs' own folder may answer it."""
    return not TEST_WORDS.isdisjoint(words)


def asks_about_the_suite(words: Iterable[str]) -> bool:
    """Whether a query (its case-folded words) names a test suite's own files (SUITE_WORDS): a test page anywhere may
    answer it."""
    return not SUITE_WORDS.isdisjoint(words)


def docs_root(paths: Iterable[str], sections: Collection[str] = frozenset()) -> str | None:
    """The top folder holding most of the pages that are no test pages ("docs/" for Vitest's repository, whose
    `test/browser/README.md` is its own test suite's), as "name/"; None when pages at the top hold as many, or there
    are none."""
    counts: dict[str, int] = {}
    for path in paths:
        if not is_test_page(path, sections):
            top = path.split("/", 1)[0] + "/" if "/" in path else ""
            counts[top] = counts.get(top, 0) + 1
    if not counts:
        return None
    best = max(sorted(counts), key=counts.__getitem__)
    return best or None


@dataclass(frozen=True, slots=True)
class SuitePages:
    """An index's test pages as its paths show them: the folders named test or tests that are docs sections
    (docs_sections) and the docs' top folder (docs_root)."""

    sections: frozenset[str] = frozenset()
    root: str | None = None

    @classmethod
    def of(cls, paths: Iterable[str]) -> SuitePages:
        paths = list(paths)
        sections = docs_sections(paths)
        return cls(sections, docs_root(paths, sections))

    def holds(self, path: str) -> bool:
        """Whether `path` is a test page (is_test_page)."""
        return is_test_page(path, self.sections)

    def beside_the_docs(self, path: str) -> bool:
        """Whether a test page sits outside the docs' top folder: the repository's own tests, which a question
        using the word "test" does not ask about on a testing tool's site (Vitest: "How do I run tests in the
        browser?" had its test suite's `test/browser/README.md` second)."""
        return self.root is not None and self.holds(path) and not path.startswith(self.root)


def describe(paths: Iterable[str]) -> str:
    """One line for `scree doctor`: the test pages among `paths` and what search does with them, and the folders
    named like a test suite that are taken for sections of the docs."""
    paths = list(paths)
    pages = SuitePages.of(paths)
    found = sorted(path for path in paths if pages.holds(path))
    if found:
        outside = "" if pages.root is None else f" (those outside {pages.root}: unless it names a fixture)"
        said = f"{first_few(found, SHOWN)}: shown after docs pages of similar rank unless the query asks about tests"
        said += outside
    else:
        said = "none found (pages in a tests/, fixtures/, testdata/ or __snapshots__/ folder)"
    if pages.sections:
        named = first_few(sorted(f"{folder}/" for folder in pages.sections), SHOWN)
        said += f"; {named}: pages of the docs, not tests (the folder around each holds most of its pages)"
    return said
