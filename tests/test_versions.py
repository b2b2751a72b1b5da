"""Version trees by evidence (issue 32): which folders are versions of one docs tree, which is current, and which
current page each old page copies. Pure: paths, config texts and fingerprints in, decisions out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scree.content.languages import Copy, LanguageTrees
from scree.content.site_config import SiteConfig, read_site_config
from scree.content.versions import (
    CONFIG_NAMES,
    CURRENT,
    NEWER,
    OLD,
    VersionTrees,
    find_trees,
    fingerprint,
    heading_names_release,
    names_each,
    names_version,
    parse_hints,
    parse_hugo_config_dir,
    query_versions,
    says_old,
    says_same,
    text_resemblance,
    version_in_name,
    version_of_name,
    versions_in_name,
)

PAGES = ("intro.md", "install.md", "config.md", "cli/run.md", "cli/watch.md", "guides/ci.md")
PLUGIN = "docusaurus-plugin-content-docs"


def statuses(trees: VersionTrees) -> dict[str, str]:
    return {tree.root: tree.status for family in trees.families for tree in family}


def test_version_names() -> None:
    assert version_of_name("version-30.4") == "30.4"
    assert version_of_name("v3.7") == "3.7"
    assert version_of_name("2.x") == "2"
    assert version_of_name("10.x") == "10"
    assert version_of_name("docs") is None
    assert version_of_name("current") is None


def test_docusaurus_versions_json_names_a_numbered_tree_current_and_docs_is_next() -> None:
    """Jest's layout: docs/ is the unreleased "next"; versions.json's first entry is the current one."""
    paths = [f"docs/{p}" for p in PAGES] + [
        f"website/versioned_docs/version-{v}/{p}" for v in ("30.4", "30.0", "29.7") for p in PAGES
    ]
    hint, *_ = parse_hints("website/versions.json", json.dumps(["30.4", "30.0", "29.7"]))
    assert hint is not None and hint.current == "30.4"
    trees = find_trees(paths, [hint])
    assert statuses(trees) == {
        "website/versioned_docs/version-30.4": CURRENT,
        "docs": NEWER,
        "website/versioned_docs/version-30.0": OLD,
        "website/versioned_docs/version-29.7": OLD,
    }
    copy = trees.copy("docs/cli/run.md")
    assert copy is not None and copy.counterpart == "website/versioned_docs/version-30.4/cli/run.md"


def test_a_version_named_by_a_word_in_versions_json_is_current_and_docs_is_next() -> None:
    """Prettier's layout: website/versions.json lists ["stable"], its docs in versioned_docs/version-stable/ beside
    the unreleased docs/. The folder's `version-` prefix hid the name, and docs/ was taken for an old version."""
    paths = [f"docs/{p}" for p in PAGES] + [f"website/versioned_docs/version-stable/{p}" for p in PAGES]
    hints = parse_hints("website/versions.json", '["stable"]')
    assert statuses(find_trees(paths, hints)) == {"website/versioned_docs/version-stable": CURRENT, "docs": NEWER}


def test_last_version_current_keeps_docs_current() -> None:
    paths = [f"docs/{p}" for p in PAGES] + [f"versioned_docs/version-10.x/{p}" for p in PAGES]
    config = "module.exports = { presets: [['classic', { docs: { lastVersion: 'current' } }]] };"
    hint, *_ = parse_hints("versions.json", '["10.x"]', {"docusaurus.config.js": config})
    assert hint is not None and hint.current == ""
    assert statuses(find_trees(paths, [hint])) == {"docs": CURRENT, "versioned_docs/version-10.x": OLD}


def test_the_config_naming_the_current_version_is_the_one_doctor_names() -> None:
    """tigera/docs: calico-enterprise_versions.json lists the unreleased 3.24-1 first, docusaurus.config.js's
    `lastVersion: '3.23-2'` names the current one; `scree doctor` said the versions file named it."""
    paths = [f"site/versioned_docs/version-{v}/{p}" for v in ("3.24-1", "3.23-2") for p in PAGES]
    config = "module.exports = { presets: [['classic', { docs: { lastVersion: '3.23-2' } }]] };"
    hints = parse_hints("site/versions.json", '["3.24-1", "3.23-2"]', {"docusaurus.config.js": config})
    trees = find_trees(paths, hints)
    assert statuses(trees) == {
        "site/versioned_docs/version-3.23-2": CURRENT,
        "site/versioned_docs/version-3.24-1": NEWER,
    }
    assert trees.families[0][0].why == "site/docusaurus.config.js (lastVersion) names 3.23-2 current"
    listed = find_trees(paths, parse_hints("site/versions.json", '["3.24-1", "3.23-2"]'))
    assert listed.families[0][0].why == "site/versions.json names 3.24-1 current"


def test_an_id_of_another_object_names_no_docs_plugin_instance() -> None:
    """great_expectations' docusaurus.config.js: `gtag: {id: 'GTM-…'}` and a commented-out announcement bar's
    `id: 'RTD_docs'` come before the preset's `docs: {lastVersion: 'current'}`, whose option was taken for an
    instance "RTD_docs", so versions.json's first entry (0.18) was current and the 1.x docs/ unreleased."""
    config = (
        "module.exports = {\n  gtag: { id: 'GTM-K63L45F' },\n  themeConfig: {\n"
        "    // announcementBar: {\n    //   id: 'RTD_docs', // Link to RTD Docs\n    // },\n"
        "    navbar: { items: [{ type: 'docsVersionDropdown' }] },\n  },\n"
        "  presets: [['@docusaurus/preset-classic', {\n    docs: {\n      includeCurrentVersion: true,\n"
        "      lastVersion: 'current',\n"
        "      versions: { current: { label: '1.2.0' }, ['0.18']: { label: '0.18.21' } },\n    },\n  }]],\n};\n"
    )
    paths = [f"docs/docusaurus/docs/{p}" for p in PAGES] + [
        f"docs/docusaurus/versioned_docs/version-0.18/{p}" for p in PAGES
    ]
    hints = parse_hints("docs/docusaurus/versions.json", '["0.18"]', {"docusaurus.config.js": config})
    assert [hint.current for hint in hints] == [""]
    assert statuses(find_trees(paths, hints)) == {
        "docs/docusaurus/docs": CURRENT,
        "docs/docusaurus/versioned_docs/version-0.18": OLD,
    }
    # an instance's own id, before its lastVersion in the same object, still names it (vcluster, tigera)
    plugin = (
        "plugins: [['@docusaurus/plugin-content-docs', { id: 'platform', path: 'platform', lastVersion: '4.11.0' }]]"
    )
    assert [hint.scope for hint in parse_hints("docusaurus.config.js", f"module.exports = {{ {plugin} }};")] == [
        ("platformversioneddocs",)
    ]


def test_the_trees_a_docusaurus_versions_json_declares_are_one_family_however_restructured() -> None:
    """react-native-gesture-handler's layout: docs/ (3.x, `lastVersion: 'current'`) was restructured and shares two
    of version-2.x's ten pages, under the mirrored share; its legacy-gestures/ holds what version-2.x/gestures/ did,
    and version-1.x/api/ what version-2.x/ holds at its top. Mirroring alone paired those subfolders and took
    version-2.x/gestures/ and version-1.x/api/ for current trees."""
    gestures = [f"gestures/{name}.md" for name in ("tap", "pan", "pinch", "rotation", "fling", "long-press")]
    top = ["installation.md", "quickstart.md", "troubleshooting.md", "testing.md"]
    paths = (
        [f"docs/{p}" for p in ("installation.md", "quickstart.md", "hooks/use-tap.md", "hooks/use-pan.md")]
        + [f"docs/fundamentals/{n}.md" for n in ("state", "events", "composition", "callbacks", "reanimated")]
        + [f"docs/legacy-{p}" for p in gestures]
        + [f"versioned_docs/version-2.x/{p}" for p in (*top, *gestures)]
        + [f"versioned_docs/version-1.x/api/{p}" for p in top]
        + [f"versioned_docs/version-1.x/{p}" for p in ("about.md", "handlers.md")]
    )
    config = "module.exports = { presets: [['classic', { docs: { lastVersion: 'current',"
    config += " versions: { current: { label: '3.x' } } } }]] };"
    hints = parse_hints("versions.json", '["2.x", "1.x"]', {"docusaurus.config.js": config})
    assert statuses(find_trees(paths, hints)) == {
        "docs": CURRENT,
        "versioned_docs/version-2.x": OLD,
        "versioned_docs/version-1.x": OLD,
    }
    # without the config, the restructured docs/ is no version of anything: only its mirrored subfolder pairs
    assert "docs" not in statuses(find_trees(paths))


def test_each_docs_plugin_instance_declares_its_own_family_beside_products_that_share_pages() -> None:
    """tigera/docs' layout: three products (calico/, calico-enterprise/, calico-cloud/) side by side share many pages,
    each a docs plugin instance (`id` and `path` in the config) with its `<id>_versions.json` and
    `<id>_versioned_docs/`. Mirroring alone took the three untagged folders for variants of one another and left
    them out of every family; calico-cloud/ also mirrors enterprise's 3.23 as much as its own 23-2."""
    shared = [f"network-policy/{n}.md" for n in ("get-started", "policy-rules", "namespaces", "hosts")]
    enterprise = [*shared, *(f"threat/{n}.md" for n in ("honeypods", "waf", "deep-packet", "alerts"))]
    products = {
        "calico": (shared + ["operator/install.md", "operator/upgrade.md"], ("3.32", "3.31")),
        "calico-enterprise": (enterprise, ("3.24-1", "3.23-2")),
        "calico-cloud": (enterprise + ["get-started/connect.md"], ("23-2",)),
    }
    paths = []
    for product, (pages, versions) in products.items():
        paths += [f"{product}/{page}" for page in pages]
        paths += [f"{product}_versioned_docs/version-{v}/{page}" for v in versions for page in pages]
    config = (
        "export default { plugins: ["
        + "".join(
            f"['@docusaurus/plugin-content-docs', {{ id: '{product}', path: '{product}', lastVersion: '{versions[-1]}',"
            " versions: { current: { label: 'Next', path: 'next' } } }],"
            for product, (_, versions) in products.items()
        )
        + "] };"
    )
    files = {f"{product}_versions.json": json.dumps(versions) for product, (_, versions) in products.items()}
    files["docusaurus.config.js"] = config
    hints = [
        hint
        for name, text in files.items()
        for hint in parse_hints(name, text, {other: body for other, body in files.items() if other != name})
    ]
    families = find_trees(paths, hints).families
    assert {tuple((tree.root, tree.status) for tree in family) for family in families} == {
        (
            ("calico_versioned_docs/version-3.31", CURRENT),
            ("calico", NEWER),
            ("calico_versioned_docs/version-3.32", NEWER),
        ),
        (
            ("calico-enterprise_versioned_docs/version-3.23-2", CURRENT),
            ("calico-enterprise", NEWER),
            ("calico-enterprise_versioned_docs/version-3.24-1", NEWER),
        ),
        (("calico-cloud_versioned_docs/version-23-2", CURRENT), ("calico-cloud", NEWER)),
    }


def test_versions_a_docusaurus_instance_names_by_package_are_versions_and_its_path_the_current_tree() -> None:
    """gofiber/docs' layout: the storage instance reads `path: 'docs/storage'` (`lastVersion: 'current'`), and its
    versions are named by the package released (`version-valkey_v0.x.x`, `version-sqlite3_v2.x.x`): no number of
    their own, so each was an untagged tree and one of them was taken for current, docs/storage/ for old."""
    pages = [f"{name}/README.md" for name in ("redis", "sqlite3", "valkey", "s3")]
    versions = ("valkey_v0.x.x", "sqlite3_v2.x.x", "sqlite3_v1.x.x")
    paths = [f"docs/storage/{page}" for page in pages] + [
        f"storage_versioned_docs/version-{version}/{page}" for version in versions for page in pages
    ]
    config = "export default { plugins: [['@docusaurus/plugin-content-docs', { id: 'storage', path: 'docs/storage',"
    config += " lastVersion: 'current', versions: { current: { label: 'Next' } } }]] };"
    hints = parse_hints("storage_versions.json", json.dumps(versions), {"docusaurus.config.ts": config})
    assert statuses(find_trees(paths, hints)) == {
        "docs/storage": CURRENT,
        **{f"storage_versioned_docs/version-{version}": OLD for version in versions},
    }


def test_an_instances_folder_joins_its_versions_however_many_hold_its_pages() -> None:
    """gofiber/docs' template instance: docs/template/<engine>/README.md beside 45 package releases that each hold
    the same pages; a path held by more than 40 folders named for no version is left out of the mirrored pairs, so
    docs/template/ was in no family and a release was current."""
    pages = [f"{name}/README.md" for name in ("ace", "amber", "django", "html")]
    versions = [f"pkg{number}_v1.x.x" for number in range(45)]
    paths = [f"docs/template/{page}" for page in pages] + [
        f"template_versioned_docs/version-{version}/{page}" for version in versions for page in pages
    ]
    config = "export default { plugins: [['@docusaurus/plugin-content-docs', { id: 'template',"
    config += " path: 'docs/template', lastVersion: 'current' }]] };"
    hints = parse_hints("template_versions.json", json.dumps(versions), {"docusaurus.config.ts": config})
    found = statuses(find_trees(paths, hints))
    assert found["docs/template"] == CURRENT and len(found) == 46


