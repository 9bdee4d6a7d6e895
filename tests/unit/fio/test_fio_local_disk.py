"""`fio --compare-local`: the same jobs on the node's own disk, and the latency probe that decides
whether a volume answered faster than that disk.

The decisions run on real fio outputs captured on this machine (tests/fixtures/fio/SOURCES.md):
the probe's job file as the product renders it (tests/fixtures/fio/probe/probe.fio), three
rounds interleaved on an ext4 directory (the node's disk), a tmpfs (a memory-backed volume) and a
second ext4 directory on the same disk (an honest volume); and the `quick` profile on ext4 and
tmpfs for the jobs' table. The expected ratios are computed from fio's numbers in those files.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.job_sizes import FioJobError
from kubectl_storage.core.fio.local_disk import (
    LOCAL_DIRECTORY,
    LOCAL_DISK_FACTOR,
    PROBE_ROUNDS,
    LocalDiskRun,
    local_disk_notes,
    local_job_text,
    probe_job_text,
    with_local_disk,
)
from kubectl_storage.core.fio.notes import NOTE_FASTER_THAN_LOCAL, NOTE_LOCAL_DISK, SUSPECT_NOTES
from kubectl_storage.core.fio.profile_render import render_profile
from kubectl_storage.core.fio.profiles import DEFAULT_DIRECTORY
from kubectl_storage.core.fio.report import FioClassResult, FioReport
from kubectl_storage.core.fio.report_extra_runs import LatencyProbe, LocalDiskResult
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.setup import VolumeSetup
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.k8s.manifests import build_workload_pod
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.render.fio import write_fio_table

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
PROBES = FIXTURES / "probe"
EXT4 = VolumeSetup(fs_type="ext4", source="/dev/vda", options=("rw",))


def _result(name: str) -> FioResult:
    return parse_fio_output((FIXTURES / name).read_text(encoding="utf-8"))


def _iops(name: str, job: str, side: str) -> float:
    document = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return next(float(j[side]["iops"]) for j in document["jobs"] if j["jobname"] == job)


def _probes(side: str) -> tuple[FioResult, ...]:
    """The captured probe rounds of one side (``disk-ext4``, ``volume-tmpfs``, ``volume-ext4``)."""
    return tuple(
        parse_fio_output((PROBES / f"round{i}-{side}.json").read_text(encoding="utf-8"))
        for i in range(1, PROBE_ROUNDS + 1)
    )


def _medians(side: str, job: str) -> list[float]:
    """fio's own clat p50 (µs) of ``job`` in each captured round, read straight from the JSON."""
    direction = "read" if job == "probe_read" else "write"
    out = []
    for i in range(1, PROBE_ROUNDS + 1):
        document = json.loads((PROBES / f"round{i}-{side}.json").read_text(encoding="utf-8"))
        (entry,) = [j for j in document["jobs"] if j["jobname"] == job]
        out.append(entry[direction]["clat_ns"]["percentile"]["50.000000"] / 1000)
    return out


def _compared(
    volume: str = "fio-3.33-quick-tmpfs.json",
    local: str | None = "fio-3.33-quick-vda-ext4-a.json",
    *,
    probed: str | None = "volume-tmpfs",
    skipped: str | None = None,
) -> FioClassResult:
    run = LocalDiskRun(
        "node-1",
        EXT4,
        _result(local) if local else None,
        skipped,
        disk_probes=_probes("disk-ext4") if probed else (),
        volume_probes=_probes(probed) if probed else (),
    )
    report = build_fio_report({"sc": [_result(volume)]}, profile="quick", local_disks={"sc": run})
    return report.results[0]


# --------------------------------------------------------------------------------------------
# The decision: the latency probe


def test_the_probe_captures_are_what_they_claim() -> None:
    # Memory against the disk, and the disk against itself, from fio's own numbers.
    for job in ("probe_read", "probe_write"):
        disk, tmpfs, ext4 = (_medians(s, job) for s in ("disk-ext4", "volume-tmpfs", "volume-ext4"))
        assert max(tmpfs) < 5 < 20 < min(disk), (job, tmpfs, disk)
        assert min(ext4) > 20, (job, ext4)


