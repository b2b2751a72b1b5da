"""Issue 32: versioned docs sites searched as their readers expect, over real folders, a real index and real
searches (the hashed test embedder): the current version first whatever the layout, other versions marked, the chunk
that matched shown, the untagged tree the main language, and `scree doctor` saying what it took and how to change
it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_helpers import main_here, reindex_here, run_scree, scree_env, search_json, write_file

from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder
from scree.index.model_policy import prepare
from scree.search.engine import SearchEngine
from scree.search.hits import Hit
from scree.search.render import render_hit
from scree.store import SqliteReader, SqliteWriter
from scree.writer_proc.sync import Syncer

MODES = ("hybrid", "keyword", "semantic")
PLUGIN = "docusaurus-plugin-content-docs"


def page(title: str, *sections: str) -> str:
    return f"# {title}\n\n" + "\n\n".join(sections) + "\n"


CLI_V30 = page(
    "CLI options",
    "## testPathPatterns\n\nRun only the test files whose path matches one of the regex patterns given.",
    "## watch\n\nWatch files for changes and rerun the tests related to changed files.",
    "## shard\n\nSplit the test suite into shards and run one shard on each machine of the CI.",
)
CLI_V29 = page(
    "CLI options",
    "## testPathPattern\n\nRun only the test files whose path matches the regex pattern given.",
    "## watch\n\nWatch files for changes and rerun the tests related to changed files.",
    "## browser\n\nRun the tests in a real browser through the jasmine browser runner, now removed.",
)
PUPPETEER = page(
    "Using with puppeteer",
    "Run the tests in a real Chromium browser with the jest-puppeteer preset, which starts and stops the browser.",
)
CONFIG_PAGE = page(
    "Configuring",
    "## coverageThreshold\n\nFail the run when coverage of a folder drops below the given percentage.",
    "## testEnvironment\n\nThe environment the tests run in: node by default, or jsdom for browser code.",
)
GUIDES = {
    "mocks.md": page("Manual mocks", "Put a manual mock of a node module in a __mocks__ folder beside node_modules."),
    "snapshots.md": page("Snapshots", "Run the tests with the update flag to write the snapshots again."),
    "timers.md": page("Fake timers", "Replace setTimeout and setInterval with fake timers you advance by hand."),
}


def tree(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        write_file(folder, rel, text)
    return folder


def engine_for(folder: Path, db: Path, current_version: str | None = None) -> SearchEngine:
    embedder = HashEmbedder()
    with SqliteWriter.open(db, folder) as store:
        prepare(store, embedder)
        Syncer(store, IgnorePolicy(folder), embedder, 1_000_000).sync_all()
    reader = SqliteReader.open(db, folder)
    policy = IgnorePolicy(folder)
    return SearchEngine(reader, policy, folder, 1_000_000, lambda: embedder, current_version=current_version)


def beside_guides(tmp_path: Path, files: dict[str, str]) -> SearchEngine:
    """An engine over `files` beside a few guides in docs/ (GUIDES), in tmp_path/site."""
    guides = {f"docs/{name}": text for name, text in GUIDES.items()}
    return engine_for(tree(tmp_path / "site", {**files, **guides}), tmp_path / "index.db")


def indexed_doctor(tmp_path: Path, folder: Path) -> tuple[dict[str, str], subprocess.CompletedProcess[str]]:
    """`folder` indexed by `scree reindex` with the hashed embedder (its data under `tmp_path`), and what `scree
    doctor` then says of it: (the environment both ran in, doctor's process)."""
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    reindex_here(env, folder)
    return env, run_scree("doctor", "--notes", str(folder), env=env)


def search(engine: SearchEngine, query: str, mode: str, k: int = 5) -> list[Hit]:
    return engine.search(query, k=k, mode=mode).hits


def jest_like(folder: Path) -> Path:
    """docs/ is the unreleased next; website/versions.json names 30.4 current; 29.7 is old."""
    files = {"website/versions.json": '["30.4", "29.7"]\n'}
    for root, cli in (("docs", CLI_V30), ("website/versioned_docs/version-30.4", CLI_V30),
                      ("website/versioned_docs/version-29.7", CLI_V29)):  # fmt: skip
        files[f"{root}/CLI.md"] = cli
        files[f"{root}/Configuration.md"] = CONFIG_PAGE
        files.update({f"{root}/{name}": text for name, text in GUIDES.items()})
    files["docs/Upcoming.md"] = page("Upcoming", "The retry flag reruns a failed test up to three times, next release.")
    return tree(folder, files)


@pytest.mark.parametrize("mode", MODES)
def test_the_version_the_config_names_comes_first_not_the_newest_folder(tmp_path: Path, mode: str) -> None:
    engine = engine_for(jest_like(tmp_path / "site"), tmp_path / "index.db")
    hits = search(engine, "fail the run when coverage of a folder drops below a percentage", mode)
    assert hits[0].path == "website/versioned_docs/version-30.4/Configuration.md", [h.path for h in hits]
    assert hits[0].version is None
    assert not [h.path for h in hits if h.path.endswith("Configuration.md") and h.path != hits[0].path]
    named = {entry.rsplit(":", 1)[0] for entry in hits[0].also}
    assert {"docs/Configuration.md", "website/versioned_docs/version-29.7/Configuration.md"} <= named


def test_also_names_the_versions_nearest_the_current_one_first(tmp_path: Path) -> None:
    """oauth2-proxy: docs/ (next) and versioned_docs/version-7.9.x ... 7.15.x, 7.15.x current; an identical chunk in
    all of them named its copies in the paths' order, 7.10.x first and 7.14.x among "and 3 more"."""
    releases = ["7.15.x", "7.14.x", "7.13.x", "7.12.x", "7.11.x", "7.10.x", "7.9.x"]
    files = {"docs/versions.json": json.dumps(releases)}
    for root in ("docs/docs", *(f"docs/versioned_docs/version-{v}" for v in releases)):
        files[f"{root}/providers/keycloak.md"] = page(
            "Keycloak OIDC", "Set the provider to keycloak-oidc and the realm."
        )
        files.update({f"{root}/{name}": text for name, text in GUIDES.items()})
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    hit = search(engine, "set the provider to keycloak-oidc", "hybrid")[0]
    assert hit.path == "docs/versioned_docs/version-7.15.x/providers/keycloak.md"
    assert [entry.rsplit(":", 1)[0].split("/")[1:3] for entry in hit.also] == [
        ["docs", "providers"],
        *(["versioned_docs", f"version-{v}"] for v in releases[1:]),
    ]
    assert "version-7.14.x" in render_hit(1, hit) and "and 2 more" in render_hit(1, hit)


def test_also_names_a_translation_of_a_version_after_that_versions_own_page(tmp_path: Path) -> None:
    """Karmada keeps Chinese copies of old versions (`i18n/zh/…/version-v1.13/`), many untranslated: also= named
    them first, oldest first, before the unreleased docs/ and the previous release."""
    files = {"website/versions.json": '["30.4", "29.7", "28.1"]'}
    keycloak = page("Keycloak OIDC", "Set the provider to keycloak-oidc and the realm.")
    for root in (
        "docs",
        *(f"website/versioned_docs/version-{v}" for v in ("30.4", "29.7", "28.1")),
        *(f"website/i18n/zh/{PLUGIN}/version-{v}" for v in ("29.7", "28.1")),
    ):
        files[f"{root}/keycloak.md"] = keycloak
        files.update({f"{root}/{name}": text for name, text in GUIDES.items()})
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    hit = search(engine, "set the provider to keycloak-oidc", "hybrid")[0]
    assert hit.path == "website/versioned_docs/version-30.4/keycloak.md"
    assert [entry.rsplit("/", 1)[0] for entry in hit.also] == [
        "docs",
        "website/versioned_docs/version-29.7",
        f"website/i18n/zh/{PLUGIN}/version-29.7",
        "website/versioned_docs/version-28.1",
        f"website/i18n/zh/{PLUGIN}/version-28.1",
    ]


def test_a_query_naming_an_old_version_gets_that_versions_copy_first(tmp_path: Path) -> None:
    """The MCP specification keeps each release in a folder named by its date (2024-11-05/, 2025-03-26/...): "how did
    capability negotiation work in 2025-03-26?" asks for that release's page, which had been folded into the
    current one or ranked after it. A query naming the current version too ("from 30.4 back to 29.7") keeps it."""
    engine = engine_for(jest_like(tmp_path / "site"), tmp_path / "index.db")
    old = "website/versioned_docs/version-29.7/CLI.md"
    for mode in MODES:
        hits = search(engine, "watch files for changes and rerun related tests in Jest 29.7", mode)
        assert (hits[0].path, hits[0].version) == (old, "version-29.7 (old)"), (mode, [h.path for h in hits])
        assert "website/versioned_docs/version-30.4/CLI.md" in {entry.rsplit(":", 1)[0] for entry in hits[0].also}
        hits = search(engine, "going from 30.4 back to 29.7: watch files for changes and rerun the tests", mode)
        assert hits[0].path == "website/versioned_docs/version-30.4/CLI.md", (mode, [h.path for h in hits])
    spec = {
        f"spec/{release}/lifecycle.md": page("Lifecycle", f"## Capability negotiation\n\nClient and server {said}.")
        for release, said in (
            ("2026-07-28", "exchange capabilities in the initialize request and its result"),
            ("2025-03-26", "exchange capabilities in the initialize request, and the client sends roots"),
            ("2024-11-05", "exchange capabilities in the initialize request, sampling included"),
        )
    }
    spec.update(
        {f"spec/{release}/{name}": text for release in ("2026-07-28", "2025-03-26") for name, text in GUIDES.items()}
    )
    engine = engine_for(tree(tmp_path / "spec-site", spec), tmp_path / "spec.db")
    for mode in MODES:
        hits = search(engine, "how did capability negotiation work in 2025-03-26?", mode)
        assert (hits[0].path, hits[0].version) == ("spec/2025-03-26/lifecycle.md", "2025-03-26 (old)"), mode
        assert search(engine, "how does capability negotiation work?", mode)[0].path == "spec/2026-07-28/lifecycle.md"


def test_an_unreleased_page_stays_findable_and_is_marked(tmp_path: Path) -> None:
    engine = engine_for(jest_like(tmp_path / "site"), tmp_path / "index.db")
    for mode in MODES:
        hits = search(engine, "retry flag reruns a failed test three times", mode, k=20)
        upcoming = [h for h in hits if h.path == "docs/Upcoming.md"]
        assert upcoming and upcoming[0].version == "docs (unreleased)", (mode, [h.path for h in hits])
    assert 'version="docs (unreleased)"' in render_hit(1, upcoming[0])


@pytest.mark.parametrize("mode", MODES)
def test_a_page_gone_from_the_current_version_is_one_hit_its_newest_copy_first(tmp_path: Path, mode: str) -> None:
    """LoopBack's lb3/HasMany-relations.md and lb2/HasMany-relations.md, gone from lb4/ (its page is renamed): each
    old version's copy was a hit of its own, two slots for one removed page. Now the newest old copy is the hit,
    marked, the older one in its also=."""
    folder = jest_like(tmp_path / "site")
    write_file(folder, "website/versioned_docs/version-29.7/Puppeteer.md", PUPPETEER)  # 28.1's says a little less
    write_file(
        folder, "website/versioned_docs/version-28.1/Puppeteer.md", PUPPETEER.replace(", which starts", ". It starts")
    )
    for name, text in (("CLI.md", CLI_V29), ("Configuration.md", CONFIG_PAGE), *GUIDES.items()):
        write_file(folder, f"website/versioned_docs/version-28.1/{name}", text)
    write_file(folder, "website/versions.json", '["30.4", "29.7", "28.1"]\n')
    engine = engine_for(folder, tmp_path / "index.db")
    hits = search(engine, "run the tests in a real chromium browser with puppeteer preset", mode, k=10)
    gone = [hit for hit in hits if hit.path.endswith("Puppeteer.md")]
    assert [(hit.path, hit.version) for hit in gone] == [
        ("website/versioned_docs/version-29.7/Puppeteer.md", "version-29.7 (old)")
    ], [(hit.path, hit.version) for hit in hits]
    assert {entry.rsplit(":", 1)[0] for entry in gone[0].also} == {"website/versioned_docs/version-28.1/Puppeteer.md"}


WIDGET_RUNNER = page("Widget runner", "The widget runner starts each test file in a widget process of its own.")


@pytest.mark.parametrize("mode", MODES)
def test_a_page_titled_for_what_is_asked_that_only_an_old_version_has_comes_first_marked(
    tmp_path: Path, mode: str
) -> None:
    """pnpm 11 renamed `pnpm dlx` to pnx: only 10.x and older have a page titled "pnpm dlx", and "What does pnpm dlx
    do?" had it seventh, under current pages that matched a word or two. A page of another version titled for what
    a question asks is not moved down where none of the first current pages is titled so; where one is, it is."""
    folder = jest_like(tmp_path / "site")
    write_file(folder, "website/versioned_docs/version-29.7/WidgetRunner.md", WIDGET_RUNNER)
    current = "website/versioned_docs/version-30.4"
    write_file(
        folder, f"{current}/Processes.md", page("Processes", "Each test file runs in a process the runner starts.")
    )
    write_file(folder, f"{current}/Rendering.md", page("Rendering", "A widget renders in the document of its test."))
    hits = search(engine_for(folder, tmp_path / "index.db"), "What does the widget runner do?", mode)
    assert [(hits[0].path, hits[0].version)] == [
        ("website/versioned_docs/version-29.7/WidgetRunner.md", "version-29.7 (old)")
    ], [h.path for h in hits]
    for n, (name, title) in enumerate((("Widgets.md", "Widgets"), ("Runners.md", "Widget runners"))):
        write_file(folder, f"{current}/{name}", page(title, "Widgets and their runners are set in the config."))
        hits = search(engine_for(folder, tmp_path / f"index{n}.db"), "What does the widget runner do?", mode, k=10)
        assert hits[0].version is None and hits[0].path.startswith(current), (title, [h.path for h in hits])


@pytest.mark.parametrize("mode", MODES)
def test_a_section_gone_from_the_current_page_is_one_hit_its_newest_text_first(tmp_path: Path, mode: str) -> None:
    """pnpm's "Using Corepack", gone from the current installation page, is in 10.x and, rewritten, in 7.x: the
    two old texts were two hits, the older one first. Now the newest old version's text is the hit, marked, the
    older one in its also=."""
    folder = jest_like(tmp_path / "site")
    rewritten = "## browser\n\nStart the jasmine runner by hand to open each test file in a browser window of your own."
    for name, text in (("Configuration.md", CONFIG_PAGE), *GUIDES.items()):
        write_file(folder, f"website/versioned_docs/version-28.1/{name}", text)
    write_file(folder, "website/versioned_docs/version-28.1/CLI.md", page("CLI options", rewritten))
    write_file(folder, "website/versions.json", '["30.4", "29.7", "28.1"]\n')
    engine = engine_for(folder, tmp_path / "index.db")
    hits = search(engine, "run each test in a browser with the jasmine runner", mode, k=10)
    gone = [hit for hit in hits if "jasmine" in hit.text]
    assert [(hit.path, hit.version) for hit in gone] == [
        ("website/versioned_docs/version-29.7/CLI.md", "version-29.7 (old)")
    ], [(hit.path, hit.version, hit.heading) for hit in hits]
    assert "website/versioned_docs/version-28.1/CLI.md" in {entry.rsplit(":", 1)[0] for entry in gone[0].also}


def test_the_old_chunk_that_matched_is_shown_marked_and_the_current_one_where_it_says_the_same(
    tmp_path: Path,
) -> None:
    """Display rule: an option only the old version has is shown from the old version's chunk, with its version and
    the current page in also=; a section both say is shown from the current page."""
    engine = engine_for(jest_like(tmp_path / "site"), tmp_path / "index.db")
    old = "website/versioned_docs/version-29.7/CLI.md"
    current = "website/versioned_docs/version-30.4/CLI.md"
    for mode in ("hybrid", "keyword"):
        hits = search(engine, "run the tests in a real browser jasmine runner", mode, k=20)
        browser = next(h for h in hits if "jasmine browser" in h.text)
        assert (browser.path, browser.version) == (old, "version-29.7 (old)")
        assert current in {entry.rsplit(":", 1)[0] for entry in browser.also}
        watch = search(engine, "watch files for changes and rerun the related tests", mode)[0]
        assert (watch.path, watch.version) == (current, None), mode
        assert "Watch files for changes" in watch.text
        assert old in {entry.rsplit(":", 1)[0] for entry in watch.also}


def test_a_site_at_the_repository_root_comes_before_its_old_version_beside_it(tmp_path: Path) -> None:
    """A docs repository whose pages sit at its root (a Mintlify site: firecrawl-docs) keeps its old API's pages in
    v1/ at the same relative paths: the root's page comes first with the v1/ copy in also=, a section only v1/ has
    is shown marked old, and `scree doctor` names the root `./`."""
    files = {
        "CLI.md": CLI_V30,
        "Configuration.md": CONFIG_PAGE,
        "v1/CLI.md": CLI_V29,
        "v1/Configuration.md": CONFIG_PAGE,
    }
    files |= {name: text for name, text in GUIDES.items()} | {f"v1/{name}": text for name, text in GUIDES.items()}
    folder = tree(tmp_path / "site", files)
    engine = engine_for(folder, tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        hits = search(engine, "fail the run when coverage of a folder drops below a percentage", mode)
        assert (hits[0].path, hits[0].version) == ("Configuration.md", None), (mode, [h.path for h in hits])
        assert "v1/Configuration.md" in {entry.rsplit(":", 1)[0] for entry in hits[0].also}
        browser = next(h for h in search(engine, "run the tests in a real browser jasmine runner", mode, k=20)
                       if "jasmine browser" in h.text)  # fmt: skip
        assert (browser.path, browser.version) == ("v1/CLI.md", "v1 (old)")
    env, doctor = indexed_doctor(tmp_path, folder)
    assert "version trees: current ./ (5 pages; the tree whose name carries no version" in doctor.stdout
    assert "other versions: v1/ (old, 5 pages)" in doctor.stdout


def test_an_archived_folder_gives_way_to_docs(tmp_path: Path) -> None:
    """pnpm's layout: versioned_docs_archived/ is no Docusaurus folder; identical text is shown from docs/."""
    files = {f"docs/{name}": text for name, text in GUIDES.items()} | {"docs/CLI.md": CLI_V30}
    for version in ("7.x", "8.x"):
        files.update({f"versioned_docs_archived/version-{version}/{name}": text for name, text in GUIDES.items()})
        files[f"versioned_docs_archived/version-{version}/CLI.md"] = CLI_V29
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in MODES:
        hits = search(engine, "manual mock of a node module in a mocks folder", mode)
        assert hits[0].path == "docs/mocks.md" and hits[0].version is None, (mode, [h.path for h in hits])
        assert not any(h.path.startswith("versioned_docs_archived/") and h.path.endswith("mocks.md") for h in hits)


def test_hugo_versions_with_renamed_pages(tmp_path: Path) -> None:
    """etcd's layout: content/en/docs/vX.Y/, config.yaml names v3.7 current over the newer v3.8 draft, and an old
    page renamed since (tutorials/ -> tasks/) folds into its current page."""
    keys = page("Interacting with etcd", "Write a key with etcdctl put and read it back with etcdctl get.")
    files = {"config.yaml": "params:\n  latest_stable_version: v3.7\n"}
    for version in ("v3.8", "v3.7", "v3.6"):
        files.update({f"content/en/docs/{version}/op-guide/{name}": text for name, text in GUIDES.items()})
        files[f"content/en/docs/{version}/op-guide/configuration.md"] = CONFIG_PAGE
    for version in ("v3.8", "v3.7"):
        files[f"content/en/docs/{version}/tasks/developer/interacting.md"] = keys
    files["content/en/docs/v3.6/tutorials/interacting.md"] = keys
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in MODES:
        hits = search(engine, "write a key with etcdctl put and read it back", mode)
        assert hits[0].path == "content/en/docs/v3.7/tasks/developer/interacting.md", (mode, [h.path for h in hits])
        assert not [h.path for h in hits if "interacting" in h.path and h is not hits[0]], mode
        named = {entry.rsplit(":", 1)[0] for entry in hits[0].also}
        assert "content/en/docs/v3.6/tutorials/interacting.md" in named


def test_an_old_section_holding_none_of_the_query_words_folds_into_the_current_page(tmp_path: Path) -> None:
    """Envoy Gateway's v1.1 circuit breaker page says "Follow the installation step..." under Prerequisites > Install
    the gateway, where its v1.9 page includes a boilerplate file: the v1.1 section, matched by the heading trail both
    share, was a hit of its own beside the current page's. A section only the old page says (the removed option) is
    still shown, marked."""
    sections = (
        "## Thresholds\n\nSet the circuit breaker thresholds: max connections, pending requests and retries.",
        "## Test the settings\n\nSend a burst of requests with hey and watch the circuit breaker trip at the limit.",
    )
    current = page("Circuit breakers", "## Prerequisites\n\n### Install the gateway\n\n{{< boilerplate prereqs >}}",
                   *sections)  # fmt: skip
    old = page(
        "Circuit breakers",
        "## Prerequisites\n\n### Install the gateway\n\nFollow the installation step from the quickstart first.",
        *sections,
        "## Outlier ejection\n\nThe circuit breaker's outlier ejection, removed since, ejected failing hosts.",
    )
    files = {"config.yaml": "params:\n  latest_stable_version: v1.9\n"}
    for version, text in (("v1.9", current), ("v1.1", old)):
        files.update({f"content/en/docs/{version}/tasks/{name}": text for name, text in GUIDES.items()})
        files[f"content/en/docs/{version}/tasks/circuit-breaker.md"] = text
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in MODES:
        hits = search(engine, "configure the circuit breakers", mode, k=10)
        shown = [(h.path, h.heading.rsplit(" > ", 1)[-1]) for h in hits if h.path.endswith("circuit-breaker.md")]
        assert ("content/en/docs/v1.9/tasks/circuit-breaker.md", "Install the gateway") in shown, (mode, shown)
        assert ("content/en/docs/v1.1/tasks/circuit-breaker.md", "Install the gateway") not in shown, (mode, shown)
        ejection = [h for h in search(engine, "outlier ejection of failing hosts", mode, k=10) if "ejected" in h.text]
        assert [(h.path, h.version) for h in ejection] == [
            ("content/en/docs/v1.1/tasks/circuit-breaker.md", "v1.1 (old)")
        ]


def test_a_docs_v2_that_is_current_and_an_unrelated_old_folder_are_not_demoted(tmp_path: Path) -> None:
    files = {f"docs/{name}": text for name, text in GUIDES.items()}
    files["docs/v2/users.md"] = page("Users API", "List the users of an account with a GET on the users endpoint.")
    files["docs/v2/orders.md"] = page("Orders API", "Create an order with a POST carrying the items and the address.")
    files["old/meeting.md"] = page("Meeting notes", "We agreed to move the billing service to the new data centre.")
    files["old/roadmap.md"] = page("Roadmap", "Ship the mobile app before the summer, then the desktop one.")
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in MODES:
        users = search(engine, "list the users of an account", mode)[0]
        assert (users.path, users.version) == ("docs/v2/users.md", None), mode
        billing = search(engine, "move the billing service to the new data centre", mode)[0]
        assert (billing.path, billing.version) == ("old/meeting.md", None), mode


def test_one_shared_i18n_page_leaves_the_untagged_tree_the_main_language(tmp_path: Path) -> None:
    """A site sharing one page between docs/ and i18n/de/: English queries get the docs/ page, not the German."""
    intro = page("Introduction", "Quokka is a small command line tool that renames photos by the date taken.")
    german = page("Einführung", "Quokka is a small command line tool that renames photos by the date taken.")
    files = {"docs/intro.md": intro, **{f"docs/{name}": text for name, text in GUIDES.items()}}
    files[f"i18n/de/{PLUGIN}/current/intro.md"] = german
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):  # the hashed test embedder knows no meaning: semantic order is arbitrary
        hits = search(engine, "how does the tool rename photos by the date taken", mode)
        assert hits[0].path == "docs/intro.md", (mode, [h.path for h in hits])


KOREAN_CONFIG = page(
    "구성", "## coverageThreshold\n\n폴더의 커버리지가 주어진 비율 아래로 떨어지면 실행을 실패시킵니다."
)


@pytest.mark.parametrize("mode", ("hybrid", "keyword"))
def test_a_translation_of_the_current_version_is_current_whatever_its_folder(tmp_path: Path, mode: str) -> None:
    """Docusaurus translates each version in i18n/<lang>/<plugin>/<version folder>/: where the current version is
    version-30.4 (docs/ the unreleased next), its translation is current and current/'s is unreleased, as their
    English trees are; each translation folds into the English current page as the English copies do."""
    folder = jest_like(tmp_path / "site")
    for version in ("current", "version-30.4", "version-29.7"):
        write_file(folder, f"website/i18n/ko/{PLUGIN}/{version}/Configuration.md", KOREAN_CONFIG)
    engine = engine_for(folder, tmp_path / "index.db")
    korean = search(engine, "폴더의 커버리지가 비율 아래로 떨어지면 실패", mode)
    assert (korean[0].path, korean[0].version) == (f"website/i18n/ko/{PLUGIN}/version-30.4/Configuration.md", None)
    assert not [hit.path for hit in korean[1:] if "/ko/" in hit.path], "the other Korean copies fold into it"
    trees = engine._language_trees()
    assert trees.copy(f"website/i18n/ko/{PLUGIN}/current/Configuration.md").version_note == "docs (unreleased)"
    assert trees.copy(f"website/i18n/ko/{PLUGIN}/version-29.7/Configuration.md").version_note == "version-29.7 (old)"
    english = search(engine, "fail the run when coverage of a folder drops below a percentage", mode)[0]
    assert (english.path, english.version) == ("website/versioned_docs/version-30.4/Configuration.md", None)
    # a Korean question naming 29.7 asks for that version's Korean page, as an English one gets its English page
    asked = search(engine, "29.7 버전: 폴더의 커버리지가 비율 아래로 떨어지면 실패", mode)[0]
    assert (asked.path, asked.version) == (
        f"website/i18n/ko/{PLUGIN}/version-29.7/Configuration.md",
        "version-29.7 (old)",
    )


def test_a_blogs_year_folders_are_no_versions(tmp_path: Path) -> None:
    """OpenTelemetry's blog keeps posts in year folders, and yearly posts share slugs (kubecon-eu.md in 2024/ and
    2025/): a posts folder is never a version tree, so last year's posts are not marked old versions of this year's."""
    files = {f"docs/{name}": text for name, text in GUIDES.items()}
    for year in ("2023", "2024", "2025"):
        for slug in ("kubecon-eu", "community-survey", "release-notes", "year-in-review"):
            files[f"blog/{year}/{slug}.md"] = page(f"{slug} {year}", f"What happened at {slug} in {year}.")
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    assert engine._language_trees().versions.families == ()
    hits = search(engine, "what happened at kubecon-eu in 2024", "keyword")
    assert (hits[0].path, hits[0].version) == ("blog/2024/kubecon-eu.md", None)


def test_the_setting_names_another_current_tree(tmp_path: Path) -> None:
    engine = engine_for(jest_like(tmp_path / "site"), tmp_path / "index.db", current_version="docs")
    hits = search(engine, "fail the run when coverage of a folder drops below a percentage", "keyword")
    assert (hits[0].path, hits[0].version) == ("docs/Configuration.md", None)


def test_doctor_lists_the_version_trees_and_how_to_change_them(tmp_path: Path) -> None:
    folder = jest_like(tmp_path / "site")
    write_file(folder, f"i18n/de/{PLUGIN}/current/Configuration.md", CONFIG_PAGE)
    env, doctor = indexed_doctor(tmp_path, folder)
    lines = [line for line in doctor.stdout.splitlines() if "version trees" in line or "translations" in line]
    assert lines[0] == (
        "ok    version trees: current website/versioned_docs/version-30.4/ (5 pages; website/versions.json names "
        "30.4 current); other versions: docs/ (unreleased, 6 pages), website/versioned_docs/version-29.7/ (old, "
        "5 pages)"
    ), doctor.stdout
    assert "SCREE_CURRENT_VERSION" in lines[1] and ".screeignore" in lines[1]
    assert lines[2].startswith("ok    translations: main language untagged (the original)"), lines

    overridden = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_CURRENT_VERSION="docs")
    doctor = run_scree("doctor", "--notes", str(folder), env=overridden)
    assert "ok    version trees: current docs/ (6 pages; named by SCREE_CURRENT_VERSION)" in doctor.stdout
    hit = search_json(folder, "coverage threshold percentage", overridden, "--mode", "keyword", run=main_here)["hits"][
        0
    ]
    assert (hit["path"], hit["version"]) == ("docs/Configuration.md", None)
    hits = search_json(folder, "jasmine browser runner", env, "--mode", "keyword", "-k", "20", run=main_here)["hits"]
    old = next(hit for hit in hits if "jasmine" in hit["text"])
    assert (old["path"], old["version"]) == ("website/versioned_docs/version-29.7/CLI.md", "version-29.7 (old)")

    write_file(folder, ".screeignore", "docs/\nwebsite/versioned_docs/version-29.7/\n")
    reindex_here(env, folder)
    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    assert "ok    version trees: none found" in doctor.stdout, doctor.stdout


