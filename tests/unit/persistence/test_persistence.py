"""validate-persistence core and render: manifests, SQL, checksums, commit accounting, report."""

from __future__ import annotations

import io
import random
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from kubectl_storage.core.k8s.manifests import PodPlacement, Toleration
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.k8s.scheduling import schedulable_nodes
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import (
    ALL_DISRUPTIONS,
    DATA_DIR,
    DATA_SUBPATH,
    PASSWORD_PLACEHOLDER,
    Disruption,
    MysqlDeployment,
    VolumeType,
    build_mysql_statefulset,
    build_secret,
    is_missing_table_error,
    parse_disruptions,
    required_bytes,
    sql_command,
    sql_stdin_command,
)
from kubectl_storage.core.validate_persistence.report import (
    PersistenceReport,
    PhaseResult,
    evaluate_phase,
)
from kubectl_storage.core.validate_persistence.rows import (
    StoredRow,
    TaskRow,
    compare_rows,
    generate_rows,
    parse_dump,
    seed_sql,
    table_checksum,
)
from kubectl_storage.core.validate_persistence.writer import (
    CommitAccounting,
    account_commits,
    parse_writer_output,
    writer_row,
)
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.preflight import ClusterFacts as PreflightFacts
from kubectl_storage.operations.validate_persistence import (
    PERSISTENCE_COMMAND,
    NodeFacts,
    PersistenceRequest,
    new_password,
    plan_disruptions,
    validate_request,
)
from kubectl_storage.render.validate_persistence import verdict_line, write_persistence_table
from tests.unit.k8s.test_k8s_manifests import restricted_violations


def _deployment(**overrides) -> MysqlDeployment:
    values = {
        "name": "ks-persist-abc",
        "namespace": "db",
        "image": "docker.io/library/mysql:8.4",
        "secret_name": "ks-persist-abc-auth",
        "storage_class": "fast",
        "size": "2Gi",
    }
    values.update(overrides)
    return MysqlDeployment(**values)


def _containers(sts: dict) -> dict[str, dict]:
    return {c["name"]: c for c in sts["spec"]["template"]["spec"]["containers"]}


def _stored(rows, created_at: int = 1_700_000_000) -> list[StoredRow]:
    return [StoredRow(r.task_id, r.title, r.description, created_at) for r in rows]


def _dump_text(rows: list[StoredRow]) -> str:
    """What `mysql -N -B` prints for DUMP_SQL."""
    lines = []
    for r in rows:
        desc = "NULL" if r.description is None else r.description.encode().hex().upper()
        lines.append(f"{r.task_id}\t{r.title.encode().hex().upper()}\t{desc}\t{r.created_at}")
    return "\n".join(lines) + "\n"


# -- manifests ------------------------------------------------------------------------------


def test_statefulset_pod_passes_restricted_and_runs_as_mysql_user() -> None:
    sts = build_mysql_statefulset(_deployment())
    pod = {"spec": sts["spec"]["template"]["spec"]}
    assert restricted_violations(pod) == []
    security = pod["spec"]["securityContext"]
    assert (security["runAsUser"], security["runAsGroup"], security["fsGroup"]) == (999,) * 3
    assert pod["spec"]["shareProcessNamespace"] is True  # the client can SIGKILL mysqld
    assert pod["spec"]["automountServiceAccountToken"] is False
    assert sts["spec"]["replicas"] == 1


def test_password_only_by_reference_for_both_image_families() -> None:
    sts = build_mysql_statefulset(_deployment())
    containers = _containers(sts)
    server_env = {e["name"]: e for e in containers["mysql"]["env"]}
    assert set(server_env) == {"MYSQL_ROOT_PASSWORD", "MARIADB_ROOT_PASSWORD"}
    for env in server_env.values():
        assert "value" not in env
        assert env["valueFrom"]["secretKeyRef"] == {
            "name": "ks-persist-abc-auth",
            "key": "password",
        }
    client_env = containers["client"]["env"]
    assert [e["name"] for e in client_env] == ["MYSQL_PWD"]
    assert "value" not in client_env[0]


