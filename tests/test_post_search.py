"""Issue 32: a docs site's blog posts come after its docs pages of similar rank, over real folders, a real index and
real searches (the hashed test embedder); a question only a post answers still finds it; a repository that is only a
blog ranks its posts as any page; `scree doctor` says what it took as posts."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_scree
from test_version_search import GUIDES, engine_for, indexed_doctor, page, search, tree

from scree.content.fixtures import SuitePages, docs_root, docs_sections
from scree.content.posts import is_changelog, titled_changelog

CLI = page(
    "CLI options",
    "## testPathPatterns\n\nRun only the test files whose path matches one of the regex patterns given.",
    "## shard\n\nSplit the test suite into shards and run one shard on each machine of the CI.",
)
# A release post names the option as the reference page does, and says it again: it matches as well or better.
RELEASE_POST = page(
    "Jest 30: faster and leaner",
    "Moving to Jest 30: testPathPattern is now testPathPatterns, so a script that passes testPathPattern stops "
    "working. Run only the test files matching a regex with testPathPatterns, which takes several regex patterns.",
    "## Thanks\n\nThanks to everyone who sent a pull request this year.",
)
OTHER_POSTS = {
    "2016-04-12-jest-11.md": page("Jest 11", "Jest moves to major version numbers and drops the old loader."),
    "2022-04-25-jest-28.md": page("Jest 28", "Sharding splits the suite across machines; the watch mode got faster."),
    "2023-01-10-openjs.md": page("Jest joins OpenJS", "The project moves to the OpenJS foundation; a story of moving."),
}
ONLY_IN_A_POST = page(
    "Supporting Jest open source", "We set up an Open Collective so that companies can sponsor the maintainers."
)
QUERY = "after moving to Jest 30 testPathPattern stopped working: which option runs only test files matching a regex"


def site(folder: Path, with_docs: bool = True) -> Path:
    files = {f"website/blog/{name}": text for name, text in OTHER_POSTS.items()}
    files["website/blog/2025-06-04-jest-30.md"] = RELEASE_POST
    files["website/blog/2018-06-27-supporting-jest.md"] = ONLY_IN_A_POST
    if with_docs:
        files["docs/CLI.md"] = CLI
        files.update({f"docs/{name}": text for name, text in GUIDES.items()})
        files["docs/Configuration.md"] = page("Configuring", "The testEnvironment option picks node or jsdom.")
        files["docs/Webpack.md"] = page("Webpack", "Stub out CSS modules with a moduleNameMapper entry.")
    return tree(folder, files)


def doctor_line(tmp_path: Path, folder: Path, topic: str) -> str:
    """The line `scree doctor` writes on `topic` ("test pages") of `folder`, indexed (its whole output if none)."""
    _, doctor = indexed_doctor(tmp_path, folder)
    return next((line for line in doctor.stdout.splitlines() if line.startswith(f"ok    {topic}:")), doctor.stdout)


@pytest.mark.parametrize("mode", ("hybrid", "keyword"))
def test_the_docs_page_comes_before_the_post_that_matches_as_well(tmp_path: Path, mode: str) -> None:
    engine = engine_for(site(tmp_path / "site"), tmp_path / "index.db")
    paths = [hit.path for hit in search(engine, QUERY, mode, k=8)]
    assert paths[0] == "docs/CLI.md", paths
    assert "website/blog/2025-06-04-jest-30.md" in paths  # still found, after the docs pages of similar rank
    assert paths.index("website/blog/2025-06-04-jest-30.md") > paths.index("docs/CLI.md")


def test_without_docs_beside_it_the_blog_ranks_its_posts_as_any_page(tmp_path: Path) -> None:
    """The same posts in a repository that is only a blog: the release post that matches best comes first."""
    engine = engine_for(site(tmp_path / "site", with_docs=False), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        paths = [hit.path for hit in search(engine, QUERY, mode)]
        assert paths[0] == "website/blog/2025-06-04-jest-30.md", (mode, paths)


def test_a_question_only_a_post_answers_still_finds_it(tmp_path: Path) -> None:
    """Among the first five hits of eight docs pages: the post moves past pages the query's words found, not past
    every page (the hashed test embedder has no similarity floor, so in semantic mode every page is a candidate and
    its order is arbitrary)."""
    engine = engine_for(site(tmp_path / "site"), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        paths = [hit.path for hit in search(engine, "how can companies sponsor the maintainers open collective", mode)]
        assert "website/blog/2018-06-27-supporting-jest.md" in paths, (mode, paths)


def test_doctor_says_what_it_took_as_posts(tmp_path: Path) -> None:
    _, doctor = indexed_doctor(tmp_path, site(tmp_path / "site"))
    lines = [line for line in doctor.stdout.splitlines() if line.split(":", 1)[0].endswith("posts")]
    assert lines == [
        "ok    posts: website/blog/ (5 pages, date-named): shown after docs pages of similar rank (6 docs pages "
        "beside them)"
    ], doctor.stdout


# A package's changelog names the option its release added, in the words a question uses
JWT_CHANGELOG = page(
    "Change Log",
    "## 0.4.0 (2020-05-19)\n\n### Features\n\n* **authentication-jwt:** add JWT authentication with a token service "
    "and a user service, so an app adds authentication with JWT by mounting the component",
    "## 0.3.1 (2020-04-29)\n\n### Bug fixes\n\n* **authentication-jwt:** the token expires in the configured seconds",
)
JWT_TUTORIAL = page(
    "Secure your app with JWT authentication",
    "To add authentication with JWT, mount the JWTAuthenticationComponent in your application and decorate the "
    "controller methods to protect with @authenticate('jwt').",
)


@pytest.mark.parametrize("name", ("CHANGELOG.md", "CHANGELOG-0.4.md", "changelog/index.md", "jwt0.4.md"))
@pytest.mark.parametrize("mode", ("hybrid", "keyword"))
def test_a_changelog_comes_after_the_docs_page_unless_the_query_asks_about_changes(
    tmp_path: Path, mode: str, name: str
) -> None:
    """LoopBack keeps a CHANGELOG.md per package in its docs (lb4/changelogs/extensions/authentication-jwt/): its
    "add JWT authentication" entry came first for "How do I add authentication with JWT?", the tutorial fourth;
    Velero keeps one per release (changelogs/CHANGELOG-1.18.md), whose highlights came before the docs page;
    Material for MkDocs has its own as docs/changelog/index.md, third for "How do I add admonitions?"; the Go website
    names its by release alone (`go1.21.md`, titled "Go 1.21 Release Notes"), 28 of them, first for "How do I use
    the race detector?". A question about what changed, or in which release, is the changelog's."""
    changelog = f"docs/changelogs/authentication-jwt/{name}"
    titled = name == "jwt0.4.md"  # a changelog by its title alone
    files = {
        changelog: JWT_CHANGELOG.replace("# Change Log", "# JWT 0.4 Release Notes") if titled else JWT_CHANGELOG,
        "docs/tutorials/jwt-authentication.md": JWT_TUTORIAL,
        **{f"docs/{name}": text for name, text in GUIDES.items()},
    }
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    how = [hit.path for hit in search(engine, "how do I add authentication with JWT token service", mode)]
    assert how[0] == "docs/tutorials/jwt-authentication.md", how
    assert changelog in how  # still found, after the docs page
    assert is_changelog("HISTORY.md") and is_changelog("docs/changes.rst") and is_changelog("Release_Notes.md")
    assert is_changelog("changelogs/CHANGELOG-1.18.md") and is_changelog("docs/release-notes-v3.0.x.md")
    assert is_changelog("CHANGELOG-v0.1.0_v1.1.0.md")  # Argo Rollouts: the releases before its CHANGELOG.md
    assert not is_changelog("docs/commands/history.md") and not is_changelog("docs/changelog-format.md")
    assert is_changelog("docs/sources/release-notes/_index.md") and is_changelog("docs/Changelog/README.md")
    assert not is_changelog("docs/changelog/format.md") and not is_changelog("docs/changelog-format/index.md")
    fragments = ("changelog/10128.bugfix.rst", "news/12248.bugfix.rst", "doc/changelog/unreleased_21/11297.rst")
    fragments += ("changelog_unreleased/yaml/19599.md", "changelog.d/42.feature.md")  # Prettier's; towncrier's
    assert all(map(is_changelog, fragments))  # a changelog's fragments, one per issue (towncrier)
    assert not is_changelog("docs/news/2024-launch.md") and not is_changelog("docs/guides/10-steps.md")
    assert is_changelog("doc/changes/0.1.rst") and not is_changelog("news/01.md")  # no issue number starts with 0
    assert titled_changelog("Go 1.21 Release Notes") and titled_changelog("Changelog")
    assert not titled_changelog("Change Logs") and not titled_changelog("Releasing notes")  # Crossplane's feature guide
    for query in (
        "which release added authentication with JWT token service",
        "what changed in authentication-jwt 0.4.0",
    ):
        asked = [hit.path for hit in search(engine, query, mode)]
        assert asked[0] == changelog, (query, asked)


