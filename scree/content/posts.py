"""Dated posts on a docs site, by evidence (issue 32). Pure: paths and, on request, a page's front matter in, the
decision out; the I/O that reads front matter is scree.search.post_evidence.

A docs site's repository often keeps a blog beside its docs (`website/blog/2025-06-04-jest-30.md`,
`content/en/blog/2026/announcing-etcd-3.7.md`): release announcements and news that name every option of their day,
so they match a question as well as the reference page does, and say what was true then. On a docs site they are
secondary, as old versions are: shown after docs pages of similar rank (the search engine moves them down by places,
scree.search.ranking.POST_RANKS), still found when only a post answers. The rules, in this order:

1. A page is dated when its file name, or the name of the folder it is the index page of, starts with a date
   (`2023-04-05-foo.md`, `2021-03-09-upgrade/index.md`, `20230405_foo.md`), when a folder on its path is a year
   (`blog/2026/foo.md`, `news/2023/04/foo.md`), or, under a folder named as posts (rule 2), when its front matter
   has a `date:` and an `author:`/`authors:` (Hugo and Docusaurus posts without dates in their names); under one
   named for a blog (`blog`, `posts`: BLOG_NAMES), a `date:` alone (Astro's blog collections give no author).
2. A posts folder is the nearest folder named as posts (`blog`, `posts`, `_posts`, `news`, `changelog`,
   `release-notes`, `announcements`, ...; POST_FOLDER_NAMES) above at least MIN_POSTS dated pages that are at least
   POSTS_SHARE of its pages; or, whatever its name, the deepest folder holding at least MIN_DATED_NAMES pages with a
   date in their file names that are at least DATED_NAMES_SHARE of its pages. The root is never a posts folder. A
   name alone never decides: a `news/` of undated pages, or a `blog/` of two pages, is no posts folder. Every page
   under a posts folder is a post.
3. Posts are secondary only beside a docs tree: at least MIN_DOCS_PAGES pages outside every posts folder, index,
   README, changelog and licence pages aside. A repository that is only a blog has nothing to put its posts after.

A changelog (`CHANGELOG.md`, `CHANGES.rst`, `RELEASE-NOTES.md`, `HISTORY.md`, `NEWS.md`: is_changelog) is secondary
the same way, wherever it is: a monorepo keeps one per package, each entry naming the option it added (LoopBack's
`lb4/changelogs/extensions/authentication-jwt/CHANGELOG.md` came first for "How do I add authentication with JWT?",
its tutorial fourth), unless the query asks about changes (asks_about_changes: "what changed in 4.2", "when was
--foo removed"). So is a page titled as release notes or a changelog whatever its name (titled_changelog: the Go
website's `go1.21.md`, "Go 1.21 Release Notes", 28 of them, had come first for "How do I use the race detector?").
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scree.replies import first_few

POST_FOLDER_NAMES = frozenset(
    {
        "blog",
        "blogs",
        "posts",
        "_posts",
        "post",
        "news",
        "changelog",
        "changelogs",
        "release-notes",
        "release_notes",
        "releasenotes",
        "releases",
        "announcements",
        "newsletter",
        "newsletters",
    }
)
# Names that say blog: under these a front matter `date:` alone dates a page (Kyverno's Astro blog,
# src/content/blog/<slug>/index.md, gives no author); `news/`, `releases/` and the rest need an author too.
BLOG_NAMES = frozenset({"blog", "blogs", "posts", "_posts", "post"})
MIN_POSTS = 3  # dated pages before a folder named as posts is taken for one
POSTS_SHARE = 0.5  # ... and this share of its pages
MIN_DATED_NAMES = 5  # pages with a date in their file name before a folder of any name is taken for posts
DATED_NAMES_SHARE = 0.8  # ... and this share of its own pages
MIN_DOCS_PAGES = 5  # pages outside the posts folders (generic names aside) before posts are secondary
INDEX_NAMES = frozenset({"index", "_index", "readme"})
GENERIC = INDEX_NAMES | frozenset({"changelog", "changes", "history", "license", "licence", "contributing"})
# A date at the start of a name: 2023-04-05, 2023_04_05, 20230405, 2023-04; then the end or a separator.
_DATE_START = re.compile(r"(?:19|20)[0-9]{2}([-_.]?)(?:0[1-9]|1[0-2])(?:\1(?:0[1-9]|[12][0-9]|3[01]))?(?:$|[-_. ])")
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
_AUTHOR = re.compile(r"^(?:author|authors)\s*[:=]", re.MULTILINE)  # YAML `author:`, TOML `author =`
_DATE_KEY = re.compile(r"^date\s*[:=]\s*\S", re.MULTILINE)

# a changelog's file name, case and `_` aside; and, written in capitals as a project's own files are, these (a docs
# page `history.md` or `news.md` is as often a command's or a feature's)
CHANGELOG_NAMES = frozenset({"changelog", "changes", "release-notes", "releasenotes"})
CAPITAL_CHANGELOG_NAMES = frozenset({"HISTORY", "NEWS"})
# Issue 32: folders of change notes, one file per issue or pull request, gathered into the changelog at a release
# (towncrier's `changelog.d/`, `newsfragments/`; pytest's `changelog/`, pip's `news/`). Each fragment reads as a
# short answer ("Fixed Session.close() in a context manager") and had come second for "How do I use the Session with a
# context manager?" on SQLAlchemy's docs.
FRAGMENT_FOLDERS = frozenset({"changelog", "changelogs", "changes", "newsfragments", "news"})  # a word of its name
_FOLDER_WORD = re.compile(r"[._-]")  # changelog.d, changelog_unreleased (Prettier's), unreleased-changes
# A file named for an issue or a pull request: 10128.bugfix.rst, 11297.rst; or for a release: Sphinx's changes/0.1.rst.
# Not a number with a leading zero, which no issue has: RocketMQ's news/01.md is its first news article.
_FRAGMENT = re.compile(r"(?!0[0-9])[0-9]+(?:\.|$)")
# A release after a changelog's name: Velero keeps one per release, changelogs/CHANGELOG-1.18.md
_RELEASE_SUFFIX = re.compile(r"(?:-v?[0-9]+(?:\.[0-9]+)*(?:\.x)?)+$")  # a release, or a range of them
# a query's words asking about changes, whose answer a changelog is
CHANGE_WORDS = frozenset(
    {"changed", "changes", "changelog", "release", "released", "releases", "removed", "deprecated", "added"}
    | {"introduced", "breaking", "history", "renamed", "dropped"}
)
# ... and, for what a release changed ("what's new in 1.17"), this word too
WHAT_CHANGED_WORDS = CHANGE_WORDS | {"new"}

DATE_NAME = "date-named"
YEAR_FOLDER = "year folders"
FRONT_MATTER = "front matter date and author"
FRONT_MATTER_DATE = "front matter date"


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def dated_name(path: str) -> bool:
    """Whether the page's file name, or the folder it is the index page of, starts with a date."""
    parts = path.split("/")
    stem = _stem(parts[-1])
    if _DATE_START.match(stem + " "):
        return True
    return stem.lower() in INDEX_NAMES and len(parts) > 1 and _DATE_START.match(parts[-2] + " ") is not None


