"""iSCSI and dm-multipath on a real kernel: each phase of guest/iscsi.sh through the iscsi
command's live code path.

Three LIO targets (guest/iscsi.sh): ``one-group`` (one TPG, portals 127.0.0.1 and 10.20.0.1, one
ALUA group), ``two-groups`` (two TPGs, portals 10.20.0.2 active/optimized and 10.20.0.3
active/non-optimized) and ``one-portal`` (portals 10.20.0.4 and 10.20.0.5 in the node database,
logged in on 10.20.0.4 only). Device names (sdX, mpathX) change from boot to boot, so everything
is stated by target and portal. Each phase states the findings (rule id, severity, and what they
are about: ``target@portal`` for a session, ``target`` for a map or a target, ``node``), every
path of every LUN (portal, its group's priority and status, role, dm / checker / device state),
and every session's states.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pytest

from tests.nodelab.conftest import LabRun
from tests.nodelab.reports import rule_findings

pytestmark = pytest.mark.nodelab

ONE_GROUP, TWO_GROUPS, ONE_PORTAL = "one-group", "two-groups", "one-portal"
IQN_PREFIX = "iqn.2003-01.org.nodelab:"

# A path: (portal, group prio, group status, role, dm_state, path_state, online_state); "*" in a
# field means the real output legitimately varies there (never used for what a phase is about).
Path = tuple[str, int | None, str | None, str, str | None, str | None, str | None]
HEALTHY = {
    ONE_GROUP: [
        ("10.20.0.1:3260", 50, "active", "active", "active", "ready", "running"),
        ("127.0.0.1:3260", 50, "active", "active", "active", "ready", "running"),
    ],
    TWO_GROUPS: [
        ("10.20.0.2:3260", 50, "active", "active", "active", "ready", "running"),
        ("10.20.0.3:3260", 10, "enabled", "passive", "active", "ready", "running"),
    ],
    ONE_PORTAL: [("10.20.0.4:3260", None, None, "no-multipath", None, None, "running")],
}
# A session: (session state, connection state, iscsid internal state, disk state)
Session = tuple[str, str, str, str]
UP: Session = ("LOGGED_IN", "LOGGED IN", "NO CHANGE", "running")
SESSIONS_UP = {
    f"{ONE_GROUP}@127.0.0.1:3260": UP,
    f"{ONE_GROUP}@10.20.0.1:3260": UP,
    f"{TWO_GROUPS}@10.20.0.2:3260": UP,
    f"{TWO_GROUPS}@10.20.0.3:3260": UP,
    f"{ONE_PORTAL}@10.20.0.4:3260": UP,
}
#: What every phase reports: no CHAP on any of the five sessions; find_multipaths yes; the
#: one-portal LUN is in use by a pod as a bare sdX (one path, so no map); its target has a second
#: portal in the node database that no session uses.
BASELINE = (
    *(f"ISCSI007 warn {session}" for session in SESSIONS_UP),
    "MP003 info node",
    f"ISCSI008 error {ONE_PORTAL}@10.20.0.4:3260",
    f"ISCSI010 warn {ONE_PORTAL}",
)


@dataclass(frozen=True)
class Phase:
    findings: tuple[str, ...]  # "ID severity subject", one entry per occurrence
    paths: dict[str, list[Path]]
    sessions: dict[str, Session]
    status: str = "5 iSCSI session(s), 2 multipath map(s)"


#: What lun3 (one-portal) shows once it lost its only portal past its 5 s recovery timeout: the
#: lun-read-only phase, and every phase after it (only what differs from the baseline).
LUN3_OFFLINE = Phase(
    (
        f"ISCSI001 error {ONE_PORTAL}@10.20.0.4:3260",
        f"ISCSI002 warn {ONE_PORTAL}@10.20.0.4:3260",
        f"ISCSI005 info {ONE_PORTAL}@10.20.0.4:3260",
        f"ISCSI013 error {ONE_PORTAL}@10.20.0.4:3260",
        "ISCSI014 info node",
    ),
    {ONE_PORTAL: [("10.20.0.4:3260", None, None, "no-multipath", None, None, "transport-offline")]},
    {f"{ONE_PORTAL}@10.20.0.4:3260": ("FREE", "TRANSPORT WAIT", "REOPEN", "transport-offline")},
)

PHASES: dict[str, Phase] = {
    # All logged in, multipathd has both maps: one-group is one path group of two, two-groups is
    # the primary/secondary shape (prio 50 active, prio 10 enabled).
    "healthy": Phase(BASELINE, HEALTHY, SESSIONS_UP),
    # echo offline > device/state on one-group's 10.20.0.1 path and on two-groups' optimized path:
    # both failed; two-groups' I/O moved to the non-optimized group (its failed group has prio 0).
    "path-offline": Phase(
        (
            *BASELINE,
            f"MP010 error {ONE_GROUP}",
            f"MP010 error {TWO_GROUPS}",
            f"ISCSI013 error {ONE_GROUP}@10.20.0.1:3260",
            f"ISCSI013 error {TWO_GROUPS}@10.20.0.2:3260",
        ),
        {
            **HEALTHY,
            ONE_GROUP: [
                ("10.20.0.1:3260", 50, "active", "failed", "failed", "faulty", "offline"),
                HEALTHY[ONE_GROUP][1],
            ],
            TWO_GROUPS: [
                ("10.20.0.2:3260", 0, "enabled", "failed", "failed", "faulty", "offline"),
                ("10.20.0.3:3260", 10, "active", "active", "active", "ready", "running"),
            ],
        },
        {
            **SESSIONS_UP,
            f"{ONE_GROUP}@10.20.0.1:3260": ("LOGGED_IN", "LOGGED IN", "NO CHANGE", "offline"),
            f"{TWO_GROUPS}@10.20.0.2:3260": ("LOGGED_IN", "LOGGED IN", "NO CHANGE", "offline"),
        },
    ),
    # Both devices running again. failback manual: two-groups' I/O stays on the non-optimized
    # group (prio 10) while the optimized one (prio 50) is usable.
    "path-restored": Phase(
        (*BASELINE, f"MP021 warn {TWO_GROUPS}"),
        {
            **HEALTHY,
            TWO_GROUPS: [
                ("10.20.0.2:3260", 50, "enabled", "passive", "active", "ready", "running"),
                ("10.20.0.3:3260", 10, "active", "active", "active", "ready", "running"),
            ],
        },
        SESSIONS_UP,
    ),
    # iptables DROP on 10.20.0.1:3260, captured while the session is in recovery: the
    # connection is down, iscsid reopens, the disk is blocked. The path cannot carry I/O, so it
    # is a failed path of one-group (multipathd's checker has not noticed yet: dm and checker
    # still say active/ready, and `multipath -ll` says "i/o pending"). The scenario gave this
    # session a 90 s recovery timeout before the drop, so that the capture happens before the
    # kernel gives up under any load (guest/iscsi.sh): ISCSI004 sees it.
    "portal-drop": Phase(
        (
            *BASELINE,
            f"ISCSI004 warn {ONE_GROUP}@10.20.0.1:3260",
            f"MP010 error {ONE_GROUP}",
            f"ISCSI001 error {ONE_GROUP}@10.20.0.1:3260",
            f"ISCSI002 warn {ONE_GROUP}@10.20.0.1:3260",
            f"ISCSI013 error {ONE_GROUP}@10.20.0.1:3260",
        ),
        {
            **HEALTHY,
            ONE_GROUP: [
                ("10.20.0.1:3260", 50, "active", "failed", "*", "*", "*"),
                HEALTHY[ONE_GROUP][1],
            ],
        },
        {
            **SESSIONS_UP,
            f"{ONE_GROUP}@10.20.0.1:3260": ("FAILED", "TRANSPORT WAIT", "REOPEN", "blocked"),
        },
    ),
    # Past the recovery timeout (the scenario's 90 s): the session is FREE, the disk
    # transport-offline, dm-multipath failed the path (the device state multipath shows is still
    # "running").
    "portal-drop-timeout": Phase(
        (
            *BASELINE,
            f"ISCSI004 warn {ONE_GROUP}@10.20.0.1:3260",
            f"MP010 error {ONE_GROUP}",
            f"ISCSI001 error {ONE_GROUP}@10.20.0.1:3260",
            f"ISCSI002 warn {ONE_GROUP}@10.20.0.1:3260",
            f"ISCSI013 error {ONE_GROUP}@10.20.0.1:3260",
        ),
        {
            **HEALTHY,
            ONE_GROUP: [
                ("10.20.0.1:3260", 50, "active", "failed", "failed", "faulty", "running"),
                HEALTHY[ONE_GROUP][1],
            ],
        },
        {
            **SESSIONS_UP,
            f"{ONE_GROUP}@10.20.0.1:3260": (
                "FREE",
                "TRANSPORT WAIT",
                "REOPEN",
                "transport-offline",
            ),
        },
    ),
    # DROP removed: the session logs in again and the path is back.
    "portal-restored": Phase(BASELINE, HEALTHY, SESSIONS_UP),
    # lun3 (one-portal, no map) loses its only portal past a 5 s recovery timeout (sysfs): the
    # session is FREE, its disk transport-offline, ext4 on it (errors=remount-ro) read-only; the
    # 5 s is below the 120 s a single path should keep (ISCSI005) and differs from iscsid.conf's
    # 120 (ISCSI014). The kernel log's part: test_a_lun_that_lost_its_only_path_....
    "lun-read-only": Phase(
        (*BASELINE, *LUN3_OFFLINE.findings),
        {**HEALTHY, **LUN3_OFFLINE.paths},
        {**SESSIONS_UP, **LUN3_OFFLINE.sessions},
    ),
    # two-groups' sessions logged out while its map is held open: the map stays with no path
    # (multipathd queues for no_path_retry 12 and counts down); MP011 on it, MP012 not.
    # lun3 stays as lun-read-only left it. The map's LUN row has no target any more (no session,
    # no path names it): its subject is empty.
    "map-no-paths": Phase(
        (
            *(f for f in BASELINE if not f.startswith(f"ISCSI007 warn {TWO_GROUPS}@")),
            *LUN3_OFFLINE.findings,
            "MP011 error ",
        ),
        {
            ONE_GROUP: HEALTHY[ONE_GROUP],
            "": [],
            **LUN3_OFFLINE.paths,
        },
        {
            **{k: v for k, v in SESSIONS_UP.items() if not k.startswith(f"{TWO_GROUPS}@")},
            **LUN3_OFFLINE.sessions,
        },
        "3 iSCSI session(s), 2 multipath map(s)",
    ),
}

_SESSION_SUBJECT = re.compile(r"session \d+ " + re.escape(IQN_PREFIX) + r"(\S+) @ (\S+?):? ")


def _short(target: str | None) -> str:
    return (target or "").removeprefix(IQN_PREFIX)


def _subject(message: str, maps: dict[str, str]) -> str:
    """What a finding is about: target@portal (session), target (map or target), or node."""
    match = _SESSION_SUBJECT.search(message + " ")
    if match:
        return f"{match.group(1)}@{match.group(2)}"
    for alias, target in maps.items():
        if message.startswith(f"{alias} ") or message.startswith(f"{alias}:"):
            return target
    found = re.search(re.escape(IQN_PREFIX) + r"([\w.-]+)", message)
    return found.group(1) if found else "node"


def _paths(report: dict[str, Any]) -> dict[str, list[Path]]:
    groups = {
        (mpath["dm"], path["dev"]): group["prio"]
        for mpath in report["multipath_maps"]
        for group in mpath["path_groups"]
        for path in group["paths"]
    }
    result = {}
    for lun in report["luns"]:
        result[_short(lun["target"])] = sorted(
            (
                path["portal"],
                groups.get((lun["dm"], path["dev"])),
                path["group_status"],
                path["role"],
                path["dm_state"],
                path["path_state"],
                path["online_state"],
            )
            for path in lun["paths"]
        )
    return result


def _sessions(report: dict[str, Any]) -> dict[str, Session]:
    return {
        f"{_short(s['target'])}@{s['persistent_portal']}": (
            s["session_state"],
            s["connection_state"],
            s["internal_session_state"],
            ",".join(d["state"] or "?" for d in s["disks"]),
        )
        for s in report["sessions"]
    }


def _matches(got: list[Path], want: list[Path]) -> bool:
    return len(got) == len(want) and all(
        all(w == "*" or g == w for g, w in zip(got_path, want_path, strict=True))
        for got_path, want_path in zip(got, sorted(want, key=lambda p: p[0]), strict=True)
    )


def test_phases_ran(lab: LabRun) -> None:
    assert lab.phases("iscsi") == list(PHASES)


@pytest.mark.parametrize("name", list(PHASES))
def test_phase(lab: LabRun, name: str) -> None:
    want = PHASES[name]
    report = lab.iscsi_report(name)
    assert report["error"] is None
    assert report["warnings"] == []
    assert report["status"] == want.status
    assert report["tools"]["multipathd_running"] is True
    assert report["tools"]["iscsid_running"] is True
    maps = {
        lun["alias"]: _short(lun["target"]) for lun in report["luns"] if lun["alias"] is not None
    }
    problems = []
    findings = Counter(
        f"{f['id']} {f['severity']} {_subject(f['message'], maps)}"
        for f in rule_findings(report["findings"])
    )
    if findings != Counter(want.findings):
        missing = Counter(want.findings) - findings
        extra = findings - Counter(want.findings)
        details = [f["id"] + ": " + f["message"] for f in report["findings"]]
        problems.append(
            f"findings: missing {sorted(missing.elements())}, unexpected "
            f"{sorted(extra.elements())}; all: {details}"
        )
    paths = _paths(report)
    if sorted(paths) != sorted(want.paths) or not all(
        _matches(paths[lun], want.paths[lun]) for lun in want.paths
    ):
        problems.append(f"paths {paths}, expected {want.paths}")
    sessions = _sessions(report)
    if sessions != want.sessions:
        problems.append(f"sessions {sessions}, expected {want.sessions}")
    assert not problems, f"iscsi/{name}:\n  " + "\n  ".join(problems)


def test_two_alua_groups_are_the_primary_secondary_shape(lab: LabRun) -> None:
    """two-groups is one map with two path groups of one path each, prio 50 and 10, handled by
    the ALUA hardware handler, and its LUN row names the claim-less dm device; one-group's map
    is the claim's (PVC → LUN → dm → paths)."""
    report = lab.iscsi_report("healthy")
    luns = {_short(lun["target"]): lun for lun in report["luns"]}
    maps = {mpath["wwid"]: mpath for mpath in report["multipath_maps"]}
    two = maps[luns[TWO_GROUPS]["wwid"]]
    assert [(g["prio"], g["status"], len(g["paths"])) for g in two["path_groups"]] == [
        (50, "active", 1),
        (10, "enabled", 1),
    ]
    assert two["hwhandler"] == "1 alua"
    assert (two["vendor"], two["product"]) == ("LIO-ORG", "FILEIO")
    one = maps[luns[ONE_GROUP]["wwid"]]
    assert [(g["prio"], len(g["paths"])) for g in one["path_groups"]] == [(50, 2)]
    assert (luns[ONE_GROUP]["pvc"], luns[ONE_GROUP]["namespace"]) == ("lun1-pv-claim", "nodelab")
    assert luns[ONE_GROUP]["dm"] == one["dm"]
    assert luns[TWO_GROUPS]["pvc"] is None
    assert (luns[ONE_PORTAL]["pvc"], luns[ONE_PORTAL]["dm"]) == ("lun3-pv-claim", None)