def test_doctor_names_the_changelogs_search_puts_after_the_docs(tmp_path: Path) -> None:
    files = {
        "CHANGELOG.md": JWT_CHANGELOG,
        "packages/jwt/CHANGELOG.md": JWT_CHANGELOG,
        "packages/jwt/HISTORY.md": JWT_CHANGELOG,
        "docs/changes.rst": "Changes\n=======\n\nVersion 2.0\n-----------\n\nThe token service moved.\n",
        "docs/commands/history.md": page("history", "Show the history of a release."),
        "docs/go1.21.md": "---\ntitle: Go 1.21 Release Notes\n---\n\n## Tools\n\nThe go command changed.\n",
        **{f"docs/{name}": text for name, text in GUIDES.items()},
    }
    folder = tree(tmp_path / "site", files)
    env, doctor = indexed_doctor(tmp_path, folder)
    lines = [line for line in doctor.stdout.splitlines() if line.startswith("ok    changelogs:")]
    assert lines == [  # by name, or by title (the Go site's release notes)
        "ok    changelogs: CHANGELOG.md, docs/changes.rst, docs/go1.21.md and 2 more: shown after docs "
        "pages of similar rank unless the query asks about changes"
    ], doctor.stdout
    (folder / "CHANGELOG.md").unlink()
    for name in ("packages/jwt/CHANGELOG.md", "packages/jwt/HISTORY.md", "docs/changes.rst", "docs/go1.21.md"):
        (folder / name).unlink()
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 0
    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    assert "ok    changelogs: none found (pages named CHANGELOG, CHANGES or RELEASE-NOTES" in doctor.stdout, (
        doctor.stdout
    )