@pytest.mark.parametrize("name", ["developing", "in-development"])
def test_a_tree_named_for_development_beside_numbered_releases_is_unreleased(name: str) -> None:
    """beego-doc's docs/en-US/developing/ beside v2.3.x/ ... v2.0.x/, strimzi's docs/operators/in-development/
    beside latest/ and 1.2.0/: the tree under development is ahead of the release, not the current docs."""
    paths = [f"docs/{root}/{page}" for root in (name, "v2.3.x", "v2.2.x") for page in PAGES]
    assert statuses(find_trees(paths)) == {"docs/v2.3.x": CURRENT, f"docs/{name}": NEWER, "docs/v2.2.x": OLD}


@pytest.mark.parametrize(
    ("label", "status"),
    [("4.x", OLD), ("Version 4.2", OLD), ("6.x", NEWER), ("Next", NEWER), ("Canary 🚧", NEWER)],
)
def test_the_label_docusaurus_gives_docs_says_whether_it_is_old_or_next(label: str, status: str) -> None:
    """RocketMQ's layout: `lastVersion: '5.0'` and `versions: {current: {label: '4.x'}}`: docs/ is its old 4.x
    docs, not an unreleased next, whether the config is read with versions.json or alone; its English translation
    (i18n/en/.../current/) is of that tree, as the translation of version-5.0 is of the current one."""
    english = f"i18n/en/{PLUGIN}"
    paths = [f"{root}/{p}" for root in ("docs", f"{english}/current") for p in PAGES] + [
        f"{root}/{p}" for root in ("versioned_docs/version-5.0", f"{english}/version-5.0") for p in PAGES
    ]
    config = (
        "module.exports = { presets: [['classic', { docs: { lastVersion: '5.0',\n"
        f"  versions: {{ current: {{ label: '{label}', path: '/4.x', banner: 'none' }}, '5.0': {{ label: '5.0' }} }}"
        " } }]] };"
    )
    with_json = parse_hints("versions.json", '["5.0"]', {"docusaurus.config.js": config})
    alone = parse_hints("docusaurus.config.js", config)
    for hints in (with_json, alone):
        versions = find_trees(paths, hints, excluded=lambda folder: folder.startswith("i18n"))  # as the search does
        assert statuses(versions) == {"versioned_docs/version-5.0": CURRENT, "docs": status}
        trees = LanguageTrees.of(paths, versions)
        translated = trees.copy(f"{english}/current/install.md")
        assert translated is not None and translated.version_note == f"docs ({status})"
        assert trees.copy(f"{english}/version-5.0/install.md") == Copy(
            "en", "versioned_docs/version-5.0/install.md", None, structural=True
        )
        # a query naming the label's version names the tree ("RocketMQ 4.x message filtering"), and its translation
        asked = query_versions(f"install RocketMQ {label}")
        assert versions.named_by("docs/install.md", asked) == bool(asked), label
        assert trees.named_version(f"{english}/current/install.md", asked) == bool(asked), label
        assert not versions.named_by("docs/install.md", query_versions("install RocketMQ 5.0"))


def test_a_query_naming_the_label_of_the_current_untagged_tree_names_the_current_version() -> None:
    """PixiJS's layout: docs/ is current (`lastVersion: 'current'`), labelled v8.x, beside versioned_docs/version-7.x/.
    "How do I migrate from v7 to v8?" names the current version too, so the 7.x copies do not come first: only a
    query naming 7 alone names the old tree."""
    paths = [f"{root}/{p}" for root in ("docs", "versioned_docs/version-7.x") for p in PAGES]
    config = (
        "export default { presets: [['classic', { docs: { lastVersion: 'current',\n"
        "  versions: { '7.x': { label: 'v7.x', path: '7.x' }, current: { label: 'v8.x', path: '8.x' } } } }]] };"
    )
    versions = find_trees(paths, parse_hints("versions.json", '["7.x"]', {"docusaurus.config.ts": config}))
    assert statuses(versions) == {"docs": CURRENT, "versioned_docs/version-7.x": OLD}
    old = "versioned_docs/version-7.x/install.md"
    assert not versions.named_by(old, query_versions("How do I migrate from v7 to v8?"))
    assert versions.named_by(old, query_versions("How did installing work in v7?"))


def test_the_repository_root_is_the_current_tree_beside_top_folders_named_for_versions() -> None:
    """firecrawl/firecrawl-docs (a Mintlify site at the repository's root): the current pages at the root, the old
    API's in v1/ and v0/ at the same relative paths, translations in es/, a snippets/ family of its own. The root was
    never a tree, so v1/ and v0/ ranked as current pages."""
    paths = [*PAGES, "migrating-from-v0.md", "migrate-to-v2.md", "README.md"]
    paths += [f"v1/{p}" for p in PAGES] + [f"v0/{p}" for p in PAGES[:4]]
    paths += [f"es/{p}" for p in PAGES] + [f"es/v1/{p}" for p in PAGES]
    paths += [f"snippets/v{v}/{p}" for v in (1, 2) for p in PAGES]
    trees = find_trees(paths, excluded=lambda folder: folder == "es")
    assert statuses(trees) == {"": CURRENT, "v1": OLD, "v0": OLD, "snippets/v2": CURRENT, "snippets/v1": OLD}
    old = trees.copy("v1/cli/run.md")
    assert old is not None and (old.page, old.counterpart, old.tree.label) == ("cli/run.md", "cli/run.md", "v1")
    current = trees.copy("cli/run.md")
    assert current is not None and current.tree.status == CURRENT and current.tree.label == "."
    snippet = trees.copy("snippets/v1/cli/run.md")  # its own family's, not an old copy of the root's page
    assert snippet is not None and snippet.counterpart == "snippets/v2/cli/run.md"
    assert trees.copy("es/cli/run.md") is None and trees.copy("es/v1/cli/run.md") is None  # a language's own
    assert trees.superseded == {"migrating-from-v0.md": "0"}  # the root is past v1: notes on moving from v0 are old
    languages = LanguageTrees.of(paths, trees)  # es/v1/ translates v1/: the Spanish copy of the old page, marked
    assert languages.copy("es/v1/cli/run.md") == Copy("es", "*/cli/run.md", "v1")
    assert languages.copy("es/cli/run.md") == Copy("es", "*/cli/run.md", None)
    assert any(line.startswith("current ./ (") for line in trees.describe())
    v1_named = parse_hints("versions.json", '["1"]')  # a config naming v1 current: the root is then unreleased
    assert statuses(find_trees(paths, v1_named, excluded=lambda folder: folder == "es"))[""] == NEWER
    for override in (".", "./"):  # the setting names the root as `scree doctor` shows it
        named = statuses(find_trees(paths, v1_named, override=override, excluded=lambda folder: folder == "es"))
        assert (named[""], named["v1"]) == (CURRENT, OLD), override


@pytest.mark.parametrize(
    ("name", "config", "current", "root"),
    [
        (
            "docs.json",
            '{"navigation": {"versions": [{"version": "v2", "groups": []}, {"version": "v1"}]}}',
            "",
            CURRENT,
        ),
        (
            "docs.json",
            '{"navigation": {"versions": [{"version": "v2"}, {"version": "v1", "default": true}]}}',
            "v1",
            NEWER,
        ),
        ("docs.json", '{"navigation": {"tabs": [{"tab": "API", "versions": [{"version": "1.0.0"}]}]}}', "v1", NEWER),
        ("mint.json", '{"versions": ["v2", "v1"]}', "", CURRENT),
        ("mint.json", '{"versions": [{"name": "v2"}, {"name": "v1", "default": true}]}', "v1", NEWER),
    ],
)
def test_a_mintlify_config_names_the_default_version(name: str, config: str, current: str, root: str) -> None:
    """Mintlify's versions (docs.json `navigation.versions`, anywhere in its navigation; mint.json `versions`): the
    first is the default unless one says `default`; a default naming no folder leaves the root current."""
    paths = [*PAGES, *(f"v1/{p}" for p in PAGES)]
    hints = parse_hints(name, config)
    assert hints and hints[0].versions
    got = statuses(find_trees(paths, hints))
    assert (got[current], got[""]) == (CURRENT, root)


def test_old_versions_inside_the_current_tree_are_all_found() -> None:
    """redis/docs: the current Redis Software docs in content/operate/rs/, its old releases inside it (rs/8.0/,
    rs/7.22/, rs/7.8/, rs/7.4/). Only rs/8.0/ was found: the older ones mirror rs/ (an untagged folder beside an old
    version) and sit inside a tree already found. Below a folder that says old (`deprecated-features/`), two
    sibling folders are no versions for it: Redis's gears-v1/python/ and jvm/."""
    rs = "content/operate/rs"
    paths = [f"{rs}/{p}" for p in PAGES] + [f"{rs}/{v}/{p}" for v in ("8.0", "7.22", "7.8", "7.4") for p in PAGES]
    assert statuses(find_trees(paths)) == {rs: CURRENT} | {f"{rs}/{v}": OLD for v in ("8.0", "7.22", "7.8", "7.4")}
    gears = "content/deprecated-features/gears-v1"
    assert statuses(find_trees([f"{gears}/{lang}/{p}" for lang in ("python", "jvm") for p in PAGES])) == {}
    # saleor's generated reference: a deprecated mutation's page has the slug of an object type's page, in a folder
    # of another name; a folder saying old above speaks for a tree of the other's name only
    api = "docs/api-reference"
    slugs = ("sale-create.mdx", "sale-delete.mdx", "sale-update.mdx", "sale-translate.mdx")
    paths = [f"{api}/discounts/objects/{p}" for p in (*slugs, "promotion.mdx", "voucher.mdx")]
    paths += [f"{api}/deprecated/discounts/mutations/{p}" for p in slugs]
    assert statuses(find_trees(paths)) == {}
    paths += [f"{api}/discounts/mutations/{p}" for p in (*slugs, "promotion-create.mdx")]
    orders = ("order-create.mdx", "order-cancel.mdx", "order-update.mdx")
    paths += [f"{api}/{area}orders/mutations/{p}" for area in ("", "deprecated/") for p in orders]
    # with the current mutations beside them, deprecated/ mirrors the reference it sits in: an old copy of it
    assert statuses(find_trees(paths)) == {api: CURRENT, f"{api}/deprecated": OLD}
    # ... but not where every page they share sits in one subfolder of each: chef-web-docs' content/ and
    # content/client/19/ share only reusable/md/ (snippets each keeps), and client/19 is the newest of its family
    chef = [f"content/reusable/md/{n}.md" for n in range(6)] + ["content/automate/install.md", "content/habitat.md"]
    reusable = ("reusable/README.md", "reusable/index.md", *(f"reusable/md/{n}.md" for n in range(6)))
    chef += [f"content/client/{v}/{p}" for v in (19, 18) for p in (*PAGES, *reusable)]
    assert statuses(find_trees(chef)) == {"content/client/19": CURRENT, "content/client/18": OLD}
    # nor where all they share but one page are index and README pages (a vendored module's licensing/ folder)
    vendored = [
        "vendor/licensing/_index.md",
        "vendor/licensing/reusable/README.md",
        "vendor/licensing/reusable/index.md",
    ]
    vendored += ["vendor/licensing/setup.md", "vendor/licensing/usage.md"]
    assert statuses(find_trees([*chef, *vendored])) == {"content/client/19": CURRENT, "content/client/18": OLD}


def test_a_book_keeps_its_old_editions_beside_its_current_source() -> None:
    """rust-lang/book: src/ at the root is the current book; first-edition/src/, second-edition/src/ and
    2018-edition/src/ keep its old pages (stubs pointing to the current ones), and took places 1 to 4 for "What is
    ownership?". An edition's folder carries a version (an ordinal in words or figures, or a year); each shares with
    the root only its src/, which holds nearly all of it: an old copy of the book, not a folder of shared snippets."""
    book = [f"src/{p}" for p in PAGES] + ["src/SUMMARY.md", "nostarch/chapter01.md", "listings/ch01/output.txt"]
    editions = ("first-edition", "second-edition", "2018-edition")
    book += [f"{edition}/src/{p}" for edition in editions for p in (*PAGES, "SUMMARY.md")]
    assert statuses(find_trees(book)) == {"": CURRENT} | {edition: OLD for edition in editions}
    assert [version_of_name(name) for name in (*editions, "3rd-edition", "special-edition")] == [
        "1",
        "2",
        "2018",
        "3",
        None,
    ]


def test_the_root_pairs_only_with_top_folders_named_for_versions() -> None:
    """A website/ copy of the root's pages, or a v2/ inside a folder, says nothing of the root's versions."""
    for other in ("website", "api/v2"):
        assert statuses(find_trees([*PAGES, *(f"{other}/{p}" for p in PAGES)])) == {}, other
    assert statuses(find_trees([*PAGES, *(f"old/{p}" for p in PAGES)])) == {"": CURRENT, "old": OLD}


def test_an_archived_folder_that_mirrors_docs_is_old_without_any_config() -> None:
    """pnpm's layout: versioned_docs_archived/version-N.x/ is not built by the site, so only its shape says it is a
    version tree; the untagged docs/ is current."""
    paths = [f"docs/{p}" for p in PAGES] + [
        f"versioned_docs_archived/version-{v}.x/{p}" for v in (7, 8, 9) for p in PAGES[:5]
    ]
    got = statuses(find_trees(paths))
    assert got["docs"] == CURRENT
    assert {root: status for root, status in got.items() if root != "docs"} == {
        f"versioned_docs_archived/version-{v}.x": OLD for v in (7, 8, 9)
    }


