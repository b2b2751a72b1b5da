"""The `scree` command: a thin layer that parses flags, calls scree.commands and friends, and prints; no logic."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from scree import __version__, replies
from scree.config import DEFAULT_VECTOR_CACHE_MB, Settings, env_number, load_settings, log_format, log_level
from scree.errors import ScreeError, UsageError
from scree.index.folder import indexes_dir
from scree.inert import inert, json_inert
from scree.logs import configure_logging
from scree.redact import redact
from scree.search import DEFAULT_K, DEFAULT_MODE, MAX_K, MODES

if TYPE_CHECKING:
    from scree.commands.progress import ProgressPrinter

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2  # R-L1
COMPLETION_SHELLS = ("bash", "zsh", "fish")  # what argcomplete.shellcode writes and scree documents
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what `yes | head` reports for the writer whose reader went away
SINGLE_DASH_LONG = ("notes", "db", "all", "json", "mode", "check")  # the seed's spellings
INIT_CLIENTS = ("claude", "cursor", "vscode", "copilot", "codex")  # commands.init.CLIENT_NAMES, not imported for --help


def normalise_argv(argv: Sequence[str]) -> list[str]:
    """Accept the seed's single-dash long options (`-notes DIR`, `-db PATH`, `reindex -all`) beside `--` forms."""
    out: list[str] = []
    for arg in argv:
        name = arg[1:].split("=", 1)[0]
        if arg.startswith("-") and not arg.startswith("--") and name in SINGLE_DASH_LONG:
            arg = "-" + arg
        out.append(arg)
    return out


NOTES_DEFAULT = (
    "default: git root of the current directory; when CLAUDE_PROJECT_DIR is set, the git root above it is used "
    "instead, even over --notes"  # R-F1
)


def _add_folder_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--notes", metavar="DIR", help=f"folder to index ({NOTES_DEFAULT})")
    parser.add_argument("--db", metavar="PATH", help="index database file (default: under $XDG_DATA_HOME/scree)")
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="keep the index in PostgreSQL with pgvector, shared by a team (SCREE_DATABASE_URL; needs scree[postgres])",
    )
    parser.add_argument(
        "--collection",
        metavar="NAME",
        help="the index's name in that database (SCREE_COLLECTION; default: origin remote:docs path@branch)",
    )


