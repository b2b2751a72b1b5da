"""Pages of questions (issue 32): a FAQ, told by its headings, not its name. Pure.

A FAQ entry is a short answer phrased as the question an agent asks ("What does 'mvcc: database space exceeded'
mean?"), so it matches a question as well as the page that explains the procedure does, and often points to that
page. The engine moves a FAQ page's chunks ranking.FAQ_RANKS places down among the pages, past pages the query's
words found: the explaining page first where the two rank alike, the FAQ still among the first hits.
"""

from __future__ import annotations

from collections.abc import Iterable

MIN_QUESTIONS = 4  # distinct question headings: a page with a question or two is a guide
QUESTION_SHARE = 0.5  # of its distinct headings


def is_question_page(headings: Iterable[str]) -> bool:
    """True for a page whose chunks' headings (trails, "Title > Section > Entry") are mostly questions: at least
    MIN_QUESTIONS distinct last headings ending in "?", and at least QUESTION_SHARE of them."""
    entries = {heading.rsplit(" > ", 1)[-1].strip() for heading in headings}
    entries.discard("")
    questions = sum(entry.endswith("?") for entry in entries)
    return questions >= MIN_QUESTIONS and questions >= QUESTION_SHARE * len(entries)