def in_year_folder(path: str, below: str = "") -> bool:
    """Whether a folder on the page's path (below the folder `below`) is a year: `blog/2026/foo.md`."""
    rest = path[len(below) + 1 :] if below else path
    return any(_YEAR.fullmatch(part) for part in rest.split("/")[:-1])


def dated_front_matter(front_matter: str | None, date_alone: bool = False) -> bool:
    """Whether a page's front matter has a `date:` and an `author:`/`authors:`: a post's, not a reference page's
    (a Hugo docs page often has a date alone); with `date_alone` (under a folder named for a blog), a date."""
    text = front_matter or ""
    return bool(_DATE_KEY.search(text)) and (date_alone or bool(_AUTHOR.search(text)))


def is_changelog(path: str) -> bool:
    """Whether a page is a changelog by its file name (CHANGELOG_NAMES, CAPITAL_CHANGELOG_NAMES), alone or with the
    releases it covers: `CHANGELOG.md`, `changes.rst`, `HISTORY.md`, `CHANGELOG-1.18.md`, `release-notes-v3.0.md`,
    `CHANGELOG-v0.1.0_v1.1.0.md`;
    not `commands/history.md` or `changelog-format.md`; or the index page of a folder so named (`changelog/index.md`,
    `release-notes/_index.md`: the changelog, or the list of its releases' pages); or a changelog's fragment: a page
    named for an issue or a pull request in a folder of change notes (FRAGMENT_FOLDERS: towncrier's
    `changelog/10128.bugfix.rst`, pip's `news/12248.bugfix.rst`, SQLAlchemy's
    `doc/build/changelog/unreleased_21/11297.rst`)."""
    parts = path.split("/")
    stem = _stem(parts[-1])
    if stem in CAPITAL_CHANGELOG_NAMES or _changelog_name(stem):
        return True
    if stem.lower() in INDEX_NAMES and len(parts) > 1 and _changelog_name(parts[-2]):
        return True  # the index page of a folder so named: Material for MkDocs' docs/changelog/index.md
    return _FRAGMENT.match(parts[-1]) is not None and any(
        not FRAGMENT_FOLDERS.isdisjoint(_FOLDER_WORD.split(part.lower())) for part in parts[:-1]
    )


