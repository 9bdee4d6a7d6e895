"""The effective multipath configuration on a real multipathd (issue 22 item 1): guest
iscsi-netapp.sh presents one LIO LUN as ``NETAPP``/``LUN C-Mode`` over two portals, so the real
built-in NETAPP/LUN entry of multipath-tools applies, and runs one phase per /etc/multipath.conf
variant. Each phase states exactly the findings (rule id and severity) the iscsi report must give.

Every phase: no CHAP on the two sessions (ISCSI007 twice) and find_multipaths at its built-in
default ``strict`` (MP003 info, read from ``multipathd show config``). What differs:

- values under ``defaults`` lose to the NETAPP entry (no_path_retry queue, user_friendly_names
  no) or to detect_checker on an ALUA device (path_checker): nothing more;
- the same values under ``overrides`` win over it: MP030 (from the configuration and from the
  live map's queueing) with MP002, MP004, MP022 with MP002.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.nodelab import reports
from tests.nodelab.conftest import LabRun
from tests.nodelab.reports import rule_findings

pytestmark = pytest.mark.nodelab

SCENARIO = "iscsi-netapp"
BASE = ("ISCSI007 warn", "ISCSI007 warn", "MP003 info")
PHASES: dict[str, tuple[str, ...]] = {
    "no-conf": BASE,
    "defaults-no-path-retry-30": BASE,
    "overrides-no-path-retry-30": (*BASE, "MP002 info", "MP030 warn", "MP030 warn"),
    "defaults-user-friendly-names": BASE,
    "overrides-user-friendly-names": (*BASE, "MP004 info"),
    "defaults-path-checker-directio": BASE,
    "overrides-path-checker-directio": (*BASE, "MP002 info", "MP022 info"),
}


#: multipathd's own view of the map and a path per phase (multipathd-maps.txt, -paths.txt): the
#: map's name, its queueing and the path checker.
MULTIPATHD: dict[str, tuple[str, str, str]] = {
    "no-conf": ("wwid", "on", "tur"),
    "defaults-no-path-retry-30": ("wwid", "on", "tur"),
    "overrides-no-path-retry-30": ("wwid", "30 chk", "tur"),
    "defaults-user-friendly-names": ("wwid", "on", "tur"),
    "overrides-user-friendly-names": ("mpatha", "on", "tur"),
    "defaults-path-checker-directio": ("wwid", "on", "tur"),
    "overrides-path-checker-directio": ("wwid", "on", "directio"),
}


def check_phase(report: dict[str, Any], name: str) -> None:
    """The report of one phase gives exactly the phase's findings."""
    assert report["error"] is None
    assert report["warnings"] == []
    assert report["status"] == "2 iSCSI session(s), 1 multipath map(s)"
    findings = Counter(f"{f['id']} {f['severity']}" for f in rule_findings(report["findings"]))
    details = [f"{f['id']}: {f['message']}" for f in report["findings"]]
    assert findings == Counter(PHASES[name]), f"{SCENARIO}/{name}: {details}"


def multipathd_view(phase: Path) -> tuple[str, str, str]:
    """(name, queueing, checker) from the phase's multipathd tables (name ``wwid`` when the map
    is named by its WWID)."""
    name, wwid, _dm, _paths, *rest = (
        (phase / "multipathd-maps.txt").read_text().splitlines()[1].split()
    )
    queueing = " ".join(rest[:-1])
    checker = (phase / "multipathd-paths.txt").read_text().splitlines()[1].split()[-1]
    return ("wwid" if name == wwid else name, queueing, checker)


def test_phases_ran(lab: LabRun) -> None:
    assert lab.phases(SCENARIO) == list(PHASES)


@pytest.mark.parametrize("name", list(PHASES))
def test_phase(lab: LabRun, name: str) -> None:
    phase = lab.phase(SCENARIO, name)
    check_phase(reports.iscsi_report(phase)["nodes"][0], name)
    # what the findings say is what multipathd did
    assert multipathd_view(phase) == MULTIPATHD[name]
