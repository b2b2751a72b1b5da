"""A thin chunk sending the reader to one other page stands aside for that page (scree.search.pointers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import Backend

from scree.search.pointers import PageKeys, link_targets, page_key, points_elsewhere

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
        ("/install-binary/", "docs/other/page.md", None),  # two files alike: no guess
        ("https://gohugo.io/configuration/languages/", "content/en/a.md", None),  # another site
        ("#configuration", "content/en/a.md", None),  # this page
        ("/content-management/multilingual/", "content/en/content-management/multilingual.md", None),  # itself
    ],
)
def test_a_link_resolves_to_the_indexed_file_it_leads_to(target: str, source: str, led_to: str | None) -> None:
    assert PageKeys(PATHS).resolve(target, source) == led_to


def test_a_pointer_is_a_sentence_sending_the_reader_elsewhere() -> None:
    assert points_elsewhere("## Configuration\n\nSee [configure languages][].")
    assert points_elsewhere("Please refer to [installing by binary](./install-binary.md).")
    assert points_elsewhere("For every option, see [the reference](ref.md).")
    assert not points_elsewhere("### Next Step\n\n* [Check Application State](./get-application-instance)")
    assert not points_elsewhere("Seeing is believing: [a demo](demo.md).")


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
        hits = engine.search("multilingual next step", k=2, mode="keyword").hits  # a list leading on is no pointer
        assert hits[0].path == "content/content-management/multilingual.md", [hit.path for hit in hits]
