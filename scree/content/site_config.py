"""The site's config files that speak of its versions (issue 32: Docusaurus `versions.json` and
`docusaurus.config.*`, Hugo's config and config directory, Jekyll's `_config*.yml`, mike's `versions.json`...), read
from a folder once its indexed paths say where a site keeps them. They are not indexed, so a team's collection keeps
them too (issue 31): a server without a checkout reads what the writer read (SiteConfig.to_json / from_json), not
its own empty folder, and takes the same tree for current."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scree.content.versions import (
    CONFIG_NAMES,
    HUGO_CONFIG_DIR,
    HUGO_CONFIG_SUFFIXES,
    INSTANCE_VERSIONS,
    JEKYLL_CONFIG,
    MAX_HUGO_CONFIG_FILES,
    Hint,
    is_jekyll_config,
    is_versions_file,
    parse_hints,
    parse_hugo_config_dir,
)

CONFIG_DEPTH = 2  # config files are looked for in the root and in folders this deep that hold indexed pages
MAX_CONFIG_BYTES = 256 * 1024
SITE_CONFIG_KEY = "site_config"  # the collection's record of them (IndexWriter.record_site_config)


@dataclass(frozen=True, slots=True)
class SiteConfig:
    """The config files found, by the folder that holds them ("" for the root): `files` {folder: [(name, text)]} in
    the order they are read, `hugo` the same of the folder's Hugo config directory; `current`, the current version
    tree its writer was told (SCREE_CURRENT_VERSION), which a server without a checkout takes unless told its own."""

    files: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    hugo: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    current: str | None = None

    def hints(self) -> list[Hint]:
        """What the files say about the site's versions (scree.content.versions.parse_hints)."""
        hints: list[Hint] = []
        for folder in sorted(set(self.files) | set(self.hugo)):
            texts = dict(self.files.get(folder, []))
            for name, text in texts.items():
                siblings = {other: body for other, body in texts.items() if other != name}
                hints += parse_hints(f"{folder}/{name}" if folder else name, text, siblings)
            for name, text in self.hugo.get(folder, []):
                hints += parse_hugo_config_dir("/".join(filter(None, (folder, HUGO_CONFIG_DIR, name))), folder, text)
        return hints

    def to_json(self) -> str:
        record = {"files": self.files, "hugo": self.hugo, "current": self.current}
        return json.dumps(record, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> SiteConfig:
        """The record to_json made; an empty config for none or one that does not read as such."""
        try:
            data = json.loads(text) if text else {}
            files, hugo = (
                {str(folder): [(str(name), str(body)) for name, body in pairs] for folder, pairs in data[kind].items()}
                for kind in ("files", "hugo")
            )
            current = data.get("current")
        except (ValueError, TypeError, AttributeError, KeyError):
            return cls()
        return cls(files, hugo, current if isinstance(current, str) else None)


def config_folders(paths: Iterable[str]) -> set[str]:
    """The root and the folders up to CONFIG_DEPTH deep that hold indexed pages, where a site keeps its config; and
    each Antora component version's folder, however deep (the one above `modules/<module>/pages/`, where its
    antora.yml is)."""
    folders = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        for depth in range(1, min(CONFIG_DEPTH, len(parts)) + 1):
            folders.add("/".join(parts[:depth]))
        head, found, tail = path.partition("/modules/")
        if found and "/pages/" in tail:
            folders.add(head)
    return folders


def read_site_config(root: Path, paths: Iterable[str], current: str | None = None) -> SiteConfig:
    """The site's config files under `root`, where the indexed `paths` say a site keeps them (unreadable files are
    left out: they say nothing), with the `current` version tree this process was told."""
    config = SiteConfig(current=current)
    for folder in sorted(config_folders(paths)):
        texts: dict[str, str] = {}
        base = root / folder if folder else root
        try:  # a Docusaurus docs plugin instance's <id>_versions.json, Jekyll's _config*.yml, beside the site's config
            instances = sorted(file.name for file in base.glob(f"*{INSTANCE_VERSIONS}") if is_versions_file(file.name))
            instances += sorted(file.name for file in base.glob(f"{JEKYLL_CONFIG}*") if is_jekyll_config(file.name))
        except OSError:
            instances = []
        for name in [*sorted(CONFIG_NAMES), *instances]:
            if (text := _config_text(base / name)) is not None:
                texts[name] = text
        if texts:
            config.files[folder] = list(texts.items())
        if hugo := _hugo_config_dir(base):
            config.hugo[folder] = hugo
    return config


def _hugo_config_dir(site: Path) -> list[tuple[str, str]]:
    """(name, text) of the files of a Hugo site's config directory (HUGO_CONFIG_DIR), if it has one."""
    try:
        files = sorted(file for file in (site / HUGO_CONFIG_DIR).iterdir() if file.name.endswith(HUGO_CONFIG_SUFFIXES))[
            :MAX_HUGO_CONFIG_FILES
        ]
    except OSError:  # none, or unreadable: it says nothing
        return []
    return [(file.name, text) for file in files if (text := _config_text(file)) is not None]


def _config_text(file: Path) -> str | None:
    """A config file's text; None where it is missing, unreadable or over MAX_CONFIG_BYTES."""
    try:
        if file.is_file() and file.stat().st_size <= MAX_CONFIG_BYTES:
            return file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        pass
    return None