def test_the_announcement_of_the_release_a_query_asks_what_changed_in_is_not_moved_down(tmp_path: Path) -> None:
    """Linkerd's "What changed in Linkerd 2.18?": its "Announcing Linkerd 2.18" post, the page that answers, went
    after the docs pages naming 2.18 as a post; a post headed by the asked release is not moved down for such a
    question, and stays after the docs for a how-to naming no release."""
    files = {f"website/blog/{name}": text for name, text in OTHER_POSTS.items()}
    files["website/blog/2025-04-23-announcing-28-1.md"] = page(
        "Announcing Jest 28.1", "Jest 28.1 changed the watch mode, and sharding splits the suite across machines."
    )
    files["docs/Sharding.md"] = page(
        "Sharding", "Since Jest 28.1 the shard option splits the test suite across machines; what changed is the flag."
    )
    files["docs/Watch.md"] = page("Watch mode", "What changed in the watch mode in Jest 28.1: it reruns related tests.")
    files.update({f"docs/{name}": text for name, text in GUIDES.items()})
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    asked = [hit.path for hit in search(engine, "What changed in Jest 28.1?", "hybrid", k=6)]
    assert asked[0] == "website/blog/2025-04-23-announcing-28-1.md", asked
    how = [hit.path for hit in search(engine, "how do I split the suite across machines with sharding", "hybrid")]
    assert how[0] == "docs/Sharding.md", how


