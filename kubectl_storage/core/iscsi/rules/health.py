"""What the rules read off a path, a map or a session (usable, bad, stopped under dm-multipath;
the names findings use) and off multipath.conf (a key's value in force for one array)."""

from __future__ import annotations

from collections.abc import Iterable

from kubectl_storage.core.iscsi.multipath import (
    SCSI_STATES_WITHOUT_IO,
    MultipathMap,
    MultipathPath,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf
from kubectl_storage.core.iscsi.sessions import IscsiSession

# --- path health ---------------------------------------------------------------------------------

BAD_CHECKER = {"faulty", "shaky", "i/o timeout", "disconnected"}
TRANSIENT_CHECKER = {"i/o pending", "delayed"}
USABLE_CHECKER = {"ready", "ghost"}
PRIMARY, SECONDARY = "primary", "secondary"


def is_usable(path: MultipathPath) -> bool:
    return (
        path.dm_state == "active"
        and path.path_state in USABLE_CHECKER
        and path.online_state in {None, "running"}
    )


def has_state_info(path: MultipathPath) -> bool:
    """``multipath -l`` prints ``undef`` for checker states: we cannot judge health from it."""
    return path.path_state != "undef"


def is_bad(path: MultipathPath) -> bool:
    """Failed by dm-multipath, faulty for the checker, or a SCSI device that services no I/O
    (``offline``; ``blocked`` or ``transport-offline`` from the kernel's state, see
    :func:`~kubectl_storage.core.iscsi.multipath.merge_multipath_views`)."""
    return has_state_info(path) and (
        path.dm_state == "failed"
        or path.path_state in BAD_CHECKER
        or path.online_state in SCSI_STATES_WITHOUT_IO
    )


def path_states(path: MultipathPath) -> str:
    """``active ready blocked`` and, for a path dm-multipath still uses while its SCSI device
    services no I/O, what that means."""
    states = f"{path.dm_state} {path.path_state} {path.online_state}"
    if stopped_under_dm(path):
        states += (
            f": dm-multipath still sends I/O down it, but its SCSI device is {path.online_state} "
            "and services none"
        )
    return states


def stopped_under_dm(path: MultipathPath) -> bool:
    """dm-multipath still uses the path while the kernel has stopped its SCSI device."""
    return path.dm_state == "active" and path.online_state in SCSI_STATES_WITHOUT_IO


def map_name(mpath: MultipathMap) -> str:
    return f"{mpath.name} ({mpath.dm or 'no dm'}, {mpath.vendor},{mpath.product})"


def has_no_usable_path(mpath: MultipathMap) -> bool:
    """MP011's condition: the daemon counts no active path, the map has no path left at all (a
    map that lost every path stays while it is open, queueing I/O or failing it), or every
    judged path is unusable. A map printed with lines we could not read is not taken as
    pathless: its paths may be in them."""
    if mpath.active_paths is not None:
        return mpath.active_paths == 0
    if not mpath.paths:
        return not mpath.unread_lines
    judged = [path for path in mpath.paths if has_state_info(path)]
    return bool(judged) and not any(is_usable(path) for path in judged)


LOGGED_IN = {"LOGGED_IN", "LOGGED IN"}


def session_name(session: IscsiSession) -> str:
    portal = session.persistent_portal or session.current_portal or "?"
    return f"session {session.sid} {session.target} @ {portal}"


def multipathed_devices(maps: Iterable[MultipathMap]) -> set[str]:
    return {path.dev for mpath in maps for path in mpath.paths if path.dev}


def effective_value(conf: MultipathConf, key: str, vendor: str, product: str) -> str | None:
    """Config value by precedence overrides > devices > defaults (built-ins not known here)."""
    device = conf.device_for(vendor, product)
    for value in (
        conf.overrides.get(key),
        device.get(key) if device else None,
        conf.defaults.get(key),
    ):
        if value is not None:
            return value
    return None
