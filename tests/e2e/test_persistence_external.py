"""`validate-persistence --disruptions external` on the real cluster: the test itself is the
user who disrupts the database (a SIGKILL of the server) once the run's
instruction appears on stderr; and a run in which nobody does anything ends inconclusive.

Kept small: --rows 20, no fsync probe (test_persistence.py covers it), one disruption.
"""

from __future__ import annotations

import json
import re
import signal

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import (
    HOSTPATH_CLASS,
    PERSISTENCE_OBJECTS,
    external_persistence_args,
    managed,
)

INSTRUCTION = "DO THE DISRUPTION NOW"


def _args(cluster, namespace: str, timeout: str) -> tuple[str, ...]:
    return external_persistence_args(cluster, namespace, HOSTPATH_CLASS, timeout)


def test_external_server_kill_passes_with_a_measured_stall(cluster, namespace) -> None:
    proc = start_cli(*_args(cluster, namespace, "180"))
    seen = wait_for_stderr(proc, INSTRUCTION, timeout=300)
    match = re.search(r"pod (\S+)/(\S+) on node (\S+)", seen)
    assert match, seen
    assert "volume claim" in seen
    # The disruption: SIGKILL of the server from the pod's client container (one process
    # namespace). A forced pod delete is no restart on this cluster: the old mysqld kept
    # answering the new pod's client (its Uptime kept growing), as seen in a run here.
    kill = (
        "for p in /proc/[0-9]*; do read -r n < $p/comm 2>/dev/null || continue; "
        'case "$n" in mysqld|mariadbd) kill -KILL "${p#/proc/}";; esac; done'
    )
    cluster.kubectl_run("exec", "-n", match[1], match[2], "-c", "client", "--", "sh", "-c", kill)
    out, err = finish_cli(proc, 400)
    assert proc.returncode == 0, seen + err
    report = json.loads(out)
    assert report["verdict"] == "pass", report
    phase = {p["phase"]: p for p in report["phases"]}["external"]
    assert phase["verdict"] == "pass", phase
    assert "writer-error" in phase["disruption_observed"], phase
    assert "container-restarted" in phase["disruption_observed"], phase["note"]
    assert "server-restarted" in phase["disruption_observed"], phase["note"]
    assert phase["stall"]["seconds"] > 0, phase
    assert phase["stall"]["started_at"], phase["stall"]
    commits = phase["commits"]
    assert commits["acknowledged_lost"] == 0
    assert commits["acknowledged"] >= 3  # three after the recovery (the kill may come first)
    assert "an external disruption restarted the database" in report["tested"], report
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_external_with_no_disruption_is_inconclusive(cluster, namespace) -> None:
    result = run_cli(*_args(cluster, namespace, "60"))
    assert result.exit_code == 1, result.stderr
    assert INSTRUCTION in result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "inconclusive", report
    assert report["reasons"] == ["no-disruption:external"], report
    phase = {p["phase"]: p for p in report["phases"]}["external"]
    assert phase["verdict"] == "inconclusive"
    assert phase["disruption_observed"] == []
    assert phase["stall"]["seconds"] > 0
    assert "no disruption was observed" in result.stderr
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_ctrl_c_during_the_external_wait_leaves_nothing(cluster, namespace) -> None:
    proc = start_cli(*_args(cluster, namespace, "180"))
    seen = wait_for_stderr(proc, INSTRUCTION, timeout=300)
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS), seen
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 240)
    assert proc.returncode == 130, seen + err
    assert "Traceback" not in err
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []
