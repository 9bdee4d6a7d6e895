"""NetApp ``sanlun lun show`` (``all``, the default) and ``sanlun lun show -wwpn``: one row per host
device of an ONTAP LUN, the table ``sanlun lun show -p`` does not print::

    controller(7mode/E-Series)/                     device     host               lun
    vserver(cDOT/FlashRay)   lun-pathname           filename   adapter  protocol  size  product
    ------------------------------------------------------------------------------------------
    SVM_SAN_S                /vol/LUN01_S/LUN01     /dev/sdi   host71   iSCSI     9g    cDOT

(columns narrowed here).
``-wwpn`` puts the target ``wwpn`` after the vserver and drops ``protocol``. The columns are read
from the second header line, so either order works; a row whose fields do not fit the header is
named in ``notes`` (never dropped without a word). Rows are paired with multipath maps by their
``/dev`` node (:func:`devices_by_name`).

Pure: text in, dataclasses out; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.nodes.paste import LineNote, note_line, trim_pasted_lines

__all__ = ["SanlunDevice", "devices_by_name", "looks_like_sanlun_table", "parse_sanlun_lun_show"]


@dataclass(frozen=True)
class SanlunDevice:
    """One host device of an ONTAP LUN: vserver, LUN path, ``/dev`` node (``sdi``), host adapter,
    protocol (``iSCSI``, ``FCP``; None for ``-wwpn``), size, product, target WWPN (``-wwpn``)."""

    vserver: str
    lun_path: str
    device: str
    adapter: str | None
    protocol: str | None
    size: str | None
    product: str | None
    wwpn: str | None = None

    @property
    def ontap_path(self) -> str:
        """``vserver:/vol/…/lun``, as ``sanlun lun show -p`` names a LUN."""
        return f"{self.vserver}:{self.lun_path}"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: vserver, lun_path, device, adapter, protocol, size, product, wwpn."""
        return {
            "vserver": self.vserver,
            "lun_path": self.lun_path,
            "device": self.device,
            "adapter": self.adapter,
            "protocol": self.protocol,
            "size": self.size,
            "product": self.product,
            "wwpn": self.wwpn,
        }


# The header line that names the columns: "vserver(cDOT/FlashRay)  [wwpn]  lun-pathname  filename".
_COLUMNS_LINE = re.compile(r"^\s*(?:vserver|controller)\S*\s+(?:wwpn\s+)?lun-pathname\s+filename\b")
_FIRST_HEADER = re.compile(r"^\s*controller\S*\s+(?:target\s+)?device\s+host\s+lun\s*$")
_RULE = re.compile(r"^\s*-{10,}\s*$")
_COLUMN_NAMES = {
    "lun-pathname": "lun_path",
    "filename": "device",
    "adapter": "adapter",
    "protocol": "protocol",
    "size": "size",
    "product": "product",
    "wwpn": "wwpn",
}


def looks_like_sanlun_table(text: str) -> bool:
    """Whether ``text`` holds the column header of ``sanlun lun show`` or ``-wwpn``."""
    return any(_COLUMNS_LINE.match(line) for line in text.splitlines())


def parse_sanlun_lun_show(
    text: str, notes: list[LineNote] | None = None
) -> tuple[SanlunDevice, ...]:
    """Parse ``sanlun lun show [all]`` or ``sanlun lun show -wwpn`` output.

    Args:
        text: the command's output; prompts and other lines around the table are named in
            ``notes``.
        notes: where to record the lines that are not rows of the table.

    Returns:
        One :class:`SanlunDevice` per row, in printed order.
    """
    text = trim_pasted_lines(text, notes)
    columns: list[str] | None = None
    devices: list[SanlunDevice] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or _RULE.match(line) or _FIRST_HEADER.match(line):
            continue
        if _COLUMNS_LINE.match(line):
            words = line.split()
            columns = ["vserver"] + [_COLUMN_NAMES.get(word.lower(), word) for word in words[1:]]
            continue
        fields = line.split()
        if columns is None or len(fields) != len(columns) or not fields[0][0].isalnum():
            reason = "not a sanlun lun show row" if columns else "before the sanlun table header"
            note_line(notes, number, line, reason)
            continue
        row = dict(zip(columns, fields, strict=True))
        if not row.get("lun_path", "").startswith("/") or not row.get("device"):
            note_line(notes, number, line, "not a sanlun lun show row")
            continue
        devices.append(
            SanlunDevice(
                vserver=row["vserver"],
                lun_path=row["lun_path"],
                device=row["device"].removeprefix("/dev/"),
                adapter=row.get("adapter"),
                protocol=row.get("protocol"),
                size=row.get("size"),
                product=row.get("product"),
                wwpn=row.get("wwpn"),
            )
        )
    return tuple(devices)


def devices_by_name(devices: Iterable[SanlunDevice]) -> dict[str, SanlunDevice]:
    """``sdi`` → its row, to pair the rows with multipath paths or bare iSCSI disks."""
    return {device.device: device for device in devices}
