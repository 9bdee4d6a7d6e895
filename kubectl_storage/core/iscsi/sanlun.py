"""NetApp ``sanlun lun show -p`` (Linux Host Utilities): ONTAP's view of each LUN's host paths.

Each LUN block starts with ``ONTAP Path: <vserver>:<lun path>`` followed by ``Key: value`` lines
(LUN, LUN Size, Product, Host Device, Multipath Policy, Multipath Provider) and a table::

    --------- ---------- ------- ------------ ------------------
    host      server
    path      path       /dev/   host         vserver
    state     type       node    adapter      LIF
    --------- ---------- ------- ------------ ------------------
    up        primary    sda     host0        iscsi_1
    up        secondary  sdb     host1        iscsi_2

``path type`` is ONTAP's ALUA view: ``primary`` paths go to the node that owns the LUN
(active/optimized), ``secondary`` through its HA partner. ``Host Device`` is the dm-multipath map
(WWID or alias, sometimes followed by ``(dm-N)``).

``sanlun lun show -p -v`` prints seven columns (dm-mp state, host path state, path type, node,
``host:chan:id:lun``, LIF, ``major:minor``): the same path is read from them, its adapter
``host<N>`` taken from the H of H:C:T:L.

Pasted output: a LUN path a mail client wrapped onto the next line is rejoined, and a table row
or ``Key: value`` line that cannot be read (a field dropped) is skipped; both go to ``notes``.

Pure: text in, dataclasses out; no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.nodes.paste import REJOINED, LineNote, note_line

__all__ = ["SanlunLun", "SanlunPath", "parse_sanlun_lun_show_p"]


@dataclass(frozen=True)
class SanlunPath:
    """One row of the path table: host path state, ONTAP path type, ``/dev`` node, adapter, LIF."""

    state: str
    path_type: str
    device: str
    host_adapter: str
    lif: str

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: state, path_type, device, host_adapter, lif."""
        return {
            "state": self.state,
            "path_type": self.path_type,
            "device": self.device,
            "host_adapter": self.host_adapter,
            "lif": self.lif,
        }


@dataclass(frozen=True)
class SanlunLun:
    """One ONTAP LUN as the host sees it, with its paths."""

    vserver: str
    lun_path: str
    lun: int | None
    lun_size: str | None
    product: str | None
    host_device: str | None
    dm_device: str | None
    multipath_policy: str | None
    multipath_provider: str | None
    paths: tuple[SanlunPath, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: vserver, lun_path, lun, lun_size, product, host_device, dm_device,
        multipath_policy, multipath_provider, paths."""
        return {
            "vserver": self.vserver,
            "lun_path": self.lun_path,
            "lun": self.lun,
            "lun_size": self.lun_size,
            "product": self.product,
            "host_device": self.host_device,
            "dm_device": self.dm_device,
            "multipath_policy": self.multipath_policy,
            "multipath_provider": self.multipath_provider,
            "paths": [path.to_dict() for path in self.paths],
        }


_KV = re.compile(r"^\s*(?P<key>[A-Za-z][A-Za-z -]*?):\s*(?P<value>.*?)\s*$")
_ROW = re.compile(
    r"^(?P<state>\S+)\s+(?P<type>\S+)\s+(?P<dev>\S+)\s+(?P<adapter>\S+)\s+(?P<lif>\S+)\s*$"
)
# ``sanlun lun show -p -v``: dm-mp state, host path state, path type, /dev node, host:chan:id:lun,
# vserver LIF, major:minor.
_ROW_VERBOSE = re.compile(
    r"^(?P<dm>\S+)\s+(?P<state>\S+)\s+(?P<type>primary|secondary)\s+(?P<dev>\S+)"
    r"\s+(?P<hctl>\d+):\d+:\d+:\d+\s+(?P<lif>\S+)\s+\d+:\d+\s*$"
)
_DASHES = re.compile(r"^-+(?:\s+-+)+\s*$")
_HOST_DEVICE = re.compile(r"^(?P<name>[^\s(]+)\s*(?:\((?P<dm>dm-\d+)\))?$")
_HEADER_WORDS = {"host", "path", "state"}


def _lun_from(values: dict[str, str], rows: list[SanlunPath]) -> SanlunLun:
    vserver, _, lun_path = values.get("ONTAP Path", "").partition(":")
    device = values.get("Host Device")
    host_device, dm = device, None
    if device:
        match = _HOST_DEVICE.match(device)
        if match:
            host_device, dm = match.group("name"), match.group("dm")
    lun = values.get("LUN")
    return SanlunLun(
        vserver=vserver,
        lun_path=lun_path,
        lun=int(lun) if lun and lun.isdigit() else None,
        lun_size=values.get("LUN Size"),
        product=values.get("Product"),
        host_device=host_device,
        dm_device=dm,
        multipath_policy=values.get("Multipath Policy"),
        multipath_provider=values.get("Multipath Provider"),
        paths=tuple(rows),
    )


def parse_sanlun_lun_show_p(
    text: str, notes: list[LineNote] | None = None
) -> tuple[SanlunLun, ...]:
    """Parse ``sanlun lun show -p`` output.

    Args:
        text: the command's output (one or many LUN blocks).
        notes: where to record rejoined and skipped lines.

    Returns:
        One :class:`SanlunLun` per ``ONTAP Path:`` block, in printed order.
    """
    luns: list[SanlunLun] = []
    values: dict[str, str] | None = None
    rows: list[SanlunPath] = []
    dash_lines = 0
    last_key: tuple[str, int] | None = None  # the Key: value line a wrapped value would go on
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if re.match(r"^\s*ONTAP Path:", line):
            if values is not None:
                luns.append(_lun_from(values, rows))
            values, rows, dash_lines = {}, [], 0
        if values is None or not line.strip():
            last_key = None
            continue
        if _DASHES.match(line):
            dash_lines += 1
            continue
        if dash_lines >= 2:  # the table body follows the second rule line
            verbose = _ROW_VERBOSE.match(line)
            row = None if verbose else _ROW.match(line)
            if verbose:
                rows.append(
                    SanlunPath(
                        state=verbose.group("state"),
                        path_type=verbose.group("type"),
                        device=verbose.group("dev"),
                        host_adapter=f"host{verbose.group('hctl')}",
                        lif=verbose.group("lif"),
                    )
                )
            elif row and row.group("state") not in _HEADER_WORDS:
                rows.append(SanlunPath(*row.group("state", "type", "dev", "adapter", "lif")))
            elif not row:
                note_line(notes, number, line, "not a sanlun path row")
            continue
        if dash_lines == 0:
            kv = _KV.match(line)
            if kv:
                values.setdefault(kv.group("key"), kv.group("value"))
                last_key = (kv.group("key"), number)
            elif last_key is not None and last_key[0] == "ONTAP Path" and " " not in line.strip():
                # A LUN path wrapped onto the next line (paths hold no spaces).
                key, first = last_key
                values[key] = values.get(key, "") + line.strip()
                if notes is not None:
                    if notes and notes[-1].action == REJOINED and notes[-1].line == first:
                        notes.pop()  # the same value wrapped once more
                    notes.append(
                        LineNote(
                            first,
                            f"ONTAP Path: {values[key]}",
                            REJOINED,
                            f"one line wrapped over {number - first + 1}",
                            number,
                        )
                    )
            else:
                note_line(notes, number, line, "not a sanlun lun show -p line")
    if values is not None:
        luns.append(_lun_from(values, rows))
    return tuple(luns)