def test_secret_carries_the_password() -> None:
    secret = build_secret("s", "db", "hunter2")
    assert secret["kind"] == "Secret"
    assert secret["stringData"] == {"password": "hunter2"}


def test_pvc_variant_claims_the_class_and_mounts_a_subdirectory() -> None:
    sts = build_mysql_statefulset(_deployment())
    (template,) = sts["spec"]["volumeClaimTemplates"]
    assert template["metadata"] == {"name": "data"}
    assert template["spec"]["storageClassName"] == "fast"
    assert template["spec"]["resources"]["requests"]["storage"] == "2Gi"
    assert template["spec"]["accessModes"] == ["ReadWriteOnce"]
    assert sts["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Delete"
    mount = _containers(sts)["mysql"]["volumeMounts"][0]
    assert mount == {"name": "data", "mountPath": DATA_DIR, "subPath": DATA_SUBPATH}
    volumes = {v["name"] for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert "data" not in volumes  # comes from the claim template


def test_empty_dir_variant_has_no_claim() -> None:
    sts = build_mysql_statefulset(_deployment(volume_type=VolumeType.EMPTY_DIR, storage_class=None))
    assert "volumeClaimTemplates" not in sts["spec"]
    assert "persistentVolumeClaimRetentionPolicy" not in sts["spec"]
    volumes = {v["name"]: v for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert volumes["data"] == {"name": "data", "emptyDir": {}}


def test_pvc_variant_needs_a_class() -> None:
    with pytest.raises(ValueError, match="StorageClass"):
        build_mysql_statefulset(_deployment(storage_class=None))


def test_placement_and_resources_go_to_the_server() -> None:
    placement = PodPlacement(
        node_selector={"disk": "ssd"},
        tolerations=(Toleration.parse("db=true:NoSchedule"),),
        cpu="500m",
        memory="1Gi",
    )
    sts = build_mysql_statefulset(_deployment(placement=placement))
    spec = sts["spec"]["template"]["spec"]
    assert spec["nodeSelector"] == {"disk": "ssd"}
    assert spec["tolerations"] == [
        {"key": "db", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    server = _containers(sts)["mysql"]
    assert server["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "500m", "memory": "1Gi"},
    }
    assert "resources" not in _containers(sts)["client"]


def test_openshift_leaves_the_uid_to_the_cluster() -> None:
    sts = build_mysql_statefulset(_deployment(run_as_user=None))
    security = sts["spec"]["template"]["spec"]["securityContext"]
    assert "runAsUser" not in security
    assert "fsGroup" not in security
    assert security["runAsNonRoot"] is True


def test_labels_tie_the_pod_to_the_statefulset() -> None:
    sts = build_mysql_statefulset(_deployment())
    selector = sts["spec"]["selector"]["matchLabels"]
    assert selector.items() <= sts["spec"]["template"]["metadata"]["labels"].items()


def test_plan_shows_no_password_and_carries_the_run_labels() -> None:
    request = PersistenceRequest(storage_class="fast", namespace="db")
    plan = PERSISTENCE_COMMAND.plan(request, PreflightFacts.offline("db"), None, "r1")
    secret, sts = plan.manifests()
    assert secret["stringData"]["password"] == PASSWORD_PLACEHOLDER
    assert sts["kind"] == "StatefulSet"
    assert sts["metadata"]["name"] == "ks-persist-r1"
    for doc in (secret, sts, sts["spec"]["template"]):
        assert doc["metadata"]["labels"]["kubectl-storage/run-id"] == "r1"


def test_plan_takes_the_default_class_and_leaves_assigned_uids_unset() -> None:
    request = PersistenceRequest(storage_class=None, namespace="db")
    facts = PreflightFacts(namespace="db", assigns_uids=True, default_storage_class="std")
    plan = PERSISTENCE_COMMAND.plan(request, facts, None, "r1")
    assert plan.request.storage_class == "std"
    assert plan.deployment.run_as_user is None


def test_passwords_are_random_and_shell_safe() -> None:
    first, second = new_password(), new_password()
    assert first != second
    assert len(first) == 32
    assert first.isalnum()


# -- inputs ---------------------------------------------------------------------------------


def test_parse_disruptions() -> None:
    assert parse_disruptions("crash, restart,crash") == (Disruption.CRASH, Disruption.RESTART)
    assert parse_disruptions("restart,crash,reschedule") == ALL_DISRUPTIONS
    with pytest.raises(ValueError, match="unknown disruption 'reboot'"):
        parse_disruptions("restart,reboot")
    with pytest.raises(ValueError, match="no disruption"):
        parse_disruptions(" , ")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"rows": 0}, "--rows must be between"),
        ({"size": Size.parse("100Mi")}, "too small"),
        ({"volume_type": VolumeType.EMPTY_DIR}, "exclude each other"),
        ({"timeout_s": 0}, "--timeout"),
    ],
)
def test_request_validation(overrides: dict, message: str) -> None:
    values = {"storage_class": "fast", "namespace": "db"}
    values.update(overrides)
    with pytest.raises(UsageError, match=message):
        validate_request(PersistenceRequest(**values))


def test_size_is_not_checked_for_empty_dir() -> None:
    validate_request(
        PersistenceRequest(
            storage_class=None,
            namespace="db",
            size=Size.parse("1Mi"),
            volume_type=VolumeType.EMPTY_DIR,
        )
    )


def test_required_bytes_grows_with_rows() -> None:
    assert required_bytes(1000) < 512 * 1024 * 1024 < required_bytes(200_000)


def test_reschedule_skipped_on_a_single_node() -> None:
    request = PersistenceRequest(storage_class="fast", namespace="db")
    plan = plan_disruptions(request, NodeFacts(("only-node",)))
    assert [(d.value, bool(reason)) for d, reason in plan] == [
        ("restart", False),
        ("crash", False),
        ("reschedule", True),
    ]
    assert "only-node" in plan[2][1]
    two = plan_disruptions(request, NodeFacts(("a", "b")))
    assert all(reason == "" for _, reason in two)
    unknown = plan_disruptions(request, NodeFacts(None))
    assert "cannot be listed" in unknown[2][1]


# -- nodes ----------------------------------------------------------------------------------


def _node(name: str, *, ready: bool = True, unschedulable: bool = False, taints=(), labels=None):
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"unschedulable": unschedulable, "taints": list(taints)},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def test_schedulable_nodes() -> None:
    nodes = [
        _node("ok"),
        _node("cordoned", unschedulable=True),
        _node("down", ready=False),
        _node("tainted", taints=[{"key": "db", "effect": "NoSchedule"}]),
        _node("prefers", taints=[{"key": "x", "effect": "PreferNoSchedule"}]),
        _node("ssd", labels={"disk": "ssd"}),
    ]
    assert schedulable_nodes(nodes, PodPlacement()) == ["ok", "prefers", "ssd"]
    tolerant = PodPlacement(tolerations=(Toleration.parse("db"),))
    assert "tainted" in schedulable_nodes(nodes, tolerant)
    assert schedulable_nodes(nodes, PodPlacement(node_selector={"disk": "ssd"})) == ["ssd"]
    everything = PodPlacement(tolerations=(Toleration.parse("*"),))
    assert len(schedulable_nodes(nodes, everything)) == 4
    # --node NAME goes there over NoSchedule taints and a cordon, as a pod bound by name did
    assert schedulable_nodes(nodes, PodPlacement(node_name="tainted")) == ["tainted"]
    assert schedulable_nodes(nodes, PodPlacement(node_name="cordoned")) == ["cordoned"]
    assert schedulable_nodes(nodes, PodPlacement(node_name="down")) == []
    evicting = [_node("draining", taints=[{"key": "gone", "effect": "NoExecute"}])]
    assert schedulable_nodes(evicting, PodPlacement(node_name="draining")) == []
    no_schedule_only = PodPlacement(tolerations=(Toleration.parse("*:NoSchedule"),))
    assert schedulable_nodes(evicting, no_schedule_only) == []


