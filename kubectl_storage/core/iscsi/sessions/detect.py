"""Which parser a captured file needs (for ``--from-file``)."""

from __future__ import annotations

import re

from kubectl_storage.core.iscsi.sessions.model import IscsiInputFormat

# --- format detection ---------------------------------------------------------------------------

_DETECTORS: tuple[tuple[IscsiInputFormat, re.Pattern[str]], ...] = (
    (IscsiInputFormat.MULTIPATHD_JSON, re.compile(r'"(?:major_version|path_groups)"\s*:')),
    (IscsiInputFormat.SANLUN, re.compile(r"^\s*ONTAP Path:", re.M)),
    # sanlun lun show [all] / -wwpn: the header line naming the columns.
    (
        IscsiInputFormat.SANLUN,
        re.compile(r"^\s*(?:vserver|controller)\S*\s+(?:wwpn\s+)?lun-pathname\s+filename", re.M),
    ),
    (
        IscsiInputFormat.ISCSI_SYSFS,
        re.compile(r"iscsi_(?:session/session|connection/connection)\d"),
    ),
    (
        IscsiInputFormat.ISCSIADM_SESSION_DETAIL,
        re.compile(r"^\s*(?:Current|Persistent) Portal:", re.M),
    ),
    (IscsiInputFormat.ISCSIADM_NODE, re.compile(r"^\s*#\s*BEGIN RECORD", re.M)),
    (IscsiInputFormat.ISCSIADM_NODE, re.compile(r"^\s*Portal: \S+:\d+,-?\d+", re.M)),
    (IscsiInputFormat.ISCSIADM_SESSION, re.compile(r"^[\w-]+: \[\d+\] \S.*?:\d+,-?\d+ \S+", re.M)),
    (
        IscsiInputFormat.MULTIPATH_LL,
        re.compile(
            r"^(?:size=\S+ features='|\[size=)|policy='[^']*' prio=|\\_ \S+ \d+ \[prio=", re.M
        ),
    ),
    # Path lines without their map (`multipath -ll | grep fault`): read as multipath output so
    # each line is named in the report rather than the file refused as "not multipath".
    (
        IscsiInputFormat.MULTIPATH_LL,
        re.compile(r"^[\s|`'-]*\d+:\d+:\d+:\d+ +\S+ +\d+:\d+ +(?:active|failed|undef) ", re.M),
    ),
    (
        IscsiInputFormat.MULTIPATH_CONF,
        re.compile(r"^\s*(?:defaults|devices|blacklist|multipaths|overrides)\s*\{", re.M),
    ),
    (IscsiInputFormat.ISCSIADM_NODE, re.compile(r"^\S+:\d+,-?\d+ \S+\s*$", re.M)),
)


def detect_iscsi_format(text: str) -> IscsiInputFormat:
    """Tell which parser a captured file needs.

    Checks run from the most specific marker to the least (multipathd JSON keys, sanlun's
    ``ONTAP Path:`` or its ``lun-pathname`` table header, sysfs paths, ``Current Portal:``, the
    ``tcp: [N]`` session line, multipath property/group lines, multipath.conf sections, bare
    ``portal,tpgt iqn`` node lines).

    Returns:
        The detected :class:`IscsiInputFormat`; ``UNKNOWN`` when nothing matches.
    """
    for kind, pattern in _DETECTORS:
        if pattern.search(text):
            return kind
    return IscsiInputFormat.UNKNOWN
