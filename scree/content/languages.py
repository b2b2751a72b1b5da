"""Copies of one docs page across a site's languages and versions: parallel language trees (`docs/en/x.md` beside
`docs/de/x.md`, or `x.md` beside `x.de.md`) and Docusaurus's i18n and versioned_docs folders (issue 25). Which page
a path is a copy of, in which language and version, which copy to show, and which language a query is likely in
(pure: no I/O, #11). Version trees of any layout come from scree.content.versions (issue 32) and are folded here with
the translations."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from scree.content.versions import CURRENT, NEWER, OLD, Tree, VersionTrees, names_version, newest_named

# ISO 639-1 codes that docs sites use for their translations (FastAPI, MkDocs i18n, Docusaurus, Hugo, Sphinx).
LANGUAGE_CODES = frozenset(
    "af am ar az be bg bn bs ca cs cy da de el en eo es et eu fa fi fr ga gl gu he hi hr hu hy id is it ja ka kk km "
    "kn ko ky lo lt lv mk ml mn mr ms my nb ne nl nn no pa pl pt ro ru si sk sl sq sr sv sw ta te th tl tr uk ur uz "
    "vi yo zh ku cn kr jp ba".split()
)
# codes sites use for a language besides its ISO 639-1 one, its country's: `cn` for Chinese (apache/hugegraph-doc's
# content/cn/), `kr` for Korean and `jp` for Japanese (axios-docs' posts/kr/ beside posts/ja/ and posts/zh/), `ba`
# for Bosnian (docs.scala-lang's _ba/tour/)
_ALIASES = {"cn": "zh", "kr": "ko", "jp": "ja", "ba": "bs"}
# `en`, `pt-BR`, `pt_br`, `zh-hant`, `es-419`: a language code and an optional region or script.
_CODE = re.compile(r"([A-Za-z]{2})(?:[-_](?:[A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3}))?")
# A three-letter ISO 639 code with its region, written as BCP 47 writes them (Crowdin's `ckb-IR`, `fil-PH`,
# `yue-HK`: Starship's docs/ckb-IR/ beside de-DE/ and ja-JP/); never in lower case alone, where `web-ui` and `app-js`
# are words.
_REGIONAL_CODE3 = re.compile(r"[a-z]{3}[-_][A-Z]{2}")
# a language and its region written as one word, which sites use for a few (vuex's docs/ptbr/ beside ja/ and zh/);
# only these: a four-letter name is a word far more often than a code (`node` is no Norwegian of Germany)
GLUED_CODES = frozenset(("ptbr", "ptpt", "zhcn", "zhtw", "zhhk", "enus", "engb"))
MIN_SHARED_PAGES = 2  # pages present in two languages before a folder or suffix counts as a language tree
UNTAGGED_MAIN_SHARE = 2  # the untagged tree is the original unless a translation holds more than this x its pages

# Words that say which language a short query is in: frequent function words. A word in two lists counts for both;
# a tie goes to the language with more pages (the main one first).
_STOPWORDS = {
    "en": "the a an is are do does how what why when where which to of in on for with and or i my can should",
    "de": "der die das ein eine ist sind wie was warum wann wo welche zu von mit und oder ich mein kann nicht den dem",
    "es": "el la los las un una es son cómo como qué que por para con y o mi puedo se del al está hay cuál dónde",
    "fr": "le les une est sont comment quoi pourquoi quand où quel pour avec et ou je mon peut des du au qu ce ces "
    "cette dans sur pas qui aux nous vous",
    "pt": "o os as um uma é são como por que para com e ou eu meu posso do da dos das ao",
    "it": "il lo gli una è sono come perché quando dove quale per con e o io mio posso del della",
    "nl": "de het een is zijn hoe wat waarom wanneer waar welke voor met en of ik mijn kan van",
    "tr": "bir ve ile için nasıl ne neden nerede hangi bu şu mi mı mu mü ben benim",
    "pl": "jest są jak co dlaczego kiedy gdzie który dla z i lub ja mój mogę się nie",
}
_STOP_SETS: dict[str, frozenset[str]] = {lang: frozenset(words.split()) for lang, words in _STOPWORDS.items()}
# a function word of k languages' lists says 1/k of each (`un` is Spanish and French alike; `qu'` French alone)
_STOP_SHARE: dict[str, float] = {
    word: 1.0 / sum(word in stops for stops in _STOP_SETS.values()) for stops in _STOP_SETS.values() for word in stops
}
_WORD = re.compile(r"[^\W\d_]+")
# Han characters: read after kana, which Japanese text nearly always has, so Chinese before Japanese
_HAN = re.compile(r"[\u4e00-\u9fff]")
# Scripts that name their language outright (a query in Cyrillic is not in English).
_SCRIPTS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"[\u3040-\u30ff]"), ("ja",)),
    (re.compile(r"[\uac00-\ud7af]"), ("ko",)),
    (_HAN, ("zh", "ja")),
    (re.compile(r"[\u0400-\u04ff]"), ("ru", "uk", "bg", "sr", "mk", "be", "kk")),
    (re.compile(r"[\u0600-\u06ff]"), ("ar", "fa", "ur")),
    (re.compile(r"[\u0590-\u05ff]"), ("he",)),
    (re.compile(r"[\u0e00-\u0e7f]"), ("th",)),
    (re.compile(r"[\u0370-\u03ff]"), ("el",)),
    (re.compile(r"[\u0900-\u097f]"), ("hi", "mr", "ne")),
)


_OTHER_SCRIPTS = frozenset(code for _, codes in _SCRIPTS for code in codes)  # languages not written in Latin letters
ORIGINAL = ""  # the language of a page's original, where its path names no language (Docusaurus's docs/)
# Docusaurus keeps translations in i18n/<lang>/<plugin folder>/...: docs as docusaurus-plugin-content-docs[-<id>]/
# current/ (or version-<N>/) beside docs/ (or <id>/), the blog beside blog/, pages beside src/pages/. Its old versions
# are versioned_docs/version-<N>/ (or <id>_versioned_docs/version-<N>/) beside docs/ (or <id>/).
I18N_FOLDER = "i18n"
DOCS_PLUGIN = "docusaurus-plugin-content-docs"
PLUGIN_PREFIX = "docusaurus-plugin-content-"
PLUGIN_FOLDERS = {"docusaurus-plugin-content-blog": ("blog",), "docusaurus-plugin-content-pages": ("src", "pages")}
CURRENT_VERSION = "current"
VERSION_PREFIX = "version-"
VERSIONED_DOCS = "versioned_docs"
# One page whatever its markdown extension: a .md translation of an .mdx page is a copy of it.
MARKDOWN_SUFFIXES = (".mdx", ".markdown", ".md")
JEKYLL_COLLECTION = "_"  # what a Jekyll collection's folder name starts with
# A repository's own files translated beside the original (README_zh.md, README-ko.md, CONTRIBUTING_CN.md,
# README.ja.md beside README.md): the name says what the page is, as a Docusaurus i18n folder does, so one page
# makes its language. Other names with a code after them are words as often (client-id.md, sort_ro.md, rotate-ca.md).
_REPOSITORY_FILE = re.compile(r"readme|contributing|code[-_]of[-_]conduct|security|changelog|adopters", re.IGNORECASE)
_TRANSLATED_REPOSITORY_FILE = re.compile(rf"({_REPOSITORY_FILE.pattern})[-_]({_CODE.pattern})", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Copy:
    """A path seen as one copy of a page: `page` names the page whatever the copy (the language part of the path
    replaced by `*`, or the path of the current original), `language` is ORIGINAL for a path that names none, and
    `version` names an old version (None: the current one), `newer` says it is newer than the current one (an
    unreleased "next"). `structural`: the site's layout says so (Docusaurus folders, version trees), so no count of
    shared pages is needed to believe it."""

    language: str
    page: str
    version: str | None = None
    structural: bool = False
    newer: bool = False

    @property
    def version_note(self) -> str | None:
        """How a hit names a version other than the current one: `3.4 (old)`, `next (unreleased)`."""
        if self.version is None:
            return None
        return f"{self.version} ({NEWER if self.newer else OLD})"


def _base(language: str) -> str:
    """A language tree's language without its region or script (`pt` of `pt-br`), aliases as their ISO code."""
    code = language.split("-")[0]
    return _ALIASES.get(code, code)


