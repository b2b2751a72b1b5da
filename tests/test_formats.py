"""Issue 33: the table of formats is the one place that picks a file's chunker and its readable-line rules."""

from __future__ import annotations

from scree.config import DEFAULT_EXTENSIONS
from scree.content import formats
from scree.content.chunking import chunk_markdown
from scree.content.formats import FALLBACK, FORMATS, DocFormat, NotDocs, detect, embedded_text
from scree.content.ignore import IgnorePolicy


def test_the_default_endings_are_the_tables_own() -> None:
    """config cannot import content (tests/test_layers.py), so it spells the endings once more: they must agree."""
    assert DEFAULT_EXTENSIONS == formats.DEFAULT_SUFFIXES
    assert IgnorePolicy.__init__.__defaults__ == (formats.DEFAULT_SUFFIXES,)
    claimed = [suffix for row in FORMATS for suffix in row.suffixes]
    assert all(suffix == suffix.lower() and suffix.startswith(".") for suffix in claimed)


def test_every_row_is_a_whole_format() -> None:
    names = [row.name for row in FORMATS]
    assert len(set(names)) == len(names)
    for row in FORMATS:
        chunks = list(row.chunks("Title\n\nSome words of a paragraph to index.\n"))
        assert chunks and all(chunk.start_line >= 1 for chunk in chunks), row.name
        assert "words of a paragraph" in embedded_text("x", chunks[-1], row)


def test_markdown_and_mdx_are_rows_and_an_unknown_ending_reads_as_markdown() -> None:
    assert getattr(detect("docs/a.md", "# A\n"), "name", None) == "markdown"
    assert getattr(detect("docs/A.MARKDOWN", "# A\n"), "name", None) == "markdown"
    assert getattr(detect("docs/a.mdx", "# A\n"), "name", None) == "mdx"
    assert detect("docs/a.org", "* A\n") is FALLBACK  # an ending SCREE_EXTENSIONS added


def test_mdx_code_lines_are_a_row_rule_not_a_path_test() -> None:
    page = "import X from 'x';\n\n# Page\n\n<Tabs>\nWords that stay in what is embedded.\n</Tabs>\n"
    chunk = chunk_markdown(page)[-1]
    mdx = detect("p.mdx", page)
    markdown = detect("p.md", page)
    assert isinstance(mdx, DocFormat) and isinstance(markdown, DocFormat)
    assert "Tabs" not in embedded_text("p", chunk, mdx) and "Tabs" in embedded_text("p", chunk, markdown)


def test_not_docs_is_a_value_never_an_error() -> None:
    refusing = DocFormat(
        "t", (".t",), FALLBACK.chunks, FALLBACK.readable, FALLBACK.thin, refuses=lambda name, text: "a data file"
    )
    saved = formats.FORMATS
    try:
        formats.FORMATS = (*saved, refusing)
        assert detect("x.t", "1,2,3\n") == NotDocs("a data file")
    finally:
        formats.FORMATS = saved


