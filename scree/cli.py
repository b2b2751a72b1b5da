"""The `scree` command: a thin layer that parses flags, calls scree.app and friends, and prints; no logic of its own."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from scree import __version__
from scree.config import Settings, load_settings
from scree.errors import ScreeError, UsageError
from scree.logs import configure_logging
from scree.redact import redact

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2  # R-L1
SINGLE_DASH_LONG = ("notes", "db", "all", "json", "mode", "check")  # the seed's spellings
INIT_CLIENTS = ("claude", "cursor", "vscode", "codex")  # scree.init.CLIENT_NAMES, without importing it for --help


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


def _hit_count(text: str) -> int:
    """`search -k`: a whole number within the search engine's range, else a usage error (exit 2, R-L1)."""
    from scree.search import MAX_K

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_K:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_K}, got {value}")
    return value


def _port(text: str) -> int:
    """`serve --port`: 0-65535, else a usage error (exit 2)."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0-65535): {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="scree",
        description="Search a repository's markdown by meaning. Indexes every markdown file the ignore rules allow "
        "into one SQLite file per folder, and serves search to coding agents over MCP.",
        epilog="Embeddings: with OPENROUTER_API_KEY (or SCREE_API_KEY) set, the OpenAI-compatible API at "
        "SCREE_API_BASE; without a key, the offline model (install it once with `scree model install`).",
    )
    parser.add_argument("--version", action="version", version=f"scree {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("serve", help="run the MCP server on stdin/stdout (what .mcp.json starts), or over HTTP")
    _add_folder_flags(p)
    p.add_argument("--http", action="store_true", help="serve MCP streamable HTTP at /mcp (and GET /healthz)")
    p.add_argument("--host", help="with --http: address to listen on (default 127.0.0.1; others need a token)")
    p.add_argument("--port", type=_port, help="with --http: port (default 8765; 0 picks a free one)")
    p.add_argument(
        "--token-file", metavar="FILE", help="with --http: bearer token file, mode 600 (or set SCREE_HTTP_TOKEN)"
    )
    p.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="with --http: a Host name clients may use besides loopback and the address bound (repeatable)",
    )

    p = sub.add_parser("watch", help="keep the index current in the foreground (for systemd or Docker)")
    _add_folder_flags(p)

    p = sub.add_parser("reindex", help="bring the index up to date now (takes the writer lock)")
    _add_folder_flags(p)
    p.add_argument("--all", action="store_true", help="drop the index and rebuild it (also after a model change)")
    p.add_argument("path", nargs="?", help="re-check one file (relative to the folder) instead of the whole folder")

    p = sub.add_parser("search", help="search the index (the same engine as the MCP tool)")
    _add_folder_flags(p)
    p.add_argument("query", help="what to look for, in natural language")
    p.add_argument("-k", type=_hit_count, default=8, help="how many hits (1-50, default 8)")
    p.add_argument("--mode", choices=("hybrid", "semantic", "keyword"), default="hybrid", help="default: hybrid")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of hit elements")
    p.add_argument(
        "--path",
        metavar="SCOPE",
        help="search only these files: a folder (docs/en/) or a glob (**/api/*.md), relative to the folder",
    )

    p = sub.add_parser("status", help="what the index holds and who keeps it current")
    _add_folder_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--check", action="store_true", help="one line; exit 1 unless the index can be read and a writer keeps it"
    )

    p = sub.add_parser("init", help="opt this repo in: write or merge the committed MCP config entry for scree-mcp")
    p.add_argument("--notes", metavar="DIR", help=f"repo folder ({NOTES_DEFAULT})")
    p.add_argument(
        "--client",
        choices=INIT_CLIENTS,
        default="claude",
        help="claude: .mcp.json (default); cursor: .cursor/mcp.json; vscode: .vscode/mcp.json; "
        "codex: print the stanza for ~/.codex/config.toml",
    )

    p = sub.add_parser("doctor", help="check the installation, the index and the settings")
    _add_folder_flags(p)

    p = sub.add_parser("bench", help="measure memory, handshake, search, sync and edit latency against SPEC §10's bars")
    p.add_argument("--notes", metavar="DIR", help="measure on a copy of the notes in DIR (default: a generated tree)")
    p.add_argument("--json", metavar="FILE", help="also write the figures to FILE as one JSON object")
    p.add_argument("--check", action="store_true", help="exit 1 when a figure misses its bar")
    p.add_argument("--quick", action="store_true", help="fewer samples and no 100k-chunk index: about a minute")

    p = sub.add_parser("model", help="manage the offline embedding model")
    model_sub = p.add_subparsers(dest="model_command", metavar="ACTION", required=True)  # R-L1: none is exit 2
    model_sub.add_parser("install", help="download all-MiniLM-L6-v2 (no PyTorch) and check its sha256")
    return parser


def _progress_printer(stream: object) -> object:
    """R-L1: files and chunks done, rate and ETA on a terminal; nothing when stderr is not a TTY."""
    if not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    started = time.monotonic()

    def show(report: object, total: int) -> None:
        done = getattr(report, "scanned", 0)
        elapsed = max(time.monotonic() - started, 1e-6)
        rate = getattr(report, "bytes_read", 0) / elapsed / 1e6
        eta = (total - done) * elapsed / done if done else 0.0
        chunks = getattr(report, "chunks_embedded", 0)
        sys.stderr.write(f"\r{done}/{total} files, {chunks} chunks embedded, {rate:.1f} MB/s, ETA {eta:.0f}s   ")
        sys.stderr.flush()
        if done == total:
            sys.stderr.write("\n")

    return show


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
    settings = load_settings(notes=args.notes, db=getattr(args, "db", None))
    warning = notes_overridden(os.environ, args.notes, settings.folder)
    if warning is not None:
        print(warning, file=sys.stderr)
    return settings


def cmd_serve(args: argparse.Namespace) -> int:
    if not args.http:
        given = [flag for flag, value in (("--host", args.host), ("--port", args.port), ("--token-file",
                 args.token_file), ("--allow-host", args.allow_host)) if value not in (None, [])]  # fmt: skip
        if given:
            raise UsageError(f"{', '.join(given)}: only with --http (without it, serve speaks MCP on stdin/stdout)")
        from scree.supervisor import serve

        return serve(settings_for(args))
    from scree.reader_proc.http import HttpOptions
    from scree.supervisor import serve_http

    options = HttpOptions.load(args.host, args.port, args.token_file, tuple(args.allow_host), os.environ)
    return serve_http(settings_for(args), options)


def cmd_watch(args: argparse.Namespace) -> int:
    from scree.writer_proc.watch import run_watch

    settings = settings_for(args)
    configure_logging("watch", settings.log_format, settings.log_level)  # R-P5: stderr, info by default
    return run_watch(settings)


def cmd_reindex(args: argparse.Namespace) -> int:
    from scree import app

    settings = settings_for(args)
    outcome = app.reindex(settings, full=args.all, path=args.path, progress=_progress_printer(sys.stderr))  # type: ignore[arg-type]
    print(outcome.message)
    for path, reason in outcome.report.skipped if args.path is None else ():  # one path: the message says why
        print(f"  skipped {path}: {reason}")
    if outcome.report.outage:
        raise ScreeError(
            f"embeddings API unavailable ({outcome.report.outage}); {outcome.report.deferred} files keep their "
            'old rows: run "scree reindex" again later'
        )
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    from scree import app
    from scree.render import render_hits

    settings = settings_for(args)
    result = app.search(settings, args.query, args.k, args.mode, args.path)
    if args.json:
        hits = [
            {
                "n": n,
                "path": h.path,
                "start": h.start,
                "end": h.end,
                "heading": h.heading,
                "score": round(h.score, 6),
                "text": h.text,
                "stale": h.stale,
                "also": list(h.also),
            }
            for n, h in enumerate(result.hits, start=1)
        ]
        print(json.dumps({"hits": hits, "note": result.note}, ensure_ascii=False))
    else:
        print(render_hits(result.hits, result.notes))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from scree import app

    if args.check:  # the container's HEALTHCHECK
        from scree.health import health_line, index_health

        healthy, line = health_line(index_health(settings_for(args)))
        if not healthy:
            raise ScreeError(line)
        print(line)
        return EXIT_OK
    info = app.status(settings_for(args))
    if args.json:
        print(json.dumps(info))
    else:
        for key, value in info.items():
            print(f"{key.replace('_', ' ')}: {value if value is not None else '-'}")
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from scree.doctor import run_doctor

    return run_doctor(settings_for(args), print)


def cmd_init(args: argparse.Namespace) -> int:
    from scree.init import init_repo

    print(init_repo(settings_for(args).folder, args.client))
    return EXIT_OK


def cmd_model(args: argparse.Namespace) -> int:
    from scree.model_install import install_model

    settings = load_settings()
    where = install_model(settings.models_dir, progress=lambda line: print(line, file=sys.stderr))
    print(f"offline model ready in {where}")
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from scree.benchmarks.suite import failed, missed, render_table, run_bench, terminal_progress, to_json

    target = Path(args.json) if args.json else None
    if target is not None and not target.parent.is_dir():
        raise UsageError(f"--json {args.json}: no such directory {str(target.parent)!r}")
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
    "bench": cmd_bench,
}


def load_settings_file() -> None:
    """The user's settings file ($XDG_CONFIG_HOME/scree/env, never the repo's) into this process's environment, for
    every command alike, so reindex, search, status and doctor see the key serve sees; variables already set win."""
    from scree.envfile import load_env_file
    from scree.paths import config_home

    load_env_file(config_home(os.environ) / "env", os.environ)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(normalise_argv(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        load_settings_file()
        configure_logging(
            "cli", os.environ.get("SCREE_LOG_FORMAT", "console"), os.environ.get("SCREE_LOG_LEVEL", "warning")
        )
        return COMMANDS[args.command](args)
    except ScreeError as exc:
        print(f"scree: {redact(str(exc))}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("scree: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`scree search ... | head`): not an error worth a traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAIL


def mcp_main() -> int:
    """`scree-mcp`, what .mcp.json runs: `scree serve` (which, like every command, reads the user's settings file)."""
    return main(["serve", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
