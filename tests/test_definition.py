"""A question asking what something is shows the opening of the page titled for it (scree.search.definition)."""

from __future__ import annotations

from pathlib import Path

import pytest
from backends import Backend

from scree.search.definition import (
    asked_subject,
    in_order,
    kind_words,
    names_subject,
    page_topic,
    said_as_phrase,
)
from scree.search.hits import Hit
from scree.search.ranking import stand_ins

CLONESET = (
    "# CloneSet\n\n"
    "The CloneSet controller manages stateless applications: it keeps a set of identical pods running and\n"
    "updates them in place.\n\n"
    "## Update features\n\n"
    "### Scaling\n\n"
    "Scale out and scale in the replicas of a workload with partitions.\n\n"
    "### Operations on Failed CloneSet\n\n"
    "A failed CloneSet stays failed: fix the CloneSet template, then the CloneSet rolls the CloneSet pods again.\n"
)
WIDGET = (
    "# Widget\n\n"
    "Install the widget package with the package manager before anything else.\n\n"
    "## What is a Widget?\n\n"
    "A widget is a small reusable control that draws itself and answers to input events.\n\n"
    "## Widget options\n\n"
    "Each widget takes widget options: a widget name, a widget size and a widget colour.\n"
)
OTHER = "# Kubectl plugin\n\nThe migrate command moves a Deployment to a CloneSet, keeping its pods.\n"


@pytest.mark.parametrize(
    ("query", "subject"),
    [
        ("What is a CloneSet?", "a CloneSet"),
        ("what's JetStream", "JetStream"),
        ("What are policy exceptions?", "policy exceptions"),
        ("What does RBAC stand for?", "RBAC"),
        ("define idempotency", "idempotency"),
        ("How do I scale a CloneSet?", None),
        ("CloneSet", None),
    ],
)
def test_a_question_asking_what_something_is_names_its_subject(query: str, subject: str | None) -> None:
    assert asked_subject(query) == subject


def test_a_title_names_the_subject_when_one_holds_the_other_and_at_most_one_word_more() -> None:
    assert names_subject({"cloneset"}, {"cloneset"})
    assert names_subject({"propagationpolici"}, {"propagationpolici", "v1alpha1"})  # "PropagationPolicy v1alpha1"
    assert names_subject({"cloneset", "openkruis"}, {"cloneset"})  # "What is a CloneSet in OpenKruise?"
    assert not names_subject({"app", "pattern"}, {"app", "delet"})  # "App of Apps pattern" is not "App Deletion"
    assert not names_subject({"differ", "cloneset", "deploy"}, {"cloneset"})  # a difference, not a definition
    assert not names_subject({"cloneset"}, {"cloneset", "lifecycl", "insert"})
    assert not names_subject(set(), {"cloneset"})
    assert page_topic("Eloquent: Getting Started").strip(" :") == "Eloquent" and page_topic("Introduction") == ""
    assert page_topic("Start a cluster") == "Start a cluster" and page_topic("Overviewing") == "Overviewing"
    assert page_topic("noUnusedVariables (JavaScript)") == "noUnusedVariables"


def test_an_opening_stands_just_before_the_chunk_it_stands_for_and_not_again() -> None:
    ranked = [(7, 3.0), (2, 2.0), (5, 1.0), (4, 0.5)]
    assert stand_ins(ranked, {7: 4}) == [(4, 3.0), (7, 3.0), (2, 2.0), (5, 1.0)]
    assert stand_ins(ranked, {}) == ranked


def docs_site(tmp_path: Path, pages: dict[str, str]) -> Path:
    """A folder `site` holding `pages` (relative path -> text)."""
    folder = tmp_path / "site"
    for name, text in pages.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return docs_site(
        tmp_path, {"docs/cloneset.md": CLONESET, "docs/widget.md": WIDGET, "docs/kubectl-plugin.md": OTHER}
    )


