"""iscsid.conf rules (ISCSI006, ISCSI012, ISCSI016): it seeds new node records only."""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_storage.core.iscsi.iscsid_conf import (
    NOOP_OUT_INTERVAL,
    NOOP_OUT_TIMEOUT,
    SCAN,
    STARTUP,
    IscsidConf,
)
from kubectl_storage.core.iscsi.multipath import (
    MultipathMap,
)
from kubectl_storage.core.iscsi.rules.catalogue import ISCSI_RULES
from kubectl_storage.core.iscsi.vendors import array_for
from kubectl_storage.core.report.findings import Finding, Severity

# --- iscsid.conf (ISCSI006, ISCSI012, ISCSI016) --------------------------------------------------
#
# iscsid.conf seeds node records at discovery; sessions run with their record's values, which we
# do not collect. These rules therefore describe what new node records get.


def _shown(conf: IscsidConf, key: str) -> str:
    """``key = value`` with ``(default)`` when the file does not set it."""
    value = conf.value(key)
    return f"{key} = {value}" + ("" if conf.from_file(key) else " (default)")


def check_iscsid_scan(conf: IscsidConf, *, trident: bool) -> list[Finding]:
    """ISCSI012 (Trident nodes): ``node.session.scan`` is not ``manual``."""
    if not trident:
        return []
    value = conf.value(SCAN)
    if value is not None and value.lower() == "manual":
        return []
    return [
        ISCSI_RULES.cite(
            "ISCSI012",
            Severity.WARN,
            f"Trident node: iscsid.conf has {_shown(conf, SCAN)}; new node records get automatic "
            "LUN scans, which attach every LUN mapped to the initiator to this node",
            "`sed -i 's/^\\(node.session.scan\\).*/\\1 = manual/' /etc/iscsi/iscsid.conf`, then "
            "restart iscsid",
        )
    ]


def check_iscsid_noop_out(conf: IscsidConf, *, multipathed: bool) -> list[Finding]:
    """ISCSI006: multipathed sessions exist while NOP-Out pings are off (interval or timeout 0).

    Judged on iscsid.conf, i.e. on what new node records get; existing records keep their own
    values (not collected).
    """
    if not multipathed:
        return []
    zero = [key for key in (NOOP_OUT_INTERVAL, NOOP_OUT_TIMEOUT) if conf.int_value(key) == 0]
    if not zero:
        return []
    return [
        ISCSI_RULES.cite(
            "ISCSI006",
            Severity.WARN,
            f"multipathed iSCSI sessions, and iscsid.conf sets {', '.join(zero)} to 0: new node "
            "records get no NOP-Out pings, so a dead connection is noticed only through SCSI "
            "command timeouts and multipath failover starts late (existing records not checked)",
            "noop_out_interval 5 and noop_out_timeout 10 in iscsid.conf and "
            "`iscsiadm -m node -o update -n node.conn[0].timeo.noop_out_timeout -v 10`, "
            "then re-login",
        )
    ]


def check_hpe_iscsid_conf(conf: IscsidConf, maps: Sequence[MultipathMap]) -> list[Finding]:
    """ISCSI016: LUNs of an array with iscsid.conf conformance values (HPE Nimble / Alletra
    5000/6000: queue_depth 256, cmds_max 512, login_timeout 15, node.startup manual) while the
    file gives new records less."""
    findings = []
    seen: set[str] = set()
    for mpath in maps:
        array = array_for(mpath.vendor, mpath.product)
        if array is None or array.key in seen:
            continue
        if not array.iscsid_minimums and not array.iscsid_startup_manual:
            continue
        seen.add(array.key)
        off = [
            f"{_shown(conf, key)} ({array.name.split()[0]}: >= {minimum})"
            for key, minimum in array.iscsid_minimums
            if (number := conf.int_value(key)) is not None and number < minimum
        ]
        startup = conf.value(STARTUP)
        if array.iscsid_startup_manual and startup is not None and startup.lower() != "manual":
            off.append(f"{_shown(conf, STARTUP)} ({array.name.split()[0]}: manual)")
        if not off:
            continue
        wanted = ", ".join(f"{key} {minimum}" for key, minimum in array.iscsid_minimums)
        findings.append(
            ISCSI_RULES.cite(
                "ISCSI016",
                Severity.INFO,
                f"{array.name} LUNs present; new node records get {'; '.join(off)}",
                f"Set the {array.name} values in /etc/iscsi/iscsid.conf ({wanted}"
                + (", node.startup manual" if array.iscsid_startup_manual else "")
                + ")",
                array.source("iscsid_minimums"),
            )
        )
    return findings
