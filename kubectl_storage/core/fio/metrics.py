"""Which fio metrics are compared, and which way is better for each.

Direction of "better": IOPS and bandwidth are better higher, latencies better lower. Separate
so the comparison between classes (:mod:`kubectl_storage.core.fio.class_comparison`) and the
one against a baseline (:mod:`kubectl_storage.core.fio.baseline`) share one definition.

Pure module.
"""

from __future__ import annotations

from kubectl_storage.core.fio.results import CONTRACT_DIRECTIONS, DIRECTION_METRICS, SYNC_METRICS

#: Per-direction metrics that are measurements worth averaging and comparing (``io_bytes`` and
#: ``runtime_ms`` only describe how long the run was).
_MEASURED = tuple(m for m in DIRECTION_METRICS if m not in ("io_bytes", "runtime_ms"))
_HIGHER_IS_BETTER = frozenset({"iops", "bw_kib_s"})

#: Full metric keys (``read_iops`` …) compared across classes and against a baseline: every
#: measured per-direction value, then the sync (fsync/fdatasync) latencies.
COMPARED_METRICS: tuple[str, ...] = tuple(
    f"{direction}_{metric}" for direction in CONTRACT_DIRECTIONS for metric in _MEASURED
) + tuple(f"sync_{metric}" for metric in SYNC_METRICS if metric != "total_ios")


def higher_is_better(metric_key: str) -> bool:
    """Whether a bigger value of ``metric_key`` (``read_iops``, ``write_clat_p99_us``) is better."""
    return metric_key.split("_", 1)[1] in _HIGHER_IS_BETTER
