"""Guards: notes that say when fio's numbers should not be trusted, on real fio outputs.

Every fixture is a real capture (tests/fixtures/fio/SOURCES.md); the few real-derived inputs
say in a comment what was changed. Expected numbers come from fio's JSON in the same file.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.block_reads import unwritten_read_notes
from kubectl_storage.core.fio.cache_evidence import WAITS_PER_IO_FLOOR
from kubectl_storage.core.fio.clients import parse_client_output
from kubectl_storage.core.fio.env_errors import error_note, text_notes
from kubectl_storage.core.fio.fio_json import (
    parse_fio_document,
    parse_fio_output,
)
from kubectl_storage.core.fio.guards import (
    CACHE_LATENCY_FLOOR_US,
    DATASET_BANDWIDTH_FACTOR,
    run_notes,
)
from kubectl_storage.core.fio.notes import (
    CONFIDENCE_TRUSTED,
    NOTE_AIO_LIMIT,
    NOTE_CACHE_SYNC,
    NOTE_CACHE_WRITE,
    NOTE_DATASET_SMALL,
    NOTE_ETCD,
    NOTE_JOB_ERROR,
    NOTE_KUBESTR_MODE,
    NOTE_LATENCY_OFF,
    NOTE_MIXED,
    NOTE_NO_IO,
    NOTE_NO_SPACE,
    NOTE_NOT_CHECKED,
    NOTE_PREFILL,
    NOTE_READ_ONLY,
    NOTE_UNWRITTEN_READ,
    NOTE_UPPER_BOUND,
    SUSPECT_NOTES,
    FioNote,
    confidence,
)
from kubectl_storage.core.fio.profile_notes import ETCD_FAIL, ETCD_PASS, ETCD_UNKNOWN, etcd_verdict
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME
from kubectl_storage.core.fio.profiles import ETCD_FDATASYNC_P99_LIMIT_US
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.report.findings import Severity

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def parsed(name: str) -> FioResult:
    return parse_fio_output(load(name))


def document(name: str) -> dict[str, Any]:
    return dict(parse_fio_output(load(name)).raw)


CLIENT_ADDRESSES = ("127.0.0.1", "127.0.0.2", "127.0.0.3")


def ids(result: FioResult) -> list[tuple[str, str | None]]:
    return [(note.id, note.job) for note in run_notes(result)]


# --- a cache served the reads / acknowledged the writes, at any queue depth (issue 23) ---------


def test_a_small_data_set_read_with_direct_io_from_a_disk_is_not_flagged() -> None:
    # The quick profile on ext4: one 256M file, 91.3 MiB/s: "small" by kbench's rule (25 s of
    # it is 2.2 GiB), but direct I/O on a disk, and fio waited for the disk: nothing cached.
    raw = document("fio-3.33-quick-profile-ext4.json")
    assert DATASET_BANDWIDTH_FACTOR * raw["jobs"][0]["read"]["bw"] * 1024 > 256 * 2**20

    notes = run_notes(parsed("fio-3.33-quick-profile-ext4.json"))

    assert notes == []
    assert confidence(notes) == CONFIDENCE_TRUSTED


@pytest.mark.parametrize(
    "fixture",
    [
        "fio-3.33-quick-vda-ext4-a.json",  # 186k read IOPS at depth 16: fast, but a disk
        "fio-3.33-quick-vda-ext4-b.json",
        "fio-3.33-quick-block-loop-prefill.json",  # a loop device in direct-io mode
        "fio-3.33-kubestr-profile-ext4.json",  # no latency at all (gtod_reduce)
        "fio-3.20-kubestr-gtod-reduce.json",
        "fio-3.33-unified-rw-mixed.json",
        "fio-3.33-numjobs4-clones-json+normal.txt",
    ],
)
def test_direct_io_on_a_device_is_not_a_cache(fixture: str) -> None:
    notes = run_notes(parsed(fixture))

    assert not {NOTE_DATASET_SMALL, NOTE_CACHE_WRITE} & {n.id for n in notes}


def test_memory_at_queue_depth_16_is_a_cache_both_ways() -> None:
    # The quick profile on a tmpfs: medians 12.9/13.4 µs at depth 16 (above the 5 µs floor),
    # but fio was switched out 905 times in 5.6 million reads: it never waited for a device.
    raw = document("fio-3.33-quick-tmpfs.json")["jobs"]
    assert raw[0]["read"]["clat_ns"]["percentile"]["50.000000"] / 1000 > CACHE_LATENCY_FLOOR_US
    assert raw[0]["ctx"] / raw[0]["read"]["total_ios"] < WAITS_PER_IO_FLOOR

    notes = run_notes(parsed("fio-3.33-quick-tmpfs.json"))

    assert [(n.id, n.job) for n in notes] == [
        (NOTE_DATASET_SMALL, "read_iops"),
        (NOTE_CACHE_WRITE, "write_iops"),
    ]
    assert "fio never waited" in notes[0].message
    assert "at depth 16" in notes[1].message
    assert confidence(notes) == (
        "suspect: read_iops: reads from a cache (no waits at depth 16); "
        "write_iops: writes from a cache (no waits at depth 16)"
    )


def test_direct_writes_on_tmpfs_are_a_cache_effect() -> None:
    raw = document("fio-3.33-write-lat-direct-tmpfs.json")["jobs"][0]
    p50_us = raw["write"]["clat_ns"]["percentile"]["50.000000"] / 1000
    assert p50_us < CACHE_LATENCY_FLOOR_US

    notes = [
        n
        for n in run_notes(parsed("fio-3.33-write-lat-direct-tmpfs.json"))
        if n.id == NOTE_CACHE_WRITE
    ]

    (note,) = notes
    assert note.job == "write_lat"
    assert f"{p50_us:.2f} µs" in note.message
    assert "direct=0" not in note.message  # these were direct writes: some other cache


@pytest.mark.parametrize(
    "fixture",
    ["fio-3.33-write-lat-direct-ext4.json", "fio-3.33-quick-profile-ext4.json"],
    ids=["ext4-qd1-9us", "ext4-qd16"],
)
def test_real_device_writes_are_not_a_cache_effect(fixture: str) -> None:
    assert NOTE_CACHE_WRITE not in {note.id for note in run_notes(parsed(fixture))}


def test_jobs_that_sync_every_write_are_judged_by_their_sync_not_their_data_set() -> None:
    # etcd's 22m of 2300-byte buffered writes, each followed by fdatasync: far below 25 s of
    # its bandwidth, by design, and buffered: the fdatasync is what it measures.
    raw = document("fio-3.33-etcd-profile-ext4.json")["jobs"][0]
    assert DATASET_BANDWIDTH_FACTOR * raw["write"]["bw"] * 1024 > 22 * 2**20

    assert ids(parsed("fio-3.33-etcd-profile-ext4.json")) == []


def test_buffered_io_is_the_page_cache() -> None:
    # fio's client/server capture: buffered (direct=0) libaio on a 64M file, depth 8.
    run = parse_client_output(
        load("fio-3.33-client-server-3-clients-one-job-json+.txt"), CLIENT_ADDRESSES
    )
    notes = run_notes(run.clients[0].result)

    (small,) = [n for n in notes if n.id == NOTE_DATASET_SMALL]
    assert "buffered (direct=0)" in small.message
    assert "64Mi" in small.message


def test_buffered_reads_of_unknown_size_are_not_checked() -> None:
    # Real-derived: the buffered client capture with size= taken out of its options.
    result = (
        parse_client_output(
            load("fio-3.33-client-server-3-clients-one-job-json+.txt"), CLIENT_ADDRESSES
        )
        .clients[0]
        .result
    )
    options = {k: v for k, v in result.global_options.items() if k != "size"}
    notes = run_notes(replace(result, global_options=options))

    assert [n.id for n in notes] == [NOTE_NOT_CHECKED]
    assert NOTE_NOT_CHECKED not in SUSPECT_NOTES
    assert confidence(notes) == (
        "not checked: fio.dataset-small (read_iops: buffered reads, data set size unknown)"
    )


def test_fdatasync_on_tmpfs_reaches_no_stable_storage() -> None:
    raw = document("fio-3.33-etcd-profile-tmpfs.json")["jobs"][0]
    p50_us = raw["sync"]["lat_ns"]["percentile"]["50.000000"] / 1000

    notes = run_notes(parsed("fio-3.33-etcd-profile-tmpfs.json"))

    assert [(n.id, n.job) for n in notes] == [(NOTE_CACHE_SYNC, "etcd_fdatasync")]
    assert f"{p50_us:.2f} µs" in notes[0].message
    assert (
        confidence(notes) == f"suspect: etcd_fdatasync: fdatasync {p50_us:.2f} µs (memory-backed)"
    )


# --- errors from the environment -------------------------------------------------------------


def test_enospc_from_the_json_and_from_stderr() -> None:
    result = parsed("fio-3.33-enospc-tmpfs.json")
    stderr = load("fio-3.33-enospc-tmpfs.stderr.txt")
    assert result.jobs[0].error == 28

    (from_json,) = run_notes(result)
    from_stderr = text_notes(stderr)

    assert (from_json.id, from_json.job, from_json.severity) == (
        NOTE_NO_SPACE,
        "write_too_big",
        Severity.ERROR,
    )
    assert "-z/--size" in from_json.fix
    assert [note.id for note in from_stderr] == [NOTE_NO_SPACE]
    assert "No space left on device" in from_stderr[0].message
    report = build_fio_report(
        {"tiny": [result]}, profile="custom", stderr={"tiny": stderr}
    ).to_dict()
    (note,) = report["results"][0]["notes"]  # the stderr line says what the JSON said
    assert (note["id"], note["job"]) == (NOTE_NO_SPACE, "write_too_big")
    assert report["results"][0]["confidence"] == "suspect: volume full (ENOSPC)"


def test_erofs_from_the_json_and_from_stderr() -> None:
    result = parsed("fio-3.33-erofs-tmpfs.json")
    stderr = load("fio-3.33-erofs-tmpfs.stderr.txt")
    assert "err=30/file:filesetup.c:150, func=unlink, error=Read-only file system" in stderr

    assert [(n.id, n.job) for n in run_notes(result)] == [(NOTE_READ_ONLY, "write_readonly")]
    assert [n.id for n in text_notes(stderr)] == [NOTE_READ_ONLY]
    assert "dmesg" in run_notes(result)[0].fix


def test_libaio_eagain_is_the_node_aio_limit() -> None:
    # fio-3.33 printed its io_queue_init error on stdout, before the JSON (stderr was empty).
    result = parsed("fio-3.33-libaio-eagain-stdout.txt")
    assert result.jobs[0].error == 11

    notes = run_notes(result)
    from_text = text_notes(result.surrounding_text)

    assert [(n.id, n.job) for n in notes] == [(NOTE_AIO_LIMIT, "randread_deep_queue")]
    assert "fs.aio-max-nr" in notes[0].message
    assert "kubestr#309" in notes[0].message
    assert "sysctl -w fs.aio-max-nr" in notes[0].fix
    assert [n.id for n in from_text] == [NOTE_AIO_LIMIT]
    assert "func=io_queue_init" in from_text[0].message


def test_eagain_is_not_the_aio_limit_without_libaio() -> None:
    assert error_note(11, job="j", ioengine="psync").id == NOTE_JOB_ERROR
    assert error_note(11, job="j", ioengine="libaio").id == NOTE_AIO_LIMIT


def test_other_errors_are_named() -> None:
    note = error_note(5, job="read_ok")

    assert note.id == NOTE_JOB_ERROR
    assert note.severity is Severity.ERROR
    assert "error 5 (EIO: Input/output error)" in note.message


def test_dev_full_capture_with_stderr_merged() -> None:
    notes = run_notes(parsed("fio-3.33-dev-full-error-stderr-merged.txt"))

    assert (NOTE_NO_SPACE, "write_to_dev_full") in [(n.id, n.job) for n in notes]
    # fio's own "No space left on device" lines before the JSON add no second note.
    assert [n.id for n in notes].count(NOTE_NO_SPACE) == 1


# --- what is reported, and how ---------------------------------------------------------------


def test_mixed_direction_is_noted_not_shown_as_zero() -> None:
    notes = run_notes(parsed("fio-3.33-unified-rw-mixed.json"))

    assert (NOTE_MIXED, "randrw_mixed") in [(n.id, n.job) for n in notes]
    assert NOTE_NO_IO not in {n.id for n in notes}


def test_a_job_with_no_io_at_all_is_flagged() -> None:
    # Real-derived: the mixed capture with its "mixed" block removed, i.e. what the parser saw
    # before it read "mixed": a job that ran 2 s and, apparently, did nothing.
    raw = copy.deepcopy(document("fio-3.33-unified-rw-mixed.json"))
    del raw["jobs"][0]["mixed"]

    notes = run_notes(parse_fio_document(raw))

    assert [(n.id, n.job) for n in notes] == [(NOTE_NO_IO, "randrw_mixed")]
    assert confidence(notes) == "suspect: randrw_mixed: no I/O"


def test_gtod_reduce_is_noted_per_job() -> None:
    notes = run_notes(parsed("fio-3.20-kubestr-gtod-reduce.json"))

    assert [(n.id, n.job) for n in notes] == [
        (NOTE_LATENCY_OFF, "read_iops"),
        (NOTE_LATENCY_OFF, "write_iops"),
    ]
    assert confidence(notes) == CONFIDENCE_TRUSTED  # no latency is not a wrong number


def test_clones_merged_without_histograms_say_their_percentiles_are_bounds() -> None:
    # Real-derived: the 4-clone json+ capture with fio's "bins" removed (plain json).
    raw = copy.deepcopy(document("fio-3.33-numjobs4-clones-json+normal.txt"))
    for clone in raw["jobs"]:
        for block in ("slat_ns", "clat_ns", "lat_ns"):
            clone["read"][block].pop("bins", None)

    bounded = run_notes(parse_fio_document(raw))
    exact = run_notes(parsed("fio-3.33-numjobs4-clones-json+normal.txt"))

    assert (NOTE_UPPER_BOUND, "randread_clones") in [(n.id, n.job) for n in bounded]
    assert NOTE_UPPER_BOUND not in {n.id for n in exact}


def test_confidence_lists_every_reason_once() -> None:
    notes = run_notes(parsed("fio-3.33-write-lat-direct-tmpfs.json"))

    assert confidence(notes + notes) == "suspect: write_lat: writes from a cache (median 0.13 µs)"
    assert confidence([]) == CONFIDENCE_TRUSTED


def test_confidence_says_what_was_not_checked_after_what_is_suspect() -> None:
    suspect = run_notes(parsed("fio-3.33-write-lat-direct-tmpfs.json"))
    unchecked = FioNote(NOTE_NOT_CHECKED, Severity.INFO, "m", "f", "j", "fio.dataset-small (j)")

    assert confidence([unchecked]) == "not checked: fio.dataset-small (j)"
    assert confidence([*suspect, unchecked]) == (
        "suspect: write_lat: writes from a cache (median 0.13 µs); "
        "not checked: fio.dataset-small (j)"
    )


# --- kubestr and etcd profiles in the report -------------------------------------------------


def test_kubestr_mode_report_says_latency_is_off() -> None:
    # Our kubestr profile as fio ran it (size/runtime shortened): four jobs in one group.
    result = parsed("fio-3.33-kubestr-profile-ext4.json")
    assert {job.group_id for job in result.jobs} == {0}

    report = build_fio_report({"local": [result]}, profile="kubestr").to_dict()

    assert report["latency_measured"] is False
    assert [note["id"] for note in report["notes"]] == [NOTE_KUBESTR_MODE]
    assert "latency off" in report["notes"][0]["message"]
    jobs = report["results"][0]["jobs"]
    assert [job["name"] for job in jobs] == ["read_iops", "write_iops", "read_bw", "write_bw"]
    assert all(job["read_clat_p99_us"] is None and job["write_clat_p99_us"] is None for job in jobs)
    notes = report["results"][0]["notes"]
    assert [n["job"] for n in notes if n["id"] == NOTE_LATENCY_OFF] == [j["name"] for j in jobs]


def test_latency_measured_in_a_normal_report() -> None:
    report = build_fio_report(
        {"local": [parsed("fio-3.33-quick-profile-ext4.json")]}, profile="quick"
    ).to_dict()

    assert report["latency_measured"] is True
    assert report["notes"] == []


def test_etcd_verdict_uses_fios_fdatasync_p99() -> None:
    result = parsed("fio-3.33-etcd-profile-ext4.json")
    raw_p99_ns = document("fio-3.33-etcd-profile-ext4.json")["jobs"][0]["sync"]["lat_ns"][
        "percentile"
    ]["99.000000"]

    passed = etcd_verdict(result.jobs)
    failed = etcd_verdict(result.jobs, limit_us=raw_p99_ns / 1000 - 1)

    assert passed.to_dict() == {
        "job": "etcd_fdatasync",
        "fdatasync_p99_us": raw_p99_ns / 1000,
        "limit_us": ETCD_FDATASYNC_P99_LIMIT_US,
        "verdict": ETCD_PASS,
        "runs": 1,
    }
    assert failed.verdict == ETCD_FAIL
    assert etcd_verdict([]).verdict == ETCD_UNKNOWN


def test_etcd_report_carries_the_verdict_per_class() -> None:
    report = build_fio_report(
        {
            "ext4": [parsed("fio-3.33-etcd-profile-ext4.json")],
            "tmpfs": [parsed("fio-3.33-etcd-profile-tmpfs.json")],
        },
        profile="etcd",
    ).to_dict()

    ext4, tmpfs = report["results"]
    assert list(ext4) == ["storage_class", "confidence", "notes", "etcd", "jobs"]
    assert ext4["etcd"]["verdict"] == ETCD_PASS
    assert ext4["confidence"] == CONFIDENCE_TRUSTED
    assert [(n["id"], n["severity"]) for n in ext4["notes"]] == [(NOTE_ETCD, "info")]
    # tmpfs is below etcd's limit, but its fdatasync never reached a disk: a cache guard fired,
    # so the verdict is unknown, not PASS beside a cache warning (issue 23).
    assert tmpfs["etcd"]["verdict"] == ETCD_UNKNOWN
    assert tmpfs["confidence"].startswith("suspect: etcd_fdatasync: fdatasync")
    (etcd,) = [n for n in tmpfs["notes"] if n["id"] == NOTE_ETCD]
    assert etcd["severity"] == "warn"
    assert etcd["message"].startswith("etcd check unknown: fdatasync p99 ")
    assert "a cache answered (fio.cache-sync-latency)" in etcd["message"]
    job = ext4["jobs"][0]
    raw = document("fio-3.33-etcd-profile-ext4.json")["jobs"][0]
    assert job["sync_lat_p99_us"] == raw["sync"]["lat_ns"]["percentile"]["99.000000"] / 1000
    assert job["sync_total_ios"] == raw["sync"]["lat_ns"]["N"]  # fio's total_ios is 0 here
    assert json.loads(json.dumps(report)) == report


def test_etcd_report_without_the_etcd_job_is_unknown() -> None:
    report = build_fio_report(
        {"tiny": [parsed("fio-3.33-enospc-tmpfs.json")]}, profile="etcd"
    ).to_dict()

    result = report["results"][0]
    assert result["etcd"]["verdict"] == ETCD_UNKNOWN
    assert (NOTE_ETCD, "warn") in [(n["id"], n["severity"]) for n in result["notes"]]


def test_note_dicts_have_a_fixed_shape() -> None:
    (note,) = run_notes(parsed("fio-3.33-erofs-tmpfs.json"))

    assert list(note.to_dict()) == ["id", "severity", "job", "message", "fix"]


# --- Block volumes: reads of unwritten blocks, and the prefill (issue 15) ---------------------

BLOCK_PREFILL = "fio-3.33-quick-block-loop-prefill.json"
BLOCK_NO_PREFILL = "fio-3.33-quick-block-loop-no-prefill.json"


def test_reads_of_a_fresh_device_without_prefill_are_suspect() -> None:
    # --no-prefill on a fresh sparse loop device: read_iops read holes (513k IOPS, p50 28 µs).
    result = parsed(BLOCK_NO_PREFILL)
    notes = [n for n in run_notes(result) if n.id == NOTE_UNWRITTEN_READ]

    assert [n.job for n in notes] == ["read_iops"]  # write_iops writes: nothing to flag
    assert NOTE_UNWRITTEN_READ in SUSPECT_NOTES
    assert "/dev/kubectl-storage-block (its first 64Mi)" in notes[0].message
    assert "--no-prefill" in notes[0].fix
    assert NOTE_PREFILL not in [n.id for n in run_notes(result)]
    assert "read_iops: read unwritten blocks" in confidence(run_notes(result))


def test_prefilled_reads_are_not_flagged_and_the_prefill_is_a_note() -> None:
    raw = document(BLOCK_PREFILL)
    written = raw["jobs"][0]["write"]
    result = parsed(BLOCK_PREFILL)
    notes = run_notes(result)

    assert NOTE_UNWRITTEN_READ not in [n.id for n in notes]
    (prefill,) = [n for n in notes if n.id == NOTE_PREFILL]
    assert prefill.job == PREFILL_JOB_NAME
    assert prefill.severity is Severity.INFO
    assert written["io_bytes"] == 64 * 2**20
    assert "wrote 64Mi of /dev/kubectl-storage-block sequentially from offset 0" in prefill.message
    assert f"in {written['runtime']} ms" in prefill.message  # 36 ms in this capture
    # the prefill is not judged as a measurement (its 64Mi at 1.5 GiB/s is a "small data set")
    assert not [n for n in notes if n.job == PREFILL_JOB_NAME and n.id != NOTE_PREFILL]


def test_the_prefill_is_not_a_reported_job() -> None:
    report = build_fio_report({"loop": [parsed(BLOCK_PREFILL)]}, profile="quick")
    (result,) = report.results

    assert [job.name for job in result.jobs] == ["read_iops", "write_iops"]
    assert NOTE_PREFILL in [n.id for n in result.notes]
    assert "unwritten" not in result.confidence
    no_prefill = build_fio_report({"loop": [parsed(BLOCK_NO_PREFILL)]}, profile="quick")
    assert "read_iops: read unwritten blocks" in no_prefill.results[0].confidence


def test_a_prefill_short_of_the_read_range_leaves_the_reads_suspect() -> None:
    # Real-derived: the prefill capture with the prefill's written bytes cut to half the range.
    raw = copy.deepcopy(document(BLOCK_PREFILL))
    raw["jobs"][0]["write"]["io_bytes"] //= 2
    notes = run_notes(parse_fio_document(raw))

    assert [n.job for n in notes if n.id == NOTE_UNWRITTEN_READ] == ["read_iops"]


def test_a_failed_prefill_is_an_error_and_the_reads_are_suspect() -> None:
    # Real-derived: the prefill capture with the prefill job given fio's ENOSPC (28).
    raw = copy.deepcopy(document(BLOCK_PREFILL))
    raw["jobs"][0]["error"] = 28
    notes = run_notes(parse_fio_document(raw))

    assert (NOTE_NO_SPACE, PREFILL_JOB_NAME) in [(n.id, n.job) for n in notes]
    assert [n.job for n in notes if n.id == NOTE_UNWRITTEN_READ] == ["read_iops"]
    assert NOTE_PREFILL not in [n.id for n in notes]
    # and the run failed (exit 1), though the prefill is not one of the reported jobs
    report = build_fio_report({"loop": [parse_fio_document(raw)]}, profile="quick")
    assert PREFILL_JOB_NAME not in [job.name for job in report.results[0].jobs]
    assert report.failed_jobs == (f"loop/{PREFILL_JOB_NAME}",)
    good = build_fio_report({"loop": [parsed(BLOCK_PREFILL)]}, profile="quick")
    assert good.failed_jobs == ()


def test_a_write_running_beside_the_reads_does_not_count_as_written_first() -> None:
    # Real-derived: the prefill capture with the prefill moved into the read job's stonewall
    # group (as if it ran at the same time as the reads).
    raw = copy.deepcopy(document(BLOCK_PREFILL))
    raw["jobs"][0]["groupid"] = raw["jobs"][1]["groupid"]
    notes = run_notes(parse_fio_document(raw))

    assert [n.job for n in notes if n.id == NOTE_UNWRITTEN_READ] == ["read_iops"]


def test_only_reads_of_the_pods_block_volume_are_judged() -> None:
    # fio lays out a file before reading it; a device in someone's saved output (fio-plot's
    # whole-disk read of /dev/sdb) may have been written long before: neither is judged.
    for name in (
        "fio-3.33-quick-profile-ext4.json",
        "fio-3.33-kubestr-profile-ext4.json",
        "fio-3.1-fio-plot-randread-sdb.json",
    ):
        assert NOTE_UNWRITTEN_READ not in [n.id for n in run_notes(parsed(name))], name
    # the same judgement applies to any device path it is given
    result = parsed("fio-3.1-fio-plot-randread-sdb.json")
    (note,) = unwritten_read_notes(result, device="/dev/sdb")
    assert "/dev/sdb (the whole device)" in note.message