def _hit_count(text: str) -> int:
    """`search -k`: a whole number within the search engine's range, else a usage error (exit 2, R-L1)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_K:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_K}, got {value}")
    return value


INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")


class Parser(argparse.ArgumentParser):
    """argparse with a suggestion for a mistyped choice: `scree serach` says "did you mean 'search'?"."""

    def error(self, message: str) -> NoReturn:
        found = INVALID_CHOICE.search(message)
        if found is not None:
            import difflib  # only for a mistake: not loaded by every serve and writer (issue 24)

            choices = [c.strip().strip("'") for c in found.group(2).split(",")]
            close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.6)
            if close:
                message = f"{message[: found.start()]}invalid choice: {found.group(1)!r} (did you mean {close[0]!r}?)"
        super().error(message)


def _command(sub: argparse._SubParsersAction[Parser], name: str, summary: str, details: str = "") -> Parser:
    """A subcommand whose `--help` page opens with what it does (the summary `scree --help` lists), then `details`."""
    description = summary[0].upper() + summary[1:] + "." + (" " + details if details else "")
    return sub.add_parser(name, help=summary, description=description)


def _port(text: str) -> int:
    """`serve --port`: 0-65535, else a usage error (exit 2)."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0-65535): {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="scree",
        description="Search a repository's docs by meaning. Indexes every docs file (markdown, MDX, reStructuredText, "
        "AsciiDoc, plain text) the ignore rules allow "
        "into one SQLite file per folder, and serves search to coding agents over MCP.",
        epilog="Embeddings: with OPENROUTER_API_KEY (or SCREE_API_KEY) set, the OpenAI-compatible API at "
        "SCREE_API_BASE; without a key, the offline model (install it once with `scree model install`).",
    )
    parser.add_argument("--version", action="version", version=f"scree {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = _command(
        sub,
        "serve",
        "run the MCP server on stdin/stdout (what .mcp.json starts), or over HTTP",
        "Tools: search_docs, read_doc, reindex. The process that holds writer.lock keeps the index current in a "
        "supervised child process: it syncs the folder's docs files first, then follows their edits. With "
        "--http: MCP streamable HTTP at /mcp and GET /healthz, Host/Origin checked, a bearer token required (one is "
        "made in the config folder when none is given).",
    )
    _add_folder_flags(p)
    p.add_argument("--http", action="store_true", help="serve MCP streamable HTTP at /mcp (and GET /healthz)")
    p.add_argument("--host", help="with --http: address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=_port, help="with --http: port (default 8765; 0 picks a free one)")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="with --http: bearer token file, mode 600 (or set SCREE_HTTP_TOKEN; default: one made in "
        "$XDG_CONFIG_HOME/scree/http-token)",
    )
    p.add_argument(
        "--no-token",
        action="store_true",
        help="with --http on loopback: no token at all (any local user can then read the folder)",
    )
    p.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="with --http: a Host name clients may use besides loopback and the address bound (repeatable)",
    )

    p = _command(
        sub,
        "watch",
        "keep the index current in the foreground (for systemd or Docker)",
        "Syncs the folder's docs files, then indexes each edit; exits non-zero when the folder or the index is "
        "removed or replaced, so the service manager restarts it.",
    )
    _add_folder_flags(p)

    p = _command(
        sub,
        "reindex",
        "index the folder's docs files now (takes the writer lock)",
        "Only new and changed files are embedded; rows of deleted and newly ignored files are removed. On a "
        "terminal a progress line shows files, bytes, chunks, rate and time left.",
    )
    _add_folder_flags(p)
    p.add_argument("--all", action="store_true", help="drop the index and rebuild it (also after a model change)")
    p.add_argument(
        "path",
        nargs="?",
        help="re-check one file instead of the whole folder: relative to the current directory (to the folder when "
        "you are outside it), or absolute inside the folder",
    )

    p = _command(
        sub,
        "search",
        "search the index (the same engine as the MCP tool)",
        "Hybrid mode merges semantic (vector) and keyword (FTS5) results; hits come best first.",
    )
    _add_folder_flags(p)
    p.add_argument("query", help="what to look for, in natural language")
    p.add_argument("-k", type=_hit_count, default=DEFAULT_K, help=f"how many hits (1-{MAX_K}, default {DEFAULT_K})")
    p.add_argument("--mode", choices=MODES, default=DEFAULT_MODE, help=f"default: {DEFAULT_MODE}")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of hit elements")
    p.add_argument(
        "--path",
        metavar="SCOPE",
        help="search only these files: a folder (docs/en/) or a glob (**/api/*.md), relative to the folder",
    )

    p = _command(sub, "status", "what the index holds and who keeps it current")
    _add_folder_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--check", action="store_true", help="one line; exit 1 unless the index can be read and a writer keeps it"
    )

    p = _command(
        sub,
        "init",
        "opt this repo in: write or merge the committed MCP config entry for scree-mcp",
        "It is written at the git repository's root; outside a repository it refuses unless --here.",
    )
    p.add_argument("--notes", metavar="DIR", help=f"repo folder ({NOTES_DEFAULT})")
    p.add_argument("client_name", nargs="?", choices=INIT_CLIENTS, metavar="CLIENT", help="the same as --client")
    p.add_argument(
        "--client",
        choices=INIT_CLIENTS,
        default=None,
        help="claude: .mcp.json (default); cursor: .cursor/mcp.json; vscode: .vscode/mcp.json; "
        "copilot: .github/mcp.json (GitHub Copilot CLI); codex: print the stanza for ~/.codex/config.toml",
    )
    block = p.add_mutually_exclusive_group()
    block.add_argument(
        "--agents-md",
        action="store_true",
        help="instead of a client config: write or update scree's marked block in AGENTS.md (a hint to use "
        "search_docs and a docs map of at most 8 KB); the rest of the file is left as it is",
    )
    block.add_argument("--claude-md", action="store_true", help="the same block in CLAUDE.md")
    p.add_argument(
        "--check",
        action="store_true",
        help="with --agents-md/--claude-md: change nothing; exit 1 when the block is missing or stale (for CI)",
    )
    p.add_argument("--remove", action="store_true", help="with --agents-md/--claude-md: take the block out")
    p.add_argument("--here", action="store_true", help="write the file even where no git repository has its root")
    p.add_argument(
        "--force",
        action="store_true",
        help='replace a "scree" entry of your own (another command, args or env) with scree\'s default; without '
        "it such an entry is kept as it is",
    )

    p = _command(sub, "doctor", "check the installation, the index and the settings")
    _add_folder_flags(p)

    p = _command(sub, "config", "every setting with its effective value and where it came from (secrets as set/unset)")
    _add_folder_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON list of {name, value, source}")

    p = _command(
        sub, "bench", "measure memory, handshake, search, sync and edit latency, each beside the design's bar for it"
    )
    p.add_argument("--notes", metavar="DIR", help="measure on a copy of the notes in DIR (default: a generated tree)")
    p.add_argument("--json", metavar="FILE", help="also write the figures to FILE as one JSON object")
    p.add_argument("--check", action="store_true", help="exit 1 when a figure misses its bar")
    p.add_argument("--quick", action="store_true", help="fewer samples and no 100k-chunk index: about a minute")
    p.add_argument(
        "--database-url",
        metavar="URL",
        help="instead: the SQLite and PostgreSQL backends side by side (search at 10k/100k chunks end to end and the "
        "store's part, exact against HNSW vector search at 2k-20k, first sync)",
    )

    p = _command(sub, "index", "the indexes on this machine: list them, remove them")
    index_sub = p.add_subparsers(dest="index_command", metavar="ACTION", required=True)
    q = _command(index_sub, "list", "every index: folder, size, model, counts, last sync, state")
    q.add_argument("--json", action="store_true", help="print one JSON list")
    q.add_argument("--database-url", metavar="URL", help="also the collections in this database (SCREE_DATABASE_URL)")
    q = _command(
        index_sub,
        "remove",
        "delete the index of FOLDER, or of every folder that no longer exists, and/or the machine's vector cache",
        "An index's vectors stay in the vector cache every index shares (it evicts the least recently used past "
        "SCREE_VECTOR_CACHE_MB); --vectors deletes it, safely even while writers run.",
    )
    q.add_argument("folder", nargs="?", metavar="FOLDER", help="the folder whose index goes (it may be gone)")
    q.add_argument("--missing", action="store_true", help="every index whose folder no longer exists")
    q.add_argument("--vectors", action="store_true", help="the vector cache every index shares (issue 24)")
    q.add_argument("--collection", metavar="NAME", help="the collection of exactly this name in the database")
    q.add_argument("--database-url", metavar="URL", help="the database of --collection (SCREE_DATABASE_URL)")

    p = _command(
        sub,
        "completion",
        "print the shell completion script for scree (bash, zsh or fish)",
        "bash: scree completion bash > ~/.local/share/bash-completion/completions/scree; zsh: scree completion zsh > "
        '"${fpath[1]}/_scree"; fish: scree completion fish > ~/.config/fish/completions/scree.fish',
    )
    p.add_argument("shell", choices=COMPLETION_SHELLS, help="the shell to complete in")

    p = _command(sub, "model", "manage the offline embedding model")
    model_sub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)  # R-L1: none is exit 2
    _command(model_sub, "install", "download all-MiniLM-L6-v2 (no PyTorch) and check its sha256")
    return parser