def test_hugo_config_names_the_current_version_not_the_newest_folder() -> None:
    """etcd's layout: content/en/docs/vX.Y/, the newest v3.8 a draft; config.yaml names v3.7."""
    paths = [f"content/en/docs/v{v}/{p}" for v in ("3.8", "3.7", "3.6") for p in PAGES]
    config = "params:\n  latest_stable_version: v3.7\n  versions:\n    - version: v3.8\n    - version: v3.7\n"
    hint, *_ = parse_hints("config.yaml", config)
    assert hint is not None and hint.current == "v3.7"
    assert statuses(find_trees(paths, [hint])) == {
        "content/en/docs/v3.7": CURRENT,
        "content/en/docs/v3.8": NEWER,
        "content/en/docs/v3.6": OLD,
    }
    assert statuses(find_trees(paths))["content/en/docs/v3.8"] == CURRENT  # no config: the highest number


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("config.toml", '[params.versions]\ncurrent = "21.0"\nnext = "22.0"\n'),  # Vitess
        ("hugo.yaml", "params:\n  versions:\n    next: '22.0'\n    current: '21.0'\n"),
        ("hugo.json", '{"params": {"versions": {"latest": "21.0", "next": "22.0"}}}'),
        ("hugo.toml", '[params]\nlatest_stable_version = "21.0"\n[[params.versions]]\nversion = "22.0"\n'),
    ],
)
def test_hugo_config_names_the_current_version_in_a_table_of_versions(name: str, config: str) -> None:
    """Vitess's layout: content/en/docs/<N.0>/, the newest 22.0 unreleased; its config.toml's [params.versions]
    says current = "21.0". Read as TOML or JSON where the file is one, from the text for YAML."""
    paths = [f"content/en/docs/{v}/{p}" for v in ("22.0", "21.0", "20.0") for p in PAGES]
    hint, *_ = parse_hints(name, config)
    assert hint is not None and hint.current == "21.0"
    assert statuses(find_trees(paths, [hint])) == {
        "content/en/docs/21.0": CURRENT,
        "content/en/docs/22.0": NEWER,
        "content/en/docs/20.0": OLD,
    }


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("config.toml", "title = 'unclosed\n"),  # not TOML: Hugo would refuse it, so it names nothing
        ("config.toml", "[params]\nversion_menu = 'Releases'\nstable = '3'\n"),  # no table of versions
        ("config.yaml", "params:\n  versions:\n    - version: v1\n  stable: 3\n"),  # `stable` beside it
        ("hugo.json", '{"params": {"versions": ['),
        ("hugo.yaml", "params:\n  versions:\n    - version: v1.0\n      latest: true\n"),  # a flag, no version
        pytest.param("hugo.json", "[" * 5000 + "]" * 5000, id="json-nested-5000"),  # no RecursionError escapes
        pytest.param("hugo.toml", "a" + ".a" * 1200 + " = 1\n", id="toml-nested-1200"),
        pytest.param("versions.json", "[" * 5000 + "]" * 5000, id="versions-json-nested-5000"),
    ],
)
def test_a_config_that_names_no_current_version_gives_no_hint(name: str, config: str) -> None:
    assert parse_hints(name, config) == []


VELERO_CONFIG = "params:\n  versioning: true\n  latest: v1.18\n  versions:\n    - main\n" + "".join(
    f"    - v{major}.{minor}\n" for major, top in ((1, 18), (0, 11)) for minor in range(top, -1, -1)
)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("config", [VELERO_CONFIG, VELERO_CONFIG.replace("  latest: v1.18\n", "")])
def test_a_yaml_config_with_a_long_list_of_versions_is_read_at_once(config: str) -> None:
    """velero's site/config.yaml (`latest: v1.18`, then `versions:` with main and 33 releases, four spaces deep) kept
    a regular expression backtracking for minutes: `scree doctor`, and a search's tree refresh, hung. YAML is
    parsed now; the list alone names its newest release, main (ahead of the release) left out."""
    paths = [f"site/content/docs/{tree}/{p}" for tree in ("main", "v1.18", "v1.17", "v1.9") for p in PAGES]
    hints = parse_hints("site/config.yaml", config)
    assert hints and hints[0].current == "v1.18"
    assert statuses(find_trees(paths, hints)) == {
        "site/content/docs/v1.18": CURRENT,
        "site/content/docs/main": NEWER,
        "site/content/docs/v1.17": OLD,
        "site/content/docs/v1.9": OLD,
    }


def test_a_list_of_versions_names_its_newest_release_per_folder_not_the_unreleased_one() -> None:
    """KEDA's hugo.toml: `[params.versions]` lists each product's released versions under its folder's name (docs,
    http-add-on), `[params.unreleased]` the ones ahead; Longhorn's config.toml one list whose `-dev` entries are
    drafts. The highest folder (2.21, 0.16, 1.13.0) was current."""
    keda = (
        '[params.versions]\ndocs = ["2.20", "2.19"]\nhttp-add-on = ["0.15", "0.14"]\n\n'
        '[params.unreleased]\ndocs = ["2.21"]\nhttp-add-on = ["0.16"]\n'
    )
    paths = [f"content/docs/{v}/{p}" for v in ("2.21", "2.20", "2.19") for p in PAGES]
    addon = ("intro.md", "install.md", "operate/scaling.md", "operate/routing.md", "reference/crd.md")
    paths += [f"content/http-add-on/{v}/{p}" for v in ("0.16", "0.15", "0.14") for p in addon]
    assert statuses(find_trees(paths, parse_hints("hugo.toml", keda))) == {
        "content/docs/2.20": CURRENT,
        "content/docs/2.21": NEWER,
        "content/docs/2.19": OLD,
        "content/http-add-on/0.15": CURRENT,
        "content/http-add-on/0.16": NEWER,
        "content/http-add-on/0.14": OLD,
    }
    longhorn = 'versions = ["1.12.1", "1.12.0", "1.13.0-dev", "1.12.2-dev"]\narchived_versions = ["1.10.2"]\n'
    paths = [f"content/docs/{v}/{p}" for v in ("1.13.0", "1.12.2", "1.12.1", "1.12.0") for p in PAGES]
    paths += [f"content/docs/archives/1.10.2/{p}" for p in PAGES]
    assert statuses(find_trees(paths, parse_hints("config.toml", longhorn))) == {
        "content/docs/1.12.1": CURRENT,
        "content/docs/1.13.0": NEWER,
        "content/docs/1.12.2": NEWER,
        "content/docs/1.12.0": OLD,
        "content/docs/archives/1.10.2": OLD,
    }


def test_a_hugo_menu_of_versions_linking_the_sites_own_folders_declares_them_one_family() -> None:
    """jx-docs: docsy's `[[params.versions]]` menu links `/v3/about` ("v3.x (Current)") and `/docs` ("v2.x
    (Unmaintained)"); v3 was restructured and shares no path with v2's content/en/docs/, so nothing paired them and
    v2's `jx boot` pages were current docs beside v3's. Each language's content folder is its own family."""
    menu = (
        '[[params.versions]]\nversion = "v3.x (Current)"\nurl = "/v3/about"\n\n'
        '[[params.versions]]\nversion = "v2.x (Unmaintained)"\nurl = "/docs"\n'
    )
    v2 = ("install-setup/boot/index.md", "install-setup/boot/secrets.md", "reference/commands/jx.md")
    v3 = ("about/overview.md", "admin/setup/secrets.md", "develop/create-project.md", "develop/reference/jx.md")
    paths = [f"content/{lang}/docs/{p}" for lang in ("en", "zh") for p in v2]
    paths += [f"content/{lang}/v3/{p}" for lang in ("en", "zh") for p in v3] + ["content/en/blog/news.md"] * 2
    hints = parse_hints("config.toml", menu)
    assert [(hint.current, hint.menu) for hint in hints] == [
        ("v3", (("v3", "v3.x (Current)"), ("docs", "v2.x (Unmaintained)")))
    ]

    def language(folder: str) -> bool:
        return folder in ("content/en", "content/zh")

    trees = find_trees(paths, hints, excluded=language)
    assert statuses(trees) == {
        "content/en/v3": CURRENT,
        "content/en/docs": OLD,
        "content/zh/v3": CURRENT,
        "content/zh/docs": OLD,
    }
    assert [tree.version for tree in trees.families[0]] == ["3", "2"]
    # a translation of v2 alone (content/es/docs/, no content/es/v3/) is v2's too, marked old as en's and zh's are
    spanish = [*paths, *(f"content/es/docs/{p}" for p in (*v2, "faq/boot.md")), "content/es/about/maturity.md"]
    languages = LanguageTrees.of(spanish, find_trees(spanish, hints, excluded=language))
    assert languages.copy("content/es/docs/faq/boot.md") == Copy("es", "content/*/docs/faq/boot.md", "docs")
    assert languages.copy("content/es/about/maturity.md") == Copy("es", "content/*/about/maturity.md")
    # without a label saying current, the labels' numbers decide: v3 above v2 (the untagged docs/ is no "next")
    unlabelled = menu.replace(" (Current)", "").replace(" (Unmaintained)", "")
    assert (
        statuses(find_trees(paths, parse_hints("config.toml", unlabelled), excluded=language))["content/en/docs"] == OLD
    )
    # a menu linking other sites (Dapr's https://v1-15.docs.dapr.io), or one folder only, declares nothing
    elsewhere = menu.replace("/docs", "https://v2.jenkins-x.io/docs")
    assert find_trees(paths, parse_hints("config.toml", elsewhere), excluded=language).families == ()
    assert parse_hints("config.toml", menu.replace("/v3/about", "/docs/v3")) == []


def test_scores_of_versions_side_by_side_and_their_pre_releases_are_one_family() -> None:
    """Antrea's content/docs/: main/ and 84 vX.Y.Z/ folders (pre-releases among them: v1.11.0-alpha.0) holding the
    same pages, config.yaml `docs_latest: v2.7.0`. Past 40 folders a relative path was taken for a per-folder page
    and said nothing: no version trees at all, every version's copy a hit of its own."""
    names = [f"v{major}.{minor}.{patch}" for major in (1, 2) for minor in range(8) for patch in range(3)]
    names += ["v1.11.0-alpha.0", "v2.2.0-alpha.1", "v2.7.1-rc.1", "main"]
    paths = [f"content/docs/{name}/docs/{p}" for name in names for p in PAGES]
    hints = parse_hints("config.yaml", "params:\n  docs_latest: v2.7.0\n  docs_versions:\n    - main\n    - v2.7.0\n")
    found = statuses(find_trees(paths, hints))
    assert len(found) == len(names) and len(find_trees(paths, hints).families) == 1
    assert found["content/docs/v2.7.0"] == CURRENT
    assert found["content/docs/main"] == found["content/docs/v2.7.1-rc.1"] == NEWER
    assert found["content/docs/v1.11.0-alpha.0"] == found["content/docs/v2.2.0-alpha.1"] == OLD
    # without the config: the highest release, not the release candidate above it
    assert statuses(find_trees(paths))["content/docs/v2.7.2"] == CURRENT
    # a number compared at its own precision: `2-edge` (the channel ahead of release 2) is no older than 2.19
    edge = [f"content/{tree}/{p}" for tree in ("2-edge", "2.19", "2.18") for p in PAGES]
    hints = parse_hints("config.toml", '[params]\nlatest_version = "2.19"\n')
    assert statuses(find_trees(edge, hints)) == {"content/2.19": CURRENT, "content/2-edge": NEWER, "content/2.18": OLD}
    # 60 component folders with one page name each: no version trees
    components = [f"ui/{name}/{page}" for name in ("button", "card", "table") for page in ("api.md", "usage.md")]
    components += [f"ui/widget{n}/{page}" for n in range(60) for page in ("api.md", "usage.md")]
    assert find_trees(components).families == ()


def test_versions_json_names_one_pre_release_of_several_and_a_part_of_a_version_is_no_version() -> None:
    """react-native-elements' website: versions.json lists 4.0.0-rc.8 first (the site's default), then rc.7 ...
    rc.1, beta.0 and 3.4.2; version-3.4.2/props/ repeats the file names version-2.3.2 keeps at its top. All eight
    pre-releases read as 4.0.0, so the config named none and 3.4.2 was current by number; beta.0 was "unreleased"
    for its word; and props/ was a version of its own, unreleased beside the current 4.0.0."""
    versions = ["4.0.0-rc.8", "4.0.0-rc.7", "4.0.0-rc.2", "4.0.0-beta.0", "3.4.2", "2.3.2"]
    base = "website/versioned_docs"
    paths = [f"website/docs/{p}" for p in PAGES] + [f"{base}/version-{v}/{p}" for v in versions for p in PAGES]
    paths += [f"{base}/version-3.4.2/props/{p}" for p in PAGES]
    hints = parse_hints("website/versions.json", json.dumps(versions))
    trees = find_trees(paths, hints)
    assert statuses(trees) == {
        f"{base}/version-4.0.0-rc.8": CURRENT,
        "website/docs": NEWER,
        **{f"{base}/version-{v}": OLD for v in versions[1:]},
    }
    # newest first: the later release candidates before the earlier, the beta, then the older release
    assert [tree.root.rsplit("-", 1)[-1] for tree in trees.families[0][2:]] == [
        "rc.7",
        "rc.2",
        "beta.0",
        "3.4.2",
        "2.3.2",
    ]
    copy = trees.copy(f"{base}/version-3.4.2/props/cli/run.md")
    assert copy is not None and copy.tree.root == f"{base}/version-3.4.2"
    # without the config, the release is current by number, and a beta of the current release is behind it
    released = [p.replace("-rc.8", "") for p in paths if not p.startswith("website/docs/")]
    assert statuses(find_trees(released))[f"{base}/version-4.0.0"] == CURRENT
    assert statuses(find_trees(released))[f"{base}/version-4.0.0-beta.0"] == OLD


