"""open-iscsi sessions and node records: parsers for ``iscsiadm`` output and sysfs dumps.

Inputs understood (all become :class:`IscsiSession` / :class:`IscsiNodeRecord`):

* ``iscsiadm -m session`` — ``tcp: [1] 10.0.0.1:3260,1 iqn… (non-flash)``;
* ``iscsiadm -m session -P 1`` / ``-P 3`` — Target, Current/Persistent Portal, Iface …, SID,
  the three state lines, timeouts, CHAP, negotiated parameters and attached SCSI disks;
* ``iscsiadm -m node`` and ``iscsiadm -m discovery`` — ``10.0.0.1:3260,1 iqn…``; also
  ``iscsiadm -m node -P 1`` (``Target:`` / ``Portal:``) and the records of ``iscsiadm -m node -o
  show`` (``# BEGIN RECORD`` … ``node.name = …``; only the name, portal and tag are read);
* a sysfs dump (format below) of ``/sys/class/iscsi_session/*`` and ``iscsi_connection/*``.

IPv6 portals are bracketed (``[fd00::1]:3260,1``); portals are kept as ``address:port`` strings
with the target portal group tag (``tpgt``) split off.

CHAP secrets are never kept: password lines/files are skipped without reading their values, and
even usernames are reduced to "present or not" (``chap_enabled``, ``chap_mutual``).

Captured text is often pasted: the parsers take ``notes`` (a list of
:class:`~kubectl_storage.core.nodes.mounts.LineNote`) and record there each line they skipped or
rejoined instead of refusing the text; a CHAP line is never quoted in a note. Portals that are
not addresses (``<netapp iscsi ip address node A>:3260,1072``, ``truenas.[REDACTED]:3260,1``:
redacted before posting) are kept as written, with their port and tag split off.

Sysfs dump format (written by the node collection script)
---------------------------------------------------------
One ``<path>: <value>`` line per file; ``#`` lines and blank lines are ignored; the path may be
absolute (``/sys/class/…``) or start at ``iscsi_session``/``iscsi_connection``::

    /sys/class/iscsi_session/session1/targetname: iqn.1992-08.com.netapp:sn.1:vs.4
    /sys/class/iscsi_session/session1/state: LOGGED_IN
    /sys/class/iscsi_session/session1/recovery_tmo: 5
    /sys/class/iscsi_session/session1/tpgt: 1027
    /sys/class/iscsi_session/session1/ifacename: default
    /sys/class/iscsi_session/session1/initiatorname: iqn.1994-05.com.redhat:node-a
    /sys/class/iscsi_session/session1/username: (null)
    /sys/class/iscsi_session/session1/username_in: (null)
    /sys/class/iscsi_session/session1/device/target2:0:0/2:0:0:1/block: sdc
    /sys/class/iscsi_session/session1/device/target2:0:0/2:0:0:1/state: running
    /sys/class/iscsi_connection/connection1:0/persistent_address: 10.0.0.10
    /sys/class/iscsi_connection/connection1:0/persistent_port: 3260
    /sys/class/iscsi_connection/connection1:0/address: 10.0.0.10
    /sys/class/iscsi_connection/connection1:0/port: 3260
    /sys/class/iscsi_connection/connection1:0/state: up

The ``…/<H:C:T:L>/block`` line names the disk under that LUN (``ls …/block``), and
``…/<H:C:T:L>/state`` is that SCSI device's state. An empty username or ``(null)`` means unset.
The collector should not dump ``password``/``password_in`` (they need CAP_SYS_ADMIN anyway);
if it does, the reader drops them.

:func:`detect_iscsi_format` tells which parser a captured file needs (for ``--from-file``).
Pure: text in, dataclasses out; no I/O.

The package: :mod:`.model` (the dataclasses and portals), :mod:`.iscsiadm` (``-m session``,
``-m node``), :mod:`.detail` (``-P 1``/``-P 3``), :mod:`.sysfs`, :mod:`.detect`, and
:mod:`.values` (what the parsers share).
"""

from kubectl_storage.core.iscsi.sessions.detail import parse_iscsiadm_session_detail
from kubectl_storage.core.iscsi.sessions.detect import detect_iscsi_format
from kubectl_storage.core.iscsi.sessions.iscsiadm import parse_iscsiadm_node, parse_iscsiadm_session
from kubectl_storage.core.iscsi.sessions.model import (
    IscsiDisk,
    IscsiInputFormat,
    IscsiNodeRecord,
    IscsiSession,
    split_portal,
)
from kubectl_storage.core.iscsi.sessions.sysfs import parse_iscsi_sysfs_dump, scsi_device_states

__all__ = [
    "IscsiDisk",
    "IscsiInputFormat",
    "IscsiNodeRecord",
    "IscsiSession",
    "detect_iscsi_format",
    "parse_iscsi_sysfs_dump",
    "parse_iscsiadm_node",
    "parse_iscsiadm_session",
    "parse_iscsiadm_session_detail",
    "scsi_device_states",
    "split_portal",
]
