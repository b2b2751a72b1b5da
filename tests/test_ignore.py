"""The ignore policy (R-I1): gitignore answers checked against real `git check-ignore`, plus the scree rules."""

from __future__ import annotations

import os
import random
import subprocess
import threading
from pathlib import Path

import pytest

from scree.content.ignore import IgnorePolicy

# Every file the random trees make ends with one of these, so the extension rule never hides a gitignore answer.
TREE_EXTENSIONS = (".md", ".txt", ".log")
NAME_STEMS = ("a", "b", "build", "docs", "keep", "x", "node_modules", "ab", "ba", "sp ace", "#hash", "!bang", "br[1]")
DIR_NAMES = ("a", "b", "build", "docs", "lib", "sub", "x.md", "deep", "ab", "out")
PATTERN_PIECES = (
    "a",
    "b",
    "build",
    "docs",
    "lib",
    "sub",
    "deep",
    "x.md",
    "keep.md",
    "*",
    "*.md",
    "*.txt",
    "*.log",
    "?",
    "??",
    "a*",
    "*b",
    "b?",
    "[ab]",
    "[!a]*",
    "[a-c]b",
    "\\#hash.md",
    "\\!bang.md",
    "br\\[1\\].md",
    "sp ace.md",
    "d*s",
    "**",
    "**",
    "*.??",
    "**b",
    "[]-]*",
    "x\\ ",
    "\\*",
)


