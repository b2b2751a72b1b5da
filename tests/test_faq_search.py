"""Issue 32: a page of questions (a FAQ, told by its headings) comes after the page that explains, where the two rank
alike, over a real folder, a real index and real hybrid searches (the hashed test embedder); a guide with a question
heading or two is no FAQ; an edited page is judged again."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import doctor_lines, scree_env
from test_version_search import engine_for, page, search, tree

from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder
from scree.search.engine import keyword_ranking
from scree.search.faq import describe, is_question_page
from scree.store import SqliteReader, SqliteWriter
from scree.writer_proc.sync import Syncer

ENTRY = (
    "## How do I free space when the database space is exceeded?\n\nCompact, defragment the database, disarm the "
    "alarm: the database space is free and the cluster takes writes."
)
FAQ = page(
    "FAQ",
    ENTRY,
    "## Why an odd number of members?\n\nA majority survives the loss of the same number of members.",
    "## What is the failure tolerance?\n\nA cluster of five members keeps working with two gone.",
    "## Should I add a member before removing one?\n\nRemove the unhealthy member first.",
    "## System requirements\n\nEight GB of memory and a fast disk.",
)
MAINTENANCE = page(
    "Maintenance",
    "## Space quota\n\nWhen the database space is exceeded the cluster refuses writes. Compact the key space, "
    "defragment each member to free space, then disarm the alarm.",
)
# The same entry in a guide of two sections: one question heading makes no FAQ.
GUIDE = page("Upgrading", ENTRY, "## Steps\n\nStop one member, replace the binary, start it; then the next.")
OTHERS = {
    f"docs/page-{n}.md": page(f"Page {n}", text)
    for n, text in enumerate(
        (
            "Watch a key prefix from a revision and stream every change after it.",
            "Grant a role read access to a key range and give the role to a user.",
            "Take a lock with a lease so that it goes when the client dies.",
            "Discover the members of a new cluster through DNS records.",
        )
    )
}
QUERY = "How do I free space when the database space is exceeded and the cluster refuses writes?"


def site(folder: Path, faq: str = FAQ) -> Path:
    return tree(folder, {"docs/faq.md": faq, "docs/op-guide/maintenance.md": MAINTENANCE, **OTHERS})


def words_first(folder: Path, db: Path) -> str:
    """The file of the chunk the keyword index alone ranks first for QUERY."""
    with SqliteReader.open(db, folder) as store:
        best = keyword_ranking(store, QUERY, 10)[0][0]
        return store.chunks_by_ids([best])[best].path


def test_the_page_that_explains_comes_before_the_faq_entry_that_matches_as_well(tmp_path: Path) -> None:
    folder = site(tmp_path / "site")
    engine = engine_for(folder, tmp_path / "index.db")
    assert words_first(folder, tmp_path / "index.db") == "docs/faq.md"  # the entry says the question's words best
    paths = [hit.path for hit in search(engine, QUERY, "hybrid")]
    assert paths[:2] == ["docs/op-guide/maintenance.md", "docs/faq.md"], paths


def test_a_guide_with_a_question_heading_or_two_is_no_faq(tmp_path: Path) -> None:
    """Were it taken for a FAQ, the entry would go below the maintenance page, as in the test above."""
    folder = site(tmp_path / "site", faq=GUIDE)
    engine = engine_for(folder, tmp_path / "index.db")
    assert [hit.path for hit in search(engine, QUERY, "hybrid")][0] == "docs/faq.md"


def test_a_page_is_judged_again_once_its_headings_change(tmp_path: Path) -> None:
    folder = site(tmp_path / "site")
    engine = engine_for(folder, tmp_path / "index.db")
    assert [hit.path for hit in search(engine, QUERY, "hybrid")][0] == "docs/op-guide/maintenance.md"
    # The same entries as statements: no longer a page of questions, and the same engine ranks it first again.
    (folder / "docs/faq.md").write_text(FAQ.replace("?\n", "\n").replace("## How do I", "## To"), encoding="utf-8")
    with SqliteWriter.open(tmp_path / "index.db", folder) as store:
        Syncer(store, IgnorePolicy(folder), HashEmbedder(), 1_000_000).sync_all()
    assert [hit.path for hit in search(engine, QUERY, "hybrid")][0] == "docs/faq.md"


def test_which_pages_are_pages_of_questions() -> None:
    entries = ["FAQ > General > What is it?", "FAQ > General > Why?", "FAQ > Ops > How to back up?", "FAQ > Ops > Who?"]
    assert is_question_page(entries)
    assert is_question_page([*entries, "FAQ > Deployment > System requirements", "FAQ"])
    assert not is_question_page(entries[:3])  # three questions: a guide may have as many
    assert not is_question_page([*entries, *(f"Guide > Step {n}" for n in range(5))])  # under half
    assert not is_question_page([])
    # a guide that ends in a FAQ section (Clerk's cli.mdx) is no page of questions; etcd's faq.md, its questions under
    # four sections, and a FAQ whose questions sit right under its title are
    asked = ("What can't it do?", "Which frameworks are supported?", "Is it open source?", "How do I report a bug?")
    guide = ["Clerk CLI", "Clerk CLI > Installation", "Clerk CLI > Get started", "Clerk CLI > What you can do"]
    assert not is_question_page([*guide, *(f"Clerk CLI > Frequently asked questions > {q}" for q in asked)])
    assert is_question_page([*guide[:2], *(f"Clerk CLI > Frequently asked questions > {q}" for q in asked)])
    sections = ("General", "Configuration", "Deployment", "Operation")
    assert is_question_page([*guide, *(f"FAQ > {section} > {q}" for section, q in zip(sections, asked, strict=True))])
    assert is_question_page([*guide, *(f"FAQ > {q}" for q in asked)])
    # a guide may open with the question it answers (Mastodon's "What are quote posts?") before its FAQ section; two
    # questions outside the section make a page of questions again
    opening = "Clerk CLI > What is the Clerk CLI?"
    faq = [f"Clerk CLI > Frequently asked questions > {q}" for q in asked]
    assert not is_question_page([*guide, opening, *faq])
    assert is_question_page([*guide, opening, "Clerk CLI > Why a CLI?", *faq])
    # ...unless its title says it holds questions (Dapr's "General Dapr questions and answers")
    titled = [heading.replace("Clerk CLI", "Clerk CLI questions and answers") for heading in [*guide, opening, *faq]]
    assert is_question_page(titled)
    assert is_question_page([heading.replace("Clerk CLI", "Clerk CLI FAQ") for heading in [*guide, *faq]])
    names = ("children", "options", "queryClient", "`defaultOptions`")
    assert not is_question_page([f"HydrationBoundaryProps > Properties > {name}?" for name in names])
    assert is_question_page([f"常见问题 > {text}?" for text in ("如何安装", "为什么失败", "怎样升级", "在哪里配置")])


def test_doctors_line_names_a_few_pages_and_says_what_it_checked() -> None:
    pages = {f"docs/v{n}/faq.md": (9, 10) for n in range(7)}
    line = describe(pages, checked=5000, total=6000)
    assert line.startswith("docs/v0/faq.md (9 of 10 headings questions), docs/v1/faq.md")
    assert "docs/v4/faq.md (9 of 10 headings questions) and 2 more: shown one place after" in line
    assert "docs/v5" not in line and line.endswith("(the first 5000 of 6000 pages checked)")
    assert describe({}, 3, 3) == "none found (pages whose headings are mostly questions)"


def test_doctor_lists_the_pages_of_questions(tmp_path: Path) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    for name, faq, expected in (
        ("faq", FAQ, "docs/faq.md (4 of 5 headings questions): shown one place after a page the query's words found"),
        ("guide", GUIDE, "none found (pages whose headings are mostly questions)"),
    ):
        lines, output = doctor_lines(env, site(tmp_path / name, faq=faq), "pages of questions")
        assert lines == [f"ok    pages of questions: {expected}"], output
