"""dm-multipath topology as frozen dataclasses: maps, path groups, paths; ``to_dict()`` is the
IscsiReport's JSON contract."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: SCSI device states (Linux drivers/scsi/scsi_sysfs.c ``sdev_states``) in which the device
#: services no normal I/O: ``blocked`` while the iSCSI session recovers (I/O waits until the
#: session's recovery timeout, then fails), ``transport-offline`` after it, ``offline``, and the
#: transitional ``created-blocked``, ``quiesce``, ``cancel`` and ``deleted``. Only ``running``
#: (and ``created``, before the first scan) services I/O.
SCSI_STATES_WITHOUT_IO = frozenset(
    {"blocked", "created-blocked", "offline", "transport-offline", "quiesce", "cancel", "deleted"}
)


class MultipathParseError(ValueError):
    """The text is not multipath output we can read (only raised for JSON input)."""


@dataclass(frozen=True)
class MultipathPath:
    """One path (an ``sdX`` or NVMe namespace) of a multipath map.

    ``dm_state`` is the kernel view (active/failed/undef), ``path_state`` the multipathd checker
    view (ready/faulty/ghost/i/o pending/…), ``online_state`` the SCSI device state
    (running/offline/unknown; ``None`` in the old bracket format, which does not print it; the
    kernel's own state, e.g. ``blocked``, after :func:`merge_multipath_views`).
    ``prio``, ``checker``, ``host_adapter`` and ``target`` only come from multipathd JSON.
    """

    hctl: str | None
    dev: str | None
    major_minor: str | None
    dm_state: str
    path_state: str
    online_state: str | None
    prio: int | None = None
    checker: str | None = None
    host_adapter: str | None = None
    target: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: hctl, dev, major_minor, dm_state, path_state, online_state."""
        return {
            "hctl": self.hctl,
            "dev": self.dev,
            "major_minor": self.major_minor,
            "dm_state": self.dm_state,
            "path_state": self.path_state,
            "online_state": self.online_state,
        }


@dataclass(frozen=True)
class PathGroup:
    """A priority group: selector policy, group priority, status (active/enabled/…) and paths."""

    policy: str
    prio: int | None
    status: str
    paths: tuple[MultipathPath, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: policy, prio, status, paths."""
        return {
            "policy": self.policy,
            "prio": self.prio,
            "status": self.status,
            "paths": [path.to_dict() for path in self.paths],
        }


@dataclass(frozen=True)
class MultipathMap:
    """One dm-multipath map (one LUN).

    ``alias`` is ``None`` when the map is named by its WWID. ``failback``, ``queueing`` and
    ``active_paths`` come only from multipathd JSON (``None`` from text); ``action`` is the
    ``create:``/``reload:`` prefix when present.
    """

    wwid: str
    alias: str | None
    dm: str | None
    vendor: str
    product: str
    size: str | None
    features: str
    hwhandler: str
    wp: str | None
    path_groups: tuple[PathGroup, ...] = ()
    action: str | None = None
    failback: str | None = None
    queueing: str | None = None
    active_paths: int | None = None
    unread_lines: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """The name multipath shows first: the alias, or the WWID when there is none."""
        return self.alias or self.wwid

    @property
    def paths(self) -> tuple[MultipathPath, ...]:
        """Every path of every group, in printed order."""
        return tuple(path for group in self.path_groups for path in group.paths)

    def to_dict(self) -> dict[str, Any]:
        """JSON contract: wwid, alias, dm, vendor, product, size, features, hwhandler, wp,
        path_groups."""
        return {
            "wwid": self.wwid,
            "alias": self.alias,
            "dm": self.dm,
            "vendor": self.vendor,
            "product": self.product,
            "size": self.size,
            "features": self.features,
            "hwhandler": self.hwhandler,
            "wp": self.wp,
            "path_groups": [group.to_dict() for group in self.path_groups],
        }
