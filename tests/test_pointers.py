"""A thin chunk sending the reader to one other page stands aside for that page, and a section that several of the
first candidates link to by the query's words stands before them (scree.search.pointers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import Backend

from scree.search.pointers import (
    PageKeys,
    Reference,
    anchors,
    fragment,
    link_targets,
    links,
    page_key,
    points_elsewhere,
    referral,
    same_page,
    slug,
)

PATHS = [
    "content/en/configuration/languages.md",
    "content/de/configuration/languages.md",
    "content/en/content-management/multilingual.md",
    "content/en/functions/collections/Where.md",
    "content/en/about/_index.md",
    "docs/installation/installation.md",
    "docs/installation/install-binary.md",
    "docs/v1/installation/install-binary.md",
    "README.md",
]


def test_links_are_read_inline_and_by_reference_with_definitions_anywhere_in_the_file() -> None:
    text = "See [configure languages][] and [the API](../api.md#top 'API'), not ![a logo](logo.png)."
    whole = f"{text}\n\n## More\n\n[configure  Languages]: /configuration/languages/\n"
    assert link_targets(text, whole) == ["../api.md#top", "/configuration/languages/"]
    assert link_targets("Read [the guide][guide].", "[guide]: <guide.md>") == ["guide.md"]
    assert link_targets("See [undefined][].", "") == []
    assert links(text, whole) == [("the API", "../api.md#top"), ("configure languages", "/configuration/languages/")]


def test_a_link_names_a_section_by_its_written_id_or_its_headings_slug() -> None:
    assert fragment("./confirms#Publisher-Confirms") == "publisher-confirms"
    assert fragment("./confirms") == ""
    assert slug(" Ordering Considerations: Publisher Confirms (AMQP 0-9-1) ") == (
        "ordering-considerations-publisher-confirms-amqp-0-9-1"
    )
    assert anchors("## Publisher Confirms {#publisher-confirms}\n\ntext", "Guide > Publisher Confirms") == {
        "publisher-confirms"
    }
    assert anchors("### Maximum Tag {#max-tag}\n", "Guide > Maximum Tag") == {"max-tag", "maximum-tag"}
    assert anchors('<a name="intro"></a>\n## Introduction\n', "Introduction") == {"intro", "introduction"}
    assert anchors("## Request body { #request-body }\n", "Request body") == {"request-body"}


def test_a_page_key_is_the_page_a_link_names() -> None:
    assert page_key("content/en/functions/collections/Where.md") == "content/en/functions/collections/where"
    assert page_key("content/en/about/_index.md") == "content/en/about"
    assert page_key("docs/README.md") == "docs"


@pytest.mark.parametrize(
    ("target", "source", "led_to"),
    [
        ("/configuration/languages/", "content/en/content-management/multilingual.md", PATHS[0]),
        ("/configuration/languages/", "content/de/faq.md", PATHS[1]),  # the linking file's own language
        ("/functions/collections/where/#examples", "content/en/x.md", PATHS[3]),  # lower-cased, anchor aside
        ("../about/", "content/en/content-management/multilingual.md", PATHS[4]),  # from the file's folder
        ("../configuration/languages", "content/en/content-management/multilingual.md", PATHS[0]),  # Hugo's way
        ("./install-binary.md", "docs/installation/installation.md", PATHS[6]),  # not the v1 copy
        ("/install-binary/", "docs/other/page.md", PATHS[6]),  # two files alike: the one in fewer folders
        ("https://gohugo.io/configuration/languages/", "content/en/a.md", None),  # another site
        ("#configuration", "content/en/a.md", None),  # this page
        ("/content-management/multilingual/", "content/en/content-management/multilingual.md", None),  # itself
        ("./languages", "content/en/configuration/_index.md", PATHS[0]),  # an index page: from its folder (Hugo)
        ("./multilingual", "content/en/content-management/_index.md", PATHS[2]),  # served at its folder's URL
        ("./configuration/languages", "content/en/about/_index.md", PATHS[0]),  # so from the folder's parent
    ],
)
def test_a_link_resolves_to_the_indexed_file_it_leads_to(target: str, source: str, led_to: str | None) -> None:
    assert PageKeys(PATHS).resolve(target, source) == led_to


def _reference(position: int, source: str, led: str, anchor: str = "") -> Reference:
    return Reference(position, source, led, anchor, frozenset({"publish", "confirm"}))


def test_a_section_is_referred_to_by_two_files_linking_to_it() -> None:
    current, unreleased = "versioned_docs/version-4.3/confirms.md", "docs/confirms.md"
    guide, tutorial = "versioned_docs/version-4.3/publishers/index.md", "tutorials/tutorial-seven-go.md"
    assert referral([_reference(1, guide, current, "publisher-confirms")]) is None  # one file is no agreement
    twice = [_reference(1, guide, current, "publisher-confirms"), _reference(3, guide, current, "publisher-confirms")]
    assert referral(twice) is None  # nor one file twice
    agreed = [
        _reference(4, tutorial, unreleased, "publisher-confirms"),  # a version's copy is the same page
        _reference(2, guide, current, "publisher-confirms"),
        _reference(0, tutorial, current, "overview"),  # another section of that page
        _reference(1, guide, guide),  # a page linking to itself refers to nothing
    ]
    assert referral(agreed) == agreed[1]
    assert same_page(current, unreleased)
    assert not same_page(current, guide)


def test_a_pointer_is_a_sentence_sending_the_reader_elsewhere() -> None:
    assert points_elsewhere("## Configuration\n\nSee [configure languages][].")
    assert points_elsewhere("Please refer to [installing by binary](./install-binary.md).")
    assert points_elsewhere("For every option, see [the reference](ref.md).")
    assert not points_elsewhere("### Next Step\n\n* [Check Application State](./get-application-instance)")
    assert not points_elsewhere("Seeing is believing: [a demo](demo.md).")
    assert points_elsewhere(
        "## Suppress lint rules\n\nYou can refer to [the suppression page](/analyzer/suppressions)."
    )
    assert not points_elsewhere("You can use [the suppression comment](/analyzer/suppressions) instead.")


def test_of_files_alike_a_link_leads_to_the_one_in_the_fewest_folders() -> None:
    """Starlight keeps its default language at the top of `docs/` and each translation in a folder of its own: a
    site-absolute link from a page outside them all leads to the default language's page."""
    paths = ["docs/analyzer/suppressions.mdx", "docs/fr/analyzer/suppressions.mdx", "docs/ja/analyzer/suppressions.mdx"]
    assert PageKeys(paths).resolve("/analyzer/suppressions", "docs/linter/index.mdx") == paths[0]
    assert PageKeys(paths).resolve("/analyzer/suppressions", "docs/ja/linter/index.mdx") == paths[2]
    assert PageKeys(paths[1:]).resolve("/analyzer/suppressions", "docs/linter/index.mdx") is None  # a tie


