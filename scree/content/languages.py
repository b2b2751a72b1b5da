"""Parallel language trees of one docs site (`docs/en/x.md` beside `docs/de/x.md`, or `x.md` beside `x.de.md`): which
language a path is in, which page it is a copy of, and which language a query is likely in (pure: no I/O, #11)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

# ISO 639-1 codes that docs sites use for their translations (FastAPI, MkDocs i18n, Docusaurus, Hugo, Sphinx).
LANGUAGE_CODES = frozenset(
    "af am ar az be bg bn bs ca cs cy da de el en eo es et eu fa fi fr ga gl gu he hi hr hu hy id is it ja ka kk km "
    "kn ko ky lo lt lv mk ml mn mr ms my nb ne nl nn no pa pl pt ro ru si sk sl sq sr sv sw ta te th tl tr uk ur uz "
    "vi yo zh".split()
)
# `en`, `pt-BR`, `pt_br`, `zh-hant`, `es-419`: a language code and an optional region or script.
_CODE = re.compile(r"([A-Za-z]{2})(?:[-_](?:[A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3}))?")
MIN_SHARED_PAGES = 2  # pages present in two languages before a folder or suffix counts as a language tree

# Words that say which language a short query is in: frequent function words. A word in two lists counts for both;
# a tie goes to the language with more pages (the main one first).
_STOPWORDS = {
    "en": "the a an is are do does how what why when where which to of in on for with and or i my can should",
    "de": "der die das ein eine ist sind wie was warum wann wo welche zu von mit und oder ich mein kann nicht den dem",
    "es": "el la los las un una es son cómo como qué que por para con y o mi puedo se del al",
    "fr": "le les une est sont comment quoi pourquoi quand où quel pour avec et ou je mon peut des du au",
    "pt": "o os as um uma é são como por que para com e ou eu meu posso do da dos das ao",
    "it": "il lo gli una è sono come perché quando dove quale per con e o io mio posso del della",
    "nl": "de het een is zijn hoe wat waarom wanneer waar welke voor met en of ik mijn kan van",
    "tr": "bir ve ile için nasıl ne neden nerede hangi bu şu mi mı mu mü ben benim",
    "pl": "jest są jak co dlaczego kiedy gdzie który dla z i lub ja mój mogę się nie",
}
_STOP_SETS: dict[str, frozenset[str]] = {lang: frozenset(words.split()) for lang, words in _STOPWORDS.items()}
_WORD = re.compile(r"[^\W\d_]+")
# Scripts that name their language outright (a query in Cyrillic is not in English).
_SCRIPTS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    (re.compile(r"[\u3040-\u30ff]"), ("ja",)),
    (re.compile(r"[\uac00-\ud7af]"), ("ko",)),
    (re.compile(r"[\u4e00-\u9fff]"), ("zh", "ja")),
    (re.compile(r"[\u0400-\u04ff]"), ("ru", "uk", "bg", "sr", "mk", "be", "kk")),
    (re.compile(r"[\u0600-\u06ff]"), ("ar", "fa", "ur")),
    (re.compile(r"[\u0590-\u05ff]"), ("he",)),
    (re.compile(r"[\u0e00-\u0e7f]"), ("th",)),
    (re.compile(r"[\u0370-\u03ff]"), ("el",)),
    (re.compile(r"[\u0900-\u097f]"), ("hi", "mr", "ne")),
)


@dataclass(frozen=True, slots=True)
class Copy:
    """A path seen as one language's copy of a page: `page` is the path with the language part replaced by `*`."""

    language: str
    page: str


def _code(text: str) -> str | None:
    match = _CODE.fullmatch(text)
    if match is None or match.group(1).lower() not in LANGUAGE_CODES:
        return None
    return text.lower().replace("_", "-")


def copy_of(path: str) -> Copy | None:
    """The language and page of `path` if some folder of it is a language code (`docs/de/x.md`) or its name ends in
    one (`x.de.md`); None otherwise. Only a candidate: LanguageTrees decides whether the site has such trees."""
    parts = path.split("/")
    for index, part in enumerate(parts[:-1]):
        language = _code(part)
        if language is not None:
            return Copy(language, "/".join([*parts[:index], "*", *parts[index + 1 :]]))
    pieces = parts[-1].split(".")
    if len(pieces) >= 3:
        language = _code(pieces[-2])
        if language is not None:
            return Copy(language, "/".join([*parts[:-1], ".".join([*pieces[:-2], "*", pieces[-1]])]))
    return None


@dataclass(frozen=True, slots=True)
class LanguageTrees:
    """The languages of a folder's parallel trees, by how many pages each holds (most first); empty for none."""

    counts: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, paths: Iterable[str]) -> LanguageTrees:
        """Languages whose copies share at least MIN_SHARED_PAGES pages with another language's."""
        languages_of: dict[str, set[str]] = {}
        for path in paths:
            copy = copy_of(path)
            if copy is not None:
                languages_of.setdefault(copy.page, set()).add(copy.language)
        counts: Counter[str] = Counter()
        for languages in languages_of.values():
            if len(languages) > 1:
                counts.update(languages)
        kept = [(language, n) for language, n in counts.items() if n >= MIN_SHARED_PAGES]
        return cls(tuple(sorted(kept, key=lambda pair: (-pair[1], pair[0]))))

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(language for language, _ in self.counts)

    @property
    def main(self) -> str | None:
        """The language with the most pages: the site's own, which the others translate."""
        return self.counts[0][0] if self.counts else None

    def copy(self, path: str) -> Copy | None:
        """`copy_of(path)` when its language is one of these trees' (so `ml/intro.md` stays a plain path)."""
        found = copy_of(path)
        return found if found is not None and found.language in self.languages else None

    def query_language(self, query: str) -> str | None:
        """The trees' language the query is most likely in: its script, then its function words, else the main."""
        if not self.counts:
            return None
        for script, candidates in _SCRIPTS:
            if script.search(query):
                for language in self.languages:
                    if language.split("-")[0] in candidates:
                        return language
                return self.main
        words = [word.casefold() for word in _WORD.findall(query)]
        best, best_hits = self.main, 0
        for language in self.languages:
            stops = _STOP_SETS.get(language.split("-")[0])
            hits = sum(word in stops for word in words) if stops else 0
            if hits > best_hits:
                best, best_hits = language, hits
        return best

    def sync_order(self, paths: list[str]) -> list[str]:
        """`paths` with the main language's copies first and other translations last (R-S3: a first sync makes
        the likeliest pages searchable first); order is otherwise kept."""
        if not self.counts:
            return paths
        rank = {language: index for index, (language, _) in enumerate(self.counts)}

        def key(path: str) -> int:
            copy = self.copy(path)
            return 0 if copy is None else rank[copy.language]

        return sorted(paths, key=key)
