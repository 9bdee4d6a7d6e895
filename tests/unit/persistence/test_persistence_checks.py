"""validate-persistence beyond the rows (issue 12): the fsync probe, the moves' nodes and events,
the server's durability settings in the report, the emptyDir control's scope, and the run
scope's undo of a cordon.

fio outputs are the recorded ones in tests/fixtures/fio (SOURCES.md there); the scheduler's
message and the PV's node affinity are as the test cluster's local-path class produced them
(tests/fixtures/validate_persistence/SOURCES.md).
"""

from __future__ import annotations

import io
import json
import logging
import random
from pathlib import Path

import pytest

from kubectl_storage.core.flush.timing import FlushClass
from kubectl_storage.core.k8s.scheduling import (
    describe_pinning,
    unschedulable_message,
    volume_nodes,
)
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.durability import judge_durability, parse_variables
from kubectl_storage.core.validate_persistence.mysql import (
    Disruption,
    MysqlDeployment,
    VolumeType,
    build_mysql_statefulset,
    check_server_args,
)
from kubectl_storage.core.validate_persistence.nodes import cordon_patch, volume_events
from kubectl_storage.core.validate_persistence.probe import (
    FLUSH_FLOOR_US,
    parse_probe,
    probe_command,
)
from kubectl_storage.core.validate_persistence.report import (
    ControlScope,
    DurabilityCheck,
    PersistenceReport,
    PhaseResult,
    evaluate_phase,
)
from kubectl_storage.core.validate_persistence.rows import StoredRow, compare_rows, generate_rows
from kubectl_storage.errors import UsageError
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.validate_persistence import (
    PERSISTENCE_COMMAND,
    NodeFacts,
    PersistenceRequest,
    plan_disruptions,
    validate_request,
)
from kubectl_storage.render.validate_persistence import verdict_line, write_persistence_table
from tests.unit.k8s.test_k8s_manifests import restricted_violations

FIO = Path(__file__).parents[2] / "fixtures" / "fio"
FIXTURES = Path(__file__).parents[2] / "fixtures" / "validate_persistence"


def _fio(name: str) -> str:
    return (FIO / name).read_text()


# -- the fsync probe --------------------------------------------------------------------------


def test_probe_command_is_etcds_job_on_the_volume() -> None:
    argv = probe_command()
    script = argv[2]
    for option in (
        "--rw=write",
        "--ioengine=sync",
        "--fdatasync=1",
        "--bs=2300",
        "--size=22m",
        "--output-format=json",
    ):
        assert option in script
    assert argv[-1].startswith("/probe/")  # the data volume's root, beside MySQL's directory
    assert 'rm -f "$1" "$1.direct"' in script
    # Then, after etcd's job (stonewall), direct 4k writes with fdatasync each: their write
    # latency is the device's, which is what tells memory from a flush that is not needed.
    direct = script[script.index("--name=direct-flush") :]
    options = ("--stonewall", "--direct=1", "--overwrite=1", "--fdatasync=1", "--bs=4k")
    for option in (*options, '"$1.direct"'):
        assert option in direct


def test_probe_on_ext4_measures_fdatasync_and_warns_of_nothing() -> None:
    probe = parse_probe(_fio("fio-3.33-etcd-profile-ext4.json"))
    assert probe.error == ""
    assert probe.syncs == 10029  # lat_ns.N; fio-3.33 reports total_ios 0 for sync
    assert (probe.p50_us, probe.p99_us) == (68.1, 667.65)
    assert probe.max_us == 16041.88
    assert probe.warnings == ()
    assert probe.fio_version == "fio-3.33"