def test_a_tmpfs_volume_is_flagged_against_the_nodes_ext4() -> None:
    result = _compared()
    faster = [n for n in result.notes if n.id == NOTE_FASTER_THAN_LOCAL]
    assert [(n.job, n.severity) for n in faster] == [(None, Severity.WARN)]
    read = min(_medians("disk-ext4", "probe_read")) / max(_medians("volume-tmpfs", "probe_read"))
    write = min(_medians("disk-ext4", "probe_write")) / max(_medians("volume-tmpfs", "probe_write"))
    # the margin the rule has on memory, from the captures: far past the factor both ways
    assert min(read, write) >= 5 * LOCAL_DISK_FACTOR, (read, write)
    message = faster[0].message
    assert message.startswith("the volume answered faster than the node's own disk of node-1 ")
    assert "(an emptyDir, ext4 on /dev/vda)" in message
    assert f"4k reads took {_span(_medians('volume-tmpfs', 'probe_read'))} on the volume" in message
    assert f"{read:.1f} times faster or more in every round" in message
    assert f"{write:.1f} times faster or more in every round" in message
    assert NOTE_FASTER_THAN_LOCAL in SUSPECT_NOTES
    assert result.confidence.startswith("suspect: ")
    assert f"read at queue depth 1 {read:.0f}+ times faster than the node's disk" in (
        result.confidence
    )


def test_an_ext4_volume_on_the_same_disk_stays_quiet() -> None:
    # The same jobs on tmpfs beat the disk's up to 10 times, but the probe decides: honest volume.
    result = _compared(probed="volume-ext4")
    assert NOTE_FASTER_THAN_LOCAL not in [note.id for note in result.notes]
    for job in ("probe_read", "probe_write"):
        extremes = min(_medians("disk-ext4", job)) / max(_medians("volume-ext4", job))
        assert extremes < LOCAL_DISK_FACTOR / 2, (job, extremes)  # the capture's margin
    info = [n for n in result.notes if n.id == NOTE_LOCAL_DISK]
    assert len(info) == 1
    assert info[0].severity is Severity.INFO
    assert f"4k at queue depth 1, {PROBE_ROUNDS} interleaved rounds on each side" in info[0].message
    assert "on the volume" in info[0].message
    assert "on the disk (disk/volume " in info[0].message
    ratio = max(
        _iops("fio-3.33-quick-tmpfs.json", job, side)
        / _iops("fio-3.33-quick-vda-ext4-a.json", job, side)
        for job, side in (("read_iops", "read"), ("write_iops", "write"))
    )
    assert f"the same jobs: the volume did at most {ratio:.2f} times the disk's figure" in (
        info[0].message
    )
    assert "the node's disk" not in result.confidence