# -- SQL, rows, checksums -------------------------------------------------------------------


def test_generated_rows_are_deterministic_per_seed_and_printable() -> None:
    rows = generate_rows(50, random.Random(7))
    assert rows == generate_rows(50, random.Random(7))
    assert rows != generate_rows(50, random.Random(8))
    assert [r.task_id for r in rows] == list(range(1, 51))
    for row in rows:
        assert row.title.startswith(f"task {row.task_id}: ")
        assert row.description
        assert row.description.isprintable()
        assert "'" not in row.description
        assert "\t" not in row.description


def test_seed_sql_creates_the_schema_and_commits_in_batches() -> None:
    rows = generate_rows(250, random.Random(1))
    sql = seed_sql(rows, batch=100)
    assert "CREATE DATABASE IF NOT EXISTS `testdb`" in sql
    assert "task_id INT AUTO_INCREMENT PRIMARY KEY" in sql
    assert "title VARCHAR(255) NOT NULL" in sql
    assert "created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP" in sql
    assert "ENGINE=InnoDB" in sql
    assert sql.count("START TRANSACTION;") == sql.count("COMMIT;") == 3
    assert sql.count("),\n(") == 247  # 250 rows in 3 statements


def test_seed_sql_escapes_quotes() -> None:
    sql = seed_sql([TaskRow(1, "it's", "back\\slash")])
    assert "'it''s'" in sql
    assert "'back\\\\slash'" in sql


