"""What a node-inspection pod runs, and how its output is split back into sections.

One exec per node collects everything (round trips dominate when there are hundreds of nodes).
The script only reads: /proc/1/* of the host (the pod has hostPID), sysfs, and /host (the host
root, mounted read-only). Host tools (multipath, multipathd, iscsiadm) run with ``chroot /host``
only when they exist. Password lines are removed from config files before they leave the node,
and CHAP secrets in sysfs are never read.
"""

from __future__ import annotations

import re

from kubectl_storage.core.nodes.kernel_health import HEADER as KERNEL_LOG_HEADER
from kubectl_storage.core.nodes.kernel_health import PREFILTER as KERNEL_LOG_PREFILTER

SECTION_MARKER = "==> kubectl-storage:"

#: Sections every inspection collects, and those only the iSCSI command needs.
MOUNT_SECTIONS = ("kernel", "mountinfo", "mountstats", "nfs-params", "nfs-identity", "kernel-log")
ISCSI_SECTIONS = (
    "kernel",
    "tools",
    "iscsi-sysfs",
    "block-devices",
    "multipathd-json",
    "multipath-ll",
    "iscsiadm-session",
    "iscsiadm-node",
    "multipath-conf",
    "multipath-config",
    "iscsid-conf",
    "initiator-name",
)

#: Printed instead of a config file's content when the file does not exist on the node, so
#: "absent" and "empty" can be told apart.
ABSENT_MARKER = "# kubectl-storage: file absent"

_SCRIPT_PARTS = {
    "kernel": "uname -r",
    "mountinfo": "cat /proc/1/mountinfo",
    "mountstats": "cat /proc/1/mountstats",
    "nfs-params": (
        "for f in /sys/module/nfs/parameters/* /sys/module/sunrpc/parameters/*; do "
        'kv "$f"; done; true'
    ),
    # The kernel log, read-only, from the first source that answers: /dev/kmsg without blocking
    # (privileged pods), the host's journal (this boot; privileged pods can chroot), else dmesg
    # (syslog(2): CAP_SYSLOG). Only the lines kernel_health.PREFILTER keeps leave the node (a
    # kmsg record's property lines go with it); the header gives the clock to date them by.
    "kernel-log": (
        "u=$(cut -d' ' -f1 /proc/uptime); b=$(sed -n 's/^btime //p' /proc/stat); o=; s=none; e=; "
        "if [ -r /dev/kmsg ]; then o=$(dd if=/dev/kmsg iflag=nonblock bs=65536 2>/dev/null); "
        '[ -n "$o" ] && s=kmsg; fi; '
        'if [ "$s" = none ] && [ -x /host/usr/bin/journalctl ] && chroot /host true 2>/dev/null; '
        "then o=$(chroot /host journalctl -k -b -o short-iso --no-pager -q 2>/dev/null); "
        '[ -n "$o" ] && s=journal; fi; '
        'if [ "$s" = none ]; then if o=$(dmesg 2>&1); then s=dmesg; '
        'else e=$(printf "%s" "$o" | head -n 1); o=; fi; fi; '
        f"printf '{KERNEL_LOG_HEADER} source=%s uptime=%s btime=%s%s\\n' "
        '"$s" "$u" "$b" "${e:+ error=$e}"; '
        "printf '%s\\n' \"$o\" | awk -v p='" + KERNEL_LOG_PREFILTER + "' "
        "'/^ / { if (k) print; next } { k = (tolower($0) ~ p); if (k) print }'"
    ),
    # What the node's NFSv4 client calls itself (NFS120, judged across nodes): the static
    # hostname and the sysfs uniquifier of the host's network namespace (/host/sys is the host's
    # sysfs; the pod's own /sys would show its own namespace).
    "nfs-identity": ("kv /host/etc/hostname; kv /host/sys/fs/nfs/net/nfs_client/identifier; true"),
    "tools": (
        "for t in multipath multipathd iscsiadm sanlun; do p=; "
        "for d in /usr/sbin /sbin /usr/bin /bin; do "
        '[ -x "/host$d/$t" ] && p="$d/$t" && break; done; '
        'printf "tool %s: %s\\n" "$t" "${p:-absent}"; '
        "done; for d in multipathd iscsid; do "
        'if pgrep -x "$d" >/dev/null 2>&1; then s=running; else s=stopped; fi; '
        'printf "daemon %s: %s\\n" "$d" "$s"; done'
    ),
    # Our own "path: value" dump (see core/iscsi.py); password files are never opened.
    "iscsi-sysfs": (
        'for s in /sys/class/iscsi_session/session*; do [ -d "$s" ] || continue; '
        "for a in targetname state recovery_tmo tpgt ifacename initiatorname username "
        'username_in; do kv "$s/$a"; '
        'done; for l in "$s"/device/target*/*:*:*:*; do [ -d "$l" ] || continue; '
        'printf "%s: %s\\n" "$l/block" "$(ls "$l/block" 2>/dev/null)"; '
        'printf "%s: %s\\n" "$l/state" "$(cat "$l/state" 2>/dev/null)"; done; done; '
        'for c in /sys/class/iscsi_connection/connection*; do [ -d "$c" ] || continue; '
        "for a in persistent_address persistent_port address port state; do "
        'kv "$c/$a"; done; done; true'
    ),
    "block-devices": (
        "for d in /sys/block/*; do n=${d##*/}; "
        'printf "%s holders=%s slaves=%s" "$n" "$(ls "$d/holders" 2>/dev/null | tr "\\n" ",")" '
        '"$(ls "$d/slaves" 2>/dev/null | tr "\\n" ",")"; '
        '[ -r "$d/dm/name" ] && printf " dm_name=%s dm_uuid=%s" "$(cat "$d/dm/name")" '
        '"$(cat "$d/dm/uuid")"; printf "\\n"; done; true'
    ),
    "multipathd-json": (
        "if [ -x /host/usr/sbin/multipathd ] || [ -x /host/sbin/multipathd ]; then "
        "chroot /host multipathd show maps json 2>&1; fi; true"
    ),
    "multipath-ll": (
        "if [ -x /host/usr/sbin/multipath ] || [ -x /host/sbin/multipath ]; then "
        "chroot /host multipath -ll 2>&1; fi; true"
    ),
    "iscsiadm-session": (
        "if [ -x /host/usr/sbin/iscsiadm ] || [ -x /host/sbin/iscsiadm ]; then "
        "chroot /host iscsiadm -m session -P 3 2>&1; fi; true"
    ),
    # The node database as the flat ``portal,tpgt target`` listing (ISCSI010: portals no session
    # uses). Never ``-o show``: that prints every record's settings, CHAP secrets included.
    "iscsiadm-node": (
        "if [ -x /host/usr/sbin/iscsiadm ] || [ -x /host/sbin/iscsiadm ]; then "
        "chroot /host iscsiadm -m node 2>&1; fi; true"
    ),
    "multipath-conf": (
        "if [ -r /host/etc/multipath.conf ]; then "
        "grep -v -i -E 'password|secret' /host/etc/multipath.conf; "
        f"else echo '{ABSENT_MARKER}'; fi; true"
    ),
    # The merged configuration multipathd uses (built-in hardware table included): the daemon's
    # own, or ``multipath -t`` (the same printer, libmultipath print.c) when it does not answer.
    "multipath-config": (
        "o=; if [ -x /host/usr/sbin/multipathd ] || [ -x /host/sbin/multipathd ]; then "
        'o=$(chroot /host multipathd show config 2>/dev/null); fi; case "$o" in '
        "*defaults*) printf '%s\\n' \"$o\" ;; "
        "*) if [ -x /host/usr/sbin/multipath ] || [ -x /host/sbin/multipath ]; then "
        "chroot /host multipath -t 2>/dev/null; fi ;; esac; true"
    ),
    # The node's iSCSI initiator name (not a secret): two nodes with one name are one initiator
    # to the target (ISCSI011, judged across nodes).
    "initiator-name": (
        "[ -r /host/etc/iscsi/initiatorname.iscsi ] && "
        "grep -v '^#' /host/etc/iscsi/initiatorname.iscsi; true"
    ),
    "iscsid-conf": (
        "[ -r /host/etc/iscsi/iscsid.conf ] && "
        "grep -v -i -E 'password|secret' /host/etc/iscsi/iscsid.conf; true"
    ),
}