def _git_env(tmp_path: Path) -> dict[str, str]:
    """An environment where git reads no user or system configuration (no core.excludesFile)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_SYSTEM=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def _git(tmp_path: Path, cwd: Path, *args: str, stdin: bytes | None = None) -> bytes:
    result = subprocess.run(
        ["git", *args], cwd=cwd, input=stdin, capture_output=True, env=_git_env(tmp_path), timeout=60, check=False
    )
    assert result.returncode in (0, 1), result.stderr.decode()
    return result.stdout


def _git_ignored(tmp_path: Path, root: Path, paths: list[str]) -> dict[str, bool]:
    """What `git check-ignore` says about each path: True = ignored, False = not (negated or unmatched)."""
    stdin = b"".join(os.fsencode(p) + b"\0" for p in paths)
    out = _git(tmp_path, root, "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin", stdin=stdin)
    fields = out.split(b"\0")[:-1]
    assert len(fields) == 4 * len(paths)
    answers = {}
    for i in range(0, len(fields), 4):
        source, _line, pattern, path = fields[i : i + 4]
        answers[os.fsdecode(path)] = bool(source) and not pattern.startswith(b"!")
    return answers


def _tree_paths(root: Path) -> tuple[list[str], list[str]]:
    """Every non-hidden folder and file under root (relative posix paths), ignoring what git itself keeps."""
    dirs: list[str] = []
    files: list[str] = []
    for here, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        rel_here = Path(here).relative_to(root).as_posix()
        prefix = "" if rel_here == "." else rel_here + "/"
        dirs.extend(prefix + d for d in dirnames)
        files.extend(prefix + f for f in filenames if not f.startswith("."))
    return sorted(dirs), sorted(files)


def _random_pattern(rng: random.Random) -> str:
    segments = [rng.choice(PATTERN_PIECES) for _ in range(rng.choice((1, 1, 1, 2, 2, 3)))]
    pattern = "/".join(segments)
    if rng.random() < 0.25:
        pattern = "/" + pattern
    if rng.random() < 0.25:
        pattern += "/"
    if rng.random() < 0.3:
        pattern = "!" + pattern
    return pattern


def _random_tree(rng: random.Random, root: Path) -> None:
    """Folders up to five deep, files of three extensions, .gitignore files at many levels, info/exclude."""
    folders = [root]
    for _ in range(rng.randint(12, 22)):
        parent = rng.choice(folders)
        if len(parent.relative_to(root).parts) >= 5:
            continue
        child = parent / rng.choice(DIR_NAMES)
        if not child.exists():
            child.mkdir()
            folders.append(child)
    for folder in folders:
        for _ in range(rng.randint(1, 5)):
            file = folder / (rng.choice(NAME_STEMS) + rng.choice(TREE_EXTENSIONS))
            if not file.is_dir():
                file.write_text("# t\n")
        if folder == root or rng.random() < 0.5:
            lines = [_random_pattern(rng) for _ in range(rng.randint(1, 6))]
            if rng.random() < 0.2:
                lines.insert(0, "# a comment")
            (folder / ".gitignore").write_text("\n".join(lines) + "\n")
    exclude = [_random_pattern(rng) for _ in range(rng.randint(0, 3))]
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("\n".join(exclude) + "\n")


def _assert_same_as_git(tmp_path: Path, root: Path) -> None:
    dirs, files = _tree_paths(root)
    git = _git_ignored(tmp_path, root, dirs + files)
    policy = IgnorePolicy(root, extensions=TREE_EXTENSIONS)
    mismatches = [
        (path, git[path], policy(path, is_dir=path in dirs))
        for path in dirs + files
        if git[path] != (policy(path, is_dir=path in dirs) is not None)
    ]
    assert not mismatches, mismatches
    assert list(policy.walk()) == [f for f in files if not git[f]]
    assert list(policy.walk_dirs()) == ["", *(d for d in dirs if not git[d])]


@pytest.mark.parametrize("seed", range(20))
def test_random_trees_match_git_check_ignore(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(tmp_path, root, "init", "-q")
    _random_tree(random.Random(seed), root)
    _assert_same_as_git(tmp_path, root)


EDGE_CASES = {
    # "docs//" and "out//" never match in git; two such lines also leave the file without a pre-check.
    ".gitignore": "foo/**\n!foo/keep.md\na/**/\ndocs//\nout//\ncrlf.md\r\ntrail.md   \n"
    "\\#hash.md\n\\!bang.md\n[!x]y.md\n[z.md\n",
    "docs/.gitignore": "/anchored.md\nsub/deep.md\n*.txt\n!keep.txt\nbuild.md/\n",
    "docs/sub/.gitignore": "!*.txt\n",
    "out/.gitignore": "*\n!*/\n!*.md\n",
}
EDGE_FILES = (
    "foo/x.md foo/keep.md foo/bar/keep.md a/top.md a/x/in.md crlf.md trail.md #hash.md !bang.md ay.md xy.md "
    "[z.md docs/anchored.md docs/sub/anchored.md docs/sub/deep.md docs/other/sub/deep.md docs/a.txt docs/keep.txt "
    "docs/sub/b.txt docs/build.md/x.md docs/sub/build.md out/a.txt out/b.md out/in/c.md out/in/d.txt"
).split()


def test_edge_cases_match_git_check_ignore(tmp_path: Path) -> None:
    """Hand-picked cases: `foo/**` keeps `foo` (so a negation works), `a/**/`, CRLF, spaces, escapes, brackets."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(tmp_path, root, "init", "-q")
    for rel in EDGE_FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    for rel, text in EDGE_CASES.items():
        (root / rel).write_bytes(text.encode())
    _assert_same_as_git(tmp_path, root)
    policy = IgnorePolicy(root, extensions=(".md", ".txt"))
    assert policy("foo/keep.md") is None
    assert policy("foo", is_dir=True) is None
    assert policy("foo/x.md") == "gitignored by .gitignore"
    assert policy("a", is_dir=True) is None
    assert policy("a/x/in.md") == "gitignored by .gitignore"
    assert policy("docs/keep.txt") is None
    assert policy("docs/a.txt") == "gitignored by docs/.gitignore"
    assert policy("docs/sub/b.txt") is None
    assert policy("docs/build.md/x.md") == "gitignored by docs/.gitignore"
    assert policy("docs/sub/build.md") is None


