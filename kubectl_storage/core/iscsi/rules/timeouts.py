"""Recovery timeouts: the sessions' ``recovery_tmo`` and iscsid.conf's ``replacement_timeout``
against multipathd's ``fast_io_fail_tmo`` and the arrays' values (ISCSI004, ISCSI005, ISCSI014)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from kubectl_storage.core.iscsi.iscsid_conf import (
    REPLACEMENT_TIMEOUT,
    IscsidConf,
)
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
)
from kubectl_storage.core.iscsi.multipath_conf import MultipathConf
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.rules.health import (
    effective_value,
    session_name,
)
from kubectl_storage.core.iscsi.sessions import IscsiSession
from kubectl_storage.core.iscsi.vendors import ARRAYS, ArrayVendor
from kubectl_storage.core.report.findings import Finding, Severity

_MULTIPATH_REPLACEMENT_TIMEOUT_MAX = 15


def _vendor_timeouts(arrays: Iterable[ArrayVendor] = ARRAYS) -> str:
    """``NetApp 5, HPE 10`` from the array table."""
    return ", ".join(
        f"{array.name.split()[0]} {array.replacement_timeout}"
        for array in arrays
        if array.replacement_timeout is not None
    )


def check_replacement_timeout(
    session: IscsiSession, multipathed: bool, *, conf: IscsidConf | None = None
) -> list[Finding]:
    """ISCSI004 (multipathed and replacement_timeout > 15 s) and ISCSI005 (single path, < 120 s).

    With the node's iscsid.conf the finding says what it holds: when the file already has a
    short value, the fix is updating the existing node records (the file only seeds new ones).
    A mapped session running more than 15 s also means multipathd did not give it its
    fast_io_fail_tmo (S75: off or 0, or multipathd not running when the path was added): the
    fix names that too.
    """
    timeout = session.recovery_timeout_s
    if timeout is None:
        return []
    name = session_name(session)
    if multipathed and timeout > _MULTIPATH_REPLACEMENT_TIMEOUT_MAX:
        configured = conf.int_value(REPLACEMENT_TIMEOUT) if conf is not None else None
        record_only = configured is not None and configured <= _MULTIPATH_REPLACEMENT_TIMEOUT_MAX
        fix = (
            f"iscsid.conf already sets {configured}; it only seeds new node records: "
            "`iscsiadm -m node -o update -n node.session.timeo.replacement_timeout "
            f"-v {configured}`, then re-login"
            if record_only
            else f"Set node.session.timeo.replacement_timeout ({_vendor_timeouts()}) in "
            "iscsid.conf and `iscsiadm -m node -o update -n "
            "node.session.timeo.replacement_timeout -v 5`, then re-login"
        )
        fix += (
            "; multipathd normally gives the sessions it maps its fast_io_fail_tmo: check that "
            "multipathd runs and multipath.conf does not set fast_io_fail_tmo off or 0"
        )
        shown = f" (iscsid.conf: {configured})" if configured is not None else ""
        return [
            ISCSI_RULES.cite(
                "ISCSI004",
                Severity.WARN,
                f"{name}: replacement_timeout {timeout}s delays multipath failover "
                f"(5-15s recommended){shown}",
                fix,
                ISCSI_RULES["ISCSI004"].sources,
                "S75",
            )
        ]
    if not multipathed and session.disks and timeout < 120:
        return [
            ISCSI_RULES.cite(
                "ISCSI005",
                Severity.INFO,
                f"{name}: LUNs not multipathed and replacement_timeout {timeout}s: a single path "
                "should keep I/O longer (default 120s)",
                "Add a second path (see MP012) rather than lowering the timeout",
            )
        ]
    return []


#: multipath.conf fast_io_fail_tmo values multipathd cannot write into an iSCSI session's
#: recovery timeout ("can't switch off fast_io_fail_tmo on iSCSI", "can't set fast_io_fail_tmo to
#: '0' on iSCSI": libmultipath discovery.c sysfs_set_session_tmo, S75).
_FAST_IO_FAIL_NOT_ON_ISCSI = frozenset({"off", "0"})


def multipathd_leaves_recovery_timeout(
    maps: Sequence[MultipathMap],
    multipath_conf: MultipathConf | None = None,
    *,
    multipathd_running: bool | None = None,
) -> str | None:
    """Why the sessions multipathd maps would keep their node record's replacement_timeout; None
    when multipathd sets it (or nothing says it does not).

    multipathd writes its ``fast_io_fail_tmo`` (multipath.conf; 5 by default) into the
    ``recovery_tmo`` of the iSCSI session behind every path of a map it sets up
    (libmultipath discovery.c ``sysfs_set_scsi_tmo`` → ``sysfs_set_session_tmo``, S75). So a
    mapped session runs multipathd's value whatever its record holds; the lab shows it (records
    and iscsid.conf 120, mapped sessions 10, the unmapped one 120: tests/nodelab). It does not
    when it is not running, or when ``fast_io_fail_tmo`` is ``off`` or ``0`` (which it cannot
    set on iSCSI). A ``fast_io_fail_tmo`` from the built-in hardware table is not known here.
    """
    if multipathd_running is False:
        return "multipathd is not running"
    if multipath_conf is None:
        return None
    for mpath in maps:
        value = effective_value(multipath_conf, "fast_io_fail_tmo", mpath.vendor, mpath.product)
        if value is not None and value.lower() in _FAST_IO_FAIL_NOT_ON_ISCSI:
            return (
                f"multipath.conf sets fast_io_fail_tmo {value} for {mpath.vendor},{mpath.product}, "
                "which multipathd cannot give an iSCSI session"
            )
    return None


def check_iscsid_replacement_timeout(
    conf: IscsidConf,
    sessions: Sequence[IscsiSession],
    multipathed: Mapping[int | None, bool],
    *,
    maps: Sequence[MultipathMap] = (),
    multipath_conf: MultipathConf | None = None,
    multipathd_running: bool | None = None,
) -> list[Finding]:
    """iscsid.conf's ``node.session.timeo.replacement_timeout`` next to the live sessions' values.

    iscsid.conf seeds new node records, and a login gives the session its record's value; but
    multipathd then replaces it with ``fast_io_fail_tmo`` in every session whose disk it maps
    (:func:`multipathd_leaves_recovery_timeout`). Records and iscsid.conf holding the shipped 120
    while the mapped sessions run 5 or 10 is therefore the normal state under multipathd, and
    the live value of a mapped session says nothing about its record.

    * ISCSI004 (iscsid.conf): multipathed sessions exist and all run 15 s or less, the file gives
      new records more, and multipathd will not replace it (not running, or fast_io_fail_tmo off
      or 0): a session logged in later (a new LUN or portal, a re-login) fails over slowly.
    * ISCSI014: the file sets a value that sessions without a multipath map (their recovery
      timeout is their record's) do not run: those records predate the edit, and a re-login
      keeps the record's value.

    Args:
        conf: parsed iscsid.conf.
        sessions: the live sessions (``recovery_tmo`` is their replacement_timeout).
        multipathed: per session id, whether its LUNs are multipathed.
        maps / multipath_conf / multipathd_running: the node's maps, multipath.conf and whether
            multipathd runs (``None``: unknown), to tell whether multipathd sets the mapped
            sessions' timeout.
    """
    setting = conf.get(REPLACEMENT_TIMEOUT)
    configured = setting.as_int() if setting is not None else None
    if configured is None:
        return []
    limit = _MULTIPATH_REPLACEMENT_TIMEOUT_MAX
    known = [s for s in sessions if s.recovery_timeout_s is not None]
    multi = [s for s in known if multipathed.get(s.sid)]
    flagged = {s.sid for s in multi if (s.recovery_timeout_s or 0) > limit}
    shown = f"{REPLACEMENT_TIMEOUT} = {configured}" + (
        "" if conf.from_file(REPLACEMENT_TIMEOUT) else " (default)"
    )
    findings: list[Finding] = []
    gap = multipathd_leaves_recovery_timeout(
        maps, multipath_conf, multipathd_running=multipathd_running
    )
    if multi and not flagged and configured > limit and gap is not None:
        runs = sorted({t for s in multi if (t := s.recovery_timeout_s) is not None})
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI004",
                Severity.WARN,
                f"multipathed sessions run {', '.join(f'{t}s' for t in runs)}, but {gap} and "
                f"iscsid.conf has {shown}: sessions logged in later (a new LUN or portal, a "
                "re-login) keep their node record's value and fail over slowly",
                "Run multipathd with fast_io_fail_tmo 5-15 (it writes it into the recovery "
                "timeout of the sessions it maps), or set "
                f"node.session.timeo.replacement_timeout in /etc/iscsi/iscsid.conf "
                f"({_vendor_timeouts()}; 5-15 with multipath) and in the existing records",
                ISCSI_RULES["ISCSI004"].sources,
                "S75",
            )
        )
    if conf.from_file(REPLACEMENT_TIMEOUT):
        differing = [
            s for s in known if not multipathed.get(s.sid) and s.recovery_timeout_s != configured
        ]
        if differing:
            values = ", ".join(f"{s.sid}: {s.recovery_timeout_s}s" for s in differing)
            findings.append(
                ISCSI_RULES.cite(
                    "ISCSI014",
                    Severity.INFO,
                    f"iscsid.conf sets {shown}, but sessions without a multipath map run other "
                    f"values ({values}): their node records were created before the file "
                    "changed, and a re-login keeps the record's value",
                    "`iscsiadm -m node -T <target> -p <portal> -o update -n "
                    f"node.session.timeo.replacement_timeout -v {configured}`, then re-login",
                    ISCSI_RULES["ISCSI014"].sources,
                    "S75",
                )
            )
    return findings