def test_what_is_x_shows_the_opening_of_the_page_titled_x(site: Path, index_backend: Backend) -> None:
    """OpenKruise: "What is a CloneSet?" found the CloneSet page by its "Operations on Failed CloneSet" section, the
    chunk naming CloneSet most; the page's opening says what a CloneSet is."""
    with index_backend.engine(site) as engine:
        for mode in ("keyword", "hybrid", "semantic"):
            hits = engine.search("What is a CloneSet?", k=3, mode=mode).hits
            page = [hit for hit in hits if hit.path == "docs/cloneset.md"]
            assert page, (mode, [(hit.path, hit.heading) for hit in hits])
            assert mode == "semantic" or page[0] == hits[0], (mode, [(hit.path, hit.heading) for hit in hits])
            assert (page[0].heading, page[0].start) == ("CloneSet", 1), (mode, page[0].heading)
            assert "stateless applications" in page[0].text
        hits = engine.search("How does a failed CloneSet recover?", k=1, mode="keyword").hits
        assert hits[0].heading.endswith("Operations on Failed CloneSet"), hits[0].heading  # no definition asked


def test_a_section_headed_by_the_subject_comes_before_the_opening(site: Path, index_backend: Backend) -> None:
    """The page titled "Widget", found for "What is a widget?" by its "Widget options" (the most widgets), shows its
    "What is a Widget?" section, not its opening, which is about installing."""
    with index_backend.engine(site) as engine:
        hits = engine.search("What is a widget?", k=1, mode="keyword").hits
        assert (hits[0].path, hits[0].heading) == ("docs/widget.md", "Widget > What is a Widget?")


def test_the_page_titled_by_the_subject_alone_comes_first(tmp_path: Path, index_backend: Backend) -> None:
    """webpack: "What is a loader?" had the API page "Loader Interface" first by its `this.loaders` section and the
    concept page "Loaders" third; a page titled by the subject's words alone comes first among the first pages."""
    pages = {
        "api/loaders.md": "# Loader Interface\n\n## this.loaders\n\nAn array of all the loaders: each loader of the"
        " loaders, the loader's options, the loader's request. Loaders loaders loaders.\n",
        "concepts/loaders.md": "# Loaders\n\nLoaders are transformations applied to the source code of a module.\n",
        "guides/setup.md": "# Setup\n\nInstall the bundler, then write a config file with a loader or two.\n",
    }
    folder = docs_site(tmp_path, pages)
    with index_backend.engine(folder) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search("What is a loader?", k=3, mode=mode).hits
            assert hits[0].path == "concepts/loaders.md", (mode, [hit.path for hit in hits])
            assert hits[0].score >= hits[1].score
        assert engine.search("this.loaders array", k=1, mode="keyword").hits[0].path == "api/loaders.md"


ELOQUENT = (  # Laravel's shape: a title saying what kind of page it is, the page's sections' links, an anchor a heading
    "# Eloquent: Getting Started\n\n- [Introduction](#introduction)\n- [Scopes](#scopes)\n"
    '    - [Global Scopes](#global-scopes)\n\n<a name="introduction"></a>\n## Introduction\n\n'
    "Laravel includes an object-relational mapper that maps each table to a model class.\n\n"
    '<a name="scopes"></a>\n## Scopes\n\n<a name="global-scopes"></a>\n### Global Scopes\n\n'
    "Eloquent global scopes add constraints to every Eloquent query of an Eloquent model: Eloquent, Eloquent.\n"
)


def test_a_title_saying_what_kind_of_page_it_is_still_names_its_subject(tmp_path: Path, index_backend: Backend) -> None:
    """Laravel: "What is Eloquent?" showed the page "Eloquent: Getting Started" by its "Anonymous Global Scopes", and
    its first chunk, the list of the page's sections ending with the next heading's anchor, read as substance. Words
    saying what kind of page a title is (getting started, overview, introduction, basics) name no subject, and such
    a list is thin: the opening is the introduction."""
    pages = {"eloquent.md": ELOQUENT, "queues.md": "# Queues\n\nPush a job on a queue; a worker runs it later.\n"}
    with index_backend.engine(docs_site(tmp_path, pages)) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search("What is Eloquent?", k=2, mode=mode).hits
            assert hits[0].heading == "Eloquent: Getting Started > Introduction", (mode, hits[0].heading)


