"""`kubectl storage fio --compare-local` on the real cluster: the node's own disk as a yardstick.

The test driver's memory medium (class parameter tk8s.io/medium: Memory) keeps a volume on a
tmpfs, as a RAM-disk-backed or write-back-cached class would: it must be flagged against the
emptyDir on the node's disk. local-path keeps its volumes on the same file system as the
kubelet's emptyDirs: it must stay quiet. The latency probe decides (4k at queue depth 1, rounds
interleaved); each test also asserts the margin by which it decided, from the report's own
numbers, so that a verdict a little noise could turn fails here first: memory must be at least
MARGIN times past the factor, local-path at least MARGIN times below it. Measured on this
machine (tests/fixtures/fio/SOURCES.md, "latency probe"): memory 36-57 times faster than the
disk at the extremes of the rounds, ext4 against itself 0.7-0.9.
"""

from __future__ import annotations

import json
import signal
import time

import pytest

from kubectl_storage.core.fio.local_disk import LOCAL_DISK_FACTOR, PROBE_ROUNDS
from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed

QUICK = ("--profile", "quick", "-z", "1Gi", "--compare-local")
#: How far from the factor a verdict must be (see the module's docstring).
MARGIN = 2.0


@pytest.fixture
def memory_class(make_storage_class):
    """A class of the test driver whose volumes live on a tmpfs."""
    return make_storage_class("memory", parameters={"tk8s.io/medium": "Memory"})


def _extremes(entry: dict) -> dict[str, float]:
    """Per direction: the disk's fastest probe round over the volume's slowest (report's numbers)."""
    probe = entry["local_disk"]["latency_probe"]
    out = {}
    for direction in ("read", "write"):
        volume, disk = probe["volume"][f"{direction}_p50_us"], probe["disk"][f"{direction}_p50_us"]
        assert len(volume) == len(disk) == PROBE_ROUNDS, probe
        out[direction] = min(disk) / max(volume)
    return out


def test_a_memory_backed_class_is_flagged_and_the_table_shows_the_disk(
    cluster, namespace, memory_class, tmp_path
) -> None:
    result = run_cli("fio", "-s", memory_class, *QUICK, "-n", namespace, "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    (entry,) = report["results"]
    assert entry["setup"]["volume"]["fs_type"] == "tmpfs"  # the volume really is memory
    local = entry["local_disk"]
    assert local["skipped"] is None
    assert local["fs_type"] == "ext4"  # the kubelet's emptyDir, on this host's disk
    assert local["node"] == entry["setup"]["nodes"][0]["name"]
    assert [job["name"] for job in local["jobs"]] == ["read_iops", "write_iops"]
    extremes = _extremes(entry)
    print("memory class, disk's fastest / volume's slowest:", extremes)  # for the run's log
    flagged = [n for n in entry["notes"] if n["id"] == "fio.faster-than-local-disk"]
    assert len(flagged) == 1, entry["notes"]
    assert min(extremes.values()) >= MARGIN * LOCAL_DISK_FACTOR, extremes
    assert "times faster than the node's disk" in entry["confidence"]
    assert "latency probe 3/3 on the volume" in result.stderr  # progress said it
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    # The table of the same report (drawn from the saved JSON: one run serves both checks).
    saved = tmp_path / "memory.json"
    saved.write_text(result.stdout)
    table = run_cli("fio", "--from-json", str(saved))
    assert table.exit_code == 0, table.stderr
    assert f"The same jobs on the node's own disk of {local['node']}" in table.stdout
    assert "Latency probe: median µs per round, rounds interleaved" in table.stdout
    assert "fio.faster-than-local-disk" in table.stdout


def test_local_path_on_the_nodes_own_disk_stays_quiet(cluster, namespace) -> None:
    result = run_cli("fio", "-s", "local-path", *QUICK, "-n", namespace, "-o", "json")
    assert result.exit_code == 0, result.stderr
    (entry,) = json.loads(result.stdout)["results"]
    assert entry["setup"]["volume"]["fs_type"] == entry["local_disk"]["fs_type"] == "ext4"
    extremes = _extremes(entry)
    print("local-path, disk's fastest / volume's slowest:", extremes)  # for the run's log
    assert max(extremes.values()) <= LOCAL_DISK_FACTOR / MARGIN, extremes
    ids = [n["id"] for n in entry["notes"]]
    assert "fio.faster-than-local-disk" not in ids
    assert ids.count("fio.local-disk") == 1
    assert "the node's disk" not in entry["confidence"]
    assert managed(cluster, namespace, FIO_OBJECTS) == []


@pytest.mark.parametrize(
    "step", ["the same jobs on the node's own disk", "latency probe 2/3 on the node's disk"]
)
def test_sigint_during_the_comparison_leaves_nothing(cluster, namespace, step) -> None:
    # 5 s per job: the interrupt lands 2 s into a fio exec of at least that long (each probe
    # round takes about 9 s), and the run reaches the step sooner.
    proc = start_cli("fio", "-s", HOSTPATH_CLASS, *QUICK, "--runtime", "5", "-n", namespace, "-v")
    wait_for_stderr(proc, step, timeout=300)
    time.sleep(2)  # inside that fio exec
    assert managed(cluster, namespace, FIO_OBJECTS), "the run should have its objects now"
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 180)
    assert proc.returncode == 130, err
    assert "deleted what run" in err
    assert managed(cluster, namespace, FIO_OBJECTS) == []