def test_upgrade_notes_for_an_older_release_give_way_unless_the_query_names_it(tmp_path: Path) -> None:
    """Versions rule 6, etcd's layout: v3.7/upgrades/upgrade_3_2.md (current tree, about the 3.2 release) said more
    about the request size limit than the page that documents it, and came first."""
    limit = page("System limits", "## Request size limit\n\nThe server accepts requests up to 1.5 MiB by default.")
    notes = page(
        "Upgrade etcd from 3.1 to 3.2",
        "## Changed request size limit\n\nThe request size limit is 1.5 MiB; raise the request size limit with "
        "--max-request-bytes when a request is too large.",
    )
    files = {"config.yaml": "params:\n  latest_stable_version: v3.7\n"}
    for version in ("v3.7", "v3.6"):
        files.update({f"content/en/docs/{version}/op-guide/{name}": text for name, text in GUIDES.items()})
        files[f"content/en/docs/{version}/dev-guide/limit.md"] = limit
        files[f"content/en/docs/{version}/upgrades/upgrade_3_2.md"] = notes
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    current = "content/en/docs/v3.7/"
    for mode in ("hybrid", "keyword"):  # the hashed test embedder knows no meaning: semantic order is arbitrary
        hits = search(engine, "request size limit is too large, how do I raise the request size limit", mode)
        assert hits[0].path == current + "dev-guide/limit.md", (mode, [h.path for h in hits])
        named = search(engine, "request size limit changed in 3.2, how do I raise it", mode)
        assert named[0].path == current + "upgrades/upgrade_3_2.md", (mode, [h.path for h in named])
        assert named[0].version == "3.2 (old)" and 'version="3.2 (old)"' in render_hit(1, named[0])
        assert named[0].path not in {entry.rsplit(":", 1)[0] for entry in named[0].also}, named[0].also


