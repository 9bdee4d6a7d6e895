"""The database profile syncs after its writes only (core/fio/profiles.py).

fio before 3.38 issues ``fdatasync=1``'s sync after every I/O of a job that also reads, reads
included; the profile's mixed job synchronizes its writes with ``sync=dsync`` (O_DSYNC) instead.
Both captures are real fio-3.33 runs of the profile on ext4 with direct I/O
(tests/fixtures/fio/SOURCES.md): before the change and as the profile renders now.
"""

from __future__ import annotations

from pathlib import Path

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.profile_render import render_profile
from kubectl_storage.core.fio.results import FioJobResult, FioResult

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
BEFORE = "fio-3.33-database-profile-ext4-direct-json+"
AFTER = "fio-3.33-database-dsync-profile-ext4-direct-json+"


def _run(name: str) -> FioResult:
    return parse_fio_output((FIXTURES / f"{name}.json").read_text())


def _syncs(job: FioJobResult) -> int:
    return job.sync.total_ios if job.sync is not None else 0


def test_before_the_mixed_job_synced_after_its_reads_too() -> None:
    randrw = _run(BEFORE).job("db_randrw")
    assert randrw.job_options["fdatasync"] == "1"
    reads, writes = randrw.read.total_ios, randrw.write.total_ios
    assert (reads, writes, _syncs(randrw)) == (26204, 11122, 37326)
    assert _syncs(randrw) == reads + writes  # one fdatasync after every I/O


def test_now_the_mixed_job_makes_no_sync_call_after_a_read() -> None:
    run = _run(AFTER)
    randrw = run.job("db_randrw")
    assert randrw.job_options["sync"] == "dsync"
    assert "fdatasync" not in randrw.job_options
    assert (randrw.read.total_ios, randrw.write.total_ios) == (45666, 19522)
    assert _syncs(randrw) == 0  # the writes are O_DSYNC: synchronized inside each write
    # still 70/30
    assert round(100 * randrw.read.total_ios / (randrw.read.total_ios + 19522)) == 70
    # the capture is the profile as committed
    text = render_profile("database", runtime_s=3, ramp_time_s=1, directory="/var/tmp/fl-work/db2")
    assert (FIXTURES / f"{AFTER}.fio").read_text() == text


def test_the_commit_job_still_syncs_after_each_write() -> None:
    # A write-only job's fdatasync=1 was right in fio-3.33 and stays: one sync per write (fio
    # counts the I/O the ramp's end cut in two on one side only).
    for name in (BEFORE, AFTER):
        commit = _run(name).job("db_commit")
        assert commit.job_options["fdatasync"] == "1"
        assert commit.read.total_ios == 0
        assert abs(_syncs(commit) - (commit.write.total_ios or 0)) <= 1, name
