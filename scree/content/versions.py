"""Version trees of a docs site, and which one is current, by evidence (issue 32). Pure: paths, config texts and page
fingerprints in, decisions out; the I/O that gathers them is scree.search.version_evidence.

Many docs repositories keep several versions side by side (`versioned_docs/version-N/`, `content/en/docs/v3.7/`,
`docs/v2/`, `old/`), and an agent that answers from an old page writes wrong code. The rules, in this order:

1. A version tree is a folder that MIRRORS another: at least MIN_MIRRORED pages at the same relative paths (index and
   README pages alone do not count), and at least MIRROR_SHARE of the smaller folder's pages; first, whatever they
   mirror, the trees a Docusaurus versions.json declares (_declared_families: a restructured docs/) or a Hugo menu
   of versions links (_menu_families: jx-docs' content/en/v3/ beside v2's content/en/docs/); numbered
   siblings sharing fewer pages than MIN_MIRRORED where their text is a near-duplicate (_one_page_versions:
   hapi.dev's one api.md per major version). A folder name never decides alone: `old/` of unrelated pages, or a
   `docs/v2/` beside a `docs/` it does not copy, is no version tree.
   A relative path held by more than MAX_FOLDERS_PER_NAME folders counts only among those beside a version-named
   one (_versioned_siblings: Antrea's 85 versions side by side). The repository's root (ROOT) is a folder too,
   beside a top folder named for a version or saying old (_beside_the_root: a Mintlify site's v1/ at the root); its
   tree holds every page outside the other trees and the language trees. A language folder is the root of the
   versions inside it where its parent holds no folder of their names (Starlight's en/2.0/ and ru/2.0/ with no
   untagged docs).
2. Mirroring must come with evidence that the folders are versions of one tree, not siblings that share file names
   (`packages/a/docs/api.md` beside `packages/b/docs/api.md`): a folder name that carries a version number
   (`version-30.4`, `v3.7`, `2.x`, `v1.11.0-alpha.0`: a pre-release is its number's) or says old (`old`, `legacy`,
   `archive`, `archived`, `deprecated`, `previous`), the site's config naming the version, or near-duplicate text,
   measured: the resemblance (MinHash of word shingles, text_resemblance) of three in four of the shared pages at
   least SAME_TREE_RESEMBLANCE, where one of the folders is named for a release channel (`next/`, `latest/`, `main/`):
   two folders named for nothing are variants or copies (supertokens' nextjs/app-directory/ and pages-directory/,
   Redis's gears-v1/python/ and jvm/), and nothing would tell which is current. Folders of one name shape
   (name_shape) beside a family's trees join it, mirrored or not, a newer one unless it may be a stub
   (_sibling_pairs). A family holds each version once:
   two trees of one name (`content/v2.3/`, `content/cli/v2.3/`) are in two families, however alike. A folder without
   a version in its name is a version only where it mirrors the newest tree of its kind (_untagged_beside_an_old_one:
   Envoy Gateway's community/ holds what its v0.x trees held).
3. Which tree of a family is current: the user's setting (SCREE_CURRENT_VERSION: the tree's folder or its version,
   comma-separated for several families) first; then the site's config where it names the current version (Docusaurus
   `lastVersion` in docusaurus.config.*, else the first entry of versions.json beside versioned_docs/; a Hugo
   config's (or its config directory's) module mount serving a version's folder as `stable` or `latest`, then its key
   naming it (`latest_stable_version`, `latest: v1.18`, `current` in a table of versions, docsy's `params.version`),
   else the newest release its list of versions holds (`versions: [main, v1.18, ...]`, `[params.versions] docs =
   ["2.20", ...]`; entries saying dev or next are not releases); a key naming a folder (`cliLatest`, `versionsV2`)
   speaks for the family in that folder first; a Jekyll `_config*.yml` read as a Hugo config is; mike's versions.json
   entry aliased `latest`; Sphinx conf.py `version`/`release`; Mintlify's docs.json or mint.json default version;
   Rspress's `multiVersion.default`); then the one tree without a version number in its name that does not say old or
   next (Docusaurus's `docs/` beside `versioned_docs/version-N/`); then, of several such, the one named `latest`,
   `current` or `stable` (IoTDB's latest/ beside latest-Table/ and Master/Tree/); then the highest version number
   among trees that do not say old (an Antora pre-release's never). The newest folder is not always current: where
   the config names the current version, it wins. Words saying next are read in a tree's path below where the
   family's folders part (_below_branch).
4. The other trees are old, or newer than the current ("unreleased": a higher number at the tree's own precision
   where both carry one, else a name saying next or the untagged tree when the config names a numbered one, as Jest's
   docs/ is its "next", unless the config's label gives it a lower number: Docusaurus's `versions.current.label`,
   RocketMQ's `4.x` beside its current 5.0); a tree whose path says old is old whatever its number.
5. Each page of a non-current tree is a copy of the current page at the same relative path; else of the current page
   with the same file name (when only one has it); else of the current page whose text resembles it most, if at
   least RENAMED_RESEMBLANCE (pages renamed between versions); else of none (a removed page: still found, marked old),
   and then of the page at its path in the newest tree holding one (LoopBack's lb2/HasMany-relations.md of lb3's,
   both gone from lb4/): one hit for the page, its newest version first.
6. A page of the current tree whose file name (an index page's: its folder's) is named for a version older than
   the current one (version_in_name: `upgrades/upgrade_3_2.md`, `migrating-to-v2.md` in a 3.7 tree) is about an
   old release: it ranks as an old version's page does, unless the query names that version (query_versions). The
   current version is the current tree's number; beside an untagged current tree, every version up to the newest
   old tree's is older. A page on leaving the newest old version is current (_leaving: `migrating-from-v4.md`, or
   a page that version's tree leaves out of a folder it keeps).
7. Pages beside each other named for versions of one shape, each alike with the next newer one, are old copies of
   the highest release (_older_sibling_pages: OpenAPI's versions/3.0.4.md ... 3.2.0.md), as rule 6's pages are.
8. Outside the version trees, pages of one folder named alike around a release's number that speak of releases
   (_release_notes: Celery's whatsnew-5.5.rst beside whatsnew-5.6.rst, mongoose's migrating_to_8.md beside
   migrating_to_9.md), at least MIN_RELEASE_SERIES of them, are old but the newest, as rule 6's pages are.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import json
import re
import tomllib
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from scree.content.posts import INDEX_NAMES, dated_name
from scree.replies import first_few, plural

MIN_MIRRORED = 2  # pages at the same relative path before two folders can be versions of one tree
# pairs sharing at most this many pages are read page by page (_index_pages_alone): more can never stand for one
# page or folder, whose index and README pages are at most these
FEW_SHARED = len(INDEX_NAMES)
MIRROR_SHARE = 0.3  # ... and this share of the smaller folder's pages
WRAPPED_SHARE = 0.9  # a folder with this share of its pages in the one subfolder it shares is that subfolder's copy
UNTAGGED_SHARE = 0.5  # an untagged folder smaller than this share of a numbered one it mirrors is no version of it
NEWER_UNMIRRORED_SHARE = 0.5  # a newer version folder mirroring too little joins its older siblings at this size
MAX_FOLDERS_PER_NAME = 40  # a relative path held by more folders than this (a per-folder index page) says nothing
MAX_VERSIONS_PER_NAME = 400  # ... unless they are versions side by side (_versioned_siblings), up to this many
SAME_TREE_RESEMBLANCE = 0.3  # resemblance of 3 in 4 mirrored pages when no name or config says "versions"
# ... measured only where they mirror this many pages: two example projects made from one starter share three
# near-identical pages (Starlight's examples/basics and examples/tailwind), a version tree far more
MIN_MIRRORED_BY_TEXT = 4
# Numbered sibling folders sharing fewer pages than MIN_MIRRORED are versions where each shared page's text is at
# least this alike (hapi.dev's generated/markdown/hapi/20/api.md beside hapi/21/api.md: one page per major version)
ONE_PAGE_RESEMBLANCE = 0.5
MIN_VARIANTS = 3  # sibling folders mirroring each other, from which on their text says nothing of versions
SAMPLED_PAGES = 12  # mirrored pages measured per pair of folders
MAX_MEASURED_PAIRS = 64  # pairs whose text is measured (the most mirrored first): a bound on the first search's cost
STUB_SHINGLES = 24  # a page with fewer shingles than this beside one with STUB_RATIO x as many is a stub including it
STUB_RATIO = 4
# Rule 7: a page named for a version is an old copy of the next newer one at this resemblance. OpenAPI's releases
# measure 0.26 (2.0 to 3.0.0, exactly; MinHash 0.30) to 0.98 (3.0.0 to 3.0.1), 3.0.4 to 3.1.0 0.39 (MinHash 0.30),
# 1.2 to 2.0 0.08; release notes named for their versions share nearly nothing
SIBLING_RESEMBLANCE = 0.2
MAX_SIBLING_PAGES = 400  # pages named for versions whose text rule 7 reads (a bound on the first search's cost)
MIN_RELEASE_SERIES = 3  # pages of one folder and name, each named for a release, before rule 8 reads them as notes
RENAMED_RESEMBLANCE = 0.5  # an old page whose path is gone is a copy of the current page it resembles this much
SAME_SAYING = 0.5  # two chunks say the same thing (engine folding) at this resemblance
SAME_SECTION_SAYING = 0.2  # ... under the same heading (bench.versioned_site: a version missing a paragraph)
SHINGLE_WORDS = 3
MINHASH_SIZE = 64  # a page's fingerprint: the MINHASH_SIZE smallest shingle hashes (bottom-k MinHash)
GENERIC_NAMES = frozenset(
    {"index", "_index", "readme", "intro", "introduction", "overview", "changelog"}
    # a project's own files, which every package of a monorepo keeps, often word for word, and an agent skill's
    | {"contributing", "code_of_conduct", "code-of-conduct", "security", "license", "licence", "maintainers"}
    | {"governance", "support", "authors", "notice", "skill", "agents", "claude"}
)
OLD_WORDS = ("old", "legacy", "archive", "archived", "deprecated", "previous", "prev", "obsolete", "outdated")
# A tree whose folder name says one of these is ahead of the release (Linkerd's `2-edge/` beside its `docs/`)
_OLD_FORMS = frozenset((*OLD_WORDS, *(word + "s" for word in OLD_WORDS), "older"))  # archives/; not archiver/
NEXT_WORDS = ("next", "unreleased", "draft", "dev", "nightly", "main", "master", "edge", "canary", "preview", "beta")
# ... and, for a tree already in a family (never to make a folder a release channel: a `development/` guide is none),
# these too (beego's docs/en-US/developing/ beside v2.3.x/, strimzi's docs/operators/in-development/)
UNRELEASED_WORDS = (*NEXT_WORDS, "developing", "development")
CURRENT_WORDS = ("current", "latest", "stable")
SUPERSEDED_SHOWN = 3  # pages named for an older version that `scree doctor` lists by name
DESCRIBED_TREES = 8  # other trees of a family `scree doctor` lists one by one (the nearest the current first)
MARKDOWN_SUFFIXES = (".mdx", ".markdown", ".md", ".rst", ".adoc", ".asciidoc", ".txt")
# folder names of a numbered version: version-30.4, v3.7, 2.x, release-1.2, 10.x, 3; and with one word that names
# docs or a release channel before or after it (cert-manager's v1.20-docs, docs-v2, Linkerd's 2-edge), never any word:
# lesson-1/ and lesson-2/ of a tutorial are no versions of one another
DOCS_WORDS = ("docs", "doc", "documentation", "manual", "reference", "api", "site", "book")
# a version number, then a pre-release after it (`v1.11.0-alpha.0`, `2.0-rc1`): still that number's tree
PRERELEASE_STAGES = ("alpha", "beta", "pre", "rc")  # in the order a release goes through them
_PRERELEASE = rf"[-.](?:{'|'.join(PRERELEASE_STAGES)})(?:[.-]?[0-9]+)?"
_PRERELEASE_END = re.compile(rf"{_PRERELEASE}$", re.IGNORECASE)
# ... or glued to the number, as Python's releases write it (PEP 440: `8.0.0rc1`, `2.0b3`, `1.0.dev0`)
_PRERELEASE_MARKS = "alpha|beta|dev|pre|rc|a|b"  # the stages above and PEP 440's short ones, longest first
_GLUED_PRERELEASE = re.compile(rf"(?<=[0-9])\.?(?:{_PRERELEASE_MARKS})[0-9]*$", re.IGNORECASE)
_VERSION_CORE = rf"(?:version|release|ver|rel|v)?[-_]?v?([0-9]+(?:[._-][0-9]+)*)(?:[._-]?x)?(?:{_PRERELEASE})?"
_VERSION_WORD = "|".join((*DOCS_WORDS, *NEXT_WORDS, *OLD_WORDS, *CURRENT_WORDS))
_VERSION_NAME = re.compile(rf"(?:(?:{_VERSION_WORD})[-_])?{_VERSION_CORE}(?:[-_](?:{_VERSION_WORD}))?", re.IGNORECASE)
# ... and with any words before it where the number has parts (CircleCI's docs/server-admin-4.10/ beside
# server-admin-4.9/, a product's releases): lesson-1/ and chapter-2/ still name none
_WORDED_VERSION = re.compile(rf"(?:[a-z]+[-_]){{1,3}}v?([0-9]+(?:\.[0-9]+)+)(?:\.x)?(?:{_PRERELEASE})?", re.IGNORECASE)
# ... or, in a folder's name, a major number glued to a product's letters (LoopBack's pages/en/lb2/, lb3/, lb4/), read
# as worded ones are (a page's says nothing: md4.md, log2.md and springboot3.md name things, not releases);
# never after a word that counts the parts of a course or a set (step1/, part2/, lesson3/: each says more than the
# last), nor a number of three digits or more (es2015/ names a year)
ORDINAL_WORDS = (
    *("step", "part", "lesson", "chapter", "lab", "day", "week", "exercise", "example", "sample", "demo", "module"),
    *("unit", "section", "stage", "phase", "level", "round", "task", "test", "case", "page", "item", "question"),
)
_GLUED_VERSION = re.compile(rf"(?!(?:{'|'.join(ORDINAL_WORDS)})s?[0-9])[a-z]{{2,}}([0-9]{{1,2}})", re.IGNORECASE)
# ... or an edition's, as books name theirs (the Rust book's first-edition/, second-edition/ and 2018-edition/ beside
# its current src/): an ordinal in words or figures, or a year, before "edition"
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")
_EDITION = re.compile(rf"({'|'.join(ORDINALS)}|[0-9]+(?:st|nd|rd|th)?)[-_]edition", re.IGNORECASE)
_NUMBERS = re.compile(r"[0-9]+")
_LETTERS = re.compile(r"[a-z]{2,}")  # a page name's words, numbers and a version's `v` left out
_PADDED = re.compile(r"0[0-9]")  # a number written with a leading zero: `01`
_SECTION_OF = re.compile(r"[0-9][-_.]$")  # ... right after a numbered part: `ch14-` of `ch14-01-release-profiles`
# a page's name saying it moves from a version, nothing after it (`migrating-from-v4`, not `from-v2-to-v3`)
_MOVING_FROM = re.compile(r"(?:^|[-_. ])from[-_. ]v?[0-9]+(?:[._-][0-9]+)*(?:[._-]?x)?$", re.IGNORECASE)
_YEAR = re.compile(r"(?:19|20)[0-9]{2}")
_NAMED_VERSION = re.compile(r"(?:^|(?<=[-_. ]))(v)?([0-9]+(?:([._-])[0-9]+(?:\3[0-9]+)*)?)(?=$|[-_. ])", re.IGNORECASE)
_QUERY_DATE = re.compile(r"(?<![\w.-])((?:19|20)[0-9]{2}-[0-9]{2}-[0-9]{2})(?![\w-])")
_QUERY_VERSION = re.compile(r"(?<![\w.])v?([0-9]+(?:[._][0-9]+)*)(?![\w])", re.IGNORECASE)
# Rule 6, measured with bench.quality_versions (hybrid / keyword / semantic MRR@5): etcd 0.729/0.637/0.625 ->
# 0.767/0.685/0.667 (its v3.7 tree holds upgrade_3_0 ... upgrade_3_7; "request is too large" had found the 3.2 notes
# first), Jest unchanged (UpgradingToJest30 names the current major). Moved the old versions' VERSION_RANKS places in
# one pass with the old trees' pages; a second pass after them took 3 old-version top-5 slots of 100 against 2.
VERSION_NAME_WORDS = ("upgrad", "migrat", "downgrad", "releas", "version", "changelog", "whats-new", "what-s-new")
# ... and these where a word starts with them: Ansible's porting_guide_9.rst, never reporting-2.md or exporting_3.md
_VERSION_WORD_STARTS = re.compile(r"(?<![a-z])porting")
# A series of pages each named for a release (rule 8) says what each release did where its path speaks of releases
# (`version` alone does not: api-version-1.md ... 3.md are an API's versions, each current)
RELEASE_NOTE_WORDS = (*(word for word in VERSION_NAME_WORDS if word != "version"), "whatsnew", "announc")
RELEASE_NOTE_FOLDERS = ("changes",)  # ... or a folder of this name: Sphinx's doc/changes/8.1.rst (not exchanges/)
_WORDS = re.compile(r"[^\W_]+")

ROOT = ""  # the repository's root folder, as a tree's root
DOCUSAURUS_VERSION_PREFIX = "version-"  # versioned_docs/version-<name>/ holds the docs of version <name>
CURRENT = "current"
OLD = "old"
NEWER = "unreleased"


def _one_page(path: str) -> str:
    """`path` with its markdown extension written as `.md`: a page's .md and .mdx copies are one page."""
    for suffix in MARKDOWN_SUFFIXES[:3]:
        if path.endswith(suffix):
            return path[: -len(suffix)] + ".md"
    return path