def test_dump_round_trip_and_checksum() -> None:
    rows = generate_rows(20, random.Random(3))
    stored = _stored(rows)
    parsed = parse_dump(_dump_text(stored))
    assert list(parsed) == stored
    assert table_checksum(r.content() for r in parsed) == table_checksum(rows)
    assert table_checksum(reversed(rows)) == table_checksum(rows)  # order does not matter
    changed = [*rows[:-1], TaskRow(rows[-1].task_id, rows[-1].title + "x", rows[-1].description)]
    assert table_checksum(changed) != table_checksum(rows)
    assert table_checksum(rows).startswith("sha256:")


def test_dump_with_null_description_and_bad_lines() -> None:
    assert parse_dump("1\t41\tNULL\t1700000000\n") == (StoredRow(1, "A", None, 1700000000),)
    assert parse_dump("") == ()
    with pytest.raises(ValueError, match="line 1"):
        parse_dump("1\t41\n")
    with pytest.raises(ValueError, match="line 2"):
        parse_dump("1\t41\t42\t1\nx\t41\t42\t1\n")


def test_missing_table_errors() -> None:
    assert is_missing_table_error(
        "ERROR 1146 (42S02) at line 1: Table 'testdb.tasks' doesn't exist"
    )
    assert is_missing_table_error("ERROR 1049 (42000): Unknown database 'testdb'")
    assert not is_missing_table_error("ERROR 2002 (HY000): Can't connect to server")


def test_compare_intact() -> None:
    rows = generate_rows(10, random.Random(1))
    comparison = compare_rows(rows, _stored(rows))
    assert comparison.intact
    assert comparison.checksum_match
    assert (comparison.rows_expected, comparison.rows_found) == (10, 10)


def test_compare_finds_missing_changed_and_unexpected_rows() -> None:
    rows = generate_rows(10, random.Random(1))
    found = _stored(rows[:7])  # 8..10 lost
    found[0] = StoredRow(1, "tampered", found[0].description, found[0].created_at)
    found.append(StoredRow(99, "ghost", None, 1))
    comparison = compare_rows(rows, found)
    assert comparison.missing_ids == (8, 9, 10)
    assert comparison.changed_ids == (1,)
    assert comparison.unexpected_ids == (99,)
    assert not comparison.checksum_match
    assert not comparison.intact


def test_compare_catches_a_changed_timestamp_against_the_baseline() -> None:
    rows = generate_rows(3, random.Random(1))
    baseline = {r.task_id: r for r in _stored(rows, created_at=100)}
    comparison = compare_rows(rows, _stored(rows, created_at=200), baseline=baseline)
    assert comparison.changed_ids == (1, 2, 3)
    assert comparison.checksum_match  # the written content is the same
    assert not comparison.intact