def _progress_printer(settings: Settings) -> ProgressPrinter:
    """R-L1: the progress line on a terminal (main wraps a terminal's stderr); without one, a plain line every
    SCREE_PROGRESS_SECONDS (issue 25), stdout kept for the result."""
    from scree.commands.progress import LineAwareStream, PlainProgress, ProgressPrinter

    if isinstance(sys.stderr, LineAwareStream):
        return ProgressPrinter(sys.stderr)
    return PlainProgress(sys.stderr, settings.progress_s)


def notes_overridden(env: Mapping[str, str], notes: str | None, folder: Path) -> str | None:
    """R-F1: the warning when CLAUDE_PROJECT_DIR chose another folder than --notes names, else None."""
    if not notes or not env.get("CLAUDE_PROJECT_DIR"):
        return None
    given = Path(notes).expanduser().resolve()
    if given == folder:
        return None
    return f"scree: warning: using {folder} from CLAUDE_PROJECT_DIR, which wins over --notes; {given} is not used"


def settings_for(args: argparse.Namespace) -> Settings:
    """The settings a command runs with, warning on stderr when CLAUDE_PROJECT_DIR overrules --notes."""
    from scree.paths import FROM_CWD_NO_REPO

    settings = load_settings(
        notes=args.notes,
        db=getattr(args, "db", None),
        database_url=getattr(args, "database_url", None),
        collection=getattr(args, "collection", None),
    )
    from scree.embedders.kinds import chosen

    chosen(settings)  # an unknown SCREE_EMBEDDER fails here, before any work, as every other bad setting does
    warning = notes_overridden(os.environ, args.notes, settings.folder)
    if warning is not None:
        print(warning, file=sys.stderr)
    if settings.folder_source == FROM_CWD_NO_REPO and args.command not in ("init", "config"):  # they say it
        print(f"scree: using {settings.folder}: {FROM_CWD_NO_REPO} (--notes DIR chooses another)", file=sys.stderr)
    return settings


