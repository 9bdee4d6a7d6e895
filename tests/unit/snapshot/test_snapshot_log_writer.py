"""The --under-load writer, run by the local bash the way the source pod runs it: its records are
the ones log_prefix defines, byte for byte, alternating over two files the way log_cut reads
them, and its acknowledgements say what must survive."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from kubectl_storage.core.snapshot.log_cut import in_file
from kubectl_storage.core.snapshot.log_prefix import check_log
from kubectl_storage.core.snapshot.log_record import encode_record
from kubectl_storage.core.snapshot.log_writer import (
    LOG_FILES,
    Ack,
    acknowledged_before,
    count_command,
    parse_acks,
    start_command,
    stop_command,
    writer_script,
    written_between,
)


def _run_writer(tmp_path: Path, records: int) -> tuple[list[bytes], tuple[Ack, ...], str]:
    """Run the writer until it has acknowledged ``records`` records (each is fsynced, which on
    a loaded machine took up to half a second here: a count, not a time, ends the run)."""
    mount, state = tmp_path / "volume", tmp_path / "state"
    mount.mkdir()
    state.mkdir()
    script = writer_script(str(mount), state_dir=str(state))
    subprocess.run(start_command(script, state_dir=str(state)), check=True, timeout=30)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        counted = subprocess.run(
            count_command(state_dir=str(state)), capture_output=True, text=True
        )
        if int(counted.stdout.strip() or 0) >= records:
            break
        time.sleep(0.1)
    stopped = subprocess.run(
        stop_command(state_dir=str(state)), capture_output=True, text=True, check=True
    )
    logs = [(mount / name).read_bytes() for name in LOG_FILES]
    return logs, parse_acks(stopped.stdout), stopped.stderr


def test_the_writer_appends_the_records_log_prefix_defines(tmp_path: Path) -> None:
    logs, acks, errors = _run_writer(tmp_path, 5)

    assert len(acks) >= 5, errors
    assert [a.seq for a in acks] == list(range(1, len(acks) + 1))  # one global seq
    for ack in acks:
        # Global record g is record (g - 1) // 2 + 1 of file (g - 1) % 2.
        data, file_seq = logs[(ack.seq - 1) % 2], (ack.seq - 1) // 2 + 1
        offset = (file_seq - 1) * 4096
        assert data[offset : offset + 4096] == encode_record(file_seq, ack.timestamp_ns)
        assert ack.acked_ns >= ack.timestamp_ns
    for index, data in enumerate(logs):
        verdict = check_log(data, acknowledged_before_snapshot=in_file(len(acks), 2, index))
        assert verdict.ok, verdict.problems
        assert verdict.clean_prefix >= in_file(len(acks), 2, index)


def test_the_writer_stops_when_told(tmp_path: Path) -> None:
    logs, acks, _ = _run_writer(tmp_path, 1)
    time.sleep(0.5)

    assert [(tmp_path / "volume" / name).read_bytes() for name in LOG_FILES] == logs
    written = sum(len(data) // 4096 for data in logs)
    assert written in (len(acks), len(acks) + 1)  # at most the record in flight


def test_acknowledged_before_counts_the_fsync_not_the_write() -> None:
    acks = (Ack(1, 100, 150), Ack(2, 160, 240), Ack(3, 250, 330))

    assert acknowledged_before(acks, 240) == 1  # record 2's fsync returned at 240, not before
    assert acknowledged_before(acks, 241) == 2
    assert acknowledged_before(acks, 50) == 0
    assert written_between(acks, 150, 331) == 3
    assert written_between(acks, 151, 330) == 1


@pytest.mark.parametrize(
    ("text", "seqs"),
    [
        ("ack 1 10 20\nack 2 30 40\n", [1, 2]),
        ("ack 1 10 20\nack 2 30", [1]),  # cut off mid-line when the writer was stopped
        ("bash: warning\nack 7 1 2\n", [7]),
        ("", []),
    ],
)
def test_parse_acks(text: str, seqs: list[int]) -> None:
    assert [a.seq for a in parse_acks(text)] == seqs
