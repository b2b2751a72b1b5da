"""A query's analysis, done once per search (Query, analyse): its words, the terms and CJK pairs the keyword indexes
match (the store takes them as a KeywordMatch, plain words it quotes for its own engine, and never reads the query),
the symbols no tokenizer keeps, and the language it is most likely in. Pure: text in, records out."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import pairwise

from scree.content.cjk import CJK_RUN, cjk_pairs
from scree.content.languages import LanguageTrees
from scree.content.versions import query_versions
from scree.store.contract import KeywordMatch, KeywordTerm

# Letters and digits only: the same split unicode61 makes (and to_tsvector's), no query syntax of either engine.
_WORD = re.compile(r"[^\W_]+")
_DOTTED_WORD = re.compile(r"[^\W_]+(?:\.[^\W_]+)*")  # a version (v1.17) or a dotted name is one word of a sentence
MAX_QUERY_TERMS = 32  # a pasted page of text still makes a bounded query
# English function words, left out of an OR-query that has other words: each matches most chunks, so it costs FTS5
# a long posting list (bm25 over "the" is most of a 100 ms query at 100k chunks) and adds almost nothing to the rank.
# Lucene's English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET), lower case; a query of only these keeps them.
# With them, the words a question or a comparison is phrased in (#11): rare in documentation, so bm25 weighs them
# high ("versus" is in 8 lines of uv's docs), yet they name no topic. Docs train set, keyword mode: MRR 0.744 -> 0.769,
# Hit@3 0.817 -> 0.833; SciFact train keyword nDCG@10 0.7077 -> 0.7082 (its claims are not questions).
STOPWORDS = frozenset(
    (
        "a an and are as at be but by for if in into is it no not of on or such that the their then there these they "
        "this to was will with "
        "how what why when where which who whom do does did can could should would i me my we our you your vs versus"
    ).split()
)


# The particles an English phrasal verb takes, which docs often write joined to it as a noun or an adjective: "shut
# down" is "shutdown", "log in" "login", "tear down" "teardown", "roll back" "rollback". A query's verb and the
# particle after it add the joined word as a term too (keyword_terms), a word no index holds matching nothing.
# Express's "How do I shut down the server gracefully?" had its healthcheck-graceful-shutdown.mdx second, under a
# section on init systems (hybrid 7.55 against 8.00); with `shutdown` first by 15.1 to 4.2. Joining any two
# adjacent words instead matched identifiers and link targets ("after all": `afterAll`, "manual mock": the URL of
# ManualMocks.md in 32 chunks): bench.quality_versions hybrid MRR@5 Jest 0.828 -> 0.806, etcd 0.867 -> 0.842. With the
# particles only, those and the docs, translated, formats and generated-site sets do not move.
PARTICLES = frozenset("up down out off in on over back through away".split())


@dataclass(frozen=True, slots=True)
class Query:
    """One search's query as analysed once (analyse): every step of the search reads it from here."""

    text: str
    words: tuple[str, ...]  # content_words: its distinct words that carry its meaning
    match: KeywordMatch  # what the keyword indexes match
    language: str | None  # the language trees' language it is most likely in (LanguageTrees.query_language)
    versions: frozenset[str]  # the version numbers it names (versions.query_versions: `3.6` of "from 3.7 to 3.6")

    @property
    def mostly_cjk(self) -> bool:
        """Whether it is written mostly in CJK script: more than two Chinese, Japanese or Korean characters (about a
        word's worth) for each word of another script, a version one word ("FastAPIでCORSを設定するには？",
        "什么是 keyspace？" and "如何从v1.17升级到v1.18？" are; "how do I use the 数据面板" is not)."""
        cjk = sum(len(run) for run in CJK_RUN.findall(self.text))
        return cjk > 2 * len(_DOTTED_WORD.findall(CJK_RUN.sub(" ", self.text)))

    @property
    def folded_words(self) -> set[str]:
        """Its words in case-folded form, as versions.says_same compares them."""
        return {word.casefold() for word in self.words}


