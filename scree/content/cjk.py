"""Text without spaces between words (Chinese, Japanese, Korean) as overlapping character pairs: what the CJK
keyword table indexes for a chunk (the store's writers) and what a query's CJK runs are matched by (scree.search.query).

unicode61 keeps a whole run of CJK characters as one token, so "搜索" never matched inside "…空格，搜索应该…".
Each CJK run is instead indexed as its overlapping pairs ("中文文本" -> "中文 文文 文本", as Lucene's CJK
analyzer does) in a table of its own, and a query's runs are OR-ed pairs ranked by bm25. On Rust by Example's
Chinese and Japanese docs (198 pages each, a page's title as the query, and "如何使用<title>？" /
"<title>の使い方は？" as a question): pairs MRR@5 0.764 / 0.621 (zh titles / questions) and 0.768 / 0.653 (ja),
against the unicode61 table's 0.797 / 0.221 and 0.775 / 0.041, and FTS5's trigram tokenizer's 0.629 / 0.449 and
0.711 / 0.576 (a trigram cannot match the many two-character words: 搜索, 变量, 闭包).
"""

from __future__ import annotations

import re

# Scripts written without spaces between words (and Hangul, whose particles attach to words): hiragana, katakana
# (with its phonetic extensions and half-width forms), CJK ideographs (with extension A and compatibility
# ideographs) and Hangul syllables.
CJK_RUN = re.compile("[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+")


def apart_from_cjk(text: str) -> str:
    """`text` with a space on each side of every CJK run, as the word indexes read it: FTS5's unicode61 and
    PostgreSQL's parser take a run of letters of any script for one word, so the Latin words glued to Chinese in
    "Kubernetes上跑Vitess" (Vitess's Chinese docs glue 1,511 such pairs in 54 pages) were no words of their own. The
    CJK pairs table indexes the runs themselves (cjk_index_text)."""
    return CJK_RUN.sub(r" \g<0> ", text) if CJK_RUN.search(text) else text


def cjk_pairs(text: str) -> list[str]:
    """The overlapping character pairs of every CJK run in `text`, in order; a run of one character is itself."""
    pairs: list[str] = []
    for match in CJK_RUN.finditer(text):
        run = match.group(0)
        if len(run) == 1:
            pairs.append(run)
        else:
            pairs.extend(run[i : i + 2] for i in range(len(run) - 1))
    return pairs


def cjk_index_text(text: str) -> str:
    """What the CJK keyword table indexes for `text`: its CJK pairs joined by spaces ("" when it has none)."""
    if not _may_have_cjk(text):
        return ""
    return " ".join(cjk_pairs(text))


# The UTF-8 lead bytes of U+3000..U+DFFF and U+F000..U+FFFF, where every CJK_RUN character lies.
_NOT_CJK_LEAD_BYTES = bytes(b for b in range(256) if not (0xE3 <= b <= 0xED or b == 0xEF))


def _may_have_cjk(text: str) -> bool:
    """A quick no for the chunks without CJK, run on every chunk written: for 1.3 KB, 0.2 us when it is ASCII and
    7 us otherwise (a UTF-8 lead byte check), against 30-45 us for a CJK_RUN search."""
    if text.isascii():
        return False
    return bool(text.encode("utf-8", "surrogatepass").translate(None, _NOT_CJK_LEAD_BYTES))