def test_probe_on_tmpfs_warns_that_nothing_can_be_durable_that_fast() -> None:
    probe = parse_probe(_fio("fio-3.33-etcd-profile-tmpfs.json"))
    assert probe.p50_us == 0.09
    assert probe.p50_us < FLUSH_FLOOR_US
    # etcd's buffered job alone (captured before the direct job existed): the fdatasync had
    # the write-out to do and took 0.09 µs, so the data stayed in memory.
    assert probe.flush is not None
    assert probe.flush.kind is FlushClass.MEMORY
    assert probe.acknowledges_too_fast
    (warning,) = probe.warnings
    assert warning.startswith("memory-backed: fdatasync returns in 0.09 µs (median)")
    assert "a power loss loses what was acknowledged" in warning


def test_probe_slower_than_etcds_guidance_warns() -> None:
    document = json.loads(_fio("fio-3.33-etcd-profile-ext4.json"))
    document["jobs"][0]["sync"]["lat_ns"]["percentile"]["99.000000"] = 25_000_000
    (warning,) = parse_probe(json.dumps(document)).warnings
    assert "p99 25.0 ms is above etcd's guidance of 10 ms" in warning


def test_probe_error_and_text_before_the_json() -> None:
    # fio printed its error line before the JSON; the job's error is 28 (ENOSPC).
    probe = parse_probe(_fio("fio-3.33-enospc-tmpfs.json"))
    assert probe.error == "fio failed with error 28"
    assert probe.p99_us is None
    assert parse_probe("").error == "fio's output is not JSON: no output"
    assert parse_probe("sh: fio: not found\n").error.startswith("fio's output is not JSON")
    assert parse_probe('{"jobs": []}').error == "fio reported no job"


def test_probe_container_mounts_the_whole_volume_and_stays_restricted() -> None:
    deployment = MysqlDeployment(
        name="ks-persist-x",
        namespace="db",
        image="mysql:8.4",
        secret_name="s",
        storage_class="fast",
        size="1Gi",
        probe_image="toolbox:1",
    )
    sts = build_mysql_statefulset(deployment)
    spec = sts["spec"]["template"]["spec"]
    assert restricted_violations({"spec": spec}) == []
    probe = next(c for c in spec["containers"] if c["name"] == "probe")
    assert probe["image"] == "toolbox:1"
    assert {"name": "data", "mountPath": "/probe"} in probe["volumeMounts"]
    without = build_mysql_statefulset(
        MysqlDeployment(**{**deployment.__dict__, "probe_image": None})
    )
    assert [c["name"] for c in without["spec"]["template"]["spec"]["containers"]] == [
        "mysql",
        "client",
    ]


# -- server options ---------------------------------------------------------------------------


def test_server_args_become_the_server_containers_args() -> None:
    deployment = MysqlDeployment(
        name="n",
        namespace="db",
        image="mysql:8.4",
        secret_name="s",
        storage_class="fast",
        size="1Gi",
        server_args=("--innodb-flush-log-at-trx-commit=2",),
    )
    server = build_mysql_statefulset(deployment)["spec"]["template"]["spec"]["containers"][0]
    assert server["name"] == "mysql"
    assert server["args"] == ["--innodb-flush-log-at-trx-commit=2"]
    assert "command" not in server  # the image's entrypoint still starts the server


@pytest.mark.parametrize("bad", ["mysqld", "-x", "--a b", "--x\n--y", "--=1", ""])
def test_server_args_must_be_options(bad: str) -> None:
    with pytest.raises(ValueError, match="is not one server option"):
        check_server_args((bad,))
    with pytest.raises(UsageError):
        validate_request(PersistenceRequest("fast", "db", server_args=(bad,)))
    check_server_args(("--sync-binlog=1", "--skip-log-bin", "--innodb_doublewrite=OFF"))


# -- which disruptions run --------------------------------------------------------------------


