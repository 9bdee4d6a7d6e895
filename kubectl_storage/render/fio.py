"""Table form of the FioReport: one table per class, a verdict line, comparison and baseline."""

from __future__ import annotations

from typing import Any, TextIO

from kubectl_storage.core.fio.stats import compare_classes
from kubectl_storage.render.tables import write_table


def _num(
    value: float | None, stddev: float | None = None, scale: float = 1.0, digits: int = 0
) -> str:
    if value is None:
        return "-"
    text = f"{value / scale:,.{digits}f}"
    if stddev is not None:
        text += f" ±{stddev / scale:,.{digits}f}"
    return text


#: What the comparison table shows (the JSON report keeps every metric).
TABLE_COMPARED_METRICS = (
    "read_iops",
    "write_iops",
    "read_bw_kib_s",
    "write_bw_kib_s",
    "read_clat_p99_us",
    "write_clat_p99_us",
)
_METRIC_LABELS = {
    "read_iops": "read IOPS",
    "write_iops": "write IOPS",
    "read_bw_kib_s": "read MiB/s",
    "write_bw_kib_s": "write MiB/s",
    "read_clat_p99_us": "read p99 latency",
    "write_clat_p99_us": "write p99 latency",
}


def _metric_text(metric: str, mean: float | None, stddev: float | None) -> str:
    if mean is None:
        return "-"
    if metric.endswith("_us"):
        text = _fmt_lat(mean)
        return text + (f" ±{_fmt_lat(stddev)}" if stddev is not None else "")
    if metric.endswith("_kib_s"):
        return _num(mean, stddev, 1024, 1)
    return _num(mean, stddev)


def _fmt_lat(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value / 1000:.2f}ms" if value >= 1000 else f"{value:.0f}µs"


def _did(job: dict[str, Any], side: str) -> bool:
    return bool(job.get(f"{side}_iops"))


def class_verdict(storage_class: str, jobs: list[dict[str, Any]]) -> str:
    """One line a person can quote: peaks, best tail latency, fio errors."""

    def measured(key: str) -> list[float]:
        return [float(j[key]) for j in jobs if j.get(key)]

    def peak(key: str) -> float | None:
        return max(measured(key), default=None)

    def lowest(key: str) -> float | None:
        return min(measured(key), default=None)

    parts = []
    for side in ("read", "write"):
        iops, bw = peak(f"{side}_iops"), peak(f"{side}_bw_kib_s")
        if iops:
            parts.append(f"peak {side} {iops:,.0f} IOPS, {bw / 1024 if bw else 0:,.1f} MiB/s")
    for side in ("read", "write"):
        p99 = lowest(f"{side}_clat_p99_us")
        if p99:
            parts.append(f"best {side} p99 {_fmt_lat(p99)}")
    errors = [j["name"] for j in jobs if j.get("error")]
    parts.append(f"fio errors in {', '.join(errors)}" if errors else "no fio errors")
    return f"{storage_class}: " + "; ".join(parts)


def _write_trust(result: dict[str, Any], out: TextIO) -> None:
    """The class's confidence line, then each guard note (what may make the numbers lie)."""
    confidence = result.get("confidence")
    if confidence:
        out.write(f"confidence: {confidence}\n")
    etcd = result.get("etcd")
    if etcd:
        p99 = _fmt_lat(etcd.get("fdatasync_p99_us"))
        out.write(
            f"etcd: {etcd.get('verdict', 'unknown').upper()} (fdatasync p99 {p99}, "
            f"guidance {_fmt_lat(etcd.get('limit_us'))})\n"
        )
    for note in result.get("notes") or []:
        job = f" {note['job']}" if note.get("job") else ""
        out.write(f"  {str(note.get('severity', 'info')).upper():5} {note.get('id')}{job}: ")
        out.write(f"{note.get('message')}\n")
        if note.get("fix"):
            out.write(f"        fix: {note['fix']}\n")


def write_fio_table(report: dict[str, Any], out: TextIO, wide: bool = False) -> None:
    """Per-class tables, verdicts, a comparison across classes, and the baseline check."""
    header = f"profile {report.get('profile')}, fio {report.get('fio_version')}"
    if report.get("size"):
        header += f", volume {report['size']}"
    if report.get("repeats", 1) > 1:
        header += f", mean ± stddev of {report['repeats']} runs"
    for result in report.get("results") or []:
        jobs = result.get("jobs") or []
        rows = []
        for job in jobs:
            row = [job.get("name")]
            for side in ("read", "write"):
                if _did(job, side):
                    row += [
                        _num(job.get(f"{side}_iops"), job.get(f"{side}_iops_stddev")),
                        _num(
                            job.get(f"{side}_bw_kib_s"), job.get(f"{side}_bw_kib_s_stddev"), 1024, 1
                        ),
                        _fmt_lat(job.get(f"{side}_clat_mean_us")),
                        _fmt_lat(job.get(f"{side}_clat_p99_us")),
                    ]
                    if wide:
                        row += [
                            _fmt_lat(job.get(f"{side}_clat_p50_us")),
                            _fmt_lat(job.get(f"{side}_clat_p95_us")),
                            _fmt_lat(job.get(f"{side}_clat_p99_9_us")),
                        ]
                else:
                    row += ["-"] * (7 if wide else 4)
            rows.append(row)
        headers = ["job"]
        for side in ("read", "write"):
            headers += [f"{side} iops", f"{side} MiB/s", f"{side} lat mean", f"{side} lat p99"]
            if wide:
                headers += [f"{side} p50", f"{side} p95", f"{side} p99.9"]
        write_table(
            rows, headers, out, title=f"StorageClass {result.get('storage_class')} ({header})"
        )
        out.write(class_verdict(str(result.get("storage_class")), jobs) + "\n")
        _write_trust(result, out)
        out.write("\n")

    if len(report.get("results") or []) > 1:
        comparison = []
        for crow in compare_classes(report, metrics=TABLE_COMPARED_METRICS):
            cells = [crow.job, _METRIC_LABELS[crow.metric]]
            cells += [_metric_text(crow.metric, v.mean, v.stddev) for v in crow.values]
            cells.append(crow.best_class or "-")
            comparison.append(cells)
        classes = [str(r.get("storage_class")) for r in report["results"]]
        write_table(comparison, ["job", "metric", *classes, "best"], out, title="Comparison")
        out.write("\n")

    baseline = report.get("baseline")
    if baseline:
        regressions = [d for d in baseline.get("deltas", []) if d.get("regressed")]
        out.write(
            f"Baseline: {baseline.get('verdict')} (max regression "
            f"{baseline.get('max_regression_percent')}%)\n"
        )
        for delta in regressions:
            out.write(
                f"  {delta.get('storage_class')}/{delta.get('job')} {delta.get('metric')}: "
                f"{_metric_text(delta['metric'], delta.get('baseline'), None)} -> "
                f"{_metric_text(delta['metric'], delta.get('current'), None)} "
                f"({delta.get('change_percent') or 0:+.1f}%)\n"
            )
