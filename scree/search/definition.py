"""A question asking what something is, answered by the opening of the page named for it. Pure.

"What is a CloneSet?" finds OpenKruise's CloneSet page first, but the page's best chunk by score is its "Operations on
Failed CloneSet" section, a few lines naming CloneSet four times; the reader wants the page's opening, which says what
a CloneSet is. The same on Crossplane ("What is a Composition?": "How composition functions work") and on Karmada's API
reference ("What is a PropagationPolicy?": the `create` operation's Response). When a query asks what something is
(asked_subject) and a page among the first candidates is titled for it (names_subject), the page's first chunk with
substance stands for the page at its best chunk's place (ranking.stand_ins); a best chunk whose own heading names the
subject ("## What is a CloneSet?") stays. Pages titled by the subject's words alone come first among those pages
(ranking.first_of): webpack's concept page "Loaders" had come third for "What is a loader?", after the API page
"Loader Interface" by its `this.loaders` section. Where no page is titled by the subject alone, a section headed by
it among the first pages' candidates comes first (uv's "Project structure and files > The lockfile" for "What is the
lockfile?", which "Exporting a lockfile" had led).

A how-to question naming nothing but a page's title, a task's verbs aside (asked_topic, TASK_VERBS: "How do I
configure CORS?" and Contour's page "CORS", which it had answered with its last two lines), is answered by that
page's opening the same way, its title compared with no slack, and such pages come first as for a what-is
question.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence

from scree.content.variants import without_qualifiers

# Pages among the first candidates whose titles are compared with the subject: each costs a read of its chunks.
OPENING_WINDOW = 5
# Words a title may have beyond the subject's, or the subject beyond the title's ("CloneSet in OpenKruise" for the
# page "CloneSet"; "PropagationPolicy" for the page "PropagationPolicy v1alpha1"), and still name it.
SUBJECT_SLACK = 1

# The verbs of a task a how-to question asks about, which no page title needs to repeat: "How do I configure CORS?"
# asks about the page "CORS", "How do I write a pyproject.toml?" about "Writing your pyproject.toml" (its title says
# the verb too, and the comparison is of the words left on both sides).
# With them the verb of "How does X work?", which asks about X as a whole: 13 of 66 such questions on 48 real sites
# then showed the page titled X by its opening ("How does lazy route discovery work?": React Router's page by its
# first lines, not its "Performance Benefits"), none worse.
TASK_VERBS = frozenset(
    {"use", "using", "add", "adding", "configure", "configuring", "set", "setting", "setup", "up", "enable"}
    | {"enabling", "write", "writing", "work", "works"}
)
# Words of a title that say what kind of page it is, not what it is about: Laravel's "Eloquent: Getting Started" is
# the page on Eloquent. Not "Documentation": Crossplane's README "Crossplane Documentation" is about its docs.
_PAGE_KIND = re.compile(r"(?:^|(?<=\W))(?:getting\s+started|overview|introduction|intro|basics)(?=\W|$)", re.IGNORECASE)
_END = r"\s*[?.!]*\s*$"
_ASKS = (
    re.compile(r"^\s*what(?:'s|\u2019s|\s+is|\s+are)\s+(.+?)" + _END, re.IGNORECASE),
    re.compile(r"^\s*what\s+(?:does|do)\s+(.+?)\s+(?:mean|stand\s+for)" + _END, re.IGNORECASE),
    re.compile(r"^\s*(?:define|definition\s+of|(?:the\s+)?meaning\s+of)\s+(.+?)" + _END, re.IGNORECASE),
)


def asked_subject(query: str) -> str | None:
    """What `query` asks to be defined, or None: "What is a CloneSet?" -> "a CloneSet", "what does RBAC stand for"
    -> "RBAC", "define idempotency" -> "idempotency". English only."""
    for pattern in _ASKS:
        found = pattern.match(query)
        if found:
            return found.group(1)
    return None


def asked_topic(words: Sequence[str]) -> str | None:
    """What a query asks how to do something with, where that is all it names: its content words without the verbs
    of a task (TASK_VERBS), "How do I add admonitions?" -> "admonitions", "How do I write a pyproject.toml?" ->
    "pyproject toml"; None where nothing else is left."""
    topic = [word for word in words if word.casefold() not in TASK_VERBS]
    return " ".join(topic) if topic else None


# A folder's pages whose titles end in one word, KIND_PAGES of them at least and half of the folder's titles or more,
# say by that word what kind of page each is: Hono's `middleware/builtin/` ("CORS Middleware", "Basic Auth
# Middleware"...), its `helpers/` ("Cookie Helper"), Express's `resources/middleware/` ("cors middleware"),
# Starlight's `reference/` ("Frontmatter Reference"). A folder of KIND_SAMPLE pages tells.
KIND_PAGES = 3
KIND_SAMPLE = 12
_LETTERS = re.compile(r"[^\W\d_]+")  # a word of letters: a kind word is one


def page_topic(title: str, kinds: Collection[str] = ()) -> str:
    """A page's title without the words saying what kind of page it is (_PAGE_KIND, and a last word of its folder's
    `kinds`) and its qualifiers in brackets (variants.without_qualifiers): "Eloquent: Getting Started" ->
    "Eloquent: ", "Introduction" -> "", "noUnusedVariables (JavaScript)" -> "noUnusedVariables", "CORS Middleware"
    -> "CORS " where "middleware" is a kind."""
    topic = _PAGE_KIND.sub("", without_qualifiers(title))
    words = list(_LETTERS.finditer(topic))
    if len(words) > 1 and words[-1].group(0).casefold() in kinds:
        return topic[: words[-1].start()]
    return topic


def kind_words(titles: Sequence[str]) -> frozenset[str]:
    """The last words (case-folded) that the `titles` of one folder's pages share to say their kind."""
    last = Counter(words[-1] for words in (_LETTERS.findall(title.casefold()) for title in titles) if len(words) > 1)
    return frozenset(word for word, count in last.items() if count >= KIND_PAGES and 2 * count >= len(titles))


def names_subject(subject: Collection[str], title: Collection[str], slack: int = SUBJECT_SLACK) -> bool:
    """Whether a title's terms name the subject's: one holds all of the other's and at most `slack` more ("What is
    the difference between CloneSet and Deployment?" is no question about the page "CloneSet", nor "What is the App
    of Apps pattern?" about the page "App Deletion")."""
    mine, theirs = set(subject), set(title)
    if not mine or not theirs or not (mine <= theirs or theirs <= mine):
        return False
    return len(mine ^ theirs) <= slack


def said_as_phrase(heading: Sequence[str], query: Sequence[str], topic: Collection[str]) -> bool:
    """Whether a heading's terms that are the `topic`'s (its other words left out) are a run of the query's terms,
    in order, no word between: "Dependency groups" in "How do I use dependency groups?", not "Page Sidebar" (a
    component) in "How do I add a page to the sidebar?". Each a sequence of one term per word."""
    said = [term for term in heading if term in topic]
    return bool(said) and any(
        list(query[start : start + len(said)]) == said for start in range(len(query) - len(said) + 1)
    )


def in_order(title: Sequence[str], asked: Sequence[str]) -> bool:
    """Whether the terms a title shares with the question come in the question's order ("Calling Rust from the
    Frontend" for "call Rust from the frontend", not "Calling the Frontend from Rust"). Each a sequence of one term
    per word; a term said twice counts where it is first said."""
    shared = set(title) & set(asked)
    return [term for term in dict.fromkeys(title) if term in shared] == [
        term for term in dict.fromkeys(asked) if term in shared
    ]