def _code(text: str) -> str | None:
    match = _CODE.fullmatch(text)
    if match is None or match.group(1).lower() not in LANGUAGE_CODES:
        glued = text.lower()
        if _REGIONAL_CODE3.fullmatch(text) is not None:
            return glued.replace("_", "-")
        return f"{glued[:2]}-{glued[2:]}" if glued in GLUED_CODES else None
    return text.lower().replace("_", "-")


def _one_page(path: str) -> str:
    """`path` with its markdown extension written as `.md`, so a page's .md and .mdx copies are one page."""
    for suffix in MARKDOWN_SUFFIXES:
        if path.endswith(suffix):
            return path[: -len(suffix)] + ".md"
    return path


def language_folder(folder: str) -> bool:
    """Whether a folder's own name is a language code (`docs/de`, `content/zh`, Jekyll's `_ja`)."""
    return _folder_code(folder.rsplit("/", 1)[-1]) is not None


def _folder_code(part: str) -> str | None:
    """The language a folder's name is the code of (`de`), written as a Jekyll collection too (`_de`)."""
    return _code(part[1:] if part.startswith(JEKYLL_COLLECTION) else part)


def _version(part: str) -> str | None:
    """`2.x` of a Docusaurus version folder `version-2.x`; None for any other name."""
    if part.startswith(VERSION_PREFIX) and len(part) > len(VERSION_PREFIX):
        return part[len(VERSION_PREFIX) :]
    return None


