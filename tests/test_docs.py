"""The shipped documentation: every link in the README and docs/ resolves (files and #anchors), `--help` names no
file that is not there, the LICENSE is the one pyproject names, the README's first command answers from docs/, and
its layout names every module of the package."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from cli_helpers import Run, run_scree, scree_env

REPO = Path(__file__).resolve().parents[1]
TOP_PAGES = sorted(set(REPO.glob("*.md")) - {REPO / "README.md"})  # CHANGELOG.md and the like
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *TOP_PAGES]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]+`")  # a link written as code is an example, not a link


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped (not - or _), spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    return {github_anchor(line.lstrip("#")) for line in text.splitlines() if re.match(r"#{1,6} ", line)}


def test_docs_folder_has_the_four_pages() -> None:
    docs = {p.name for p in (REPO / "docs").glob("*.md")}
    assert docs >= {"how-it-works.md", "configuration.md", "troubleshooting.md", "design.md"}
    design = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    assert all(f"- {rid} " in design for rid in ("R-P1", "R-F1", "R-L1", "R-M10", "R-W4"))  # the requirement ids


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page: Path) -> None:
    text = CODE_SPAN.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        assert linked.exists(), f"{page.name}: {target} does not exist"
        if anchor:
            assert linked.is_file() and anchor in anchors(linked), f"{page.name}: no heading for #{anchor} in {linked}"
    assert "SPEC" not in text, f"{page.name} points at SPEC, which is not shipped"


def test_help_pages_name_no_missing_file(tmp_path: Path, cli: Run) -> None:
    """Every --help page, run in this process (the cli fixture): the subject is its words."""
    env = scree_env(tmp_path / "data")
    commands = [
        [],
        ["serve"],
        ["watch"],
        ["reindex"],
        ["search"],
        ["status"],
        ["init"],
        ["doctor"],
        ["config"],
        ["bench"],
        ["model"],
        ["index"],
        ["index", "list"],
        ["index", "remove"],
        ["completion"],
    ]
    for command in commands:
        proc = cli(*command, "--help", env=env)
        assert proc.returncode == 0, (command, proc.stderr)
        assert "SPEC" not in proc.stdout and "§" not in proc.stdout, command
        for named in re.findall(r"\b[\w./-]+\.md\b", proc.stdout):
            assert named in (".mcp.json", "AGENTS.md", "CLAUDE.md") or (REPO / named).exists(), (command, named)


LAYOUT_ENTRY = re.compile(r"^  (\S+/)", re.M)  # a folder's entry in the README's tree: "  content/   ..."
LISTED_ELSEWHERE = {"benchmarks"}  # scree bench's modules, one per figure: its --help and suite.py name them


def test_the_readmes_layout_names_every_module() -> None:
    """Each module of scree/ is named in the README's tree, a package's under its folder's entry (issue 37: the tree
    had drifted from the package, a whole backend missing)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    tree = readme[readme.index("```\nscree/\n") : readme.index("```", readme.index("```\nscree/\n") + 3)]
    entries = list(LAYOUT_ENTRY.finditer(tree))
    sections = {
        match.group(1).rstrip("/"): tree[match.end() : entries[i + 1].start() if i + 1 < len(entries) else len(tree)]
        for i, match in enumerate(entries)
    }
    package = REPO / "scree"
    missing = [
        f"scree/{path.name}" for path in package.glob("*.py") if path.stem != "__init__" and path.name not in tree
    ]
    for folder in sorted(p for p in package.iterdir() if (p / "__init__.py").is_file()):
        if folder.name in LISTED_ELSEWHERE:
            assert folder.name in sections
            continue
        text = sections.get(folder.name, "")
        missing += [
            f"scree/{folder.name}/{path.name}"
            for path in sorted(folder.glob("*.py"))
            if path.stem != "__init__" and not re.search(rf"\b{re.escape(path.name)}", text)
        ]
    assert missing == []


def test_license_is_the_mit_license_pyproject_names() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text


def _first_command() -> list[list[str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)\n```", readme, re.S)
    assert block is not None
    return [shlex.split(part) for part in block.group(1).split(" && ")]


def test_the_readmes_first_command_answers_from_the_docs(tmp_path: Path, installed: Path) -> None:
    steps = _first_command()
    assert [step[1:3] for step in steps[-2:]] == [["reindex", "--notes"], ["search", "--notes"]]
    search = steps[-1][2:]
    assert search[:3] == ["--notes", ".", "-k"] and search[3] == "3"
    clone = tmp_path / "clone"  # what a clean clone holds of markdown: the README, docs/ and the other top-level pages
    for page in PAGES:
        (clone / page.relative_to(REPO)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, clone / page.relative_to(REPO))
    subprocess.run(["git", "init", "-q", str(clone)], check=True, timeout=30)
    env = scree_env(tmp_path / "data", SCREE_LOCAL_MODEL_DIR=str(installed))
    assert run_scree("reindex", "--notes", ".", env=env, cwd=clone, timeout=300).returncode == 0
    proc = run_scree("search", *search[:-1], "--json", search[-1], env=env, cwd=clone, timeout=120)
    assert proc.returncode == 0, proc.stderr
    hits = json.loads(proc.stdout)["hits"]
    assert len(hits) == 3 and hits[0]["path"].startswith("docs/"), hits
    assert "score" in hits[0]["heading"].lower() and len(hits[0]["text"]) < 1000  # a short, real answer
