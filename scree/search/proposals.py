"""Design proposals, told by their headings, not their folder. Pure.

A project's docs repository often keeps its design proposals beside the docs: Contour's `design/` (41 of 45 pages),
Velero's `design/`, Envoy Gateway's `community/design/`, Argo CD's `docs/proposals/`, the Gateway API's `geps/`,
Vector's `rfcs/`, Loki's `lids/` and operator enhancements. A proposal says how a feature was to be built, often
before it was, in the words of the question about using it: Contour's `design/cors-configuration.md` came before
its docs page `config/cors.md` for "How do I configure CORS?", and `design/ingressroute-design.md` first for "How do
I set up TLS for a virtual host?". A folder's name does not tell (Calico's and EMQX's `design/` pages explain the
architecture to users); a proposal's sections do: Goals beside Non-Goals or beside one of the sections design
templates ask for (Motivation, Proposal, Alternatives considered, Drawbacks, Open questions, Risks and mitigations...),
or three of those. The engine ranks a proposal ranking.PROPOSAL_RANKS places down among the pages, past pages the
query's words found, unless the query asks about a design (asks_about_design).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from scree.content.chunking import HEADING_SEPARATOR
from scree.replies import first_few

MIN_SECTIONS = 3  # of the sections design templates ask for, without Goals and Non-Goals
DOCTOR_LISTED = 5  # pages named in `scree doctor`'s line

_NUMBERED = r"(?:\d+(?:\.\d+)*\.?\s+)?"
_GOALS = re.compile(_NUMBERED + r"goals?\s*:?", re.IGNORECASE)
_NON_GOALS = re.compile(_NUMBERED + r"non[- ]?goals?\s*:?", re.IGNORECASE)
_BOTH = re.compile(_NUMBERED + r"goals?\s+and\s+non[- ]?goals?\s*:?", re.IGNORECASE)  # Rook's "Goals and non-goals"
_SECTION = re.compile(
    _NUMBERED + r"(alternatives?(?: considered| solutions?)?|rejected alternatives|drawbacks|open (?:questions|issues)"
    r"|unresolved questions|risks and mitigations|prior art|design details|detailed design|high[- ]level design"
    r"|proposal|proposed \w+|user stor(?:y|ies)|motivation|abstract)\s*:?",
    re.IGNORECASE,
)
_MARKUP = "*_` "
# A query about the design itself wants the proposal: "Why does Contour ...?", "What was the design of ...?"
DESIGN_WORDS = frozenset(
    {"design", "designs", "designed", "proposal", "proposals", "proposed", "rfc", "rfcs", "enhancement", "kep", "gep",
     "adr", "rationale", "motivation", "why"}
)  # fmt: skip


def is_proposal(headings: Iterable[str]) -> bool:
    """True for a page whose chunks' heading trails hold Goals and Non-Goals (as two headings or one), Goals beside
    one of the other sections design templates ask for, or MIN_SECTIONS of those."""
    names = {part.strip().strip(_MARKUP) for heading in headings for part in heading.split(HEADING_SEPARATOR)}
    goals = any(_GOALS.fullmatch(name) for name in names)
    if any(_BOTH.fullmatch(name) for name in names) or (goals and any(_NON_GOALS.fullmatch(name) for name in names)):
        return True
    sections = {found.group(1).lower() for found in map(_SECTION.fullmatch, names) if found is not None}
    return len(sections) >= (1 if goals else MIN_SECTIONS)


def asks_about_design(words: Collection[str]) -> bool:
    """Whether a query's words (folded) ask about a design rather than how to use what it made."""
    return not DESIGN_WORDS.isdisjoint(words)


def describe(pages: list[str], checked: int, total: int) -> str:
    """One line for `scree doctor`: the design proposals among `checked` of `total` pages."""
    scope = "" if checked >= total else f" (the first {checked} of {total} pages checked)"
    if not pages:
        return f"none found (pages with a design proposal's sections: Goals and Non-Goals, Alternatives...){scope}"
    listed = first_few(pages, DOCTOR_LISTED)
    return f"{listed}: shown after docs pages of similar rank unless the query asks about a design{scope}"
