"""What a flush measured (core/flush/timing.py, issues 23 and 26): the rules on their own, with
the medians of real fio captures (tests/fixtures/fio and tests/fixtures/validate_persistence),
and then the same captures through both features that use it: the fio command's guards and
validate-persistence's fsync probe, which must agree."""

from __future__ import annotations

import pytest

from kubectl_storage.core.flush.timing import FLUSH_FLOOR_US, FlushClass, classify_flush


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