def analyse(text: str, trees: LanguageTrees) -> Query:
    """`text` analysed for a search over an index with the language trees `trees`."""
    versions = frozenset(query_versions(text))
    return Query(text, tuple(content_words(text)), keyword_match(text), trees.query_language(text), versions)


def keyword_match(text: str) -> KeywordMatch:
    """What the keyword indexes match for `text`: its terms, its distinct CJK pairs and its symbols."""
    terms = keyword_terms(text)
    return KeywordMatch(tuple(terms), tuple(cjk_terms(text, alone=not terms)), tuple(symbol_terms(text)))


def content_words(query: str) -> list[str]:
    """The distinct words of `query` that carry its meaning: STOPWORDS left out unless there is nothing else."""
    content: dict[str, str] = {}
    common: dict[str, str] = {}
    for match in _WORD.finditer(query):
        word = match.group(0)
        key = word.casefold()
        (common if key in STOPWORDS else content).setdefault(key, word)
        if len(content) >= MAX_QUERY_TERMS:
            break
    return list((content or common).values())


def words_of(text: str) -> list[str]:
    """`text`'s words in order, case-folded, each kept (STOPWORDS too: a phrase is read with them)."""
    return [word.casefold() for word in _WORD.findall(text)]


def keyword_terms(query: str) -> list[KeywordTerm]:
    """The terms of `query`'s distinct words, in order (first spelling kept); [] when it has none.

    CJK runs are left out (cjk_terms covers them). STOPWORDS are dropped unless the query has nothing else. A word
    written with a `*` right after it (`tok*`) is a prefix, as a searcher means it. Only letters and digits make a
    word, so AND, NEAR, `-`, `^`, `:` and quotes are never syntax to a store; lone surrogates and control characters
    are not words and are dropped.
    """
    content: dict[str, KeywordTerm] = {}
    common: dict[str, KeywordTerm] = {}
    text = CJK_RUN.sub(" ", query)  # CJK runs go to cjk_terms
    for match in _WORD.finditer(text):
        word = match.group(0)
        key = word.casefold()
        if key in STOPWORDS:
            common.setdefault(key, KeywordTerm(word))
            continue
        prefix = text.startswith("*", match.end())
        content.setdefault(key + "*" if prefix else key, KeywordTerm(word, prefix))
        if len(content) >= MAX_QUERY_TERMS:
            break
    for joined in phrasal_joins(text):
        if len(content) >= MAX_QUERY_TERMS:
            break
        content.setdefault(joined, KeywordTerm(joined))
    return list((content or common).values())


def phrasal_joins(text: str) -> list[str]:
    """Each verb of `text` and the particle after it (PARTICLES) as one word, case-folded, in order: "shut down" as
    "shutdown". The verb is a word of letters that is not a stop word, the two apart by spaces only."""
    words = list(_WORD.finditer(text))
    return [
        verb.group(0).casefold() + particle.group(0).casefold()
        for verb, particle in pairwise(words)
        if particle.group(0).casefold() in PARTICLES
        and verb.group(0).isalpha()
        and verb.group(0).casefold() not in STOPWORDS
        and not text[verb.end() : particle.start()].strip()
    ]