def _docs_folder(plugin: str) -> str:
    """The folder a Docusaurus docs plugin reads: `docs` for the default one, its id for `...-docs-<id>`."""
    return "docs" if plugin == DOCS_PLUGIN else plugin[len(DOCS_PLUGIN) + 1 :]


@dataclass(frozen=True, slots=True)
class _TranslatedDocs:
    """A path under a Docusaurus docs plugin's i18n folder: `i18n/<language>/<plugin>/<version folder>/<page>`."""

    language: str
    folder: str  # the docs folder the plugin reads: `docs`, or a plugin id's own (`api`)
    version: str  # its version folder: `current`, `version-30.4`
    rest: list[str]  # the page's path below it, one or more parts


def _translated_docs(parts: list[str], index: int) -> _TranslatedDocs | None:
    """`parts[index:]` as a Docusaurus docs translation (_TranslatedDocs), else None: what translated_tree and
    docusaurus_copy both read."""
    if parts[index] != I18N_FOLDER or index + 4 >= len(parts):
        return None
    language, plugin, version = _code(parts[index + 1]), parts[index + 2], parts[index + 3]
    if language is None or (plugin != DOCS_PLUGIN and not plugin.startswith(DOCS_PLUGIN + "-")):
        return None
    if version != CURRENT_VERSION and _version(version) is None:
        return None
    return _TranslatedDocs(language, _docs_folder(plugin), version, parts[index + 4 :])


def translated_tree(path: str) -> tuple[str, str, str] | None:
    """(the tree's folder, its versions' folder, the page's path in it) whose translation a Docusaurus docs path
    under i18n/ is: `("docs", "", "x.md")` for `i18n/ko/docusaurus-plugin-content-docs/current/x.md` (the docs
    folder itself), `("version-30.4", "versioned_docs", "x.md")` for `.../version-30.4/x.md`, `("version-2",
    "api_versioned_docs", "x.md")` for a plugin with id `api`; None for any other path."""
    parts = path.split("/")
    for index in range(len(parts)):
        docs = _translated_docs(parts, index)
        if docs is None:
            continue
        rest = "/".join(docs.rest)
        if docs.version == CURRENT_VERSION:
            return docs.folder, "", rest
        return docs.version, VERSIONED_DOCS if docs.folder == "docs" else f"{docs.folder}_{VERSIONED_DOCS}", rest
    return None


def docusaurus_copy(path: str) -> Copy | None:
    """The Copy of a Docusaurus translation (`i18n/ko/docusaurus-plugin-content-docs/current/x.md` of `docs/x.md`,
    `.../version-2.x/x.md` of it too, as version 2.x) or old version (`versioned_docs/version-2.x/x.md` of
    `docs/x.md`); None for any other path. Its page is the path of the current original."""
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        prefix = parts[:index]
        docs = _translated_docs(parts, index)
        if docs is not None:
            version = None if docs.version == CURRENT_VERSION else _version(docs.version)
            page = _one_page("/".join([*prefix, docs.folder, *docs.rest]))
            return Copy(docs.language, page, version, structural=True)
        plugin = parts[index + 2] if index + 3 < len(parts) else ""
        if part == I18N_FOLDER and plugin.startswith(PLUGIN_PREFIX) and not plugin.startswith(DOCS_PLUGIN):
            language = _code(parts[index + 1])
            if language is None:
                continue
            folders = PLUGIN_FOLDERS.get(plugin, (plugin,))
            return Copy(language, _one_page("/".join([*prefix, *folders, *parts[index + 3 :]])), None, structural=True)
        if (part == VERSIONED_DOCS or part.endswith("_" + VERSIONED_DOCS)) and index + 2 < len(parts):
            version = _version(parts[index + 1])
            if version is None:
                continue
            folder = "docs" if part == VERSIONED_DOCS else part[: -len(VERSIONED_DOCS) - 1]
            page = _one_page("/".join([*prefix, folder, *parts[index + 2 :]]))
            return Copy(ORIGINAL, page, version, structural=True)
    return None