def _span(values: list[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.1f} µs" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}-{high:.1f} µs"


@pytest.mark.parametrize(
    ("volume", "disk", "fires"),
    [
        # every round 3 times faster: the boundary fires
        ((20.0, 20.0, 20.0), (60.0, 61.0, 75.0), True),
        # one round of the volume as slow as the disk's fastest: quiet
        ((20.0, 20.5, 20.0), (60.0, 61.0, 75.0), False),
        # one noisy round 2.8 times (191 against 69 µs, measured on one ext4): quiet
        ((69.1, 78.3, 67.1), (191.5, 57.1, 71.2), False),
    ],
)
def test_every_round_must_agree(
    volume: tuple[float, ...], disk: tuple[float, ...], fires: bool
) -> None:
    probe = LatencyProbe(volume, volume, disk, disk)
    ids = [n.id for n in local_disk_notes([], LocalDiskResult(probe=probe))]
    assert (NOTE_FASTER_THAN_LOCAL in ids) is fires
    assert ids.count(NOTE_LOCAL_DISK) == 1


def test_a_round_without_a_result_leaves_the_probe_unjudged() -> None:
    # memory-fast on the volume, but one disk round is missing: judged only on every round
    disk = _probes("disk-ext4")[:2]
    run = LocalDiskRun(
        "node-1", EXT4, _result("fio-3.33-quick-vda-ext4-a.json"), None,
        disk_probes=disk, volume_probes=_probes("volume-tmpfs"),
    )  # fmt: skip
    report = build_fio_report(
        {"sc": [_result("fio-3.33-quick-tmpfs.json")]}, profile="quick", local_disks={"sc": run}
    )
    notes = report.results[0].notes
    assert NOTE_FASTER_THAN_LOCAL not in [n.id for n in notes]
    (info,) = [n for n in notes if n.id == NOTE_LOCAL_DISK]
    assert "the latency probe was not judged, some rounds gave no result" in info.message
    assert f"3 round(s) on the volume and 2 on the disk gave a result, of {PROBE_ROUNDS}" in (
        info.message
    )


def test_without_a_probe_result_nothing_is_judged() -> None:
    # the jobs alone (tmpfs against ext4, up to 10 times) decide nothing
    result = _compared(probed=None)
    assert NOTE_FASTER_THAN_LOCAL not in [n.id for n in result.notes]
    (info,) = [n for n in result.notes if n.id == NOTE_LOCAL_DISK]
    assert "gave no result on both sides, so nothing was judged" in info.message


def test_a_memory_backed_emptydir_or_a_failed_run_compares_nothing() -> None:
    result = _compared(local=None, probed=None, skipped="the pod's emptyDir is tmpfs")
    assert NOTE_FASTER_THAN_LOCAL not in [n.id for n in result.notes]
    info = [n for n in result.notes if n.id == NOTE_LOCAL_DISK]
    assert info
    assert "no comparison with the node's own disk: the pod's emptyDir is tmpfs" in (
        info[0].message
    )
    assert "the node's disk" not in result.confidence


def test_jobs_with_an_error_are_left_out_of_the_jobs_ratio() -> None:
    ours = FioJobSummary("j", metrics={"read_iops": 9000.0})
    theirs = LocalDiskResult(jobs=(FioJobSummary("j", error=5, metrics={"read_iops": 10.0}),))
    notes = local_disk_notes([ours], theirs)
    assert [n.id for n in notes] == [NOTE_LOCAL_DISK]
    assert "the same jobs" not in notes[0].message


def test_the_comparison_survives_a_saved_report() -> None:
    result = _compared()
    report = FioReport(profile="quick", results=(result,))
    back = FioReport.from_dict(json.loads(json.dumps(report.to_dict())))
    local = back.results[0].local_disk
    assert local is not None
    assert local == result.local_disk
    assert local.probe is not None
    assert list(local.probe.disk_read_us) == pytest.approx(_medians("disk-ext4", "probe_read"))
    assert [job.name for job in local.jobs] == ["read_iops", "write_iops"]
    assert back.results[0].confidence == result.confidence


def test_the_table_shows_the_disk_and_the_probe_beside_the_volume() -> None:
    result = _compared()
    out = io.StringIO()
    write_fio_table(FioReport(profile="quick", results=(result,)), out)
    text = out.getvalue()
    assert "The same jobs on the node's own disk of node-1 (ext4 on /dev/vda)" in text
    ratio = _iops("fio-3.33-quick-tmpfs.json", "read_iops", "read") / _iops(
        "fio-3.33-quick-vda-ext4-a.json", "read_iops", "read"
    )
    assert f"({ratio:.2f}x)" in text
    assert "Latency probe: median µs per round, rounds interleaved" in text
    assert " ".join(f"{v:.1f}" for v in _medians("disk-ext4", "probe_write")) in text


def test_no_comparison_leaves_the_report_as_it_was() -> None:
    report = build_fio_report({"sc": [_result("fio-3.33-quick-vda-ext4-b.json")]}, profile="q")
    assert report.results[0].local_disk is None
    assert "local_disk" not in report.results[0].to_dict()
    assert NOTE_LOCAL_DISK not in [n.id for n in report.results[0].notes]


def test_the_probe_job_file_is_the_one_the_captures_ran() -> None:
    assert probe_job_text() == (PROBES / "probe.fio").read_text(encoding="utf-8")


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
    assert (256 + 32) << 20 < limit < 512 << 20  # the profile's 256M file, the probe's, a margin
    mounts = changed["spec"]["containers"][0]["volumeMounts"]
    assert {"name": "local-disk", "mountPath": LOCAL_DIRECTORY} in mounts
    assert "local-disk" not in [v["name"] for v in pod["spec"]["volumes"]]  # a copy
    assert "resources" not in changed["spec"]["containers"][0] or "ephemeral-storage" not in str(
        changed["spec"]["containers"][0]["resources"].get("requests", {})
    )