def test_node_drain_is_opt_in_and_needs_a_second_node() -> None:
    default = PersistenceRequest("fast", "db")
    assert Disruption.NODE_DRAIN not in default.chosen
    drill = PersistenceRequest("fast", "db", disruptions=(Disruption.NODE_DRAIN,))
    (only,) = plan_disruptions(drill, NodeFacts(("a",)))
    assert only[0] is Disruption.NODE_DRAIN
    assert "needs a second schedulable node" in only[1]
    assert plan_disruptions(drill, NodeFacts(("a", "b"))) == [(Disruption.NODE_DRAIN, "")]
    conditions = PERSISTENCE_COMMAND.requirements(drill).conditions
    assert {"reschedule", "node-drain", "pvc-volume"} <= set(conditions)
    assert "node-drain" not in PERSISTENCE_COMMAND.requirements(default).conditions


def test_the_control_says_it_cannot_judge_a_crash() -> None:
    control = PersistenceRequest(None, "db", volume_type=VolumeType.EMPTY_DIR)
    plan = dict(plan_disruptions(control, NodeFacts(("a", "b"))))
    assert plan[Disruption.RESTART] == ""
    assert plan[Disruption.RESCHEDULE] == ""
    assert "container restart keeps the pod and its emptyDir" in plan[Disruption.CRASH]


# -- nodes, volumes and events of a move -------------------------------------------------------

#: The PV the test cluster's local-path class made for a run's claim (metadata trimmed).
LOCAL_PV = {
    "kind": "PersistentVolume",
    "metadata": {"name": "pvc-9dde1225-d01c-4219-ac8c-d1603891d324"},
    "spec": {
        "nodeAffinity": {
            "required": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {
                                "key": "kubernetes.io/hostname",
                                "operator": "In",
                                "values": ["tk8s-node-2"],
                            }
                        ]
                    }
                ]
            }
        }
    },
}


def _node(name: str, **labels: str) -> dict:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **labels}}}


NODES = [
    _node("tk8s-node", zone="a"),
    _node("tk8s-node-2", zone="a"),
    _node("tk8s-node-3", zone="b"),
]


def test_a_pinned_volume_admits_only_its_node() -> None:
    assert volume_nodes(LOCAL_PV, NODES) == ["tk8s-node-2"]
    assert describe_pinning(LOCAL_PV) == "kubernetes.io/hostname In [tk8s-node-2]"
    assert volume_nodes({"spec": {}}, NODES) is None  # no affinity: any node


def test_node_affinity_operators() -> None:
    def pv(*expressions: dict, fields: tuple[dict, ...] = ()) -> dict:
        term = {"matchExpressions": list(expressions), "matchFields": list(fields)}
        return {"spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [term]}}}}

    zone_a = {"key": "zone", "operator": "In", "values": ["a"]}
    assert volume_nodes(pv(zone_a), NODES) == ["tk8s-node", "tk8s-node-2"]
    not_a = {"key": "zone", "operator": "NotIn", "values": ["a"]}
    assert volume_nodes(pv(not_a), NODES) == ["tk8s-node-3"]
    assert volume_nodes(pv({"key": "zone", "operator": "Exists"}), NODES) == sorted(
        n["metadata"]["name"] for n in NODES
    )
    assert volume_nodes(pv({"key": "gpu", "operator": "DoesNotExist"}), NODES) == [
        "tk8s-node",
        "tk8s-node-2",
        "tk8s-node-3",
    ]
    by_name = {"key": "metadata.name", "operator": "In", "values": ["tk8s-node-3"]}
    assert volume_nodes(pv(fields=(by_name,)), NODES) == ["tk8s-node-3"]
    assert volume_nodes(pv(), NODES) == []  # an empty term matches nothing


#: The new pod's PodScheduled condition while its node was cordoned (local-path, 4 nodes).
UNSCHEDULABLE_POD = {
    "metadata": {"uid": "new"},
    "status": {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 "
                "node(s) were unschedulable, 2 node(s) didn't match PersistentVolume's node "
                "affinity. no new claims to deallocate, preemption: 0/4 nodes are available: 4 "
                "Preemption is not helpful for scheduling.",
            }
        ],
    },
}