def test_multipathd_sets_the_recovery_timeout_of_mapped_sessions(lab: LabRun) -> None:
    """The fact behind ISCSI004/ISCSI014 on this node: every node record holds iscsid.conf's
    replacement_timeout (120, as shipped), yet the sessions whose disks multipathd maps run
    fast_io_fail_tmo (10 s, multipath.conf): multipathd writes it to the session's recovery_tmo,
    for every path it adds. Only the session it does not map (one-portal) runs the record's 120."""
    phase = lab.phase("iscsi", "healthy")
    records = {
        f"{_short(target)}@{portal}": int(timeout)
        for target, portal, timeout in (
            line.split() for line in (phase / "node-record-timeouts.txt").read_text().splitlines()
        )
    }
    assert records == {
        f"{ONE_GROUP}@127.0.0.1:3260": 120,
        f"{ONE_GROUP}@10.20.0.1:3260": 120,
        f"{TWO_GROUPS}@10.20.0.2:3260": 120,
        f"{TWO_GROUPS}@10.20.0.3:3260": 120,
        f"{ONE_PORTAL}@10.20.0.4:3260": 120,
        f"{ONE_PORTAL}@10.20.0.5:3260": 120,
    }
    report = lab.iscsi_report("healthy")
    running = {
        f"{_short(s['target'])}@{s['persistent_portal']}": s["recovery_timeout_s"]
        for s in report["sessions"]
    }
    assert running == {
        f"{ONE_GROUP}@127.0.0.1:3260": 10,
        f"{ONE_GROUP}@10.20.0.1:3260": 10,
        f"{TWO_GROUPS}@10.20.0.2:3260": 10,
        f"{TWO_GROUPS}@10.20.0.3:3260": 10,
        f"{ONE_PORTAL}@10.20.0.4:3260": 120,
    }


