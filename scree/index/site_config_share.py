"""Issue 31: after a sync, a team's collection keeps the site's config files as the writer read them from its checkout
(scree.content.site_config), so a server without a checkout takes the same version tree for current."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from scree.content.site_config import read_site_config
from scree.logs import get_logger

if TYPE_CHECKING:
    from scree.store import IndexWriter

log = get_logger(__name__)


def share_site_config(store: IndexWriter, folder: Path, current: str | None) -> None:
    """Record the site's config files with the index, and the `current` version tree this writer was told
    (SCREE_CURRENT_VERSION); nothing for a local one. A failure is logged, never fails the sync: the index is what
    matters."""
    from scree.errors import IndexUnavailableError

    try:
        store.record_site_config(read_site_config(folder, store.paths(), current).to_json())
    except (OSError, ValueError, IndexUnavailableError) as exc:
        log.warning("cannot record the site's config", error=str(exc))