def test_the_schedulers_reason_is_its_first_sentence() -> None:
    assert unschedulable_message(UNSCHEDULABLE_POD) == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were "
        "unschedulable, 2 node(s) didn't match PersistentVolume's node affinity"
    )
    assert unschedulable_message({"status": {"phase": "Running"}}) is None


def test_volume_events_of_the_two_pods_only_without_repeats() -> None:
    def event(uid: str, reason: str, message: str, when: str) -> dict:
        return {
            "involvedObject": {"uid": uid},
            "type": "Normal" if reason.startswith("Successful") else "Warning",
            "reason": reason,
            "message": message,
            "lastTimestamp": when,
        }

    events = [
        event(
            "new", "SuccessfulAttachVolume", 'AttachVolume.Attach succeeded for volume "pv"', "3"
        ),
        event("new", "FailedScheduling", "0/3 nodes are available", "1"),
        event("new", "FailedScheduling", "0/3 nodes are available", "2"),
        event("new", "Pulled", "image present", "4"),  # not about the volume
        event("someone-else", "FailedMount", "not ours", "1"),
        event("old", "FailedAttachVolume", "Multi-Attach error for volume", "0"),
    ]
    assert volume_events(events, ["old", "new"]) == [
        "Warning FailedAttachVolume: Multi-Attach error for volume",
        "Warning FailedScheduling: 0/3 nodes are available",
        'Normal SuccessfulAttachVolume: AttachVolume.Attach succeeded for volume "pv"',
    ]


def test_cordon_patch() -> None:
    assert cordon_patch(True) == {"spec": {"unschedulable": True}}
    assert cordon_patch(False) == {"spec": {"unschedulable": False}}


# -- the run scope undoes a cordon -------------------------------------------------------------


class _NoObjects:
    """The scope's API when the run created nothing: any call would be a bug."""

    namespace = "db"

    def __getattr__(self, name: str):
        raise AssertionError(f"the scope called api.{name} with nothing to delete")


@pytest.mark.parametrize("keep", [False, True])
def test_deferred_undo_runs_when_the_run_ends_even_with_keep(keep: bool) -> None:
    done: list[str] = []
    scope = RunScope(_NoObjects(), "validate-persistence", keep=keep)  # type: ignore[arg-type]

    def failed_move() -> None:
        with scope:
            scope.defer("uncordon node a", lambda: done.append("a"))
            scope.defer("uncordon node b", lambda: done.append("b"))
            raise RuntimeError("the move failed")

    with pytest.raises(RuntimeError):
        failed_move()
    assert done == ["b", "a"]  # newest first


def test_undo_now_runs_once_and_a_failed_undo_is_retried_at_the_end(caplog) -> None:
    calls: list[str] = []
    failing = {"left": 1}

    def flaky() -> None:
        calls.append("flaky")
        if failing["left"]:
            failing["left"] -= 1
            raise KeyboardInterrupt  # interrupted halfway

    with RunScope(_NoObjects(), "validate-persistence") as scope:  # type: ignore[arg-type]
        now = scope.defer("uncordon node a", lambda: calls.append("a"))
        now()
        now()  # already undone: nothing happens
        retry = scope.defer("uncordon node b", flaky)
        with pytest.raises(KeyboardInterrupt):
            retry()
    assert calls == ["a", "flaky", "flaky"]


def test_a_failing_undo_is_logged_and_the_rest_still_run(caplog) -> None:
    done: list[str] = []

    def broken() -> None:
        raise OSError("API unreachable")

    caplog.set_level(logging.WARNING)
    with RunScope(_NoObjects(), "validate-persistence") as scope:  # type: ignore[arg-type]
        scope.defer("uncordon node a", lambda: done.append("a"))
        scope.defer("uncordon node b", broken)
    assert done == ["a"]
    assert "could not undo (uncordon node b): API unreachable" in caplog.text


# -- the report -------------------------------------------------------------------------------

#: Real: DURABILITY_SQL on Debian's MariaDB 10.11 (the test image's server) after SCHEMA_SQL
#: (tests/fixtures/validate_persistence/SOURCES.md).
MARIADB_DEFAULTS = (FIXTURES / "mariadb-10.11-durability.txt").read_text()