def test_a_monorepos_packages_sharing_their_project_files_are_no_versions() -> None:
    """Each package of a monorepo keeps CONTRIBUTING.md, SECURITY.md and CODE_OF_CONDUCT.md, often word for word
    (and each agent skill a SKILL.md): those say nothing of two folders being versions. A folder named `archiver`
    does not say old as `archive/` and `archives/` do."""
    common = ("CONTRIBUTING.md", "SECURITY.md", "CODE_OF_CONDUCT.md", "LICENSE.md", "README.md")
    paths = [f"packages/{name}/{p}" for name in ("cli", "server", "v2-client", "archiver") for p in common]
    paths += [f"packages/{name}/docs/{name}-guide.md" for name in ("cli", "server", "v2-client", "archiver")]
    paths += [f"skills/{name}/SKILL.md" for name in ("release", "archiver")]
    paths += [f"skills/{name}/references/checklist.md" for name in ("release", "archiver")]
    same = {path: frozenset(range(64)) for path in paths}  # word for word
    assert find_trees(paths, page_fingerprint=same.get).families == ()
    assert not says_old("tools/archiver") and says_old("content/docs/archives/1.10.3") and says_old("older")


def test_a_folder_holding_what_old_versions_held_is_no_version_and_docsys_version_names_the_current() -> None:
    """Envoy Gateway's site/content/en/: latest/ (unreleased), v1.9 ... v1.0, and v0.6 ... v0.2 whose design/ pages
    now live in community/. community/ mirrored the old trees and became an "unreleased" version; an untagged folder
    is a version only beside the newest of its kind. hugo.toml's docsy `[params] version = "v1.9"` names the
    current doc set (latest/ was taken for current by its untagged name once community/ was left out)."""
    docs = ("concepts/intro.md", "concepts/gateway.md", "tasks/traffic.md", "tasks/security.md", "install.md")
    design = ("design/metrics.md", "design/tracing.md", "design/rate-limit.md", "contributions/code.md")
    paths = [f"site/content/en/{tree}/{p}" for tree in ("latest", "v1.9", "v1.8") for p in docs]
    paths += [f"site/content/en/{tree}/{p}" for tree in ("v0.6", "v0.5") for p in (*docs[:3], *design)]
    paths += [f"site/content/en/community/{p}" for p in (*design, "adopters.md")]
    hints = parse_hints("site/hugo.toml", '[params]\nversion_menu = "Versions"\nversion = "v1.9"\n')
    assert statuses(find_trees(paths, hints)) == {
        "site/content/en/v1.9": CURRENT,
        "site/content/en/latest": NEWER,
        **{f"site/content/en/{tree}": OLD for tree in ("v1.8", "v0.6", "v0.5")},
    }


@pytest.mark.parametrize(
    ("name", "config"),
    [  # ArangoDB's site/config/_default/config.yaml; the same as module.toml's own table
        (
            "config.yaml",
            "module:\n  mounts:\n    - source: content\n      target: content\n"
            "    - source: content/arangodb/3.12\n      target: content/arangodb/stable\n"
            "    - source: content/arangodb/4.x\n      target: content/arangodb/devel\n",
        ),
        (
            "module.toml",
            '[[mounts]]\nsource = "content/arangodb/3.12"\ntarget = "content/arangodb/stable"\n'
            '[[imports]]\npath = "theme"\n[[imports.mounts]]\nsource = "docs/4.x"\ntarget = "content/latest"\n',
        ),
    ],
)
def test_a_hugo_mount_serving_a_version_as_the_stable_release_names_it_current(name: str, config: str) -> None:
    """ArangoDB's docs-hugo: site/content/arangodb/4.x (in development), 3.12, 3.11; its config directory mounts
    3.12 at content/arangodb/stable: 3.12 is current, not the highest number. An imported module's mounts speak of
    that module's folders, not the site's."""
    paths = [f"site/content/arangodb/{v}/{p}" for v in ("4.x", "3.12", "3.11") for p in PAGES]
    hints = parse_hugo_config_dir(f"site/config/_default/{name}", "site", config)
    assert [(hint.current, hint.scope) for hint in hints] == [("3.12", ("arangodb",))]
    trees = find_trees(paths, hints)
    assert statuses(trees) == {
        "site/content/arangodb/3.12": CURRENT,
        "site/content/arangodb/4.x": NEWER,
        "site/content/arangodb/3.11": OLD,
    }
    assert trees.families[0][0].why == (
        f"site/config/_default/{name} (module.mounts: content/arangodb/3.12 as content/arangodb/stable) names 3.12 "
        "current"
    )
    assert statuses(find_trees(paths))["site/content/arangodb/4.x"] == CURRENT  # without it: the highest number


def test_the_site_config_reads_back_from_its_record_as_it_was_read(tmp_path: Path) -> None:
    """Issue 31: a team's collection keeps the config files the writer read (SiteConfig.to_json); a server without
    a checkout reads the same hints from that record, and a record that does not read as one says nothing."""
    site = tmp_path / "site"
    (site / "website" / "config" / "_default").mkdir(parents=True)
    (site / "website" / "versions.json").write_text('["30.4", "29.7"]\n')
    (site / "website" / "docusaurus.config.js").write_text("module.exports = {title: 'Jest'};\n")
    (site / "website" / "config" / "_default" / "params.toml").write_text('version = "v1.9"\n')
    config = read_site_config(site, ["website/versioned_docs/version-30.4/CLI.md", "docs/CLI.md"])
    assert [name for name, _ in config.files["website"]] == ["docusaurus.config.js", "versions.json"]
    assert [name for name, _ in config.hugo["website"]] == ["params.toml"]
    again = SiteConfig.from_json(config.to_json())
    assert again == config and again.hints() == config.hints() and config.hints()
    told = read_site_config(site, ["docs/CLI.md"], "website/versioned_docs/version-30.4")  # SCREE_CURRENT_VERSION
    assert SiteConfig.from_json(told.to_json()).current == "website/versioned_docs/version-30.4"
    assert SiteConfig.from_json("not json") == SiteConfig.from_json(None) == SiteConfig()
    assert SiteConfig.from_json('{"files": {"": 3}, "hugo": {}}') == SiteConfig()


def test_a_hugo_config_directorys_files_are_the_tables_they_are_named_for() -> None:
    """params.toml holds `[params]`: docsy's `version` there names the doc set's version as hugo.toml's
    `[params] version` does; a file of another name holding `version` names nothing."""
    assert [
        hint.current for hint in parse_hugo_config_dir("config/_default/params.toml", "", 'version = "v1.9"\n')
    ] == ["v1.9"]
    assert parse_hugo_config_dir("config/_default/markup.toml", "", 'version = "v1.9"\n') == []
    assert parse_hugo_config_dir("config/_default/module.yaml", "", "mounts: [\n") == []  # not YAML: nothing


def test_a_jekyll_config_is_read_as_a_hugo_configs_keys_are() -> None:
    """Jekyll's _config.yml and the _config_<site>.yml a site builds with (CockroachDB's src/current/)."""
    config = "baseurl: /docs\ncurrent_cloud_version: v26.2\nversions:\n  stable: v26.2\n  dev: v26.2\n"
    hints = parse_hints("src/current/_config_cockroachdb.yml", config)
    assert [(hint.current, hint.scope) for hint in hints] == [("v26.2", ("cloud",)), ("v26.2", ())]
    assert [hint.current for hint in parse_hints("_config.yml", "latest_version: '1.4'\n")] == ["1.4"]
    assert parse_hints("_configs.yml", config) == [] and parse_hints("_config_site.txt", config) == []


def test_a_key_naming_the_current_version_comes_before_a_list_of_versions() -> None:
    """Contour's site/config.yaml has both `latest_version` and `docs_versions`; where they differ (a release listed
    before the site moves to it), the key says which is current, though the list's key names the docs folder."""
    paths = [f"site/content/docs/{v}/{p}" for v in ("main", "1.33", "1.32") for p in PAGES]
    config = "params:\n  docs_versions:\n    - main\n    - '1.33'\n    - '1.32'\n  latest_version: '1.32'\n"
    trees = find_trees(paths, parse_hints("site/config.yaml", config))
    assert statuses(trees)["site/content/docs/1.32"] == CURRENT
    assert trees.families[0][0].why == "site/config.yaml (params.latest_version) names 1.32 current"
    listed = find_trees(paths, parse_hints("site/config.yaml", config.replace("  latest_version: '1.32'\n", "")))
    assert listed.families[0][0].why == "site/config.yaml (params.docs_versions) lists 1.33 as its newest release"


def test_two_versioned_products_of_one_site_are_two_families_each_with_its_config_key() -> None:
    """Crossplane's docs: content/vX/ (54 pages) and content/cli/vX/ (4 pages), two of them alike; config.yaml says
    `latest: "2.3"` and `cliLatest: "2.4"`. They were one family, the CLI's v2.4 current and the docs' v2.3 old."""
    docs = [*PAGES, "get-started/projects.md", "get-started/install.md"]
    paths = [f"content/{v}/{p}" for v in ("master", "v2.3", "v2.2") for p in docs]
    cli = ("command-reference.md", "get-started/projects.md", "get-started/install.md")
    paths += [f"content/cli/{v}/{p}" for v in ("master", "v2.4", "v2.3") for p in cli]
    config = 'params:\n  latest: "2.3"\n  # the CLI\n  cliLatest: "2.4"\n  docs: true\n'
    hints = parse_hints("config.yaml", config)
    assert [(hint.current, hint.scope) for hint in hints] == [("2.3", ()), ("2.4", ("cli",))]
    assert statuses(find_trees(paths, hints)) == {
        "content/v2.3": CURRENT,
        "content/master": NEWER,
        "content/v2.2": OLD,
        "content/cli/v2.4": CURRENT,
        "content/cli/master": NEWER,
        "content/cli/v2.3": OLD,
    }
    assert len(find_trees(paths).families) == 2  # with no config: still two families


@pytest.mark.timeout(20)
def test_a_docusaurus_config_is_read_in_time_proportional_to_its_length() -> None:
    """`onlyIncludeVersions: [` many times, never closed: its pattern scanned to the end from each (6 s for 250 kB,
    minutes for 1 MB). A real config's lists and lastVersion still read."""
    hostile = {"docusaurus.config.js": "onlyIncludeVersions: [" * (1_000_000 // 22)}
    assert [hint.current for hint in parse_hints("docs/versions.json", '["1.0"]', hostile)] == ["1.0"]
    config = "lastVersion: 'current',\nonlyIncludeVersions: ['current', '2.0'],\n"
    hint, *_ = parse_hints("versions.json", '["3.0", "2.0", "1.0"]', {"docusaurus.config.js": config})
    assert (hint.current, hint.versions) == ("", ("2.0",))


CONFIG_PIECES = st.sampled_from(
    [*"av019.:-_ \n\t[]{}\"'#&*!,=|>/", "latest", "versions", "current", "version", "- ", "  ", "next", "[params]"]
    + ["url", "[[params.versions]]"]
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(CONFIG_NAMES)), st.lists(CONFIG_PIECES, max_size=60).map("".join))
def test_any_config_text_gives_hints_or_none_never_an_error(name: str, text: str) -> None:
    """A site's config file is the site's to write: whatever it holds, parse_hints names versions or nothing."""
    for hint in parse_hints(f"site/{name}", text, {"docusaurus.config.js": text}):
        assert hint.current is None or isinstance(hint.current, str)


# a Hugo menu of versions linking the site's own folders (jx-docs')
MENU = '[[params.versions]]\nversion = "v2 (Current)"\nurl = "/v2"\n[[params.versions]]\nversion = "v1"\nurl = "/docs"'
FOLDER_NAMES = st.sampled_from(
    ["docs", "v1", "v2", "2.x", "version-3.1", "old", "next", "latest", "es", "i18n", "guide", "api", "content", "rs"]
)
PAGE_NAMES = st.sampled_from(["intro.md", "install.md", "config.mdx", "README.md", "upgrade-to-v2.md", "cli.md"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.lists(FOLDER_NAMES, max_size=3), PAGE_NAMES), max_size=40),
    st.sampled_from(
        [
            (),
            ("versions.json", '["2", "1"]'),
            ("docs.json", '{"navigation": {"versions": ["v1"]}}'),
            ("config.toml", MENU),
        ]
    ),
)
def test_any_tree_of_folders_gives_families_with_one_current_tree_each(
    layout: list[tuple[list[str], str]], config: tuple[str, ...]
) -> None:
    """Whatever folders hold the pages (the root, nested versions, languages, channels), find_trees and the language
    trees over it never fail, each family has its current tree first and only there, and each old page's counterpart
    is a page of its family's current tree."""
    paths = sorted({"/".join([*folders, page]) for folders, page in layout})
    hints = parse_hints(*config) if config else []
    trees = find_trees(paths, hints, excluded=lambda folder: folder.rsplit("/", 1)[-1] == "es")
    for family in trees.families:
        assert [tree.status for tree in family].count(CURRENT) == 1 and family[0].status == CURRENT
        assert len({tree.root for tree in family}) == len(family)
    current_roots = {family[0].root for family in trees.families}
    for path in paths:
        copy = trees.copy(path)
        if copy is not None and copy.counterpart is not None:
            counterpart = trees.copy(copy.counterpart)
            assert copy.counterpart in paths and counterpart is not None and counterpart.tree.root in current_roots
    languages = LanguageTrees.of(paths, trees)
    for path in paths:
        languages.copy(path)
    trees.describe()


