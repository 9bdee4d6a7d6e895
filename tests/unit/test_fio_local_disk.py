"""`fio --compare-local`: the same jobs on the node's own disk, and the note when a volume beats it.

The comparisons run on real fio outputs of the `quick` profile captured on this machine
(tests/fixtures/fio/SOURCES.md, "the node's own disk"): twice on one ext4, on a tmpfs, and on
an ext4 over a loop device; and of the `etcd` profile on ext4 and on a tmpfs. The expected
ratios are computed from fio's own numbers in those files, not written down.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.fio.guards import (
    NOTE_FASTER_THAN_LOCAL,
    NOTE_LOCAL_DISK,
    SUSPECT_NOTES,
)
from kubectl_storage.core.fio.jobs import DEFAULT_DIRECTORY, FioJobError, render_profile
from kubectl_storage.core.fio.local_disk import (
    LOCAL_DIRECTORY,
    LOCAL_DISK_FACTOR,
    LocalDiskRun,
    local_disk_notes,
    local_job_text,
    with_local_disk,
)
from kubectl_storage.core.fio.report import (
    FioClassResult,
    FioJobSummary,
    FioReport,
    LocalDiskResult,
)
from kubectl_storage.core.fio.results import FioResult, parse_fio_output
from kubectl_storage.core.fio.setup import VolumeSetup
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.k8s.manifests import build_workload_pod
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.render.fio import write_fio_table

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fio"
EXT4 = VolumeSetup(fs_type="ext4", source="/dev/vda", options=("rw",))


def _result(name: str) -> FioResult:
    return parse_fio_output((FIXTURES / name).read_text(encoding="utf-8"))


def _iops(name: str, job: str, side: str) -> float:
    document = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return next(float(j[side]["iops"]) for j in document["jobs"] if j["jobname"] == job)


def _compared(volume: str, local: str | None, *, skipped: str | None = None) -> FioClassResult:
    run = LocalDiskRun("node-1", EXT4, _result(local) if local else None, skipped)
    report = build_fio_report({"sc": [_result(volume)]}, profile="quick", local_disks={"sc": run})
    return report.results[0]


def _ids(result: FioClassResult) -> list[tuple[str, str | None]]:
    return [(note.id, note.job) for note in result.notes if note.id.startswith("fio.")]


# --------------------------------------------------------------------------------------------
# The note


def test_a_tmpfs_volume_is_flagged_against_the_nodes_ext4() -> None:
    result = _compared("fio-3.33-quick-tmpfs.json", "fio-3.33-quick-vda-ext4-a.json")
    faster = [n for n in result.notes if n.id == NOTE_FASTER_THAN_LOCAL]
    assert [(n.job, n.severity) for n in faster] == [
        ("read_iops", Severity.WARN),
        ("write_iops", Severity.WARN),
    ]
    read_ratio = _iops("fio-3.33-quick-tmpfs.json", "read_iops", "read") / _iops(
        "fio-3.33-quick-vda-ext4-a.json", "read_iops", "read"
    )
    assert read_ratio >= LOCAL_DISK_FACTOR  # what the capture shows, from fio's numbers
    message = faster[0].message
    assert message.startswith("job read_iops on the volume beat the node's own disk of node-1 ")
    assert "(an emptyDir, ext4 on /dev/vda)" in message
    assert f"read 1.12M IOPS, {read_ratio:.1f} times the same job on the disk (186k IOPS)" in (
        message
    )
    assert NOTE_FASTER_THAN_LOCAL in SUSPECT_NOTES
    assert result.confidence.startswith("suspect: ")
    assert f"read_iops: read {read_ratio:.1f} times the node's disk" in result.confidence


def test_the_same_job_twice_on_one_disk_stays_quiet() -> None:
    result = _compared("fio-3.33-quick-vda-ext4-b.json", "fio-3.33-quick-vda-ext4-a.json")
    assert NOTE_FASTER_THAN_LOCAL not in [note.id for note in result.notes]
    write_ratio = _iops("fio-3.33-quick-vda-ext4-b.json", "write_iops", "write") / _iops(
        "fio-3.33-quick-vda-ext4-a.json", "write_iops", "write"
    )
    assert 1.2 < write_ratio < LOCAL_DISK_FACTOR  # the capture's real noise: above 1, below 3
    info = [n for n in result.notes if n.id == NOTE_LOCAL_DISK]
    assert len(info) == 1
    assert info[0].severity is Severity.INFO
    assert f"at most {write_ratio:.2f} times its figure (job write_iops, write)" in (
        info[0].message
    )
    assert "the node's disk" not in result.confidence


def test_a_loop_device_over_the_same_disk_stays_quiet() -> None:
    # The loop device's own page cache made it 1.3-1.6 times faster here: below the factor.
    result = _compared("fio-3.33-quick-ext4-on-loop.json", "fio-3.33-quick-vda-ext4-a.json")
    assert NOTE_FASTER_THAN_LOCAL not in [note.id for note in result.notes]
    assert [note.id for note in result.notes].count(NOTE_LOCAL_DISK) == 1


def test_an_fdatasync_that_returns_at_memory_speed_is_flagged() -> None:
    run = LocalDiskRun("node-1", EXT4, _result("fio-3.33-etcd-profile-ext4.json"))
    report = build_fio_report(
        {"sc": [_result("fio-3.33-etcd-profile-tmpfs.json")]},
        profile="etcd",
        local_disks={"sc": run},
    )
    ours, theirs = (
        json.loads((FIXTURES / f"fio-3.33-etcd-profile-{fs}.json").read_text())["jobs"][0]
        for fs in ("tmpfs", "ext4")
    )
    shorter = (
        theirs["sync"]["lat_ns"]["percentile"]["50.000000"]
        / ours["sync"]["lat_ns"]["percentile"]["50.000000"]
    )
    faster = [n for n in report.results[0].notes if n.id == NOTE_FASTER_THAN_LOCAL]
    assert len(faster) == 1
    assert f"fsync {shorter:.1f} times the node's disk" in faster[0].reason


def test_a_memory_backed_emptydir_or_a_failed_run_compares_nothing() -> None:
    result = _compared("fio-3.33-quick-tmpfs.json", None, skipped="the pod's emptyDir is tmpfs")
    assert _ids(result).count((NOTE_FASTER_THAN_LOCAL, "read_iops")) == 0
    info = [n for n in result.notes if n.id == NOTE_LOCAL_DISK]
    assert info
    assert "no comparison with the node's own disk: the pod's emptyDir is tmpfs" in (
        info[0].message
    )
    # the tmpfs volume is still suspect through its own guards, not through this comparison
    assert "the node's disk" not in result.confidence


def test_jobs_with_an_error_on_either_side_are_not_compared() -> None:
    ours = FioJobSummary("j", metrics={"read_iops": 9000.0})
    theirs = LocalDiskResult(jobs=(FioJobSummary("j", error=5, metrics={"read_iops": 10.0}),))
    notes = local_disk_notes([ours], theirs)
    assert [n.id for n in notes] == [NOTE_LOCAL_DISK]
    assert "no job ran without error on both" in notes[0].message


@pytest.mark.parametrize(
    ("volume_iops", "fires"),
    [(LOCAL_DISK_FACTOR * 1000 - 1, False), (LOCAL_DISK_FACTOR * 1000, True)],
)
def test_the_factor_is_the_boundary(volume_iops: float, fires: bool) -> None:
    ours = FioJobSummary("j", metrics={"write_iops": volume_iops})
    theirs = LocalDiskResult(jobs=(FioJobSummary("j", metrics={"write_iops": 1000.0}),))
    ids = [n.id for n in local_disk_notes([ours], theirs)]
    assert (NOTE_FASTER_THAN_LOCAL in ids) is fires


def test_the_comparison_survives_a_saved_report() -> None:
    result = _compared("fio-3.33-quick-tmpfs.json", "fio-3.33-quick-vda-ext4-a.json")
    report = FioReport(profile="quick", results=(result,))
    back = FioReport.from_dict(json.loads(json.dumps(report.to_dict())))
    local = back.results[0].local_disk
    assert local is not None
    assert local == result.local_disk
    assert [job.name for job in local.jobs] == ["read_iops", "write_iops"]
    assert local.jobs[0].value("read_iops") == pytest.approx(
        _iops("fio-3.33-quick-vda-ext4-a.json", "read_iops", "read")
    )
    assert back.results[0].confidence == result.confidence


def test_the_table_shows_the_disk_beside_the_volume() -> None:
    import io

    result = _compared("fio-3.33-quick-tmpfs.json", "fio-3.33-quick-vda-ext4-a.json")
    out = io.StringIO()
    write_fio_table(FioReport(profile="quick", results=(result,)), out)
    text = out.getvalue()
    assert "The same jobs on the node's own disk of node-1 (ext4 on /dev/vda)" in text
    ratio = _iops("fio-3.33-quick-tmpfs.json", "read_iops", "read") / _iops(
        "fio-3.33-quick-vda-ext4-a.json", "read_iops", "read"
    )
    assert f"({ratio:.2f}x)" in text


def test_no_comparison_leaves_the_report_as_it_was() -> None:
    report = build_fio_report({"sc": [_result("fio-3.33-quick-vda-ext4-b.json")]}, profile="q")
    assert report.results[0].local_disk is None
    assert "local_disk" not in report.results[0].to_dict()
    assert NOTE_LOCAL_DISK not in [n.id for n in report.results[0].notes]


# --------------------------------------------------------------------------------------------
# The job file and the pod


def test_the_profiles_directory_moves_to_the_emptydir() -> None:
    text = render_profile("quick", directory=DEFAULT_DIRECTORY)
    local = local_job_text(text)
    assert f"directory={DEFAULT_DIRECTORY}\n" in text
    assert f"directory={LOCAL_DIRECTORY}\n" in local
    assert DEFAULT_DIRECTORY not in local
    assert local.replace(LOCAL_DIRECTORY, DEFAULT_DIRECTORY) == text  # nothing else changed


def test_a_job_file_without_directory_is_kept_as_it_is() -> None:
    text = "[global]\nsize=64M\n[seq]\nrw=write\nfilename=a.dat:b.dat\n"
    assert local_job_text(text) == text


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[j]\nrw=read\nsize=1M\ndirectory=/scratch\n", "[j] sets directory=/scratch"),
        ("[global]\nfilename=/dev/sdb\n[j]\nrw=read\n", "[global] sets filename=/dev/sdb"),
        ("[j]\nrw=read\nsize=1M\nfilename=a:/etc/x\n", "an absolute path"),
        ("[j]\nrw=read\nsize=1M\ndirectory=/dataset:/dataset\n", "cannot be pointed at"),
    ],
)
def test_a_job_that_names_other_places_is_refused(text: str, said: str) -> None:
    with pytest.raises(FioJobError, match=said.replace("[", r"\[").replace("]", r"\]")):
        local_job_text(text)


def test_the_pod_gets_an_emptydir_sized_for_the_job() -> None:
    pod = build_workload_pod(
        "p", "ns", "img", pvc_name="c", mount_path=DEFAULT_DIRECTORY, command=["sh"]
    )
    text = render_profile("quick", directory=LOCAL_DIRECTORY)
    changed = with_local_disk(pod, text)
    volume = next(v for v in changed["spec"]["volumes"] if v["name"] == "local-disk")
    limit = int(volume["emptyDir"]["sizeLimit"])
    assert 256 << 20 < limit < 512 << 20  # the profile's 256M file and a margin
    mounts = changed["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "local-disk", "mountPath": LOCAL_DIRECTORY} in mounts
    assert "local-disk" not in [v["name"] for v in pod["spec"]["volumes"]]  # a copy
    assert "resources" not in changed["spec"]["containers"][0] or "ephemeral-storage" not in str(
        changed["spec"]["containers"][0]["resources"].get("requests", {})
    )