def _settings(flush: str = "1"):
    return judge_durability(
        parse_variables(MARIADB_DEFAULTS.replace("commit\t1", f"commit\t{flush}"))
    )


def _phases(volume_type: VolumeType = VolumeType.PVC) -> tuple[PhaseResult, ...]:
    rows = generate_rows(20, random.Random(4))
    stored = [StoredRow(r.task_id, r.title, r.description, 1) for r in rows]
    seed = evaluate_phase("seed", compare_rows(rows, stored), time_to_ready_s=5.0, node_after="n1")
    moved = evaluate_phase(
        "reschedule",
        compare_rows(rows, stored),
        time_to_ready_s=2.5,
        node_before="n1",
        node_after="n2",
        note="pod deleted with n1 cordoned; running on n2 after 2.4s",
        time_to_running_s=2.4,
        volume_events=('Normal SuccessfulAttachVolume: AttachVolume.Attach succeeded for "pv"',),
    )
    return seed, moved


def _report(**overrides) -> PersistenceReport:
    values = {
        "storage_class": "fast",
        "volume_type": VolumeType.PVC,
        "size": "1Gi",
        "namespace": "db",
        "image": "mariadb:test",
        "rows": 20,
        "run_id": "abcd1234",
        "phases": _phases(),
        "durability": DurabilityCheck(_settings()),
        "fsync_probe": parse_probe(_fio("fio-3.33-etcd-profile-ext4.json")),
    }
    values.update(overrides)
    return PersistenceReport(**values)


def test_report_carries_durability_probe_and_move_fields() -> None:
    document = _report().to_dict()
    assert list(document)[-4:] == ["durability", "fsync_probe", "control", "tested"]
    assert document["verdict"] == "pass"
    assert document["durability"]["variables"]["innodb_flush_log_at_trx_commit"] == "1"
    assert document["durability"]["durable"] is True
    assert document["fsync_probe"]["fdatasync_p99_us"] == 667.65
    assert document["fsync_probe"]["etcd_p99_limit_us"] == 10_000.0
    moved = document["phases"][1]
    assert (moved["time_to_running_s"], moved["data_cannot_follow"]) == (2.4, False)
    assert moved["volume_events"][0].startswith("Normal SuccessfulAttachVolume")
    # The keys a phase had before keep their order, new ones come after "note".
    keys = list(moved)
    assert keys.index("note") < keys.index("time_to_running_s")


def test_a_non_durable_server_fails_the_check_unless_allowed() -> None:
    settings = _settings("2")
    failed = _report(durability=DurabilityCheck(settings, server_args=("--x=2",)))
    assert failed.outcome.verdict is Verdict.FAIL
    assert failed.outcome.reasons == ("durability",)
    assert failed.failed_phases == []  # no data was lost: the configuration fails it
    assert verdict_line(failed) == (
        "FAIL: the server is not configured to make a commit durable "
        "(innodb_flush_log_at_trx_commit=2)"
    )
    # --allow-non-durable-config only lets the disruptions run: what survived them is no pass
    allowed = _report(durability=DurabilityCheck(settings, allowed_non_durable=True))
    assert allowed.outcome.verdict is Verdict.FAIL
    assert allowed.outcome.reasons == ("durability",)
    assert allowed.to_dict()["durability"]["allowed_non_durable"] is True
    assert allowed.to_dict()["verdict"] == "fail"
    assert verdict_line(allowed).startswith(
        "FAIL: the server is not configured to make a commit durable "
        "(innodb_flush_log_at_trx_commit=2); with --allow-non-durable-config the disruptions "
        "ran and committed data survived "
    )
    assert verdict_line(allowed).endswith("; power loss not tested")


