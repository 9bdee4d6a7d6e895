"""The fsync probe: how long an fdatasync takes on the database's own volume, and whether it can
be real.

etcd's storage guidance measures it this way: sequential 2300-byte writes, each followed by
fdatasync, 22 MiB in all, and wants the 99th percentile of the fdatasync latency under 10 ms.
The probe runs that job with fio in a container of the MySQL pod that mounts the same volume, so
it measures the device, filesystem and network path MySQL's commits go through.

A flush that returns faster than any device or network round trip could make data durable means
that something acknowledges before it persists: a volatile write cache, or memory-backed storage.
The floor is this project's heuristic, the same as the fio command's (``fio.cache-sync-latency``):
a small write to the fastest flash takes about 10 µs seen from an application, a network round
trip inside a data centre tens of µs over TCP and a few over RDMA; below 5 µs the write cannot
have left the host's memory. Measured here (fio-3.33, kernel 6.18): fdatasync p50 68 µs on ext4
on a virtio disk, 0.09 µs on tmpfs. Neither finding fails the persistence check: the check's
verdict is about the rows; the probe's warnings say how far a pass can be trusted.

Pure: the fio command line out, fio's JSON text in, a :class:`FsyncProbe` out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.validate_persistence.mysql import PROBE_DIR

#: etcd's guidance: fdatasync p99 under 10 ms.
ETCD_P99_LIMIT_US = 10_000.0
#: Below this median an fdatasync cannot have reached stable storage (see the module docstring).
FLUSH_FLOOR_US = 5.0
PROBE_FILE = f"{PROBE_DIR}/.kubectl-storage-fsync-probe"
BLOCK_BYTES = 2300
SIZE = "22m"


def probe_command() -> list[str]:
    """argv of the probe: etcd's fio job on the volume, JSON on stdout, the file removed after."""
    fio = (
        'fio --name=fsync-probe --filename="$1" --rw=write --ioengine=sync --fdatasync=1 '
        f"--bs={BLOCK_BYTES} --size={SIZE} --percentile_list=50:99:99.9 --output-format=json"
    )
    return ["sh", "-c", f'{fio}; rc=$?; rm -f "$1"; exit "$rc"', "sh", PROBE_FILE]


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

    @property
    def acknowledges_too_fast(self) -> bool:
        """The median fdatasync returned faster than any medium can persist (its first
        warning): a pass of the disruptions cannot vouch for a power loss."""
        return self.p50_us is not None and self.p50_us < FLUSH_FLOOR_US

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (stable key order)."""
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


def parse_probe(text: str) -> FsyncProbe:
    """Read fio's JSON output of :func:`probe_command` and judge it."""
    try:
        document = json.loads(_json_part(text))
    except json.JSONDecodeError:
        first = text.strip().splitlines()[0][:200] if text.strip() else "no output"
        return FsyncProbe(0, None, None, None, error=f"fio's output is not JSON: {first}")
    jobs = document.get("jobs") if isinstance(document, dict) else None
    if not isinstance(jobs, list) or not jobs or not isinstance(jobs[0], dict):
        return FsyncProbe(0, None, None, None, error="fio reported no job")
    job = jobs[0]
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
    warnings = []
    if p50 is not None and p50 < FLUSH_FLOOR_US:
        warnings.append(
            f"fdatasync returns in {p50:g} µs (median), faster than any device or network round "
            f"trip can make data durable (below {FLUSH_FLOOR_US:g} µs): something acknowledges "
            "before it persists (a volatile write cache, or memory-backed storage), so a power "
            "loss can lose commits this check saw survive"
        )
    if p99 is not None and p99 > ETCD_P99_LIMIT_US:
        warnings.append(
            f"fdatasync p99 {p99 / 1000:.1f} ms is above etcd's guidance of "
            f"{ETCD_P99_LIMIT_US / 1000:g} ms: every commit waits at least this long"
        )
    return FsyncProbe(syncs, p50, p99, _us(lat.get("max")), tuple(warnings), fio_version=version)


def probe_failed(message: str) -> FsyncProbe:
    """A probe that could not run (the container is missing, exec failed)."""
    return FsyncProbe(0, None, None, None, error=message)