def _changelog_name(name: str) -> bool:
    """Whether a file stem or folder name is a changelog's (CHANGELOG_NAMES), alone or with its release."""
    return _RELEASE_SUFFIX.sub("", name.lower().replace("_", "-")) in CHANGELOG_NAMES


# A page title saying the page is release notes or a changelog ("Go 1.21 Release Notes", "Vector v0.55.0 release
# notes"); not "Change Logs", Crossplane's guide to its change logs feature.
_CHANGELOG_TITLE = re.compile(r"\b(?:release\s+notes|changelog)\b", re.IGNORECASE)


def titled_changelog(title: str) -> bool:
    """Whether a page's title says it is release notes or a changelog (_CHANGELOG_TITLE)."""
    return _CHANGELOG_TITLE.search(title) is not None


CHANGELOGS_SHOWN = 3  # changelogs `scree doctor` names


def describe_changelogs(paths: Iterable[str], titles: Mapping[str, str] | None = None) -> str:
    """One line for `scree doctor`: the changelogs among `paths`, by name or by their `titles` (path -> title, for
    the pages read), and what search does with them."""
    titles = titles or {}
    found = sorted(path for path in paths if is_changelog(path) or titled_changelog(titles.get(path, "")))
    if not found:
        return (
            "none found (pages named CHANGELOG, CHANGES or RELEASE-NOTES, or the index page of a folder so named; "
            "HISTORY or NEWS in capitals; or named for an issue in a changelog/ or news/ folder; or titled release "
            "notes or changelog)"
        )
    named = first_few(found, CHANGELOGS_SHOWN)
    return f"{named}: shown after docs pages of similar rank unless the query asks about changes"


def asks_about_changes(words: Iterable[str], versions: Collection[str]) -> bool:
    """Whether a query (its case-folded `words`, the `versions` it names) asks what changed, when or in which
    release: a changelog answers it."""
    return bool(versions) or not CHANGE_WORDS.isdisjoint(words)


def asks_what_changed(words: Iterable[str]) -> bool:
    """Whether a query's case-folded `words` ask what a release changed ("what changed in 8.0", "what's new in
    1.17"), not how to do a thing in it ("how do I upgrade to 1.18"): a changelog's section on it answers."""
    return not WHAT_CHANGED_WORDS.isdisjoint(words)


@dataclass(frozen=True, slots=True)
class PostsFolder:
    """A folder of posts: its path, how many pages it holds, and the evidence it was taken on (for `scree doctor`)."""

    root: str
    pages: int
    why: str


