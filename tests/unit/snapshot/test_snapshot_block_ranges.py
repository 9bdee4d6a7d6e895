"""`snapshot check --volume-mode Block`: the pods' scripts run here with the local bash and GNU
coreutils on a 64 MiB file standing in for the device, and judged as the check judges them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kubectl_storage.core.snapshot.block_ranges import (
    ADDED_RANGE,
    BLOCK_MIN_BYTES,
    BLOCK_RANGES,
    RANGE_SIZES,
    block_change_script,
    block_checksum_script,
    block_plan_problems,
    block_size_problem,
    block_write_script,
)
from kubectl_storage.core.snapshot.check_plan import FileStatus, compare_restore, parse_checksums
from kubectl_storage.core.snapshot.earlier import without_markers


def _run(script: str) -> dict[str, str]:
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return parse_checksums(out.stdout)


@pytest.fixture
def device(tmp_path: Path) -> Path:
    path = tmp_path / "device.img"
    with path.open("wb") as f:
        f.truncate(BLOCK_MIN_BYTES)
    return path


def test_a_copy_taken_at_the_snapshot_restores_every_range(device: Path, tmp_path: Path) -> None:
    at_snapshot = without_markers(_run(block_write_script(str(device))))
    assert set(at_snapshot) == set(RANGE_SIZES)
    snapshot = tmp_path / "snapshot.img"
    shutil.copyfile(device, snapshot)
    after = without_markers(_run(block_change_script(str(device))))
    assert block_plan_problems(at_snapshot, after) == []
    restored = without_markers(_run(block_checksum_script(str(snapshot))))
    verdicts = compare_restore(at_snapshot, after, restored, RANGE_SIZES)
    assert {v.path: v.status for v in verdicts} == dict.fromkeys(RANGE_SIZES, FileStatus.OK)
    assert {v.path for v in verdicts if v.changed_after_snapshot} == {
        "range@0",
        "range@1MiB",
        ADDED_RANGE.name,
    }
    # the added range was zeros at the snapshot
    zeros = subprocess.run(
        ["sh", "-c", f"head -c {ADDED_RANGE.length} /dev/zero | sha256sum | cut -c1-64"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert at_snapshot[ADDED_RANGE.name] == zeros


def test_the_live_device_after_the_change_is_not_a_good_restore(device: Path) -> None:
    at_snapshot = _run(block_write_script(str(device)))
    after = _run(block_change_script(str(device)))
    restored = _run(block_checksum_script(str(device)))  # what a lazy copy would show
    statuses = {v.path: v.status for v in compare_restore(at_snapshot, after, restored)}
    assert statuses["range@1MiB"] is FileStatus.LATER_CONTENT
    assert statuses["range@0"] is FileStatus.LATER_CONTENT
    assert statuses[ADDED_RANGE.name] is FileStatus.LATER_CONTENT
    assert statuses["range@16MiB"] is FileStatus.OK


def test_one_corrupted_byte_in_an_unaligned_range_is_found(device: Path, tmp_path: Path) -> None:
    at_snapshot = _run(block_write_script(str(device)))
    snapshot = tmp_path / "snapshot.img"
    shutil.copyfile(device, snapshot)
    after = _run(block_change_script(str(device)))
    unaligned = next(r for r in BLOCK_RANGES if r.name == "range@8MiB+12345")
    with snapshot.open("r+b") as f:
        f.seek(unaligned.offset + unaligned.length - 1)  # its very last byte
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    restored = _run(block_checksum_script(str(snapshot)))
    bad = [v for v in compare_restore(at_snapshot, after, restored) if v.problem]
    assert [v.path for v in bad] == ["range@8MiB+12345"]
    assert bad[0].status is FileStatus.DIFFERS


def test_a_change_that_did_not_happen_voids_the_check(device: Path) -> None:
    at_snapshot = _run(block_write_script(str(device)))
    problems = block_plan_problems(at_snapshot, dict(at_snapshot))
    assert problems == [
        "the change after the snapshot did not change range@1MiB",
        "the change after the snapshot did not change range@0",
        f"the change after the snapshot did not change {ADDED_RANGE.name}",
    ]


def test_the_device_must_reach_past_the_ranges() -> None:
    assert block_size_problem(BLOCK_MIN_BYTES) is None
    problem = block_size_problem(BLOCK_MIN_BYTES - 1)
    assert problem is not None
    assert "at least 64Mi" in problem