def cmd_serve(args: argparse.Namespace) -> int:
    if not args.http:
        given = [flag for flag, value in (("--host", args.host), ("--port", args.port), ("--token-file",
                 args.token_file), ("--allow-host", args.allow_host), ("--no-token", args.no_token or None))
                 if value not in (None, [])]  # fmt: skip
        if given:
            raise UsageError(f"{', '.join(given)}: only with --http (without it, serve speaks MCP on stdin/stdout)")
        from scree.supervisor import serve

        return serve(settings_for(args))
    from scree.reader_proc.http_options import HttpOptions
    from scree.supervisor import serve_http

    options = HttpOptions.load(
        args.host, args.port, args.token_file, tuple(args.allow_host), os.environ, no_token=args.no_token
    )
    return serve_http(settings_for(args), options)


def cmd_watch(args: argparse.Namespace) -> int:
    from scree.writer_proc.foreground import run_watch

    settings = settings_for(args)
    configure_logging("watch", settings.log_format, settings.log_level)  # R-P5: stderr, info by default
    return run_watch(settings)


def cmd_reindex(args: argparse.Namespace) -> int:
    from scree.commands import operations
    from scree.commands.progress import final_line
    from scree.content.files import shown_short
    from scree.paths import path_in_folder
    from scree.replies import MISSING_REASON

    settings = settings_for(args)
    path = None if args.path is None else path_in_folder(settings.folder, Path.cwd(), args.path)
    progress = _progress_printer(settings)
    outcome = operations.reindex(settings, full=args.all, path=path, progress=progress)
    report = outcome.report
    if outcome.warning is not None:
        print(outcome.warning, file=sys.stderr)
    progress.finish(
        final_line(outcome.files, outcome.chunks, report.chunks_embedded, report.bytes_visited, progress.elapsed_s)
    )
    if path is not None and (path, MISSING_REASON) in report.skipped:
        raise ScreeError(outcome.message)  # R-L1: a file that is not there is a failure (its old rows are gone)
    print(inert(outcome.message))  # file names and API errors are data: escapes shown, not run (issue 13)
    by_format = replies.formats_note(report.formats) if path is None else None
    if by_format is not None:  # issue 33: what was read as rst, AsciiDoc, plain text ...
        print(f"  {by_format}")
    left_out = replies.left_out_note(report.left_out) if path is None else None
    if left_out is not None:  # issue 25: a folder of .rst or .mdx files was skipped without a word
        print(f"  {left_out}")
    for skipped, reason in report.skipped if path is None else ():  # one path: the message says why
        print(inert(f"  skipped {shown_short(skipped)}: {reason}"))  # a path over PATH_MAX: one readable line
    if report.outage:
        raise ScreeError(
            replies.cli_outage_error(
                report.outage,
                deferred=report.deferred,
                with_rows=report.deferred_with_rows,
                rebuild=report.rebuilt is False,
            )
        )
    if report.failed:
        raise ScreeError(replies.cli_unreadable_error(report.failed))
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    from scree.commands import operations
    from scree.inert import strip_controls
    from scree.search.render import render_hits

    settings = settings_for(args)
    result = operations.search(settings, args.query, args.k, args.mode, args.path)
    if args.json:
        hits = [
            {
                "n": n,
                "path": h.path,
                "start": h.start,
                "end": h.end,
                "heading": strip_controls(h.heading),  # as the MCP hit shows it (R-M1, R-L0)
                "score": round(h.score, 6),
                "text": h.text,
                "stale": h.stale,
                "also": list(h.also),
                "version": h.version,
                "part": list(h.part) if h.part is not None else None,
            }
            for n, h in enumerate(result.hits, start=1)
        ]
        print(json_inert(json.dumps({"hits": hits, "note": result.note}, ensure_ascii=False)))
    else:
        print(inert(render_hits(result.hits, result.notes)))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from scree.index.health import health_line, index_health, read_facts

    if args.check:  # the container's HEALTHCHECK
        healthy, line = health_line(index_health(settings_for(args)))
        if not healthy:
            raise ScreeError(line)
        print(line)
        return EXIT_OK
    info = read_facts(settings_for(args), status_probes=True).as_json()
    if args.json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            print(inert(f"{key.replace('_', ' ')}: {value if value is not None else '-'}"))
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from scree.commands.doctor import run_doctor

    return run_doctor(settings_for(args), lambda line: print(inert(line)))