def test_a_query_naming_two_versions_gets_the_page_named_for_both_first(tmp_path: Path) -> None:
    """cert-manager's releases/upgrading/ keeps one page per step, upgrading-1.18-1.19.md beside 1.19-1.20 and
    1.20-1.21: "...upgrading cert-manager from 1.19 to 1.20?" got 1.18-1.19 first, whose opening says the question's
    words ("Before upgrading cert-manager from 1.18 to 1.19, read..."); the page named for both versions comes first."""
    upgrading = "docs/releases/upgrading"
    folder = tree(
        tmp_path / "site",
        {
            f"{upgrading}/upgrading-1.18-1.19.md": page(
                "Upgrading from v1.18 to v1.19",
                "Before upgrading cert-manager from 1.18 to 1.19, check these notes about breaking changes first.",
                "## Use the latest patch\n\nWhen upgrading to 1.19, install its latest patch release.",
            ),
            f"{upgrading}/upgrading-1.19-1.20.md": page(
                "Upgrading from v1.19 to v1.20",
                "## Edit role restricted\n\nThe edit role no longer grants create on challenges and orders.",
                "## Next steps\n\nFollow the regular upgrade process.",
            ),
            f"{upgrading}/upgrading-1.20-1.21.md": page(
                "Upgrading from v1.20 to v1.21", "## Webhook port\n\nThe webhook listens on port 10250 now."
            ),
            "docs/installation/upgrade.md": page("Upgrading", "Upgrade with Helm or with the static manifests."),
            **{f"docs/{name}": text for name, text in GUIDES.items()},
        },
    )
    engine = engine_for(folder, tmp_path / "index.db")
    hits = search(engine, "What do I need to check before upgrading cert-manager from 1.19 to 1.20?", "hybrid")
    assert hits[0].path == f"{upgrading}/upgrading-1.19-1.20.md", [hit.path for hit in hits]
    one = search(engine, "What do I need to check before upgrading cert-manager to 1.19?", "hybrid")
    assert one[0].path == f"{upgrading}/upgrading-1.18-1.19.md", [hit.path for hit in one]  # one version: as before


