"""fio's verify failures: error 84 is data that came back other than it was written.

fio returns ``EILSEQ`` (84 on Linux) from every check of its verify code that finds the data
read back different from what it wrote (``verify.c`` in fio-3.33: a bad header, a checksum or a
pattern that does not match), and reports it as the job's ``error``. The C library's text for
84 is "Invalid or incomplete multibyte or wide character", which says nothing here; the note
says what it is: data corruption found by fio's verify.

fio prints where on stderr (``log_err``), one line per failed block, which this module reads:

* ``crc32c: verify failed at file F offset O, length L (requested block: …)`` — the block's
  checksum (``md5``, ``sha256``, ``pattern`` … likewise) does not match, followed by the
  expected and received checksums;
* ``verify: bad magic header e761, wanted acca at file F offset O, length L (…)`` — the block's
  verify header itself is not there (also ``bad header length``, ``rand_seed``, ``offset``,
  ``numberio``, ``crc``);
* ``fio: verify type mismatch (M media, G given)`` — the block's header names another
  ``verify=`` type than the job checks (fio-3.33 prints it after the failed block's line), so
  the job file, not the storage, may be the cause; the note says so.

Pure module.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterable
from dataclasses import dataclass

from kubectl_storage.core.fio.notes import NOTE_VERIFY_FAILED, FioNote
from kubectl_storage.core.report.findings import Severity

#: The error number fio reports for a verify failure (EILSEQ on Linux).
VERIFY_ERRNO = errno.EILSEQ

_AT = re.compile(r"\s+at file (?P<file>.+?) offset (?P<offset>\d+), length (?P<length>\d+)")
_TYPE_MISMATCH = re.compile(r"fio: verify type mismatch \([^)]*\)")
_FIX = (
    "the data read back is not what was written: first check that this job (its verify=, bs= "
    "and offsets) wrote the file it verified, since a file another job or run wrote fails too; "
    "otherwise the storage returned other data than it acknowledged: keep the volume (--keep), "
    "read the block at that offset, and check the node's kernel log (dmesg) and the storage's "
    "own logs for I/O errors"
)


@dataclass(frozen=True)
class VerifyFailure:
    """One block fio's verify found different from what was written.

    Attributes:
        check: what failed, as fio says it (``crc32c: verify failed``,
            ``verify: bad magic header e761, wanted acca``).
        file: the file (or device) fio read, ``None`` when fio did not say.
        offset: the block's byte offset in it, ``None`` when fio did not say.
        length: the block's length in bytes, ``None`` when fio did not say.
    """

    check: str
    file: str | None = None
    offset: int | None = None
    length: int | None = None

    def where(self) -> str:
        """``at file F offset O, length L`` or nothing when fio did not say."""
        if self.file is None:
            return ""
        return f" at file {self.file} offset {self.offset}, length {self.length}"


def verify_failures(text: str) -> list[VerifyFailure]:
    """The verify failures fio printed in ``text`` (its stderr, or text around its JSON)."""
    failures: list[VerifyFailure] = []
    for line in text.splitlines():
        stripped = line.strip()
        match = _AT.search(stripped)
        if match and "verify" in stripped[: match.start()]:
            failures.append(
                VerifyFailure(
                    stripped[: match.start()].strip(),
                    match["file"],
                    int(match["offset"]),
                    int(match["length"]),
                )
            )
        elif mismatch := _TYPE_MISMATCH.search(stripped):
            failures.append(VerifyFailure(mismatch.group(0)))
    return failures


def verify_note(
    job: str | None, failures: Iterable[VerifyFailure], *, filename: str | None = None
) -> FioNote:
    """``fio.verify-failed``: the job's data came back corrupted, with where when fio said.

    Args:
        job: the job's name, ``None`` when only fio's text is known.
        failures: what fio printed (:func:`verify_failures`).
        filename: the job's ``filename``; when given, only the failures in that file are the
            job's (fio prints every job's on one stderr).
    """
    found = list(failures)
    blocks = [failure for failure in found if failure.file is not None]
    if filename:
        blocks = [f for f in blocks if f.file and f.file.rsplit("/", 1)[-1] == filename] or blocks
    who = f"job {job}: " if job else ""
    where = ""
    if blocks:
        first = blocks[0]
        more = f" (and {len(blocks) - 1} more blocks)" if len(blocks) > 1 else ""
        where = f"; fio printed: {first.check}{first.where()}{more}"
    mismatch = next((failure.check for failure in found if failure.file is None), None)
    if mismatch:
        where += (
            f"; fio also printed '{mismatch}': the blocks carry another verify type than the "
            "job checks, so the job file (verify=) may be the cause rather than the storage"
        )
    return FioNote(
        NOTE_VERIFY_FAILED,
        Severity.ERROR,
        f"{who}fio's verify found data corruption: a block read back differs from what was "
        f"written (fio reports this as error {VERIFY_ERRNO}, EILSEQ){where}",
        _FIX,
        job,
        f"{job or 'fio'}: data corruption found by fio's verify",
    )