def test_a_title_s_qualifier_in_brackets_still_names_its_subject(tmp_path: Path, index_backend: Backend) -> None:
    """Biome: "What is the noUnusedVariables rule?" showed the page "noUnusedVariables (JavaScript)" by its example of
    invalid code, which says the rule's name most; the language in brackets is no part of the subject."""
    rule = (
        "---\ntitle: noExplicitAny (JavaScript)\n---\n\n## Summary\n\n- Available since v1.0.0; recommended, so on by\n"
        "default.\n\n## Description\n\nDisallow the any type: it is an escape hatch from the type system.\n\n"
        "## Examples\n\n### Invalid\n\n```ts\n// the noExplicitAny rule reports this: noExplicitAny rule, any rule\n"
        "let value: any = 1;\n```\n"
    )
    pages = {"rules/no-explicit-any/javascript.md": rule, "rules.md": "# Rules\n\nEach rule has a page of its own.\n"}
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, "What is the noExplicitAny rule?").items():
        assert hit.heading == "noExplicitAny (JavaScript) > Summary", (mode, hit.heading)


def test_a_section_headed_by_the_subject_alone_comes_first(tmp_path: Path, index_backend: Backend) -> None:
    """uv: "What is the lockfile?" had "Exporting a lockfile" first (its title names the lockfile and one word more)
    and the section that says what it is, "Project structure and files > The lockfile", third. Among the first
    pages' candidates, a section headed by the subject alone comes first (after pages titled by it alone)."""
    pages = {
        "layout.md": "# Project structure and files\n\n## The pyproject file\n\nThe metadata and settings.\n\n"
        "## The lockfile\n\nuv.lock records the exact resolved versions of every package, for the same installs.\n",
        "export.md": "# Exporting a lockfile\n\nExport the lockfile: the lockfile as a requirements file. Lockfile "
        "export keeps the lockfile hashes; each lockfile entry.\n\n## Lockfile options\n\nThe lockfile format.\n",
    }
    with index_backend.engine(docs_site(tmp_path, pages)) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search("What is the lockfile?", k=2, mode=mode).hits
            assert hits[0].heading == "Project structure and files > The lockfile", (mode, hits[0].heading)
            assert hits[1].path == "export.md", (mode, hits[1].path)


MIGRATIONS = (  # Laravel's shape: a "Category: Topic" title, sections headed by the task
    "# Database: Migrations\n\n## Migration Structure\n\nA migration class has an up and a down method.\n\n"
    "### Setting the Migration Connection\n\nA migration that runs on a database connection other than the default"
    " database sets the connection property: run migrations on that database, the database the migrations run"
    " on.\n\n"
    "## Running Migrations\n\nTo run all of your outstanding migrations, execute the migrate Artisan command. It"
    " prints each file it applies, in order, with the time each took; add --pretend to see the SQL statements first,"
    " --step to apply each file as a batch of its own, --force in production, --seed to seed the tables afterwards,"
    " --isolated to hold a lock while it works, and --graceful to carry on past errors.\n"
)


def test_a_section_whose_trail_names_the_whole_question_shows_its_page(tmp_path: Path, index_backend: Backend) -> None:
    """Laravel: "How do I run database migrations?" showed the migrations page by "Setting the Migration Connection"
    (the most migrations and databases), not "Running Migrations": among a first page's candidates, a section whose
    trail holds all the question's words and whose own heading says nothing else stands for the page."""
    pages = {"migrations.md": MIGRATIONS, "seeding.md": "# Database: Seeding\n\nRun the seeders after migrations.\n"}
    with index_backend.engine(docs_site(tmp_path, pages)) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search("How do I run database migrations?", k=2, mode=mode).hits
            assert hits[0].heading == "Database: Migrations > Running Migrations", (mode, hits[0].heading)
            hits = engine.search("How do I set the migration connection?", k=1, mode=mode).hits
            assert hits[0].heading.endswith("Setting the Migration Connection"), (mode, hits[0].heading)


QUESTIONS = (
    "# FAQ\n\nHere are some frequently asked questions. Hope you find your answer here.\n\n"
    "## What is Quillstack?\n\nA toolkit that typesets long documents from plain text files on any machine.\n\n"
    "## Who maintains Quillstack?\n\nA small group of volunteers reviews every change before a release.\n\n"
    "## Why would I want to use Quillstack?\n\nIt builds a book in seconds and keeps the sources readable.\n\n"
    "## What is Quillstack Cloud?\n\nThe hosted service: it builds the documents on its servers for a fee.\n\n"
    "## Where is the documentation?\n\nIn the docs folder beside this page, one page for each command.\n"
)
GUIDE = (
    "# Running in production\n\n## Quillstack servers\n\nRun Quillstack behind a proxy: Quillstack workers, Quillstack"
    " queues and the Quillstack cache each take a Quillstack config file of their own.\n"
)


