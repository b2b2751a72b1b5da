"""The ignore policy (R-I1) as one callable: a relative path in, the reason it is not indexed (or None) out.

What is skipped, in the order the reasons are reported: hidden paths (any component starting with "."),
anything below a skipped folder, files without a markdown extension, gitignored paths, nested repositories
(a folder with its own `.git`, file or folder), package managers' folders (DEFAULT_SKIPPED_DIRS, unless a
`.screeignore` negation names them) and paths matched by `.screeignore` files.

Gitignore follows `git check-ignore`: a `.gitignore` at every level, deeper files overriding shallower ones,
the last matching pattern within a file winning, `!` negations, anchored, directory-only and `**` patterns,
then `.git/info/exclude` (found through a `.git` file too, for worktrees), and no re-including a path below an
excluded folder. `core.excludesFile` and the global ignore file are deliberately not read: what gets indexed
must not depend on who runs scree. `.gitignore` files are honoured whether or not the folder is a repository. As
with git, a file the repository tracks is never gitignored (scree.content.git_tracked: `git ls-files`), and a
gitignored folder holding tracked files is entered for them alone.
`.screeignore` files use the same syntax and rules, as a second, separate set.

Each pattern line is translated as git's wildmatch reads it (scree.content.ignore_rules); the levels are combined here,
as git does: each folder is decided on its own (`foo/**` keeps `foo`, so `!foo/keep.md` re-includes it) and
nothing is looked at below an excluded folder. tests/test_ignore.py and tests/test_faults_ignore.py check the
answers against `git check-ignore` on random trees and generated patterns.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

from scree.content.files import scandir_by_names
from scree.content.formats import DEFAULT_SUFFIXES, name_refusal
from scree.content.git_tracked import Tracked, index_path, tracked_files
from scree.content.ignore_rules import RuleFile, compile_rules, read_ignore_file

GITIGNORE = ".gitignore"
SCREEIGNORE = ".screeignore"
GIT_DIR = ".git"
INFO_EXCLUDE = ".git/info/exclude"
DEFAULT_EXTENSIONS = DEFAULT_SUFFIXES  # R-I1: every ending the table of formats claims (scree.content.formats)

# R-I1: package managers' folders, skipped wherever they are even when no ignore file names them; a `.screeignore`
# negation (`!vendor/`) brings one back. The one list of them (the README's copy says the same).
DEFAULT_SKIPPED_DIRS = ("node_modules", "bower_components", "vendor", "site-packages", "__pycache__")
# Issue 33: Sphinx's build output and static files, and gettext catalogs (`locale/<lang>/LC_MESSAGES/`): never docs
# pages, skipped the same way (a `.screeignore` negation brings one back).
BUILD_OUTPUT_DIRS = ("_build", "_static", "LC_MESSAGES")

# Issue 25: endings of other documentation formats, counted when a walk leaves them out, so reindex and doctor can
# say how many files SCREE_EXTENSIONS would bring in (a folder of .rst or .mdx was skipped silently).
OTHER_DOC_EXTENSIONS = (".rst", ".txt", ".adoc", ".asciidoc", ".org", ".textile", ".rdoc", ".pod", ".qmd", ".rmd",
                        ".mdown", ".mkd", ".mkdn", ".markdn", ".mdwn", ".mdtxt")  # fmt: skip

HIDDEN = "hidden path"
NOT_MARKDOWN = "not a docs file (by its ending)"
NOT_RELATIVE = "not a relative path inside the folder"

_GITIGNORE_KIND = "gitignore"
_SCREEIGNORE_KIND = "screeignore"


def _git_common_dir(root: Path) -> Path | None:
    """The folder holding info/exclude: `.git`, or for a worktree the common dir its `.git` file points to."""
    dot_git = root / GIT_DIR
    if dot_git.is_dir():
        return dot_git
    text = read_ignore_file(str(dot_git), follow_symlinks=True).strip()
    if not text.startswith("gitdir:"):
        return None
    git_dir = (root / text.removeprefix("gitdir:").strip()).resolve()
    common = read_ignore_file(str(git_dir / "commondir"), follow_symlinks=True).strip()
    return (git_dir / common).resolve() if common else git_dir


_Signature = tuple[int, int, int, int, int, bool] | None  # (dev, inode, size, mtime_ns, ctime_ns, followed) or None


def _signature(path: str, *, follow_symlinks: bool) -> _Signature:
    """What changes when a file is written, replaced, created or removed; None when it is not there."""
    try:
        info = os.stat(path, follow_symlinks=follow_symlinks)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns, follow_symlinks)


def skipped_by_default(rel_dir: str, what: str = "a package folder") -> str:
    """The reason for a package manager's folder (R-I1) or build output (issue 33), naming the way to bring it back."""
    name = rel_dir.rpartition("/")[2]
    return f"inside {rel_dir}/, {what} scree skips by default; a .screeignore line !{name}/ brings it back"