@dataclass(frozen=True)
class Posts:
    """The site's posts folders (none when the site has no docs tree beside them, rule 3)."""

    folders: tuple[PostsFolder, ...] = ()
    docs_pages: int = 0
    blog_only: tuple[PostsFolder, ...] = ()  # posts folders found with no docs tree beside them: not demoted

    def is_post(self, path: str) -> bool:
        """A page of a posts folder beside a docs tree: ranked after docs pages of similar rank."""
        return any(path.startswith(folder.root + "/") for folder in self.folders)

    def in_posts_folder(self, path: str) -> bool:
        """A path in a posts folder, whether or not a docs tree is beside it (no version tree is one)."""
        return any(path.startswith(folder.root + "/") for folder in (*self.folders, *self.blog_only))

    def describe(self) -> str:
        """One line for `scree doctor`."""
        if self.folders:
            found = ", ".join(f"{folder.root}/ ({folder.pages} pages, {folder.why})" for folder in self.folders)
            return f"{found}: shown after docs pages of similar rank ({self.docs_pages} docs pages beside them)"
        if self.blog_only:
            found = ", ".join(f"{folder.root}/ ({folder.pages} pages)" for folder in self.blog_only)
            return f"{found}, but no docs tree beside them: ranked as any page"
        return "none found (dated pages in a blog/, news/ or posts/ folder, or date-named pages)"


def _folders_of(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[:cut]) for cut in range(len(parts), -1, -1)]  # nearest first, the root ("") last


def find_posts(paths: Iterable[str], front_matter: Callable[[str], str | None] | None = None) -> Posts:
    """The posts folders among `paths` (the module's rules, in order). `front_matter` gives a page's front matter
    (None: none or unreadable); it is asked only for pages under folders named as posts whose paths carry no date."""
    paths = sorted(set(paths))
    found = _named_folders(paths, front_matter)
    for folder in _date_named_folders(paths):
        if not any(_nested(folder.root, taken) for taken in found):
            found[folder.root] = folder
    folders = tuple(sorted(found.values(), key=lambda folder: folder.root))
    if not folders:
        return Posts()
    inside = Posts(folders)
    docs = sum(not inside.is_post(path) and _stem(path.rsplit("/", 1)[-1]).lower() not in GENERIC for path in paths)
    if docs < MIN_DOCS_PAGES:
        return Posts(docs_pages=docs, blog_only=folders)
    return Posts(folders, docs)


def _named_folders(paths: Sequence[str], front_matter: Callable[[str], str | None] | None) -> dict[str, PostsFolder]:
    """Rule 2, by name: the nearest folder named as posts above enough dated pages."""
    named: dict[str, list[str]] = {}  # the nearest folder named as posts -> its pages
    for path in paths:
        folder = next((f for f in _folders_of(path) if f and f.rsplit("/", 1)[-1].lower() in POST_FOLDER_NAMES), None)
        if folder is not None:
            named.setdefault(folder, []).append(path)
    found: dict[str, PostsFolder] = {}
    for folder, members in sorted(named.items()):
        kinds: Counter[str] = Counter()
        blog = folder.rsplit("/", 1)[-1].lower() in BLOG_NAMES
        for path in members:
            if dated_name(path):
                kinds[DATE_NAME] += 1
            elif in_year_folder(path, folder):
                kinds[YEAR_FOLDER] += 1
            elif front_matter is not None and (head := front_matter(path)) is not None:
                if dated_front_matter(head):
                    kinds[FRONT_MATTER] += 1
                elif blog and dated_front_matter(head, date_alone=True):
                    kinds[FRONT_MATTER_DATE] += 1
        dated = sum(kinds.values())
        if dated >= MIN_POSTS and dated >= POSTS_SHARE * len(members):
            found[folder] = PostsFolder(folder, len(members), ", ".join(kind for kind, _ in kinds.most_common()))
    return found


def _nested(a: str, b: str) -> bool:
    """Whether one of two folders is the other or holds it."""
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _date_named_folders(paths: Sequence[str]) -> list[PostsFolder]:
    """Rule 2, by dates in file names, whatever the folder's name: the deepest folders first, each folder once."""
    pages_under: Counter[str] = Counter()
    dated_under: Counter[str] = Counter()
    for path in paths:
        dated = dated_name(path)
        for folder in _folders_of(path)[:-1]:  # the root is never a posts folder: it holds the docs too
            pages_under[folder] += 1
            dated_under[folder] += dated
    out: list[PostsFolder] = []
    for folder, count in sorted(dated_under.items(), key=lambda item: (-item[0].count("/"), item[0])):
        if count >= MIN_DATED_NAMES and count >= DATED_NAMES_SHARE * pages_under[folder]:
            if not any(_nested(folder, taken.root) for taken in out):
                out.append(PostsFolder(folder, pages_under[folder], DATE_NAME))
    return out
