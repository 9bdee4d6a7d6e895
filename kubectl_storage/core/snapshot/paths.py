"""Paths inside a mounted snapshot, and the ``SNAP:PATH`` references `snapshot cp` takes.

Separate from the listings of a mounted snapshot (:mod:`kubectl_storage.core.snapshot.listing`):
this only maps what the user typed to a path in the pod, refusing paths that leave the snapshot.
"""

from __future__ import annotations

import posixpath

#: Where browse and cp pods mount the restored snapshot (read-only).
SNAPSHOT_MOUNT = "/snapshot"


def snapshot_path(path: str, root: str = SNAPSHOT_MOUNT) -> str:
    """The absolute path in the pod for ``path`` inside the snapshot ("" and "/" are the root).

    Raises:
        ValueError: when the path leaves the snapshot (``../..``).
    """
    joined = posixpath.normpath(posixpath.join(root, path.lstrip("/")))
    if joined != root and not joined.startswith(root + "/"):
        raise ValueError(f"path {path!r} leads outside the snapshot")
    return joined


def parse_snapshot_ref(text: str) -> tuple[str, str]:
    """Split ``SNAP:PATH`` (as `snapshot cp` takes it) into the snapshot name and the path.

    Raises:
        ValueError: when there is no ``:`` or no snapshot name.
    """
    name, sep, path = text.partition(":")
    if not sep or not name:
        raise ValueError(f"{text!r} is not SNAPSHOT:PATH (example: data-snap:/var/log/app.log)")
    return name, path
