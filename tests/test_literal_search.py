"""Issue 32: a chunk holding the query's literal strings as written (a flag, a dotted or camelCase name, a quoted
error message) comes before chunks that hold their words apart, and a reference heading that defines the literal
before a guide that mentions it, over a real folder, a real index and real hybrid searches (the hashed test
embedder); which strings of a query are literals and which name a heading defines (scree.search.literals)."""

from __future__ import annotations

from pathlib import Path

from test_version_search import engine_for, page, search, tree

from scree.search.literals import defined_name, defined_share, literal_share, literals

# The tuning page says "snapshot" and "count" over and over, apart: the keyword list ranks it first for the words.
TUNING = page(
    "Tuning",
    "## Snapshots\n\nA snapshot is taken after a count of changes. Lower the count to save memory; keep fewer changes "
    "around.",
)
# The flags reference names the flag once, among others: the page that answers what its default is.
FLAGS = page(
    "Configuration flags",
    "## Member flags\n\n```\n--snapshot-count '10000'\n  Committed transactions that trigger a snapshot (lower: "
    "less memory).\n--heartbeat-interval '100'\n  Time (in milliseconds) of a heartbeat interval.\n```",
)
FAQ = page(
    "Operations",
    "## Space\n\nWhen the database is out of space the cluster rejects writes; free space by compaction, and the "
    "database accepts writes again. Space is what the database needs.",
)
MAINTENANCE = page(
    "Maintenance",
    "## Space quota\n\nPast the quota the alarm says mvcc: database space exceeded until it is disarmed.",
)

GUIDES = (
    "Put a member behind a load balancer and check its health endpoint.",
    "Watch a key prefix from a revision and stream every change after it.",
    "Grant a role read access to a key range and give the role to a user.",
    "Take a lock with a lease so that it goes when the client dies.",
    "Discover the members of a new cluster through DNS records.",
    "Rotate the certificates of peers one member at a time.",
)


def site(folder: Path) -> Path:
    return tree(
        folder,
        {
            "docs/tuning.md": TUNING,
            "docs/op-guide/configuration.md": FLAGS,
            "docs/operations.md": FAQ,
            "docs/op-guide/maintenance.md": MAINTENANCE,
            "docs/install.md": page("Install", "Download a release and put the binary on your PATH."),
            **{f"docs/guide-{n}.md": page(f"Guide {n}", text) for n, text in enumerate(GUIDES)},
        },
    )


def test_the_chunk_naming_the_flag_as_written_comes_first(tmp_path: Path) -> None:
    engine = engine_for(site(tmp_path / "site"), tmp_path / "index.db")
    query = "Which --snapshot-count should I set to take snapshots less often?"
    assert [hit.path for hit in search(engine, query, "keyword")][0] == "docs/tuning.md"  # the words alone
    paths = [hit.path for hit in search(engine, query, "hybrid")]
    assert paths[0] == "docs/op-guide/configuration.md", paths
    assert "docs/tuning.md" in paths  # still found, after it


def test_the_chunk_holding_the_quoted_error_message_comes_first(tmp_path: Path) -> None:
    engine = engine_for(site(tmp_path / "site"), tmp_path / "index.db")
    query = "The cluster hit 'mvcc: database space exceeded' and rejects writes. How do I free space?"
    assert [hit.path for hit in search(engine, query, "keyword")][0] == "docs/operations.md"
    paths = [hit.path for hit in search(engine, query, "hybrid")]
    assert paths[0] == "docs/op-guide/maintenance.md", paths


# The upgrade guide mentions the old flag in a heading sentence and in prose, beside the query's words (reporter,
# modes): words alone rank it first.
UPGRADE = page(
    "Upgrading to version 3",
    "## Renamed flags\n\n### `--reporterMode` was renamed to `--reporterModes`\n\nPass `--reporterModes` where you "
    "passed `--reporterMode`; it takes a list of reporter modes.",
)
# The CLI reference defines the flag in its heading (its new name holds the old one) and says what it takes.
CLI = page(
    "CLI options",
    "## Reference\n\n### `--reporterModes=<mode>`\n\nOne or more modes for the reporter, separated by commas: "
    "`summary`, `verbose` or `silent`. The first one is the default mode.",
    "### `--bail=<n>`\n\nStop the run after n failed test files.",
)


def test_the_heading_that_defines_the_flag_comes_before_the_guide_that_mentions_it(tmp_path: Path) -> None:
    folder = tree(
        tmp_path / "site",
        {
            "docs/upgrading.md": UPGRADE,
            "docs/cli.md": CLI,
            "docs/install.md": page("Install", "Download a release and put the binary on your PATH."),
            **{f"docs/guide-{n}.md": page(f"Guide {n}", text) for n, text in enumerate(GUIDES)},
        },
    )
    engine = engine_for(folder, tmp_path / "index.db")
    query = "Which flag sets the reporter mode now that --reporterMode is gone?"
    assert [hit.path for hit in search(engine, query, "keyword")][0] == "docs/upgrading.md"  # the words alone
    paths = [hit.path for hit in search(engine, query, "hybrid")]
    assert paths[0] == "docs/cli.md", paths
    assert "docs/upgrading.md" in paths  # still found, after it


def test_which_name_a_heading_defines() -> None:
    assert defined_name("CLI > Reference > `--testPathPatterns=<regex>`") == "--testpathpatterns"
    assert defined_name("Configuring Jest > Reference > `globalSetup` \\[string]") == "globalsetup"
    assert defined_name("Expect > `.toHaveBeenCalledWith(arg1, arg2, ...)`") == "tohavebeencalledwith"
    assert defined_name("Member flags > --snapshot-count '10000'") == "--snapshot-count"
    # a heading sentence that mentions a name defines nothing; nor does a heading of several words
    assert defined_name("Upgrading > `--testPathPattern` was renamed to `--testPathPatterns`") == ""
    assert defined_name("Snapshot Testing > Updating snapshots") == ""
    wanted = ("--testpathpattern", "jest.config.ts")
    assert defined_share(wanted, "CLI > `--testPathPatterns=<regex>`") == 0.5
    assert defined_share(wanted, "Upgrading > `--testPathPattern` was renamed") == 0.0
    assert defined_share((), "CLI > `--testPathPatterns=<regex>`") == 0.0


def test_which_strings_of_a_query_are_literals() -> None:
    assert literals("What is the default --snapshot-count now?") == ("--snapshot-count",)
    assert literals("expect(mockFn).toBeCalledWith(...) throws 'is not a function'") == (
        "is not a function",
        "mockfn",
        "tobecalledwith",
    )
    assert literals("load jest.config.ts; model_dump exclude none; `jest  --ci`") == (
        "jest --ci",
        "jest.config.ts",
        "model_dump",
    )
    # English, not names: hyphenated words, apostrophes, version numbers, short flags, siRNA-like capitals
    assert literals("What's a command-line tool's read-only mode in v3.7 with --ci and siRNA?") == ()


def test_a_chunk_scores_by_the_share_of_literals_it_holds_as_written() -> None:
    wanted = ("--snapshot-count", "mvcc: database space exceeded")
    assert literal_share(wanted, "Set --Snapshot-Count high; MVCC:  database\nspace exceeded follows") == 1.0
    assert literal_share(wanted, "snapshot count, mvcc database space exceeded") == 0.0
    assert literal_share(wanted, "--snapshot-count '10000'") == 0.5
    assert literal_share((), "anything") == 0.0