def test_thin_is_each_formats_own_rule() -> None:
    """A toctree page or a title over one short line has little to read (issue 25's demotion), in every format; a
    short code example is content."""
    toctree = "Widget Docs\n===========\n\n.. toctree::\n   :maxdepth: 2\n\n   install\n   api\n   changes\n"
    assert formats.is_thin("docs/index.rst", toctree)
    assert not formats.is_thin("docs/index.rst", "Setup\n=====\n\n.. code-block:: sh\n\n   make\n")
    prose = "Setup\n=====\n\nInstall the widget with the package manager your platform uses, then run it.\n"
    assert not formats.is_thin("docs/setup.rst", prose)
    assert formats.is_thin("docs/a.adoc", "== Setup\n:toc: left\n\nSee <<x>>.\n")
    assert not formats.is_thin("docs/a.adoc", "== Setup\n\n[source,sh]\n----\nmake\n----\n")
    assert formats.is_thin("notes/a.md", "# Setup\n\nSee below.\n")  # markdown's own rule, as before
    # a shortcode alone on its line and a script block show a widget, not words; what a shortcode wraps is words
    assert formats.is_thin("docs/a.md", '{{< youtube id="psYQFbPgIOI" class="youtube-video" title="Metadata" >}}\n')
    assert formats.is_thin("docs/a.md", "<script setup>\nimport Basic from './demos/Basic.vue'\n</script>\n")
    noted = "{{% notice %}}\nRestart the proxy after you change its listeners, or the change waits.\n{{% /notice %}}\n"
    assert not formats.is_thin("docs/a.md", noted)
    assert not formats.is_thin("docs/a.md", "```html\n<script>\nrun()\n</script>\n```\n")
    learn_more = (  # Linkerd's features/gateway-api.md: an introduced list of reference links, and their targets
        "## Learn More\n\nTo get started with the Gateway API types, you can:\n\n- [Configure fault injection]"
        "(../tasks/fault-injection/)\n- [Configure timeouts][timeouts]\n- [Configure dynamic request routing][dyn]\n\n"
        "[timeouts]: ../features/retries-and-timeouts/\n[dyn]: ../tasks/configuring-dynamic-request-routing/\n"
    )
    assert formats.is_thin("docs/features/gateway-api.md", learn_more)
    cards = (  # Clerk's "Next steps": each card a link, then its description as an item of its own
        "## Next steps\n\n<Cards>\n  - [Clerk](/docs/ios/reference/native-mobile/clerk)\n"
        "  - Learn how to access Clerk in your app.\n\n  ---\n\n"
        "  - [iOS Quickstart](/docs/ios/getting-started/quickstart)\n"
        "  - Follow the end-to-end setup guide for a Clerk-powered iOS app.\n</Cards>\n"
    )
    assert formats.is_thin("docs/reference/native-mobile/configuration.ios.mdx", cards)
    sections = "".join(f"{'    ' * (n % 2)}- [Section {n}](#section-{n})\n" for n in range(30))
    # Laravel: each page opens with its sections' links (38 on its Eloquent page), the next heading's anchor after
    contents = f'# Eloquent: Getting Started\n\n{sections}\n<a name="introduction"></a>\n'
    assert formats.is_thin("eloquent.md", contents)
    assert not formats.is_thin("eloquent.md", contents.replace("<a name", "Eloquent maps tables to models. <a name"))
    next_steps = (  # KubeVela's "What's Next": items sending the reader on in a few words around each link
        "## What's Next\n\n* Learn more about [defining customized trait](../traits/customize-trait) in CUE.\n"
        "* Learn how to [define health check and custom status](../traits/status) of Component.\n"
    )
    assert formats.is_thin("docs/platform-engineers/components/custom-component.md", next_steps)
    replaced = (  # React Native 0.72's removals: the words between the links say what replaces what
        "### Deprecated Component Removals\n\n- [Slider](https://reactnative.dev/docs/0.72/slider) is superseded by "
        "[@react-native-community/slider](https://github.com/callstack/react-native-slider)\n- [DatePickerIOS]"
        "(https://reactnative.dev/docs/0.72/datepickerios) is superseded by [@react-native-community/datetimepicker]"
        "(https://github.com/react-native-datetimepicker/datetimepicker)\n"
    )
    assert not formats.is_thin("website/blog/2023-06-21-0.72.mdx", replaced)
    steps = "## Steps\n\n- [Install](install.md)\n- Run the installer, then answer its questions.\n- Restart it.\n"
    assert not formats.is_thin("docs/a.md", steps)  # an item that is no link's description is content
    types = "These types:\n- [`.astro`](#astro)\n- `.mdx` (with the [MDX integration](/mdx/))\n- [`.md`](#md)\n"
    assert not formats.is_thin("docs/pages.md", "## Supported page files\n\n" + types)
    after = "- [The CLI](#cli)\n- [The control plane](#control)\n\nThese steps should be performed in this order."
    assert not formats.is_thin("docs/upgrade.md", "## Upgrade\n\nThere are two parts to upgrade:\n\n" + after)
    explained = "## Retries\n\nRetries are configured per route with an annotation, and these links say more:\n\n"
    assert not formats.is_thin("docs/a.md", explained + "Each retry waits for the backoff to pass first.\n")
    assert not formats.is_thin("docs/a.md", "## Links\n\n" + "Read these, which explain it all:\n" * 2 + "- [a](a)\n")
    release = "https://github.com/vmware-tanzu/velero/releases/tag/v1.18.0"  # a bare URL or autolink: no words
    assert formats.is_thin("changelogs/CHANGELOG-1.18.md", f"### Download\n{release}\n")
    assert formats.is_thin("changelogs/CHANGELOG-1.18.md", f"### Download\n<{release}>\n")
    assert not formats.is_thin(
        "notes/a.md", f"# Get it\n\nDownload the signed binary for your platform and check its sum first: {release}"
    )
