"""The fsync probe: how long an fdatasync takes on the database's own volume, and whether it can
be real.

etcd's storage guidance measures it this way: sequential 2300-byte writes, each followed by
fdatasync, 22 MiB in all, and wants the 99th percentile of the fdatasync latency under 10 ms.
The probe runs that job with fio in a container of the MySQL pod that mounts the same volume, so
it measures the device, filesystem and network path MySQL's commits go through.

A second job beside it writes 4 KiB blocks with direct I/O, each followed by fdatasync: its
write latency is the device's, not the page cache's, and its fdatasync has only the flush to do.
What the flush measured is classified in :mod:`kubectl_storage.core.flush.timing`, shared with
the fio command's ``fio.cache-sync-latency`` guard: memory-backed only when the direct writes
themselves complete at memory speed (then a power loss can lose commits this check saw
survive: a warning, which turns a pass into warn); "acknowledged without a flush" when direct
writes take device time but fdatasync returns at once (a power-loss-protected cache, or a cache
that lies: only a power-loss test can tell, unverified, not a warning); otherwise flushed to a
durable medium as far as timing can tell. When the direct job cannot run (O_DIRECT refused),
etcd's buffered job is classified alone. Measured here (fio-3.33, kernel 6.18): see
tests/fixtures/validate_persistence/SOURCES.md. The check's verdict is about the rows; the
probe says how far a pass can be trusted.

Pure: the fio command line out, fio's JSON text in, a :class:`FsyncProbe` out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.flush.timing import FLUSH_FLOOR_US as FLUSH_FLOOR
from kubectl_storage.core.flush.timing import FlushReading, classify_flush
from kubectl_storage.core.validate_persistence.mysql import PROBE_DIR

#: etcd's guidance: fdatasync p99 under 10 ms.
ETCD_P99_LIMIT_US = 10_000.0
#: Below this median a flush (or a direct write) cannot have left the host's memory; the
#: number and its source are in core.flush.
FLUSH_FLOOR_US = FLUSH_FLOOR
PROBE_FILE = f"{PROBE_DIR}/.kubectl-storage-fsync-probe"
BLOCK_BYTES = 2300
SIZE = "22m"
#: The etcd job's name in fio's report, and the direct-write job's.
ETCD_JOB = "fsync-probe"
DIRECT_JOB = "direct-flush"
#: The direct job: 4 KiB (the page size, which O_DIRECT accepts on every file system that
#: supports it) sequential writes, fdatasync after each; 512 of them, enough for a median.
#: ``overwrite=1`` makes fio lay the file out first, so the writes change no block allocation
#: or file size and an fdatasync has only the flush to do: without it, on ext4 on a loop device
#: in write-through mode, each fdatasync committed the journal (p50 36.6 µs, measured here).
DIRECT_BLOCK = "4k"
DIRECT_SIZE = "2m"


def probe_command() -> list[str]:
    """argv of the probe: etcd's fio job on the volume, then (stonewalled) the direct-write
    job, JSON on stdout, both files removed after."""
    fio = (
        f'fio --output-format=json --name={ETCD_JOB} --filename="$1" --rw=write '
        f"--ioengine=sync --fdatasync=1 --bs={BLOCK_BYTES} --size={SIZE} "
        "--percentile_list=50:99:99.9 "
        f'--name={DIRECT_JOB} --stonewall --filename="$1.direct" --rw=write --ioengine=sync '
        f"--direct=1 --overwrite=1 --fdatasync=1 --bs={DIRECT_BLOCK} --size={DIRECT_SIZE} "
        "--percentile_list=50:99:99.9"
    )
    return ["sh", "-c", f'{fio}; rc=$?; rm -f "$1" "$1.direct"; exit "$rc"', "sh", PROBE_FILE]


@dataclass(frozen=True)
class FsyncProbe:
    """What the probe measured, and what it warns about."""

    #: fdatasync calls measured (fio's sync ``lat_ns.N``; its ``total_ios`` stays 0 in 3.33).
    syncs: int
    p50_us: float | None
    p99_us: float | None
    max_us: float | None
    warnings: tuple[str, ...] = ()
    #: Why there are no figures (fio failed, the output was not JSON); '' when there are.
    error: str = ""
    fio_version: str = ""
    #: What the flush measured (core.flush); None without figures.
    flush: FlushReading | None = None
    #: The direct-write job: median write and fdatasync latency (µs), or why it has none.
    direct_write_p50_us: float | None = None
    direct_fdatasync_p50_us: float | None = None
    direct_error: str = ""

    @property
    def acknowledges_too_fast(self) -> bool:
        """The probe found the volume memory-backed (its first warning): a power loss can lose
        commits the disruptions saw survive, so a pass is only a warn. "Acknowledged without a
        flush" is not this: a power-loss-protected device looks the same."""
        return self.flush is not None and self.flush.warns

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (stable key order; the flush classification's keys come last)."""
        flush = self.flush
        return {
            "block_bytes": BLOCK_BYTES,
            "syncs": self.syncs,
            "fdatasync_p50_us": self.p50_us,
            "fdatasync_p99_us": self.p99_us,
            "fdatasync_max_us": self.max_us,
            "etcd_p99_limit_us": ETCD_P99_LIMIT_US,
            "warnings": list(self.warnings),
            "error": self.error,
            "fio_version": self.fio_version,
            "flush_class": flush.kind.value if flush else None,
            "flush_explanation": flush.explanation() if flush else None,
            "direct_write_p50_us": self.direct_write_p50_us,
            "direct_fdatasync_p50_us": self.direct_fdatasync_p50_us,
            "direct_error": self.direct_error,
        }


def _us(value: Any) -> float | None:
    return round(float(value) / 1000.0, 2) if isinstance(value, int | float) else None


def _percentile(percentiles: Any, wanted: float) -> float | None:
    if not isinstance(percentiles, dict):
        return None
    for key, value in percentiles.items():
        try:
            if abs(float(key) - wanted) < 1e-6:
                return _us(value)
        except ValueError:
            continue
    return None


def _json_part(text: str) -> str:
    # fio may print error lines before its JSON document (seen with fio-3.33 on stdout).
    start = text.find("{")
    return text[start:] if start >= 0 else text


def _job(jobs: list[Any], name: str) -> dict[str, Any] | None:
    for job in jobs:
        if isinstance(job, dict) and job.get("jobname") == name:
            return job
    return None


def _median(block: Any) -> float | None:
    block = block if isinstance(block, dict) else {}
    return _percentile(block.get("percentile"), 50.0)


def _direct(job: dict[str, Any] | None) -> tuple[float | None, float | None, str]:
    """The direct job's median write and fdatasync latency (µs), or why there are none."""
    if job is None:
        return None, None, "not run"
    if job.get("error"):
        # EINVAL (22) when the file system refuses O_DIRECT.
        return None, None, f"fio failed with error {job['error']}"
    write = _median((job.get("write") or {}).get("clat_ns"))
    sync = _median((job.get("sync") or {}).get("lat_ns"))
    if write is None or sync is None:
        return None, None, "fio measured no direct write or fdatasync"
    return write, sync, ""


def parse_probe(text: str) -> FsyncProbe:
    """Read fio's JSON output of :func:`probe_command` and judge it.

    The etcd job is found by name (a bare etcd job's output, as before the direct job was
    added, is read too: its first job); the direct job is optional.
    """
    try:
        document = json.loads(_json_part(text))
    except json.JSONDecodeError:
        first = text.strip().splitlines()[0][:200] if text.strip() else "no output"
        return FsyncProbe(0, None, None, None, error=f"fio's output is not JSON: {first}")
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(jobs, list) or not jobs or not isinstance(jobs[0], dict):
        return FsyncProbe(0, None, None, None, error="fio reported no job")
    job = _job(jobs, ETCD_JOB) or jobs[0]
    version = str(document.get("fio version") or "")
    if job.get("error"):
        return FsyncProbe(
            0, None, None, None, error=f"fio failed with error {job['error']}", fio_version=version
        )
    lat = (job.get("sync") or {}).get("lat_ns") or {}
    syncs = int(lat.get("N") or 0)
    if not syncs:
        return FsyncProbe(
            0, None, None, None, error="fio measured no fdatasync", fio_version=version
        )
    p50 = _percentile(lat.get("percentile"), 50.0)
    p99 = _percentile(lat.get("percentile"), 99.0)
    direct_write, direct_sync, direct_error = _direct(_job(jobs, DIRECT_JOB))
    if direct_sync is not None:
        flush = classify_flush(sync_us=direct_sync, write_us=direct_write, writes_direct=True)
    else:
        flush = classify_flush(sync_us=p50, write_us=None, writes_direct=False)
    warnings = []
    if flush is not None and flush.warns:
        warnings.append(f"{flush.explanation()}; this check's pass cannot vouch for a power loss")
    if p99 is not None and p99 > ETCD_P99_LIMIT_US:
        warnings.append(
            f"fdatasync p99 {p99 / 1000:.1f} ms is above etcd's guidance of "
            f"{ETCD_P99_LIMIT_US / 1000:g} ms: every commit waits at least this long"
        )
    return FsyncProbe(
        syncs,
        p50,
        p99,
        _us(lat.get("max")),
        tuple(warnings),
        fio_version=version,
        flush=flush,
        direct_write_p50_us=direct_write,
        direct_fdatasync_p50_us=direct_sync,
        direct_error=direct_error,
    )


def probe_failed(message: str) -> FsyncProbe:
    """A probe that could not run (the container is missing, exec failed)."""
    return FsyncProbe(0, None, None, None, error=message)