def test_a_query_naming_a_release_gets_the_changelog_section_headed_by_it(tmp_path: Path) -> None:
    """pytest's doc/en/changelog.rst has a section per release: "What changed in pytest 8.0?" got its 8.3.1 section
    (one line on the 8.3.0 release's change notes) first and the 8.0.0 sections out of the first hundred; a section
    headed by the release the query names comes first, its pre-release's too (ranking.RELEASE_WEIGHT)."""
    changelog = page(
        "Changelog",
        "## pytest 8.3.1 (2024-07-20)\n\nThe pytest 8.3.0 release failed to include the changes it made; this "
        "release of pytest adds the changed notes, nothing else changed in pytest.",
        "## pytest 8.3.0 (2024-07-20)\n\n### Features\n\n- The junit report names each failed test case and the "
        "file that holds it.",
        "## pytest 8.0.0 (2024-01-27)\n\n### Bug Fixes\n\n- Escape the reason of a skip mark when writing JUnit XML "
        "files.",
        "## pytest 8.0.0rc1 (2023-12-30)\n\n### Breaking Changes\n\n- Python 3.7 is no longer supported; use "
        "Python 3.8 or later.",
    )
    engine = beside_guides(tmp_path, {"CHANGELOG.md": changelog})
    hits = search(engine, "What changed in pytest 8.0?", "hybrid", k=1)
    assert hits[0].path == "CHANGELOG.md" and "8.0.0" in hits[0].heading, hits[0]
    later = search(engine, "What changed in pytest 8.3.0?", "hybrid", k=1)
    assert later[0].heading == "Changelog > pytest 8.3.0 (2024-07-20) > Features", later[0]