def test_exotic_globs_match_git_where_pathspec_differed(tmp_path: Path) -> None:
    """Globs pathspec read unlike git's wildmatch (issue 13): scree's own translation gives git's answers."""
    rules = {
        "posix": "[[:alpha:]]*.md\n",
        "slash": "[k/[!a]*.md\n",
        "reversed": "[z-a]*.md\n[a-\\]]?.md\n",
        "lead": "a**/x.md\n",
        "stars": "d/***/x.md\n",
        "negated": "n[!x]b.md\n",
        "space": "tab.md\t\nsp /\n",
    }
    files = (
        "posix/c.md posix/:].md posix/1.md slash/k.md slash/kb.md slash/zb.md reversed/zz.md reversed/ax.md "
        "reversed/bx.md lead/ab/x.md lead/ax.md lead/ab/c/x.md stars/d/x.md stars/d/b/x.md stars/d/b/c/x.md "
        "negated/n/b.md negated/nab.md negated/nxb.md space/tab.md space/sp/in.md"
    ).split()
    root = tmp_path / "repo"
    root.mkdir()
    _git(tmp_path, root, "init", "-q")
    for folder, text in rules.items():
        (root / folder).mkdir()
        (root / folder / ".gitignore").write_text(text)
    for rel in files:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    (root / "space" / "tab.md\t").write_text("x\n")
    (root / "space" / "sp ").mkdir()
    (root / "space" / "sp " / "in.md").write_text("x\n")
    _assert_same_as_git(tmp_path, root)
    policy = IgnorePolicy(root)
    ignored = {rel for rel in [*files, "space/tab.md\t", "space/sp /in.md"] if policy(rel) is not None}
    assert ignored == {
        "posix/c.md",  # POSIX classes work; ":].md" is not matched
        "slash/k.md",  # "[k/[!a]" is one bracket (with a '/' that never matches one)
        "slash/kb.md",
        "reversed/zz.md",  # a reversed range matches its first character
        "reversed/ax.md",
        "lead/ab/x.md",  # "a" is compared as text, then "**/" leads
        "lead/ax.md",
        "lead/ab/c/x.md",
        "stars/d/x.md",  # "***" as a whole segment is "**"
        "stars/d/b/x.md",
        "stars/d/b/c/x.md",
        "negated/nab.md",  # "[!x]" never matches the '/' of "n/b.md"
        "space/tab.md\t",  # a trailing tab is part of the pattern
        "space/sp /in.md",  # "sp /" names the folder "sp " (trailing spaces before the '/' stay)
    }


def test_a_file_below_an_excluded_folder_cannot_be_re_included(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "build" / "sub").mkdir(parents=True)
    (root / ".gitignore").write_text("build/\n!build/keep.md\n")
    (root / "build" / ".gitignore").write_text("!*.md\n")
    (root / "build" / "keep.md").write_text("x\n")
    (root / "build" / "sub" / "deep.md").write_text("x\n")
    _git(tmp_path, root, "init", "-q")
    _assert_same_as_git(tmp_path, root)
    policy = IgnorePolicy(root)
    assert policy("build/keep.md") == "gitignored by .gitignore"
    assert policy("build/sub/deep.md") == "gitignored by .gitignore"
    assert list(policy.walk()) == []