def cmd_init(args: argparse.Namespace) -> int:
    if args.client_name and args.client and args.client_name != args.client:
        raise UsageError(f"init names two clients ({args.client_name} and --client {args.client}); give one")
    client = args.client_name or args.client
    if args.agents_md or args.claude_md:
        if client is not None:
            raise UsageError(
                "--agents-md and --claude-md write a block in a file, not a client's config: drop the client"
            )
        return _init_block(args, "agents" if args.agents_md else "claude")
    if args.check or args.remove:
        raise UsageError(f"--{'check' if args.check else 'remove'} goes with --agents-md or --claude-md")
    from scree.commands.init import init_repo

    print(inert(init_repo(settings_for(args).folder, client or "claude", here=args.here, force=args.force)))
    return EXIT_OK


def _init_block(args: argparse.Namespace, which: str) -> int:
    """`scree init --agents-md|--claude-md [--check|--remove]` (issue 36)."""
    if args.check and args.remove:
        raise UsageError("--check and --remove do different things: give one")
    from scree.commands.agents_block import update_block

    outcome = update_block(settings_for(args), which, check=args.check, remove=args.remove, here=args.here)
    print(inert(outcome.message), file=sys.stderr if outcome.code else sys.stdout)
    return outcome.code


def cmd_config(args: argparse.Namespace) -> int:
    from scree.commands.settings_view import Origins, render_rows, settings_rows

    settings = settings_for(args)
    origins = Origins(os.environ, args.from_settings_file, notes_flag=bool(args.notes), db_flag=bool(args.db))
    rows = settings_rows(settings, origins, settings_file_path())
    if args.json:
        listed = [{"name": r.name, "value": r.value, "source": r.source} for r in rows]
        print(json_inert(json.dumps(listed, ensure_ascii=False)))
    else:
        print(inert(render_rows(rows)))
    return EXIT_OK


def _index_list(args: argparse.Namespace, home: Path, url: str | None) -> int:
    """`scree index list`: this machine's indexes, and the database's collections when one is set (issue 31)."""
    from scree.index import registry as indexes

    found = indexes.list_indexes(home)
    listed_json = [indexes.as_json(info) for info in found] if args.json else []
    shown = ""
    if url is not None:  # psycopg is imported only where a database is named (no HTTP/TLS stack for SQLite users)
        from scree.index import collections as shared

        collections = shared.list_collections(url)
        listed_json += [{"collection": True, **shared.as_json(info)} for info in collections]
        shown = shared.render_collections(url, collections)
    if args.json:
        print(json_inert(json.dumps(listed_json, ensure_ascii=False)))
        return EXIT_OK
    bound = env_number(os.environ, "SCREE_VECTOR_CACHE_MB", DEFAULT_VECTOR_CACHE_MB)
    cache = indexes.describe_vector_cache(home, bound)
    print(inert(indexes.render_list(found, indexes_dir(home)) + "\n" + cache.line()))
    if shown:
        print(inert(shown))
    return EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    from scree.index import registry as indexes
    from scree.paths import data_home

    home = data_home(os.environ)
    url = _database_url_of(args)
    if args.index_command == "list":
        return _index_list(args, home, url)
    if args.collection is not None:
        if url is None:
            raise UsageError("scree index remove --collection: set SCREE_DATABASE_URL or give --database-url")
        from scree.index.collections import remove_collection

        print(inert(remove_collection(url, args.collection)))
        return EXIT_OK
    if args.folder is not None and args.missing:
        raise UsageError("scree index remove: give a FOLDER or --missing, not both")
    if args.folder is None and not args.missing and not args.vectors:
        raise UsageError("scree index remove: give a FOLDER, --missing or --vectors")
    refused: list[str] = []
    if args.folder is not None or args.missing:
        folder = None if args.missing else Path(args.folder).expanduser()
        removal = indexes.remove_indexes(home, folder)
        for line in removal.said:
            print(inert(line))
        refused = removal.refused
    if args.vectors:
        print(inert(indexes.remove_vector_cache(home)))
    for line in refused:  # the others were still removed (issue 25); the run fails at the end
        print(inert(f"scree: {line}"), file=sys.stderr)
    return EXIT_FAIL if refused else EXIT_OK


