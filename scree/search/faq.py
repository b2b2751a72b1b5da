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
DOCTOR_LISTED = 5  # pages named in `scree doctor`'s line
# A heading of one ASCII word and "?" is a question only if the word asks one: TypeDoc's API pages head each optional
# property with its name and "?" (TanStack Query's `### children?`, `### options?`, `### queryClient?`), which had
# made docs/framework/preact/reference/interfaces/HydrationBoundaryProps.md a FAQ. A question in words, or in a
# language written without spaces (如何安装?), is one as before.
QUESTION_WORDS = frozenset({"why", "what", "how", "who", "when", "where", "which", "whom", "whose"})


def is_question(heading: str) -> bool:
    """Whether a heading asks a question: it ends in "?", and is more than an identifier with one."""
    if not heading.endswith("?"):
        return False
    word = heading[:-1].strip().strip("`").strip()
    return not (word.isascii() and not any(char.isspace() for char in word)) or word.lower() in QUESTION_WORDS


def question_count(headings: Iterable[str]) -> tuple[int, int]:
    """(questions, entries): of a page's chunks' headings (trails, "Title > Section > Entry"), how many distinct last
    headings ask a question (is_question), and how many distinct last headings there are."""
    entries = {heading.rsplit(" > ", 1)[-1].strip() for heading in headings}
    entries.discard("")
    return sum(is_question(entry) for entry in entries), len(entries)


def is_question_page(headings: Iterable[str]) -> bool:
    """True for a page whose headings are mostly questions: at least MIN_QUESTIONS distinct last headings ending in
    "?", and at least QUESTION_SHARE of them."""
    questions, entries = question_count(headings)
    return questions >= MIN_QUESTIONS and questions >= QUESTION_SHARE * entries


def describe(pages: dict[str, tuple[int, int]], checked: int, total: int) -> str:
    """One line for `scree doctor`: the pages of questions among `checked` of `total` pages, {path: question_count}."""
    scope = "" if checked >= total else f" (the first {checked} of {total} pages checked)"
    if not pages:
        return f"none found (pages whose headings are mostly questions){scope}"
    listed = [f"{path} ({questions} of {entries} headings questions)" for path, (questions, entries) in pages.items()]
    more = f" and {len(listed) - DOCTOR_LISTED} more" if len(listed) > DOCTOR_LISTED else ""
    found = ", ".join(listed[:DOCTOR_LISTED]) + more
    return f"{found}: shown one place after a page the query's words found{scope}"