def test_a_key_repeated_in_several_tables_speaks_for_each_tables_folder() -> None:
    """carvel-dev/carvel: `params.ytt.version_latest: v0.48.0`, `params.kapp.version_latest: v0.60.x`,
    `params.kapp-controller.version_latest: v0.50.x`, each table beside its list of `versions`. The key names no
    folder, so ytt's (the first) was taken for every product: kapp's v0.48.0 current, v0.60.x unreleased."""
    config = "params:\n"
    latest = {"ytt": ("v0.48.0", "v0.47.x"), "kapp": ("v0.60.x", "v0.48.0"), "kapp-controller": ("v0.50.x", "v0.48.x")}
    for product, (newest, older) in latest.items():
        config += f"  {product}:\n    version_latest: {newest}\n    versions:\n"
        config += f"    - develop\n    - {newest}\n    - {older}\n"
    paths = [
        f"site/content/{product}/docs/{version}/{p}"
        for product, versions in latest.items()
        for version in (*versions, "develop")
        for p in PAGES
    ]
    got = statuses(find_trees(paths, parse_hints("site/config.yaml", config)))
    for product, (newest, older) in latest.items():
        root = f"site/content/{product}/docs"
        assert (got[f"{root}/{newest}"], got[f"{root}/{older}"], got[f"{root}/develop"]) == (CURRENT, OLD, NEWER)
    alone = parse_hints("config.yaml", "params:\n  docs:\n    version_latest: v2.1\n")
    assert alone and alone[0].scope == ()  # one table's key speaks for every family, as before


def test_rspress_multi_version_names_its_default_current() -> None:
    """callstack/react-native-paper: docs/rspress.config.ts sets `multiVersion: { default: '5.x', versions: ['5.x',
    '6.x'] }`; 6.x is an alpha, and the highest number had made it current."""
    config = "export default defineConfig({\n  multiVersion: {\n    default: '5.x',\n"
    config += "    versions: ['5.x', '6.x'],\n  },\n});"
    hint, *_ = parse_hints("docs/rspress.config.ts", config)
    assert (hint.current, hint.versions) == ("5.x", ("5.x", "6.x"))
    paths = [f"docs/{v}/docs/{p}" for v in ("5.x", "6.x") for p in PAGES]
    assert statuses(find_trees(paths, [hint])) == {"docs/5.x": CURRENT, "docs/6.x": NEWER}
    assert parse_hints("docs/rspress.config.ts", "export default defineConfig({ title: 'x' });") == []


def test_antora_yml_names_a_pre_release_only() -> None:
    assert parse_hints("docs/a/version-1.37/antora.yml", 'name: a\nversion: "1.37"\n') == []
    assert parse_hints("docs/a/version-1.37/antora.yml", 'version: "1.37"\nprerelease: false\n') == []
    for said in ("true", "-dev", "-beta.1"):
        hint, *_ = parse_hints("docs/a/version-1.38/antora.yml", f'version: "1.38"\nprerelease: {said}\n')
        assert (hint.folder, hint.current, hint.prerelease) == ("docs/a/version-1.38", None, True)


def test_yaml_values_are_read_as_written_and_aliases_cost_little() -> None:
    """`latest: 1.10` unquoted is the version 1.10, not the float 1.1 (which would name v1.1); a small YAML file of
    nested aliases (a billion laughs) is looked at only so far."""
    paths = [f"docs/v{v}/{p}" for v in ("1.10", "1.1", "1.9") for p in PAGES]
    hints = parse_hints("config.yaml", "params:\n  latest: 1.10\n")
    assert statuses(find_trees(paths, hints))["docs/v1.10"] == CURRENT
    laughs = ["a0: &a0 [x, y, z, w, v, u, t, s, r, q]"]
    laughs += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    assert parse_hints("config.yaml", "\n".join(laughs) + "\n") == []


def test_a_tree_named_ahead_of_the_release_is_unreleased_and_the_untagged_one_current() -> None:
    """Linkerd's layout: content/docs/ is the latest major, content/2-edge/ the edge channel ahead of it, 2.19 and
    2.18 old majors. `edge` says ahead of the release (as `next` does), so docs/ is the one untagged tree."""
    paths = [f"content/{tree}/{p}" for tree in ("docs", "2-edge", "2.19", "2.18") for p in PAGES]
    assert statuses(find_trees(paths)) == {
        "content/docs": CURRENT,
        "content/2-edge": NEWER,
        "content/2.19": OLD,
        "content/2.18": OLD,
    }
    # k6's docs/sources/k6/next/ beside v2.2.x/ and v2.1.x/: no untagged tree is current when the only one says next
    paths = [f"k6/{tree}/{p}" for tree in ("next", "v2.2.x", "v2.1.x") for p in PAGES]
    assert statuses(find_trees(paths)) == {"k6/v2.2.x": CURRENT, "k6/next": NEWER, "k6/v2.1.x": OLD}


def test_a_tree_named_latest_is_current_among_several_unnumbered_and_a_parent_saying_next_is_ahead() -> None:
    """apache/iotdb-docs: src/UserGuide/latest/ (the 2.0 release) beside latest-Table/ (its table model), Master/Tree/
    and Master/Table/ (the branch ahead), dev-1.3/ and the numbered V1.3.x/, V1.2.x/: with no config naming it,
    the tree named latest is current, not the highest number; a tree below a folder saying next (Master/) is ahead,
    though its own name says nothing."""
    trees = ("latest", "latest-Table", "Master/Tree", "Master/Table", "dev-1.3", "V1.3.x", "V1.2.x")
    paths = [f"src/UserGuide/{tree}/{p}" for tree in trees for p in PAGES]
    found = statuses(find_trees(paths))
    assert found["src/UserGuide/latest"] == CURRENT
    assert found["src/UserGuide/Master/Tree"] == found["src/UserGuide/Master/Table"] == NEWER
    assert found["src/UserGuide/dev-1.3"] == NEWER
    assert found["src/UserGuide/V1.3.x"] == found["src/UserGuide/V1.2.x"] == OLD
    # the folders above where the trees part name none of them: a checkout under main/ keeps its untagged tree
    paths = [f"main/site/{tree}/{p}" for tree in ("docs", "v2", "v1") for p in PAGES]
    assert statuses(find_trees(paths)) == {"main/site/docs": CURRENT, "main/site/v2": OLD, "main/site/v1": OLD}
    # a tree that holds the others is named by its own folder: next/ around its v1/ snapshot is still ahead
    paths = [f"site/next/{p}" for p in PAGES] + [f"site/next/v1/{p}" for p in PAGES]
    assert statuses(find_trees(paths)) == {"site/next/v1": CURRENT, "site/next": NEWER}


def test_folders_named_for_a_version_and_docs_are_one_family_whatever_they_mirror() -> None:
    """cert-manager's layout: content/docs/ current beside content/v1.N-docs/; v1.1-v1.3 share their pages with
    each other only (the docs were restructured at v1.4), v1.0 shares too few to pair: one family, docs/ current."""
    later = ("intro.md", "install.md", "config.md", "usage/acme.md", "usage/ca.md", "faq.md")
    early = ("index.md", "getting-started.md", "issuers/acme.md", "issuers/ca.md", "tutorials/one.md", "admin.md")
    paths = [f"content/{tree}/{p}" for tree in ("docs", "v1.5-docs", "v1.4-docs") for p in later]
    paths += [f"content/v1.{n}-docs/{p}" for n in (1, 2, 3) for p in early]
    paths += ["content/v1.0-docs/index.md", "content/v1.0-docs/old-page.md", "content/announcements/x.md"]
    assert statuses(find_trees(paths)) == {
        "content/docs": CURRENT,
        **{f"content/v1.{n}-docs": OLD for n in range(6)},
    }
    # an unmirrored folder newer than every mirrored one may be a stub, and a year is no version: neither joins
    stub = [*paths, "content/v1.9-docs/draft.md", "content/2024/news.md", "content/2024/more.md"]
    assert statuses(find_trees(stub)) == statuses(find_trees(paths))
    # a newer one as large as the newest version is no stub: Dioxus's docs-src/0.7/, rewritten (it shares 3 of its
    # 180 pages with 0.6/'s 107), is the current version, not a folder of no version beside the 0.3-0.6 family
    rewritten = [f"docs-src/{tree}/{p}" for tree in ("0.6", "0.5") for p in later] + ["docs-src/0.6/faq/more.md"]
    rewritten += [f"docs-src/0.7/{p}" for p in ("intro.md", "guide/a.md", "guide/b.md", "guide/c.md", "faq.md")]
    assert statuses(find_trees(rewritten)) == {"docs-src/0.7": CURRENT, "docs-src/0.6": OLD, "docs-src/0.5": OLD}


def test_numbered_folders_named_by_any_word_are_no_versions() -> None:
    """A tutorial's lesson-1/ and lesson-2/ hold files of the same names: no version trees (a word that names docs
    or a release channel may stand beside a version number, not any word)."""
    paths = [f"tutorial/lesson-{n}/{p}" for n in (1, 2, 3) for p in PAGES]
    assert find_trees(paths).families == ()
    # nor a zero-padded number ordering a folder: the AI SDK's cookbook/01-next/ (a channel's word) beside
    # 05-node/ and 20-rsc/ made one family, 01-next current as the only numbered tree and the others unreleased
    cookbook = [f"content/cookbook/{folder}/{p}" for folder in ("01-next", "05-node", "20-rsc") for p in PAGES]
    assert find_trees(cookbook).families == ()
    assert version_of_name("01-next") is None and version_of_name("2-edge") == "2" and version_of_name("0100") == "0100"


def test_renamed_old_pages_find_their_current_page_by_name_or_text() -> None:
    current = {f"docs/v3.5/{p}": f"Text of {p} " + " ".join(f"word{i}" for i in range(60)) for p in PAGES}
    current["docs/v3.5/tasks/developer/interacting.md"] = "Use etcdctl put and get to write and read keys. " * 5
    old = {f"docs/v3.4/{p}": text for p, text in ((p, current[f"docs/v3.5/{p}"]) for p in PAGES)}
    old["docs/v3.4/dev-guide/interacting.md"] = "Use etcdctl put and get to write and read keys. " * 5
    old["docs/v3.4/tutorials/how-to-save-keys.md"] = "Use etcdctl put and get to write and read keys. " * 4
    old["docs/v3.4/removed.md"] = "The v2 proxy forwards requests to the cluster."
    texts = {**current, **old}
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert statuses(trees) == {"docs/v3.5": CURRENT, "docs/v3.4": OLD}
    named = trees.copy("docs/v3.4/dev-guide/interacting.md")
    assert named is not None and named.counterpart == "docs/v3.5/tasks/developer/interacting.md"  # its file name
    similar = trees.copy("docs/v3.4/tutorials/how-to-save-keys.md")
    assert similar is not None and similar.counterpart == "docs/v3.5/tasks/developer/interacting.md"  # its text
    removed = trees.copy("docs/v3.4/removed.md")
    assert removed is not None and removed.counterpart is None and removed.tree.status == OLD


def test_numbered_siblings_sharing_one_near_duplicate_page_are_versions_and_one_page_named_alike_is_not() -> None:
    """hapi.dev's layout: generated/markdown/<module>/<major>/api.md, one page per major version; the two copies of
    hapi's API are near-duplicates, and with no version found the old major's chunks stood for the current's. Two
    chapters' exercise.md pages share a name, not their text."""
    api = " ".join(f"server.option{i} sets option {i} of the server." for i in range(80))
    texts = {
        "generated/markdown/hapi/20/api.md": api,
        "generated/markdown/hapi/21/api.md": api + " server.inject(options) was added.",
        "generated/markdown/nes/14/api.md": "The nes plugin adds websockets. " * 20,
        "course/chapters/1/exercise.md": " ".join(f"Chapter one exercise {i}: count sheep." for i in range(30)),
        "course/chapters/2/exercise.md": " ".join(f"Chapter two task {i}: write a parser." for i in range(30)),
    }
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert statuses(trees) == {"generated/markdown/hapi/21": CURRENT, "generated/markdown/hapi/20": OLD}
    assert statuses(find_trees(texts)) == {}  # no text to measure: one page of a name is no evidence


def test_the_pages_each_versions_stubs_include_are_no_version() -> None:
    """kgateway.dev's layout: content/docs/envoy/<version>/ pages are front matter and a `{{< reuse >}}` of
    assets/kgw-docs/pages/<same path>, where the text is. Mirroring the numbered trees made that folder an old
    version, so every hit on the text was marked old and the stub shown in its place."""
    texts = {}
    for page in PAGES:
        name = page.removesuffix(".md")
        texts[f"assets/pages/{page}"] = " ".join(f"The {name} guide explains step {i} in detail." for i in range(40))
        for version in ("latest", "main", "2.3.x", "2.2.x"):
            texts[f"content/docs/{version}/{page}"] = f'{{{{< reuse "pages/{page}" >}}}}'
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert statuses(trees) == {
        "content/docs/latest": CURRENT,
        "content/docs/main": NEWER,
        "content/docs/2.3.x": OLD,
        "content/docs/2.2.x": OLD,
    }
    assert trees.copy("assets/pages/install.md") is None


def test_stubs_naming_their_source_in_a_comment_are_stubs_too() -> None:
    """InfluxData's docs-v2: each release's pages are front matter and a comment naming their `source:` in
    content/shared/influxdb-v2/ (15 to 19 shingles, the path's words among them), so the shared text was taken for
    an unreleased version and every answer from it marked and ranked so; a short source page (under a whole
    fingerprint) is one miss of the three in four."""
    pages = [f"write-data/developer-tools/scrape-metrics-{i}.md" for i in range(12)]
    texts = {}
    for index, page in enumerate(pages):
        words = 5 if index == 0 else 40
        texts[f"content/shared/influxdb-v2/{page}"] = " ".join(
            f"The {page} guide step {i} says more." for i in range(words)
        )
        for tree in ("v2.7", "v2.6"):
            texts[f"content/influxdb/{tree}/{page}"] = (
                f"<!-- The content for this file is located at\n// SOURCE content/shared/influxdb-v2/{page} -->"
            )
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert statuses(trees) == {"content/influxdb/v2.7": CURRENT, "content/influxdb/v2.6": OLD}
    assert trees.copy("content/shared/influxdb-v2/write-data/developer-tools/scrape-metrics-3.md") is None