@pytest.fixture
def faq_site(tmp_path: Path) -> Path:
    return docs_site(tmp_path, {"docs/faq.md": QUESTIONS, "docs/production.md": GUIDE, "docs/widget.md": WIDGET})


@pytest.mark.parametrize(
    ("query", "heading"),
    [
        ("What is Quillstack?", "FAQ > What is Quillstack?"),
        ("what's quillstack", "FAQ > What is Quillstack?"),
        ("Who maintains Quillstack?", "FAQ > Who maintains Quillstack?"),
        ("What is Quillstack Cloud?", "FAQ > What is Quillstack Cloud?"),
    ],
)
def test_a_section_whose_heading_asks_the_query_comes_first(
    faq_site: Path, index_backend: Backend, query: str, heading: str
) -> None:
    """gRPC's docs: "What is gRPC?" showed the docs' landing page, then the FAQ by its opening line ("Here are some
    frequently asked questions"), its "What is gRPC?" entry nowhere: the page's other chunks and a FAQ's place after
    the docs pages kept it off the first hits. Vue's: "Introduction > What is Vue?" sixth. A section whose own heading
    asks what the query asks comes first, a FAQ's too."""
    with index_backend.engine(faq_site) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search(query, k=3, mode=mode).hits
            assert (hits[0].path, hits[0].heading) == ("docs/faq.md", heading), (mode, [h.heading for h in hits])


def test_a_question_heading_asking_something_else_is_not_moved(faq_site: Path, index_backend: Backend) -> None:
    """Quillstack Cloud's entry does not ask what Quillstack is, nor the widget page's "What is a Widget?" what a
    Quillstack worker is: a FAQ page still comes after the docs page the query's words found."""
    with index_backend.engine(faq_site) as engine:
        hits = engine.search("How do I configure the Quillstack workers and queues?", k=3, mode="keyword").hits
        assert hits[0].path == "docs/production.md", [(hit.path, hit.heading) for hit in hits]


CORS = (
    "# CORS\n\nCross-origin resource sharing lets a browser call the proxy from another origin: list the origins,"
    " methods and headers a virtual host allows in its corsPolicy.\n\n"
    "## Allowed methods\n\nName each HTTP method a cross-origin request may use, or a star for any.\n\n"
    "## MaxAge\n\nHow long a browser keeps the answer: configure CORS maxAge to configure CORS caching, as CORS"
    " preflight answers configure CORS for every later CORS request.\n"
)
WIDGETS = {
    "metadata.md": '---\ntitle: Metadata\n---\n{{< youtube id="psYQFbPgIOI" title="Metadata limits" >}}\n'
    "### Overview\n\nMetadata is a side channel of key-value pairs that clients and servers send with each call.\n",
    "transition.md": "<script setup>\nimport Basic from './transition-demos/Basic.vue'\n"
    "import SlideFade from './transition-demos/SlideFade.vue'\n</script>\n\n# Transition\n\n"
    "The Transition component animates an element or a component as it enters and leaves the page.\n\n"
    "## Hooks\n\nTransition hooks run on enter and leave; use a transition hook to run code as it moves.\n",
}


