"""Checking a fio job file without fio: the findings ``--job-file`` gets before anything runs.

Separate from the reader (:mod:`kubectl_storage.core.fio.job_file`) because these are judgements
about a parsed file, reported as findings. Real validation with ``fio --parse-only`` happens
elsewhere, where fio is available.

Pure module.
"""

from __future__ import annotations

from collections.abc import Callable

from kubectl_storage.core.fio.job_file import FioJobSection, parse_job_file
from kubectl_storage.core.fio.job_sizes import FioJobError, kb_base_of, parse_fio_size
from kubectl_storage.core.report.findings import Finding, Severity

#: ``rw=`` values fio 3.x accepts (``fio --cmdhelp=rw``).
VALID_RW_VALUES = frozenset(
    {
        "read",
        "write",
        "trim",
        "randread",
        "randwrite",
        "randtrim",
        "rw",
        "readwrite",
        "randrw",
        "trimwrite",
        "randtrimwrite",
    }
)


def validate_job_text(
    text: str, *, resolve_include: Callable[[str], str] | None = None
) -> tuple[Finding, ...]:
    """Check what can be checked in a job file without running fio.

    Errors: lines fio rejects (options outside a section, malformed or empty section headers),
    no job sections, an unknown ``rw=`` value, a size that is not a fio size, a job doing file
    I/O in a directory with neither ``size`` nor ``filesize`` (fio --parse-only accepts that,
    then fails at run time). Warnings: unresolved ``include`` lines and ``gtod_reduce``, which
    switches off every latency measurement.

    Args:
        text: the job file.
        resolve_include: as for :func:`~kubectl_storage.core.fio.job_file.parse_job_file`.

    Returns:
        Findings in file order; empty when nothing is wrong.
    """
    parsed = parse_job_file(text, resolve_include=resolve_include)
    findings: list[Finding] = [
        _finding(
            "fio-job.syntax",
            Severity.ERROR,
            f"line {line}: {message}",
            "put every option under a [global] or [job-name] section header",
        )
        for line, message in parsed.problems
    ]
    if not parsed.jobs:
        findings.append(
            _finding(
                "fio-job.no-jobs",
                Severity.ERROR,
                "the job file defines no jobs (only [global] or nothing)",
                "add at least one [job-name] section",
            )
        )
    for target in parsed.includes:
        findings.append(
            _finding(
                "fio-job.include",
                Severity.WARN,
                f"include {target!r} was not read, so its options are not checked or sized",
                "inline the included file into the job file",
            )
        )
    for job in parsed.jobs:
        findings.extend(_job_findings(job))
    return tuple(findings)


def _job_findings(job: FioJobSection) -> list[Finding]:
    found: list[Finding] = []
    where = f"job [{job.name}] (line {job.line})"
    rw = job.options.get("rw", job.options.get("readwrite"))
    if rw is not None:
        # rw may carry a sequence modifier such as "randread:8".
        base = rw.split(":", 1)[0].strip().lower()
        if base not in VALID_RW_VALUES:
            found.append(
                _finding(
                    "fio-job.rw",
                    Severity.ERROR,
                    f"{where}: rw={rw} is not a fio I/O pattern",
                    "use one of: " + ", ".join(sorted(VALID_RW_VALUES)),
                )
            )
    for key in ("size", "filesize"):
        if key in job.options:
            try:
                parse_fio_size(job.options[key], kb_base=kb_base_of(job.options.get("kb_base")))
            except FioJobError as exc:
                found.append(
                    _finding("fio-job.size", Severity.ERROR, f"{where}: {exc}", "write e.g. 2G")
                )
    uses_device = job.options.get("filename", "").startswith("/dev/")
    if "size" not in job.options and "filesize" not in job.options and not uses_device:
        found.append(
            _finding(
                "fio-job.missing-size",
                Severity.ERROR,
                f"{where}: no size or filesize, so fio cannot create its file in the directory",
                "add size=<bytes> (e.g. size=2G) to the job or to [global]",
            )
        )
    if job.options.get("gtod_reduce", "0") not in ("0", "false"):
        found.append(
            _finding(
                "fio-job.no-latency",
                Severity.WARN,
                f"{where}: gtod_reduce switches off latency measurement; no percentiles",
                "drop gtod_reduce to get p50/p99 completion latency",
            )
        )
    return found


def _finding(finding_id: str, severity: Severity, message: str, fix: str) -> Finding:
    return Finding(id=finding_id, severity=severity, message=message, fix=fix, source="fio")
