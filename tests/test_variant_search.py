"""Variants (scree.content.variants): sibling folders mirroring each other's pages that are neither versions nor
translations (a library's docs per framework, a platform's per OS). A query naming one ranks the others' pages lower,
over a real folder, a real index and real searches (the hashed test embedder), and `scree doctor` lists them."""

from __future__ import annotations

from pathlib import Path

from test_version_search import engine_for, indexed_doctor, page, search, tree

from scree.content.variants import copy_keys, find_variants
from scree.search.ranking import after_others
from scree.search.version_evidence import is_language_folder

GUIDES = ("caching", "queries", "mutations", "testing")


def tanstack_like(folder: Path) -> Path:
    """docs/framework/<framework>/guides/ for three frameworks; Solid's suspense guide says React's words more often
    than React's own; a reference page outside the framework folders."""
    files: dict[str, str] = {}
    for framework in ("react", "solid", "vue"):
        for name in GUIDES:
            files[f"docs/framework/{framework}/guides/{name}.md"] = page(
                f"{name.title()} in {framework}",
                f"How {name} work in the {framework} adapter of the library, step by step.",
            )
    files["docs/framework/react/guides/suspense.md"] = page(
        "Suspense", "Suspense with useQuery: wrap the component in a boundary that shows a fallback while it loads."
    )
    files["docs/framework/solid/guides/suspense.md"] = page(
        "Suspense",
        "Suspense with useQuery in Solid works as Suspense with useQuery in React does: React users know useQuery "
        "and Suspense already, so Solid's useQuery suspends like React's.",
    )
    files["docs/reference/QueryClient.md"] = page(
        "QueryClient", "The QueryClient constructor takes the default options and the query cache."
    )
    return tree(folder, files)


def test_which_sibling_folders_are_variants() -> None:
    paths = [f"docs/framework/{fw}/guides/{name}.md" for fw in ("react", "solid", "vue") for name in GUIDES]
    paths += [f"docs/v{n}/guides/{name}.md" for n in (1, 2) for name in GUIDES]  # versions, not variants
    paths += [f"docs/fr/guides/{name}.md" for name in GUIDES] + [f"docs/guides/{name}.md" for name in GUIDES]
    paths += [f"docs/api/{name}.md" for name in GUIDES] + [f"docs/concepts/{n}.md" for n in ("caching", "x", "y")]
    paths += [
        f"docs/concepts/z{n}.md" for n in range(4)
    ]  # shares 1 of its 7 pages with api/: a guide beside a reference
    paths += [f"samples/bookstore/{stage}/{name}.md" for stage in ("start", "solution") for name in GUIDES]  # stages
    found = find_variants(sorted(paths), is_language_folder)
    assert sorted(found.folders) == ["docs/framework/react", "docs/framework/solid", "docs/framework/vue"]
    assert found.folders["docs/framework/react"] == ("react",)
    assert found.named("How do I use suspense in React?", str.split) == {"docs/framework/react"}
    assert found.named("Solid's useQuery with a Vue app", str.split) == {"docs/framework/solid", "docs/framework/vue"}
    # a word of a variant's name used as such names no variant: React Router's data/ mode, "while data loads"
    modes = find_variants(
        [f"docs/start/{mode}/{name}.md" for mode in ("data", "framework") for name in GUIDES], is_language_folder
    )
    assert modes.named("How do I show pending UI while data loads?", str.split) == set()
    assert modes.named("How do I install it in framework mode?", str.split) == {"docs/start/framework"}
    assert found.others({"docs/framework/react"}) == {"docs/framework/solid", "docs/framework/vue"}
    assert found.page_of("docs/framework/vue/guides/caching.md") == "docs/framework/*/guides/caching.md"
    assert found.page_of("docs/framework/react/guides/caching.md") == "docs/framework/*/guides/caching.md"
    assert found.page_of("docs/guides/caching.md") is None
    # Directus (Nuxt Content): folders ordered by a number, `01.nextjs/`, named by what follows it, and a one-word
    # name a query writes as words ("Next.js", "Svelte Kit") named too
    ordered = find_variants(
        [f"content/frameworks/{fw}/{name}.md" for fw in ("01.nextjs", "02.nuxt", "04.sveltekit") for name in GUIDES],
        is_language_folder,
    )
    assert ordered.folders["content/frameworks/01.nextjs"] == ("nextjs",)
    assert ordered.named("How do I fetch data with Nuxt?", str.split) == {"content/frameworks/02.nuxt"}
    assert ordered.named("How do I fetch data in Next.js?", str.split) == {"content/frameworks/01.nextjs"}
    assert ordered.named("caching in a Svelte Kit app", str.split) == {"content/frameworks/04.sveltekit"}
    assert ordered.named("What comes next? JS caching", str.split) == set()


