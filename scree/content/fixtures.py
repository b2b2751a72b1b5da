"""Test pages: the markdown a repository's tests read or write, not its docs (pure).

A code repository opted into scree keeps its tests beside its docs, and a formatter's, a linter's or a site
generator's tests are markdown files by the hundred: Prettier's `tests/format/markdown/` holds 314 of its 430 .md
files, one of them an old copy of its README, which came first for "How do I configure trailing commas?" before the
options page. Such a page stays indexed (R-I1 skips no folder by this name); search ranks it after the docs pages
of similar rank, as it does a changelog, unless the query asks about tests.
"""

from __future__ import annotations

from collections.abc import Iterable

from scree.replies import first_few

# Folders whose pages are tests' inputs and outputs: a folder of tests, of fixtures, of test data, of snapshots.
TEST_FOLDERS = frozenset(
    {"test", "tests", "__tests__", "fixtures", "fixture", "__fixtures__", "testdata", "test-data", "test_data"}
    | {"__snapshots__"}
)
TEST_WORDS = frozenset({"test", "tests", "testing", "fixture", "fixtures", "snapshot", "snapshots"})  # a query's
SHOWN = 3  # test pages `scree doctor` names


def is_test_page(path: str) -> bool:
    """Whether a page sits in a folder of tests, fixtures, test data or snapshots (TEST_FOLDERS), at any depth."""
    return any(part.lower() in TEST_FOLDERS for part in path.split("/")[:-1])


def asks_about_tests(words: Iterable[str]) -> bool:
    """Whether a query (its case-folded words) asks about the tests themselves: a test page may answer it."""
    return not TEST_WORDS.isdisjoint(words)


def describe(paths: Iterable[str]) -> str:
    """One line for `scree doctor`: the test pages among `paths` and what search does with them."""
    found = sorted(path for path in paths if is_test_page(path))
    if not found:
        return "none found (pages in a tests/, fixtures/, testdata/ or __snapshots__/ folder)"
    return f"{first_few(found, SHOWN)}: shown after docs pages of similar rank unless the query asks about tests"