def version_of_name(name: str) -> str | None:
    """The version a folder name carries (`30.4` of `version-30.4`, `3.7` of `v3.7`, `2` of `2.x`), else None."""
    match = _version_name(name)
    if match is None:
        return None
    number = match.group(1).lower()
    if match.re is _EDITION:  # "second" -> 2, "3rd" -> 3, "2018" as it is
        return str(ORDINALS.index(number) + 1) if number in ORDINALS else number.rstrip("stndrh")
    return number.replace("_", ".").replace("-", ".")


def _version_name(name: str) -> re.Match[str] | None:
    """A folder name read as a version's (_VERSION_NAME), but for a zero-padded number before a word, which orders
    the folder among its siblings (the AI SDK's cookbook/01-next/ beside 05-node/ and 20-rsc/: no Next release)."""
    match = (
        _VERSION_NAME.fullmatch(name)
        or _WORDED_VERSION.fullmatch(name)
        or _GLUED_VERSION.fullmatch(name)
        or _EDITION.fullmatch(name)
    )
    if match is None:
        return None
    word_after = name[match.end(1) :].strip("._-").lower() not in ("", "x")
    return None if match.start(1) == 0 and _PADDED.match(match.group(1)) and word_after else match


def name_shape(name: str) -> str | None:
    """A versioned folder name with its version left out (`v{}-docs` of `v1.20-docs`, `version-{}` of
    `version-30.4`): folders of one shape beside each other are one site's versions. None for a name with none."""
    match = _version_name(name)
    if match is None:
        return None
    return (name[: match.start(1)] + "{}" + name[match.end(1) :]).casefold()


def version_key(version: str | None) -> tuple[int, ...]:
    """Numeric sort key of a version label, highest last: `3.10` after `3.9`."""
    return tuple(int(number) for number in _NUMBERS.findall(version or ""))[:4]


def _says(words: Sequence[str], path: str) -> bool:
    return any(word in words for part in path.lower().split("/") for word in _WORDS.findall(part))


def says_old(path: str) -> bool:
    """Whether a folder's path says old (`old/`, `legacy/`, `versioned_docs_archived/`): names only confirm."""
    return any(part_word in _OLD_FORMS for part in path.lower().split("/") for part_word in re.split(r"[^a-z]+", part))


# --- text resemblance (MinHash of word shingles) ---


@functools.lru_cache(maxsize=4096)
def fingerprint(text: str) -> frozenset[int]:
    """A text's bottom-k MinHash: the MINHASH_SIZE smallest hashes of its SHINGLE_WORDS-word shingles (a short text:
    of its words). CRC-32, not Python's salted string hash: a pair of pages measured near a threshold (OpenAPI's 2.0
    and 3.0.0 specifications) gets the same verdict in every process."""
    words = _WORDS.findall(text.casefold())
    if len(words) < SHINGLE_WORDS:
        return frozenset(heapq.nsmallest(MINHASH_SIZE, {zlib.crc32(word.encode()) for word in words}))
    shingles = zip(*(words[i:] for i in range(SHINGLE_WORDS)), strict=False)
    return frozenset(heapq.nsmallest(MINHASH_SIZE, {zlib.crc32(" ".join(shingle).encode()) for shingle in shingles}))


def resemblance(a: frozenset[int], b: frozenset[int]) -> float:
    """Estimated Jaccard resemblance of two texts from their fingerprints (bottom-k of the union)."""
    if not a or not b:
        return 0.0
    union = sorted(a | b)[:MINHASH_SIZE]
    both = a & b
    return sum(1 for h in union if h in both) / len(union)


def text_resemblance(a: str, b: str) -> float:
    return 1.0 if a == b else resemblance(fingerprint(a), fingerprint(b))


def says_same(old: str, new: str, query_words: Iterable[str] = (), same_heading: bool = False) -> bool:
    """Whether chunk `new` says what chunk `old` says, for a query of `query_words` (casefolded): the same text, or
    a near-duplicate (SAME_SAYING; SAME_SECTION_SAYING under the same heading, a section edited between versions)
    that holds every query word `old` holds. A current chunk that lost the words the query matched (a removed
    option) does not stand for the old one (issue 32). Under the same heading, a new text stands for an old one that
    holds none of the query's words, whatever each says: what the query found there is the heading they share (Envoy
    Gateway's v1.1 "Circuit Breakers > Prerequisites > Install Envoy Gateway", a sentence its v1.9 page includes from
    a boilerplate file, came fourth for "How do I configure circuit breaking?" beside the current page, first)."""
    if old == new:
        return True
    old_words = {word.casefold() for word in _WORDS.findall(old)}
    asked = set(query_words)
    held = {word for word in asked if word in old_words}
    if same_heading and asked and not held:
        return True
    if text_resemblance(old, new) < (SAME_SECTION_SAYING if same_heading else SAME_SAYING):
        return False
    new_words = {word.casefold() for word in _WORDS.findall(new)}
    return held <= new_words


# --- the site's config (parsed from its text; read by scree.search.version_evidence) ---


@dataclass(frozen=True, slots=True)
class Hint:
    """What one config file says: `folder` is where it lives (its trees are at or below it), `current` the version
    it names as current ("" for the untagged tree, None when it names none), `versions` the versions it lists, `scope`
    the folder its key names (Crossplane's `cliLatest` for `content/cli/vX/` beside `latest` for `content/vX/`)."""

    source: str
    folder: str
    current: str | None
    versions: tuple[str, ...] = ()
    scope: tuple[str, ...] = ()  # the words of its key that name a family's folder (`cli` of `cliLatest`), if any
    from_list: bool = False  # the newest release of a list of versions, not a key naming the current one
    # the version the site's label gives its untagged tree, where the label carries one (Docusaurus's
    # `versions: {current: {label: '4.x'}}`: RocketMQ's docs/ is its old 4.x beside the current versioned 5.0)
    untagged: str | None = None
    prerelease: bool = False  # the tree at `folder` is a pre-release, never current by its number (Antora)
    # the untagged tree a Docusaurus versions.json's docs plugin reads, relative to `folder`: the preset's docs/, an
    # instance's `path` option (tigera's `id: 'calico', path: 'calico'`); None where unknown
    docs: str | None = None
    # a Hugo menu of versions whose links are the site's own pages (jx-docs' `[[params.versions]]`, `url = "/docs"`
    # labelled "v2.x (Unmaintained)", `url = "/v3/about"` "v3.x (Current)"): (the folder below the content folder
    # the link opens, the entry's label), in the menu's order
    menu: tuple[tuple[str, str], ...] = ()
    # the config and key that named `current` where the source only lists versions (a Docusaurus config's
    # `lastVersion` beside versions.json: tigera's 3.23-2, listed second after the unreleased 3.24-1)
    decided_by: str | None = None


