"""Issue 31: after a sync, a team's collection keeps the site's config files as the writer read them from its checkout
(scree.content.site_config), so a server without a checkout takes the same version tree for current."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scree.content.site_config import read_site_config
from scree.index.backend import shared
from scree.logs import get_logger

if TYPE_CHECKING:
    from scree.config import Settings
    from scree.store import IndexWriter

log = get_logger(__name__)


def share_site_config(store: IndexWriter, settings: Settings) -> None:
    """Record the site's config files with a team's collection, and the current version tree this writer was told
    (SCREE_CURRENT_VERSION); a local index's readers read the folder, so nothing is read for one. A failure is
    logged, never fails the sync: the index is what matters."""
    if not shared(settings):
        return
    from scree.errors import IndexUnavailableError

    try:
        store.record_site_config(read_site_config(settings.folder, store.paths(), settings.current_version).to_json())
    except (OSError, ValueError, IndexUnavailableError) as exc:
        log.warning("cannot record the site's config", error=str(exc))