def _database_url_of(args: argparse.Namespace) -> str | None:
    """`scree index`'s database: --database-url, else SCREE_DATABASE_URL (checked as load_settings checks it)."""
    from scree.config import database_url_setting

    return database_url_setting(os.environ, getattr(args, "database_url", None))


def cmd_completion(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode

    print(shellcode(["scree"], shell=args.shell))
    return EXIT_OK


def cmd_model(args: argparse.Namespace) -> int:
    from scree.embedders.model_install import install_model

    settings = load_settings()
    where = install_model(settings.models_dir, progress=lambda line: print(line, file=sys.stderr))
    print(f"offline model ready in {where}")
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from scree.benchmarks.suite import failed, missed, render_table, run_bench, terminal_progress, to_json

    target = Path(args.json) if args.json else None
    if target is not None and not target.parent.is_dir():
        raise UsageError(f"--json {args.json}: no such directory {str(target.parent)!r}")
    if args.database_url is not None:  # issue 31
        from scree.benchmarks import backends
        from scree.config import database_url_setting

        url = database_url_setting(os.environ, args.database_url)
        assert url is not None
        sizes = (10_000,) if args.quick else backends.DEFAULT_SIZES
        results = backends.run(
            url,
            sizes,
            1.0 if args.quick else 5.0,
            lambda line: print(line, file=sys.stderr),
            crossover=() if args.quick else backends.DEFAULT_CROSSOVER,
        )
        print(backends.render(results))
        if target is not None:
            target.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        return EXIT_OK
    notes = Path(args.notes) if args.notes else None
    what, figures = run_bench(notes, quick=args.quick, progress=terminal_progress(sys.stderr))
    print(render_table(what, figures))
    if target is not None:
        try:
            target.write_text(json.dumps(to_json(figures), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise ScreeError(f"cannot write {args.json}: {exc.strerror}") from None
    return EXIT_FAIL if failed(figures) or (args.check and missed(figures)) else EXIT_OK


COMMANDS = {
    "serve": cmd_serve,
    "watch": cmd_watch,
    "reindex": cmd_reindex,
    "search": cmd_search,
    "status": cmd_status,
    "doctor": cmd_doctor,
    "init": cmd_init,
    "model": cmd_model,
    "config": cmd_config,
    "index": cmd_index,
    "completion": cmd_completion,
    "bench": cmd_bench,
}


def load_settings_file() -> tuple[str, ...]:
    """The user's settings file ($XDG_CONFIG_HOME/scree/env, never the repo's) into this process's environment, for
    every command alike, so reindex, search, status and doctor see the key serve sees; variables already set win."""
    from scree.commands.envfile import load_env_file

    return load_env_file(settings_file_path(), os.environ)


def settings_file_path() -> Path:
    from scree.paths import config_home

    return config_home(os.environ) / "env"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    if "_ARGCOMPLETE" in os.environ:  # the shell asks for completions (`scree completion`): answer and exit
        import argcomplete

        argcomplete.autocomplete(parser)
    args = parser.parse_args(normalise_argv(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if sys.stderr.isatty():
        from scree.commands.progress import LineAwareStream

        sys.stderr = LineAwareStream(sys.stderr)  # a progress line is ended before any other output (R-L1)
    try:
        args.from_settings_file = load_settings_file()
        configure_logging("cli", log_format(os.environ), log_level(os.environ, "warning"))
        code = COMMANDS[args.command](args)
        sys.stdout.flush()  # inside the try: a reader gone before the buffer was written is handled below, not at exit
        return code
    except ScreeError as exc:
        print(f"scree: {inert(redact(str(exc)))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("scree: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`scree search ... | head`): end quietly, as a shell tool does; what is
        # still buffered goes to /dev/null, so the interpreter's last flush at exit has nothing to complain about
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as exc:  # a file scree needs could not be made or read (full disk, permissions, fd limit)
        where = f": {exc.filename}" if exc.filename else ""
        print(inert(f"scree: {redact(exc.strerror or str(exc))}{where}"), file=sys.stderr)
        return EXIT_FAIL


def mcp_main() -> int:
    """`scree-mcp`, what .mcp.json runs: `scree serve` (which, like every command, reads the user's settings file)."""
    return main(["serve", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