def test_a_section_for_an_older_release_gives_way_to_its_pages_newer_text(tmp_path: Path) -> None:
    """Contour's upgrading.md keeps a section per step since 1.0.0 under its current instructions: "How do I upgrade
    Contour?" had its "Upgrading Contour 1.0.0 to 1.0.1 > The less easy way" stand for the page; a query naming no
    release gets the page's newer text (ranking.give_way), and one naming 1.0.1 still gets that section."""
    upgrading = page(
        "Upgrading",
        "## The easy way\n\nTo upgrade Contour, apply the manifests of the new release to the cluster.",
        "## Upgrading Contour 1.24.0 to 1.25.0\n\nApply the manifests of 1.25.0.",
        "## Upgrading Contour 1.0.0 to 1.0.1\n\n### The less easy way\n\nTo upgrade Contour, edit the image of "
        "the Contour deployment.",
    )
    engine = beside_guides(tmp_path, {"docs/upgrading.md": upgrading})
    hits = search(engine, "How do I upgrade Contour?", "hybrid", k=1)
    assert hits[0].path == "docs/upgrading.md" and "1.0.0" not in hits[0].heading, hits[0].heading
    named = search(engine, "How do I upgrade Contour 1.0.1?", "hybrid", k=1)
    assert "1.0.0 to 1.0.1" in named[0].heading, named[0].heading