@pytest.fixture
def site(tmp_path: Path) -> Path:
    folder = tmp_path / "site"
    pages = {
        "content-management/multilingual.md": (
            "# Multilingual mode\n\n## Configuration\n\nSee [configure languages][].\n\n"
            "## Translate your content\n\nTranslate each page by file name or by folder, one per language.\n\n"
            "## Next step\n\n* [Menus](../menus/)\n\n"
            "[configure languages]: /configuration/languages/\n"
        ),
        "configuration/languages.md": (
            "---\ntitle: Configure languages\n---\n\n## Base settings\n\n"
            "Set defaultContentLanguage to the language key of the default language, and list each language's\n"
            "weight, label and direction under its key.\n"
        ),
        "menus.md": "# Menus\n\nDefine menu entries in front matter or in the site's settings, with a weight each.\n",
    }
    for name, text in pages.items():
        (folder / "content" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "content" / name).write_text(text, encoding="utf-8")
    return folder


def test_the_page_a_thin_pointer_sends_the_reader_to_comes_first(site: Path, index_backend: Backend) -> None:
    """Hugo's docs: "Multilingual mode > Configuration" says only "See [configure languages][]." and held every word
    of "How do I configure a multilingual site?"; the page it leads to is the answer, shown from its top."""
    with index_backend.engine(site) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search("configure multilingual mode", k=3, mode=mode).hits
            assert [hit.path for hit in hits][:2] == [
                "content/configuration/languages.md",
                "content/content-management/multilingual.md",
            ], (mode, [(hit.path, hit.heading) for hit in hits])
            assert hits[0].heading == "Configure languages > Base settings"
        # a list leading on is no pointer: the page it lists, none of the query's words, is not lifted among the hits
        paths = [hit.path for hit in engine.search("multilingual next step", k=3, mode="keyword").hits]
        assert "content/content-management/multilingual.md" in paths and "content/menus.md" not in paths, paths


