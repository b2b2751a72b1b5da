"""scope.py: a search's `path` as a folder prefix or a glob over whole relative paths (R-M10)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scree.errors import UsageError
from scree.search.scope import in_scope, scope_pattern

PATHS = [
    "README.md",
    "docs/en/guide.md",
    "docs/en/api/auth.md",
    "docs/en.md",
    "docs/english/x.md",
    "docs/fr/guide.md",
    "api/tokens.md",
    "src/api/v1.md",
    "src/api/deep/v2.md",
    "notes [draft].md",
]


def matching(scope: str) -> list[str]:
    pattern = scope_pattern(scope)
    return [path for path in PATHS if in_scope(pattern, path)]


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("docs/en/", ["docs/en/guide.md", "docs/en/api/auth.md"]),
        ("docs/en", ["docs/en/guide.md", "docs/en/api/auth.md"]),  # a folder, not a name prefix: not docs/english/
        ("./docs/en//", ["docs/en/guide.md", "docs/en/api/auth.md"]),
        ("docs/en.md", ["docs/en.md"]),  # a file named exactly
        ("**/api/*.md", ["docs/en/api/auth.md", "api/tokens.md", "src/api/v1.md"]),  # * stays in one folder
        ("**/api/**", ["docs/en/api/auth.md", "api/tokens.md", "src/api/v1.md", "src/api/deep/v2.md"]),
        ("docs/*/guide.md", ["docs/en/guide.md", "docs/fr/guide.md"]),
        ("docs/??/", ["docs/en/guide.md", "docs/en/api/auth.md", "docs/fr/guide.md"]),
        ("*.md", ["README.md", "notes [draft].md"]),  # the whole path: top-level files only
        ("**/*.md", PATHS),
        ("docs/[ef]?/*.md", ["docs/en/guide.md", "docs/fr/guide.md"]),
        ("docs/[!e]*/*.md", ["docs/fr/guide.md"]),
        ("notes [draft].md", ["notes [draft].md"]),  # no glob class matches it... but a literal file name does
        ("docs/*", [p for p in PATHS if p.startswith("docs/")]),  # a folder the glob matches brings what is below
        ("**/api/", ["docs/en/api/auth.md", "api/tokens.md", "src/api/v1.md", "src/api/deep/v2.md"]),
        ("src/**/v?.md", ["src/api/v1.md", "src/api/deep/v2.md"]),
        ("missing/", []),
    ],
)
def test_scopes_select_the_paths_they_name(scope: str, expected: list[str]) -> None:
    if scope == "notes [draft].md":  # `[draft]` is a class (one of d,r,a,f,t): the literal name does not match it
        assert matching(scope) == []
        assert matching("notes [[]draft].md") == expected
        return
    assert matching(scope) == expected


def test_regex_characters_in_a_scope_are_literal() -> None:
    assert in_scope(scope_pattern("a+b/"), "a+b/x.md") and not in_scope(scope_pattern("a+b/"), "aab/x.md")
    assert not in_scope(scope_pattern("a.b/"), "axb/x.md")
    assert in_scope(scope_pattern("a[b"), "a[b/x.md")  # an unclosed `[` is a literal
    assert in_scope(scope_pattern("a[b.md"), "a[b.md")


@pytest.mark.parametrize("scope", ["", "  ", ".", "./", "/etc/", "C:\\docs", "../other/", "docs/../../x", "a\x00b"])
def test_scopes_that_can_match_nothing_are_refused(scope: str) -> None:
    with pytest.raises(UsageError):
        scope_pattern(scope)


# --- issue 25: globs are matched in linear time, and a malformed class is refused ---

HOSTILE_SCOPES = ["*" * 48 + "Z", "**/" * 40 + "Z", "*a" * 40 + "Z", "?*" * 40 + "Z", "**" + "a*" * 40 + "Z"]
DEADLINE_S = 60  # a backtracking regex takes ages of the universe on these; a linear matcher a few milliseconds


def test_hostile_globs_are_answered_at_once() -> None:
    """The issue's `'*' * 48 + 'Z'` (and kin) against paths that almost match: in a child process with a deadline,
    so a matcher that backtracks fails the test instead of hanging the run."""
    program = (
        "from scree.search.scope import in_scope, scope_pattern\n"
        f"scopes = {HOSTILE_SCOPES!r}\n"
        "paths = ['a' * 80, 'docs/' + 'a' * 60 + '.md', '/'.join(['a'] * 60)]\n"
        "print(sum(in_scope(scope_pattern(s), p) for s in scopes for p in paths))\n"
        "print(in_scope(scope_pattern('*' * 48 + 'Z'), 'a' * 60 + 'Z'))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True"]


def test_double_star_at_a_name_edge_crosses_folders() -> None:
    """`**` starting or ending a name crosses folders there; inside a name (`a**b`) it is `*`, as in .gitignore."""
    assert matching("**.md") == PATHS and matching("**/en.md") == ["docs/en.md"]
    assert in_scope(scope_pattern("docs**/guide.md"), "docs/en/guide.md")
    assert in_scope(scope_pattern("a**b.md"), "axxb.md") and not in_scope(scope_pattern("a**b.md"), "a/b.md")


@pytest.mark.parametrize("scope", ["docs/[z-a]*.md", "[9-0]", "**/[!b-a]/"])
def test_a_reversed_class_range_is_refused_in_one_line(scope: str) -> None:
    with pytest.raises(UsageError) as refused:
        scope_pattern(scope)
    assert "\n" not in str(refused.value) and "range" in str(refused.value)


def test_classes_take_ranges_and_literal_edges() -> None:
    assert in_scope(scope_pattern("v[0-9].md"), "v7.md") and not in_scope(scope_pattern("v[0-9].md"), "vx.md")
    assert in_scope(scope_pattern("v[-x].md"), "v-.md") and in_scope(scope_pattern("v[x-].md"), "v-.md")
    assert in_scope(scope_pattern("v[]x].md"), "v].md") and not in_scope(scope_pattern("v[!]x].md"), "v].md")
    assert not in_scope(scope_pattern("a[/]b"), "a/b")  # a class never matches the folder separator
