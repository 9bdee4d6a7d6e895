"""`kubectl storage validate-persistence` on the real cluster, with its MariaDB-based image.

Rows are kept small (the machine has two cores and other tests share the cluster); the crash
writer's commits do not depend on --rows.
"""

from __future__ import annotations

import json
import signal
import time

from tests.conftest import run_cli, start_cli, wait_for_stderr

CLASS = "csi-hostpath-sc"
TIMEOUT = "180"


def _managed(cluster, namespace: str) -> list[str]:
    items = cluster.get_json(
        "statefulsets,pods,pvc,secrets",
        "-n",
        namespace,
        "-l",
        "app.kubernetes.io/managed-by=kubectl-storage",
    )["items"]
    return [f"{i['kind']}/{i['metadata']['name']}" for i in items]


def test_restart_and_crash_keep_committed_data(cluster, namespace) -> None:
    # The MySQL pod fits the strictest Pod Security level.
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    result = run_cli(
        "validate-persistence",
        "-s",
        CLASS,
        "--image",
        cluster.mariadb_image,
        "--rows",
        "300",
        "--timeout",
        TIMEOUT,
        "-n",
        namespace,
        "-o",
        "json",
        "-v",
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["kind"], report["verdict"]) == ("PersistenceReport", "pass")
    assert (report["storage_class"], report["volume_type"], report["rows"]) == (CLASS, "pvc", 300)
    phases = {p["phase"]: p for p in report["phases"]}
    assert list(phases) == ["seed", "restart", "crash", "reschedule"]
    for name in ("seed", "restart", "crash"):
        phase = phases[name]
        assert phase["verdict"] == "pass", phase
        assert phase["rows_found"] == phase["rows_expected"]
        assert phase["checksum_match"] is True
        assert phase["time_to_ready_s"] > 0
    assert phases["restart"]["rows_expected"] == 300
    commits = phases["crash"]["commits"]
    # The kill is armed after the 25th commit: the writer was committing when mysqld died.
    assert commits["acknowledged"] >= 25
    assert commits["acknowledged_present"] == commits["acknowledged"]
    assert commits["acknowledged_lost"] == 0
    assert phases["crash"]["rows_expected"] >= 300 + commits["acknowledged"]
    assert "SIGKILLed" in result.stderr
    assert phases["reschedule"]["verdict"] == "skipped"  # the test cluster has one node
    assert cluster.node in phases["reschedule"]["note"]
    assert _managed(cluster, namespace) == []


def test_empty_dir_control_reports_the_loss(cluster, namespace) -> None:
    result = run_cli(
        "validate-persistence",
        "--volume-type",
        "emptyDir",
        "--disruptions",
        "restart",
        "--image",
        cluster.mariadb_image,
        "--rows",
        "50",
        "--timeout",
        TIMEOUT,
        "-n",
        namespace,
    )
    assert result.exit_code == 1, result.stderr
    assert "FAIL: committed data was lost on the emptyDir volume in restart" in result.stdout
    assert "50 of 50 rows missing" in result.stdout
    assert "committed data was lost or unavailable after: restart" in result.stderr
    assert "Traceback" not in result.stderr
    assert _managed(cluster, namespace) == []


def test_password_never_shown_and_keep_leaves_the_objects(cluster, namespace) -> None:
    result = run_cli(
        "validate-persistence",
        "--volume-type",
        "emptyDir",
        "--disruptions",
        "crash",
        "--image",
        cluster.mariadb_image,
        "--rows",
        "20",
        "--timeout",
        TIMEOUT,
        "--keep",
        "-n",
        namespace,
        "-vv",
        "-o",
        "yaml",
    )
    try:
        # A container crash keeps the pod and its emptyDir: the control passes this phase.
        assert result.exit_code == 0, result.stderr
        assert "--keep: leaving" in result.stderr
        secrets = cluster.get_json(
            "secrets", "-n", namespace, "-l", "app.kubernetes.io/managed-by=kubectl-storage"
        )["items"]
        assert len(secrets) == 1
        import base64

        password = base64.b64decode(secrets[0]["data"]["password"]).decode()
        assert len(password) == 32
        assert password not in result.stdout
        assert password not in result.stderr
        pod = cluster.get_json("pods", "-n", namespace)["items"][0]
        for container in pod["spec"]["containers"]:
            assert password not in json.dumps(container)
    finally:
        run_id = next(
            line.split("run-id ")[1].split()[0].rstrip("`")
            for line in result.stderr.splitlines()
            if "--run-id" in line
        )
        cleanup = run_cli("cleanup", "--run-id", run_id, "--yes", "-n", namespace)
        assert cleanup.exit_code == 0, cleanup.stderr
    assert _managed(cluster, namespace) == []


def test_missing_class_exits_2_and_creates_nothing(cluster, namespace) -> None:
    result = run_cli("validate-persistence", "-s", "no-such-class", "-n", namespace)
    assert result.exit_code == 2
    assert "StorageClass no-such-class does not exist" in result.stderr
    assert CLASS in result.stderr  # the available classes are listed
    assert "Traceback" not in result.stderr
    assert cluster.get_json("events", "-n", namespace)["items"] == []
    assert _managed(cluster, namespace) == []


def test_ctrl_c_during_the_crash_writer_leaves_nothing(cluster, namespace) -> None:
    proc = start_cli(
        "validate-persistence",
        "-s",
        CLASS,
        "--image",
        cluster.mariadb_image,
        "--rows",
        "20",
        "--disruptions",
        "crash",
        "--timeout",
        TIMEOUT,
        "-n",
        namespace,
        "-v",
    )
    seen = wait_for_stderr(proc, "crash: writer running", timeout=240)
    time.sleep(0.5)  # inside the writer's exec, before the kill is armed
    assert _managed(cluster, namespace), "the run should have created objects by now"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=240)
    assert proc.returncode == 130, seen + err
    assert "deleted what run" in err
    assert "Traceback" not in err
    assert _managed(cluster, namespace) == []