DOCUSAURUS_CONFIGS = (
    "docusaurus.config.js",
    "docusaurus.config.ts",
    "docusaurus.config.mjs",
    "docusaurus.config.cjs",
    "docusaurus.config.mts",
)
HUGO_CONTENT = "content"  # Hugo's contentDir, below its config
HUGO_CONFIGS = ("hugo.toml", "hugo.yaml", "hugo.yml", "hugo.json", "config.toml", "config.yaml", "config.yml")
# Hugo's config directory below the site's folder: hugo.*/config.* as above, every other file the table of its own
# name (params.toml is `[params]`, module.yaml `module:`)
HUGO_CONFIG_DIR = "config/_default"
HUGO_CONFIG_SUFFIXES = (".toml", ".yaml", ".yml", ".json")
MAX_HUGO_CONFIG_FILES = 32  # files of a config directory read
SPHINX_CONFIGS = ("conf.py",)
VERSIONS_FILES = ("versions.json",)
# Mintlify: docs.json's `navigation.versions` ([{"version": "v2", "default": true, ...}], or nested in a tab or a
# language), mint.json's `versions` (["v2", "v1"] or [{"name": "v2", "default": true}]); the first is the default
# unless one says `default`
MINTLIFY_CONFIGS = ("docs.json", "mint.json")
# Antora: each component version's antora.yml (`version: "1.38"`, `prerelease: -dev`); the latest is the highest
# version that is no pre-release
ANTORA_CONFIGS = ("antora.yml",)
# Rspress: `multiVersion: { default: '5.x', versions: ['5.x', '6.x'] }` (react-native-paper: 6.x is an alpha)
RSPRESS_CONFIGS = tuple(f"rspress.config.{suffix}" for suffix in ("ts", "js", "mjs", "mts", "cjs"))
# Jekyll: `_config.yml`, and the `_config_<site>.yml` a site builds with (CockroachDB's `versions: {stable: v26.2}`
# beside its v26.3 in testing), read as a Hugo config's keys are
JEKYLL_CONFIG = "_config"
JEKYLL_SUFFIXES = (".yml", ".yaml", ".toml")
CONFIG_NAMES = frozenset(
    (
        *DOCUSAURUS_CONFIGS,
        *HUGO_CONFIGS,
        *SPHINX_CONFIGS,
        *VERSIONS_FILES,
        *MINTLIFY_CONFIGS,
        *ANTORA_CONFIGS,
        *RSPRESS_CONFIGS,
    )
)
_RSPRESS_VERSIONS = re.compile(r"multiVersion\s*:\s*\{([^{}]{0,4000})\}")  # bounded runs, as for Docusaurus's
_RSPRESS_DEFAULT = re.compile(r"""\bdefault\s*:\s*['"]([^'"\n]{1,100})['"]""")  # inside multiVersion's braces
_RSPRESS_LISTED = re.compile(r"\bversions\s*:\s*\[([^\]]*)\]")
# bounded runs: unbounded, a config of many unclosed `onlyIncludeVersions: [` took time growing with its square
_LAST_VERSION = re.compile(r"""lastVersion\s*:\s*['"]([^'"\n]{1,200})['"]""")
_ONLY_INCLUDE = re.compile(r"onlyIncludeVersions\s*:\s*\[([^\]]{0,4000})\]")
# the label of the docs plugin's `current` version (its untagged docs/ folder), in its `versions` option
_CURRENT_LABEL = re.compile(r"""\bcurrent\s*:\s*\{[^{}]{0,400}?\blabel\s*:\s*['"]([^'"\n]{1,100})['"]""")
_INSTANCE_ID = re.compile(r"""\bid\s*:\s*['"]([\w-]{1,100})['"]""")  # a docs plugin instance's id in its options
_DOCS_PATH = re.compile(r"""\bpath\s*:\s*['"]([\w./-]{1,200})['"]""")  # ... and the folder it reads (after its id)
INSTANCE_VERSIONS = "_versions.json"  # `<id>_versions.json`: the versions of docs plugin instance <id>
CURRENT_KEYS = frozenset(  # config keys naming the current version, wherever they sit, whatever their value's shape
    "latest_stable_version latest_version latestVersion current_version currentVersion stable_version "
    "latest_stable".split()
)
CURRENT_KEY_WORDS = frozenset(("latest", "current"))  # ... and any key with one of these words, given a version
# a key's words that are not its scope (Hint.scope: `cli` of `cliLatest`)
VERSION_KEY_WORDS = frozenset(("version", "versions", "ver", "stable", *CURRENT_KEY_WORDS))
PARSED_CONFIG_DEPTH = 8  # tables deep a parsed config's versions are looked for (Hugo's sit two or three deep)
# Docsy's `params.version`, "the version of the docs represented in this doc set" (Envoy Gateway's v1.9 beside its
# unreleased latest/): after any key naming the current version
DOCSET_VERSION = ("params", "version")
MAX_CONFIG_NODES = 20_000  # values of a parsed config looked at: YAML's aliases can make a small file a huge tree
VERSIONS_TABLE_CURRENT = frozenset(("current", "latest", "stable"))  # keys of a table of versions naming the current
_KEY_WORD = re.compile(r"[a-z]+[0-9]*|[A-Z][a-z]*[0-9]*|[0-9]+")  # `cliLatest`: cli, Latest; `latestV2`: latest, V2
_SPHINX_VERSION = re.compile(r"""^(?:version|release)\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_QUOTED = re.compile(r"""['"]([^'"]+)['"]""")
_BARE = re.compile(r"[^a-z0-9]")  # what a folder name is compared by to a config key's words: `http-add-on`, httpaddon
_LABEL_WORDS = re.compile(r"[^\s()\[\],;:]+")  # a label's words: `v2.x` and `Unmaintained` of `v2.x (Unmaintained)`


def parse_hints(path: str, text: str, siblings: Mapping[str, str] = {}) -> list[Hint]:
    """The Hints a config file at `path` gives (none, or one per version it names current, most explicit first).
    `siblings`: the texts of other config files in its folder (a Docusaurus versions.json is read with the
    docusaurus.config.* beside it)."""
    folder, _, name = path.rpartition("/")
    if is_versions_file(name):
        found = _versions_json_hint(path, folder, text, siblings)
        return [found] if found is not None else []
    if name in DOCUSAURUS_CONFIGS:
        read = {_instance_of(sibling) for sibling in siblings if is_versions_file(sibling)}  # read with those
        labels = _docusaurus_options(text, _CURRENT_LABEL)
        return [
            Hint(
                f"{path} ({instance or 'docs'})",
                folder,
                _last_version(last),
                scope=_instance_scope(instance),
                untagged=_labelled_version(labels.get(instance)),
            )
            for instance, last in _docusaurus_options(text, _LAST_VERSION).items()
            if instance not in read
        ]
    if name in HUGO_CONFIGS:
        return _hugo_hints(path, folder, name, text)
    if name in SPHINX_CONFIGS:
        found_version = _SPHINX_VERSION.search(text)
        return [Hint(path, folder, found_version.group(1))] if found_version is not None else []
    if name in MINTLIFY_CONFIGS:
        return _mintlify_hints(path, folder, text)
    if name in ANTORA_CONFIGS:
        return _antora_hints(path, folder, text)
    if is_jekyll_config(name):
        return _hugo_hints(path, folder, name, text)
    if name in RSPRESS_CONFIGS:
        return _rspress_hints(path, folder, text)
    return []


def _rspress_hints(path: str, folder: str, text: str) -> list[Hint]:
    """Rspress's `multiVersion` option: its `default` version is current, its `versions` listed."""
    found = _RSPRESS_VERSIONS.search(text)
    if found is None:
        return []
    options = found.group(1)
    default = _RSPRESS_DEFAULT.search(options)
    listed = _RSPRESS_LISTED.search(options)
    versions = tuple(_QUOTED.findall(listed.group(1))) if listed is not None else ()
    if default is None:
        return []
    return [Hint(path, folder, default.group(1), versions)]


def _antora_hints(path: str, folder: str, text: str) -> list[Hint]:
    """A pre-release's antora.yml (`prerelease: true` or a suffix such as `-dev`): its folder's tree is never
    current by its number (kubewarden/docs: version-1.38 is `1.38-dev`, 1.37 the latest). None for a release."""
    try:
        data = _parsed_config(path, text)
    except (ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    version, prerelease = data.get("version"), data.get("prerelease")
    if not _scalar(version) or prerelease in (None, "", "false", "False", "~", "null"):
        return []
    return [Hint(path, folder, None, (str(version),), prerelease=True)]


def _mintlify_version(item: object) -> tuple[str, bool]:
    """(its version, whether it says it is the default) of an entry of a Mintlify list of versions ("" for none)."""
    if _scalar(item):
        return str(item), False
    if isinstance(item, dict):
        version = item.get("version", item.get("name"))
        return (str(version) if _scalar(version) else ""), item.get("default") is True
    return "", False


def _mintlify_hints(path: str, folder: str, text: str) -> list[Hint]:
    """The default version of a Mintlify config's first list of versions (MINTLIFY_CONFIGS), with the versions it
    lists; none for a file of another shape."""
    try:
        data = _parsed_config(path, text)
    except (ValueError, RecursionError):
        return []
    for keys, value in _config_entries(data):
        if keys[-1] != "versions" or not isinstance(value, list):
            continue
        entries = [_mintlify_version(item) for item in value]
        named = [(version, default) for version, default in entries if version]
        if named:
            default = next((version for version, is_default in named if is_default), named[0][0])
            return [Hint(path, folder, default, tuple(version for version, _ in named))]
    return []


def parse_hugo_config_dir(path: str, folder: str, text: str) -> list[Hint]:
    """The Hints a file of the Hugo config directory (HUGO_CONFIG_DIR) of the site at `folder` gives: read as the
    table its name names (`params.yaml`: `params`), or as the whole config for hugo.* and config.*."""
    name = path.rpartition("/")[2]
    stem = name.rpartition(".")[0]
    return _hugo_hints(path, folder, name, text, () if name in HUGO_CONFIGS else (stem,))


def _hugo_hints(path: str, folder: str, name: str, text: str, table: tuple[str, ...] = ()) -> list[Hint]:
    """What a Hugo config (TOML, YAML or JSON, parsed; `table`: the table it is, in a config directory) says of its
    versions (_config_entries): each module mount serving a version's folder as the current channel, each key naming
    a current version, then each list of released versions, the newest of which is current; every hint carries the
    versions the file lists (`- version: v3.5`, `[[params.versions]]`, lists of versions)."""
    try:
        data = _parsed_config(name, text)
    except (ValueError, RecursionError):  # a config Hugo would refuse names nothing
        return []
    data = functools.reduce(lambda inner, key: {key: inner}, reversed(table), data)
    named: list[tuple[str, str, tuple[str, ...]]] = []  # (key path, version, scope)
    docset: list[tuple[str, str, tuple[str, ...]]] = []
    released: list[tuple[str, str, tuple[str, ...]]] = []
    listed: list[str] = []
    menus: list[Hint] = []
    mounted: list[tuple[str, str, tuple[str, ...]]] = []
    for keys, value in _config_entries(data):
        key = keys[-1]
        words = [word.lower() for word in _KEY_WORD.findall(key)]
        scope = tuple(word for word in words if word not in VERSION_KEY_WORDS)
        in_versions = len(keys) > 1 and "version" in keys[-2].lower()
        if isinstance(value, list) and key == "mounts" and "imports" not in keys:  # the site's own, not a module's
            mounted += _current_mounts(".".join(keys), value)
        if isinstance(value, list):
            entries = [str(item) for item in value if _scalar(item)]
            menu = [str(item["version"]) for item in value if isinstance(item, dict) and _scalar(item.get("version"))]
            listed += [entry for entry in (*entries, *menu) if _NUMBERS.search(entry)]
            if "version" in key.lower():
                menus += _menu_hint(f"{path} ({'.'.join(keys)})", folder, value)
            if (in_versions or "version" in key.lower()) and not any(
                _says((*NEXT_WORDS, *OLD_WORDS), part) for part in keys[-2:]
            ):  # a docsy menu of versions (`[[params.versions]]` tables) may list the draft first: listed only
                newest = _newest_release(entries)
                if newest is not None:
                    released.append((".".join(keys), newest, scope))
        elif _scalar(value) and _NUMBERS.search(str(value)):
            version = str(value)
            if (
                key in CURRENT_KEYS
                or (in_versions and key in VERSIONS_TABLE_CURRENT)
                or (CURRENT_KEY_WORDS & set(words) and _looks_like_version(version))
            ):
                named.append((".".join(keys), version, scope if not in_versions else ()))
            elif keys == DOCSET_VERSION and _looks_like_version(version):
                docset.append((".".join(keys), version, ()))
    versions = tuple(dict.fromkeys(listed))

    def said(found: list[tuple[str, str, tuple[str, ...]]], from_list: bool = False) -> list[Hint]:
        return [Hint(f"{path} ({keys})", folder, version, versions, scope, from_list) for keys, version, scope in found]

    menu_hints = [replace(hint, versions=versions) for hint in menus]
    return [
        *said(mounted),
        *said(_scoped_by_table(named)),
        *said(docset),
        *menu_hints,
        *said(_scoped_by_table(released), True),
    ]


def _current_mounts(keys: str, mounts: Sequence[object]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Hugo module mounts serving a folder named for a version at a path named for the current release (ArangoDB's
    `source: content/arangodb/3.12`, `target: content/arangodb/stable`): (what says so, the folder's name, the
    words of the folder holding it, which scope it to its family)."""
    found: list[tuple[str, str, tuple[str, ...]]] = []
    for mount in mounts:
        if not isinstance(mount, dict) or not all(isinstance(mount.get(end), str) for end in ("source", "target")):
            continue
        source = [part for part in mount["source"].split("/") if part not in ("", ".")]
        target = [part for part in mount["target"].split("/") if part not in ("", ".")]
        if source and target and ".." not in source and target[-1].lower() in CURRENT_WORDS:
            if version_of_name(source[-1]) is not None:
                scope = (_BARE.sub("", source[-2].lower()),) if len(source) > 1 else ()
                found.append((f"{keys}: {'/'.join(source)} as {'/'.join(target)}", source[-1], scope))
    return found


def _menu_hint(source: str, folder: str, entries: Sequence[object]) -> list[Hint]:
    """A Hugo menu of versions (a list of tables with `version` and `url`) that links two or more of the site's own
    folders (`url = "/docs"`, `url = "/v3/about"`: content/docs/, content/v3/; links to other sites are left out):
    their trees are one family (Hint.menu), and the entry whose label carries a version and says current (`v3.x
    (Current)`, `2.4 (latest)`) names its folder current. None where two entries open one folder."""
    menu: list[tuple[str, str]] = []
    for entry in entries:
        if not isinstance(entry, dict) or not _scalar(entry.get("version")) or not isinstance(entry.get("url"), str):
            continue
        url = entry["url"].split("#", 1)[0].split("?", 1)[0]
        parts = [part for part in url.split("/") if part]
        if url.startswith("/") and not url.startswith("//") and parts and parts[0] != "..":
            menu.append((parts[0], str(entry["version"])))
    if len({name for name, _ in menu}) != len(menu) or len(menu) < 2:
        return []
    current = [name for name, label in menu if _label_version(label) is not None and _says(CURRENT_WORDS, label)]
    return [Hint(source, folder, current[0] if len(current) == 1 else None, menu=tuple(menu))]


def _label_version(label: str) -> str | None:
    """The version a label carries in one of its words (`2` of `v2.x (Unmaintained)`), else None."""
    return next(filter(None, map(version_of_name, _LABEL_WORDS.findall(label))), None)


def _scoped_by_table(found: list[tuple[str, str, tuple[str, ...]]]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Config entries whose key names no folder, scoped by the table they sit in where several tables hold that key:
    Carvel's `params.ytt.version_latest`, `params.kapp.version_latest`... each speak for their product's folder."""
    last = Counter(keys.rpartition(".")[2] for keys, _, scope in found if not scope)
    out = []
    for keys, version, scope in found:
        table = keys.rpartition(".")[0].rpartition(".")[2]
        if not scope and last[keys.rpartition(".")[2]] > 1 and table:
            words = [word.lower() for word in _KEY_WORD.findall(table)]
            scope = tuple(word for word in words if word not in VERSION_KEY_WORDS)
        out.append((keys, version, scope))
    return out


def _parsed_config(name: str, text: str) -> object:
    """A config file's data by its format; ValueError for one that is not."""
    if name.endswith(".toml"):
        return tomllib.loads(text)
    if name.endswith(".json"):
        return json.loads(text)
    import yaml  # only for a site with a YAML config

    try:  # BaseLoader: every value a string as written (`1.10` stays 1.10, not the float 1.1)
        return yaml.load(text, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _scalar(value: object) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _looks_like_version(value: str) -> bool:
    """`v1.18`, `2.3`, `21.0`: a version by its shape, not a count (`latestPosts: 5`) or a date."""
    version = version_of_name(value.strip())
    return version is not None and ("." in version or value.strip()[:1] in "vV") and not _YEAR.fullmatch(version)


def _newest_release(entries: Sequence[str]) -> str | None:
    """The highest version of a list that does not say it is ahead of the release (`1.13.0-dev`, `main`, `next`)."""
    released = [entry for entry in entries if _NUMBERS.search(entry) and not _says(NEXT_WORDS, entry)]
    return max(released, key=version_key, default=None)


def _config_entries(data: object) -> Iterator[tuple[tuple[str, ...], object]]:
    """(key path, value) of every table entry of a parsed config, depth first in the file's order, at most
    PARSED_CONFIG_DEPTH tables deep and MAX_CONFIG_NODES entries in all."""
    budget = [MAX_CONFIG_NODES]

    def walk(node: object, keys: tuple[str, ...], depth: int) -> Iterator[tuple[tuple[str, ...], object]]:
        if depth > PARSED_CONFIG_DEPTH:
            return
        if isinstance(node, dict):
            items: Iterable[tuple[tuple[str, ...], object]] = (
                ((*keys, str(key)), value) for key, value in node.items()
            )
        elif isinstance(node, list):  # a list's tables sit under the list's key (`[[params.versions]]`)
            items = ((keys, item) for item in node)
        else:
            return
        for inner, value in items:
            budget[0] -= 1
            if budget[0] < 0:
                return
            if inner is not keys:
                yield inner, value
            yield from walk(value, inner, depth + 1)

    yield from walk(data, (), 0)


def is_jekyll_config(name: str) -> bool:
    """Jekyll's `_config.yml` or a `_config_<name>.yml` (YAML or TOML)."""
    stem, _, suffix = name.rpartition(".")
    return f".{suffix}" in JEKYLL_SUFFIXES and (stem == JEKYLL_CONFIG or stem.startswith(f"{JEKYLL_CONFIG}_"))


def is_versions_file(name: str) -> bool:
    """Docusaurus's versions.json, or a docs plugin instance's `<id>_versions.json` (vcluster_versions.json)."""
    return name in VERSIONS_FILES or (name.endswith(INSTANCE_VERSIONS) and len(name) > len(INSTANCE_VERSIONS))


def _instance_of(name: str) -> str:
    """The docs plugin instance a versions file is of: "" for versions.json (the preset's docs), else its id."""
    return "" if name in VERSIONS_FILES else name[: -len(INSTANCE_VERSIONS)]


def _instance_scope(instance: str) -> tuple[str, ...]:
    """A hint of plugin instance `instance` speaks for the family in its `<id>_versioned_docs/` (Hint.scope)."""
    return (_BARE.sub("", f"{instance}versioneddocs".lower()),) if instance else ()


def _last_version(found: re.Match[str]) -> str:
    return "" if found.group(1) == CURRENT else found.group(1)


def _docusaurus_options(text: str, pattern: re.Pattern[str]) -> dict[str, re.Match[str]]:
    """Each docs plugin instance's first match of `pattern` in a docusaurus.config.*, by the instance's id ("" for the
    preset's docs): the `id:` last written between the previous match and this one names its instance (vcluster's
    config sets lastVersion "current" for its docs, "0.36.0" for `id: "vcluster"`, "4.11.0" for `id: "platform"`)."""
    options: dict[str, re.Match[str]] = {}
    start = 0
    for found in pattern.finditer(text):
        options.setdefault(_object_id(text, start, found.start()), found)
        start = found.end()
    return options


def _object_id(text: str, start: int, end: int) -> str:
    """The `id:` written in the object literal that holds position `end`, before it and after `start`, else "":
    braces counted back from `end`, so an id of another object (great_expectations' `gtag: {id: 'GTM-…'}`,
    an announcement bar's id, commented out, before the preset's `docs: {lastVersion: 'current'}`) is none."""
    ids = list(_INSTANCE_ID.finditer(text, start, end))
    depth = 0
    for position in range(end - 1, start - 1, -1):
        if not ids:
            return ""
        if position == ids[-1].start():
            if depth == 0:
                return ids[-1].group(1)
            ids.pop()
        char = text[position]
        if char == "}":
            depth += 1
        elif char == "{":
            depth -= 1
            if depth < 0:
                return ""
    return ""


def _labelled_version(label: re.Match[str] | None) -> str | None:
    """The version a Docusaurus `current` label carries (`4.x`, `v2`, `Version 3.1`), else None (`Next`, `Canary`)."""
    if label is None:
        return None
    words = label.group(1).strip().split()
    return version_of_name(words[-1]) if words else None


def _versions_json_hint(path: str, folder: str, text: str, siblings: Mapping[str, str]) -> Hint | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser: it names nothing
        return None
    if not isinstance(data, list) or not data:
        return None
    instance = _instance_of(path.rpartition("/")[2])
    if all(isinstance(item, str) for item in data):  # Docusaurus: newest first; the first is current by default
        listed = tuple(str(item) for item in data)
        current: str | None = listed[0]
        untagged: str | None = None
        docs: str | None = None if instance else "docs"
        decided_by: str | None = None
        for sibling, sibling_text in siblings.items():
            if sibling in DOCUSAURUS_CONFIGS:
                if instance:  # the first `path` after the instance's id is its own: its versions' paths come later
                    found = _docusaurus_options(sibling_text, _DOCS_PATH).get(instance)
                    docs = _docs_folder(found.group(1)) if found is not None else None
                last = _docusaurus_options(sibling_text, _LAST_VERSION).get(instance)
                if last is not None:
                    current = _last_version(last)
                    decided_by = f"{folder}/{sibling} (lastVersion)" if folder else f"{sibling} (lastVersion)"
                untagged = _labelled_version(_docusaurus_options(sibling_text, _CURRENT_LABEL).get(instance))
                only = _docusaurus_options(sibling_text, _ONLY_INCLUDE).get(instance)
                if only is not None:
                    included = [v for v in _QUOTED.findall(only.group(1))]
                    listed = tuple(v for v in listed if v in included) or listed
        return Hint(
            path,
            folder,
            current,
            listed,
            _instance_scope(instance),
            untagged=untagged,
            docs=docs,
            decided_by=decided_by,
        )
    if instance:
        return None
    if all(isinstance(item, dict) for item in data):  # mike: [{"version", "title", "aliases"}]
        listed = tuple(str(item.get("version", "")) for item in data if item.get("version"))
        latest = next(
            (str(item["version"]) for item in data if item.get("version") and _says_latest(item)),
            listed[0] if listed else None,
        )
        return Hint(path, folder, latest, listed)
    return None


def _from_versions_file(hint: Hint) -> bool:
    """Whether a hint is a versions.json's (its source is the file's path): the trees it lists are versioned_docs'."""
    return is_versions_file(hint.source.rpartition("/")[2])


def _docs_folder(path: str) -> str | None:
    """A docs plugin's `path` option as a folder below its config (`./calico`: calico), None when it leaves it."""
    parts = [part for part in path.split("/") if part not in ("", ".")]
    return "/".join(parts) if parts and ".." not in parts else None


def _says_latest(entry: Mapping[str, object]) -> bool:
    """Whether an entry of a list of versions is aliased `latest`: mike's `"aliases": ["latest"]`, or any other
    key's value (kgateway.dev's `{"version": "2.4.x", "linkVersion": "latest", "url": "latest"}`)."""
    for key, value in entry.items():
        if key != "version" and (value == "latest" or (isinstance(value, list) and "latest" in value)):
            return True
    return False


# --- the decision ---


@dataclass(frozen=True, slots=True)
class Tree:
    """One version tree: its folder, the version its name carries (None: untagged), its status (CURRENT, OLD or
    NEWER) and why it was taken so (for `scree doctor`); for an untagged tree, the version the site's config labels
    it with (Docusaurus's `versions.current.label`: RocketMQ's docs/ is `4.x`), which a query may name."""

    root: str
    version: str | None
    status: str
    why: str
    labelled: str | None = None

    @property
    def named_as(self) -> str | None:
        """The version a query names the tree by: its name's, else its config label's (RocketMQ's docs/, labelled
        4.x: "RocketMQ 4.x message filtering"; PixiJS's current docs/, labelled v8.x)."""
        return self.version or self.labelled

    def holds(self, path: str) -> bool:
        """Whether `path` is a page of this tree (not of a translation of it)."""
        return _in_tree(path, self.root)

    @property
    def label(self) -> str:
        """How a hit names the version: its folder's own name (`v3.4`, `version-29.7`, `docs`)."""
        return _leaf(self.root) or "."


@dataclass(frozen=True, slots=True)
class VersionCopy:
    """A page of a version tree: `page` is the current page it is a copy of (for none: the page at its path in the
    newest tree holding one, often its own; written as .md), the tree it is in, and the path of its current
    counterpart (None: none)."""

    page: str
    tree: Tree
    counterpart: str | None


@dataclass(frozen=True)
class VersionTrees:
    """The version families found (each a tuple of trees, the current one first), each page's copy, and the current
    trees' pages whose names carry a version older than the current one (`superseded`: path -> that version)."""

    families: tuple[tuple[Tree, ...], ...] = ()
    copies: Mapping[str, VersionCopy] = field(default_factory=dict)
    hints: tuple[Hint, ...] = ()
    superseded: Mapping[str, str] = field(default_factory=dict)

    def copy(self, path: str) -> VersionCopy | None:
        return self.copies.get(path)

    def status(self, path: str) -> str | None:
        found = self.copies.get(path)
        return found.tree.status if found is not None else None

    def named_by(self, path: str, named: Collection[str]) -> bool:
        """Whether `path` is in a tree other than the current one whose version the query names (`named`:
        query_versions) while it names not the current one's: "the HTTP+SSE transport in the 2024-11-05 spec" asks
        for that release's page, "roll back from 3.7 to 3.6" (3.7 current) for the current one."""
        found = self.copies.get(path)
        return found is not None and self.tree_named(found.tree, named)

    def tree_named(self, tree: Tree, named: Collection[str]) -> bool:
        """named_by for a tree: one other than its family's current one, whose version the query names and not the
        current one's, nor a tree of its family more precisely: Linkerd's `2-edge/` (the next 2.x) beside `2.18/`,
        for "What changed in Linkerd 2.18?", is not asked for."""
        version = tree.named_as
        if not named or tree.status == CURRENT or version is None:
            return False
        family = next((family for family in self.families if tree in family), (tree,))
        said_version = family[0].named_as
        said = said_version is not None and names_version(named, said_version)
        if said or not names_version(named, version):
            return False
        precision = len(version_key(version))
        return not any(
            other.named_as is not None
            and len(version_key(other.named_as)) > precision
            and names_version(named, other.named_as)
            for other in family
        )

    def describe(self) -> list[str]:
        """One line per family, for `scree doctor`: the current tree and why, then the others."""
        count = Counter(copy.tree.root for copy in self.copies.values())
        lines = []
        for family in self.families:
            current = family[0]
            listed, rest = family[1 : DESCRIBED_TREES + 1], family[DESCRIBED_TREES + 1 :]
            others = ", ".join(
                f"{_shown(tree.root)} ({tree.status}, {plural(count[tree.root], 'page')})" for tree in listed
            )
            if rest:  # Antrea's 85 versions made one line of 3,400 characters
                held = plural(sum(count[tree.root] for tree in rest), "page")
                others += f", and {len(rest)} more down to {_shown(rest[-1].root)} ({held} in all)"
            pages = plural(count[current.root], "page")
            lines.append(f"current {_shown(current.root)} ({pages}; {current.why}); other versions: {others}")
        if self.superseded:
            named = sorted(self.superseded.items(), key=lambda item: (version_key(item[1]), item[0]))
            shown = first_few([f"{path} ({version})" for path, version in named], SUPERSEDED_SHOWN)
            lines.append(f"pages named for an older version, ranked as old ones: {shown}")
        return lines


def _parts(path: str) -> list[str]:
    return path.split("/")


def _own_generic_page(rest: str) -> bool:
    """A folder's own README or index page (`rest`: its path in the folder), which every folder may hold: it says
    nothing of two folders being versions of one tree."""
    return "/" not in rest and _page_name(rest) in GENERIC_NAMES


def _leaf(path: str) -> str:
    """A path's last part: `version-30.4` of `website/versioned_docs/version-30.4`."""
    return path.rsplit("/", 1)[-1]


def _page_name(rest: str) -> str:
    """A page's file name without its extension, lowercased: `readme` of `express/README.md`."""
    return rest.rpartition("/")[2].rsplit(".", 1)[0].lower()


def mirrored_pairs(paths: Sequence[str], excluded: Callable[[str], bool]) -> dict[tuple[str, str], int]:
    """Pairs of folders (a < b) holding pages at the same relative path, with how many; folders `excluded` (language
    trees) skipped; pairs whose last folder names are equal are the same pair one level down. The repository's root
    ("") pairs only with a top folder named for a version or saying old (_beside_the_root). A language folder pairs
    with such a folder inside it where its own parent holds none of that name (meowrch's Starlight docs keep en/2.0/
    and ru/2.0/ with no untagged docs: each language is the root of its versions; firecrawl's es/v1/ translates the
    root's v1/, as languages.LanguageTrees reads it)."""
    holders = _holders(paths)
    shared: Counter[tuple[str, str]] = Counter()
    skip: dict[str, bool] = {}
    holding = {folder for folders in holders.values() for folder in folders}

    languages: dict[str, tuple[str, ...]] = {}

    def language(folder: str) -> tuple[str, ...]:
        """The language folders above `folder` (`content/zh/docs/v1.0`: `content/zh`): other languages' trees are
        translations, never versions."""
        if folder not in languages:
            parts = folder.split("/")
            prefixes = ("/".join(parts[:cut]) for cut in range(1, len(parts)))
            languages[folder] = tuple(prefix for prefix in prefixes if skip.setdefault(prefix, excluded(prefix)))
        return languages[folder]

    for folders in holders.values():
        if len(folders) > MAX_FOLDERS_PER_NAME:
            folders = _versioned_siblings(folders)
        if len(folders) < 2:
            continue
        ordered = sorted(f for f in folders if not skip.setdefault(f, excluded(f)))
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if a == ROOT and not _beside_the_root(b):
                    continue
                if _leaf(a) != _leaf(b) and language(a) == language(b):
                    shared[(a, b)] += 1
        shared.update(_inside_a_language(ordered, {f for f in folders if skip[f]}, holding))
    return dict(shared)


def _inside_a_language(
    folders: Iterable[str], languages: Collection[str], holding: Collection[str]
) -> Iterator[tuple[str, str]]:
    """Pairs of a language folder and a folder of `folders` inside it named for a version or saying old, where the
    language's parent holds no folder of that name (`holding`: every folder holding a page)."""
    for folder in folders:
        language, _, name = folder.rpartition("/")
        if language in languages and _beside_the_root(name) and _join(language.rpartition("/")[0], name) not in holding:
            yield language, folder


def _holders(paths: Sequence[str]) -> dict[str, set[str]]:
    """The folders holding each relative path (a folder's own README or index page left out); the root among them
    only beside a top folder that may be its old version."""
    holders: dict[str, set[str]] = defaultdict(set)
    tops = {path.partition("/")[0] for path in paths if "/" in path}
    first = 0 if any(map(_beside_the_root, tops)) else 1
    for path in paths:
        parts = _parts(_one_page(path))
        for cut in range(first, len(parts)):
            rest = "/".join(parts[cut:])
            if not _own_generic_page(rest):
                holders[rest].add("/".join(parts[:cut]))
    return holders


def _beside_the_root(folder: str) -> bool:
    """A top folder that may be an old version of the pages at the repository's root (Firecrawl's docs, a Mintlify
    site at the root with its v1/ and v0/ beside): named for a version or saying old, never any folder."""
    return "/" not in folder and _named_for_a_version(folder)


def _named_for_a_version(folder: str) -> bool:
    """Whether a folder's name carries a version number or its path says old."""
    return version_of_name(folder.rpartition("/")[2]) is not None or says_old(folder)


def _versioned_siblings(folders: Collection[str]) -> set[str]:
    """Of more than MAX_FOLDERS_PER_NAME folders holding one relative path, those beside a folder named for a version
    (Antrea's content/docs/main/ and its 84 content/docs/vX.Y.Z/ hold the same pages), at most
    MAX_VERSIONS_PER_NAME; none when there are more, or no version names (a page every component folder has)."""
    parents = {folder.rpartition("/")[0] for folder in folders if _named_for_a_version(folder)}
    kept = {folder for folder in folders if folder.rpartition("/")[0] in parents}
    return kept if len(kept) <= MAX_VERSIONS_PER_NAME else set()


def _shown(root: str) -> str:
    """A tree's folder as `scree doctor` names it: `docs/`, `./` for the repository's root."""
    return f"{root}/" if root != ROOT else "./"


def _under(path: str, folder: str) -> bool:
    return path.startswith(folder + "/")


def _in_tree(page: str, root: str) -> bool:
    """Whether `page` is in the tree at `root` (every page is in the repository's root)."""
    return root == ROOT or _under(page, root)


def _rest(page: str, root: str) -> str:
    """`page`'s path in the tree at `root`."""
    return page[len(root) + 1 :] if root != ROOT else page


def _join(root: str, rest: str) -> str:
    return f"{root}/{rest}" if root != ROOT else rest


def _inside_any(path: str, roots: Collection[str], but: str | None = None) -> bool:
    """Whether `path` is strictly inside one of `roots` other than `but` (a set: one look-up per folder above it)."""
    parts = path.split("/")
    return any(folder in roots and folder != but for folder in ("/".join(parts[:cut]) for cut in range(1, len(parts))))


def find_trees(
    paths: Iterable[str],
    hints: Sequence[Hint] = (),
    page_fingerprint: Callable[[str], frozenset[int] | None] | None = None,
    override: str | None = None,
    excluded: Callable[[str], bool] = lambda folder: False,
) -> VersionTrees:
    """The version trees of a folder of `paths` (the module's rules, in order). `page_fingerprint` gives a page's
    fingerprint (None: unknown), for rules 2 and 5; `override` names the current tree (its folder or its version);
    `excluded` folders (language trees) are never version trees."""
    paths = sorted(set(paths))
    pages = {_one_page(path): path for path in paths}
    size: Counter[str] = Counter({ROOT: len(pages)})
    for page in pages:
        parts = _parts(page)
        for cut in range(1, len(parts)):
            size["/".join(parts[:cut])] += 1
    hinted = {_norm(v) for hint in hints for v in (*hint.versions, hint.current or "") if v}

    known: dict[str, frozenset[int] | None] = {}

    def fp(page: str) -> frozenset[int] | None:
        if page not in known:
            known[page] = page_fingerprint(pages[page]) if page_fingerprint is not None and page in pages else None
        return known[page]

    shared = mirrored_pairs(paths, excluded)
    ordered = sorted(pages)
    pairs = {
        pair: count
        for pair, count in shared.items()
        if count >= MIRROR_SHARE * min(size[pair[0]], size[pair[1]])
        and (count >= MIN_MIRRORED or _one_page_versions(*pair, ordered, fp))
        and not (MIN_MIRRORED <= count <= FEW_SHARED and _index_pages_alone(*pair, ordered))
        and not _copies_one_subfolder(*pair, ordered)
    }
    declared = _declared_families(hints, size, ordered) + _menu_families(hints, size, excluded)
    superseded = {pages[page]: version for page, version in _older_sibling_pages(ordered, fp).items()}
    notes = {pages[page]: version for page, version in _release_notes(ordered).items()}
    accepted = _versions_among(
        pairs,
        hinted,
        lambda a, b: _resembling(a, b, ordered, fp),
        size,
        declared,
        lambda source, stubs: _included(source, stubs, ordered, fp),
    )
    if not accepted:
        return VersionTrees(hints=tuple(hints), superseded={**notes, **superseded})
    trees = {folder for pair in accepted for folder in pair}
    families = [_without_parts(family) for family in _families([*accepted, *_sibling_pairs(trees, size)])]
    decided = tuple(_decide(family, hints, override) for family in families if len(family) > 1)
    roots = {tree.root for family in decided for tree in family} - {ROOT}
    outside: dict[str, bool] = {}  # folder -> a tree of its own or a language's, each asked once

    def elsewhere(page: str) -> bool:  # not in the root's tree: in another tree or a language's folder
        parts = page.split("/")
        for folder in ("/".join(parts[:cut]) for cut in range(1, len(parts))):
            if folder not in outside:
                outside[folder] = folder in roots or excluded(folder)
            if outside[folder]:
                return True
        return False

    copies: dict[str, VersionCopy] = {}
    for family in decided:
        found = _copies(family, pages, fp, elsewhere, ordered)
        copies.update(found)
        superseded.update(_superseded(family, found))
    # rule 8 speaks only outside the version trees: inside them rule 6 knows the current version
    superseded |= {path: version for path, version in notes.items() if path not in copies and path not in superseded}
    return VersionTrees(decided, copies, tuple(hints), superseded)


def _declared_families(hints: Sequence[Hint], size: Mapping[str, int], ordered: Sequence[str]) -> list[list[str]]:
    """Rule 1's first case: the trees each Docusaurus versions.json declares, a family before any mirroring is
    counted: `versioned_docs/version-<each entry>/` beside it (`<id>_versioned_docs/` for a plugin instance's
    `<id>_versions.json`), and the untagged tree its docs plugin reads (Hint.docs) where it shares MIN_MIRRORED pages
    with one of them, at any share (react-native-gesture-handler's docs/ of 3.x shares 16 of version-2.x's 63 pages:
    restructured, not another project; counted here, as a path held by scores of gofiber's template versions is
    not in mirrored_pairs). Their subfolders then never pair (docs/legacy-gestures/ beside
    version-2.x/gestures/), nor do two families declared apart (tigera's calico-cloud/ shares 245 of its 308 pages
    with calico-enterprise_versioned_docs/version-3.23-2/, another product)."""
    declared: list[list[str]] = []
    for hint in filter(_from_versions_file, hints):
        instance = _instance_of(hint.source.rpartition("/")[2])
        held = _join(hint.folder, f"{instance}_versioned_docs" if instance else "versioned_docs")
        trees = [
            tree
            for tree in (_join(held, DOCUSAURUS_VERSION_PREFIX + version) for version in hint.versions)
            if size.get(tree, 0) >= MIN_MIRRORED
        ]
        docs = _join(hint.folder, hint.docs) if hint.docs is not None else None
        if docs is not None and any(_mirrors_at_least(docs, tree, ordered, MIN_MIRRORED) for tree in trees):
            trees.insert(0, docs)
        if len(trees) >= 2:
            declared.append(trees)
    return declared


def _menu_families(hints: Sequence[Hint], size: Mapping[str, int], language: Callable[[str], bool]) -> list[list[str]]:
    """Rule 1's first case for a Hugo menu of versions (Hint.menu): the folders its links open below the config's
    content folder (or a `language` folder in it: content/en/v3/), one family per content folder where two or more
    hold pages, mirrored or not (jx-docs' content/en/docs/ of v2 and content/en/v3/ share no path)."""
    declared: list[list[str]] = []
    for hint in hints:
        if not hint.menu:
            continue
        content = _join(hint.folder, HUGO_CONTENT)
        parents = [content, *(folder for folder in size if _parent(folder) == content and language(folder))]
        for parent in parents:
            trees = [_join(parent, name) for name, _ in hint.menu if size.get(_join(parent, name), 0) >= MIN_MIRRORED]
            if len(trees) >= 2:
                declared.append(trees)
    return declared


def _menu_version(root: str, hints: Sequence[Hint]) -> str | None:
    """The version a Hugo menu's label gives the folder its link opens (`2` for jx-docs' content/en/docs/, labelled
    `v2.x (Unmaintained)`), else None."""
    parent, _, name = root.rpartition("/")
    for hint in hints:
        content = _join(hint.folder, HUGO_CONTENT)
        if hint.menu and (parent == content or _parent(parent) == content):
            found = next((_label_version(label) for folder, label in hint.menu if folder == name), None)
            if found is not None:
                return found
    return None


def _versions_among(
    pairs: Mapping[tuple[str, str], int],
    hinted: set[str],
    resembling: Callable[[str, str], bool],
    size: Mapping[str, int],
    declared: Sequence[Sequence[str]] = (),
    included: Callable[[str, str], bool] = lambda source, stubs: False,
) -> list[tuple[str, str]]:
    """Rules 1 and 2 over the mirroring `pairs` (with how many pages each shares), the most mirrored first, after the
    `declared` families' own: the pairs that are versions of one tree, by name, config or (for at most
    MAX_MEASURED_PAIRS) text; never a folder without a version in its name whose pages the other's include
    (`included`), or that holds under UNTAGGED_SHARE of the pages of the numbered one (`size`, pages per folder)."""
    accepted = [(family[0], tree) for family in declared for tree in family[1:]]
    roots = {tree for family in declared for tree in family}
    declared_trees = frozenset(roots)
    measured = 0
    unnamed = [pair for pair in pairs if not _named_versions(*pair, hinted) and not any(map(_channel, pair))]
    variants = _variant_parents(unnamed)
    newest = _newest_of_shape({folder for pair in pairs for folder in pair})
    with_the_newest = {  # (untagged folder, shape) where it mirrors the newest version of that shape
        (x, _shape_of(y)) for pair in pairs for x, y in (pair, pair[::-1]) if _is_newest(y, newest)
    }
    for a, b in sorted(pairs, key=lambda pair: (-pairs[pair], pair)):
        if a in declared_trees and b in declared_trees:
            continue  # declared together, or apart
        if _inside_any(a, roots, but=b) or _inside_any(b, roots, but=a):
            continue  # inside a tree already found: the same pair one level down (a version inside the other's
            # tree is not: Redis's content/operate/rs/7.22/ inside its current rs/, beside rs/8.0/)
        if any(
            _untagged_beside_an_old_one(x, y, newest) and (x, _shape_of(y)) not in with_the_newest
            for x, y in ((a, b), (b, a))
        ):
            continue
        if _branch_point(a, b) in variants and a != _branch_point(a, b):
            continue  # in (or below) two of several variants side by side, never versions of each other
        named = _named_versions(a, b, hinted)
        worded = _worded_only(a, b, hinted)
        if worded and not (_named_for_a_version(a) and _named_for_a_version(b)):
            continue  # an untagged folder beside one numbered after words: a newer edition as often as an old one
        if not named or worded:
            if not named and not (_channel(a) or _channel(b)):
                continue  # named for nothing: variants or copies, and nothing would tell which is current
            measured += 1
            if measured > MAX_MEASURED_PAIRS or not resembling(a, b):
                continue
        elif any(not _named_for_a_version(x) and included(x, y) for x, y in ((a, b), (b, a))):
            continue  # the text each version's stub pages include (kgateway's assets/kgw-docs/pages/): no version
        elif _smaller_untagged(a, b, hinted, size):
            continue  # another part of the site sharing some of a version's page names
        accepted.append((a, b))
        roots.update((a, b))
    return accepted


def version_in_name(path: str, strict: bool = False) -> str | None:
    """The version a page's file name is named for (`3.6` of `upgrade_3_6.md`, `4` of `migrating-to-v4.md`, `2.2.0`
    of `etcd-2-2-0-benchmarks.md`; the highest of several: `3` of `upgrading-from-v2-to-v3.md`, a page about moving
    to 3), else None: a number standing apart in the name (between separators) that has parts (`3_6`; `strict`:
    a release's, _parted_number: `5-0.md`, `v1.30.X.md`, `2-2-0`, not `oauth-2-0`), a name that speaks of
    versions (upgrade, migration, release...) around it, or a `v` before it that is the whole name (`v2.md`). A
    number glued to letters (`http2`, `ipv6`, `Jest30`), alone in a plain name (`01-intro`,
    `etcd-3-watch`), the number ordering a page (`06-upgrades`, _order_prefix) or an API's version (`api-v2.md`:
    TiKV's API V2 page is current) is not taken for one. An index page (`index.md`, `_index.md`, `README.md`) is
    named by its folder: Redis's `release-notes/rs-7-8-releases/_index.md` is about 7.8."""
    found = versions_in_name(path, strict)
    return max(found, key=version_key) if found else None


def versions_in_name(path: str, strict: bool = False) -> list[str]:
    """Every version a page's file name is named for, as version_in_name reads them (`1.19` and `1.20` of
    cert-manager's `upgrading-1.19-1.20.md`), in order; [] for none."""
    stem = _named_stem(path)
    lowered = stem.lower()
    speaks = any(word in lowered for word in VERSION_NAME_WORDS) or _VERSION_WORD_STARTS.search(lowered) is not None
    return [
        ".".join(_NUMBERS.findall(match.group(2)))
        for match in _NAMED_VERSION.finditer(stem)
        if (_parted_number(match, stem, strict) or speaks or (match.group(1) and match.group(0) == stem))
        and not _order_prefix(match, stem)
    ]


def _parted_number(match: re.Match[str], stem: str, strict: bool) -> bool:
    """Whether a number standing apart in a page's name has parts (`3_6`), and, `strict`, is a release's on its
    own: the whole name (`5-0.md`), after a `v` (`v1.30.X.md`), or a release's three parts
    (`etcd-2-2-0-benchmarks`, `data_driven_testing_4.2.0`). Two parts after a word are as often a protocol's or a
    standard's version (`oauth-2-0.md`, `http-1-1.md`) as a release's."""
    if match.group(3) is None:
        return False
    if not strict:
        return True
    return match.group(0) == stem or match.group(1) is not None or len(_NUMBERS.findall(match.group(2))) >= 3


def _named_stem(path: str) -> str:
    """The name a page is named by: its file name without the extension, an index page's folder's."""
    folder, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return folder.rpartition("/")[2] if stem.lower() in INDEX_NAMES and folder else stem


def _order_prefix(match: re.Match[str], stem: str) -> bool:
    """Whether a number found in a page's name is the number ordering it among its siblings (Docusaurus's `06-` of
    ibc-go's `06-upgrades.md`, `05-` of `05-migrations/`): a plain number at the start, a name after it; or a plain
    number written with a leading zero after a numbered part, as a book numbers a chapter's sections (the Rust
    book's `ch14-01-release-profiles.md`: chapter 14, section 1, on release profiles; SQLAlchemy's
    `changelog_01.rst` is release 0.1's)."""
    if match.group(1) or match.group(3):
        return False
    if match.start() == 0 and match.end() < len(stem):
        return True
    return _PADDED.match(match.group(2)) is not None and _SECTION_OF.search(stem, 0, match.start()) is not None


def older_than(named: str, current: str, inclusive: bool = False) -> bool:
    """Whether version `named` is older than `current`, compared to `named`'s own precision (`30` is not older than
    `30.4`, `3.6` is older than `3.7`); with `inclusive`, the same version counts as older too."""
    mine = version_key(named)
    theirs = version_key(current)[: len(mine)]
    return bool(mine) and bool(theirs) and (mine <= theirs if inclusive else mine < theirs)


def _superseded(family: Sequence[Tree], copies: Mapping[str, VersionCopy]) -> dict[str, str]:
    """Rule 6: the current tree's pages named for a version older than the current one (upgrade notes to an old
    release, an old release's benchmarks): path -> the version. The current version is the current tree's; for an
    untagged current tree, any version up to the newest old tree's is older (the current one is past it). A page
    named for the newest old version that its trees do not hold was written after it, on leaving it for the current
    one, and is current (solid-start v2's `migrating-from-v1.mdx`, zenstack's `migrate-v2.md` beside `version-2.x/`);
    etcd's `upgrade_3_6.md`, in v3.6's tree too, is 3.6's, and a move from v0 is old beside a v1 tree."""
    current = family[0]
    olds = [tree for tree in family[1:] if tree.status == OLD and tree.version is not None]
    if current.version is None and not olds:
        return {}
    # each old tree's pages, and their folders, by the current page each is a copy of
    held = {(copy.tree.root, copy.page) for copy in copies.values() if copy.counterpart is not None}
    held |= {(root, page.rpartition("/")[0]) for root, page in held}
    out = {}
    for path, copy in copies.items():
        # two parts after a plain word name a protocol as often as a release where the path speaks of none
        named = version_in_name(path, strict=not _speaks_of_releases(path)) if copy.tree is current else None
        if named is None:
            continue
        if current.version is not None:
            old = older_than(named, current.version)
        else:
            old = older_than(named, max((str(tree.version) for tree in olds), key=version_key), inclusive=True)
        if old and not _leaving(path, named, copy.page, olds, held):
            out[path] = named
    return out


def _leaving(path: str, named: str, page: str, olds: Sequence[Tree], held: Collection[tuple[str, str]]) -> bool:
    """Whether a current page named for version `named` is about leaving it for the current one: `named` is the
    newest old version (at its own precision: 2.x is 2's), and the name says it moves from it (`migrating-from-v4`,
    not `upgrading-from-v2-to-v3`), or the trees of that version hold other pages of the page's folder but not this
    one (zenstack's `migrate-v2.md`; cert-manager's v1.20-docs/ keeps no release notes: their absence says
    nothing)."""
    wanted = version_key(named)
    if any(version_key(str(tree.version))[: len(wanted)] > wanted for tree in olds):
        return False
    if _MOVING_FROM.search(_named_stem(path)):
        return True
    own = [tree.root for tree in olds if version_key(str(tree.version))[: len(wanted)] == wanted]
    folder = page.rpartition("/")[0]
    return not any((root, page) in held for root in own) and any((root, folder) in held for root in own)


def _older_sibling_pages(ordered: Sequence[str], fp: Callable[[str], frozenset[int] | None]) -> dict[str, str]:
    """Rule 7: pages beside each other whose file names are versions of one shape (OpenAPI's versions/3.0.4.md,
    3.1.2.md, 3.2.0.md: its specification, one page per release). From the highest (a release before a
    pre-release) down, each page at least SIBLING_RESEMBLANCE alike with the next newer one is an old copy, until
    one is not (OpenAPI's 1.2 is another text): page -> its version. Release notes named for their versions are
    old copies where they share a template (ory's keto/changelog/v26.2.14.md beside v26.2.16.md): they say
    different things, so fold nowhere, and rank after the newest unless the query names theirs. A name starting
    with a date (a post, `2021-11-18-4.4.0.md`) is no version. At most MAX_SIBLING_PAGES are read."""
    groups: dict[tuple[str, str], list[tuple[str, str, bool]]] = defaultdict(list)
    for page in ordered:
        folder, _, name = page.rpartition("/")
        stem = name.rsplit(".", 1)[0]
        if _GLUED_VERSION.fullmatch(stem):  # a folder's version only: md4.md, log2.md, springboot3.md name things
            continue
        number, shape = version_of_name(stem), name_shape(stem)
        if number is not None and shape is not None and not _YEAR.fullmatch(number) and not dated_name(page):
            groups[(folder, shape)].append((page, number, _PRERELEASE_END.search(stem) is None))
    out: dict[str, str] = {}
    budget = MAX_SIBLING_PAGES
    for members in groups.values():
        if len(members) < 2 or budget < len(members):
            continue
        budget -= len(members)
        newest = max(members, key=lambda member: (member[2], version_key(member[1])))
        older = sorted(
            (member for member in members if version_key(member[1]) < version_key(newest[1])),
            key=lambda member: version_key(member[1]),
            reverse=True,
        )
        newer = fp(newest[0])
        for page, number, _ in older:
            text = fp(page)
            if newer is None or text is None or resemblance(newer, text) < SIBLING_RESEMBLANCE:
                break
            out[page], newer = number, text
    return out


def _release_notes(ordered: Sequence[str]) -> dict[str, str]:
    """Rule 8: pages of one folder whose names are one name around a release's number, their paths speaking of
    releases (_speaks_of_releases: Celery's history/whatsnew-4.4.rst ... whatsnew-5.6.rst, DRF's
    community/3.0-announcement.md ... 3.16-announcement.md, the AI SDK's migration-guide-4-0 ... 6-0, Prefect's
    release-notes/oss/version-3-0.mdx ... 3-6), at least MIN_RELEASE_SERIES of them: each
    says what its release did, and all but the newest are old (page -> its version; all where the folder says old),
    ranked as rule 6's pages are unless the query names their version. Index pages and dated names (posts) are
    left out."""
    series: dict[tuple[str, str], list[tuple[str, str, bool]]] = defaultdict(list)
    for page in ordered:
        folder, _, name = page.rpartition("/")
        stem, dot, ending = name.lower().rpartition(".") if "." in name else (name.lower(), "", "")
        if stem in INDEX_NAMES or dated_name(page) or not _speaks_of_releases(page):
            continue
        release = _GLUED_PRERELEASE.sub("", stem)  # pytest's release-8.0.0rc1.rst: a pre-release of 8.0.0
        version = version_in_name(f"{folder}/{release}{dot}{ending}")
        if version is not None:
            series[(folder, " ".join(_LETTERS.findall(release)))].append((page, version, release == stem))
    out: dict[str, str] = {}
    for (folder, _), members in series.items():
        if len(members) >= MIN_RELEASE_SERIES:
            newest = max((version_key(version), final) for _, version, final in members)
            archived = says_old(folder)  # RKE2's release-notes-old/v1.24.X.md ... v1.32.X.md: the newest too
            out.update(
                (page, version)
                for page, version, final in members
                if archived or (version_key(version), final) < newest
            )
    return out


def _speaks_of_releases(page: str) -> bool:
    """Whether a page's path speaks of releases: a word of RELEASE_NOTE_WORDS in it, one starting as
    _VERSION_WORD_STARTS does, or a folder of RELEASE_NOTE_FOLDERS."""
    lowered = page.lower().replace("_", "-")  # scikit-learn's doc/whats_new/v1.5.rst
    return (
        any(word in lowered for word in RELEASE_NOTE_WORDS)
        or _VERSION_WORD_STARTS.search(lowered) is not None
        or any(folder in RELEASE_NOTE_FOLDERS for folder in lowered.split("/")[:-1])
    )


def query_versions(query: str) -> set[str]:
    """The version numbers a query names (`3.6` of "roll back from 3.7 to 3.6", `4` of "v4", `2024.11.05` of "the
    2024-11-05 spec": a release named by its date, as the MCP specification's folders are), as version_in_name
    writes them: a page named for a version the query names is what it asks for."""
    dates = _QUERY_DATE.findall(query)
    found = [*dates, *_QUERY_VERSION.findall(_QUERY_DATE.sub(" ", query) if dates else query)]
    return {".".join(_NUMBERS.findall(each)) for each in found}


def names_version(named: Iterable[str], version: str, page: bool = False) -> bool:
    """Whether one of the query's versions (query_versions) is `version`, read at `version`'s precision: "3.6.2" names
    the 3.6 upgrade notes; "3" alone names no 3.x page. A `page` named for a release (rules 6-8) is named by the
    release it is, trailing zeros aside: "from AI SDK 4 to 5" names the AI SDK's migration-guide-5-0. Not a version
    tree: "Jest 30" names the 30.x line, whose current tree is 30.4, not Jest's version-30.0/."""
    wanted = version_key(version)
    return any(
        version_key(found)[: len(wanted)] == wanted
        if len(version_key(found)) >= len(wanted)
        else page and _release(version_key(found)) == _release(wanted)
        for found in named
    ) or (page and _PACKED.fullmatch(version) is not None and any(_packed(found) == version for found in named))


# A page named for a release by its digits run together: SQLAlchemy's doc/build/changelog/migration_20.rst ("What's
# New in SQLAlchemy 2.0?") and changelog_14.rst (1.4), down to changelog_01.rst. "2.0" names migration_20.rst.
_PACKED = re.compile(r"[0-9]{2}")


def _packed(found: str) -> str | None:
    """A query's version as a page's name may pack it, two single digits run together ("2.0": "20"); else None."""
    key = version_key(found)
    return "".join(map(str, key)) if len(key) == 2 and all(part < 10 for part in key) else None


_HEADING_RELEASE = re.compile(
    rf"(?<![\w.])v?([0-9]+(?:\.[0-9]+)+)(?:\.[x*]|-?(?:{_PRERELEASE_MARKS})(?:[.-]?[0-9]+)?)?(?![\w.]|\.[0-9])",
    re.IGNORECASE,
)


def heading_releases(heading: str) -> list[str]:
    """The releases a heading trail names: dotted numbers, a pre-release's suffix left out (`pytest 8.0.0rc1
    (2023-12-30)`: 8.0.0; a date's parts are joined by hyphens and name none)."""
    return [found.group(1) for found in _HEADING_RELEASE.finditer(heading)]


def heading_names_release(named: Collection[str], heading: str, own: str | None = None) -> float:
    """1 where a heading trail names a release the query names and no other (`pytest 8.0.0 (2024-01-27)` for "what
    changed in 8.0", its pre-releases too; "Downgrade etcd from v3.6 to v3.5" is a step between two: 0), -1 where it
    names releases and none of the lines the query names (the 8.3.1 section for 8.0; 8.0.2 is of the 8.0 line: 0),
    else 0. The release of the version tree holding the page (`own`) names nothing of its own: etcd's
    v3.6/_index.md, "v3.6 docs", is its tree's landing page, no section on what 3.6 changed."""
    found = heading_releases(heading)
    if not found or not named:
        return 0.0
    releases = {_release(version_key(version)) for version in found}
    mine = _release(version_key(own)) if own is not None else None
    counted = [version for version in found if _release(version_key(version)) != mine]
    if any(names_version(named, version, page=True) for version in counted):
        return 1.0 if len(releases) == 1 else 0.0
    lines = [version_key(each) for each in named]
    if not counted or any(version_key(version)[: len(line)] == line for version in found for line in lines):
        return 0.0
    return -1.0


def newest_named(named: Collection[str]) -> Collection[str]:
    """Of a query's versions (query_versions), those a page named for one release answers: each of one; of a step
    between two or more ("How do I migrate from 3.x to 4.0?"), the newest alone. Socket.IO's migrating-from-2-to-3
    (a page of release 3, old by rule 8) had come first for that question, named by its 3."""
    if len(named) < 2:
        return named
    newest = max(named, key=version_key)
    return {version for version in named if version_key(version) == version_key(newest)}


def names_each(named: Collection[str], versions: Sequence[str]) -> bool:
    """Whether a page named for `versions` (versions_in_name) is named for each of the query's versions, and it names
    two or more: cert-manager's `upgrading-1.19-1.20.md` for "upgrading from 1.19 to 1.20", not its
    `upgrading-1.18-1.19.md`, whose opening asks the question's words."""
    return len(named) > 1 and all(
        any(names_version((each,), version, page=True) for version in versions) for each in named
    )


def _release(key: tuple[int, ...]) -> tuple[int, ...]:
    """A version's key without its trailing zeros: 5.0 and 5.0.0 are release 5."""
    end = len(key)
    while end > 1 and key[end - 1] == 0:
        end -= 1
    return key[:end]


def _norm(version: str) -> str:
    """`v3.7`, `version-3.7`, `3.7` all as `3.7`; other labels lowercased, a Docusaurus folder's `version-` prefix
    left out (Prettier's `version-stable/` is the `stable` of its versions.json)."""
    found = version_of_name(version.strip())
    if found is not None:
        return found
    label = version.strip().lower()
    return label.removeprefix(DOCUSAURUS_VERSION_PREFIX) or label


def _named_versions(a: str, b: str, hinted: set[str]) -> bool:
    """Rule 2 by name: a folder name with a version number or one that says old, or a version the config names.
    Only the path below where the two part says old: both of Redis's deprecated-features/gears-v1/python/ and
    jvm/ sit under a folder that does, which tells neither from the other. A folder saying old above the tree
    speaks only for a tree of the other's name (`old/guide/` of `guide/`): saleor's generated reference keeps
    `deprecated/discounts/mutations/sale-create.mdx` beside `discounts/objects/sale-create.mdx`, another kind of
    page of the same slug."""
    parted = len(_branch_point(a, b))
    names = {_leaf(folder) for folder in (a, b)}
    for folder in (a, b):
        name = _leaf(folder)
        old = says_old(folder[parted:]) and (len(names) == 1 or says_old(name))
        if version_of_name(name) is not None or old or _norm(name) in hinted:
            return True
    return False


def _smaller_untagged(a: str, b: str, hinted: set[str], size: Mapping[str, int]) -> bool:
    """Whether one of a pair named for versions by the other's name alone has no version in its own and under
    UNTAGGED_SHARE of the other's pages where that one is numbered: no current tree beside its old copy, which would
    hold as much, but another part of the site sharing some page names (InfluxData's 12-page
    content/telegraf/controller/reference/ shares seven with the 487 pages of Telegraf's content/telegraf/v1/). A
    folder saying old may be any size (timescale's tutorials/OLD_grafana/ beside its 4-page grafana/)."""
    if any(_norm(_leaf(folder)) in hinted for folder in (a, b)):
        return False
    return any(
        not _named_for_a_version(x)
        and not _channel(x)
        and version_of_name(_leaf(y)) is not None
        and size[x] < UNTAGGED_SHARE * size[y]
        for x, y in ((a, b), (b, a))
    )


def _worded_only(a: str, b: str, hinted: set[str]) -> bool:
    """Whether the pair is named for versions only after words of its own (CircleCI's `server-admin-4.10/` beside
    `server-admin-4.9/`): such a pair is versions where its pages' text says so, as a course's `lab-1.1/` and
    `lab-1.2/` are named alike and hold pages of the same names and other text, and where both are numbered or say
    old: docs.scala-lang's `_overviews/collections-2.13/` is the newer edition of `_overviews/collections/`."""
    names = [_leaf(a), _leaf(b)]
    if any(_norm(name) in hinted or says_old(name) or _VERSION_NAME.fullmatch(name) for name in names):
        return False
    return any(_WORDED_VERSION.fullmatch(name) or _GLUED_VERSION.fullmatch(name) for name in names)


def _shape_of(folder: str) -> tuple[str, str] | None:
    """(parent, name_shape) of a folder named for a version: `("site/content/en", "v{}")` of site/content/en/v1.9."""
    parent, _, name = folder.rpartition("/")
    shape = name_shape(name)
    return (parent, shape) if shape is not None else None


def _folder_number(folder: str) -> tuple[int, ...]:
    return version_key(version_of_name(folder.rpartition("/")[2]))


def _newest_of_shape(folders: Iterable[str]) -> dict[tuple[str, str], tuple[int, ...]]:
    """The highest version among `folders` of each (parent, name_shape) (_shape_of): `v1.9` of Envoy Gateway's
    site/content/en/v{} among the folders that mirror another; a newer stub that mirrors nothing does not count."""
    newest: dict[tuple[str, str], tuple[int, ...]] = {}
    for folder in folders:
        key = _shape_of(folder)
        if key is not None:
            newest[key] = max(newest.get(key, ()), _folder_number(folder))
    return newest


def _untagged_beside_an_old_one(
    untagged: str, numbered: str, newest: Mapping[tuple[str, str], tuple[int, ...]]
) -> bool:
    """Whether `untagged` (no version in its name, saying nothing of old or channels) mirrors `numbered`, a version
    older than the newest of its kind: Envoy Gateway's community/ holds the design pages its v0.2-v0.6 trees held,
    and is no version of the site (a docs/ that is one mirrors the newest version, as Docusaurus's does, and then
    pairs with the older ones too: Redis's rs/ with rs/8.0/ and rs/7.22/)."""
    if _named_for_a_version(untagged) or _channel(untagged):
        return False
    key = _shape_of(numbered)
    return key is not None and _folder_number(numbered) < newest.get(key, ())


def _is_newest(folder: str, newest: Mapping[tuple[str, str], tuple[int, ...]]) -> bool:
    """Whether `folder` is named for the highest version of its (parent, name shape) among `newest`."""
    key = _shape_of(folder)
    return key is not None and _folder_number(folder) == newest.get(key)


def _channel(folder: str) -> bool:
    """Whether a folder is named for a release channel (`stable/`, `latest/`, `next/`, `dev/`): such siblings are
    versions, not variants, whatever their number."""
    return _says((*NEXT_WORDS, *CURRENT_WORDS), folder.rpartition("/")[2])


def _parent(folder: str) -> str:
    return folder.rpartition("/")[0]


def _below_branch(family: Sequence[str]) -> dict[str, str]:
    """Each tree's path below the folder where the family's paths part (`Master/Tree` of src/UserGuide/Master/Tree
    beside src/UserGuide/latest): only that part names the tree; the folders above it are every tree's. A tree that
    holds the others (Redis's rs/ around rs/8.0/) is named by its own folder."""
    point = functools.reduce(_branch_point, family)  # one tree alone: itself, named by its own folder
    return {root: root[len(point) :].lstrip("/") or _leaf(root) for root in family}


def _branch_point(a: str, b: str) -> str:
    """The folder where the paths to `a` and `b` part: `docs/framework` for docs/framework/react/reference and
    docs/framework/vue/reference."""
    common = []
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        common.append(x)
    return "/".join(common)


def _variant_parents(pairs: Iterable[tuple[str, str]]) -> set[str]:
    """Folders holding MIN_VARIANTS or more child folders that mirror each other (`pairs`: those whose names carry no
    version): a library's docs per framework or per language (TanStack Query's docs/framework/react/, vue/,
    angular/, solid/...), whose pages share names and often text (one adapts another's, or both point to a third).
    Two such variants, or folders below two of them (react/v4/ and angular/), are never versions of each other;
    versions inside one variant still are."""
    mirroring: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        if _parent(a) == _parent(b):
            mirroring[_parent(a)].update((a, b))
    return {parent for parent, children in mirroring.items() if len(children) >= MIN_VARIANTS}


def _one_page_versions(a: str, b: str, ordered: Sequence[str], fp: Callable[[str], frozenset[int] | None]) -> bool:
    """Rule 1 for folders sharing fewer than MIN_MIRRORED pages: siblings named for versions in one name shape
    (`hapi/20/` and `hapi/21/`) whose every shared page is near-duplicate text (ONE_PAGE_RESEMBLANCE). A page that
    only shares its name (`chapters/1/exercise.md` beside `chapters/2/exercise.md`) makes no versions. `ordered`:
    the pages, sorted."""
    shape = _shape_of(a)
    if shape is None or shape != _shape_of(b):
        return False
    shared = _shared_content(a, b, ordered)
    for rest in shared:
        x, y = fp(_join(a, rest)), fp(_join(b, rest))
        if x is None or y is None or resemblance(x, y) < ONE_PAGE_RESEMBLANCE:
            return False
    return bool(shared)


def _mirrors_at_least(a: str, b: str, ordered: Sequence[str], count: int) -> bool:
    """Whether folders `a` and `b` hold `count` pages at the same relative paths, their own README or index aside."""
    return len(_shared_content(a, b, ordered)) >= count


def _index_pages_alone(a: str, b: str, ordered: Sequence[str]) -> bool:
    """Whether the pages two folders share stand for fewer than MIN_MIRRORED pages or folders (_folder_page; rule 1:
    a folder's README and index alone say nothing): chef-web-docs' vendored licensing/local_license_service/ shares
    `_index.md`, `reusable/README.md` and `reusable/index.md` with content/client/19/, and had been its current
    version. One page shared (_one_page_versions) is measured by its text instead."""
    shared = _shared_content(a, b, ordered)
    units = {_folder_page(rest) for rest in shared}
    return len(shared) >= MIN_MIRRORED and len(units) < MIN_MIRRORED


def _folder_page(rest: str) -> str:
    """A page as what it stands for: an index or README page for its folder (`api/request/index.mdx`: api/request,
    a page of its own as Next.js and Hugo's leaf bundles keep them; `reusable/README.md` and `reusable/index.md`: one
    folder), any other page for itself."""
    return rest.rpartition("/")[0] if _page_name(rest) in INDEX_NAMES else rest


def _copies_one_subfolder(a: str, b: str, ordered: Sequence[str]) -> bool:
    """Whether a folder and a folder inside it share only the pages of one subfolder of each: chef-web-docs'
    content/ and content/client/19/ each keep reusable/md/ (222 shared snippets), which made the whole site the
    current version and Chef Infra Client 19 an old one. That subfolder pairs on its own, or not at all; a version
    inside the current tree shares pages across it (Redis's rs/ and rs/8.0/). Not where that subfolder holds nearly
    all the inner folder's pages (WRAPPED_SHARE): the inner folder is an old copy of it, wrapped as the site builds
    it (the Rust book's 2018-edition/src/ beside its current src/, the pair one level down of equal names)."""
    inner, outer = (b, a) if a == ROOT or _under(b, a) else (a, b)
    if not (outer == ROOT or _under(inner, outer)):
        return False
    tops = {rest.split("/", 1)[0] if "/" in rest else "" for rest in _shared_content(inner, outer, ordered)}
    if len(tops) != 1 or "" in tops:
        return False
    inside = list(_pages_below(inner, ordered))
    wrapped = sum(1 for page in _pages_below(_join(inner, next(iter(tops))), ordered))
    return wrapped < WRAPPED_SHARE * len(inside)


def _shared_content(a: str, b: str, ordered: Sequence[str]) -> list[str]:
    """_shared_pages but the folders' own README and index pages, which say nothing of versions."""
    return [rest for rest in _shared_pages(a, b, ordered) if not _own_generic_page(rest)]


def _shared_pages(a: str, b: str, ordered: Sequence[str]) -> list[str]:
    """The paths, relative to their folders, of the pages both folders hold (`ordered`: every page, sorted)."""
    in_b = set(_pages_below(b, ordered))
    return [rest for rest in (_rest(page, a) for page in _pages_below(a, ordered)) if _join(b, rest) in in_b]


def _pages_below(folder: str, ordered: Sequence[str]) -> Iterator[str]:
    """The pages of sorted `ordered` in the tree at `folder`."""
    prefix = _join(folder, "")
    for page in ordered[bisect.bisect_left(ordered, prefix) :]:
        if not page.startswith(prefix):
            return
        yield page


def _included(source: str, stubs: str, ordered: Sequence[str], fp: Callable[[str], frozenset[int] | None]) -> bool:
    """Whether the pages `stubs` shares with `source` are stubs including its pages' text: three in four of (a
    sample of) them under STUB_SHINGLES shingles where the source's page holds STUB_RATIO x as many (or a whole
    fingerprint's MINHASH_SIZE). kgateway.dev's content/docs/envoy/2.3.x/traffic-management/compression.md is front
    matter and `{{< reuse "kgw-docs/pages/traffic-management/compression.md" >}}`, the page's text in
    assets/kgw-docs/pages/; InfluxData's content/influxdb/v2/ pages are front matter and a comment naming their
    `source:` in content/shared/influxdb-v2/ (15 to 19 shingles, its path's words among them)."""
    sampled = _shared_content(source, stubs, ordered)
    sampled = sampled[:: max(1, len(sampled) // SAMPLED_PAGES)][:SAMPLED_PAGES]
    hits = misses = 0
    for rest in sampled:  # the stub side first: two versions' full pages end it after a quarter of the sample
        stub = len(fp(_join(stubs, rest)) or ())
        text = fp(_join(source, rest)) if stub < STUB_SHINGLES else None
        if stub < STUB_SHINGLES and text is not None and len(text) >= min(MINHASH_SIZE, STUB_RATIO * max(1, stub)):
            hits += 1
        else:
            misses += 1
            if misses * 4 > len(sampled):
                return False
    return hits >= MIN_MIRRORED and hits * 4 >= (hits + misses) * 3


def _readme(rest: str) -> bool:
    return _page_name(rest) == "readme"


def _resembling(a: str, b: str, ordered: Sequence[str], fp: Callable[[str], frozenset[int] | None]) -> bool:
    """Rule 2 by text: the lower quartile of the resemblance of (a sample of) the pages both folders hold, at least
    MIN_MIRRORED_BY_TEXT of them besides README pages at any depth (and the folders' own index pages), is
    SAME_TREE_RESEMBLANCE or more. Folders of packages, each with its README (next-auth's apps/dev/ and
    apps/examples/: express/README.md, nextjs/README.md, ...), share a layout, not a text."""
    shared = _shared_pages(a, b, ordered)
    if sum(not _own_generic_page(rest) and not _readme(rest) for rest in shared) < MIN_MIRRORED_BY_TEXT:
        return False
    measured = []
    for rest in shared[:: max(1, len(shared) // SAMPLED_PAGES)][:SAMPLED_PAGES]:
        x, y = fp(_join(a, rest)), fp(_join(b, rest))
        if x is not None and y is not None:
            measured.append(resemblance(x, y))
        elif x is not None or y is not None:  # a page with text beside one with none (a stub pointing elsewhere)
            measured.append(0.0)
    # three in four alike, not half: an old copy of docs keeps nearly every page (etcd's v2.3 beside v3.7: the lower
    # quartile 0.64), where two frameworks' docs (TanStack Router's react/ and solid/) share some pages word for word
    # and differ wholly in the rest (23 of 35 at 0)
    return bool(measured) and sorted(measured)[len(measured) // 4] >= SAME_TREE_RESEMBLANCE


def _families(pairs: Sequence[tuple[str, str]]) -> list[list[str]]:
    """The families the pairs join, taken in order (the most mirrored first): a pair that would put two trees of one
    name into a family (`content/v2.3/` and `content/cli/v2.3/`, a site's docs and its CLI's, each versioned, a few
    pages alike) leaves them in two, as one site's versions hold each version once."""
    parent: dict[str, str] = {}
    names: dict[str, set[str]] = {}

    def find(x: str) -> str:
        if x not in parent:
            parent[x], names[x] = x, {_leaf(x).lower()}
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        root_a, root_b = find(a), find(b)
        if root_a != root_b and not names[root_a] & names[root_b]:
            parent[root_a] = root_b
            names[root_b] |= names.pop(root_a)
    groups: dict[str, list[str]] = defaultdict(list)
    for folder in list(parent):
        groups[find(folder)].append(folder)
    return [sorted(group) for group in groups.values()]


def _without_parts(family: Sequence[str]) -> list[str]:
    """The family without the folders that are part of one of its numbered trees: a folder whose name carries no
    version inside a tree that does (react-native-elements' version-3.4.2/props/ repeats version-2.3.2's file names,
    but it is 3.4.2's props pages, no version of its own). A numbered folder inside an untagged tree stays (Redis's
    rs/8.0/ in rs/)."""
    numbered = {root for root in family if version_of_name(_leaf(root)) is not None}
    return [root for root in family if root in numbered or not any(_under(root, other) for other in numbered)]


def _sibling_pairs(trees: Collection[str], size: Mapping[str, int]) -> list[tuple[str, str]]:
    """Rule 2 by name and place: pairs joining the found `trees` that share a parent folder and a name shape
    (name_shape: `content/v1.1-docs` and `content/v1.20-docs`), and each other folder beside them of that shape
    (`size`: each folder's page count), though it mirrors too little to pair (pages renamed or restructured between
    versions): an older one, or a newer one holding at least NEWER_UNMIRRORED_SHARE of the newest tree's pages
    (Dioxus's docs-src/0.7/, rewritten: 180 pages beside 0.6's 107); a newer one smaller than that may be a stub."""

    def key(folder: str) -> tuple[str, str] | None:  # a year beside versions is a folder of that year's pages
        return None if _YEAR.fullmatch(folder.rpartition("/")[2]) else _shape_of(folder)

    first: dict[tuple[str, str], str] = {}
    highest = _newest_of_shape(trees)
    newest_size: dict[tuple[str, str], int] = {}
    pairs = []
    for tree in sorted(trees):
        shaped = key(tree)
        if shaped is not None:
            pairs.append((first.setdefault(shaped, tree), tree))
            if _folder_number(tree) == highest[shaped]:
                newest_size[shaped] = max(newest_size.get(shaped, 0), size[tree])
    for folder in size:
        shaped = key(folder)
        if shaped not in first or folder in trees:
            continue
        number = _folder_number(folder)
        if number == highest[shaped] or (
            number > highest[shaped] and size[folder] < NEWER_UNMIRRORED_SHARE * newest_size[shaped]
        ):
            continue
        if not any(_under(folder, t) or _under(t, folder) for t in trees):
            pairs.append((first[shaped], folder))
    return pairs


def _decide(family: Sequence[str], hints: Sequence[Hint], override: str | None) -> tuple[Tree, ...]:
    """Rules 3 and 4: the family's trees, current first, then by version, newest first."""
    numbers = {
        root: version_of_name(_leaf(root)) or _listed_version(root, hints) or _menu_version(root, hints)
        for root in family
    }
    old_named = {root for root in family if says_old(root)}
    below = _below_branch(family)
    current, why = _current_of(family, hints, override, numbers, old_named, below)
    naming = [hint for hint in _applicable(hints, family) if _named_by(hint, family, numbers, old_named) == current]
    labelled = _untagged_label(naming, family, numbers, old_named, current)
    trees = [Tree(current, numbers[current], CURRENT, why, labelled.get(current))]
    # a current tree the config names by a label (Prettier's `stable`) counts as numbered: the untagged one is next
    named = numbers[current] is None and any(hint.current for hint in naming)
    for root in family:
        if root != current:
            number = labelled.get(root, numbers[root])  # for the status alone: the tree's name still carries none
            newer = root not in old_named and _ahead(number, numbers[current], below[root], named, below[current])
            trees.append(Tree(root, numbers[root], NEWER if newer else OLD, "", labelled.get(root)))
    # newest first: an unreleased untagged tree (next) before numbered ones, an old one (legacy) after them
    rest = sorted(
        trees[1:],
        key=lambda tree: (
            tree.status == OLD,
            tree.status == OLD and not version_key(tree.version),
            release_order(tree),
            tree.root,
        ),
    )
    return (trees[0], *rest)


def _listed_version(root: str, hints: Sequence[Hint]) -> str | None:
    """The version a Docusaurus versions.json lists for a `version-<entry>/` folder whose name carries no number of
    its own (gofiber's storage_versioned_docs/version-valkey_v0.x.x/: one package's release): a version all the same,
    never the untagged tree the config calls current."""
    name = _leaf(root)
    if not name.startswith(DOCUSAURUS_VERSION_PREFIX):
        return None
    entry = name[len(DOCUSAURUS_VERSION_PREFIX) :]
    listed = any(entry in hint.versions for hint in filter(_from_versions_file, hints))
    return entry if listed else None


def _current_of(
    family: Sequence[str],
    hints: Sequence[Hint],
    override: str | None,
    numbers: Mapping[str, str | None],
    old_named: set[str],
    below: Mapping[str, str],
) -> tuple[str, str]:
    """Rule 3: the family's current tree and why, in the rule's order (`below`: each tree's path below the folder
    where the family's paths part, _below_branch)."""
    for wanted in overrides(override):
        current = named_current(wanted, family)
        if current is not None:
            return current, "named by SCREE_CURRENT_VERSION"
    for hint in _applicable(hints, family):
        found = _named_by(hint, family, numbers, old_named)
        if found is not None:
            said = "lists {} as its newest release" if hint.from_list else "names {} current"
            source = hint.decided_by or hint.source
            return found, f"{source} {said.format(hint.current or 'the untagged tree')}"
    # not named for the next release: k6's next/, IoTDB's Master/Tree/
    untagged = [root for root in _unnumbered(family, numbers, old_named) if not _says(UNRELEASED_WORDS, below[root])]
    if len(untagged) == 1:
        return untagged[0], "the tree whose name carries no version, beside numbered copies of it"
    channel = [root for root in untagged if _norm(_leaf(root)) in CURRENT_WORDS]
    if len(channel) == 1:  # IoTDB's latest/ beside latest-Table/, Master/Tree/ and V1.3.x/
        return channel[0], f"the tree named {_leaf(channel[0])}, beside copies named otherwise"
    numbered = [root for root in family if numbers[root] is not None and root not in old_named]
    if not numbered:
        return min(family, key=lambda root: (root in old_named, -len(root), root)), "the tree that does not say old"
    prereleases = {hint.folder for hint in hints if hint.prerelease}  # named so by their own config (Antora)
    current = max(
        numbered, key=lambda root: (not _prerelease(root) and root not in prereleases, version_key(numbers[root]))
    )
    skipped = version_key(numbers[current]) < max(version_key(numbers[root]) for root in numbered)
    return current, "the highest version number" + (" that is no pre-release" if skipped else "")


def _unnumbered(family: Sequence[str], numbers: Mapping[str, str | None], old_named: Collection[str]) -> list[str]:
    """The family's untagged trees: no version in their name, and no word saying old in their path."""
    return [root for root in family if numbers[root] is None and root not in old_named]


def overrides(override: str | None) -> list[str]:
    """The trees SCREE_CURRENT_VERSION names, one per family: folders or versions, comma-separated
    (`content/v2.3,content/cli/v2.4` for Crossplane's docs and CLI)."""
    return [part.strip().strip("/") for part in (override or "").split(",") if part.strip().strip("/")]


def named_current(wanted: str, family: Sequence[str]) -> str | None:
    """The tree of `family` that `wanted` (one of overrides()) names: its folder (`.` for the repository's root, as
    `scree doctor` shows it), else its version."""
    if wanted == "." and ROOT in family:
        return ROOT
    return next((root for root in family if root == wanted), None) or next(
        (root for root in family if _norm(_leaf(root)) == _norm(wanted)), None
    )


def _prerelease(root: str) -> bool:
    """Whether a tree's folder names a pre-release (`v2.2.0-alpha.0`): never current by number beside a release."""
    return _PRERELEASE_END.search(_leaf(root)) is not None


def _applicable(hints: Sequence[Hint], family: Sequence[str]) -> list[Hint]:
    """The hints that may name `family`'s current tree, in order: keys naming the current version before lists of
    versions; of each, those whose key names a folder of its trees (`cliLatest` for `content/cli/v2.4/`,
    `versionsV2` for `content/docs/v2/2.20/`) before those that name none."""
    folders = {_BARE.sub("", part.lower()) for root in family for part in root.split("/")}
    applicable = [hint for hint in hints if not hint.scope or _names_folder(hint.scope, folders)]
    return sorted(applicable, key=lambda hint: (hint.from_list, not hint.scope))


def _untagged_label(
    naming: Sequence[Hint], family: Sequence[str], numbers: Mapping[str, str | None], old_named: set[str], current: str
) -> dict[str, str]:
    """The family's one untagged tree besides the current one, with the version the config's label gives it
    (Hint.untagged) where that config names the current tree (`naming`): RocketMQ's docs/, labelled 4.x beside the
    current 5.0, is old, not an unreleased next; the preset's label says nothing of another plugin instance's docs.
    Where the current tree is the only untagged one, the label is its own: PixiJS's current docs/, labelled v8.x, is
    8.x when a query names versions ("migrate from v7 to v8" names the current one too)."""
    untagged = _unnumbered(family, numbers, old_named)
    others = [root for root in untagged if root != current]
    label = next((hint.untagged for hint in naming if hint.untagged is not None), None)
    if label is None:
        return {}
    if len(others) == 1:
        return {others[0]: label}
    return {current: label} if untagged == [current] else {}


def _names_folder(scope: Sequence[str], folders: Collection[str]) -> bool:
    return "".join(scope) in folders or all(word in folders for word in scope)


def _ahead(
    number: str | None, current: str | None, name: str, current_named: bool = False, current_name: str = ""
) -> bool:
    """Whether a tree that does not say old, named `name` and carrying version `number`, is ahead of the current
    tree (named `current_name`, carrying `current`): a higher number where both carry one, and of one number, the
    later pre-release (4.0.0-beta.0 is behind 4.0.0-rc.8, which is behind 4.0.0); else named so (`next/`, `2-edge/`),
    or the untagged tree beside a numbered current one (or one the config names: `current_named`); numbered copies
    beside an untagged current tree are its snapshots."""
    if number is not None and current is not None:  # numbers decide: Antrea's v1.11.0-alpha.0 beside v2.7.0 is old
        mine = version_key(number)
        theirs = version_key(current)[: len(mine)]
        if mine != theirs:  # compared at the tree's own precision: `2-edge` is no older than 2.19, words decide
            return mine > theirs
        if len(mine) == len(version_key(current)) and (_prerelease(name) or _prerelease(current_name)):
            return _stage(name) > _stage(current_name)
    if _says(UNRELEASED_WORDS, name):
        return True
    return number is None and (current is not None or current_named)


def release_order(tree: Tree) -> tuple[list[int], list[int]]:
    """A sort key putting trees of higher versions first, and of one number, its release before its pre-releases,
    the latest of them first (4.0.0-rc.8 before rc.7 ... beta.0)."""
    return [-n for n in version_key(tree.version)], [-n for n in _stage(tree.root)]


def _stage(name: str) -> tuple[int, int]:
    """Where a folder named for a version stands among that number's pre-releases and release: alpha, beta, pre,
    rc, each by its own number, then the release itself."""
    found = _PRERELEASE_END.search(_leaf(name))
    if found is None:
        return len(PRERELEASE_STAGES), 0
    tag = found.group(0).lower()
    stage = next(i for i, word in enumerate(PRERELEASE_STAGES) if word in tag)
    return stage, int("".join(filter(str.isdigit, tag)) or 0)


def _named_by(hint: Hint, family: Sequence[str], numbers: Mapping[str, str | None], old_named: set[str]) -> str | None:
    """The one tree of `family` a config hint names current: the untagged one for "", else the one whose version is
    the hint's (or, for a release like 3.2.1, the longest version it starts with); None for none or several."""
    if hint.current is None:
        return None
    if hint.current == "":
        found = _unnumbered(family, numbers, old_named)
        return found[0] if len(found) == 1 else None
    # as written first: 4.0.0-rc.8 of eight 4.0.0 pre-releases (react-native-elements)
    label = hint.current.lower()
    exact = [root for root in family if _leaf(root).lower().removeprefix(DOCUSAURUS_VERSION_PREFIX) == label]
    if len(exact) == 1:
        return exact[0]
    wanted = _norm(hint.current)
    found = [root for root in family if _norm(_leaf(root)) == wanted]
    found = [root for root in found if not _prerelease(root)] or found  # v2.7.0 beside v2.7.0-rc.1: the release
    if not found:
        prefixes = [root for root in family if numbers[root] and wanted.startswith(str(numbers[root]) + ".")]
        found = sorted(prefixes, key=lambda root: -len(str(numbers[root])))[:1]
    return found[0] if len(found) == 1 else None


def _copies(
    family: Sequence[Tree],
    pages: Mapping[str, str],
    fp: Callable[[str], frozenset[int] | None],
    elsewhere: Callable[[str], bool],
    ordered: Sequence[str],
) -> dict[str, VersionCopy]:
    """Rule 5: each page of the family's trees as a copy of its current page (or of none). The repository's root
    holds every page but those `elsewhere` (in another family's tree, or a language's). `ordered`: the pages
    sorted, so that only those below the folder holding the family's trees are looked at (milvus's nine families
    had each gone through its 28,000 pages)."""
    current = family[0]
    members: dict[str, list[str]] = defaultdict(list)
    above = functools.reduce(_branch_point, (tree.root for tree in family))  # every tree is below it
    for page in pages if above == ROOT else _pages_below(above, ordered):
        inside = [tree for tree in family if _in_tree(page, tree.root)]
        if inside:
            root = max(inside, key=lambda tree: len(tree.root)).root
            if root != ROOT or not elsewhere(page):
                members[root].append(page)
    finder = _Counterparts(current.root, members[current.root], fp)
    out = {pages[page]: VersionCopy(page, current, pages[page]) for page in members[current.root]}
    gone: dict[str, str] = {}  # a page the current tree no longer holds -> its newest copy (trees newest first)
    for tree in family[1:]:
        found = {page: finder.by_path(_rest(page, tree.root)) for page in members[tree.root]}
        for page, counterpart in found.items():
            if counterpart is None:  # renamed, split or gone
                counterpart = finder.by_text(page)
            if counterpart is None:  # gone: a copy of the newest version's page at its path (LoopBack's lb2/ of lb3/)
                out[pages[page]] = VersionCopy(gone.setdefault(_rest(page, tree.root), page), tree, None)
            else:
                out[pages[page]] = VersionCopy(counterpart, tree, pages[counterpart])
    return out


class _Counterparts:
    """The current page an old page is a copy of: same relative path, else the one current page of its file name,
    else the current page its text resembles most (at least RENAMED_RESEMBLANCE)."""

    def __init__(self, root: str, current: Sequence[str], fp: Callable[[str], frozenset[int] | None]) -> None:
        self._current = current
        self._fp = fp
        self._by_rest = {_rest(page, root): page for page in current}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for page in current:
            self._by_name[_leaf(page)].append(page)
        self._holding: dict[int, list[int]] | None = None  # hash -> the current pages whose fingerprints hold it

    def by_path(self, rest: str) -> str | None:
        found = self._by_rest.get(rest)
        if found is not None:
            return found
        name = _leaf(rest)
        same_name = self._by_name.get(name, [])
        if len(same_name) == 1 and name.rsplit(".", 1)[0].lower() not in GENERIC_NAMES:
            return same_name[0]
        return None

    def by_text(self, page: str) -> str | None:
        """Measured only against the current pages sharing enough of its hashes to reach RENAMED_RESEMBLANCE
        (resemblance is at most the shared hashes over the larger fingerprint): CockroachDB's 883 renamed or removed
        pages had each been measured against all 602 of v26.2's, six seconds of the first search."""
        mine = self._fp(page)
        if mine is None:
            return None
        if self._holding is None:
            self._holding = defaultdict(list)
            for at, candidate in enumerate(self._current):
                for value in self._fp(candidate) or ():
                    self._holding[value].append(at)
        shared = Counter(at for value in mine for at in self._holding.get(value, ()))
        best, score = None, 0.0
        for at in sorted(shared):
            theirs = self._fp(self._current[at])
            if theirs is None or shared[at] < RENAMED_RESEMBLANCE * max(len(mine), len(theirs)):
                continue
            measured = resemblance(mine, theirs)
            if measured > score:
                best, score = self._current[at], measured
        return best if score >= RENAMED_RESEMBLANCE else None