def copy_of(path: str) -> Copy | None:
    """The Copy of `path` if the site's layout makes it one (docusaurus_copy), some folder of it is a language code
    (`docs/de/x.md`; a Jekyll collection `_ja/tour/x.md`, docs.scala-lang's translation of its `_tour/x.md`) or its
    name ends in one (`x.de.md`); None otherwise. The last two are only candidates:
    LanguageTrees decides whether the site has such trees."""
    found = docusaurus_copy(path)
    if found is not None:
        return found
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        language = _folder_code(part)
        if language is not None:
            below = parts[index + 1 :]
            if part.startswith(JEKYLL_COLLECTION) and len(below) > 1:
                below[0] = JEKYLL_COLLECTION + below[0]  # a Jekyll language collection's tour/ translates _tour/
            return Copy(language, _one_page("/".join([*parts[:index], "*", *below])))
    pieces = parts[-1].split(".")
    if len(pieces) >= 3:
        language = _code(pieces[-2])
        if language is not None:
            return Copy(language, _one_page("/".join([*parts[:-1], ".".join([*pieces[:-2], "*", pieces[-1]])])))
    named = _TRANSLATED_REPOSITORY_FILE.fullmatch(pieces[0]) if len(pieces) == 2 else None
    language = _code(named.group(2)) if named is not None else None
    if named is not None and language is not None:  # README_zh.md, CONTRIBUTING-ko.md beside README.md
        return Copy(language, _one_page("/".join([*parts[:-1], f"{named.group(1)}.*.{pieces[1]}"])), structural=True)
    return None


def _original_pages(path: str) -> Iterator[str]:
    """The pages an untagged `path` may be the original of, as copy_of names them: itself (Docusaurus's docs/x.md),
    `x.*.md` (beside `x.de.md`), and `a/*/x.md`, `*/a/x.md` (beside `a/de/x.md`, `de/a/x.md`: a language folder in
    or beside the original's own tree, as Starlight, VitePress and MkDocs keep them)."""
    page = _one_page(path)
    yield page
    yield _suffix_page(path)
    parts = page.split("/")
    for cut in range(len(parts) - 1, -1, -1):
        yield "/".join([*parts[:cut], "*", *parts[cut:]])


def _suffix_page(path: str) -> str:
    """The page `x.md` is the untagged original of in a suffix-style tree (`x.de.md` beside it): `x.*.md`."""
    head, _, name = _one_page(path).rpartition("/")
    stem = name[: -len(".md")] if name.endswith(".md") else name
    return f"{head}/{stem}.*.md" if head else f"{stem}.*.md"


def version_rank(version: str | None, newer: bool = False) -> tuple[int, ...]:
    """Sort key of a version, newest first: the current one (None), then old ones by their numbers from the highest,
    then those newer than the current one (unreleased)."""
    if version is None:
        return ()
    return (2 if newer else 1, *(-int(number) for number in re.findall(r"[0-9]+", version)[:4]))