def test_the_blocked_state_was_captured_before_the_recovery_timeout(lab: LabRun) -> None:
    """portal-drop is about a session in recovery: its capture must end before the 90 s recovery
    timeout the scenario set, or the kernel may have moved the disk to transport-offline while
    the collection read it (guest/iscsi.sh)."""
    seconds = float((lab.phase("iscsi", "portal-drop") / "captured-after-block-s.txt").read_text())
    assert 0 < seconds < 90, seconds
    report = lab.iscsi_report("portal-drop")
    timeouts = {
        f"{_short(s['target'])}@{s['persistent_portal']}": s["recovery_timeout_s"]
        for s in report["sessions"]
    }
    assert timeouts[f"{ONE_GROUP}@10.20.0.1:3260"] == 90
    assert timeouts[f"{ONE_GROUP}@127.0.0.1:3260"] == 10


def test_a_lun_that_lost_its_only_path_is_named_with_its_claim_by_the_kernel_log(
    lab: LabRun,
) -> None:
    """Issue 22 item 4 on a real kernel: lun3 (one path, ext4 with errors=remount-ro, staged and
    published as kubelet does) loses its portal past a 5 s recovery timeout; its connection
    error and its failed writes land on lun3-pv's claim and pod. Quiet before: in the healthy
    phase no kernel-log finding is above information (mkfs.ext4's refused WRITE_ZEROES on the
    LIO map is information). Debian 12's 6.1 kept the ext4 rw through the phase (no journal
    abort within 60 s), so the read-only state (KLOG001) is proven elsewhere: on this machine's
    6.18 kernel (tests/e2e/test_kernel_log.py) and on captured logs (tests/unit/nodes)."""
    healthy = lab.iscsi_report("healthy")
    assert healthy["kernel_log"]["source"] == "kmsg", healthy["kernel_log"]
    assert [
        f["id"]
        for f in healthy["findings"]
        if f["id"].startswith("KLOG") and f["severity"] != "info"
    ] == []
    report = lab.iscsi_report("lun-read-only")
    judged = {
        (event["kind"], event["subject"]): event
        for event in report["kernel_events"]
        if any(v["pvc"] == "lun3-pv-claim" for v in event["volumes"])
    }
    kinds = {kind: event for (kind, _subject), event in judged.items()}
    assert set(kinds) >= {"iscsi-conn-error", "buffer-io-error"}, report["kernel_events"]
    assert [(f["id"], f["severity"]) for f in kinds["buffer-io-error"]["findings"]] == [
        ("KLOG010", "warn")
    ]
    assert [(f["id"], f["severity"]) for f in kinds["iscsi-conn-error"]["findings"]] == [
        ("KLOG020", "warn")
    ]
    assert ("lun3-pv-claim", "lun3-pv-pod") in {
        (v["pvc"], v["pod"]) for v in kinds["buffer-io-error"]["volumes"]
    }