# Issue 32: the words a Chinese question is phrased in, and its commonest function characters, which the pairs of a
# run hold as they hold the words around them: "如何在本机运行Vitess？" asked for 何在 and 在本 too, and 何在, rare in
# docs, matched "用于描述如何在keyspace和分片中存储数据" above the page titled 本机运行Vitess. As STOPWORDS leave
# "how do I" out of an English question, these split a Chinese question's runs (one with no kana: Japanese is
# phrased otherwise, and its 的 and 和 are words). Chinese questions on Arthas' and Hexo's docs, keyword MRR@5 0.583 ->
# 0.708 and 0.810 -> 0.863, hybrid 0.604 -> 0.653 and 0.827 -> 0.869; FastAPI's Japanese ones unchanged.
_CHINESE_QUESTION = re.compile(
    "为什么|為什麼|如何|怎么|怎麼|怎样|怎樣|什么|什麼|哪些|哪个|哪個|是否|能否"  # how, what, why, which, whether
    "|[的了在是和与與吗嗎呢我你]"
)
# A Japanese question's phrasing the same way: its endings ("...するには？" to do..., "...とは？" what
# is..., "...ですか") and its question words. FastAPI's Japanese docs, 12 Japanese questions: keyword MRR@5
# 0.642 -> 0.743, hybrid 0.711 -> 0.812 (splitting at the particles を は が で と の も へ に too: 0.753).
_JAPANESE_QUESTION = re.compile("するには|には|とは|何ですか|ですか|ますか|どうやって|どのように|どうすれば|なぜ")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")


def cjk_terms(query: str, alone: bool = True) -> list[str]:
    """The distinct CJK pairs of `query`, in order, at most MAX_QUERY_TERMS; a question's runs split at the words it
    is phrased in (_JAPANESE_QUESTION where it has kana, else _CHINESE_QUESTION). Where that leaves no pair, the
    question's own pairs if they are `alone` (it has no other term), as STOPWORDS are kept in a query of only them:
    "什么是 keyspace？" asks for keyspace alone, "什么是？" for 什么 and 么是."""
    phrasing = _JAPANESE_QUESTION if _KANA.search(query) is not None else _CHINESE_QUESTION
    pairs = cjk_pairs(phrasing.sub(" ", query)) or (cjk_pairs(query) if alone else [])
    return list(dict.fromkeys(pairs))[:MAX_QUERY_TERMS]


# Issue 34: symbols the tokenizers drop (FTS5's unicode61 and PostgreSQL's to_tsvector both split on them), looked
# for as substrings instead: at most MAX_SYMBOL_TERMS of a query, each a non-ASCII symbol (emoji, arrows, ©, ±) with
# the marks that make it one emoji (variation selectors, skin tones, keycaps, tags, a ZWJ and the next symbol).
MAX_SYMBOL_TERMS = 4
_ZWJ = "\u200d"
_VARIATION = "\ufe0e\ufe0f"  # text or emoji presentation of the symbol before
_EMOJI_MARKS = frozenset(_VARIATION + "\u20e3") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
_TAGS = range(0xE0020, 0xE0080)  # the letters of a subdivision flag (England's, Scotland's)
_REGIONAL = range(0x1F1E6, 0x1F200)  # two of these are one country's flag


def _is_symbol(character: str) -> bool:
    return not character.isascii() and unicodedata.category(character)[0] == "S"


def symbol_terms(query: str) -> list[str]:
    """The distinct symbols of `query` no keyword index holds a token for ("🚀", "👩‍💻", "→"), first MAX_SYMBOL_TERMS
    in order: what the search looks for as substrings of chunk text (KeywordMatch.symbols)."""
    found: dict[str, None] = {}
    end = len(query)
    at = 0
    while at < end and len(found) < MAX_SYMBOL_TERMS:
        if not _is_symbol(query[at]):
            at += 1
            continue
        stop = at + 1
        if ord(query[at]) in _REGIONAL and stop < end and ord(query[stop]) in _REGIONAL:
            stop += 1
        while stop < end:
            character = query[stop]
            if character in _EMOJI_MARKS or ord(character) in _TAGS:
                stop += 1
            elif character == _ZWJ and stop + 1 < end and _is_symbol(query[stop + 1]):
                stop += 2
            else:
                break
        found.setdefault(query[at:stop].rstrip(_VARIATION), None)  # "❤️" finds "❤" too, as "❤" finds "❤️"
        at = stop
    return list(found)