@dataclass(frozen=True, slots=True)
class LanguageTrees:
    """The languages of a folder's parallel trees, by how many pages each holds (most first; ORIGINAL for copies
    whose path names no language), and the pages held by more than one copy (languages or versions); empty for
    none. `versions`: the folder's version trees (scree.content.versions), whose pages are copies of their current
    page; `original_main`: the untagged tree is the main language whatever the shared counts say (issue 32)."""

    counts: tuple[tuple[str, int], ...] = ()
    pages: frozenset[str] = frozenset()
    versions: VersionTrees = field(default_factory=VersionTrees)
    original_main: bool = False

    @property
    def active(self) -> bool:
        """Whether the folder has any copies to fold: translations, version trees or pages named for versions."""
        return bool(self.counts) or bool(self.versions.families) or bool(self.versions.superseded)

    @classmethod
    def of(cls, paths: Iterable[str], versions: VersionTrees | None = None) -> LanguageTrees:
        """Languages whose copies share at least MIN_SHARED_PAGES pages with another copy's (any number for a
        Docusaurus i18n folder, which says what it is); a path naming no language is the original of the page it
        names, or of `x.*.md` for `x.md` beside `x.de.md`.

        The main language (issue 32): beside a Docusaurus i18n folder the untagged tree is the original, and stays
        the main language unless a translation holds more current pages than it (one page shared between docs/ and
        i18n/de/ once made German the main language); beside language folders of its own, unless a translation
        holds more than UNTAGGED_MAIN_SHARE x its pages; else the language with the most pages."""
        paths = list(paths)
        every = {path: copy_of(path) for path in paths}
        own = {
            path: copy
            for path, copy in every.items()
            if copy is not None and copy.structural and copy.version is None and _repository_file(copy.page)
        }
        copies = {path: None if path in own else copy for path, copy in every.items()}
        variants: dict[str, set[tuple[str, str | None]]] = {}
        structural: set[str] = set()
        for copy in copies.values():
            if copy is not None:
                variants.setdefault(copy.page, set()).add((copy.language, copy.version))
                if copy.structural:
                    structural.add(copy.language)
        for path, copy in copies.items():
            if copy is None:
                for page in _original_pages(path):
                    if page in variants:
                        variants[page].add((ORIGINAL, None))
                        break
        counts: Counter[str] = Counter()
        shared = set()
        for page, found in variants.items():
            if len(found) > 1:
                counts.update({language for language, _ in found})
                shared.add(page)
        kept = [(language, n) for language, n in counts.items() if n >= MIN_SHARED_PAGES or language in structural]
        homes = _homes(copies)
        kept += _beside_kept(counts, {language for language, _ in kept}, homes)
        # the largest first, the main language unless the untagged tree is the original: the one with the most pages
        # (FastAPI's docs/en/ beside twelve complete translations: every language shared 125 pages)
        pages = _pages_per_language(copies, homes)
        ordered = tuple(sorted(kept, key=lambda pair: (-max(pages[pair[0]], pair[1]), -pair[1], _tie(pair[0]))))
        original_main = _original_is_main(copies, structural) or _untagged_is_main(ordered, pages)
        # a repository's README_zh.md beside README.md folds into it and decides nothing of the site's languages,
        # nor does README.es.md where Spanish is no tree of the site's (vue-element-admin's README.es.md, README.ja.md)
        listed = {language for language, _ in ordered}
        own.update(
            (path, copy)
            for path, copy in copies.items()
            if copy is not None and copy.version is None and copy.language not in listed and _repository_file(copy.page)
        )
        translated = _translated_repository_files(own, copies)
        shared.update(translated)
        extra = Counter(language for languages in translated.values() for language in languages - listed)
        ordered += tuple(sorted(extra.items(), key=lambda pair: (pair[0] != ORIGINAL, _tie(pair[0]))))
        original_main = original_main or (not listed and bool(translated))
        return cls(ordered, frozenset(shared), versions or VersionTrees(), original_main)

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(language for language, _ in self.counts)

    @property
    def main(self) -> str | None:
        """The language with the most pages: the site's own, which the others translate."""
        if self.original_main:
            return ORIGINAL
        return self.counts[0][0] if self.counts else None

    def copy(self, path: str) -> Copy | None:
        """`path` as a copy of a page that has others: its version tree's copy (issue 32) in its language, else
        copy_of(path) when its language is one of these trees' or the site's layout says so (so `ml/intro.md` stays
        a plain path), or the original of such a page."""
        version = self.versions.copy(path)
        if version is not None:
            base = version.page
            found = self._language_copy(base, versions_too=False)
            found = found if found is not None else Copy(ORIGINAL, _one_page(base), structural=True)
            if version.tree.status != CURRENT:
                return replace(found, version=version.tree.label, structural=True, newer=version.tree.status == NEWER)
            found = replace(found, version=None, structural=True)
            # a language folder inside the current tree, keeping the old versions it translates (Starlight's
            # src/content/docs/fr/2.0/ beside src/content/docs/2.0/)
            return found if found.language == ORIGINAL else self._translated_version(path, found)
        found = self._language_copy(path, versions_too=True)
        translated = self._tree_translated(path) if found is not None and found.language != ORIGINAL else None
        if found is not None and found.language != ORIGINAL and translated is None:
            return self._translated_version(path, found)
        if found is None or translated is None:
            return found
        tree, rest = translated
        original = self.versions.copy(f"{tree.root}/{rest}")  # the page its untranslated copies fold into
        page = original.page if original is not None else found.page
        if tree.status == CURRENT:  # the translation of the current version (Jest's version-30.4, not its "next")
            return replace(found, page=page, version=None)
        return replace(found, page=page, version=tree.label, newer=tree.status == NEWER)

    def _translated_version(self, path: str, found: Copy) -> Copy:
        """A translation in a language folder (`es/v1/x.md`) as a copy of what its untagged original (`v1/x.md`) is
        a copy of: a page of an old version tree in that language (firecrawl-docs' es/v1/ beside v1/), folded with
        the current page and marked so; a page with no original, in the place of a version tree another language
        holds (_tree_in_another_language), marked as that tree's; else `found` as it is."""
        parts, keys = path.split("/"), found.page.split("/")
        if "*" not in keys or len(parts) != len(keys) or not self.versions.families:
            return found
        original = self.versions.copy("/".join(part for part, key in zip(parts, keys, strict=True) if key != "*"))
        if original is None:
            tree = self._tree_in_another_language(parts, keys.index("*"))
            if tree is None or tree.status == CURRENT:
                return found
            return replace(found, version=tree.label, newer=tree.status == NEWER)
        if original.tree.status == CURRENT:
            return found
        current = self._language_copy(original.page, versions_too=False)
        page = current.page if current is not None else _one_page(original.page)
        return replace(found, page=page, version=original.tree.label, newer=original.tree.status == NEWER)

    def _tree_in_another_language(self, parts: Sequence[str], at: int) -> Tree | None:
        """The version tree at the same place in another language's folder (`parts[at]`) as the page `parts`, in a
        language holding none of its family (jx-docs' content/es/docs/ of v2, with no content/es/v3/, as
        content/en/docs/): the main language's first."""
        found = [
            tree
            for family in self.versions.families
            for tree in family
            if len(parts) > len(root := tree.root.split("/")) > at
            and root[:at] == list(parts[:at])
            and root[at + 1 :] == list(parts[at + 1 : len(root)])
        ]
        return min(found, key=lambda tree: tree.root.split("/")[at] != self.main, default=None)

    def version_tree(self, path: str) -> Tree | None:
        """The version tree `path` is in, or the one its Docusaurus translation's folder translates
        (`i18n/zh/…/version-v1.13/` is of versioned_docs/version-v1.13/); None for neither."""
        found = self.versions.copy(path)
        if found is not None:
            return found.tree
        translated = self._tree_translated(path)
        return translated[0] if translated is not None else None

    def _tree_translated(self, path: str) -> tuple[Tree, str] | None:
        """The version tree a Docusaurus translation's folder translates (its `current/` the docs folder, its
        `version-N/` versioned_docs/version-N) when exactly one found tree is it, and the page's path in it: the
        tree's status, not the folder's name, says whether the translation is of the current version."""
        named = translated_tree(path)
        if named is None or not self.versions.families:
            return None
        folder, parent, rest = named

        def translates(tree: Tree) -> bool:
            above, _, name = tree.root.rpartition("/")
            if name != folder:
                return False
            return tree.version is None if not parent else above.rpartition("/")[2] == parent

        found = [tree for family in self.versions.families for tree in family if translates(tree)]
        return (found[0], rest) if len(found) == 1 else None

    def _language_copy(self, path: str, *, versions_too: bool) -> Copy | None:
        found = copy_of(path)
        if found is not None and not versions_too and found.language == ORIGINAL and found.version is not None:
            found = None  # a Docusaurus versioned_docs path inside a version tree: the tree says which version
        if found is not None:
            return found if found.structural or found.language in self.languages else None
        for page in _original_pages(path):
            if page in self.pages:
                return Copy(ORIGINAL, page)
        return None

    def preference(self, path: str, wanted: str | None, named: Collection[str] = ()) -> tuple[int, ...]:
        """Sort key of the copies of one page, the one to show first: in the query's language, else in the main one,
        else the untagged original, else any; then the current version, then the newest. A path that is no copy
        counts as a current original, unless it is named for an older version (versions rule 7: a page beside the
        newer releases of its text) the query does not name (`named`); one the query names comes first, as does a
        copy in a version tree the query names (VersionTrees.named_by)."""
        copy = self.copy(path)
        language, version = (ORIGINAL, None) if copy is None else (copy.language, copy.version)
        # the untagged original before other translations (a README.md beside README_CN.md, where the site's main
        # language is a tree of its own: jx-docs' content/en/)
        rank = 0 if language == wanted else 1 if language == self.main else 2 if language == ORIGINAL else 3
        # only outside the copies: a current tree's page about an old release (rule 6) still stands for its copies
        superseded = self.versions.superseded.get(path) if copy is None else None
        asked = superseded is not None and names_version(newest_named(named), superseded, page=True)
        asked = asked or self.named_version(path, named)
        if superseded is not None and not asked:
            version = superseded
        return (rank, not asked, *version_rank(version, copy is not None and copy.newer))

    def version_note(self, path: str, copy: Copy | None) -> str | None:
        """How a hit on `path` (`copy`: self.copy(path), which the caller has) names its version: its copy's in
        another version tree (Copy.version_note), else the old release a current page is about (versions rules 6-8:
        upgrade or release notes), as `3.2 (old)`."""
        if copy is not None and copy.version is not None:
            return copy.version_note
        older = self.versions.superseded.get(path)
        return None if older is None else f"{older} ({OLD})"

    def named_version(self, path: str, named: Collection[str]) -> bool:
        """Whether `path` is in a version tree the query names and not the current one (VersionTrees.named_by), or in
        a Docusaurus translation of such a tree (`i18n/ko/…/version-29.7/` for "in 29.7")."""
        if not named:
            return False
        if self.versions.named_by(path, named):
            return True
        translated = self._tree_translated(path)
        return translated is not None and self.versions.tree_named(translated[0], named)

    def query_language(self, query: str) -> str | None:
        """The trees' language the query is most likely in: its script, then its function words, else the main.
        An ORIGINAL tree is read as English unless `en` is a tree of its own; then a query of no script of its own
        and no function words (`consumer group load balancing`) is read as English, not as the original, which is
        in another language (RocketMQ's docs/ in Chinese beside i18n/en/), nor as a main language written in another
        script (Nacos's zh-cn/ beside en/; EMQX's zh_CN/ beside en_US/: an English tree under a regional code)."""
        if not self.counts:
            return self.main
        for script, candidates in _SCRIPTS:
            if script.search(query):
                found = [language for language in self.languages if _base(language) in candidates]
                if script is _HAN:
                    found.sort(key=lambda language: candidates.index(_base(language)))
                return found[0] if found else self.main
        words = [word.casefold() for word in _WORD.findall(query)]
        best, best_hits = self.main, 0.0
        english = next((language for language in self.languages if _base(language) == "en"), None)  # en, en-us
        for language in self.languages:
            code = "en" if language == ORIGINAL and english is None else _base(language)
            stops = _STOP_SETS.get(code)
            hits = sum(_STOP_SHARE[word] for word in words if word in stops) if stops else 0.0
            if hits > best_hits:
                best, best_hits = language, hits
        other_script = best is not None and _base(best) in _OTHER_SCRIPTS
        if not best_hits and english is not None and (best == ORIGINAL or other_script):
            return english
        return best

    def sync_order(self, paths: list[str]) -> list[str]:
        """`paths` with the main language's current copies first, other translations and old versions last (R-S3:
        a first sync makes the likeliest pages searchable first); order is otherwise kept."""
        if not self.counts:
            return paths
        rank = {language: index for index, (language, _) in enumerate(self.counts)}

        def key(path: str) -> tuple[int, bool]:
            copy = self.copy(path)
            return (0, False) if copy is None else (rank.get(copy.language, len(rank)), copy.version is not None)

        return sorted(paths, key=key)