def test_an_untagged_folder_far_smaller_than_a_numbered_one_is_no_current_tree_of_it() -> None:
    """InfluxData's 12-page content/telegraf/controller/reference/ shares seven page names with Telegraf's 487-page
    content/telegraf/v1/: taken for the current tree beside its old copy, every Telegraf page was ranked old."""
    telegraf = [f"content/telegraf/v1/{p}" for p in (*PAGES, *(f"plugins/input-{i}.md" for i in range(30)))]
    controller = [
        f"content/telegraf/controller/reference/{p}" for p in ("intro.md", "install.md", "config.md", "eula.md")
    ]
    assert statuses(find_trees(telegraf + controller)) == {}
    # as large as the numbered one: the untagged tree is current, as Hugo sites keep content/docs/ beside v1.2/
    whole = [f"content/docs/{p}" for p in PAGES] + [f"content/v1.2/{p}" for p in PAGES]
    assert statuses(find_trees(whole)) == {"content/docs": CURRENT, "content/v1.2": OLD}


def test_a_release_number_after_words_of_its_own_names_a_version_where_the_text_says_so() -> None:
    """CircleCI's docs keep its self-hosted server's admin guide per release: docs/server-admin-4.10/ ... 4.7/,
    archive/server-admin-4.6/ ... 4.2/. Only a word that names docs or a release channel could stand before a
    version, so none was found and every release's pages were current. A course's lab-1.1/ and lab-1.2/, named
    alike and holding pages of the same names, say other things and stay apart."""
    texts = {}
    for release in ("4.10", "4.9", "4.8"):
        folder = "docs" if release != "4.8" else "archive"
        for page in PAGES:
            texts[f"{folder}/server-admin-{release}/{page}"] = f"Install the {page} part of the server. " * 20
    for lab in ("1.1", "1.2"):
        for page in ("README.md", "exercise.md", "solution.md", "notes.md"):
            texts[f"course/lab-{lab}/{page}"] = f"Lab {lab}: {page} " + " ".join(f"task{lab}x{i}" for i in range(60))
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert statuses(trees) == {
        "docs/server-admin-4.10": CURRENT,
        "docs/server-admin-4.9": OLD,
        "archive/server-admin-4.8": OLD,
    }
    assert version_of_name("server-admin-4.10") == "4.10" and version_of_name("lesson-1") is None
    # docs.scala-lang's _overviews/collections-2.13/ is the newer edition of collections/: an untagged folder beside
    # one numbered after words says nothing of which is current, and stays apart
    scala = {
        f"_overviews/{name}/{page}": f"Scala collections: the {page} part. " * 20
        for name in ("collections", "collections-2.13")
        for page in PAGES
    }
    assert statuses(find_trees(scala, page_fingerprint=lambda path: fingerprint(scala[path]))) == {}


def test_a_major_number_glued_to_the_products_letters_names_a_version_where_the_text_says_so() -> None:
    """LoopBack's site keeps each major in pages/en/lb2/, lb3/, lb4/ (LoopBack 2, 3, 4: lb4 a rewrite sharing a
    third of lb3's page names): a number glued to letters named no version, so all three majors' pages were
    current. Glued to letters of a course's parts (step1/, step2/: each step's pages say a little more than the
    last) it names none; nor do two folders whose pages share names but say other things."""
    guide = ("models.md", "relations.md", "auth.md", "datasources.md", "deploy.md", "testing.md")
    texts = {
        f"pages/en/lb{major}/{page}": f"LoopBack models and {page} relations. " * 20 + (f"lb4 only {page} " * 6)[:major]
        for major in (2, 3, 4)
        for page in guide
    }
    texts.update({f"pages/en/lb4/{page}": f"Controllers: {page}. " * 20 for page in ("controllers.md", "di.md")})
    for step in (1, 2):
        for page in guide:
            texts[f"tutorial/step{step}/{page}"] = f"Build the app: {page}. " * 20 + "And one more thing. " * step
    for release in (1, 2):
        for page in guide:
            texts[f"api/svc{release}/{page}"] = f"Service {release}: " + " ".join(f"w{release}x{i}" for i in range(60))
    # pages so named beside each other name things, not releases: MD4 and MD5, Spring Boot 2 and 3 monitors
    for name in ("md4", "md5", "springboot2", "springboot3"):
        texts[f"api/crypto/{name}.md"] = f"Hash or monitor with {name[:2]}: the function's options. " * 20
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert statuses(trees) == {"pages/en/lb4": CURRENT, "pages/en/lb3": OLD, "pages/en/lb2": OLD}
    assert not [path for path in trees.superseded if path.startswith("api/crypto/")], trees.superseded
    assert version_of_name("lb3") == "3" and version_of_name("step2") is None and version_of_name("es2015") is None


def test_a_docs_v2_that_is_the_current_api_and_an_unrelated_old_folder_are_no_versions() -> None:
    """A folder name alone decides nothing: docs/v2/ copies nothing in docs/, old/ holds other pages."""
    paths = [f"docs/{p}" for p in PAGES] + ["docs/v2/users.md", "docs/v2/orders.md", "docs/v2/auth.md"]
    paths += ["old/meeting-notes.md", "old/roadmap-2019.md", "old/intro.md"]
    assert find_trees(paths).families == ()
    both = paths + ["docs/v1/users.md", "docs/v1/orders.md", "docs/v1/auth.md"]
    assert statuses(find_trees(both)) == {"docs/v2": CURRENT, "docs/v1": OLD}


def test_sibling_folders_with_the_same_file_names_need_a_channel_name_and_resembling_text() -> None:
    """Text tells versions only where a folder is named for a release channel (`next/`, `latest/`): two packages'
    docs, even word for word alike, are copies or variants, and nothing would say which is current."""
    texts = {f"packages/{name}/docs/{p}": f"The {name} package: {p} " * 20 for name in ("alpha", "beta") for p in PAGES}
    assert find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path])).families == ()
    alike = {path: text for path, text in texts.items() if "alpha" in path}
    alike.update({path.replace("alpha", "gamma"): text for path, text in alike.items()})
    assert find_trees(alike, page_fingerprint=lambda path: fingerprint(alike[path])).families == ()
    channels = {path.replace("alpha", "next").replace("gamma", "latest"): text for path, text in alike.items()}
    found = find_trees(channels, page_fingerprint=lambda path: fingerprint(channels[path]))
    assert statuses(found) == {"packages/latest": CURRENT, "packages/next": NEWER}
    unlike = {path.replace("alpha", "next").replace("beta", "latest"): text for path, text in texts.items()}
    assert find_trees(unlike, page_fingerprint=lambda path: fingerprint(unlike[path])).families == ()


def test_a_librarys_docs_per_framework_are_variants_not_versions() -> None:
    """TanStack Query's docs/framework/react/, vue/, angular/, solid/...: the same page names, the non-React pages
    stubs pointing to React's (alike among themselves), generated reference pages alike everywhere. Text made
    angular/ current and react/, solid/ its old versions. Three or more sibling folders mirroring each other are
    variants: their text, or that of folders below them, says nothing of versions; a version name still does."""
    guides = ("guides/queries.md", "guides/mutations.md", "guides/caching.md", "guides/testing.md", "overview.md")
    texts = {f"docs/framework/react/{p}": f"React {p}: " + f"real prose about {p} " * 20 for p in guides}
    for name in ("vue", "angular", "solid"):
        texts.update({f"docs/framework/{name}/{p}": f"ref: docs/framework/react/{p} replace React" for p in guides})
        texts.update({f"docs/framework/{name}/reference/{t}.md": f"type {t} generated " * 20 for t in "ABCDE"})
    assert find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path])).families == ()
    # React's docs in v5/ and v4/ instead: versions inside one variant, never of another variant
    versioned = {path.replace("/react/", "/react/v5/"): text for path, text in texts.items() if "/react/" in path}
    versioned.update({path.replace("/v5/", "/v4/"): text for path, text in versioned.items()})
    versioned.update({path: text for path, text in texts.items() if "/react/" not in path})
    found = find_trees(versioned, page_fingerprint=lambda path: fingerprint(versioned[path]))
    assert statuses(found) == {"docs/framework/react/v5": CURRENT, "docs/framework/react/v4": OLD}
    # siblings named for release channels are versions, three or more of them too
    channels = {f"site/{name}/{p}": f"{p} the same prose " * 20 for name in ("stable", "latest", "dev") for p in guides}
    found = find_trees(channels, page_fingerprint=lambda path: fingerprint(channels[path]))
    assert len(found.families) == 1 and len(found.families[0]) == 3


def test_two_frameworks_docs_alike_in_some_pages_only_are_no_versions() -> None:
    """TanStack Router's docs/start/framework/react/ and solid/: 35 pages of the same names, 12 word for word, the
    others wholly different or stubs with no text of their own. Half alike made react/ current, solid/ old; three in
    four must be (an old copy keeps nearly every page: etcd's v2.3 beside v3.7, three in four at 0.64 or more)."""
    names = [f"guide/page{n}.md" for n in range(16)]
    texts = {f"docs/start/framework/react/{name}": f"{name} shared prose " * 30 for name in names}
    texts.update({f"docs/start/framework/solid/{name}": f"{name} shared prose " * 30 for name in names[:8]})
    texts.update({f"docs/start/framework/solid/{name}": f"{name} solid signals " * 30 for name in names[8:12]})
    texts.update({f"docs/start/framework/solid/{name}": "" for name in names[12:]})  # stubs: no chunk, no fingerprint
    prints = {path: fingerprint(text) if text else None for path, text in texts.items()}
    assert find_trees(texts, page_fingerprint=prints.get).families == ()


def test_two_sibling_folders_named_for_nothing_are_no_versions_by_text() -> None:
    """supertokens/docs: nextjs/app-directory/ and pages-directory/ (two Next.js routers) share 6 pages, alike at
    0.3 in three of four: taken for versions, pages-directory/ was current and the App Router's pages old. Where
    neither name says anything of versions, text makes none; beside a release channel's name (`next/`) it does."""
    pages = ("about.md", "init.md", "backend.md", "frontend.md", "routes.md", "next-steps.md")
    shared = " ".join(f"shared{n}" for n in range(100))

    def texts(a: str, b: str) -> dict[str, str]:
        out = {}
        for p in pages:  # mostly shared, some words each one's own: resemblance 0.36-0.55
            out[f"docs/nextjs/{a}/{p}"] = f"{shared} " + " ".join(f"app{p}{n}" for n in range(20))
            out[f"docs/nextjs/{b}/{p}"] = f"{shared} " + " ".join(f"pages{p}{n}" for n in range(20))
        return out

    routers = texts("app-directory", "pages-directory")
    found = find_trees(routers, page_fingerprint=lambda path: fingerprint(routers[path]))
    assert found.families == ()
    channels = texts("latest", "next")
    found = find_trees(channels, page_fingerprint=lambda path: fingerprint(channels[path]))
    assert statuses(found) == {"docs/nextjs/latest": CURRENT, "docs/nextjs/next": NEWER}


def test_two_example_projects_from_one_starter_are_no_versions() -> None:
    """Starlight's examples/basics/ and examples/tailwind/: a README and three near-identical pages, made from one
    starter. Text tells versions apart only where the folders mirror MIN_MIRRORED_BY_TEXT pages or more (here with
    one folder named for a channel: folders named for nothing are never versions by text)."""
    pages = ("README.md", "src/content/docs/index.mdx", "src/content/docs/guides/example.md", "src/docs/ref.md")
    texts = {f"examples/{n}/{p}": f"Starter page {p}: " + "replace me " * 30 for n in ("next", "a") for p in pages}
    assert find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path])).families == ()
    texts.update({f"examples/{name}/src/docs/more.md": "Starter page more " * 30 for name in ("next", "a")})
    assert len(find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path])).families) == 1


def test_folders_of_packages_each_with_its_readme_are_no_versions_by_text() -> None:
    """next-auth's apps/dev/ (dev is a channel word) and apps/examples/: express/README.md, nextjs/README.md,
    qwik/README.md, sveltekit/README.md from one template. They share a layout, not a text: apps/dev/ had been an
    unreleased version of apps/examples/."""
    texts = {
        f"apps/{root}/{name}/README.md": f"# {name} example\n\n" + "Clone it, install and run the dev server. " * 12
        for root in ("dev", "examples")
        for name in ("express", "nextjs", "qwik", "sveltekit")
    }
    assert find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path])).families == ()


def test_the_setting_names_the_current_tree_over_the_config() -> None:
    paths = [f"content/en/docs/v{v}/{p}" for v in ("3.8", "3.7") for p in PAGES]
    hint, *_ = parse_hints("config.yaml", "latest_stable_version: v3.7\n")
    assert hint is not None
    assert statuses(find_trees(paths, [hint], override="v3.8"))["content/en/docs/v3.8"] == CURRENT
    assert statuses(find_trees(paths, [hint], override="content/en/docs/v3.8/"))["content/en/docs/v3.8"] == CURRENT