def test_a_how_to_question_about_a_page_s_whole_topic_shows_its_opening(tmp_path: Path, index_backend: Backend) -> None:
    """Contour's `config/cors.md` answered "How do I configure CORS?" with its last lines, on MaxAge; Material for
    MkDocs' admonitions page "How do I add admonitions?" with "Nested admonitions". A how-to question naming nothing
    but a page's title (a task's verbs aside: use, add, configure, set up, enable, write) shows the page's opening; a
    question naming more keeps the section that says it."""
    pages = {"config/cors.md": CORS, "config/tls.md": "# TLS\n\nConfigure TLS for a virtual host with a secret.\n"}
    folder = docs_site(tmp_path, pages | {f"guides/{name}": text for name, text in WIDGETS.items()})
    with index_backend.engine(folder) as engine:
        for mode in ("keyword", "hybrid"):
            hits = engine.search("How do I configure CORS?", k=2, mode=mode).hits
            assert (hits[0].path, hits[0].start) == ("config/cors.md", 1), (mode, hits[0].heading)
            hits = engine.search("How do I configure CORS maxAge caching?", k=2, mode=mode).hits
            assert hits[0].heading == "CORS > MaxAge", (mode, hits[0].heading)
            # a page opening with a shortcode line or a script block opens with the section after it
            hits = engine.search("How do I use metadata?", k=1, mode=mode).hits
            assert (hits[0].path, hits[0].heading) == ("guides/metadata.md", "Metadata > Overview"), (mode, hits[0])
            hits = engine.search("How do I use transition hooks?", k=1, mode=mode).hits
            assert hits[0].heading == "Transition > Hooks", (mode, hits[0].heading)
            hits = engine.search("How do I use transitions?", k=1, mode=mode).hits
            assert (hits[0].heading, hits[0].start) == ("Transition", 6), (mode, hits[0].heading, hits[0].start)


def test_writing_is_a_task_verb_too(tmp_path: Path, index_backend: Backend) -> None:
    """ESLint: "How do I write a custom rule?" showed the page "Custom Rules" by its "Rule Unit Tests" section (the
    words write, custom and rule most often); the page's opening says what a custom rule is and how to write one."""
    rules = (
        "# Custom Rules\n\nYou can create custom rules to use with ESLint when the core rules do not cover your use"
        " case. A rule exports an object with meta and create.\n\n"
        "## Rule Unit Tests\n\nWrite unit tests for each custom rule you write: a custom rule's tests run the rule"
        " on valid and invalid code, so write custom rule tests as you write the custom rule.\n"
    )
    pages = {"extend/custom-rules.md": rules, "extend/plugins.md": "# Plugins\n\nA plugin bundles rules.\n"}
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, "How do I write a custom rule?").items():
        assert (hit.path, hit.heading) == ("extend/custom-rules.md", "Custom Rules"), (mode, hit)


def test_how_does_x_work_asks_about_the_page_titled_x(tmp_path: Path, index_backend: Backend) -> None:
    """React Router: "How does lazy route discovery work?" showed the page "Lazy Route Discovery" by its "Performance
    Benefits" section (the most of the question's words); "How does X work?" asks about X as a whole, as "How do I
    use X?" does: the page's opening."""
    discovery = (
        "# Lazy Route Discovery\n\nThe router fetches the route manifest as links render, so the first load ships"
        " only the routes the page needs.\n\n"
        "## Performance Benefits\n\nLazy route discovery works on demand: lazy discovery of each route, route"
        " discovery that works per link, so route discovery works without the whole route tree.\n"
    )
    pages = {"explanation/lazy-route-discovery.md": discovery, "api/link.md": "# Link\n\nA link to a route.\n"}
    query = "How does lazy route discovery work?"
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, query).items():
        assert (hit.path, hit.heading) == ("explanation/lazy-route-discovery.md", "Lazy Route Discovery"), (mode, hit)


def first_hits(folder: Path, index_backend: Backend, query: str) -> dict[str, Hit]:
    """The first hit for `query` over `folder` in keyword and in hybrid mode."""
    with index_backend.engine(folder) as engine:
        return {mode: engine.search(query, k=2, mode=mode).hits[0] for mode in ("keyword", "hybrid")}


def test_a_how_to_question_about_a_page_s_whole_topic_has_that_page_first(
    tmp_path: Path, index_backend: Backend
) -> None:
    """VitePress: "How do I add a search?" had the site config's "Build Hooks" section (add functionality, add search
    indexing, add a sitemap) before the page "Search"."""
    pages = {
        "reference/search.md": "# Search\n\nVitePress supports fuzzy full-text search with an in-browser index.\n",
        "reference/site-config.md": (
            "# Site Config\n\n## Build Hooks\n\nBuild hooks add functionality: add search indexing to add a search,"
            " add a sitemap, add a PWA; add search to the site with a hook that adds search.\n"
        ),
    }
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, "How do I add a search?").items():
        assert (hit.path, hit.heading) == ("reference/search.md", "Search"), (mode, hit)