def _repository_file(page: str) -> bool:
    """Whether a copy's page is a repository's own file translated beside it (`README.*.md` of README_zh.md; as a
    structural copy: vant's component pages `README.zh-CN.md` beside `README.md` are the site's suffix tree)."""
    name = page.rpartition("/")[2]
    return ".*." in name and _REPOSITORY_FILE.fullmatch(name.partition(".*.")[0]) is not None


def _translated_repository_files(own: Mapping[str, Copy], copies: Mapping[str, Copy | None]) -> dict[str, set[str]]:
    """The repository's own files translated beside their original (`README.*.md`: README.md beside README_zh.md),
    each with its languages, the original's among them."""
    variants: dict[str, set[str]] = {}
    for translation in own.values():
        variants.setdefault(translation.page, set()).add(translation.language)
    for path, copy in copies.items():
        if copy is None and path not in own and _suffix_page(path) in variants:
            variants[_suffix_page(path)].add(ORIGINAL)
    return {page: languages for page, languages in variants.items() if ORIGINAL in languages}


def _homes(copies: dict[str, Copy | None]) -> dict[str, set[str]]:
    """Where each language's folders sit: the path before the language part (`content/` of `content/ko/x.md`,
    `packages/docs/` of `packages/docs/zh/x.md`)."""
    homes: dict[str, set[str]] = defaultdict(set)
    for copy in copies.values():
        if copy is not None and "*" in copy.page:
            homes[copy.language].add(copy.page.partition("*")[0])
    return homes