def test_mike_and_sphinx_hints() -> None:
    mike = json.dumps([{"version": "2.0", "aliases": ["latest"]}, {"version": "1.0", "aliases": []}])
    hint, *_ = parse_hints("versions.json", mike)
    assert hint is not None and (hint.current, hint.versions) == ("2.0", ("2.0", "1.0"))
    # kgateway.dev's list: the unreleased 2.5.x first, the release its site links as latest second
    linked = [{"version": "2.5.x", "linkVersion": "main"}, {"version": "2.4.x", "linkVersion": "latest"}]
    assert [hint.current for hint in parse_hints("versions.json", json.dumps(linked))] == ["2.4.x"]
    sphinx, *_ = parse_hints("docs/conf.py", "project = 'x'\nrelease = '3.2.1'\n")
    assert sphinx is not None and sphinx.current == "3.2.1"
    paths = [f"docs/{v}/{p}" for v in ("3.2", "3.3") for p in PAGES]
    assert statuses(find_trees(paths, [sphinx]))["docs/3.2"] == CURRENT  # 3.2.1 is a release of 3.2
    assert parse_hints("docs/conf.py", "project = 'x'\n") == []


def test_pages_named_for_versions_of_one_text_are_old_copies_of_the_newest_release() -> None:
    """Rule 7, OAI/OpenAPI-Specification's layout: versions/3.0.4.md ... 3.2.0.md, the specification one page per
    release, each much like the next. A page of another text (2.0.md here) ends the chain: an older page alike with
    the newest is no copy past it. A pre-release is never the newest; release notes named for their versions say
    different things."""
    spec = [
        f"The {name} object holds fields for {i} things in an API description." for i, name in enumerate("abcdefgh")
    ]
    texts = {
        "versions/3.2.0.md": " ".join(spec),
        "versions/3.3.0-rc1.md": " ".join(spec[1:]) + " A new thing.",
        "versions/3.1.1.md": " ".join(spec[:-1]),
        "versions/3.0.4.md": " ".join(spec[:-2]),
        "versions/2.0.md": " ".join(f"Swagger {i} paths are listed under the paths key." for i in range(9)),
        "versions/1.2.md": " ".join(spec),  # older than a page of another text: no copy of the newest
        "notes/1.0.md": " ".join(f"Release one fixed bug {i} in the parser." for i in range(9)),
        "notes/1.1.md": " ".join(f"Release two added feature {i} to the CLI." for i in range(9)),
    }
    trees = find_trees(texts, page_fingerprint=lambda path: fingerprint(texts[path]))
    assert dict(trees.superseded) == {"versions/3.1.1.md": "3.1.1", "versions/3.0.4.md": "3.0.4"}
    assert trees.families == ()
    assert trees.describe() == [
        "pages named for an older version, ranked as old ones: versions/3.0.4.md (3.0.4), versions/3.1.1.md (3.1.1)"
    ]
    assert dict(find_trees(texts).superseded) == {}  # no text: no evidence


def test_a_series_of_release_notes_is_old_but_the_newest() -> None:
    """Rule 8: Celery's docs/history/whatsnew-4.4.rst ... whatsnew-5.6.rst and changelog-*.rst, DRF's
    community/3.0-announcement.md ... 3.16-announcement.md: no version trees, so no current version for rule 6, and
    every old release's notes ranked as current pages for questions on today's behaviour. Each series' newest
    stays current; two pages are no series; a plain name or an API's version is no release."""
    paths = [f"docs/{p}" for p in PAGES]
    paths += [f"docs/history/{kind}-{v}.rst" for kind in ("whatsnew", "changelog") for v in ("4.4", "5.5", "5.6")]
    paths += [f"docs/community/{v}-announcement.md" for v in ("3.9", "3.10", "3.16")]
    paths += ["docs/history/index.rst", "docs/upgrade/to-2.0.md", "docs/upgrade/to-3.0.md", "docs/api/api-v1.md"]
    paths += ["docs/api/api-v2.md", "docs/api/api-v3.md", "docs/guides/migrating-1-2.md"]
    paths += [f"docs/api/api-version-{n}.md" for n in (1, 2, 3)]  # an API's versions, each current
    paths += [f"docs/release-notes/oss/version-3-{n}.md" for n in (0, 1, 2)]  # the folder speaks of releases
    assert dict(find_trees(paths).superseded) == {
        "docs/history/whatsnew-4.4.rst": "4.4",
        "docs/history/whatsnew-5.5.rst": "5.5",
        "docs/history/changelog-4.4.rst": "4.4",
        "docs/history/changelog-5.5.rst": "5.5",
        "docs/community/3.9-announcement.md": "3.9",
        "docs/community/3.10-announcement.md": "3.10",
        "docs/release-notes/oss/version-3-0.md": "3.0",
        "docs/release-notes/oss/version-3-1.md": "3.1",
    }
    # Sphinx's doc/changes/8.1.rst ... 9.0.rst speak of releases by their folder, Ansible's porting guides by their
    # name; an exchanges/ folder holding an API's versions does not
    named = [f"doc/changes/{v}.rst" for v in ("8.1", "8.2", "9.0")] + ["doc/changes/index.rst"]
    named += [f"rst/porting_guides/porting_guide_{v}.rst" for v in ("9", "10", "11")]
    named += [f"api/exchanges/{v}.md" for v in ("1.0", "2.0", "3.0")]
    named += [f"doc/whats_new/v{v}.rst" for v in ("1.6", "1.7", "1.8")]  # scikit-learn's, the words written with _
    # matplotlib's doc/release/prev_whats_new/ keeps only earlier releases' (its newest is in doc/release/whats_new.rst)
    named += [f"doc/release/prev_whats_new/whats_new_{v}.rst" for v in ("3.9.0", "3.10.0", "3.11.0")]
    assert sorted(find_trees(named).superseded) == sorted([*named[:2], *named[4:6], *named[10:12], *named[13:]])
    assert version_in_name("guides/error-reporting-2.md") is None  # a word that starts with porting, only
    # a folder saying old holds no current release's notes: RKE2's release-notes-old/v1.24.X.md ... v1.32.X.md beside
    # release-notes/v1.33.X.md ... v1.36.X.md had kept v1.32's as current
    kept = [
        f"docs/release-notes{old}/v1.{n}.X.md" for old, ns in (("-old", (30, 31, 32)), ("", (33, 34, 35))) for n in ns
    ]
    assert sorted(find_trees(kept).superseded) == sorted(kept[:5])
    # inside a version tree rule 6 decides by the current version: a 3.7 tree's notes on 3.7 and 3.8 are no old ones
    notes = [f"notes/release-3.{n}.md" for n in (6, 7, 8)]
    tree = [f"docs/v{v}/{p}" for v in ("3.7", "3.6") for p in (*PAGES, *notes)]
    hints = parse_hints("config.yaml", "params:\n  latest_stable_version: v3.7\n")
    assert dict(find_trees(tree, hints).superseded) == {"docs/v3.7/notes/release-3.6.md": "3.6"}
    # a pre-release glued to its number (PEP 440, pytest's announce/release-8.0.0rc1.rst) is of that release's
    # series and older than it: the 8.0.0 candidates were a series of their own, its newest taken for current
    announced = [f"announce/release-{v}.rst" for v in ("7.0.0rc1", "7.0.0", "8.0.0rc1", "8.0.0rc2", "8.0.0", "9.1.1")]
    assert dict(find_trees(announced).superseded) == {page: page[17:22] for page in announced[:5]}
    beta = [f"announce/release-{v}.rst" for v in ("1.0", "1.1", "2.0b1")]  # the newest a pre-release: still newest
    assert sorted(find_trees(beta).superseded) == beta[:2]


def test_old_trees_are_listed_newest_first_and_an_old_one_without_a_number_last() -> None:
    """algolia/docsearch's versions.json ["v4", "v3", "legacy"] beside docs/: `scree doctor` had listed legacy first."""
    paths = [f"docs/{p}" for p in PAGES] + [
        f"versioned_docs/version-{v}/{p}" for v in ("v4", "v3", "legacy") for p in PAGES
    ]
    config = "module.exports = { presets: [['classic', { docs: { lastVersion: 'current' } }]] };"
    hints = parse_hints("versions.json", '["v4", "v3", "legacy"]', {"docusaurus.config.js": config})
    (family,) = find_trees(paths, hints).families
    assert [tree.root for tree in family] == [
        "docs",
        "versioned_docs/version-v4",
        "versioned_docs/version-v3",
        "versioned_docs/version-legacy",
    ]


def test_doctor_lists_the_nearest_old_trees_and_counts_the_rest() -> None:
    """antrea-io/website keeps 85 versions side by side: `scree doctor` printed all of them on one line of 3,400
    characters. The eight nearest the current one are listed, then how many more, down to which."""
    names = ["main", *(f"v1.{minor}.0" for minor in range(12))]
    paths = [f"content/docs/{name}/{p}" for name in names for p in PAGES]
    hints = parse_hints("config.yaml", "params:\n  docs_latest: v1.11.0\n")
    (line,) = find_trees(paths, hints).describe()
    assert line.startswith("current content/docs/v1.11.0/ (6 pages; config.yaml (params.docs_latest) names v1.11.0")
    assert "other versions: content/docs/main/ (unreleased, 6 pages), content/docs/v1.10.0/ (old, 6 pages)" in line
    assert line.count("(old, 6 pages)") == 7
    assert line.endswith(", and 4 more down to content/docs/v1.0.0/ (24 pages in all)")


def test_a_fingerprint_is_the_same_in_every_process() -> None:
    """Python's string hash is salted per process: a pair of pages measured near a threshold (OpenAPI's 2.0 and
    3.0.0) got one verdict in one run and the other in the next."""
    text = "The paths object holds the relative paths to the individual endpoints and their operations."
    script = f"from scree.content.versions import fingerprint; print(sorted(fingerprint({text!r})))"
    runs = {
        subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
        for _ in range(2)
    }
    assert runs == {f"{sorted(fingerprint(text))}\n"}


def test_says_same_needs_the_query_words_the_old_chunk_holds() -> None:
    current = "## Options\n\nThe watch flag reruns tests when files change. The bail flag stops after failures. " * 2
    old = current + " The browser flag runs tests in a browser."
    assert text_resemblance(current, old) >= 0.5
    assert says_same(old, current, {"watch", "flag"})
    assert not says_same(old, current, {"browser", "flag"})  # the removed option: the old chunk answers it
    assert not says_same("Totally different words here about cats.", current)
    # under the same heading, an old text holding none of the query's words gives way, whatever it says
    assert says_same("Follow the installation step first.", "{{< boilerplate prereqs >}}", {"circuit"}, True)
    assert not says_same("Follow the installation step first.", "{{< boilerplate prereqs >}}", {"installation"}, True)
    assert not says_same("Follow the installation step first.", "{{< boilerplate prereqs >}}", {"circuit"})


def test_version_copies_fold_into_their_current_page() -> None:
    """LanguageTrees folds version copies with translations: every copy names the current page; the current one
    carries no version, an old one its folder's name, an unreleased one is marked newer."""
    paths = [f"docs/{p}" for p in PAGES] + [
        f"website/versioned_docs/version-{v}/{p}" for v in ("30.4", "30.0") for p in PAGES
    ]
    hint, *_ = parse_hints("website/versions.json", '["30.4", "30.0"]')
    assert hint is not None
    trees = LanguageTrees.of(paths, find_trees(paths, [hint]))
    current = "website/versioned_docs/version-30.4/config.md"
    assert trees.copy(current) == Copy("", current, None, structural=True)
    old = trees.copy("website/versioned_docs/version-30.0/config.md")
    assert old == Copy("", current, "version-30.0", structural=True)
    assert old.version_note == "version-30.0 (old)"
    nxt = trees.copy("docs/config.md")
    assert nxt is not None and nxt.newer and nxt.version_note == "docs (unreleased)"
    order = sorted(["docs/config.md", "website/versioned_docs/version-30.0/config.md", current], key=lambda p: (
        trees.preference(p, None)))  # fmt: skip
    assert order == [current, "website/versioned_docs/version-30.0/config.md", "docs/config.md"]


def test_one_shared_page_does_not_make_a_translation_the_main_language() -> None:
    """A site whose docs/ shares a single page with i18n/de/: English (the untagged original) stays main."""
    paths = [f"docs/{p}" for p in PAGES] + [f"i18n/de/{PLUGIN}/current/intro.md"]
    trees = LanguageTrees.of(paths)
    assert trees.main == ""
    assert trees.query_language("how do I install it") == ""
    assert trees.preference("docs/intro.md", "") < trees.preference(f"i18n/de/{PLUGIN}/current/intro.md", "")
    german = [f"i18n/de/{PLUGIN}/current/{p}" for p in PAGES]
    assert LanguageTrees.of(["docs/intro.md", *german]).main == "de"  # the evidence says German is the original


def test_hugo_languages_and_versions_together() -> None:
    """content/<lang>/docs/vX.Y/: languages are no versions of each other; each language's old pages copy its own
    current page, and all copies of a page are one family across languages and versions."""
    from scree.search.version_evidence import is_language_folder

    paths = [f"content/{lang}/docs/v{v}/{p}" for lang in ("en", "zh") for v in ("1.1", "1.0") for p in PAGES]
    hint, *_ = parse_hints("config.toml", 'latest_version = "v1.1"\n')
    assert hint is not None
    versions = find_trees(paths, [hint], excluded=is_language_folder)
    assert statuses(versions) == {
        "content/en/docs/v1.1": CURRENT,
        "content/en/docs/v1.0": OLD,
        "content/zh/docs/v1.1": CURRENT,
        "content/zh/docs/v1.0": OLD,
    }
    trees = LanguageTrees.of(paths, versions)
    old_zh = trees.copy("content/zh/docs/v1.0/config.md")
    current_en = trees.copy("content/en/docs/v1.1/config.md")
    assert old_zh is not None and current_en is not None
    assert (old_zh.language, old_zh.version, current_en.version) == ("zh", "v1.0", None)
    assert old_zh.page == current_en.page == "content/*/docs/v1.1/config.md"