#: ``kv FILE`` prints ``FILE: CONTENT`` when the file is readable.
_PREAMBLE = (
    """kv() { [ -r "$1" ] && printf '%s: %s\\n' "$1" "$(cat "$1" 2>/dev/null)"; return 0; }"""
)


def collection_script(sections: tuple[str, ...]) -> str:
    """A POSIX shell script printing each section after a marker line."""
    lines = [_PREAMBLE]
    for name in sections:
        lines.append(f"printf '\\n{SECTION_MARKER}%s\\n' '{name}'")
        lines.append(f"( {_SCRIPT_PARTS[name]} ) 2>&1")
    return "\n".join(lines) + "\n"


_MARKER_LINE = re.compile(rf"^{re.escape(SECTION_MARKER)}(?P<name>[\w-]+)$")


def split_sections(output: str) -> dict[str, str]:
    """Split collected output back into ``{section: text}``."""
    sections: dict[str, str] = {}
    current: str | None = None
    buffer: list[str] = []
    for line in output.splitlines():
        match = _MARKER_LINE.match(line)
        if match:
            if current is not None:
                sections[current] = "\n".join(buffer).strip("\n") + "\n"
            current, buffer = match.group("name"), []
        elif current is not None:
            buffer.append(line)
    if current is not None:
        sections[current] = "\n".join(buffer).strip("\n") + "\n"
    return {name: ("" if text == "\n" else text) for name, text in sections.items()}


def parse_tools_section(text: str) -> dict[str, str]:
    """``tool multipath: /usr/sbin/multipath`` / ``daemon iscsid: running`` → {name: value}."""
    facts: dict[str, str] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        name, sep, value = rest.partition(": ")
        if sep and kind in ("tool", "daemon"):
            facts[f"{kind}:{name}"] = value.strip()
    return facts