def _pages_per_language(copies: dict[str, Copy | None], homes: dict[str, set[str]]) -> Counter[str]:
    """How many pages each language holds: its copies' distinct pages (a Docusaurus translation's versions are one
    page); for the untagged original, the untagged paths where the translations' language folders sit (vuejs/
    router's packages/docs/ beside packages/docs/zh/), where it has pages no translation has yet."""
    distinct: dict[str, set[str]] = defaultdict(set)
    for copy in copies.values():
        if copy is not None:
            distinct[copy.language].add(copy.page)
    counts = Counter({language: len(found) for language, found in distinct.items()})
    where = tuple(set().union(*homes.values()))
    counts[ORIGINAL] += sum(path.startswith(where) for path, copy in copies.items() if copy is None)
    return counts


def _tie(language: str) -> tuple[bool, str]:
    """Between languages of as many pages, English first, then by name: complete translations tie on every count
    (expressjs.com's ten languages, 62 pages each, made German the main language by name), and English is what
    most docs are written in first."""
    return _base(language) != "en", language


def _untagged_is_main(ordered: Sequence[tuple[str, int]], pages: Counter[str]) -> bool:
    """Whether the untagged tree, a tree among `ordered`, is the original: unless a translation holds more than twice
    its pages (vuejs/router's Chinese folder holds 61 pages to the English 50, its generated API pages translated)."""
    languages = [language for language, _ in ordered]
    if ORIGINAL not in languages:
        return False
    largest = max((pages[language] for language in languages if language != ORIGINAL), default=0)
    return pages[ORIGINAL] * UNTAGGED_MAIN_SHARE >= largest