def test_a_series_of_release_notes_answers_from_the_docs_and_marks_each_old_release(tmp_path: Path) -> None:
    """Versions rule 8, Celery's layout: docs/history/whatsnew-5.4.rst ... whatsnew-5.6.rst beside the user guide,
    no version trees. The notes of 5.4 said more about retries than the guide that documents them and came first,
    unmarked; now the guide comes first, an old release's notes are marked, and a query naming 5.4 gets them."""
    guide = page(
        "Tasks", "## Retrying\n\nA task retries itself on failure: call retry with a countdown and max_retries."
    )
    files = {"docs/userguide/tasks.md": guide, **{f"docs/userguide/{n}": t for n, t in GUIDES.items()}}
    for version in ("5.4", "5.5", "5.6"):
        files[f"docs/history/whatsnew-{version}.md"] = page(
            f"What's new in {version}",
            f"## Retrying\n\nIn {version} a task retries on failure with retry: retry countdown, retry max_retries, "
            "retry backoff; the retry of a task on failure works as before.",
        )
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):  # the hashed test embedder knows no meaning: semantic order is arbitrary
        hits = search(engine, "how does a task retry on failure with countdown and max_retries", mode)
        assert hits[0].path == "docs/userguide/tasks.md" and hits[0].version is None, (mode, hits)
        marked = {hit.path: hit.version for hit in hits if "history" in hit.path}
        assert marked.get("docs/history/whatsnew-5.4.md", "5.4 (old)") == "5.4 (old)", marked
        assert marked.get("docs/history/whatsnew-5.6.md") is None, marked  # the newest release's notes are current
        named = search(engine, "what changed for task retry on failure in 5.4", mode)
        assert named[0].path == "docs/history/whatsnew-5.4.md" and named[0].version == "5.4 (old)", (mode, named)


