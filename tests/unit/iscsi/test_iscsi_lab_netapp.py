"""The kept node-lab captures of guest/iscsi-netapp.sh (tests/nodelab/captures/iscsi-netapp, a
real multipathd applying its built-in NETAPP/LUN entry) give exactly the findings
tests/nodelab/test_iscsi_netapp.py states for each phase, without booting the lab."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.nodelab import reports
from tests.nodelab.test_iscsi_netapp import MULTIPATHD, PHASES, check_phase, multipathd_view

CAPTURES = Path(__file__).resolve().parents[2] / "nodelab" / "captures" / "iscsi-netapp"


def test_every_phase_was_kept() -> None:
    assert (CAPTURES / "phases.txt").read_text().split() == list(PHASES)


@pytest.mark.parametrize("name", list(PHASES))
def test_kept_phase(name: str) -> None:
    check_phase(reports.iscsi_report(CAPTURES / name)["nodes"][0], name)
    assert multipathd_view(CAPTURES / name) == MULTIPATHD[name]
