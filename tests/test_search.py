"""The search engine over a real folder and index: re-check before returning (R-M2), stale ranges and duplicate
collapse (R-M4), all without the writer catching up first."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import write_file

from scree.content import formats
from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder
from scree.errors import ScreeError
from scree.index.model_policy import prepare
from scree.search.engine import SearchEngine
from scree.search.query import phrasal_joins
from scree.search.render import render_hit
from scree.store import SqliteReader, SqliteWriter
from scree.writer_proc.sync import Syncer

SHARED = "## Licence\n\nThis text is released under the compost licence, version two.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nApples grow on trees in the orchard.\n\n" + SHARED, encoding="utf-8")
    (root / "b.md").write_text("# Beta\n\nBananas ripen in the sun.\n\n" + SHARED, encoding="utf-8")
    (root / "c.md").write_text("# Gamma\n\nCherries are small stone fruits.\n", encoding="utf-8")
    return root


@pytest.fixture
def engine(folder: Path, index_backend: Backend) -> Iterator[SearchEngine]:
    with index_backend.engine(folder) as engine:
        yield engine


def paths(engine: SearchEngine, query: str, mode: str = "hybrid") -> list[str]:
    return [hit.path for hit in engine.search(query, k=10, mode=mode).hits]


def test_identical_chunks_come_back_once_with_also(engine: SearchEngine) -> None:
    hits = engine.search("compost licence version", k=10, mode="keyword").hits
    licence = [hit for hit in hits if "compost licence" in hit.text]
    assert len(licence) == 1
    other = "b.md" if licence[0].path == "a.md" else "a.md"
    assert licence[0].also == (f"{other}:5-7",)


def test_lines_move_with_an_edit_and_gone_text_is_stale(engine: SearchEngine, folder: Path) -> None:
    before = engine.search("cherries stone fruits", k=1, mode="keyword").hits[0]
    assert (before.path, before.start, before.end) == ("c.md", 1, 3)
    (folder / "c.md").write_text("Preface line.\n\n\n# Gamma\n\nCherries are small stone fruits.\n", encoding="utf-8")
    moved = engine.search("cherries stone fruits", k=1, mode="keyword").hits[0]
    assert (moved.start, moved.end, moved.stale) == (4, 6, False)
    (folder / "c.md").write_text("# Gamma\n\nCherries were replaced by plums.\n", encoding="utf-8")
    stale = engine.search("cherries stone fruits", k=1, mode="keyword").hits[0]
    assert stale.path == "c.md" and stale.stale and stale.start is None and stale.end is None


@pytest.mark.parametrize("how", ["deleted", "gitignored", "opted out", "screeignored"])
def test_a_file_dropped_since_indexing_leaves_results_at_once(engine: SearchEngine, folder: Path, how: str) -> None:
    assert "c.md" in paths(engine, "cherries stone fruits")
    target = folder / "c.md"
    if how == "deleted":
        os.unlink(target)
    elif how == "gitignored":
        (folder / ".gitignore").write_text("c.md\n", encoding="utf-8")
    elif how == "screeignored":
        (folder / ".screeignore").write_text("c*.md\n", encoding="utf-8")
    else:
        target.write_text("---\nscree: ignore\n---\n# Gamma\n\nCherries are small stone fruits.\n", encoding="utf-8")
    engine._policy.invalidate()  # the MCP tools do this on every call; here the test stands in for them
    result = engine.search("cherries stone fruits", k=10)
    assert "c.md" not in [hit.path for hit in result.hits]
    assert result.dropped_paths == ("c.md",)


def test_empty_index_and_empty_query_return_nothing(tmp_path: Path, index_backend: Backend) -> None:
    folder = tmp_path / "empty"
    folder.mkdir()
    with index_backend.writer(folder) as store:

        def no_embedder() -> HashEmbedder:
            raise AssertionError("an empty index must not embed the query")

        engine = SearchEngine(store, IgnorePolicy(folder), folder, 1_000_000, no_embedder)
        assert engine.search("anything").hits == []


def test_a_query_embedding_that_fails_leaves_hybrid_search_its_keyword_hits(
    folder: Path, index_backend: Backend
) -> None:
    """R-M3: whatever the embedder raises, hybrid search answers with keyword hits and says why; semantic refuses."""

    def broken() -> HashEmbedder:
        raise RuntimeError("the model's files vanished")

    with index_backend.engine(folder, broken) as engine:
        result = engine.search("cherries stone fruits", k=3, mode="hybrid")
        assert [hit.path for hit in result.hits][:1] == ["c.md"]
        assert result.notes == ["[vector search failed (RuntimeError); showing keyword results]"]
        with pytest.raises(ScreeError, match="vector search failed: RuntimeError"):
            engine.search("cherries stone fruits", k=3, mode="semantic")


def test_a_phrasal_verb_finds_the_word_docs_join_it_into(tmp_path: Path, index_backend: Backend) -> None:
    """ "shut down" finds a page that says only "shutdown" (query.PARTICLES), in either store; "after all" is no
    phrasal verb and finds no `afterall`."""
    folder = tmp_path / "notes"
    write_file(folder, "graceful.md", "# Graceful shutdown\n\nClose the listener and let open requests finish.\n")
    write_file(folder, "hooks.md", "# Hooks\n\nCall `afterAll` to release what the suite opened.\n")
    write_file(folder, "server.md", "# Server\n\nThe server listens on port 8080 and logs each request.\n")
    with index_backend.engine(folder) as engine:
        assert paths(engine, "How do I shut down the server?", mode="keyword") == ["server.md", "graceful.md"]
        assert paths(engine, "Shut  down", mode="keyword") == ["graceful.md"]
        assert paths(engine, "shut-down", mode="keyword") == []  # not a verb and its particle: a compound as written
        assert paths(engine, "after all", mode="keyword") == []  # no particle: `afterAll` is not found


def test_phrasal_joins_are_a_verb_and_the_particle_right_after_it() -> None:
    assert phrasal_joins("How do I Log In, then tear  down the set-up and roll back?") == [
        "login",
        "teardown",
        "rollback",
    ]
    assert phrasal_joins("shut, down; log. in; the on; v2 down") == []  # punctuation between, a stop word, a digit


def build_engine(folder: Path, db: Path) -> SearchEngine:
    embedder = HashEmbedder()
    with SqliteWriter.open(db, folder) as store:
        prepare(store, embedder)
        Syncer(store, IgnorePolicy(folder), embedder, 1_000_000).sync_all()
    reader = SqliteReader.open(db, folder)
    return SearchEngine(reader, IgnorePolicy(folder), folder, 1_000_000, lambda: embedder)


def test_the_first_hits_do_not_depend_on_k(tmp_path: Path) -> None:
    """#11: every step ranks the same candidates whatever k is; k only cuts the end of the list."""
    folder = tmp_path / "notes"
    words = ["upload", "file", "form", "cors", "token", "header", "cookie", "body", "query", "path"]
    for n in range(12):
        sections = "\n\n".join(
            f"## Part {s}\n\n" + " ".join(words[(n + s + i) % len(words)] for i in range(30)) for s in range(4)
        )
        (folder / f"d{n % 3}").mkdir(parents=True, exist_ok=True)
        (folder / f"d{n % 3}" / f"page{n}.md").write_text(f"# Page {n}\n\n{sections}\n", encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    for mode in ("hybrid", "semantic", "keyword"):
        for query in ("how to upload a file", "cors header", "token cookie path"):
            longest = [(hit.path, hit.start) for hit in engine.search(query, k=50, mode=mode).hits]
            assert len(longest) > 8
            for k in (1, 2, 3, 5, 8, 20):
                assert [(hit.path, hit.start) for hit in engine.search(query, k=k, mode=mode).hits] == longest[:k]


def test_each_files_best_chunk_comes_before_second_chunks(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    many = "\n\n".join(f"## Upload {n}\n\nUpload a file with a form, upload step {n}." for n in range(6))
    (folder / "upload.md").write_text(f"# Uploads\n\n{many}\n", encoding="utf-8")
    (folder / "other.md").write_text("# Other\n\nA form can upload a file too.\n", encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    hits = engine.search("upload a file with a form", k=4, mode="keyword").hits
    assert [hit.path for hit in hits][:2] in (["upload.md", "other.md"], ["other.md", "upload.md"])


def test_a_page_in_the_querys_language_stands_for_its_translations(tmp_path: Path) -> None:
    """#11: copies of one page in other language trees give way to the query's language (English here)."""
    folder = tmp_path / "site"
    code = "\n\n```python\napp.add_middleware(CORSMiddleware)\n```\n"
    cors = {
        "en": "# CORS\n\nHow to add CORS middleware to your app:" + code,
        "es": "# CORS\n\nCómo añadir CORS a su aplicación:" + code,
        "tr": "# CORS\n\nUygulamanıza CORS eklemek için:" + code,
    }
    for language, text in cors.items():
        (folder / "docs" / language).mkdir(parents=True)
        (folder / "docs" / language / "cors.md").write_text(text, encoding="utf-8")
        (folder / "docs" / language / "index.md").write_text(f"# Index {language}\n\nWelcome.\n", encoding="utf-8")
    (folder / "docs" / "tr" / "extra.md").write_text("# CORS notları\n\nCORSMiddleware için notlar.\n", "utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    for mode in ("hybrid", "semantic", "keyword"):
        hit_paths = [hit.path for hit in engine.search("how do I add CORS middleware", k=5, mode=mode).hits]
        assert "docs/en/cors.md" in hit_paths, mode
        assert "docs/es/cors.md" not in hit_paths and "docs/tr/cors.md" not in hit_paths, mode
    turkish = [hit.path for hit in engine.search("CORS eklemek için nasıl", k=5, mode="keyword").hits]
    assert "docs/tr/cors.md" in turkish and "docs/en/cors.md" not in turkish


def test_a_translation_the_query_is_not_in_comes_after_pages_in_its_language(tmp_path: Path) -> None:
    """Astro's docs (src/content/docs/en/ and 13 translations): "What changed in Astro 5?" showed, after the v5
    upgrade guide, four Korean and German tutorial pages (`ko/tutorial/5-astro-api/1.mdx`), matched on the words
    of their path and of links left untranslated, whose English copies the query's words did not find, so nothing
    folded them. A translation in neither the query's language nor the main one comes VERSION_RANKS places down,
    still found."""
    folder = tmp_path / "site"
    pages = {
        "en": {
            "tutorial.md": "# Tutorial\n\nBuild a small blog with posts, tags and an archive page.\n",
            "upgrade.md": "# Upgrade\n\nTo move the widget to a new release, run the upgrade command and restart it.\n",
            "index.md": "# Welcome\n\nStart here.\n",
        },
        "ko": {
            "tutorial.md": "# 튜토리얼\n\n## 리소스\n\n- [Widget upgrade to version 5](/ko/upgrade/)\n- 블로그 글\n",
            "upgrade.md": "# 업그레이드\n\n새 릴리스로 옮기려면 명령을 실행하고 다시 시작하세요.\n",
            "index.md": "# 환영합니다\n\n여기서 시작하세요.\n",
        },
    }
    for language, files in pages.items():
        for name, text in files.items():
            (folder / "docs" / language).mkdir(parents=True, exist_ok=True)
            (folder / "docs" / language / name).write_text(text, encoding="utf-8")
    for name in ("install", "backup"):
        (folder / "docs" / "en" / f"{name}.md").write_text(f"# {name.title()}\n\nThe widget {name}.\n", "utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    # keyword mode: in hybrid mode every chunk of so small an index is a candidate, the English copy too, and folds
    paths = [hit.path for hit in engine.search("widget upgrade to version 5", k=8, mode="keyword").hits]
    assert paths[0] == "docs/en/upgrade.md", paths
    assert "docs/ko/tutorial.md" in paths, paths  # lower, not dropped
    assert paths.index("docs/ko/tutorial.md") > paths.index("docs/en/install.md"), paths
    korean = [hit.path for hit in engine.search("업그레이드 명령", k=3, mode="keyword").hits]
    assert korean[0] == "docs/ko/upgrade.md", korean


def test_the_translations_a_hit_stands_for_are_named_in_also(tmp_path: Path) -> None:
    """#11: the copies folded into the query language's hit are listed in also= (the agent could not know of them
    otherwise), each file once with the range of its best chunk, and capped in the reply like identical twins."""
    folder = tmp_path / "site"
    intro = {"en": "How to add CORS middleware", "es": "Cómo añadir CORS middleware", "fr": "Ajouter CORS middleware",
             "de": "CORS middleware hinzufügen", "pt": "Como adicionar CORS middleware",
             "it": "Aggiungere CORS middleware", "tr": "CORS middleware eklemek"}  # fmt: skip
    for language, words in intro.items():
        (folder / "docs" / language).mkdir(parents=True)
        text = f"# CORS\n\n{words}.\n\n## Origins\n\nCORS middleware origins, {language}.\n"
        (folder / "docs" / language / "cors.md").write_text(text, encoding="utf-8")
        (folder / "docs" / language / "index.md").write_text(f"# Index {language}\n\nWelcome.\n", encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    others = sorted(f"docs/{language}/cors.md:1-3" for language in intro if language != "en")
    for mode in ("hybrid", "semantic", "keyword"):
        hits = engine.search("how do I add CORS middleware", k=5, mode=mode).hits
        cors = next(hit for hit in hits if hit.path == "docs/en/cors.md" and hit.start == 1)
        assert sorted(cors.also) == others, (mode, cors.also)  # each file once, its best chunk's range
        assert not [hit.path for hit in hits if hit.path.endswith("/cors.md") and hit.path != "docs/en/cors.md"]
        shown = render_hit(1, cors)
        assert f'also="{", ".join(cors.also[:5])}, and 1 more"' in shown, shown  # R-M1: five named, then a count


def test_a_translations_chunk_gives_way_to_the_originals_chunk_at_its_place(tmp_path: Path) -> None:
    """OpenTelemetry's glossary: its Korean entry "스팬(Span)" ranked first for "What is a span?" and stood for the
    English page's best chunk, the "Span link" entry; the English entry at its place, "Span", is the hit."""
    folder = tmp_path / "site"
    english = (
        "# Glossary\n\n## Trace\n\nThe path of a request through a distributed system.\n\n"
        "## Span\n\nRepresents a single operation within a trace.\n\n"
        "## Span link\n\nA span link connects one span to a causally related span of another trace.\n"
    )
    korean = (
        "# 용어집\n\n## 트레이스\n\n분산 시스템을 지나는 요청의 경로.\n\n"
        "## 스팬(Span)\n\nspan: 트레이스 안의 작업 하나. span 은 span 의 이름을 가진다.\n\n"
        "## 스팬 링크\n\n다른 트레이스의 스팬과 이어 주는 링크.\n"
    )
    for language, text in (("en", english), ("ko", korean)):
        (folder / "docs" / language).mkdir(parents=True)
        (folder / "docs" / language / "glossary.md").write_text(text, encoding="utf-8")
        (folder / "docs" / language / "index.md").write_text(f"# Index {language}\n\nWelcome.\n", encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    first = engine.search("span", k=5, mode="keyword").hits[0]
    assert (first.path, first.heading) == ("docs/en/glossary.md", "Glossary > Span"), first
    assert [entry.rsplit(":", 1)[0] for entry in first.also] == ["docs/ko/glossary.md"]


def test_a_chunk_of_markup_alone_is_never_a_hit(tmp_path: Path) -> None:
    """#11: a pymdownx block's closing `///` cut off by the soft limit was the third hit for an OAuth2 question."""
    folder = tmp_path / "notes"
    folder.mkdir()
    long_tip = "/// tip\n\n" + "OAuth2 scopes let a token carry permissions. " * 60 + "\n\n///\n"
    (folder / "oauth2.md").write_text(f"# OAuth2 scopes\n\n{long_tip}\n## Tokens\n\nTBD\n", encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    with SqliteReader.open(tmp_path / "index.db", folder) as store:
        texts = [chunk.text for chunk in store.chunks_for_path("oauth2.md")]
    assert "///" in texts and "## Tokens\n\nTBD" in texts  # indexed as the file has them
    for mode in ("hybrid", "semantic", "keyword"):
        for query in ("oauth2 scopes tokens", "///", "TBD"):
            hits = engine.search(query, k=10, mode=mode).hits
            assert all(hit.text not in ("///", "## Tokens\n\nTBD") for hit in hits), (mode, query)


DOCUSAURUS_PAGE = (
    "---\ntitle: Upgrading charts\n---\n\nRun the upgrade command to move a release to a new chart version.\n\n"
    "## Rollback\n\nIf the upgrade fails with an error, roll the release back to its last revision.\n"
)


def test_the_current_english_page_stands_for_its_old_versions_and_translations(tmp_path: Path) -> None:
    """Issue 25: on a Docusaurus site an identical old version (versioned_docs/version-N/) was shown with the current
    docs/ page only in also=, and a Korean copy came first for an English query. The current original is shown, in
    every mode, and the copies it stands for are named in also=."""
    folder = tmp_path / "site"
    plugin = "docusaurus-plugin-content-docs"
    older = DOCUSAURUS_PAGE.replace("to its last revision", "to an earlier revision")
    korean = DOCUSAURUS_PAGE.replace("title: Upgrading charts", "title: 차트 업그레이드")
    pages = {
        "docs/upgrade.md": DOCUSAURUS_PAGE,
        "versioned_docs/version-3.x/upgrade.md": DOCUSAURUS_PAGE,
        "versioned_docs/version-2.x/upgrade.md": older,
        f"i18n/ko/{plugin}/current/upgrade.md": korean,
        f"i18n/ko/{plugin}/version-3.x/upgrade.md": korean,
        "docs/install.md": "# Installing\n\nDownload the binary and put it on your path.\n",
        "versioned_docs/version-3.x/install.md": "# Installing\n\nDownload the binary and put it on your path.\n",
    }
    for rel, text in pages.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text, encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    for mode in ("hybrid", "semantic", "keyword"):
        hits = engine.search("upgrade fails with an error roll back the release", k=5, mode=mode).hits
        assert hits[0].path == "docs/upgrade.md", (mode, [hit.path for hit in hits])
        shown = [hit.path for hit in hits]
        assert not [path for path in shown if "upgrade" in path and path != "docs/upgrade.md"], (mode, shown)
        named = {entry.rsplit(":", 1)[0] for hit in hits if hit.path == "docs/upgrade.md" for entry in hit.also}
        assert "versioned_docs/version-3.x/upgrade.md" in named, (mode, named)
    installing = engine.search("download the binary", k=5, mode="keyword").hits
    assert [hit.path for hit in installing] == ["docs/install.md"]
    assert installing[0].also == ("versioned_docs/version-3.x/install.md:1-3",)


def test_the_untagged_original_is_never_moved_down_as_another_language(tmp_path: Path) -> None:
    """Pinia's English docs/ beside docs/zh/, whose English API pages are generated (not committed): zh holds more
    than twice the pages and is the main language, and a query of names alone is read as Chinese. The untagged
    original's pages stay where their score puts them; only a third language's come after."""
    folder = tmp_path / "site"
    for name in ("install", "start"):
        write_file(folder, f"docs/{name}.md", f"# {name.title()}\n\nTo {name} the widget, run widget {name}.\n")
        write_file(folder, f"docs/zh/{name}.md", "# 页面\n\n运行这个命令。\n")
    for n in range(6):
        write_file(folder, f"docs/zh/api/p{n}.md", f"# 接口 {n}\n\n使用 widget 命令。\n")
    engine = build_engine(folder, tmp_path / "index.db")
    paths = [hit.path for hit in engine.search("widget install", k=8, mode="keyword").hits]
    assert paths[0] == "docs/install.md", paths


WIDGET_PAGES = {
    "install": "Install the widget with pip and run it once to create its config file.",
    "backup": "Back up the widget store by copying its folder while the server is stopped.",
    "plugins": "Plugins extend the widget with new commands; list them in the config file.",
}


def write_widget_pages(folder: Path, names: tuple[str, ...]) -> None:
    """Pages beside the ones a test ranks, each a title and one line (WIDGET_PAGES)."""
    for name in names:
        (folder / f"{name}.md").write_text(f"# {name.title()}\n\n{WIDGET_PAGES[name]}\n", encoding="utf-8")


def page_among_widgets(tmp_path: Path, name: str, text: str) -> SearchEngine:
    """An engine over a folder holding the page `name` and two widget pages beside it."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    write_widget_pages(folder, ("install", "backup"))
    return build_engine(folder, tmp_path / "index.db")


def test_a_section_that_is_one_url_gives_way_to_the_page_that_explains(tmp_path: Path) -> None:
    """Velero's per-release changelog has an "Upgrading" section that is one URL (to the upgrade guide): it matched
    "How do I upgrade Velero to 1.18?" best on the URL's words and was the first hit, and once a lone URL read as no
    words (thin) its place went to the page's release highlight ranked 97th. The guide comes first."""
    folder = tmp_path / "site"
    (folder / "changelogs").mkdir(parents=True)
    (folder / "docs").mkdir()
    highlights = "".join(
        f"#### {title}\n\n{text}\n\n"
        for title, text in (
            ("Concurrent backup", "Backups of different namespaces now run side by side on one server."),
            ("Incremental size", "The data mover reports the size of each incremental snapshot it writes."),
            ("Resource policies", "A policy can now skip volumes by their storage class and their phase."),
        )
    )
    (folder / "changelogs" / "CHANGELOG-2.4.md").write_text(
        "## v2.4\n\n### Upgrading\nhttps://widget.example.org/docs/v2.4/upgrade-widget-to-2.4/\n\n"
        f"### Highlights\n\n{highlights}",
        encoding="utf-8",
    )
    (folder / "docs" / "moving-on.md").write_text(
        "# Moving to a new release\n\n## From 2.3\n\nStop the widget server, replace its binary with the new one, "
        "run the schema migration it ships with, and start it again; the clients keep working throughout.\n",
        encoding="utf-8",
    )
    write_widget_pages(folder / "docs", ("install", "backup", "plugins"))
    engine = build_engine(folder, tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        hits = engine.search("how do I upgrade widget to 2.4", k=5, mode=mode).hits
        assert hits[0].path == "docs/moving-on.md", (mode, [(hit.path, hit.heading) for hit in hits])
        assert "changelogs/CHANGELOG-2.4.md" in [hit.path for hit in hits]  # still found


def test_a_sentence_pointing_elsewhere_gives_its_place_to_its_page_s_section_that_explains(tmp_path: Path) -> None:
    """SvelteKit's adapter page ends "### Further reading: You may wish to refer to [Cloudflare's documentation for
    deploying a SvelteKit site on Cloudflare Pages](…)": the link's words matched "How do I deploy to Cloudflare
    Pages?" best and the pointer was the hit's text; the page's deployment section is shown, the pointer ranked
    lower. A changelog's short entry with a link to its pull request stays as it was (not thin)."""
    engine = page_among_widgets(
        tmp_path,
        "cloudflare.md",
        "# Cloudflare\n\n## Deployment\n\nSet the build command to npm run build and the output directory to "
        "build/cloudflare in your project settings, then push: every push to the main branch deploys the site.\n\n"
        "## Further reading\n\nYou may wish to refer to [the guide on deploying a widget site on Cloudflare "
        "Pages](https://example.org/pages/widget/).\n",
    )
    for mode in ("hybrid", "keyword"):
        hits = engine.search("deploying a widget site on Cloudflare Pages", k=5, mode=mode).hits
        assert (hits[0].path, hits[0].heading) == ("cloudflare.md", "Cloudflare > Deployment"), (mode, hits[0])
    entry = (
        "### Patch Changes\n\n- fix: handle a missing package.json file gracefully ([#13691](https://x.org/pull/1))\n"
    )
    assert not formats.is_thin("CHANGELOG.md", entry)


def test_a_chunk_of_link_definitions_is_no_hit_and_gives_its_page_s_place_to_its_prose(tmp_path: Path) -> None:
    """mdBook's theme page is longer than a chunk, and its last chunk holds only the link definitions at its end
    (`[newer browsers]: https://caniuse.com/...`), which render as nothing: that chunk was the first hit for "How do I
    configure the theme?" (its words are the theme option's). It is thin, and never shown; the page's prose is."""
    prose = "The theme is customizable: put a file in a theme folder next to src and it replaces the built-in one. "
    engine = page_among_widgets(
        tmp_path,
        "theme.md",
        f"# Theme\n\n{prose * 30}\n\n"
        "[`output.html.preferred-dark-theme`]: ../configuration/renderers.md#configure-the-theme-option\n"
        "[theme configuration]: https://example.org/configure/theme/options#preferred-dark-theme\n",
    )
    for mode in ("hybrid", "keyword"):
        hits = engine.search("configure the theme option", k=5, mode=mode).hits
        assert hits[0].path == "theme.md" and "customizable" in hits[0].text, (mode, hits[0])
        assert all("]: " not in hit.text.split("\n")[0] for hit in hits), (mode, [hit.text[:60] for hit in hits])
    definitions = "[a]: https://example.org/a\n[Global rate limiting]: https://example.org/global-rate-limiting\n"
    assert formats.is_thin("x.md", definitions) and formats.too_little("x.md", definitions)
    assert not formats.too_little("x.md", "Run the rate limit service.\n" + definitions)


def test_one_line_and_see_also_chunks_rank_below_the_page_that_explains(tmp_path: Path) -> None:
    """Issue 25 (item 9): a "SEE ALSO" list of links and a heading with one short line won hits, since a short chunk
    that names the query's words scores high; they rank below a chunk that explains, in hybrid and keyword mode."""
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "upgrading.md").write_text(
        "# Upgrading\n\nTo upgrade a release, run the upgrade command with the chart and its new values. If the new "
        "revision fails its checks, roll the release back to the revision before it; every upgrade keeps the old "
        "revisions so that a rollback is always possible.\n",
        encoding="utf-8",
    )
    (folder / "commands.md").write_text(
        "# Commands\n\n### SEE ALSO\n\n"
        "* [upgrade](upgrade.md) - upgrade a release\n* [rollback](rollback.md) - roll back a release\n",
        encoding="utf-8",
    )
    (folder / "todo.md").write_text("# Todo\n\n## Release upgrade\n\nRollback: TBD.\n", encoding="utf-8")
    engine = build_engine(folder, tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        hits = engine.search("upgrade a release rollback", k=5, mode=mode).hits
        assert hits[0].path == "upgrading.md", (mode, [(hit.path, hit.heading) for hit in hits])
        assert {hit.path for hit in hits} >= {"commands.md", "todo.md"}  # ranked lower, not dropped
