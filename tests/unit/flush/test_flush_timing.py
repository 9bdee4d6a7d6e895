"""What a flush measured (core/flush/timing.py, issues 23 and 26): the rules on their own, with
the medians of real fio captures (tests/fixtures/fio and tests/fixtures/validate_persistence),
and then the same captures through both features that use it: the fio command's guards and
validate-persistence's fsync probe, which must agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.guards import run_notes
from kubectl_storage.core.fio.notes import NOTE_CACHE_SYNC, NOTE_SYNC_NO_FLUSH, confidence
from kubectl_storage.core.flush.timing import FLUSH_FLOOR_US, FlushClass, classify_flush
from kubectl_storage.core.report.findings import Severity
from kubectl_storage.core.validate_persistence.probe import DIRECT_JOB, ETCD_JOB, parse_probe


def test_no_flush_figure_is_no_classification() -> None:
    assert classify_flush(sync_us=None, write_us=3.0, writes_direct=True) is None


@pytest.mark.parametrize(
    ("sync_us", "write_us", "direct", "kind"),
    [
        # etcd's buffered job: ext4 on the virtio disk (fio-3.33-etcd-profile-ext4.json) and
        # tmpfs (fio-3.33-etcd-profile-tmpfs.json): the fdatasync has the write-out to do.
        (68.1, 1.5, False, FlushClass.FLUSHED),
        (0.09, 0.8, False, FlushClass.MEMORY),
        # direct writes that take device time and a flush that takes none: issue 26's loop
        # device in write-through mode (75 µs, 0.96 µs); not memory-backed.
        (0.96, 75.0, True, FlushClass.NO_FLUSH),
        # direct writes at memory speed (tmpfs: 0.13 µs in fio-3.33-write-lat-direct-tmpfs.json)
        (0.1, 0.13, True, FlushClass.MEMORY),
        # a direct write whose latency was not measured cannot be called memory-fast
        (0.5, None, True, FlushClass.NO_FLUSH),
        # the floor itself is device time
        (FLUSH_FLOOR_US, 0.1, True, FlushClass.FLUSHED),
    ],
)
def test_the_three_classes(
    sync_us: float, write_us: float | None, direct: bool, kind: FlushClass
) -> None:
    reading = classify_flush(sync_us=sync_us, write_us=write_us, writes_direct=direct)
    assert reading is not None
    assert reading.kind is kind
    assert reading.warns is (kind is FlushClass.MEMORY)


def test_the_words_of_each_class() -> None:
    no_flush = classify_flush(sync_us=0.96, write_us=75.0, writes_direct=True)
    assert no_flush is not None
    assert no_flush.explanation() == (
        "acknowledged without a flush: direct writes take device time (75 µs median) but "
        "fdatasync returns in 0.96 µs: a power-loss-protected cache, or a cache that lies; only "
        "a power-loss test (a node crash or power cut) can tell, and none was run (unverified)"
    )
    assert "no durable medium" not in no_flush.explanation()
    memory = classify_flush(sync_us=0.1, write_us=0.13, writes_direct=True)
    assert memory is not None
    assert memory.explanation().startswith(
        "memory-backed: direct writes complete in 0.13 µs and fdatasync returns in 0.1 µs"
    )
    flushed = classify_flush(sync_us=68.1, write_us=None, writes_direct=False)
    assert flushed is not None
    assert "as far as timing can tell" in flushed.explanation()


# -- real captures through both features --------------------------------------------------------

PROBE_CAPTURES = Path(__file__).resolve().parents[2] / "fixtures" / "validate_persistence" / "probe"

#: fio output of validate-persistence's probe_command() on three media (SOURCES.md there).
CAPTURES = {
    "tmpfs.json": FlushClass.MEMORY,
    "loop-write-back.json": FlushClass.FLUSHED,
    "loop-write-through.json": FlushClass.NO_FLUSH,
}


def _capture(name: str) -> str:
    return (PROBE_CAPTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(("name", "kind"), CAPTURES.items())
def test_the_probe_classifies_each_medium(name: str, kind: FlushClass) -> None:
    probe = parse_probe(_capture(name))
    assert probe.error == ""
    assert probe.direct_error == ""
    assert probe.flush is not None
    assert probe.flush.kind is kind
    assert probe.flush.writes_direct
    assert probe.acknowledges_too_fast is (kind is FlushClass.MEMORY)
    document = probe.to_dict()
    assert document["flush_class"] == kind.value
    # The keys the probe had before keep their place; the classification comes after them.
    assert list(document)[:9] == [
        "block_bytes",
        "syncs",
        "fdatasync_p50_us",
        "fdatasync_p99_us",
        "fdatasync_max_us",
        "etcd_p99_limit_us",
        "warnings",
        "error",
        "fio_version",
    ]


def test_write_through_is_not_called_memory_and_does_not_warn() -> None:
    probe = parse_probe(_capture("loop-write-through.json"))
    assert probe.direct_write_p50_us is not None
    assert probe.direct_write_p50_us >= FLUSH_FLOOR_US  # the writes reached the device
    assert probe.direct_fdatasync_p50_us is not None
    assert probe.direct_fdatasync_p50_us < FLUSH_FLOOR_US  # the flush had nothing to do
    assert probe.warnings == ()
    # etcd's buffered job on the same device takes device time (its fdatasync writes the data
    # out), so the buffered job alone would have said "flushed", never "memory-backed".
    assert probe.p50_us is not None
    assert probe.p50_us >= FLUSH_FLOOR_US


def test_tmpfs_warns_and_write_back_stays_quiet() -> None:
    (warning,) = parse_probe(_capture("tmpfs.json")).warnings
    assert warning.startswith("memory-backed: direct writes complete in ")
    assert parse_probe(_capture("loop-write-back.json")).warnings == ()


def test_without_the_direct_job_the_buffered_job_is_classified_alone() -> None:
    # Constructed from the real captures: the direct job failed as on a file system that
    # refuses O_DIRECT (fio's EINVAL, error 22), its figures dropped.
    for name, kind in (("tmpfs.json", FlushClass.MEMORY), ("loop-write-through.json", None)):
        document = json.loads(_capture(name))
        for job in document["jobs"]:
            if job["jobname"] == DIRECT_JOB:
                job["error"] = 22
        probe = parse_probe(json.dumps(document))
        assert probe.direct_error == "fio failed with error 22"
        assert probe.flush is not None
        assert probe.flush.kind is (kind or FlushClass.FLUSHED)
        assert not probe.flush.writes_direct


def _sync_notes(name: str) -> list[tuple[str, str | None, Severity]]:
    notes = run_notes(parse_fio_output(_capture(name)))
    sync_ids = {NOTE_CACHE_SYNC, NOTE_SYNC_NO_FLUSH}
    return [(n.id, n.job, n.severity) for n in notes if n.id in sync_ids]


def test_the_fio_guard_agrees_with_the_probe_on_the_same_captures() -> None:
    # The same fio output read by the fio command's guards: the job that writes directly gives
    # the class the probe gives; etcd's buffered job agrees on tmpfs and is quiet elsewhere.
    assert _sync_notes("tmpfs.json") == [
        (NOTE_CACHE_SYNC, ETCD_JOB, Severity.WARN),
        (NOTE_CACHE_SYNC, DIRECT_JOB, Severity.WARN),
    ]
    assert _sync_notes("loop-write-through.json") == [
        (NOTE_SYNC_NO_FLUSH, DIRECT_JOB, Severity.INFO)
    ]
    assert _sync_notes("loop-write-back.json") == []
    # "acknowledged without a flush" does not make the numbers suspect; memory does.
    through = run_notes(parse_fio_output(_capture("loop-write-through.json")))
    assert "without a flush" not in confidence(through)
    tmpfs = run_notes(parse_fio_output(_capture("tmpfs.json")))
    assert "memory-backed" in confidence(tmpfs)


def test_o_sync_writes_count_as_writes_that_reach_the_device() -> None:
    # Constructed from the write-through capture: the same direct job declared as buffered
    # O_DSYNC writes (sync=dsync, direct=0). Their latency includes the device's, so an instant
    # fdatasync after them is "without a flush", not memory; declared plainly buffered, the
    # same figures would read memory-backed (the fdatasync would have had the write-out to do).
    document = json.loads(_capture("loop-write-through.json"))
    for job in document["jobs"]:
        if job["jobname"] == DIRECT_JOB:
            job["job options"].pop("direct")
            job["job options"]["sync"] = "dsync"
    notes = run_notes(parse_fio_output(json.dumps(document)))
    assert [(n.id, n.job) for n in notes if n.id == NOTE_SYNC_NO_FLUSH] == [
        (NOTE_SYNC_NO_FLUSH, DIRECT_JOB)
    ]
    for job in document["jobs"]:
        if job["jobname"] == DIRECT_JOB:
            job["job options"].pop("sync")
    notes = run_notes(parse_fio_output(json.dumps(document)))
    assert (NOTE_CACHE_SYNC, DIRECT_JOB) in [(n.id, n.job) for n in notes]


def test_direct_writes_that_extend_the_file_commit_metadata_and_read_as_flushed() -> None:
    # Real: the first version of the probe (no overwrite=1) on the same write-through loop
    # device: each fdatasync after an extending direct write committed ext4's journal (device
    # time), so timing says "flushed". Why the probe overwrites a laid-out file.
    probe = parse_probe(_capture("loop-write-through-no-overwrite.json"))
    assert probe.direct_fdatasync_p50_us is not None
    assert probe.direct_fdatasync_p50_us >= FLUSH_FLOOR_US
    assert probe.flush is not None
    assert probe.flush.kind is FlushClass.FLUSHED