def test_a_section_headed_by_what_a_how_to_question_says_comes_first(tmp_path: Path, index_backend: Backend) -> None:
    """React: "How do I update state based on the previous state?" had "Choosing the State Structure > ... >
    Improving memory usage" first, and useState's "Usage > Updating state based on the previous state", whose
    chunks are mostly code, second. Among the first pages' candidates, a section whose own heading says what the
    question says comes first."""
    pages = {
        "learn/state-structure.md": (
            "# Choosing the State Structure\n\n## Improving memory usage\n\nWhen you update state, the previous state"
            " is kept: state based on the previous state, updated state and previous state both held, so update the"
            " state sparingly; each state update based on previous state allocates.\n"
        ),
        "reference/use-state.md": (
            "# useState\n\n## Usage\n\n### Updating state based on the previous state\n\n```js\nsetAge(a => a + 1);"
            "\nsetAge(a => a + 1);\n```\n\nPass an updater function instead of the next value.\n"
        ),
    }
    query = "How do I update state based on the previous state?"
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, query).items():
        assert hit.heading == "useState > Usage > Updating state based on the previous state", (mode, hit.heading)


def test_a_section_headed_by_a_how_to_question_s_topic_alone_comes_first(
    tmp_path: Path, index_backend: Backend
) -> None:
    """Vitest: "How do I set coverage thresholds?" had the generated CLI page's `coverage.thresholds.100` ("Shortcut
    to set all coverage thresholds to 100") first, and the config page's section `coverage.thresholds` nowhere near:
    a heading that names the question's topic without its task's verb ("set") states it as well."""
    pages = {
        "guide/cli-generated.md": (
            "# CLI\n\n### coverage.thresholds.100\n\n- **CLI:** `--coverage.thresholds.100`\n\nShortcut to set all"
            " coverage thresholds to 100: set every coverage threshold at once (default: `false`).\n"
        ),
        "config/coverage.md": (
            "# coverage\n\n## coverage.provider\n\nWhich provider collects coverage: v8 or istanbul.\n\n"
            "## coverage.thresholds\n\nOptions for coverage thresholds.\n\n```ts\n{ coverage: { thresholds: {"
            " functions: 90, lines: -10 } } }\n```\n\nA positive number is the least percentage covered, a negative"
            " one the most items left uncovered.\n\n### coverage.thresholds.lines\n\n- **Type:** `number`\n\n"
            "Global threshold for lines.\n"
        ),
    }
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, "How do I set coverage thresholds?").items():
        assert (hit.path, hit.heading) == ("config/coverage.md", "coverage > coverage.thresholds"), (mode, hit)


def test_a_heading_of_the_topic_s_words_in_another_phrase_is_not_moved(tmp_path: Path, index_backend: Backend) -> None:
    """Starlight: "How do I add a page to the sidebar?" has the topic's terms (page, sidebar) and so does the overrides
    reference's `### Page Sidebar` (a component), but the question never says "page sidebar": that heading is no
    statement of it and stays where it ranks, after the sidebar guide."""
    pages = {
        "reference/overrides.md": (
            "# Overrides Reference\n\n## Components\n\n### Page Sidebar\n\nThe component that renders the page's"
            " sidebar and the table of contents; override it to change the page sidebar.\n"
        ),
        "guides/sidebar.md": (
            "# Sidebar Navigation\n\n## Add links\n\nTo add a page to the sidebar, list it in the `sidebar` config:"
            " each page added to the sidebar gets a link, in the order given.\n"
        ),
    }
    for mode, hit in first_hits(
        docs_site(tmp_path, pages), index_backend, "How do I add a page to the sidebar?"
    ).items():
        assert hit.path == "guides/sidebar.md", (mode, hit)