def test_data_that_cannot_follow_the_pod_is_a_finding_not_a_loss() -> None:
    seed, moved = _phases()
    stuck = PhaseResult(
        "node-drain",
        Verdict.FAIL,
        comparison=moved.comparison,
        node_before="n1",
        node_after="n1",
        note="the data cannot follow the pod: PersistentVolume pv is pinned to n1",
        time_to_running_s=3.0,
        cannot_follow=True,
    )
    report = _report(phases=(seed, stuck))
    assert report.outcome.verdict is Verdict.FAIL
    assert report.outcome.reasons == ("cannot-follow:node-drain",)
    assert report.cannot_follow == ["node-drain"]
    assert report.failed_phases == []
    assert not stuck.lost_data
    assert verdict_line(report).startswith(
        "FAIL: the data cannot follow the pod to another node on StorageClass fast (node-drain"
    )


def test_control_scope_in_the_report() -> None:
    control = ControlScope(("restart",), (("crash", "a container restart keeps the pod"),))
    report = _report(volume_type=VolumeType.EMPTY_DIR, control=control)
    assert report.to_dict()["control"] == {
        "judged": ["restart"],
        "cannot_judge": [{"disruption": "crash", "reason": "a container restart keeps the pod"}],
    }


def test_golden_table_with_the_checks(golden) -> None:
    out = io.StringIO()
    write_persistence_table(_report(), out)
    golden("persistence-checks.txt", out.getvalue())


def test_golden_table_not_durable(golden) -> None:
    out = io.StringIO()
    skipped = tuple(
        PhaseResult(
            d,
            Verdict.SKIPPED,
            note="not run: the server is not configured to make a commit durable",
        )
        for d in ("restart", "crash")
    )
    report = _report(
        phases=(_phases()[0], *skipped),
        durability=DurabilityCheck(
            _settings("2"), server_args=("--innodb-flush-log-at-trx-commit=2",)
        ),
        fsync_probe=parse_probe(_fio("fio-3.33-etcd-profile-tmpfs.json")),
    )
    write_persistence_table(report, out)
    golden("persistence-not-durable.txt", out.getvalue())


def test_a_move_without_attach_says_why() -> None:
    seed, moved = _phases()
    detached = PhaseResult(**{**moved.__dict__, "volume_events": (), "attach_required": False})
    out = io.StringIO()
    write_persistence_table(_report(phases=(seed, detached)), out)
    assert (
        "  reschedule: no attach or detach: the volume's CSI driver attaches nothing "
        "(attachRequired: false)\n"
    ) in out.getvalue()
    assert _report(phases=(seed, detached)).to_dict()["phases"][1]["attach_required"] is False
    unknown = PhaseResult(**{**moved.__dict__, "volume_events": ()})
    out = io.StringIO()
    write_persistence_table(_report(phases=(seed, unknown)), out)
    assert "  reschedule: no attach or detach events reported\n" in out.getvalue()


def test_untolerated_taints_of_the_nodes_a_pod_may_go_to() -> None:
    from kubectl_storage.core.k8s.manifests import PodPlacement, Toleration
    from kubectl_storage.core.k8s.scheduling import untolerated_taints

    taint = {"key": "team", "value": "db", "effect": "NoSchedule"}
    nodes = [
        {"metadata": {"name": "a", "labels": {"zone": "x"}}, "spec": {"taints": [taint]}},
        {"metadata": {"name": "b", "labels": {"zone": "y"}}, "spec": {}},
        {
            "metadata": {"name": "c", "labels": {"zone": "x"}},
            "spec": {"taints": [{"key": "soft", "effect": "PreferNoSchedule"}]},
        },
    ]
    x = PodPlacement(node_selector={"zone": "x"})
    assert untolerated_taints(nodes, x) == {"a": ["team=db:NoSchedule"]}
    assert untolerated_taints(nodes, PodPlacement(node_name="b")) == {}
    tolerant = PodPlacement(node_selector={"zone": "x"}, tolerations=(Toleration("team"),))
    assert untolerated_taints(nodes, tolerant) == {}
