"""Errors from the environment: fio's error numbers and messages read as notes with a fix.

Separate from the guards on measurements (:mod:`kubectl_storage.core.fio.guards`): these say
that fio failed because of the node or the volume (libaio's ``fs.aio-max-nr``, ENOSPC, EROFS),
from the JSON's error numbers or from fio's own lines around it. Every error number fio reports
for a job is read here, so a verify failure (84) is sent on to
:mod:`kubectl_storage.core.fio.verify_failure` from here too.

Pure module.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping

from kubectl_storage.core.fio.notes import (
    NOTE_AIO_LIMIT,
    NOTE_JOB_ERROR,
    NOTE_NO_SPACE,
    NOTE_READ_ONLY,
    FioNote,
    dedupe,
)
from kubectl_storage.core.fio.results import FioJobResult
from kubectl_storage.core.fio.verify_failure import (
    VERIFY_ERRNO,
    verify_failures,
    verify_note,
)
from kubectl_storage.core.report.findings import Severity

_AIO_FIX = (
    "on the node, compare /proc/sys/fs/aio-nr with /proc/sys/fs/aio-max-nr and raise the limit "
    "(sysctl -w fs.aio-max-nr=1048576, kept in /etc/sysctl.d/), or lower iodepth times numjobs, "
    "or use ioengine=psync"
)
_NO_SPACE_FIX = (
    "give the volume more room (-z/--size) or the job a smaller size=: each job without "
    "filename= lays out its own file (numjobs clones too), and ext4 keeps 5% for root"
)
_READ_ONLY_FIX = (
    "check that the PVC is not mounted readOnly and that its access mode allows writes; a "
    "filesystem that hit errors is remounted read-only, so read the node's kernel log (dmesg)"
)


def error_note(
    number: int,
    *,
    job: str | None = None,
    ioengine: str = "",
    fio_text: str = "",
    filename: str | None = None,
) -> FioNote:
    """The note for an error number fio reported (a job's ``error`` in the JSON).

    errno 11 (EAGAIN) is read as libaio's ``io_queue_init`` failing only when the job used
    ``ioengine=libaio``, the one place fio gets EAGAIN before doing any I/O. errno 84 (EILSEQ)
    is fio's verify failure; where it happened is read from fio's text.

    Args:
        number: the errno (Linux numbering, as fio in the pod reports it).
        job: the job's name.
        ioengine: the job's ``ioengine``.
        fio_text: what fio printed besides its JSON (stderr, lines around the JSON).
        filename: the job's ``filename``, to tell its verify failures from other jobs'.

    Returns:
        The environment note for EAGAIN/libaio, ENOSPC and EROFS, ``fio.verify-failed`` for
        84, else ``fio.job-error``.
    """
    who = f"job {job}: " if job else ""
    if number == VERIFY_ERRNO:
        return verify_note(job, verify_failures(fio_text), filename=filename)
    if number == errno.EAGAIN and ioengine.strip() == "libaio":
        return _aio_note(job, f"{who}libaio could not set up its I/O queue (error 11, EAGAIN)")
    if number == errno.ENOSPC:
        return _no_space_note(job, f"{who}the volume ran out of space (error 28, ENOSPC)")
    if number == errno.EROFS:
        return _read_only_note(job, f"{who}the volume is read-only (error 30, EROFS)")
    name = errno.errorcode.get(number, "unknown")
    return FioNote(
        NOTE_JOB_ERROR,
        Severity.ERROR,
        f"{who}fio reported error {number} ({name}: {os.strerror(number)})",
        "run with --keep and read fio's output in the pod",
        job,
        f"{job or 'fio'}: error {number} ({name})",
    )


def job_error_note(job: FioJobResult, options: Mapping[str, str], fio_text: str = "") -> FioNote:
    """:func:`error_note` for a job fio reported an error for, with its options (global and
    its own) and what fio printed besides its JSON."""
    return error_note(
        job.error,
        job=job.name,
        ioengine=options.get("ioengine", ""),
        fio_text=fio_text,
        filename=options.get("filename"),
    )


def error_summary(number: int) -> str:
    """A few words for an error number fio reported, for a summary line: ``error 28, ENOSPC``.

    The number is Linux's errno as fio reports it in a job's ``error``."""
    if number == VERIFY_ERRNO:
        return f"data corruption found by fio's verify, error {number}"
    name = errno.errorcode.get(number)
    return f"error {number}, {name}" if name else f"error {number}"


def _aio_note(job: str | None, what: str) -> FioNote:
    return FioNote(
        NOTE_AIO_LIMIT,
        Severity.ERROR,
        f"{what}: io_queue_init got EAGAIN because the node's AIO event limit fs.aio-max-nr "
        "is used up or smaller than the queue asked for (kastenhq/kubestr#309); the storage "
        "was not measured",
        _AIO_FIX,
        job,
        "fs.aio-max-nr exhausted on the node (io_queue_init EAGAIN)",
    )


def _no_space_note(job: str | None, what: str) -> FioNote:
    return FioNote(NOTE_NO_SPACE, Severity.ERROR, what, _NO_SPACE_FIX, job, "volume full (ENOSPC)")


def _read_only_note(job: str | None, what: str) -> FioNote:
    return FioNote(
        NOTE_READ_ONLY, Severity.ERROR, what, _READ_ONLY_FIX, job, "volume read-only (EROFS)"
    )


# fio-3.33: "fio: pid=11254, err=11/file:engines/libaio.c:485, func=io_queue_init,
# error=Resource temporarily unavailable"
_VERROR = re.compile(r"err=\s*(?P<number>\d+)/[^,]*,\s*func=(?P<func>[^,]+),\s*error=(?P<text>.*)")


def text_notes(text: str) -> list[FioNote]:
    """Environment notes from fio's own messages (its stderr, or text around its JSON).

    Recognised: ``func=io_queue_init`` with ``err=11`` (and fio 2.x's ``fio: check
    /proc/sys/fs/aio-max-nr``), ``No space left on device`` / ``err=28``,
    ``Read-only file system`` / ``err=30``, and a verify failure (``err=84`` or fio's verify
    lines). fio's lines name a pid, not a job, so these notes have no ``job``.

    Args:
        text: fio's stderr, or :attr:`FioResult.surrounding_text`.

    Returns:
        At most one note per kind, in the order first seen.
    """
    notes: list[FioNote] = []
    verify_failed = False
    for line in text.splitlines():
        match = _VERROR.search(line)
        number = int(match["number"]) if match else None
        func = match["func"].strip() if match else ""
        if (number == errno.EAGAIN and func == "io_queue_init") or "aio-max-nr" in line:
            notes.append(_aio_note(None, f"libaio could not set up its I/O queue: {line.strip()}"))
        elif number == errno.ENOSPC or "No space left on device" in line:
            notes.append(_no_space_note(None, f"the volume ran out of space: {line.strip()}"))
        elif number == errno.EROFS or "Read-only file system" in line:
            notes.append(_read_only_note(None, f"the volume is read-only: {line.strip()}"))
        elif number == VERIFY_ERRNO:
            verify_failed = True
    failures = verify_failures(text)
    if failures or verify_failed:
        notes.append(verify_note(None, failures))
    return dedupe(notes)