def test_a_current_page_named_for_a_protocols_version_is_no_old_release() -> None:
    """ArangoDB 3.12's Foxx docs keep related-modules/oauth-1-0a.md and oauth-2-0.md (OAuth 2.0, a protocol) beside
    release-notes/version-3.0/incompatible-changes-in-3-0.md: rule 6 took 2-0 for ArangoDB 2.0 and ranked the OAuth
    page as one about an old release. Two parts after a plain word name a release only where the path speaks of
    releases."""
    paths = [f"content/{v}/{p}" for v in ("3.12", "3.11") for p in PAGES]
    for v in ("3.12", "3.11"):
        paths += [f"content/{v}/foxx/related-modules/{name}.md" for name in ("oauth-1-0a", "oauth-2-0", "queues")]
        paths += [f"content/{v}/release-notes/version-3.0/incompatible-changes-in-3-0.md"]
    superseded = find_trees(paths).superseded
    assert dict(superseded) == {"content/3.12/release-notes/version-3.0/incompatible-changes-in-3-0.md": "3.0"}


def test_version_in_a_page_name_needs_a_version_shape() -> None:
    assert version_in_name("upgrades/upgrade_3_6.md") == "3.6"
    assert version_in_name("guides/migrating-to-v4.md") == "4"
    assert version_in_name("guides/upgrading-from-v2-to-v3.md") == "3"  # about moving to 3: current in a 3.x tree
    assert version_in_name("upgrade-guide-2.md") == "2"  # a lone number beside a word that speaks of versions
    assert version_in_name("benchmarks/etcd-2-2-0-rc-memory-benchmarks.md") == "2.2.0"
    # strict (rule 6 where the path speaks of no release): two parts after a word name a protocol as often as a
    # release; alone, after a `v` or as a release's three parts they name one
    assert version_in_name("oauth-2-0.md", strict=True) is None and version_in_name("http-1-1.md", strict=True) is None
    assert version_in_name("updating/5-0.md", strict=True) == "5.0"
    assert version_in_name("release-notes-old/v1.30.X.md", strict=True) == "1.30"
    assert version_in_name("benchmarks/etcd-2-2-0-benchmarks.md", strict=True) == "2.2.0"
    assert version_in_name("kops/releases/1.10-NOTES.md") == "1.10"  # rule 8 reads a series where its path speaks
    for plain in ("http2.md", "ipv6.md", "01-intro.md", "etcd-3-watch-memory-benchmark.md", "UpgradingToJest30.md"):
        assert version_in_name(plain) is None, plain
    # TiKV 7.1's concepts/explore-tikv-features/api-v2.md is its API V2 page, current; a page named v2 is about v2
    assert version_in_name("concepts/explore-tikv-features/api-v2.md") is None
    assert version_in_name("releases/v2.md") == "2"
    # an index page is named by its folder (Redis's release notes per release: rs-7-8-releases/_index.md)
    assert version_in_name("release-notes/rs-7-8-releases/_index.md") == "7.8"
    assert version_in_name("upgrading/v3/index.md") == "3"
    assert version_in_name("guides/index.md") is None and version_in_name("README.md") is None
    # Docusaurus's number prefixes order pages (ibc-go's 06-upgrades.md, ignite's 06-migration/readme.md): no version
    assert version_in_name("01-developer-guide/06-upgrades.md") is None
    assert version_in_name("docs/06-migration/readme.md") is None
    assert version_in_name("05-migrations/09-v7-to-v7_1.md") == "7.1"
    assert version_in_name("05-migrations/2-0-0-upgrade.md") == "2.0.0"
    # ... as a book numbers its sections with a leading zero (the Rust book's chapter 14, section 1, on releases)
    assert version_in_name("src/ch14-01-release-profiles.md") is None
    assert version_in_name("doc/build/changelog/changelog_01.rst") == "01"  # SQLAlchemy's 0.1, no section
    assert version_in_name("upgrades/upgrade-3-06.md") == "3.06"  # a part of a release's number stays one
    assert query_versions("We need to roll back from 3.7 to 3.6") == {"3.7", "3.6"}
    assert query_versions("after upgrading, http2 fails") == set()
    assert query_versions("the HTTP+SSE transport of the 2024-11-05 spec") == {"2024.11.05"}
    assert query_versions("timeouts of 2-5 seconds") == {"2", "5"}  # a dash joins the numbers of a date only
    assert names_version(query_versions("upgrading from 3.6.2"), "3.6")
    # a page named for a release is named by it, trailing zeros aside; a version tree is not (Jest 30 is 30.x)
    assert names_version(query_versions("from AI SDK 4 to 5"), "5.0", page=True)
    assert not names_version(query_versions("from AI SDK 4 to 5"), "5.0")
    assert not names_version(query_versions("new in 5.1"), "5.0", page=True)
    assert not names_version(query_versions("etcd 3 on Kubernetes"), "3.6", page=True)
    assert not names_version(query_versions("etcd 3 on Kubernetes"), "3.6")


def test_current_pages_named_for_an_older_version_are_superseded() -> None:
    """Rule 6, etcd's layout: v3.7/upgrades/upgrade_3_2.md is about an old release; upgrade_3_7.md is current; a
    page named for the current major alone (UpgradingToJest30 beside 30.4) is not older."""
    names = ("upgrades/upgrade_3_2.md", "upgrades/upgrade_3_6.md", "upgrades/upgrade_3_7.md", "api_reference_v3.md")
    paths = [f"docs/v{v}/{p}" for v in ("3.7", "3.6") for p in (*PAGES, *names)]
    config = "params:\n  latest_stable_version: v3.7\n"
    hint, *_ = parse_hints("config.yaml", config)
    assert hint is not None
    trees = find_trees(paths, [hint])
    assert dict(trees.superseded) == {
        "docs/v3.7/upgrades/upgrade_3_2.md": "3.2",
        "docs/v3.7/upgrades/upgrade_3_6.md": "3.6",
    }
    assert trees.describe()[-1] == (
        "pages named for an older version, ranked as old ones: docs/v3.7/upgrades/upgrade_3_2.md (3.2), "
        "docs/v3.7/upgrades/upgrade_3_6.md (3.6)"
    )
    # beside an untagged current tree, a version up to the newest old tree's is older
    untagged = [f"docs/{p}" for p in (*PAGES, "migrating-to-v9.md", "migrating-to-v11.md")]
    untagged += [f"versioned_docs/version-10.x/{p}" for p in PAGES]
    assert dict(find_trees(untagged).superseded) == {"docs/migrating-to-v9.md": "9"}
    # no version trees: no current version to compare with, so nothing is superseded
    assert dict(find_trees([f"docs/{p}" for p in (*PAGES, "upgrade_1_2.md")]).superseded) == {}


def test_a_page_on_leaving_the_newest_old_version_is_current() -> None:
    """solid-docs: solid-start/v2/ beside v1/, v2 holding `migrating-from-v1.mdx`; zenstack: docs/ (v3) holding
    `migrate-v2.md` beside versioned_docs/version-2.x/. Both were ranked as old pages, named for the old version
    they tell how to leave: a name moving from the newest old version, or one its tree leaves out of a folder it
    keeps, was written after that release. cert-manager's v1.20-docs/ keeps no release notes: their absence from it
    says nothing, and release-notes-1.20.md beside the current 1.21 pages is 1.20's."""
    paths = [f"src/start/v{v}/{p}" for v in (2, 1) for p in PAGES] + ["src/start/v2/migrating-from-v1.mdx"]
    assert dict(find_trees(paths).superseded) == {}
    untagged = [f"docs/{p}" for p in (*PAGES, "migrate-v2.md")] + [f"versioned_docs/version-2.x/{p}" for p in PAGES]
    config = {
        "docusaurus.config.js": "module.exports = { presets: [['classic', { docs: { lastVersion: 'current' } }]] };"
    }
    hints = parse_hints("versions.json", json.dumps(["2.x"]), config)
    assert statuses(find_trees(untagged, hints)) == {"docs": CURRENT, "versioned_docs/version-2.x": OLD}
    assert dict(find_trees(untagged, hints).superseded) == {}
    # docsearch v5's packages/adapter/migrating-from-v4.mdx: a folder v4 never had, the name moving from v4
    moved = [*untagged, "docs/adapter/migrating-from-v2.mdx", "docs/notes/release-notes-2.md"]
    assert dict(find_trees(moved, hints).superseded) == {"docs/notes/release-notes-2.md": "2"}
    # the old version's tree holds it too: written for that release (etcd's upgrade_3_6.md in v3.6/ and v3.7/)
    held = [*untagged, "versioned_docs/version-2.x/migrate-v2.md"]
    assert dict(find_trees(held, hints).superseded) == {"docs/migrate-v2.md": "2"}
    # an older version than the newest old one: leaving it is old news (v0 -> v1 beside a v1 tree)
    older = [*untagged, "docs/migrate-v1.md", *(f"versioned_docs/version-1.x/{p}" for p in PAGES)]
    assert dict(find_trees(older, parse_hints("versions.json", json.dumps(["2.x", "1.x"]), config)).superseded) == {
        "docs/migrate-v1.md": "1"
    }


@pytest.mark.parametrize(
    ("query", "path", "named"),
    [
        ("upgrading from 1.19 to 1.20", "releases/upgrading/upgrading-1.19-1.20.md", True),
        ("upgrading from 1.19 to 1.20", "releases/upgrading/upgrading-1.18-1.19.md", False),
        ("upgrading to 1.19", "releases/upgrading/upgrading-1.18-1.19.md", False),  # one version: no range asked
        ("migrate from v2 to v3", "guides/upgrading-from-v2-to-v3.md", True),
        ("from AI SDK 4 to 5", "migration-guides/migration-guide-5-0.mdx", False),  # names 5 only
        ("roll back from 3.7 to 3.6", "upgrades/downgrade_3_7.md", False),
    ],
)
def test_a_page_named_for_each_version_a_query_names(query: str, path: str, named: bool) -> None:
    assert names_each(query_versions(query), versions_in_name(path)) is named


def test_a_heading_names_the_release_a_query_asks_about_alone() -> None:
    """The release sections of a changelog (ranking.RELEASE_WEIGHT): the section headed by the release the query names
    (a pre-release of it too), not a step between two releases nor its version tree's own landing page; a
    section headed by another line's release says so (-1), a patch of the named line says nothing."""
    eight = {"8.0"}
    assert heading_names_release(eight, "Changelog > pytest 8.0.0 (2024-01-27) > Bug Fixes") == 1.0
    assert heading_names_release(eight, "pytest 8.0.0rc1 (2023-12-30) > Breaking Changes") == 1.0
    assert heading_names_release(eight, "Changelog > pytest 8.3.1 (2024-07-20)") == -1.0
    assert heading_names_release(eight, "Changelog > pytest 8.0.2 (2024-02-24)") == 0.0  # the 8.0 line
    assert heading_names_release(eight, "Changelog > Unreleased") == 0.0
    assert heading_names_release({"1.17"}, "v1.17 > Highlights") == 1.0
    assert heading_names_release({"3.6"}, "Downgrade etcd from v3.6 to v3.5 > Checklists") == 0.0
    assert heading_names_release({"3.6"}, "Downgrade etcd from v3.7 to v3.6", own="v3.7") == 0.0
    assert heading_names_release({"3.6"}, "v3.6 docs", own="v3.6") == 0.0
    assert heading_names_release({"3.6"}, "Announcing etcd v3.6.0 > Breaking changes") == 1.0


def test_a_query_naming_a_release_names_its_tree_not_a_coarser_one_of_the_family() -> None:
    """Linkerd's site: content/docs/ current, 2-edge/ (the next 2.x, whose name reads as version 2) and 2.18/ old.
    "What changed in Linkerd 2.18?" named both 2.18 and 2-edge, so the unreleased copy was not moved down and came
    first; the tree the query names more precisely is the one asked for."""
    paths = [f"content/{root}/{p}" for root in ("docs", "2-edge", "2.18", "2.17") for p in PAGES]
    versions = find_trees(paths)
    assert statuses(versions)["content/2-edge"] == NEWER and statuses(versions)["content/2.18"] == OLD
    asked = query_versions("What changed in Linkerd 2.18?")
    assert versions.named_by("content/2.18/install.md", asked)
    assert not versions.named_by("content/2-edge/install.md", asked)
    assert versions.named_by("content/2-edge/install.md", query_versions("What is new in Linkerd 2?"))


def test_a_release_packed_into_two_digits_is_named_by_its_dotted_version() -> None:
    """SQLAlchemy's doc/build/changelog/migration_20.rst is "What's New in SQLAlchemy 2.0?" and changelog_14.rst the
    1.4 changelog, down to changelog_01.rst: rule 8 ranks all but the newest as old, and "What's new in SQLAlchemy
    2.0?" had not named migration_20.rst (20 read as release 20), so the page that answers went ten places down."""
    paths = [
        f"doc/build/changelog/{kind}_{v}.rst" for kind in ("changelog", "migration") for v in ("09", "14", "20", "21")
    ]
    superseded = find_trees(paths).superseded
    assert superseded["doc/build/changelog/migration_20.rst"] == "20"
    assert names_version(query_versions("What's new in SQLAlchemy 2.0?"), "20", page=True)
    assert names_version(query_versions("the 1.4 changelog"), "14", page=True)
    assert not names_version(query_versions("What's new in SQLAlchemy 2.0?"), "21", page=True)
    assert not names_version(query_versions("What's new in SQLAlchemy 2.0?"), "20")  # a version tree's 20 is 20
    assert not names_version(query_versions("What changed in 0.2?"), "20", page=True)  # 0.2 packs as 02
