"""fio's verify failures (error 84, EILSEQ) read as data corruption, with where fio found it.

Every input is a real fio-3.33 run on this machine (tests/fixtures/fio/SOURCES.md): a 4M file
written with ``verify=crc32c``, then read back with ``verify_only=1`` after one block was
overwritten (a whole block: a bad header; 16 bytes inside a block: a checksum mismatch), or
with ``verify=md5`` (another verify type), or untouched (the pass).
"""

from __future__ import annotations

import io
from pathlib import Path

from kubectl_storage.core.fio.env_errors import error_note, error_summary, text_notes
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.notes import (
    NOTE_JOB_ERROR,
    NOTE_NO_SPACE,
    NOTE_VERIFY_FAILED,
    SUSPECT_NOTES,
)
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.fio.verify_failure import VerifyFailure, verify_failures
from kubectl_storage.render.fio import class_verdict, write_fio_table
from tests.conftest import run_cli

FIO = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
DATA = "/var/tmp/fl-work/verify/verify-crc32c.dat"


def _report(json_name: str, stderr_name: str | None = None) -> FioReport:
    run = parse_fio_output((FIO / json_name).read_text())
    stderr = (FIO / stderr_name).read_text() if stderr_name else ""
    return build_fio_report({"vol": [run]}, profile="custom", stderr={"vol": stderr})


def test_bad_header_is_data_corruption_with_job_and_offset() -> None:
    # fio's stdout has the job's "error" 84 and "err=84 ... error=Invalid or incomplete
    # multibyte or wide character"; its stderr the block: "verify: bad magic header e761,
    # wanted acca at file ... offset 409600, length 4096".
    report = _report("fio-3.33-verify-bad-header.json", "fio-3.33-verify-bad-header.stderr.txt")
    (result,) = report.results
    notes = [note for note in result.notes if note.id == NOTE_VERIFY_FAILED]
    assert len(notes) == 1
    (note,) = notes
    assert note.job == "verify_crc32c"
    assert note.message.startswith("job verify_crc32c: fio's verify found data corruption")
    assert (
        f"verify: bad magic header e761, wanted acca at file {DATA} offset 409600, length 4096"
        in note.message
    )
    assert "multibyte" not in note.message
    assert NOTE_JOB_ERROR not in {n.id for n in result.notes}
    assert NOTE_VERIFY_FAILED in SUSPECT_NOTES
    assert report.outcome.reasons == ("job-error:vol/verify_crc32c",)
    line = class_verdict("vol", result.jobs)
    assert "job verify_crc32c failed (data corruption found by fio's verify, error 84)" in line
    out = io.StringIO()
    write_fio_table(report, out)
    assert "multibyte" not in out.getvalue()


def test_checksum_mismatch_in_a_merged_output_through_from_json() -> None:
    # `fio ... > out 2>&1`: the crc32c line, then fio's err=84 line, then the JSON.
    path = FIO / "fio-3.33-verify-crc-mismatch-stderr-merged.txt"
    result = run_cli("fio", "--from-json", str(path))
    assert result.exit_code == 1
    assert f"crc32c: verify failed at file {DATA} offset 819200, length 4096" in result.stdout
    assert "data corruption" in result.stdout
    assert "multibyte" not in result.stdout


def test_another_verify_type_is_said_to_be_maybe_the_job_file() -> None:
    report = _report(
        "fio-3.33-verify-type-mismatch.json", "fio-3.33-verify-type-mismatch.stderr.txt"
    )
    (note,) = [n for n in report.results[0].notes if n.id == NOTE_VERIFY_FAILED]
    assert f"md5: verify failed at file {DATA} offset 0, length 4096" in note.message
    assert "(and" not in note.message  # one block, and the type line is no block
    assert "fio: verify type mismatch (5 media, 2 given)" in note.message
    assert "the job file (verify=) may be the cause" in note.message


def test_fios_lines_are_read() -> None:
    text = (FIO / "fio-3.33-verify-type-mismatch.stderr.txt").read_text()
    assert verify_failures(text) == [
        VerifyFailure("md5: verify failed", DATA, 0, 4096),
        VerifyFailure("fio: verify type mismatch (5 media, 2 given)"),
    ]
    # without the JSON, fio's text alone still gives the note (no job to name)
    (note,) = text_notes((FIO / "fio-3.33-verify-bad-header.stderr.txt").read_text())
    assert (note.id, note.job) == (NOTE_VERIFY_FAILED, None)
    assert "offset 409600" in note.message


def test_a_verify_pass_gives_no_note() -> None:
    # The untouched file read back with verify_only=1: error 0, 1024 blocks checked.
    report = _report("fio-3.33-verify-clean.json")
    (result,) = report.results
    (job,) = result.jobs
    assert job.error == 0
    assert job.value("read_iops")
    assert NOTE_VERIFY_FAILED not in {note.id for note in result.notes}
    assert class_verdict("vol", result.jobs).endswith("no fio errors")


def test_other_error_numbers_read_as_before() -> None:
    assert error_note(28, job="j").id == NOTE_NO_SPACE
    eio = error_note(5, job="j")
    assert eio.id == NOTE_JOB_ERROR
    assert "error 5 (EIO: Input/output error)" in eio.message
    assert error_summary(28) == "error 28, ENOSPC"
    # and a real ENOSPC capture keeps its note
    enospc = _report("fio-3.33-enospc-tmpfs.json", "fio-3.33-enospc-tmpfs.stderr.txt")
    assert NOTE_NO_SPACE in {note.id for note in enospc.results[0].notes}
