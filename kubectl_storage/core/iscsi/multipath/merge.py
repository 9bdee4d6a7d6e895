"""The node's one view of its maps: multipathd JSON completed with ``multipath -ll``, and the
kernel's SCSI device states."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from kubectl_storage.core.iscsi.multipath.model import (
    SCSI_STATES_WITHOUT_IO,
    MultipathMap,
    MultipathPath,
)

# --- one view of the maps ---------------------------------------------------------------------


def _complete(mpath: MultipathMap, text_map: MultipathMap | None) -> MultipathMap:
    """Fill what multipathd JSON lacks (size, H:C:T:L) from the same map in ``multipath -ll``."""
    if text_map is None:
        return mpath
    hctl = {path.dev: path.hctl for path in text_map.paths if path.dev}
    groups = tuple(
        replace(
            group,
            paths=tuple(
                replace(path, hctl=path.hctl or hctl.get(path.dev or "")) for path in group.paths
            ),
        )
        for group in mpath.path_groups
    )
    return replace(mpath, size=mpath.size or text_map.size, path_groups=groups)


def _with_device_state(path: MultipathPath, scsi_states: Mapping[str, str]) -> MultipathPath:
    state = scsi_states.get(path.dev or "")
    if state in SCSI_STATES_WITHOUT_IO and path.dm_state == "active":
        return replace(path, online_state=state)
    return path


def merge_multipath_views(
    json_maps: Iterable[MultipathMap],
    text_maps: Iterable[MultipathMap] = (),
    scsi_states: Mapping[str, str] | None = None,
) -> tuple[MultipathMap, ...]:
    """The node's maps: multipathd JSON (queueing, failback, priorities), completed with the same
    maps of ``multipath -ll`` (size, H:C:T:L); ``multipath -ll`` alone when JSON gave none.

    With ``scsi_states`` (``{"sdb": "blocked"}``, the kernel's SCSI device states from sysfs or
    ``iscsiadm -P 3``), a path that dm-multipath still has ``active`` but whose device is in a
    state that services no I/O (:data:`SCSI_STATES_WITHOUT_IO`) gets that state as its
    ``online_state``. multipath's own column cannot say it: it prints ``offline`` only for the
    kernel's ``offline`` and ``running`` for everything else (libmultipath print.c
    ``snprint_offline``, discovery.c ``path_offline``), and multipathd's JSON holds what its
    checker saw last. Real case (tests/nodelab, portal-drop): a dropped portal's session in
    recovery, sysfs ``blocked``, multipathd JSON ``active ready running``, ``multipath -ll``
    ``active i/o pending running`` (path_offline maps ``blocked`` to pending): I/O sent down that
    path waits for the session's recovery timeout. A path dm-multipath has already failed keeps
    multipath's view unchanged.
    """
    json_list, text_list = list(json_maps), list(text_maps)
    if json_list:
        by_wwid = {mpath.wwid: mpath for mpath in text_list}
        maps = [_complete(mpath, by_wwid.get(mpath.wwid)) for mpath in json_list]
    else:
        maps = text_list
    if not scsi_states:
        return tuple(maps)
    return tuple(
        replace(
            mpath,
            path_groups=tuple(
                replace(
                    group,
                    paths=tuple(_with_device_state(path, scsi_states) for path in group.paths),
                )
                for group in mpath.path_groups
            ),
        )
        for mpath in maps
    )
