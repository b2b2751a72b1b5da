"""Design proposals (told by their sections) come after the docs pages of similar rank unless the query asks about a
design, over a real folder, a real index and real searches (the hashed test embedder); `scree doctor` lists them."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import doctor_lines, scree_env
from test_faq_search import OTHERS  # pages of another topic around the two
from test_version_search import engine_for, page, search, tree

from scree.search.proposals import asks_about_design, describe, is_proposal

PROPOSAL = page(
    "CORS configuration",
    "## Abstract\n\nConfigure CORS per virtual host: CORS policy, CORS origins, CORS headers for CORS requests.",
    "## Goals\n\n- Configure CORS for a virtual host.\n- Configure CORS origins and CORS methods.",
    "## Non Goals\n\n- CORS per route.",
    "## Detailed Design\n\nA corsPolicy field configures CORS: allowOrigin, allowMethods, CORS max age.",
)
DOCS = page(
    "CORS",
    "## Configure CORS\n\nSet the corsPolicy of a virtual host to allow cross-origin requests from the origins listed.",
)
# A guide with the words of a template's sections is no proposal.
GUIDE = page(
    "Architecture",
    "## Goals\n\nThe project routes traffic to services.",
    "## Components\n\nThe controller configures the proxies.",
)


def site(folder: Path, design: str = PROPOSAL) -> Path:
    return tree(folder, {"design/cors-configuration.md": design, "docs/config/cors.md": DOCS, **OTHERS})


def test_a_proposal_is_told_by_its_sections() -> None:
    assert is_proposal(["Gateway > Goals", "Gateway > Non-Goals", "Gateway > API"])
    assert is_proposal(["Ruler > 1. Motivation", "Ruler > 2. Proposal", "Ruler > Alternatives considered"])
    assert is_proposal(["RFC > **Drawbacks**", "RFC > Prior Art", "RFC > Unresolved Questions:"])
    assert is_proposal(["Design: OSD replacement > Problem", "Design: OSD replacement > Goals and non-goals"])  # Rook
    assert is_proposal(["**Rook Cluster Upgrades** > **Goal**", "**Rook Cluster Upgrades** > **Detailed Design**"])
    assert not is_proposal(["Architecture > Goals", "Architecture > Components"])
    assert not is_proposal(["Sequences > Motivation", "Sequences > Alternatives", "Sequences > Security"])


def test_a_query_about_the_design_wants_the_proposal() -> None:
    assert asks_about_design({"why", "does", "contour", "use", "httpproxy"})
    assert asks_about_design({"cors", "design"})
    assert not asks_about_design({"how", "configure", "cors"})


def test_a_proposal_comes_after_the_docs_page_unless_the_design_is_asked_about(tmp_path: Path) -> None:
    """Contour: design/cors-configuration.md came first for "How do I configure CORS?", before config/cors.md."""
    folder = site(tmp_path / "site")
    engine = engine_for(folder, tmp_path / "index.db")
    for mode in ("keyword", "hybrid"):
        paths = [hit.path for hit in search(engine, "How do I configure CORS?", mode)]
        assert paths.index("docs/config/cors.md") < paths.index("design/cors-configuration.md"), (mode, paths)
        paths = [hit.path for hit in search(engine, "What was the design of CORS configuration?", mode)]
        assert paths[0] == "design/cors-configuration.md", (mode, paths)


def test_doctors_line_names_a_few_proposals_and_says_what_it_checked() -> None:
    line = describe([f"design/d{n}.md" for n in range(7)], checked=5000, total=6000)
    assert line.startswith("design/d0.md, design/d1.md") and "design/d4.md and 2 more: shown after docs" in line
    assert line.endswith("(the first 5000 of 6000 pages checked)")
    assert describe([], 3, 3).startswith("none found")


def test_doctor_lists_the_design_proposals(tmp_path: Path) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    for name, design, expected in (
        ("proposal", PROPOSAL, "design/cors-configuration.md: shown after docs pages of similar rank unless"),
        ("guide", GUIDE, "none found (pages with a design proposal's sections"),
    ):
        lines, output = doctor_lines(env, site(tmp_path / name, design=design), "design proposals")
        assert len(lines) == 1 and lines[0].startswith(f"ok    design proposals: {expected}"), output