def test_a_section_s_copy_shares_a_key_with_it_where_one_part_of_the_path_differs() -> None:
    go = copy_keys("tutorials/tutorial-seven-go.md", "Publishing with Confirms > Publisher Confirms > Overview")
    java = copy_keys("tutorials/tutorial-seven-java.md", "Publishing with Confirms > Publisher Confirms")
    ruby = copy_keys("tutorials/tutorial-seven-ruby.md", "Publishing with Confirms > Publisher Confirms > (Bunny)")
    assert go & java and java & ruby  # a trail leading to the other's, a qualifier in brackets aside
    html = copy_keys("rules/no-excessive-lines/html.mdx", "noExcessiveLines (HTML) > Suppressions")
    assert html & copy_keys("rules/no-excessive-lines/css.mdx", "noExcessiveLines (CSS) > Suppressions")
    assert not html & copy_keys("rules/no-excessive-lines/css.mdx", "noExcessiveLines (CSS) > Options")
    assert not java & copy_keys("docs/guides/seven-java.md", "Publishing with Confirms > Publisher Confirms")  # 2 parts
    assert not copy_keys("network-faults-in-nodes.md", "Simulate Network Faults")  # an opening: its title alone


def test_a_copy_is_a_section_of_another_file_never_of_its_own() -> None:
    trail = "Publishing with Confirms > Publisher Confirms"
    sections = [
        (1, "tutorials/seven-go.md", trail),
        (2, "tutorials/seven-go.md", f"{trail} > Overview"),  # its own file's: no copy
        (3, "tutorials/seven-java.md", f"{trail} > Overview"),
        (4, "docs/framework/vue/guides/caching.md", "Caching > Keys"),
        (5, "docs/framework/react/guides/caching.md", "Caching in React > Stale time"),  # a variant's page
        (6, "tutorials/seven-ruby.md", "Publishing with Confirms"),  # an opening: its title alone
    ]
    variants = find_variants(
        [f"docs/framework/{fw}/guides/{name}.md" for fw in ("react", "vue") for name in GUIDES], is_language_folder
    )
    assert variants.repeated(sections) == {3, 5}


def test_an_item_after_others_goes_past_that_many_items_not_moved() -> None:
    ranked = [(item, 10.0 - item) for item in range(8)]
    moved = {1, 2, 3}.__contains__  # a crowd of them: demote() would have them pass few others
    assert [item for item, _ in after_others(ranked, moved, 2)] == [0, 4, 5, 1, 2, 3, 6, 7]
    assert [item for item, _ in after_others(ranked, {6}.__contains__, 5)] == [0, 1, 2, 3, 4, 5, 7, 6]  # or last
    scores = [score for _, score in after_others(ranked, moved, 2)]
    assert scores == sorted(scores, reverse=True)  # a moved item's score is cut to the one above it


def test_a_query_naming_a_framework_gets_that_frameworks_page(tmp_path: Path) -> None:
    """TanStack Query: "How do I use suspense with useQuery in React?" had Solid's useQuery page first and React's
    suspense guide third; a query naming no framework, or one beside a page outside the framework folders, ranks as
    before."""
    folder = tanstack_like(tmp_path / "site")
    engine = engine_for(folder, tmp_path / "index.db")
    hits = search(engine, "How do I use suspense with useQuery in React?", "hybrid")
    assert hits[0].path == "docs/framework/react/guides/suspense.md", [hit.path for hit in hits]
    unnamed = search(engine, "How do I use suspense with useQuery?", "hybrid")
    assert unnamed[0].path == "docs/framework/solid/guides/suspense.md", [hit.path for hit in unnamed]
    # naming none, one variant of a page comes before the others: React's copy goes past five other pages
    paths = [hit.path for hit in search(engine, "How do I use suspense with useQuery?", "hybrid", k=10)]
    assert paths.index("docs/framework/react/guides/suspense.md") > 5, paths
    reference = search(engine, "What does the QueryClient constructor take in React?", "hybrid")
    assert reference[0].path == "docs/reference/QueryClient.md", [hit.path for hit in reference]
    _, doctor = indexed_doctor(tmp_path, folder)
    assert (
        "ok    variants: docs/framework/{react, solid, vue}: a query naming one ranks the others' pages lower; naming "
        "none, it shows one variant of a page before the others" in doctor.stdout
    ), doctor.stdout
    _, plain = indexed_doctor(tmp_path / "plain", tree(tmp_path / "plain-site", {"docs/a.md": page("A", "words")}))
    assert "ok    variants: none found" in plain.stdout, plain.stdout


def test_a_tutorial_in_several_languages_shows_one_of_them_first(tmp_path: Path) -> None:
    """RabbitMQ's tutorials are one file per client language in one folder (`tutorial-seven-go.md`, `-java.md`,
    ...), no variant folders: "How do publisher confirms work?" had three of them among the first six hits."""
    files = {
        f"tutorials/tutorial-confirms-{language}.md": (
            "# Publisher confirms tutorial\n\n## Enabling publisher confirms\n\n"
            f"Enable publisher confirms on a channel with the {language} client, then publish and wait for confirms.\n"
        )
        for language in ("go", "java", "ruby")
    }
    topics = ("channels", "queues", "exchanges", "consumers", "publishers", "acknowledgements")
    files |= {
        f"docs/{name}.md": page(name.title(), f"How {name} use a channel and publisher confirms.") for name in topics
    }
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    paths = [hit.path for hit in search(engine, "How do I enable publisher confirms on a channel?", "hybrid", k=10)]
    tutorials = [position for position, path in enumerate(paths) if path.startswith("tutorials/")]
    assert tutorials[0] < 3 and tutorials[1] > 5, paths