def test_compare_tolerates_the_in_flight_row() -> None:
    rows = generate_rows(3, random.Random(1))
    found = [*_stored(rows), StoredRow(4, "crash-1", "x", 1)]
    assert compare_rows(rows, found).unexpected_ids == (4,)
    assert compare_rows(rows, found, tolerated_ids=[4]).intact


def test_table_gone_is_loss() -> None:
    rows = generate_rows(5, random.Random(1))
    comparison = compare_rows(rows, [], table_missing=True)
    phase = evaluate_phase("restart", comparison, time_to_ready_s=4.2)
    assert phase.verdict is Verdict.FAIL
    assert phase.note == "table testdb.tasks is gone; 5 of 5 rows missing"


# The crash writer and its accounting: tests/unit/persistence/test_persistence_writer.py


# -- the shell that runs in the pod, against a fake client ----------------------------------

FAKE_CLIENT = r"""#!/bin/sh
# Fake mysql client: records argv, answers like `mysql -N -B`, fails from call $FAIL_AT on.
n=$(cat "$STATE/n" 2>/dev/null || echo 0); n=$((n+1)); echo "$n" > "$STATE/n"
printf '%s\n' "$@" > "$STATE/argv"
if [ -n "$FAIL_AT" ] && [ "$n" -ge "$FAIL_AT" ]; then
  echo "ERROR 2013 (HY000): Lost connection" >&2; exit 1
fi
cat >/dev/null; echo "ok $MYSQL_PWD"
"""


