"""The cache guards on ext4 on a loop device, in write-back and write-through mode (issue 23 item 1).

Captured on this machine (tests/fixtures/fio/SOURCES.md, "Captured 2026-12-03"): the ``quick``,
``database`` and ``etcd`` profiles as the product renders them, on ext4 on ``/dev/loopN``
attached with ``losetup --direct-io=off`` (write back: the loop writes into the backing file's
page cache) and ``--direct-io=on`` (write through: O_DIRECT to the backing file on the disk).
Both are honest devices seen from fio: every guard must stay quiet. The write-back device's
reads are the one place where a page cache answers and the timing guards cannot see it; the
test pins that limit down so that a change of the rule shows here (docs/commands/fio.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kubectl_storage.core.fio.cache_evidence import (
    CACHE_LATENCY_FLOOR_US,
    WAITS_PER_IO_FLOOR,
    queue_depth,
    waits_per_io,
)
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.guards import run_notes
from kubectl_storage.core.fio.notes import CONFIDENCE_TRUSTED
from kubectl_storage.core.fio.profile_notes import ETCD_PASS
from kubectl_storage.core.fio.results import FioResult
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.flush.timing import FlushClass, classify_flush

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
MODES = ("write-back", "write-through")
PROFILES = ("quick", "database", "etcd")
CASES = [(profile, mode) for mode in MODES for profile in PROFILES]


def parsed(profile: str, mode: str) -> FioResult:
    name = f"fio-3.33-{profile}-profile-ext4-on-loop-{mode}-json+.json"
    return parse_fio_output((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("profile", "mode"), CASES, ids=[f"{p}-{m}" for p, m in CASES])
def test_every_profile_on_a_loop_device_is_trusted(profile: str, mode: str) -> None:
    result = parsed(profile, mode)
    for job in result.jobs:  # the loop's kernel thread completes the I/O: fio waited
        waits = waits_per_io(job)
        assert waits is not None
        assert waits >= WAITS_PER_IO_FLOOR, (job.name, waits)

    assert run_notes(result) == []
    (entry,) = build_fio_report({mode: [result]}, profile=profile).results
    assert entry.confidence == CONFIDENCE_TRUSTED, entry.notes
    if profile == "etcd":
        assert entry.etcd is not None
        assert entry.etcd.verdict == ETCD_PASS


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("profile", ["database", "etcd"])
def test_the_flushes_took_device_time(profile: str, mode: str) -> None:
    # Both devices declare a volatile write cache (queue/write_cache "write back"), so ext4's
    # fdatasync sends a flush and the loop syncs its backing file: device time.
    for job in parsed(profile, mode).jobs:
        if job.name == "db_randrw":
            # sync=dsync: no fdatasync call, each O_DSYNC write waits for its flush itself
            assert job.sync is None
            assert job.write.clat_p50_us is not None
            assert job.write.clat_p50_us > 100 * CACHE_LATENCY_FLOOR_US
            continue
        assert job.sync is not None
        assert job.sync.lat_p50_us is not None
        reading = classify_flush(
            sync_us=job.sync.lat_p50_us,
            write_us=job.write.clat_p50_us,
            writes_direct=profile == "database",
        )
        assert reading is not None
        assert reading.kind is FlushClass.FLUSHED, (job.name, reading)


def test_the_write_back_devices_reads_come_from_a_page_cache_the_timing_cannot_see() -> None:
    back = parsed("quick", "write-back").jobs[0]
    through = parsed("quick", "write-through").jobs[0]
    assert back.name == through.name == "read_iops"
    # The same reads, five times as many when the backing file's page cache holds the data ...
    assert back.read.iops > 5 * through.read.iops
    mean = back.read.clat_mean_us
    assert mean is not None
    result = parsed("quick", "write-back")
    depth = queue_depth({**result.global_options, **back.job_options})
    assert depth == 16
    assert mean / depth < CACHE_LATENCY_FLOOR_US  # Little's law: under 5 µs per I/O ...
    # ... yet fio slept as for a disk (the loop's kernel thread completes each read), which no
    # memory-backed volume made it do; the rule needs both, so a device above 200k 4k IOPS per
    # job is not taken for memory (docs/commands/fio.md). --compare-local is the check here.
    waits = waits_per_io(back)
    assert waits is not None
    assert waits > 10 * WAITS_PER_IO_FLOOR
    assert run_notes(result) == []