def test_a_query_naming_a_major_names_the_page_of_its_dot_zero_release(tmp_path: Path) -> None:
    """Versions rule 8, the AI SDK's layout: migration-guides/migration-guide-4-0.mdx ... 6-0.mdx. "How do I migrate
    from AI SDK 4 to 5?" named 4 and 5, which named no 4.0 or 5.0 page (a lone major names no 3.x page), so the 5.0
    guide ranked as an old release's and fell out of the first five; 5 and 5.0 are one release."""
    files = {f"docs/{name}": text for name, text in GUIDES.items()}
    for major in (4, 5, 6):
        files[f"docs/migration-guides/migration-guide-{major}-0.md"] = page(
            f"Migrate AI SDK {major - 1}.x to {major}.0",
            f"## Streaming\n\nMigrate the streaming helpers: in {major}.0 streamText replaces the {major - 1}.x stream "
            "functions, and the data stream protocol moves to server-sent events.",
        )
    files["docs/streaming.md"] = page("Streaming", "Migrate nothing: streamText streams text as the model writes it.")
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        hits = search(engine, "how do I migrate the streaming helpers from AI SDK 4 to 5", mode)
        assert (hits[0].path, hits[0].version) == ("docs/migration-guides/migration-guide-5-0.md", "5.0 (old)"), (
            mode,
            [(hit.path, hit.version) for hit in hits],
        )


def test_a_specification_kept_one_page_per_release_answers_from_the_newest(tmp_path: Path) -> None:
    """Versions rule 7, OAI/OpenAPI-Specification's layout: versions/3.0.4.md, 3.1.1.md, 3.2.0.md hold the same
    specification release by release, so an identical section was shown from whichever copy came first; the newest
    release now stands for the others (in also=), a field only an old release had is still found (after the
    current release's pages), and a query naming an old release gets it."""
    sections = {
        "info": "## Info Object\n\nThe info object provides metadata about the API: its title, summary and version.",
        "paths": "## Paths Object\n\nThe paths object holds the relative paths to the individual endpoints.",
        "servers": "## Server Object\n\nA server object names a host that serves the API, by its url.",
        "tags": "## Tag Object\n\nA tag object adds metadata to a single tag used by the operation object.",
    }
    files = {
        "versions/3.2.0.md": page("OpenAPI 3.2.0", *sections.values()),
        "versions/3.1.1.md": page("OpenAPI 3.1.1", *sections.values()),
        "versions/3.0.4.md": page(
            "OpenAPI 3.0.4",
            *sections.values(),
            "## Nullable\n\nThe nullable keyword marks a schema whose value may be null, removed in later releases.",
        ),
    }
    engine = engine_for(tree(tmp_path / "spec", files), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):  # the hashed test embedder knows no meaning: semantic order is arbitrary
        hits = search(engine, "which object names a host that serves the API by its url", mode)
        assert hits[0].path == "versions/3.2.0.md" and hits[0].version is None, (mode, hits[0])
        assert {entry.rsplit(":", 1)[0] for entry in hits[0].also} == {"versions/3.1.1.md", "versions/3.0.4.md"}
        removed = search(engine, "nullable keyword marks a schema whose value may be null", mode)
        assert "versions/3.0.4.md" in [hit.path for hit in removed], (mode, [h.path for h in removed])
    named = search(engine, "in OpenAPI 3.1.1, what does the tag object hold", "keyword")
    assert named[0].path == "versions/3.1.1.md", [h.path for h in named]


def test_an_antora_pre_release_is_never_current_by_its_number(tmp_path: Path) -> None:
    """kubewarden/docs: Antora component versions in docs/admission-controller/version-1.3x/, each with its
    antora.yml (three folders deep, below where site configs are looked for); 1.38's says `prerelease: -dev`, so
    1.37 is the latest, not the highest number."""
    root = "docs/admission-controller"
    files = {}
    for version in ("1.38", "1.37", "1.36"):
        files[f"{root}/version-{version}/antora.yml"] = f'name: admission-controller\nversion: "{version}"\n'
        pages = f"{root}/version-{version}/modules/en/pages"
        files.update({f"{pages}/{name[:-3]}.adoc": f"= {name}\n\n{text}" for name, text in GUIDES.items()})
    files[f"{root}/version-1.38/antora.yml"] += "prerelease: -dev\n"
    folder = tree(tmp_path / "site", files)
    env, doctor = indexed_doctor(tmp_path, folder)
    assert (
        f"version trees: current {root}/version-1.37/ (3 pages; the highest version number that is no pre-release); "
        f"other versions: {root}/version-1.38/ (unreleased, 3 pages), {root}/version-1.36/ (old, 3 pages)"
    ) in doctor.stdout, doctor.stdout


def test_a_hugo_config_directory_names_the_current_version(tmp_path: Path) -> None:
    """ArangoDB's docs-hugo: the Hugo site in site/, its config in site/config/_default/ (a folder with no pages),
    whose module mounts serve content/arangodb/3.12 as .../stable; 4.x is in development."""
    files = {
        "site/config/_default/config.yaml": (
            "module:\n  mounts:\n    - source: content/arangodb/3.12\n      target: content/arangodb/stable\n"
        )
    }
    for version in ("4.x", "3.12", "3.11"):
        files.update({f"site/content/arangodb/{version}/{name}": text for name, text in GUIDES.items()})
    folder = tree(tmp_path / "site", files)
    env, doctor = indexed_doctor(tmp_path, folder)
    root = "site/content/arangodb"
    assert (
        f"version trees: current {root}/3.12/ (3 pages; site/config/_default/config.yaml (module.mounts: "
        f"content/arangodb/3.12 as content/arangodb/stable) names 3.12 current); other versions: {root}/4.x/ "
        f"(unreleased, 3 pages), {root}/3.11/ (old, 3 pages)"
    ) in doctor.stdout, doctor.stdout
    hits = search_json(folder, "replace setTimeout with fake timers", env, "--mode", "keyword", run=main_here)["hits"]
    assert hits[0]["path"] == f"{root}/3.12/timers.md", hits