def _beside_kept(counts: Counter[str], kept: set[str], homes: dict[str, set[str]]) -> list[tuple[str, int]]:
    """The languages of `counts` not `kept` whose folder sits beside a kept language's (`content/ko/` beside
    `content/en/` and `content/ja/`): a tree with one page translated yet is a translation all the same."""
    beside = set().union(*(homes[language] for language in kept)) if kept else set()
    return [(language, n) for language, n in counts.items() if language not in kept and homes[language] & beside]


def _original_is_main(copies: dict[str, Copy | None], structural: set[str]) -> bool:
    """Whether the untagged tree beside a Docusaurus i18n folder holds at least as many pages as any translation's
    current copies of its folders: then it is the original, and the main language. Translated pages of a plugin whose
    folder is not in the repository (KubeVela's 18 Chinese video pages) are left out of the count."""
    translated = {language for language in structural if language != ORIGINAL}
    if not translated:
        return False
    tops = {copy.page.split("/", 1)[0] for copy in copies.values() if copy is not None and copy.language in translated}
    untagged = Counter(path.split("/", 1)[0] for path, copy in copies.items() if copy is None)
    tops = {top for top in tops if untagged[top]}  # a translated plugin whose original is not here says nothing
    original = sum(untagged[top] for top in tops)
    per_language: Counter[str] = Counter(
        copy.language
        for copy in copies.values()
        if copy is not None and copy.version is None and copy.structural and copy.page.split("/", 1)[0] in tops
    )
    return original > 0 and original >= max((per_language[language] for language in translated), default=0)
