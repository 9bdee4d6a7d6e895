"""`kubectl storage fio` on the real cluster: results, comparison, --pvc, refusals, interruption."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed


def _report(result) -> dict:
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_quick_profile_reports_iops_and_latency_percentiles(cluster, namespace) -> None:
    report = _report(
        run_cli(
            "fio",
            "-s",
            HOSTPATH_CLASS,
            "-z",
            "1Gi",
            "--profile",
            "quick",
            "-n",
            namespace,
            "-o",
            "json",
        )
    )
    assert report["kind"] == "FioReport"
    jobs = {j["name"]: j for j in report["results"][0]["jobs"]}
    assert report["results"][0]["storage_class"] == HOSTPATH_CLASS
    assert jobs["read_iops"]["read_iops"] > 0
    assert jobs["write_iops"]["write_iops"] > 0
    for key in ("read_clat_p50_us", "read_clat_p95_us", "read_clat_p99_us", "read_clat_p99_9_us"):
        assert jobs["read_iops"][key] > 0, key
    assert jobs["read_iops"]["read_clat_p99_us"] >= jobs["read_iops"]["read_clat_p50_us"]
    assert jobs["read_iops"]["raw"][0]["jobname"] == "read_iops"  # one raw fio job per repeat
    assert managed(cluster, namespace, FIO_OBJECTS) == []


def test_two_classes_compared_including_wait_for_first_consumer(
    cluster, namespace, tmp_path
) -> None:
    chart = tmp_path / "compare.svg"
    result = run_cli(
        "fio",
        "-s",
        HOSTPATH_CLASS,
        "-s",
        "local-path",
        "-z",
        "1Gi",
        "--profile",
        "quick",
        "--runtime",
        "2",
        "--ramp-time",
        "0",
        "-n",
        namespace,
        "--chart",
        str(chart),
    )
    assert result.exit_code == 0, result.stderr
    assert f"StorageClass {HOSTPATH_CLASS}" in result.stdout
    assert "StorageClass local-path" in result.stdout
    assert "Comparison" in result.stdout
    assert chart.read_text().lstrip().startswith(("<?xml", "<svg"))


def test_existing_pvc_is_benchmarked_and_left_alone(cluster, namespace) -> None:
    cluster.apply(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: users-data}\n"
        f"spec: {{accessModes: [ReadWriteOnce], storageClassName: {HOSTPATH_CLASS}, "
        "resources: {requests: {storage: 1Gi}}}\n",
        namespace,
    )
    result = run_cli(
        "fio",
        "--pvc",
        "users-data",
        "--profile",
        "quick",
        "--runtime",
        "2",
        "-n",
        namespace,
        "-o",
        "json",
    )
    report = _report(result)
    assert report["pvc"] == "users-data"
    assert report["results"][0]["storage_class"] == "users-data"
    assert "writes" in result.stderr  # warned that fio writes into the user's volume
    pvc = cluster.get_json("pvc", "users-data", "-n", namespace)
    assert pvc["metadata"].get("deletionTimestamp") is None


def test_restricted_namespace_admits_the_benchmark_pod(cluster, namespace) -> None:
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    report = _report(
        run_cli(
            "fio",
            "-s",
            HOSTPATH_CLASS,
            "-z",
            "1Gi",
            "--profile",
            "quick",
            "--runtime",
            "2",
            "-n",
            namespace,
            "-o",
            "json",
        )
    )
    assert report["results"][0]["jobs"][0]["read_iops"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Local input is judged first: a size that fits, so the class check is what refuses.
        (["-s", "no-such-class", "-z", "10Gi"], "StorageClass no-such-class does not exist"),
        (["-s", HOSTPATH_CLASS, "-z", "1Gi", "--profile", "default"], "short"),
        (["--pvc", "no-such-pvc"], 'PVC "no-such-pvc" does not exist'),
        # a named node that is not there: refused by preflight, not after a pod waited for it
        (["-s", HOSTPATH_CLASS, "-z", "10Gi", "--node", "no-such-node"], 'node "no-such-node"'),
    ],
)
def test_refusals_create_nothing(cluster, namespace, args: list[str], message: str) -> None:
    started = time.monotonic()
    result = run_cli("fio", *args, "-n", namespace, "--timeout", "120")
    elapsed = time.monotonic() - started
    assert result.exit_code == 2
    assert elapsed < 60, elapsed  # refused at once, not after the 120 s timeout
    assert message in result.stderr
    if "--node" in args:
        assert "Nodes: " in result.stderr  # what exists, by name
        assert cluster.node in result.stderr
    assert "Traceback" not in result.stderr
    events = cluster.get_json("events", "-n", namespace)["items"]
    assert events == []  # nothing was ever created in the namespace
    assert managed(cluster, namespace, FIO_OBJECTS) == []


def test_missing_namespace(cluster) -> None:
    result = run_cli("fio", "-s", HOSTPATH_CLASS, "-z", "10Gi", "-n", "no-such-namespace")
    assert result.exit_code == 2
    assert 'namespace "no-such-namespace" does not exist' in result.stderr


def _start_fio(namespace: str, *extra: str) -> subprocess.Popen:
    return start_cli(
        "fio",
        "-s",
        HOSTPATH_CLASS,
        "-z",
        "1Gi",
        "--profile",
        "quick",
        "--runtime",
        "30",
        "-n",
        namespace,
        "-v",
        *extra,
    )


@pytest.mark.parametrize(
    ("when", "sig", "code"),
    [
        ("waiting for the benchmark pod", signal.SIGINT, 130),
        ("fio starts", signal.SIGINT, 130),
        ("fio starts", signal.SIGTERM, 143),
    ],
)
def test_interrupt_cleans_up(cluster, namespace, when: str, sig: signal.Signals, code: int) -> None:
    proc = _start_fio(namespace)
    wait_for_stderr(proc, when, timeout=120)
    if when == "fio starts":
        time.sleep(3)  # inside the exec of fio
    assert managed(cluster, namespace, FIO_OBJECTS), "the run should have created objects by now"
    proc.send_signal(sig)
    _, err = finish_cli(proc, 180)
    assert proc.returncode == code, err
    assert "deleted what run" in err
    assert managed(cluster, namespace, FIO_OBJECTS) == []


def test_job_file_without_directory_runs_on_the_volume(cluster, namespace, tmp_path) -> None:
    # fio writes to its working directory by default, and the pod's root filesystem is
    # read-only: the job must land on the volume anyway (found by the kubestr comparison).
    job = tmp_path / "plain.fio"
    job.write_text(
        "[global]\nioengine=libaio\ndirect=1\nsize=64M\nruntime=2\ntime_based\n[r]\nrw=randread\nbs=4k\n"
    )
    report = _report(
        run_cli(
            "fio",
            "-s",
            HOSTPATH_CLASS,
            "-z",
            "1Gi",
            "-f",
            str(job),
            "-n",
            namespace,
            "-o",
            "json",
        )
    )
    job_result = report["results"][0]["jobs"][0]
    assert job_result["error"] == 0
    assert job_result["read_iops"] > 0
    assert report["profile"] == "custom"


def test_parallel_classes(cluster, namespace) -> None:
    # Two execs at once share one API connection setup: each stream needs its own client.
    report = _report(
        run_cli(
            "fio",
            "-s",
            HOSTPATH_CLASS,
            "-s",
            "local-path",
            "-z",
            "1Gi",
            "--profile",
            "quick",
            "--runtime",
            "2",
            "--ramp-time",
            "0",
            "--parallel",
            "-n",
            namespace,
            "-o",
            "json",
        )
    )
    assert [r["storage_class"] for r in report["results"]] == [HOSTPATH_CLASS, "local-path"]
    assert all(r["jobs"][0]["read_iops"] > 0 for r in report["results"])


def test_until_steady_ends_jobs_early_and_says_so(cluster, namespace) -> None:
    """--until-steady on the test driver: every timed job of the quick profile asks fio for
    steady state; a job fio found steady ended before the 60 s maximum and carries fio.steady
    with the time; one that did not (a loaded CI node) runs to the maximum and is fio.not-steady,
    never counted as trusted."""
    maximum = 60
    report = _report(
        run_cli(
            "fio",
            "-s",
            HOSTPATH_CLASS,
            "-z",
            "1Gi",
            "--profile",
            "quick",
            "--until-steady",
            "--runtime",
            str(maximum),
            "-n",
            namespace,
            "-o",
            "json",
        )
    )
    (result,) = report["results"]
    notes = {(note["id"], note.get("job")) for note in result["notes"]}
    states = {job["name"]: job["steady_state"] for job in result["jobs"]}
    assert states, result
    assert all(state is not None for state in states.values()), states
    assert {state["criterion"] for state in states.values()} == {"iops_slope"}
    attained = [name for name, state in states.items() if state["attained"]]
    assert attained, f"no job was found steady within {maximum} s: {states}"
    for name, state in states.items():
        if state["attained"]:
            assert state["runtime_s"] < maximum, (name, state)
            assert ("fio.steady", name) in notes, (name, notes)
        else:
            assert ("fio.not-steady", name) in notes, (name, notes)
    assert managed(cluster, namespace, FIO_OBJECTS) == []