@pytest.fixture
def fake_client(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("mysql", "mariadb"):  # the script prefers mariadb when there is one
        client = bin_dir / name
        client.write_text(FAKE_CLIENT)
        client.chmod(client.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "state"
    state.mkdir()
    path = f"{bin_dir}:/usr/bin:/bin"
    return {"PATH": path, "STATE": str(state), "MYSQL_PWD": "from-env"}


SHELLS = [s for s in ("dash", "bash") if shutil.which(s)]


@pytest.mark.parametrize("shell", SHELLS)
def test_sql_commands_pass_sql_as_data(fake_client, shell: str) -> None:
    tricky = "SELECT '$(touch /tmp/never)' AS `x`"
    argv = sql_command(tricky)
    argv[0] = shell
    proc = subprocess.run(
        argv, env=fake_client, input="", capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    seen = (Path(fake_client["STATE"]) / "argv").read_text().splitlines()
    assert seen[-2:] == ["-e", tricky]
    body = b"SELECT 1;\n" * 3
    argv = sql_stdin_command(len(body))
    argv[0] = shell
    proc = subprocess.run(argv, env=fake_client, input=body + b"ignored", capture_output=True)
    assert proc.returncode == 0
    assert proc.stdout == b"ok from-env\n"


# -- report and rendering -------------------------------------------------------------------


def _report(*, emptydir: bool = False) -> PersistenceReport:
    rows = generate_rows(1000, random.Random(5))
    stored = _stored(rows)
    seed = evaluate_phase(
        "seed", compare_rows(rows, stored), time_to_ready_s=7.64, node_after="node-a"
    )
    if emptydir:
        restart = evaluate_phase(
            "restart",
            compare_rows(rows, [], table_missing=True),
            time_to_ready_s=7.1,
            node_before="node-a",
            node_after="node-a",
            note="graceful delete; pod recreated on node-a",
        )
        phases = (
            seed,
            restart,
            PhaseResult(
                "crash", Verdict.SKIPPED, note="not run: the data was already lost in restart"
            ),
            PhaseResult(
                "reschedule", Verdict.SKIPPED, note="not run: the data was already lost in restart"
            ),
        )
        return PersistenceReport(
            None, VolumeType.EMPTY_DIR, None, "db", "mariadb:test", 1000, "abcd1234", phases
        )
    restart = evaluate_phase(
        "restart",
        compare_rows(rows, stored),
        time_to_ready_s=3.21,
        node_before="node-a",
        node_after="node-a",
        note="graceful delete; pod recreated on node-a",
    )
    log = parse_writer_output(
        "".join(f"ack {i}\n" for i in range(1, 53))
        + "killed 7 mariadbd\nfail 53 ERROR 2013\nend 53\n",
        first_id=1001,
    )
    crash_rows = [writer_row(seq, tid) for seq, tid in log.acknowledged]
    found = stored + _stored(crash_rows)
    accounting, durable, tolerated = account_commits(log, found)
    crash = evaluate_phase(
        "crash",
        compare_rows(list(rows) + list(durable), found, tolerated_ids=tolerated),
        time_to_ready_s=1.4,
        commits=accounting,
        writer_attempts=log.attempts,
        node_before="node-a",
        node_after="node-a",
        note="mysqld SIGKILLed during writes; the unacknowledged commit in flight is absent "
        "(allowed)",
    )
    reschedule = PhaseResult(
        "reschedule", Verdict.SKIPPED, note="needs a second schedulable node (only node-a)"
    )
    return PersistenceReport(
        "fast",
        VolumeType.PVC,
        "1Gi",
        "db",
        "mysql:8.4",
        1000,
        "abcd1234",
        (seed, restart, crash, reschedule),
    )


def test_report_document() -> None:
    document = _report().to_dict()
    assert list(document)[:2] == ["apiVersion", "kind"]
    assert document["kind"] == "PersistenceReport"
    assert document["verdict"] == "pass"
    crash = document["phases"][2]
    assert crash["phase"] == "crash"
    assert crash["commits"] == {
        "attempted": 53,
        "acknowledged": 52,
        "acknowledged_present": 52,
        "acknowledged_lost": 0,
        "lost_ids": [],
        "in_flight": True,
        "in_flight_present": False,
    }
    assert crash["rows_expected"] == crash["rows_found"] == 1052
    assert document["phases"][3]["verdict"] == "skipped"
    assert document["phases"][3]["rows_found"] is None


def test_verdicts() -> None:
    assert _report().outcome.verdict is Verdict.PASS
    control = _report(emptydir=True)
    # the control lost its data in restart, as it must: it shows the check sees a loss
    assert control.outcome.verdict is Verdict.PASS
    assert control.failed_phases == ["restart"]
    only_skipped = PersistenceReport(
        "fast",
        VolumeType.PVC,
        "1Gi",
        "db",
        "img",
        1,
        "x",
        (_report().phases[0], PhaseResult("reschedule", Verdict.SKIPPED, note="one node")),
    )
    # nothing tested is never a pass
    assert only_skipped.outcome.verdict is Verdict.INCONCLUSIVE
    assert only_skipped.outcome.reasons == ("nothing-tested",)


def test_lost_commits_fail_the_phase() -> None:
    comparison = compare_rows([], [])
    lost = CommitAccounting(10, 9, (1007,), None, None)
    phase = evaluate_phase("crash", comparison, time_to_ready_s=1.0, commits=lost, note="ctx")
    assert phase.verdict is Verdict.FAIL
    assert phase.note == "1 of 10 acknowledged commits lost; ctx"


def test_verdict_lines() -> None:
    assert verdict_line(_report()) == (
        "PASS: committed data survived restart, crash on StorageClass fast; tested: graceful "
        "restart, process kill (node page cache kept); power loss not tested; skipped: reschedule"
    )
    assert verdict_line(_report(emptydir=True)) == (
        "PASS (control): committed data was lost on the emptyDir volume in restart, as a "
        "pod-local volume must lose it: the check sees a loss; skipped: crash, reschedule"
    )


def test_golden_table(golden) -> None:
    out = io.StringIO()
    write_persistence_table(_report(), out)
    golden("persistence-pass.txt", out.getvalue())


def test_golden_wide_table(golden) -> None:
    out = io.StringIO()
    write_persistence_table(_report(), out, wide=True)
    golden("persistence-pass-wide.txt", out.getvalue())


def test_golden_empty_dir_loss(golden) -> None:
    out = io.StringIO()
    write_persistence_table(_report(emptydir=True), out)
    golden("persistence-emptydir-loss.txt", out.getvalue())
