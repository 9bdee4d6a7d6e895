"""`snapshot check`'s earlier snapshot: the pods' scripts run here with the local sh and GNU
coreutils, on a directory standing in for the source filesystem and a 64 MiB file standing in
for a raw device. A "snapshot" is a copy; a restore that hands back the earlier copy (the test
driver's `stale` mode) must be named, and an honest or an empty restore must not be."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from kubectl_storage.core.snapshot.block_ranges import (
    BLOCK_MIN_BYTES,
    block_checksum_script,
    block_write_script,
)
from kubectl_storage.core.snapshot.check_plan import (
    checksum_script,
    compare_restore,
    parse_checksums,
    write_script,
)
from kubectl_storage.core.snapshot.check_report import SnapshotCheckReport
from kubectl_storage.core.snapshot.earlier import (
    EARLIER_MARKER,
    block_earlier_script,
    earlier_script,
    judge_earlier,
    without_markers,
)


def _run(script: str) -> dict[str, str]:
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True)
    return parse_checksums(out.stdout)


def _filesystem(tmp_path: Path) -> tuple[dict[str, str], dict[str, str], Path, Path]:
    """Mark, copy (earlier), write, copy (snapshot): the two states and the two copies."""
    source = tmp_path / "source"
    source.mkdir()
    at_earlier = _run(earlier_script(str(source)))
    earlier = tmp_path / "earlier"
    shutil.copytree(source, earlier)
    at_snapshot = _run(write_script(str(source)))
    snapshot = tmp_path / "snapshot"
    shutil.copytree(source, snapshot)
    return at_earlier, at_snapshot, earlier, snapshot


def test_a_restore_of_the_earlier_snapshot_is_named(tmp_path: Path) -> None:
    at_earlier, at_snapshot, earlier, _ = _filesystem(tmp_path)
    assert set(at_earlier) == {EARLIER_MARKER}
    restored = _run(checksum_script(str(earlier)))
    judged = judge_earlier("s-earlier", "s", at_earlier, at_snapshot, restored)
    assert judged.restore_is_earlier
    (problem,) = judged.problems
    assert "earlier snapshot s-earlier" in problem


def test_an_honest_restore_is_not_the_earlier_snapshot(tmp_path: Path) -> None:
    at_earlier, at_snapshot, _, snapshot = _filesystem(tmp_path)
    restored = _run(checksum_script(str(snapshot)))
    assert restored[EARLIER_MARKER] == at_earlier[EARLIER_MARKER]  # the marker stays, untouched
    judged = judge_earlier("s-earlier", "s", at_earlier, at_snapshot, restored)
    assert not judged.restore_is_earlier
    assert judged.problems == judged.setup_problems == []


def test_an_empty_restore_is_missing_data_not_the_earlier_snapshot(tmp_path: Path) -> None:
    at_earlier, at_snapshot, _, _ = _filesystem(tmp_path)
    judged = judge_earlier("s-earlier", "s", at_earlier, at_snapshot, {})
    assert not judged.restore_is_earlier


def test_no_marker_proves_nothing_and_says_so(tmp_path: Path) -> None:
    _, at_snapshot, _, _ = _filesystem(tmp_path)
    judged = judge_earlier("s-earlier", "s", {}, at_snapshot, {})
    assert not judged.restore_is_earlier
    assert judged.setup_problems


def test_the_marker_is_left_out_of_the_file_comparison(tmp_path: Path) -> None:
    _, at_snapshot, _, snapshot = _filesystem(tmp_path)
    restored = without_markers(_run(checksum_script(str(snapshot))))
    paths = {v.path for v in compare_restore(without_markers(at_snapshot), {}, restored)}
    assert EARLIER_MARKER not in paths
    assert "tiny.txt" in paths


def test_a_block_restore_of_the_earlier_snapshot_is_named_and_zeros_are_not(
    tmp_path: Path,
) -> None:
    device = tmp_path / "device.img"
    with device.open("wb") as f:
        f.truncate(BLOCK_MIN_BYTES)
    zeros = _run(block_checksum_script(str(device)))
    at_earlier = _run(block_earlier_script(str(device)))
    earlier = tmp_path / "earlier.img"
    shutil.copyfile(device, earlier)
    at_snapshot = _run(block_write_script(str(device)))
    snapshot = tmp_path / "snapshot.img"
    shutil.copyfile(device, snapshot)

    def judged(restored: dict[str, str]) -> bool:
        return judge_earlier(
            "e", "s", at_earlier, at_snapshot, restored, what="ranges"
        ).restore_is_earlier

    assert judged(_run(block_checksum_script(str(earlier))))
    assert not judged(_run(block_checksum_script(str(snapshot))))
    assert not judged(zeros)  # a blank device is missing data, not the earlier snapshot


def test_the_report_fails_on_the_earlier_snapshot_and_lists_it(tmp_path: Path) -> None:
    at_earlier, at_snapshot, earlier, _ = _filesystem(tmp_path)
    restored = _run(checksum_script(str(earlier)))
    report = SnapshotCheckReport(
        storage_class="c",
        snapshot_class="sc",
        driver="d",
        namespace="n",
        size="1Gi",
        snapshot="s",
        restore_size="1Gi",
        restore_storage_class="c",
        run_id="r",
        steps=(),
        files=compare_restore(without_markers(at_snapshot), {}, without_markers(restored)),
        changes=(),
        earlier=judge_earlier("s-earlier", "s", at_earlier, at_snapshot, restored),
    )
    doc = report.to_dict()
    assert doc["verdict"] == "fail"
    assert "earlier-snapshot" in doc["reasons"]
    assert doc["earlierSnapshot"] == {
        "name": "s-earlier",
        "marked": True,
        "restoreIsEarlier": True,
    }