@pytest.mark.parametrize(
    ("heading", "query", "said"),
    [
        (["depend", "group"], ["how", "do", "i", "use", "depend", "group"], True),
        (["coverag", "threshold"], ["how", "do", "i", "set", "coverag", "threshold"], True),
        (["page", "sidebar"], ["how", "do", "i", "add", "a", "page", "to", "the", "sidebar"], False),
        (["group", "depend"], ["how", "do", "i", "use", "depend", "group"], False),
        (["the", "depend", "group"], ["how", "do", "i", "use", "depend", "group"], True),
    ],
)
def test_a_heading_says_the_topic_when_its_words_run_in_the_question_s_order(
    heading: list[str], query: list[str], said: bool
) -> None:
    assert said_as_phrase(heading, query, {"depend", "group", "coverag", "threshold", "page", "sidebar"}) is said


def test_a_folder_s_titles_say_their_kind_by_the_last_word_they_share() -> None:
    middleware = ["CORS Middleware", "Basic Auth Middleware", "Body Limit Middleware", "Compress Middleware", "Intro"]
    assert kind_words(middleware) == {"middleware"}
    assert kind_words(["Cookie Helper", "Factory Helper"]) == frozenset()  # too few to tell
    assert kind_words(["A Helper", "B Helper", "C Helper", "D", "E", "F", "G"]) == frozenset()  # not half of them
    assert page_topic("CORS Middleware", {"middleware"}) == "CORS "
    assert page_topic("Middleware", {"middleware"}) == "Middleware"  # a title of the kind word alone keeps it
    assert page_topic("Middleware for CORS", {"middleware"}) == "Middleware for CORS"


def test_a_how_to_question_finds_the_page_titled_for_its_topic_and_its_kind(
    tmp_path: Path, index_backend: Backend
) -> None:
    """Hono: every page of `middleware/builtin/` is titled "X Middleware", and "How do I enable CORS?" showed the CORS
    page's `credentials` option, not its opening: the title did not equal the topic. Its folder's titles say
    "Middleware" is the kind of page, so "CORS Middleware" is the page on CORS."""
    others = {
        f"middleware/builtin/{name.lower().replace(' ', '-')}.md": f"# {name} Middleware\n\nThe {name} middleware.\n"
        for name in ("Basic Auth", "Body Limit", "Compress", "ETag")
    }
    cors = (
        "# CORS Middleware\n\nServe a Web API to front-end applications on other origins: implement CORS with this"
        " middleware.\n\n## Usage\n\n```ts\napp.use('/api/*', cors())\n```\n\n## Options\n\n### credentials: `boolean`"
        "\n\nThis value is for the Access-Control-Allow-Credentials header of CORS: enable it to send cookies with CORS"
        " requests; CORS credentials are off unless enabled.\n"
    )
    pages = {**others, "middleware/builtin/cors.md": cors}
    for mode, hit in first_hits(docs_site(tmp_path, pages), index_backend, "How do I enable CORS?").items():
        assert (hit.path, hit.heading) == ("middleware/builtin/cors.md", "CORS Middleware"), (mode, hit)


def test_a_title_s_words_in_another_order_come_after_the_title_in_the_question_s_order() -> None:
    assert in_order(["call", "rust", "frontend"], ["call", "rust", "frontend"])
    assert not in_order(["call", "the", "frontend", "from", "rust"], ["how", "call", "rust", "from", "the", "frontend"])
    assert in_order(["rust", "guid"], ["call", "rust"])  # a term the question lacks says nothing
    assert in_order(["rust", "and", "rust", "frontend"], ["rust", "frontend"])


def test_of_two_pages_titled_by_a_how_to_topic_the_one_in_its_order_comes_first(
    tmp_path: Path, index_backend: Backend
) -> None:
    """Tauri: "How do I call Rust from the frontend?" had "Calling the Frontend from Rust" first, and "Calling Rust
    from the Frontend" second: both titles hold the question's words, only one in its order."""
    pages = {
        "develop/calling-frontend.md": (
            "# Calling the Frontend from Rust\n\nRust code calls the frontend: from Rust, call frontend functions,"
            " emit events to the frontend, call the frontend's JavaScript from Rust commands.\n"
        ),
        "develop/calling-rust.md": (
            "# Calling Rust from the Frontend\n\nCommands: define a command in Rust and invoke it in JavaScript.\n"
        ),
    }
    for mode, hit in first_hits(
        docs_site(tmp_path, pages), index_backend, "How do I call Rust from the frontend?"
    ).items():
        assert hit.path == "develop/calling-rust.md", (mode, hit)