def test_a_test_fixture_comes_after_the_docs_page_unless_the_query_asks_about_tests(tmp_path: Path) -> None:
    """Prettier's tests/format/markdown/ holds 314 of its 430 .md files; an old copy of its README there came first
    for "How do I configure trailing commas?" before the options page. A page in a tests, fixtures, test data or
    snapshots folder stays indexed and found, after the docs pages; a question about the tests is its own."""
    options = page("Options", "## Trailing Commas\n\nSet trailingComma to all, es5 or none in the config file.")
    fixture = page("Prettier", "## Trailing Commas\n\nTrailing commas: set trailingComma, the trailing commas option.")
    files = {"docs/options.md": options, "tests/format/markdown/real-world-case.md": fixture}
    files.update({f"docs/{name}": text for name, text in GUIDES.items()})
    folder = tree(tmp_path / "site", files)
    engine = engine_for(folder, tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        paths = [hit.path for hit in search(engine, "how do I configure trailing commas", mode)]
        assert paths[0] == "docs/options.md" and "tests/format/markdown/real-world-case.md" in paths, (mode, paths)
        asked = [hit.path for hit in search(engine, "the trailing commas test fixture", mode)]
        assert asked[0] == "tests/format/markdown/real-world-case.md", (mode, asked)
    assert doctor_line(tmp_path, folder, "test pages") == (
        "ok    test pages: tests/format/markdown/real-world-case.md: shown after docs pages of similar rank unless the "
        "query asks about tests (those outside docs/: unless it names a fixture)"
    )


def test_the_docs_top_folder_is_where_most_pages_that_are_no_tests_sit() -> None:
    prettier = [
        *(f"tests/format/markdown/case-{n}.md" for n in range(9)),
        "docs/options.md",
        "docs/cli.md",
        "README.md",
    ]
    assert docs_root(prettier) == "docs/"  # 9 fixtures do not make tests/ the docs
    tests = SuitePages.of(prettier)
    assert tests.root == "docs/" and tests.beside_the_docs("tests/format/markdown/case-1.md")
    assert not tests.beside_the_docs("docs/options.md")
    assert docs_root(["README.md", "CONTRIBUTING.md", "docs/a.md"]) is None  # the top of the repository holds most


def test_a_folder_named_for_a_kind_of_test_holds_test_pages() -> None:
    """Ruff keeps 388 of its 636 .md files in `crates/*/resources/mdtest/`, markdown test suites for its linter and
    ty: they were no test pages and held the first hits for questions about ty. A folder named for a kind of test
    (`mdtest/`, `integration-tests/`, `e2e_tests/`, `unittests/`) holds test pages; `latest/` and k6's docs sections
    `end-of-test/` and `how-to-write-browser-tests/` do not."""
    ruff = ["docs/configuration.md", "docs/faq.md", "crates/ty_python_semantic/resources/mdtest/import/star.md"]
    ruff += ["site/integration-tests/basic.md", "site/e2e_tests/login.md", "lib/unittests/parse.md"]
    docs = ["docs/latest/install.md", "docs/results-output/end-of-test/summary.md"]
    docs += ["docs/using-k6-browser/how-to-write-browser-tests/page.md"]
    tests = SuitePages.of([*ruff, *docs])
    assert [path for path in ruff if tests.holds(path)] == ruff[2:]
    assert not any(tests.holds(path) for path in docs)


def test_a_folder_named_test_among_many_docs_pages_is_the_docs_section_on_testing() -> None:
    """Deno's docs keep their pages on testing (coverage, mocking, snapshots) in `runtime/test/` beside the rest of
    `runtime/`; Tauri's in `develop/Tests/`: pages of the docs. A folder named like a test suite at the top of the
    repository, or beside fewer pages than it holds, is a suite; fixtures and test data are never docs."""
    runtime = [f"runtime/fundamentals/page-{n}.md" for n in range(6)] + ["runtime/index.md"]
    deno = [*runtime, "runtime/test/coverage.md", "runtime/test/mocking.md", *(f"lint/rule-{n}.md" for n in range(9))]
    assert docs_sections(deno) == {"runtime/test"}
    tests = SuitePages.of(deno)
    assert not tests.holds("runtime/test/coverage.md") and not tests.beside_the_docs("runtime/test/mocking.md")
    tauri = [
        "develop/index.mdx",
        "develop/debug.md",
        "develop/icons.md",
        "develop/state.md",
        "develop/Tests/mocking.md",
    ]
    tauri += ["develop/Tests/WebDriver/index.mdx", "develop/Tests/fixtures/app.md"]
    tests = SuitePages.of(tauri)
    assert tests.sections == {"develop/Tests"} and not tests.holds("develop/Tests/WebDriver/index.mdx")
    assert tests.holds("develop/Tests/fixtures/app.md")  # a fixture inside the section is still a test page
    suites = ["docs/guide.md", "docs/api.md", "test/README.md", "test/browser/README.md"]  # Vitest: at the top
    suites += ["packages/kit/README.md", *(f"packages/kit/test/apps/app-{n}/README.md" for n in range(4))]
    suites += ["mkdocs/tests/integration/docs/index.md", "mkdocs/tests/integration/docs/testing.md"]
    suites += ["site/testing/_index.md", *(f"site/testing/tests/page-{n}.md" for n in range(3))]  # 1 page beside 3
    assert docs_sections(suites) == frozenset()
    assert all(SuitePages.of(suites).holds(path) for path in suites if "/test/" in path or "/tests/" in path)


def test_a_testing_tools_own_test_pages_beside_its_docs_come_after_them(tmp_path: Path) -> None:
    """Vitest: "How do I run tests in the browser?" had its test suite's test/browser/README.md second, since a query
    saying "tests" lifted the rule for test pages, and every question on a testing tool's site says it. A test page
    outside the docs' top folder comes after the docs pages unless the query names a fixture."""
    guide = page(
        "Browser Mode", "## Running tests\n\nRun your tests in the browser: set browser.enabled in the config."
    )
    suite = page("Browser Tests", "The tests in this folder run in the browser: run the browser tests with the "
                 "browser test fixtures, tests in the browser, each test in a browser.")  # fmt: skip
    files = {"docs/guide/browser.md": guide, "test/browser/README.md": suite}
    files.update({f"docs/{name}": text for name, text in GUIDES.items()})
    engine = engine_for(tree(tmp_path / "site", files), tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        paths = [hit.path for hit in search(engine, "How do I run tests in the browser?", mode)]
        assert paths[0] == "docs/guide/browser.md" and "test/browser/README.md" in paths, (mode, paths)
        asked = [hit.path for hit in search(engine, "the browser test fixtures", mode)]
        assert asked[0] == "test/browser/README.md", (mode, asked)


def test_the_docs_section_on_testing_ranks_as_the_docs_it_is(tmp_path: Path) -> None:
    """Deno: "How do I migrate from Jest?" had `runtime/test/migrate_from_jest.md` third and "How do I measure code
    coverage?" its coverage page nowhere in the first four: `runtime/test/` was taken for a test suite, moved after
    the docs pages of similar rank, and, the repository's top folder with most pages being `lint/`, even for a
    question saying "test". A folder named test among many more docs pages is the docs' section on testing."""
    coverage = page(
        "Test coverage", "Measure code coverage: run the tests with --coverage, then write a coverage report."
    )
    mocking = page("Mocking", "Mock a function in your tests with a spy that records each call and its arguments.")
    files = {"runtime/test/coverage.md": coverage, "runtime/test/mocking.md": mocking}
    files["runtime/reference/cli.md"] = page("CLI", "The coverage subcommand prints a report; run writes a file.")
    files["runtime/fundamentals/debugging.md"] = page("Debugging", "Functions in your code: a report of each call.")
    files.update({f"runtime/{name}": text for name, text in GUIDES.items()})
    files.update({f"lint/rule-{n}.md": page(f"Lint rule {n}", f"Rule {n} reports unused code.") for n in range(12)})
    folder = tree(tmp_path / "site", files)
    engine = engine_for(folder, tmp_path / "index.db")
    for mode in ("hybrid", "keyword"):
        measured = [hit.path for hit in search(engine, "How do I measure code coverage and write a report?", mode)]
        assert measured[0] == "runtime/test/coverage.md", (mode, measured)
        mocked = [hit.path for hit in search(engine, "How do I mock a function in my tests?", mode)]
        assert mocked[0] == "runtime/test/mocking.md", (mode, mocked)
    assert doctor_line(tmp_path, folder, "test pages") == (
        "ok    test pages: none found (pages in a tests/, fixtures/, testdata/ or __snapshots__/ folder); "
        "runtime/test/: pages of the docs, not tests (the folder around each holds most of its pages)"
    )
