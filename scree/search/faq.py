"""Pages of questions (issue 32): a FAQ, told by its headings, not its name. Pure.

A FAQ entry is a short answer phrased as the question an agent asks ("What does 'mvcc: database space exceeded'
mean?"), so it matches a question as well as the page that explains the procedure does, and often points to that
page. The engine moves a FAQ page's chunks ranking.FAQ_RANKS places down among the pages, past pages the query's
words found: the explaining page first where the two rank alike, the FAQ still among the first hits.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from scree.content.chunking import HEADING_SEPARATOR
from scree.replies import first_few

MIN_QUESTIONS = 4  # distinct question headings: a page with a question or two is a guide
QUESTION_SHARE = 0.5  # of its distinct headings
GUIDE_SECTIONS = 2  # sections that are no questions beside a section of questions: a guide ending in a FAQ
OPENING_QUESTIONS = 1  # questions outside that section a guide may have too: the one its opening answers
DOCTOR_LISTED = 5  # pages named in `scree doctor`'s line
# A heading of one ASCII word and "?" is a question only if the word asks one: TypeDoc's API pages head each optional
# property with its name and "?" (TanStack Query's `### children?`, `### options?`, `### queryClient?`), which had
# made docs/framework/preact/reference/interfaces/HydrationBoundaryProps.md a FAQ. A question in words, or in a
# language written without spaces (如何安装?), is one as before.
QUESTIONS_TITLE = re.compile(r"\b(?:faqs?|questions|q ?& ?a)\b", re.IGNORECASE)
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
    entries = {heading.rsplit(HEADING_SEPARATOR, 1)[-1].strip() for heading in headings}
    entries.discard("")
    return sum(is_question(entry) for entry in entries), len(entries)


def is_question_page(headings: Iterable[str]) -> bool:
    """True for a page whose headings are mostly questions: at least MIN_QUESTIONS distinct last headings ending in
    "?", and at least QUESTION_SHARE of them; not a guide whose questions all sit in one section of its own
    (_faq_section)."""
    headings = list(headings)
    questions, entries = question_count(headings)
    if questions < MIN_QUESTIONS or questions < QUESTION_SHARE * entries:
        return False
    return _titled_questions(headings) or not _faq_section(headings)


def _titled_questions(headings: list[str]) -> bool:
    """Whether the page's title says it holds questions (Dapr's "General Dapr questions and answers", whose questions
    sit mostly under "Actors" after an opening one, as a guide's FAQ section would)."""
    titles = {heading.split(HEADING_SEPARATOR, 1)[0].strip() for heading in headings}
    return any(QUESTIONS_TITLE.search(title) for title in titles)


def _faq_section(headings: list[str]) -> bool:
    """Whether a page's questions sit under one heading below its title, beside GUIDE_SECTIONS sections or more that
    are no questions: a guide that ends in a FAQ (Clerk's cli.mdx, "Clerk CLI > Frequently asked questions (FAQ)
    > Is it open source?" after Installation, Get started, What you can do; Grafana Loki's landing page), not a page
    of questions (etcd's faq.md keeps its questions under four sections, APISIX's FAQ.md under its title). Up to
    OPENING_QUESTIONS more may sit elsewhere: Mastodon's quote-posts.md and Renovate's minimum-release-age.md open
    with "What are quote posts?" before their how-to sections and the FAQ."""
    trails = [[part.strip() for part in heading.split(HEADING_SEPARATOR)] for heading in headings if heading.strip()]
    groups = Counter(tuple(trail[:-1]) for trail in {tuple(trail) for trail in trails} if is_question(trail[-1]))
    if not groups:
        return False
    parent, asked = groups.most_common(1)[0]
    if len(parent) < 2 or groups.total() - asked > OPENING_QUESTIONS:  # right under the page's title; or scattered
        return False
    others = {
        trail[-1] for trail in trails if len(trail) > 1 and not is_question(trail[-1]) and trail[-1] != parent[-1]
    }
    return len(others) >= GUIDE_SECTIONS


def describe(pages: dict[str, tuple[int, int]], checked: int, total: int) -> str:
    """One line for `scree doctor`: the pages of questions among `checked` of `total` pages, {path: question_count}."""
    scope = "" if checked >= total else f" (the first {checked} of {total} pages checked)"
    if not pages:
        return f"none found (pages whose headings are mostly questions){scope}"
    listed = [f"{path} ({questions} of {entries} headings questions)" for path, (questions, entries) in pages.items()]
    return f"{first_few(listed, DOCTOR_LISTED)}: shown one place after a page the query's words found{scope}"