def test_info_exclude_is_read_and_named(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(tmp_path, root, "init", "-q")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("private.md\n")
    (root / ".gitignore").write_text("!private.md\nother.md\n")
    (root / "docs").mkdir()
    for rel in ("private.md", "docs/private.md", "other.md", "docs/ok.md"):
        (root / rel).write_text("x\n")
    policy = IgnorePolicy(root)
    # A .gitignore negation outranks info/exclude, as in git.
    assert policy("private.md") is None
    assert policy("docs/private.md") is None
    (root / ".gitignore").write_text("other.md\n")
    policy.invalidate()
    assert policy("private.md") == "excluded by .git/info/exclude"
    assert policy("docs/private.md") == "excluded by .git/info/exclude"
    assert policy("other.md") == "gitignored by .gitignore"
    assert list(policy.walk()) == ["docs/ok.md"]


def test_worktree_reads_info_exclude_of_the_common_git_dir(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    _git(tmp_path, main, "init", "-q")
    (main / "a.md").write_text("x\n")
    ident = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")
    _git(tmp_path, main, "add", "a.md")
    _git(tmp_path, main, *ident, "commit", "-q", "-m", "one")
    _git(tmp_path, main, "worktree", "add", "-q", str(tmp_path / "wt"))
    (main / ".git" / "info").mkdir(exist_ok=True)
    (main / ".git" / "info" / "exclude").write_text("local.md\n")
    wt = tmp_path / "wt"
    assert (wt / ".git").is_file()
    (wt / "local.md").write_text("x\n")
    policy = IgnorePolicy(wt)
    assert policy("local.md") == "excluded by .git/info/exclude"
    assert list(policy.walk()) == ["a.md"]


def test_gitignore_is_honoured_outside_a_repository(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / ".gitignore").write_text("draft*.md\n")
    (tmp_path / ".gitignore").write_text("/scratch/\n")
    (tmp_path / "scratch").mkdir()
    for rel in ("notes/draft1.md", "notes/final.md", "scratch/a.md", "top.md"):
        (tmp_path / rel).write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert policy("notes/draft1.md") == "gitignored by notes/.gitignore"
    assert policy("scratch", is_dir=True) == "gitignored by .gitignore"
    assert list(policy.walk()) == ["notes/final.md", "top.md"]


def test_nested_repositories_are_skipped_whole(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "vendored" / ".git").mkdir(parents=True)
    (tmp_path / "vendored" / "docs").mkdir()
    (tmp_path / "submodule").mkdir()
    (tmp_path / "submodule" / ".git").write_text("gitdir: ../.git/modules/submodule\n")
    for rel in ("vendored/README.md", "vendored/docs/x.md", "submodule/README.md", "mine.md"):
        (tmp_path / rel).write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert policy("vendored/README.md") == "inside nested repository vendored/"
    assert policy("vendored/docs/x.md") == "inside nested repository vendored/"
    assert policy("submodule", is_dir=True) == "inside nested repository submodule/"
    assert list(policy.walk()) == ["mine.md"]
    assert list(policy.walk_dirs()) == [""]


def test_screeignore_at_any_level_with_its_own_reason(tmp_path: Path) -> None:
    (tmp_path / "docs" / "drafts").mkdir(parents=True)
    (tmp_path / "docs" / "old").mkdir()
    (tmp_path / ".screeignore").write_text("CHANGELOG.md\ndocs/old/\n")
    (tmp_path / "docs" / ".screeignore").write_text("drafts/*\n!drafts/ready.md\n!gitignored.md\n")
    (tmp_path / ".gitignore").write_text("gitignored.md\n")
    rels = ("CHANGELOG.md", "README.md", "docs/old/a.md", "docs/drafts/wip.md", "docs/drafts/ready.md")
    for rel in (*rels, "docs/gitignored.md"):
        (tmp_path / rel).write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert policy("CHANGELOG.md") == "excluded by .screeignore"
    assert policy("docs/old", is_dir=True) == "excluded by .screeignore"
    assert policy("docs/old/a.md") == "excluded by .screeignore"
    assert policy("docs/drafts/wip.md") == "excluded by docs/.screeignore"
    assert policy("docs/drafts/ready.md") is None
    # A .screeignore negation does not re-include what git ignores: the two sets are separate.
    assert policy("docs/gitignored.md") == "gitignored by .gitignore"
    assert list(policy.walk()) == ["README.md", "docs/drafts/ready.md"]
    assert list(policy.walk_dirs()) == ["", "docs", "docs/drafts"]


def test_hidden_paths_are_skipped(tmp_path: Path) -> None:
    for rel in (".github/x.md", "docs/.hidden.md", ".top.md", "docs/.cache/y.md", "docs/seen.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    for rel in (".github/x.md", "docs/.hidden.md", ".top.md", "docs/.cache/y.md"):
        assert policy(rel) == "hidden path"
    assert policy(".github", is_dir=True) == "hidden path"
    assert list(policy.walk()) == ["docs/seen.md"]
    assert list(policy.walk_dirs()) == ["", "docs"]


def test_extension_filter_applies_to_files_only(tmp_path: Path) -> None:
    (tmp_path / "guide.markdown").mkdir()
    for rel in ("a.md", "b.MD", "c.py", "d.rst", "e.markdown", "Makefile", "guide.markdown/f.md"):
        (tmp_path / rel).write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert policy("c.py") == "not a docs file (by its ending)"
    assert policy("Makefile") == "not a docs file (by its ending)"
    assert list(policy.walk()) == ["a.md", "b.MD", "d.rst", "e.markdown", "guide.markdown/f.md"]
    with_rst = IgnorePolicy(tmp_path, extensions=(".md", ".RST"))
    assert list(with_rst.walk()) == ["a.md", "b.MD", "d.rst", "guide.markdown/f.md"]


def test_walk_prunes_an_ignored_node_modules(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    for i in range(2000):
        package = tmp_path / "node_modules" / f"pkg{i}"
        package.mkdir(parents=True)
        (package / "README.md").write_text("x\n")
    (tmp_path / "README.md").write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert policy("node_modules", is_dir=True) == "gitignored by .gitignore"
    assert policy("node_modules/pkg7/README.md") == "gitignored by .gitignore"
    assert list(policy.walk_dirs()) == [""]
    assert list(policy.walk()) == ["README.md"]


def test_walk_is_sorted_and_never_follows_symlinked_folders(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "outside").mkdir()
    for rel in ("a.md", "a/b.md", "a-b.md", "a0.md", "outside/secret.md"):
        (tmp_path / rel).write_text("x\n")
    root = tmp_path / "a"
    (root / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    (root / "sub").mkdir()
    (root / "sub" / "z.md").write_text("x\n")
    (root / "sub.md").write_text("x\n")
    (root / "linked.md").symlink_to(tmp_path / "outside" / "secret.md")
    policy = IgnorePolicy(root)
    # A symlink named *.md is handed on: scree.content.files refuses it and says why.
    assert list(policy.walk()) == ["b.md", "linked.md", "sub.md", "sub/z.md"]
    assert list(policy.walk_dirs()) == ["", "sub"]
    top = IgnorePolicy(tmp_path)
    walked = list(top.walk())
    assert walked == sorted(walked)
    assert walked == ["a-b.md", "a.md", "a/b.md", "a/linked.md", "a/sub.md", "a/sub/z.md", "a0.md", "outside/secret.md"]


def test_paths_that_are_not_relative_are_refused(tmp_path: Path) -> None:
    policy = IgnorePolicy(tmp_path)
    assert policy("/etc/passwd.md") == "not a relative path inside the folder"
    assert policy("a//b.md") == "not a relative path inside the folder"
    assert policy("../x.md") == "hidden path"
    assert policy("") == "not a relative path inside the folder"
    assert policy("", is_dir=True) is None
    (tmp_path / ".gitignore").write_text("build/\n")
    assert policy("build/") == "gitignored by .gitignore"
    assert policy.dir_ignored("") is None


def test_invalidate_picks_up_changed_rules(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert list(policy.walk()) == ["docs/a.md"]
    (tmp_path / "docs" / ".gitignore").write_text("a.md\n")
    policy.invalidate()
    assert policy("docs/a.md") == "gitignored by docs/.gitignore"
    (tmp_path / "docs" / ".git").mkdir()
    (tmp_path / "docs" / ".gitignore").unlink()
    policy.invalidate()
    assert policy.dir_ignored("docs") == "inside nested repository docs/"


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (".gitignore", True),
        ("docs/deep/.gitignore", True),
        (".screeignore", True),
        ("docs/.screeignore", True),
        (".git/info/exclude", True),
        ("vendored/.git", True),
        ("docs/gitignore.md", False),
        ("docs/.gitignore.md", False),
        ("docs/.git/info/exclude", False),
        ("README.md", False),
    ],
)
def test_is_ignore_file(tmp_path: Path, rel: str, expected: bool) -> None:
    assert IgnorePolicy(tmp_path).is_ignore_file(rel) is expected


def test_odd_ignore_files_do_not_block_or_crash(tmp_path: Path) -> None:
    """A FIFO or a symlink named .gitignore is not read (git does not follow one either); bad bytes are fine."""
    (tmp_path / "fifo").mkdir()
    os.mkfifo(tmp_path / "fifo" / ".gitignore")
    (tmp_path / "fifo" / "a.md").write_text("x\n")
    (tmp_path / "linked").mkdir()
    (tmp_path / "rules").write_text("*.md\n")
    (tmp_path / "linked" / ".gitignore").symlink_to(tmp_path / "rules")
    (tmp_path / "linked" / "b.md").write_text("x\n")
    (tmp_path / "bytes").mkdir()
    (tmp_path / "bytes" / ".gitignore").write_bytes(b"\xef\xbb\xbfc.md\n\xff\xfe\n[[:alpha:]]x.md\n")
    (tmp_path / "bytes" / "c.md").write_text("x\n")
    (tmp_path / "bytes" / "d.md").write_text("x\n")
    policy = IgnorePolicy(tmp_path)
    assert list(policy.walk()) == ["bytes/d.md", "fifo/a.md", "linked/b.md"]


# --- R-I1: package managers' folders are skipped by default ---


def test_package_folders_are_skipped_without_any_ignore_file(tmp_path: Path) -> None:
    for rel in (
        "node_modules/pkg/README.md",
        "web/bower_components/lib/README.md",
        "php/vendor/acme/README.md",
        "venv/lib/python3.11/site-packages/pkg/README.md",
        "src/__pycache__/notes.md",
        "docs/guide.md",
        "docs/vendors/list.md",  # only the exact folder names
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# x\n")
    policy = IgnorePolicy(tmp_path)
    assert list(policy.walk()) == ["docs/guide.md", "docs/vendors/list.md"]
    assert "node_modules" not in " ".join(policy.walk_dirs())  # and no watch goes there (R-W3)
    assert policy("node_modules/pkg/README.md") == (
        "inside node_modules/, a package folder scree skips by default; a .screeignore line !node_modules/ brings it "
        "back"
    )
    assert policy("php/vendor/acme/README.md").startswith("inside php/vendor/, a package folder")
    assert policy("missing/node_modules/x.md") is not None  # whether or not it exists
    assert policy("node_modules", is_dir=True) is not None and policy("vendor.md") is None


def test_a_screeignore_negation_brings_one_back_and_gitignore_still_wins(tmp_path: Path) -> None:
    for rel in ("vendor/a/README.md", "lib/vendor/b.md", "node_modules/pkg/README.md", "old/vendor/c.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("# x\n")
    (tmp_path / ".screeignore").write_text("!vendor/\n")
    (tmp_path / ".gitignore").write_text("old/\n")
    policy = IgnorePolicy(tmp_path)
    assert list(policy.walk()) == ["lib/vendor/b.md", "vendor/a/README.md"]
    assert policy("node_modules/pkg/README.md") is not None  # the others stay skipped
    assert policy("old/vendor/c.md") == "gitignored by .gitignore"
    (tmp_path / ".screeignore").write_text("!node_modules/pkg/\n")  # a negation below a skipped folder cannot reach
    policy.invalidate()
    assert list(policy.walk()) == []


def test_the_docs_list_the_default_skipped_folders() -> None:
    from scree.content.ignore import DEFAULT_SKIPPED_DIRS

    readme = (Path(__file__).resolve().parent.parent / "docs" / "how-it-works.md").read_text(encoding="utf-8")
    listed = readme.split("even when no ignore file names them:", 1)[1].split("(a `.screeignore` line", 1)[0]
    assert [name.strip("`/ \n") for name in listed.split(",")] == list(DEFAULT_SKIPPED_DIRS)


def test_refresh_while_another_thread_loads_rules_never_fails(tmp_path: Path) -> None:
    """The MCP reader shares one policy between tool calls on worker threads: one call's refresh() walked the files
    the rules came from while another call's lookup added one ("dictionary changed size during iteration")."""
    folders = [f"d{n:03}" for n in range(300)]
    for name in folders:
        (tmp_path / name).mkdir()
        (tmp_path / name / ".gitignore").write_text("*.tmp\n")
    policy = IgnorePolicy(tmp_path)
    failures: list[BaseException] = []
    done = threading.Event()

    def refresh_until_done() -> None:
        try:
            while not done.is_set():
                policy.refresh()
        except BaseException as exc:  # handed to the test's thread
            failures.append(exc)

    refresher = threading.Thread(target=refresh_until_done)
    refresher.start()
    try:
        for name in folders:  # each lookup notes the folder's .gitignore (and its parents') as a new source
            assert policy(f"{name}/note.md") is None
    finally:
        done.set()
        refresher.join()
    assert not failures, failures


def test_a_tracked_file_is_never_gitignored_as_git_check_ignore_says(tmp_path: Path) -> None:
    """R-I1 follows `git check-ignore`, which never reports a tracked file: vuejs/pinia commits its generated API
    pages under packages/docs/api/, a folder its .gitignore names, and scree skipped all 77. The folder is entered
    for its tracked files alone; .screeignore still applies to them; untracking one makes it ignored again."""
    root = tmp_path / "repo"
    for rel in ("api/tracked.md", "api/deep/tracked.md", "docs/intro.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("# Page\n", encoding="utf-8")
    _git(tmp_path, root, "init", "-q")
    _git(tmp_path, root, "add", ".")
    _git(tmp_path, root, "-c", "user.email=a@example.org", "-c", "user.name=a", "commit", "-q", "-m", "pages")
    (root / ".gitignore").write_text("api\n", encoding="utf-8")
    (root / "api" / "generated.md").write_text("# Page\n", encoding="utf-8")
    (root / "api" / "new").mkdir()
    (root / "api" / "new" / "page.md").write_text("# Page\n", encoding="utf-8")
    paths = ["api/tracked.md", "api/deep/tracked.md", "api/generated.md", "api/new/page.md", "docs/intro.md"]
    result = subprocess.run(["git", "check-ignore", *paths], cwd=root, capture_output=True, env=_git_env(tmp_path))
    git_says = set(os.fsdecode(result.stdout).split())
    assert git_says == {"api/generated.md", "api/new/page.md"}, git_says
    policy = IgnorePolicy(root)
    assert {path for path in paths if policy(path) is not None} == git_says
    assert policy("api/generated.md") == "gitignored by .gitignore"
    assert list(policy.walk()) == ["api/deep/tracked.md", "api/tracked.md", "docs/intro.md"]
    assert list(policy.walk_dirs()) == ["", "api", "api/deep", "docs"]  # watches: not api/new/
    (root / ".screeignore").write_text("api/deep/\n", encoding="utf-8")
    assert policy.refresh() and list(policy.walk()) == ["api/tracked.md", "docs/intro.md"]
    _git(tmp_path, root, "rm", "-q", "--cached", "api/tracked.md")
    assert policy.refresh() and policy("api/tracked.md") == "gitignored by .gitignore"
    plain = tmp_path / "plain"  # no repository: the rules apply as written
    (plain / "api").mkdir(parents=True)
    (plain / "api" / "tracked.md").write_text("# Page\n", encoding="utf-8")
    (plain / ".gitignore").write_text("api\n", encoding="utf-8")
    assert list(IgnorePolicy(plain).walk()) == []
