"""Test pages: the markdown a repository's tests read or write, not its docs (pure).

A code repository opted into scree keeps its tests beside its docs, and a formatter's, a linter's or a site
generator's tests are markdown files by the hundred: Prettier's `tests/format/markdown/` holds 314 of its 430 .md
files, one of them an old copy of its README, which came first for "How do I configure trailing commas?" before the
options page. Such a page stays indexed (R-I1 skips no folder by this name); search ranks it after the docs pages
of similar rank, as it does a changelog, unless the query asks about tests and the page sits in the docs' own top
folder, or the query names a test suite's files (a fixture): on a testing tool's site every question says "test",
and the repository's own test pages beside the docs (Vitest's `test/`) answer none of them.
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
# Of those, the words that name a test suite's own files wherever they sit: on a testing tool's site every question
# says "test" (Vitest: "How do I run tests in the browser?"), and its repository's own test pages beside the docs
# answer none of them; "the trailing commas test fixture" asks for Prettier's tests/format/markdown/.
SUITE_WORDS = frozenset({"fixture", "fixtures", "testdata"})
SHOWN = 3  # test pages `scree doctor` names


def is_test_page(path: str) -> bool:
    """Whether a page sits in a folder of tests, fixtures, test data or snapshots (TEST_FOLDERS), at any depth."""
    return any(part.lower() in TEST_FOLDERS for part in path.split("/")[:-1])


def asks_about_tests(words: Iterable[str]) -> bool:
    """Whether a query (its case-folded words) asks about tests: a test page in the docs' own folder may answer it."""
    return not TEST_WORDS.isdisjoint(words)


def asks_about_the_suite(words: Iterable[str]) -> bool:
    """Whether a query (its case-folded words) names a test suite's own files (SUITE_WORDS): a test page anywhere may
    answer it."""
    return not SUITE_WORDS.isdisjoint(words)


def docs_root(paths: Iterable[str]) -> str | None:
    """The top folder holding most of the pages that are no test pages ("docs/" for Vitest's repository, whose
    `test/browser/README.md` is its own test suite's), as "name/"; None when pages at the top hold as many, or there
    are none."""
    counts: dict[str, int] = {}
    for path in paths:
        if not is_test_page(path):
            top = path.split("/", 1)[0] + "/" if "/" in path else ""
            counts[top] = counts.get(top, 0) + 1
    if not counts:
        return None
    best = max(sorted(counts), key=counts.__getitem__)
    return best or None


def beside_the_docs(path: str, root: str | None) -> bool:
    """Whether a test page sits outside the docs' top folder `root` (docs_root): the repository's own tests, which a
    question using the word "test" does not ask about on a testing tool's site (Vitest: "How do I run tests in the
    browser?" had its test suite's `test/browser/README.md` second)."""
    return root is not None and is_test_page(path) and not path.startswith(root)


def describe(paths: Iterable[str]) -> str:
    """One line for `scree doctor`: the test pages among `paths` and what search does with them."""
    paths = list(paths)
    found = sorted(path for path in paths if is_test_page(path))
    if not found:
        return "none found (pages in a tests/, fixtures/, testdata/ or __snapshots__/ folder)"
    root = docs_root(paths)
    outside = "" if root is None else f" (those outside {root}: unless it names a fixture)"
    return (
        f"{first_few(found, SHOWN)}: shown after docs pages of similar rank unless the query asks about tests{outside}"
    )
