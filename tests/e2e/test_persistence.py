"""`kubectl storage validate-persistence` on the real cluster, with its MariaDB-based image.

The checks that depend on the server (the full restart/crash/reschedule run, and a setting that
is not durable) also run on the MySQL 9.7 test image (`engine` mysql); the others are about the
product, not the server, and run on MariaDB only, to keep the suite short.

Rows are kept small (the machine has two cores and other tests share the cluster); the crash
writer's commits do not depend on --rows. The moves between nodes: test_persistence_moves.py.
"""

from __future__ import annotations

import json
import signal
import time

import pytest
import yaml

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import HOSTPATH_CLASS, PERSISTENCE_OBJECTS, managed

CLASS = HOSTPATH_CLASS
TIMEOUT = "180"


def _common(cluster, namespace: str, engine: str = "mariadb") -> tuple[str, ...]:
    """The flags every run here shares: the test image, the wait, the namespace."""
    image = cluster.mysql_image if engine == "mysql" else cluster.mariadb_image
    return ("--image", image, "--timeout", TIMEOUT, "-n", namespace)


#: The servers the test images carry: Debian 12's MariaDB 10.11, Debian unstable's MySQL 9.7.
ENGINES = pytest.mark.parametrize("engine", ["mariadb", "mysql"])


@ENGINES
def test_restart_and_crash_keep_committed_data(cluster, namespace, engine) -> None:
    # The MySQL pod fits the strictest Pod Security level.
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    result = run_cli(
        "validate-persistence",
        *_common(cluster, namespace, engine),
        "-s",
        CLASS,
        "--rows",
        "300",
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
    # The test image's server is configured durably, and says so.
    durability = report["durability"]
    assert durability["durable"] is True, durability
    assert durability["variables"]["innodb_flush_log_at_trx_commit"] == "1"
    assert durability["variables"]["innodb_doublewrite"] == "ON"
    assert durability["reasons"] == []
    assert (durability["state"], durability["unknown"]) == ("durable", [])
    assert durability["table_engine"] == "InnoDB"
    if engine == "mysql":
        # MySQL 8.0+: the binary log is on and synced at each commit; the redo status exists.
        assert durability["variables"]["log_bin"] == "ON"
        assert durability["variables"]["sync_binlog"] == "1"
        assert durability["innodb_redo_log_enabled"] == "ON"
    else:
        assert durability["variables"]["log_bin"] == "OFF"
        assert durability["innodb_redo_log_enabled"] is None  # MariaDB has no such status
    # The fsync probe ran beside MySQL on the same volume.
    probe = report["fsync_probe"]
    assert probe["error"] == "", probe
    assert probe["syncs"] > 9000  # 22 MiB in 2300-byte writes
    assert 0 < probe["fdatasync_p50_us"] <= probe["fdatasync_p99_us"]
    # csi-hostpath's data sits on ext4 on a loop device in write-back mode, whose flush goes
    # to the node's disk: the direct job's fdatasync takes device time (as in
    # tests/fixtures/validate_persistence/probe/loop-write-back.json).
    assert probe["direct_error"] == "", probe
    assert probe["flush_class"] == "flushed", probe
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
    # The server the image runs is the one killed (MySQL: mysqld, MariaDB: mariadbd).
    assert (
        f"crash: SIGKILLed {'mysqld' if engine == 'mysql' else 'mariadbd'} (pid " in result.stderr
    )
    reschedule = phases["reschedule"]
    if len(cluster.nodes) > 1:  # a multi-node cluster: the pod moved (details in _moves.py)
        assert reschedule["verdict"] == "pass", reschedule
        assert reschedule["node_after"] != reschedule["node_before"]
    else:
        assert reschedule["verdict"] == "skipped"
        assert cluster.node in reschedule["note"]
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_a_reschedule_with_nowhere_to_go_tested_nothing(cluster, namespace) -> None:
    # Only node 1 carries this label value: the move has no second node, so it is skipped, and
    # a run that tested nothing is inconclusive (exit 1), never a pass.
    result = run_cli(
        "validate-persistence", *_common(cluster, namespace), "-s", CLASS,
        "--disruptions", "reschedule", "--rows", "20", "--no-fsync-probe",
        "--node-selector", "kubectl-storage.test/cluster-node=1", "-o", "json",
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert (report["verdict"], report["reasons"]) == ("inconclusive", ["nothing-tested"])
    (reschedule,) = [p for p in report["phases"] if p["phase"] == "reschedule"]
    assert reschedule["verdict"] == "skipped", reschedule
    assert "no disruption could run, so nothing was tested" in result.stderr
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


@ENGINES
def test_a_server_not_configured_for_durable_commits_fails(cluster, namespace, engine) -> None:
    result = run_cli(
        "validate-persistence",
        *_common(cluster, namespace, engine),
        "-s",
        CLASS,
        "--server-arg=--innodb-flush-log-at-trx-commit=2",
        "--rows",
        "20",
        "--no-fsync-probe",
        "-o",
        "json",
    )
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "fail"
    durability = report["durability"]
    # Read from the server: the option reached it.
    assert durability["variables"]["innodb_flush_log_at_trx_commit"] == "2"
    assert durability["durable"] is False
    assert durability["server_args"] == ["--innodb-flush-log-at-trx-commit=2"]
    (reason,) = durability["reasons"]
    assert reason.startswith("innodb_flush_log_at_trx_commit=2: ")
    assert "--allow-non-durable-config" in reason
    assert report["fsync_probe"] is None
    disruptions = [p for p in report["phases"] if p["phase"] != "seed"]
    assert disruptions
    assert all(p["verdict"] == "skipped" for p in disruptions)
    assert "not configured to make a commit durable" in result.stderr
    assert "Traceback" not in result.stderr
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_allow_non_durable_config_runs_the_check_and_still_reports_it(cluster, namespace) -> None:
    result = run_cli(
        "validate-persistence",
        *_common(cluster, namespace),
        "-s",
        CLASS,
        "--server-arg=--innodb-flush-log-at-trx-commit=2",
        "--allow-non-durable-config",
        "--disruptions",
        "crash",
        "--rows",
        "20",
        "--no-fsync-probe",
    )
    # A crash of mysqld alone loses nothing with =2 (the log is written at each commit), but
    # the configuration is not durable: the flag lets the crash run, and the check still fails.
    assert result.exit_code == 1, result.stderr
    assert "innodb_flush_log_at_trx_commit=2" in result.stdout
    assert "NOT durable (accepted with --allow-non-durable-config)" in result.stdout
    assert (
        "FAIL: the server is not configured to make a commit durable "
        "(innodb_flush_log_at_trx_commit=2); with --allow-non-durable-config the disruptions "
        "ran and committed data survived crash"
    ) in result.stdout
    assert "power loss not tested" in result.stdout
    assert "--allow-non-durable-config let the disruptions run" in result.stderr
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_empty_dir_control_reports_the_loss(cluster, namespace) -> None:
    result = run_cli(
        "validate-persistence",
        *_common(cluster, namespace),
        "--volume-type",
        "emptyDir",
        "--disruptions",
        "restart,crash",
        "--rows",
        "50",
    )
    # The control lost the rows in restart, as it must: the check sees a loss (exit 0). It
    # names the requested disruption it cannot judge (crash), and only that one.
    assert result.exit_code == 0, result.stderr
    assert (
        "PASS (control): committed data was lost on the emptyDir volume in restart, as a "
        "pod-local volume must lose it"
    ) in result.stdout
    assert "50 of 50 rows missing" in result.stdout
    assert "Control cannot judge crash: a container restart keeps the pod" in result.stdout
    assert "Control cannot judge external" not in result.stdout
    assert "Traceback" not in result.stderr
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_password_never_shown_and_keep_leaves_the_objects(cluster, namespace) -> None:
    result = run_cli(
        "validate-persistence",
        *_common(cluster, namespace),
        "--volume-type",
        "emptyDir",
        "--disruptions",
        "crash",
        "--rows",
        "20",
        "--keep",
        "-vv",
        "-o",
        "yaml",
    )
    try:
        # A container crash keeps the pod and its emptyDir: the control cannot judge it, says
        # so, and skips it; with nothing judged the run is inconclusive (exit 1), never a pass.
        assert result.exit_code == 1, result.stderr
        report = yaml.safe_load(result.stdout)
        assert (report["verdict"], report["reasons"]) == ("inconclusive", ["nothing-tested"])
        (crash,) = [p for p in report["phases"] if p["phase"] == "crash"]
        assert crash["verdict"] == "skipped"
        assert "cannot judge" in crash["note"]
        assert report["control"]["cannot_judge"][0]["disruption"] == "crash"
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
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_missing_class_exits_2_and_creates_nothing(cluster, namespace) -> None:
    result = run_cli("validate-persistence", "-s", "no-such-class", "-n", namespace)
    assert result.exit_code == 2
    assert "StorageClass no-such-class does not exist" in result.stderr
    assert CLASS in result.stderr  # the available classes are listed
    assert "Traceback" not in result.stderr
    assert cluster.get_json("events", "-n", namespace)["items"] == []
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []


def test_ctrl_c_during_the_crash_writer_leaves_nothing(cluster, namespace) -> None:
    proc = start_cli(
        "validate-persistence",
        *_common(cluster, namespace),
        "-s",
        CLASS,
        "--rows",
        "20",
        "--disruptions",
        "crash",
        "-v",
    )
    seen = wait_for_stderr(proc, "seeded and read back", timeout=240)
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS), (
        "the run should have created objects by now"
    )
    # The writer and its kill take a few seconds; a loaded cluster can take that long to
    # answer a `kubectl get`, so nothing is asked of it between this line and the signal.
    seen += wait_for_stderr(proc, "crash: writer running", timeout=240)
    time.sleep(0.3)  # inside the writer's exec, before the kill is armed
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 240)
    assert proc.returncode == 130, seen + err
    assert "deleted what run" in err
    assert "Traceback" not in err
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []
