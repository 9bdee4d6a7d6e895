"""`kubectl storage fio` without a cluster: inputs checked first, --dry-run, --from-json."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import FIXTURES, run_cli
from tests.unit.k8s.test_k8s_manifests import restricted_violations

NO_CLUSTER = {"KUBECONFIG": "/nonexistent/kubeconfig", "KUBERNETES_SERVICE_HOST": ""}
QUICK_JSON = FIXTURES / "fio" / "fio-3.33-quick-profile-ext4.json"


def test_bare_size_number_is_refused_before_anything() -> None:
    result = run_cli("fio", "-s", "fast", "-z", "45", "--dry-run", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "has no unit" in result.stderr
    assert "45Gi" in result.stderr
    assert result.stdout == ""


def test_oversized_job_says_by_how_much() -> None:
    result = run_cli("fio", "-s", "fast", "-z", "1Gi", "--dry-run", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "short" in result.stderr
    assert "-z 1Gi" in result.stderr


def test_unknown_profile() -> None:
    result = run_cli("fio", "-s", "fast", "--profile", "turbo", "--dry-run", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "'turbo' is not one of 'default', 'quick', 'database'" in result.stderr


def test_bad_job_file(tmp_path) -> None:
    job = tmp_path / "bad.fio"
    job.write_text("rw=randread\n[job1]\nrw=sideways\nsize=1G\n")
    result = run_cli("fio", "-s", "fast", "-f", str(job), "--dry-run", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "not valid" in result.stderr or "rejects" in result.stderr


def test_missing_job_file() -> None:
    result = run_cli("fio", "-s", "fast", "-f", "/nope.fio", "--dry-run", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "cannot read the fio job file /nope.fio" in result.stderr


def test_dry_run_prints_restricted_manifests_and_creates_nothing() -> None:
    result = run_cli(
        "fio",
        "-s",
        "fast",
        "-s",
        "slow",
        "-z",
        "10Gi",
        "--profile",
        "quick",
        "--dry-run",
        "-n",
        "bench",
        env=NO_CLUSTER,
    )
    assert result.exit_code == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["ConfigMap", "PersistentVolumeClaim", "Pod"] * 2
    pvcs = [d for d in docs if d["kind"] == "PersistentVolumeClaim"]
    assert [p["spec"]["storageClassName"] for p in pvcs] == ["fast", "slow"]
    assert all(p["spec"]["resources"]["requests"]["storage"] == "10Gi" for p in pvcs)
    assert all(d["metadata"]["namespace"] == "bench" for d in docs)
    for pod in (d for d in docs if d["kind"] == "Pod"):
        assert restricted_violations(pod) == []
    job = docs[0]["data"]["job.fio"]
    assert "[read_iops]" in job
    assert "stonewall" in job


def _block_dry_run(*extra: str) -> list[dict]:
    result = run_cli(
        "fio", "-s", "fast", "-z", "10Gi", "--volume-mode", "Block", "--profile", "quick",
        "--dry-run", "-n", "bench", *extra, env=NO_CLUSTER,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def test_block_dry_run_prefills_the_read_range_before_the_read_jobs() -> None:
    docs = _block_dry_run()
    job = docs[0]["data"]["job.fio"]
    pvc = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")

    assert pvc["spec"]["volumeMode"] == "Block"
    assert "filename=/dev/kubectl-storage-block" in job
    prefill = job.index("[kubectl-storage-prefill]")
    assert prefill < job.index("[read_iops]")
    assert "rw=write\nbs=1M\niodepth=16\nsize=256M\noffset=0\n" in job[prefill:]


def test_no_prefill_leaves_the_prefill_out() -> None:
    job = _block_dry_run("--no-prefill")[0]["data"]["job.fio"]
    assert "kubectl-storage-prefill" not in job
    assert "[read_iops]" in job


@pytest.mark.parametrize("extra", [[], ["--volume-mode", "Filesystem"], ["-f", "job.fio"]])
def test_no_prefill_applies_to_block_profiles_only(extra: list[str], tmp_path) -> None:
    if "-f" in extra:
        (tmp_path / "job.fio").write_text("[r]\nrw=randread\nsize=1G\n")
        extra = ["--volume-mode", "Block", "-f", str(tmp_path / "job.fio")]
    result = run_cli("fio", "-s", "fast", "-z", "10Gi", "--no-prefill", *extra, env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "--no-prefill applies to the built-in profiles with --volume-mode Block" in (
        result.stderr
    )
    assert result.stdout == ""


def test_from_json_raw_fio_output() -> None:
    result = run_cli("fio", "--from-json", str(QUICK_JSON), "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["apiVersion"], report["kind"]) == ("kubectl-storage/v1alpha1", "FioReport")
    jobs = report["results"][0]["jobs"]
    assert [j["name"] for j in jobs] == ["read_iops", "write_iops"]
    assert jobs[0]["read_iops"] > 0
    assert jobs[0]["read_clat_p99_us"] > 0
    assert "raw" in jobs[0]


def test_from_json_reads_fio_client_server_output() -> None:
    # Real fio-3.33: `fio --client=localhost,18765 quick.fio --output-format=json` against one
    # `fio --server`; the document has "client_stats" (read_iops, write_iops, "All clients")
    # and no "jobs", which --from-json refused before ("neither a FioReport nor fio JSON").
    path = FIXTURES / "fio" / "fio-3.33-client-server-localhost-quick.txt"
    result = run_cli("fio", "--from-json", str(path), "-o", "json")
    assert result.exit_code == 0, result.stderr
    entry = json.loads(result.stdout)["results"][0]
    jobs = {job["name"]: job for job in entry["jobs"]}
    assert list(jobs) == ["read_iops", "write_iops"]  # fio's "All clients" sum is not a job
    assert jobs["read_iops"]["read_iops"] == pytest.approx(75860.569715)
    assert jobs["write_iops"]["write_iops"] == pytest.approx(51676.161919)
    assert [(c["index"], c["address"]) for c in entry["clients"]] == [(0, "localhost")]
    table = run_cli("fio", "--from-json", str(path))
    assert "peak read 75,861 IOPS, 296.4 MiB/s (read_iops)" in table.stdout


def test_from_json_client_server_error_still_fails() -> None:
    # Real fio-3.33, two clients: one's job writes to /dev/full and fails (error 28).
    path = FIXTURES / "fio" / "fio-3.33-client-server-job-error-json+.txt"
    result = run_cli("fio", "--from-json", str(path))
    assert result.exit_code == 1
    assert "job write_to_dev_full failed (error 28, ENOSPC)" in result.stdout
    assert "fio reported errors" in result.stderr


def test_saved_report_round_trips_and_baseline_passes_against_itself(tmp_path) -> None:
    saved = tmp_path / "report.json"
    saved.write_text(run_cli("fio", "--from-json", str(QUICK_JSON), "-o", "json").stdout)
    again = run_cli("fio", "--from-json", str(saved), "--baseline", str(saved), "-o", "json")
    assert again.exit_code == 0, again.stderr
    assert json.loads(again.stdout)["baseline"]["verdict"] == "pass"


def test_baseline_regression_exits_1(tmp_path) -> None:
    report = json.loads(run_cli("fio", "--from-json", str(QUICK_JSON), "-o", "json").stdout)
    better = json.loads(json.dumps(report))
    for job in better["results"][0]["jobs"]:
        for key in ("read_iops", "write_iops"):
            if job.get(key):
                job[key] *= 2  # the saved run was twice as fast: today's is a regression
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(better))
    current = tmp_path / "current.json"
    current.write_text(json.dumps(report))
    result = run_cli("fio", "--from-json", str(current), "--baseline", str(baseline))
    assert result.exit_code == 1
    assert "Baseline: regressed" in result.stdout


def test_fio_job_errors_exit_1() -> None:
    result = run_cli(
        "fio", "--from-json", str(FIXTURES / "fio" / "fio-3.33-dev-full-error-stderr-merged.txt")
    )
    assert result.exit_code == 1
    assert "fio reported errors" in result.stderr
    assert "write_to_dev_full" in result.stdout


def test_chart_written(tmp_path) -> None:
    chart = tmp_path / "chart.png"
    result = run_cli("fio", "--from-json", str(QUICK_JSON), "--chart", str(chart))
    assert result.exit_code == 0, result.stderr
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("value", ["ten", "-5%"])
def test_bad_max_regression(value: str) -> None:
    result = run_cli("fio", "--from-json", str(QUICK_JSON), "--max-regression", value)
    assert result.exit_code == 2
    assert "--max-regression" in result.stderr


def test_not_a_report(tmp_path) -> None:
    junk = tmp_path / "junk.json"
    junk.write_text('{"hello": 1}')
    result = run_cli("fio", "--from-json", str(junk))
    assert result.exit_code == 2
    assert "neither a FioReport nor fio JSON output" in result.stderr


def test_compare_local_plans_an_emptydir_and_its_job_file() -> None:
    result = run_cli(
        "fio", "-s", "fast", "-z", "10Gi", "--profile", "quick", "--compare-local",
        "--dry-run", "-n", "bench", env=NO_CLUSTER,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    cm, _, pod = yaml.safe_load_all(result.stdout)
    assert "directory=/dataset\n" in cm["data"]["job.fio"]
    assert cm["data"]["local.fio"] == cm["data"]["job.fio"].replace("/dataset\n", "/local\n")
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    assert int(volumes["local-disk"]["emptyDir"]["sizeLimit"]) > 256 << 20  # the 256M file
    mounts = pod["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "local-disk", "mountPath": "/local"} in mounts
    assert restricted_violations(pod) == []  # an emptyDir keeps the pod restricted


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--clients", "2"], "--compare-local runs with one client"),
        (["--volume-mode", "Block"], "--compare-local compares a Filesystem volume"),
        (["-s", "slow", "--parallel"], "with --parallel the other classes' jobs"),
        (["-f", "JOB"], "[j] sets directory=/dataset/sub, an absolute path other than"),
    ],
)
def test_compare_local_refusals(extra: list[str], message: str, tmp_path) -> None:
    job = tmp_path / "job.fio"
    job.write_text("[j]\nrw=randread\nsize=64M\ndirectory=/dataset/sub\n")
    extra = [str(job) if word == "JOB" else word for word in extra]
    result = run_cli(
        "fio", "-s", "fast", "-z", "10Gi", "--compare-local", *extra, "--dry-run",
        env=NO_CLUSTER,
    )  # fmt: skip
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("job", "extra", "message"),
    [
        (
            "[j]\nrw=randwrite\nsize=64M\ndirectory=/tmp\n",
            [],
            "[j] sets directory=/tmp, which is not the volume, at /dataset: the pod's emptyDir on "
            "the node's own disk, so fio would report the node's disk as the class's",
        ),
        (
            "[global]\nfilename=/var/bench.dat\n[j]\nrw=randwrite\nsize=64M\n",
            [],
            "[global] sets filename=/var/bench.dat, which is not the volume, at /dataset: the "
            "pod's read-only root file system, where fio fails",
        ),
        (
            "[j]\nrw=randread\nfilename=/dev/sdb\n",
            ["--volume-mode", "Block"],
            "[j] sets filename=/dev/sdb, which is not the volume's device "
            "/dev/kubectl-storage-block",
        ),
    ],
)
def test_a_job_file_that_would_not_measure_the_volume_is_refused(
    job: str, extra: list[str], message: str, tmp_path
) -> None:
    path = tmp_path / "job.fio"
    path.write_text(job)
    result = run_cli(
        "fio", "-s", "fast", "-z", "10Gi", "-f", str(path), *extra, "--dry-run", env=NO_CLUSTER
    )
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_job_file_with_its_own_paths_on_the_volume_is_planned(tmp_path) -> None:
    path = tmp_path / "job.fio"
    path.write_text("[j]\nrw=randread\nsize=64M\ndirectory=/dataset/sub\nfilename=a.dat\n")
    result = run_cli(
        "fio", "-s", "fast", "-z", "10Gi", "-f", str(path), "--dry-run", env=NO_CLUSTER
    )
    assert result.exit_code == 0, result.stderr


def test_a_warning_exits_0_unless_fail_on_warn() -> None:
    # The quick profile on a tmpfs raises the cache guards (its reads and writes never waited
    # for a device), so its verdict is warn: a pass for CI unless warnings are asked to fail it.
    # The same profile on ext4 with direct I/O raises nothing: it passes (issue 23).
    memory = FIXTURES / "fio" / "fio-3.33-quick-tmpfs.json"
    lenient = run_cli("fio", "--from-json", str(memory), "-o", "json")
    assert lenient.exit_code == 0, lenient.stderr
    assert json.loads(lenient.stdout)["verdict"] == "warn"
    strict = run_cli("fio", "--from-json", str(memory), "-o", "json", "--fail-on", "warn")
    assert strict.exit_code == 1
    assert json.loads(strict.stdout)["reasons"] == ["fio.dataset-small", "fio.cache-write-latency"]
    assert "fio.cache-write-latency" in strict.stderr
    honest = run_cli("fio", "--from-json", str(QUICK_JSON), "-o", "json", "--fail-on", "warn")
    assert honest.exit_code == 0, honest.stderr
    assert json.loads(honest.stdout)["verdict"] == "pass"


def _quick_dry_run(*extra: str) -> object:
    return run_cli(
        "fio", "-s", "fast", "-z", "10Gi", "--profile", "quick", "--dry-run", "-n", "bench",
        *extra, env=NO_CLUSTER,
    )  # fmt: skip


def test_until_steady_dry_run_shows_the_rendered_options() -> None:
    result = _quick_dry_run("--until-steady")
    assert result.exit_code == 0, result.stderr
    job = next(iter(yaml.safe_load_all(result.stdout)))["data"]["job.fio"]

    assert job.count("steadystate=iops_slope:1%\nss_dur=10s\nss_ramp=5s\n") == 2
    assert "runtime=120\n" in job
    plain = next(iter(yaml.safe_load_all(_quick_dry_run().stdout)))["data"]["job.fio"]
    assert "steadystate" not in plain
    assert "runtime=5\n" in plain


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--runtime", "10"], "no full steady-state window"),
        (["--profile", "kubestr"], "does not apply to the kubestr profile"),
        (["--profile", "etcd"], "does not apply to the etcd profile"),
        (["-f", "JOB"], "a job file runs as written"),
        (["--from-json", str(QUICK_JSON)], "--from-json runs nothing"),
    ],
)
def test_until_steady_is_refused_where_it_means_nothing(
    extra: list[str], said: str, tmp_path
) -> None:
    if "JOB" in extra:
        (tmp_path / "job.fio").write_text("[r]\nrw=randread\nsize=1G\n")
        extra = ["-f", str(tmp_path / "job.fio")]
    result = run_cli("fio", "-s", "fast", "-z", "10Gi", "--until-steady", *extra, env=NO_CLUSTER)

    assert result.exit_code == 2, result.stderr
    assert said in result.stderr
    assert result.stdout == ""