@pytest.fixture
def referred(tmp_path: Path) -> Path:
    """RabbitMQ's docs, shrunk: its publishers guide and a tutorial say "publisher confirms" again and again and link
    them to the reference page's section, whose own text hardly says the words."""
    folder = tmp_path / "referred"
    pages = {
        "docs/confirms.md": (
            "# Acknowledgements and Confirms\n\n## Consumer Acknowledgements {#consumer-acknowledgements}\n\n"
            "Consumers acknowledge each delivery so the broker can forget it, or requeue it when they fail.\n\n"
            "## Publisher Confirms {#publisher-confirms}\n\n"
            "Networks fail in less than obvious ways, so a client that wrote a frame to its socket cannot assume it\n"
            "arrived. Once a channel is in confirm mode, the broker acknowledges each message it has handled, and\n"
            "the delivery tag carries the message's sequence number.\n"
        ),
        "docs/publishers/index.md": (
            "# Publishers\n\n## Data Safety\n\n"
            "[Publisher confirms](./confirms#publisher-confirms) tell publishers which messages the broker took:\n"
            "publishers using publisher confirms wait for confirms in batches or one by one, publisher by publisher.\n"
        ),
        "tutorials/confirms-go.md": (
            "# Tutorial seven: publisher confirms in Go\n\n## Publisher confirms\n\n"
            "[Publisher confirms](/docs/confirms#publisher-confirms) are how a publisher knows its messages are\n"
            "safe: this tutorial enables publisher confirms on a channel and publishes with confirms.\n"
        ),
        "docs/queues.md": "# Queues\n\n## Declaring\n\nDeclare a queue before consumers subscribe to it.\n",
    }
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def test_the_section_the_first_hits_link_to_by_the_querys_words_comes_first(
    referred: Path, index_backend: Backend
) -> None:
    with index_backend.engine(referred) as engine:
        hits = engine.search("How do publisher confirms work?", k=3, mode="hybrid").hits
        assert (hits[0].path, hits[0].heading) == (
            "docs/confirms.md",
            "Acknowledgements and Confirms > Publisher Confirms",
        ), [(hit.path, hit.heading) for hit in hits]
        assert {hit.path for hit in hits[1:]} == {"docs/publishers/index.md", "tutorials/confirms-go.md"}
        hits = engine.search("How do publisher confirms work?", k=3, mode="keyword").hits  # hybrid's rule alone
        assert hits[0].path != "docs/confirms.md", [(hit.path, hit.heading) for hit in hits]


def test_one_page_linking_is_no_referral(referred: Path, index_backend: Backend) -> None:
    (referred / "tutorials/confirms-go.md").write_text(
        "# Tutorial seven: publisher confirms in Go\n\n## Publisher confirms\n\nThis tutorial enables publisher\n"
        "confirms on a channel and publishes with publisher confirms, as publishers do.\n",
        encoding="utf-8",
    )
    with index_backend.engine(referred) as engine:
        hits = engine.search("How do publisher confirms work?", k=3, mode="hybrid").hits
        assert hits[0].path != "docs/confirms.md", [(hit.path, hit.heading) for hit in hits]


def test_a_link_with_no_anchor_lands_on_the_section_headed_by_its_words(tmp_path: Path, index_backend: Backend) -> None:
    """Argo CD's pages link "[App of Apps pattern](../operator-manual/cluster-bootstrapping.md)", a page whose
    section "App Of Apps Pattern (Alternative)" is what they mean; the pages linking it said the words more often."""
    pages = {
        "operator-manual/cluster-bootstrapping.md": (
            "# Cluster Bootstrapping\n\nBootstrap clusters with Argo CD.\n\n## Application Sets\n\n"
            "Generate one application per cluster from a template.\n\n## App Of Apps Pattern (Alternative)\n\n"
            "Declare one parent application whose source holds the child applications' manifests.\n"
        ),
        "user-guide/app-deletion.md": (
            "# App Deletion\n\n## Child applications\n\nWith the [App of Apps pattern](../operator-manual/cluster-"
            "bootstrapping.md), deleting a parent app of apps deletes its child apps: the app of apps pattern's apps.\n"
        ),
        "user-guide/managed-by.md": (
            "# Managed By\n\n## Example\n\nIn the [app of apps pattern](../operator-manual/cluster-bootstrapping.md)"
            " a parent app manages its apps, as an app of apps pattern does.\n"
        ),
    }
    for name, text in pages.items():
        (tmp_path / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / name).write_text(text, encoding="utf-8")
    with index_backend.engine(tmp_path / "docs") as engine:
        hits = engine.search("How does the app of apps pattern work?", k=3, mode="hybrid").hits
        assert (hits[0].path, hits[0].heading) == (
            "operator-manual/cluster-bootstrapping.md",
            "Cluster Bootstrapping > App Of Apps Pattern (Alternative)",
        ), [(hit.path, hit.heading) for hit in hits]