def test_a_jekyll_config_names_the_current_version(tmp_path: Path) -> None:
    """CockroachDB's docs: a Jekyll site in src/current/ with v26.3 (in testing), v26.2, v26.1, built with
    _config_base.yml and _config_cockroachdb.yml, which says `versions: {stable: v26.2}`: v26.2 is current, not the
    highest number."""
    files = {
        "src/current/_config_base.yml": "markdown: kramdown\n",
        "src/current/_config_cockroachdb.yml": "baseurl: /docs\nversions:\n  stable: v26.2\n  dev: v26.2\n",
    }
    for version in ("v26.3", "v26.2", "v26.1"):
        files.update({f"src/current/{version}/{name}": text for name, text in GUIDES.items()})
    folder = tree(tmp_path / "site", files)
    env, doctor = indexed_doctor(tmp_path, folder)
    assert (
        "version trees: current src/current/v26.2/ (3 pages; src/current/_config_cockroachdb.yml (versions.stable) "
        "names v26.2 current); other versions: src/current/v26.3/ (unreleased, 3 pages), src/current/v26.1/ (old, "
        "3 pages)"
    ) in doctor.stdout, doctor.stdout


def test_each_docs_plugin_instance_has_its_own_current_version(tmp_path: Path) -> None:
    """loft-sh/vcluster-docs: two Docusaurus docs plugin instances, each with `<id>_versions.json` and
    `<id>_versioned_docs/`; docusaurus.config.js sets lastVersion "current" for the preset's docs, "0.36.0" for
    `id: "vcluster"` (0.37.0 is unreleased) and none for `id: "platform"` (the first of its versions file). The
    preset's "current" was taken for every instance: vcluster/ and platform/, the unreleased main, were current.
    The preset labels its docs "v0.32" (`versions.current.label`): that says nothing of vcluster/ ("main 🚧")."""
    config = """module.exports = {
  presets: [["classic", { docs: { path: "docs", lastVersion: "current",
    versions: { current: { label: "v0.32", banner: "none" } } } }]],
  plugins: [
    ["@docusaurus/plugin-content-docs", { id: "vcluster", path: "vcluster", lastVersion: "0.36.0",
      onlyIncludeVersions: ["current", "0.37.0", "0.36.0", "0.35.0"],
      versions: { current: { label: "main 🚧" }, "0.36.0": { label: "v0.36 Stable" } } }],
    ["@docusaurus/plugin-content-docs", { id: "platform", path: "platform" }],
  ],
};
"""
    files = {
        "docusaurus.config.js": config,
        "vcluster_versions.json": '["0.37.0", "0.36.0", "0.35.0"]\n',
        "platform_versions.json": '["4.12.0", "4.11.0"]\n',
        "docs/intro.md": page("Welcome", "Start with vcluster or the platform."),
    }
    for root in ("vcluster", *(f"vcluster_versioned_docs/version-{v}" for v in ("0.37.0", "0.36.0", "0.35.0"))):
        files.update({f"{root}/{name}": text for name, text in GUIDES.items()})
    for root in ("platform", *(f"platform_versioned_docs/version-{v}" for v in ("4.12.0", "4.11.0"))):
        files.update({f"{root}/admin/{name}": text for name, text in GUIDES.items()})
    folder = tree(tmp_path / "site", files)
    env, doctor = indexed_doctor(tmp_path, folder)
    found = sorted(line for line in doctor.stdout.splitlines() if line.startswith("ok    version trees: current"))
    assert len(found) == 2, doctor.stdout
    assert found[0].startswith(
        "ok    version trees: current platform_versioned_docs/version-4.12.0/ (3 pages; platform_versions.json "
        "names 4.12.0 current); other versions: platform/ (unreleased, 3 pages)"
    ), found[0]
    assert found[1].startswith(
        "ok    version trees: current vcluster_versioned_docs/version-0.36.0/ (3 pages; docusaurus.config.js "
        "(lastVersion) names 0.36.0 current); other versions: vcluster/ (unreleased, 3 pages), "
        "vcluster_versioned_docs/version-0.37.0/ (unreleased, 3 pages), vcluster_versioned_docs/version-0.35.0/ "
        "(old, 3 pages)"
    ), found[1]


def test_the_setting_names_the_current_tree_of_each_family(tmp_path: Path) -> None:
    """Crossplane's layout, two families (content/vX/ and content/cli/vX/): SCREE_CURRENT_VERSION takes one folder or
    version per family, comma-separated; `scree doctor` warns of an entry that names no tree."""
    files = {}
    for version in ("v2.3", "v2.2"):
        files.update({f"content/{version}/{name}": text for name, text in GUIDES.items()})
        files.update({f"content/cli/{version}/cli-{name}": text for name, text in GUIDES.items()})
    folder = tree(tmp_path / "site", files)
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_CURRENT_VERSION="content/v2.2, v2.3 ,v9")
    reindex_here(env, folder)
    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    found = sorted(line for line in doctor.stdout.splitlines() if line.startswith("ok    version trees: current"))
    assert [line.split(" (")[0] for line in found] == [
        "ok    version trees: current content/cli/v2.3/",
        "ok    version trees: current content/v2.2/",
    ], doctor.stdout
    assert all("named by SCREE_CURRENT_VERSION" in line for line in found)
    assert "warn  version trees: SCREE_CURRENT_VERSION names v9, which is no version tree found" in doctor.stdout


def test_a_step_between_releases_is_answered_by_the_page_of_the_newest(tmp_path: Path) -> None:
    """Socket.IO keeps docs/categories/07-Migrations/migrating-from-2-to-3.md and -3-to-4.md; rule 8 takes all but
    the newest for old releases' pages, ranked after current pages unless the query names their release. "How do I
    migrate from 3.x to 4.0?" named the 2-to-3 guide by its 3, and it came first; a step's question names its newest
    release."""
    files = {
        f"docs/migrations/migrating-from-{a}-to-{b}.md": page(f"Migrating from {a}.x to {b}.0", text)
        for a, b, text in (
            (1, 2, "The 2.0 release dropped the legacy transports; update the server first."),
            (2, 3, "How do I migrate from 2.x to 3.x: migrate the server, then migrate the client, as 4.0 will too."),
            (3, 4, "The wsEngine option now takes a class, and the 4.0 server drops the legacy handshake."),
        )
    }
    files.update({f"docs/{name}": text for name, text in GUIDES.items()})
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    assert engine._language_trees().versions.superseded["docs/migrations/migrating-from-2-to-3.md"] == "3"
    for mode in MODES:
        hits = search(engine, "How do I migrate from 3.x to 4.0?", mode)
        assert hits[0].path == "docs/migrations/migrating-from-3-to-4.md", (mode, [hit.path for hit in hits])
        older = search(engine, "How do I migrate from 2.x to 3.0?", mode)
        assert older[0].path == "docs/migrations/migrating-from-2-to-3.md", (mode, [hit.path for hit in older])