def _parent(rel: str) -> str:
    return rel.rpartition("/")[0]


class IgnorePolicy:
    """Callable: relative posix path -> reason string or None (None = indexable). Front matter is not read here."""

    def __init__(self, root: Path, extensions: tuple[str, ...] = DEFAULT_EXTENSIONS) -> None:
        self.root = root
        self.extensions = tuple(ext.lower() for ext in extensions)
        self._root_str = str(root)
        self._dir_reasons: dict[str, str | None] = {}
        self._chains: dict[tuple[str, str], tuple[RuleFile, ...]] = {}
        self._info_exclude: tuple[RuleFile, ...] | None = None
        # R-I1: folders the last walk could not list (relative path -> why): their files are not known to be gone
        self.unreadable_dirs: dict[str, str] = {}
        # issue 25: files of other doc formats (OTHER_DOC_EXTENSIONS) the last walk left out for their ending alone,
        # by ending; what SCREE_EXTENSIONS would add
        self.left_out: dict[str, int] = {}
        # every file the cached rules and folder decisions came from (ignore files, .git entries), present or not,
        # with what a stat said then: refresh() re-compiles only when one of them changed (issue 13)
        self._sources: dict[str, _Signature] = {}
        self._tracked: Tracked | None = None  # read when a gitignore rule first matters (_git_tracked)
        self._index: tuple[str, _Signature] | None = None  # the index file it was read after, and its stat then
        self._kept_dirs: dict[str, bool] = {}  # folder -> no reason but gitignore's skips it (_only_gitignored)

    def __call__(self, rel: str, is_dir: bool = False) -> str | None:
        """Why `rel` (relative, '/'-separated) is not indexed, or None; `is_dir` says it names a folder."""
        if rel.endswith("/") and rel != "/":  # "docs/" names a folder
            rel, is_dir = rel.rstrip("/"), True
        if rel in ("", "."):
            return None if is_dir else NOT_RELATIVE
        parts = rel.split("/")
        if rel.startswith("/") or "" in parts:
            return NOT_RELATIVE
        if any(part.startswith(".") for part in parts):
            return HIDDEN
        if is_dir:
            return self.dir_ignored(rel)
        parent = _parent(rel)
        reason = self.dir_ignored(parent) if parent else None
        if reason is not None and not (self._only_gitignored(parent) and self._git_tracked().holds(rel)):
            return reason
        if not parts[-1].lower().endswith(self.extensions):
            return NOT_MARKDOWN
        git = self._git_reason(rel, False)
        if git is not None and self._git_tracked().holds(rel):
            git = None
        return git or self._scree_reason(rel, False) or name_refusal(rel)

    def entered(self, rel_dir: str) -> bool:
        """Whether a walk goes into the folder (and a watch is placed on it): it is not skipped, or only gitignore
        skips it and the repository tracks files below it (git never ignores a tracked file)."""
        if self.dir_ignored(rel_dir) is None:
            return True
        return self._only_gitignored(rel_dir) and self._git_tracked().holds_below(rel_dir)

    def _git_tracked(self) -> Tracked:
        """What the repository tracks, read again after its index changed (refresh): `git add`, `git rm`, and any
        command that rewrites the index, which drops this set alone, not the compiled rules."""
        if self._tracked is None:
            index = index_path(self.root)
            self._index = (str(index), _signature(str(index), follow_symlinks=True)) if index is not None else None
            self._tracked = tracked_files(self.root) if index is not None else Tracked()
        return self._tracked

    def _only_gitignored(self, rel_dir: str) -> bool:
        """Whether the folder and each folder above it is skipped for no reason but a gitignore rule (not hidden,
        no nested repository, no .screeignore rule, no package folder)."""
        if not rel_dir:
            return True
        known = self._kept_dirs.get(rel_dir)
        if known is None:
            parent = _parent(rel_dir)
            known = (not parent or self._only_gitignored(parent)) and self._own_dir_reason(rel_dir, git=False) is None
            self._kept_dirs[rel_dir] = known
        return known

    def dir_ignored(self, rel_dir: str) -> str | None:
        """Why the folder (and so everything below it) is skipped; "" is the root, never skipped."""
        if not rel_dir:
            return None
        reasons = self._dir_reasons
        if rel_dir in reasons:
            return reasons[rel_dir]
        # Top-down from the shallowest uncached folder, so a deep path never recurses.
        reason: str | None = None
        prefix = ""
        for name in rel_dir.split("/"):
            prefix = f"{prefix}/{name}" if prefix else name
            if prefix in reasons:
                reason = reasons[prefix]
            else:
                reason = reason or self._own_dir_reason(prefix)
                reasons[prefix] = reason
        return reason

    def _own_dir_reason(self, rel_dir: str, git: bool = True) -> str | None:
        name = rel_dir.rpartition("/")[2]
        if name.startswith("."):
            return HIDDEN
        reason = self._git_reason(rel_dir, True) if git else None
        if reason is None and self._note_source(os.path.join(self._root_str, rel_dir, GIT_DIR)) is not None:
            reason = f"inside nested repository {rel_dir}/"
        if reason is not None:
            return reason
        decision, scree_reason = self._scree_decision(rel_dir, True)
        if decision is None and name in DEFAULT_SKIPPED_DIRS:
            return skipped_by_default(rel_dir)
        if decision is None and name in BUILD_OUTPUT_DIRS:
            return skipped_by_default(rel_dir, "build output or catalogs")
        return scree_reason if decision else None

    def _git_reason(self, rel: str, is_dir: bool) -> str | None:
        for rule_file in (*self._chain(_parent(rel), _GITIGNORE_KIND), *self._exclude_file()):
            decision = rule_file.decide(rel, is_dir)
            if decision is not None:
                return rule_file.reason if decision else None
        return None

    def _scree_reason(self, rel: str, is_dir: bool) -> str | None:
        decision, reason = self._scree_decision(rel, is_dir)
        return reason if decision else None

    def _scree_decision(self, rel: str, is_dir: bool) -> tuple[bool | None, str]:
        """What the `.screeignore` files say: (True: excluded, False: a negation re-includes it, None: nothing)."""
        for rule_file in self._chain(_parent(rel), _SCREEIGNORE_KIND):
            decision = rule_file.decide(rel, is_dir)
            if decision is not None:
                return decision, rule_file.reason
        return None, ""

    def _chain(self, rel_dir: str, kind: str) -> tuple[RuleFile, ...]:
        """The ignore files of one kind that apply inside `rel_dir`, deepest first."""
        key = (rel_dir, kind)
        chain = self._chains.get(key)
        if chain is None:
            above = self._chain(_parent(rel_dir), kind) if rel_dir else ()
            own = self._load(rel_dir, kind)
            chain = (own, *above) if own is not None else above
            self._chains[key] = chain
        return chain

    def _load(self, rel_dir: str, kind: str) -> RuleFile | None:
        name = GITIGNORE if kind == _GITIGNORE_KIND else SCREEIGNORE
        rel_file = f"{rel_dir}/{name}" if rel_dir else name
        path = os.path.join(self._root_str, rel_file)
        self._note_source(path)
        rules = compile_rules(read_ignore_file(path, follow_symlinks=False))
        if not rules:
            return None
        verb = "gitignored by" if kind == _GITIGNORE_KIND else "excluded by"
        return RuleFile.build(f"{verb} {rel_file}", rel_dir, rules)

    def _exclude_file(self) -> tuple[RuleFile, ...]:
        if self._info_exclude is None:
            self._note_source(os.path.join(self._root_str, GIT_DIR))
            common = _git_common_dir(self.root)
            if common is not None:
                self._note_source(str(common / "info" / "exclude"), follow_symlinks=True)
            text = read_ignore_file(str(common / "info" / "exclude"), follow_symlinks=True) if common else ""
            rules = compile_rules(text)
            self._info_exclude = (RuleFile.build(f"excluded by {INFO_EXCLUDE}", "", rules),) if rules else ()
        return self._info_exclude

    def walk(self) -> Iterator[str]:
        """Every indexable path, sorted; ignored folders are never entered (a gitignored one holding tracked files
        is, for those: `entered`), symlinked folders never followed.

        Every non-folder entry the policy accepts is yielded (a symlink or FIFO named x.md too): whether it is a
        regular file is scree.content.files' job, which says why it refuses one.
        """
        for rel, is_dir in self._traverse(with_files=True):
            if not is_dir:
                yield rel

    def walk_dirs(self) -> Iterator[str]:
        """Every folder a walk enters (`entered`), the root ("") first, parents before children: where watches go."""
        for rel, _ in self._traverse(with_files=False):
            yield rel

    def _traverse(self, with_files: bool) -> Iterator[tuple[str, bool]]:
        """Depth-first over kept folders (and files), in sorted path order, without recursion."""
        self.unreadable_dirs = {}
        self.left_out = {}
        yield "", True
        stack = [iter(self._entries(""))]
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
                continue
            rel, is_dir = entry
            if is_dir:
                if self.entered(rel):
                    yield rel, True
                    stack.append(iter(self._entries(rel)))
            elif with_files:
                reason = self(rel)
                if reason is None:
                    yield rel, False
                elif reason == NOT_MARKDOWN:
                    self._count_left_out(rel)

    def _count_left_out(self, rel: str) -> None:
        """Count `rel` in left_out when it is another doc format's file that only its ending keeps out."""
        ending = os.path.splitext(rel)[1].lower()
        if ending in OTHER_DOC_EXTENSIONS and not self._git_reason(rel, False) and not self._scree_reason(rel, False):
            self.left_out[ending] = self.left_out.get(ending, 0) + 1

    def _entries(self, rel_dir: str) -> list[tuple[str, bool]]:
        """A folder's entries as (relative path, is a real folder), sorted so the walk yields sorted paths."""
        prefix = rel_dir + "/" if rel_dir else ""
        found: list[tuple[str, bool]] = []
        try:
            try:
                listing = os.scandir(os.path.join(self._root_str, rel_dir))
            except OSError as exc:  # a path over PATH_MAX: listed through its parents, so its files are named
                if exc.errno != errno.ENAMETOOLONG or os.scandir not in os.supports_fd:
                    raise
                listing = scandir_by_names(self._root_str, rel_dir)
            with listing as it:
                for entry in it:
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError as exc:
                        self.unreadable_dirs[prefix + entry.name] = exc.strerror or str(exc)
                        continue
                    found.append((prefix + entry.name, is_dir))
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):  # removed during the walk: gone indeed
                self.unreadable_dirs[rel_dir] = exc.strerror or str(exc)
            return []
        # "a/" sorts after "a.md" like the full paths "a/x.md" do, so depth-first order is sorted order.
        found.sort(key=lambda item: item[0] + "/" if item[1] else item[0])
        return found

    def is_ignore_file(self, rel: str) -> bool:
        """Does a change to this path change the rules? (.gitignore, .screeignore, .git/info/exclude, a `.git`.)

        A `.git` appearing or going anywhere below the root makes or unmakes a nested repository.
        """
        name = rel.rpartition("/")[2]
        return name in (GITIGNORE, SCREEIGNORE, GIT_DIR) or rel == INFO_EXCLUDE

    def invalidate(self) -> None:
        """Forget every cached rule and folder decision (after an ignore file changed)."""
        self._dir_reasons = {}
        self._chains = {}
        self._info_exclude = None
        self._sources = {}
        self._tracked = self._index = None
        self._kept_dirs = {}

    def refresh(self) -> bool:
        """Forget the cached rules only if a file they came from changed, appeared or went (one stat each): with
        100,000 patterns a recompile took 21-25 s, which every tool call used to pay. True when it forgot them."""
        # a copy: the reader's tool calls share this policy, and another thread's lookup may note a source meanwhile
        for path, seen in list(self._sources.items()):
            if _signature(path, follow_symlinks=seen is not None and seen[-1]) != seen:
                self.invalidate()
                return True
        index = self._index
        if index is not None and _signature(index[0], follow_symlinks=True) != index[1]:
            self._tracked = self._index = None
            return True
        return False

    def _note_source(self, path: str, *, follow_symlinks: bool = False) -> _Signature:
        """Record what a stat of `path` says now (before it is read, so a later change is always seen)."""
        signature = _signature(path, follow_symlinks=follow_symlinks)
        self._sources.setdefault(path, signature)
        return signature
