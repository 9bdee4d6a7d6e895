"""Table form of the FioReport: one table per class, a verdict line, comparison and baseline.

Every latency column is fio's **completion latency** (``clat``), and its headers say so
(``READ CLAT MEAN``, ``READ CLAT P99``): fio's HOWTO ("Interpreting the output") defines clat
as the time from submission to completion of an I/O, and ``lat`` as the total, submission
(``slat``) plus completion. The percentiles fio reports by default are clat's; the JSON report
keeps the mean total latency as ``<dir>_lat_mean_us``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from kubectl_storage.core.fio.class_comparison import compare_classes
from kubectl_storage.core.fio.peaks import DirectionPeaks, class_peaks
from kubectl_storage.core.fio.report import FioClassResult, FioReport
from kubectl_storage.core.fio.report_extra_runs import LatencyProbe, LocalDiskResult
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.setup import TargetSetup
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
    "read_clat_p99_us": "read clat p99",
    "write_clat_p99_us": "write clat p99",
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


def class_verdict(storage_class: str, jobs: Sequence[FioJobSummary]) -> str:
    """One line a person can quote: each direction's peaks and best completion-latency p99,
    each with the job it comes from, over the jobs without error; then the failed jobs."""
    peaks = class_peaks(jobs)
    parts = [_peak_text(direction) for direction in peaks.directions]
    parts += [
        f"best {d.direction} clat p99 {_fmt_lat(d.best_clat_p99_us.value)} "
        f"({d.best_clat_p99_us.job})"
        for d in peaks.directions
        if d.best_clat_p99_us is not None
    ]
    if peaks.failed and not peaks.directions:
        parts.append("no peak (every job failed)")
    parts += [
        f"job {job.name} failed ({job.summary}), its numbers left out" for job in peaks.failed
    ]
    if not peaks.failed:
        parts.append("no fio errors")
    return f"{storage_class}: " + "; ".join(parts)


def _peak_text(peaks: DirectionPeaks) -> str:
    """``peak read N IOPS, M MiB/s (job)``, or each number with its own job when two jobs hold
    them (never two jobs' numbers as one pair)."""
    iops = f"{peaks.iops.value:,.0f} IOPS"
    bw = peaks.bw_kib_s
    if bw is None:
        return f"peak {peaks.direction} {iops} ({peaks.iops.job})"
    mib = f"{bw.value / 1024:,.1f} MiB/s"
    if bw.job == peaks.iops.job:
        return f"peak {peaks.direction} {iops}, {mib} ({bw.job})"
    return f"peak {peaks.direction} {iops} ({peaks.iops.job}), {mib} ({bw.job})"


def _write_trust(result: FioClassResult, out: TextIO) -> None:
    """The class's confidence line, then each guard note (what may make the numbers lie)."""
    if result.confidence:
        out.write(f"confidence: {result.confidence}\n")
    etcd = result.etcd
    if etcd is not None:
        out.write(
            f"etcd: {etcd.verdict.upper()} (fdatasync p99 {_fmt_lat(etcd.fdatasync_p99_us)}, "
            f"guidance {_fmt_lat(etcd.limit_us)})\n"
        )
    for note in result.notes:
        job = f" {note.job}" if note.job else ""
        out.write(f"  {note.severity.value.upper():5} {note.id}{job}: {note.message}\n")
        if note.fix:
            out.write(f"        fix: {note.fix}\n")


def shown_directions(jobs: Sequence[FioJobSummary]) -> tuple[str, ...]:
    """The directions a class's table has columns for: read and write, and ``mixed`` when a
    job reported fio's unified numbers (``unified_rw_reporting``: with ``1`` fio reports only
    ``mixed``, with ``both`` reads, writes and their sum)."""
    mixed = any(job.did("mixed") for job in jobs)
    return ("read", "write", "mixed") if mixed else ("read", "write")


def _job_row(job: FioJobSummary, wide: bool, directions: Sequence[str]) -> list[str]:
    row = [job.name]
    for side in directions:
        if not job.did(side):
            row += ["-"] * (7 if wide else 4)
            continue
        row += [
            _num(job.value(f"{side}_iops"), job.stddev(f"{side}_iops")),
            _num(job.value(f"{side}_bw_kib_s"), job.stddev(f"{side}_bw_kib_s"), 1024, 1),
            _fmt_lat(job.value(f"{side}_clat_mean_us")),
            _fmt_lat(job.value(f"{side}_clat_p99_us")),
        ]
        if wide:
            row += [
                _fmt_lat(job.value(f"{side}_clat_p50_us")),
                _fmt_lat(job.value(f"{side}_clat_p95_us")),
                _fmt_lat(job.value(f"{side}_clat_p99_9_us")),
            ]
    return row


def _headers(wide: bool, directions: Sequence[str]) -> list[str]:
    headers = ["job"]
    for side in directions:
        headers += [f"{side} iops", f"{side} MiB/s", f"{side} clat mean", f"{side} clat p99"]
        if wide:
            headers += [f"{side} clat p50", f"{side} clat p95", f"{side} clat p99.9"]
    return headers


def write_fio_table(report: FioReport, out: TextIO, wide: bool = False) -> None:
    """Per-class tables, verdicts, a comparison across classes, and the baseline check."""
    header = f"profile {report.profile}, fio {_version_text(report.fio_version)}"
    if report.context.get("size"):
        header += f", volume {report.context['size']}"
    clients = report.context.get("clients")
    if isinstance(clients, int) and clients > 1:
        one = " on one volume" if report.context.get("shared_volume") else ""
        header += f", {clients} clients at once{one}"
    if report.repeats > 1:
        header += f", mean ± stddev of {report.repeats} runs"
    for result in report.results:
        directions = shown_directions(result.jobs)
        headers = _headers(wide, directions)
        rows = [_job_row(job, wide, directions) for job in result.jobs]
        write_table(rows, headers, out, title=f"StorageClass {result.storage_class} ({header})")
        out.write(class_verdict(result.storage_class, result.jobs) + "\n")
        if result.setup is not None:
            out.write(setup_line(result.setup) + "\n")
        _write_trust(result, out)
        if result.clients:
            _write_clients(result, out)
        if result.local_disk is not None and result.local_disk.jobs:
            _write_local_disk(result.jobs, result.local_disk, out)
        out.write("\n")

    if len(report.results) > 1:
        comparison = []
        for crow in compare_classes(report, metrics=TABLE_COMPARED_METRICS):
            cells = [crow.job, _METRIC_LABELS[crow.metric]]
            cells += [_metric_text(crow.metric, v.mean, v.stddev) for v in crow.values]
            cells.append(crow.best_class or "-")
            comparison.append(cells)
        classes = [result.storage_class for result in report.results]
        write_table(comparison, ["job", "metric", *classes, "best"], out, title="Comparison")
        out.write("\n")

    baseline = report.baseline
    if baseline is not None:
        out.write(
            f"Baseline: {baseline.verdict} (max regression {baseline.max_regression_percent}%)\n"
        )
        for storage_class, lines in baseline.setup_differences.items():
            out.write(f"  setup of {storage_class} differs from the baseline's:\n")
            out.writelines(f"    {line}\n" for line in lines)
        for delta in baseline.regressions:
            out.write(
                f"  {delta.storage_class}/{delta.job} {delta.metric}: "
                f"{_metric_text(delta.metric, delta.baseline, None)} -> "
                f"{_metric_text(delta.metric, delta.current, None)} "
                f"({delta.change_percent or 0:+.1f}%)\n"
            )


def setup_line(setup: TargetSetup) -> str:
    """One line of what the numbers were measured on."""
    parts = [f"provisioner {setup.provisioner or '-'}"]
    if setup.parameters:
        parts.append(
            "parameters " + ", ".join(f"{k}={v}" for k, v in sorted(setup.parameters.items()))
        )
    if setup.volume is not None:
        parts.append(f"{setup.volume.fs_type} ({','.join(setup.volume.options)})")
    kernels = sorted({node.kernel for node in setup.nodes if node.kernel})
    types = sorted({node.instance_type for node in setup.nodes if node.instance_type})
    if setup.nodes:
        nodes = f"{len(setup.nodes)} node" + ("s" if len(setup.nodes) > 1 else "")
        if kernels:
            nodes += f", kernel {', '.join(kernels)}"
        if types:
            nodes += f", {', '.join(types)}"
        parts.append(nodes)
    return "setup: " + "; ".join(parts)


def _write_clients(result: FioClassResult, out: TextIO) -> None:
    """Each client's node and share of every job, then the skew between them."""
    names: list[str] = []
    for client in result.clients:
        names.extend(job.name for job in client.jobs if job.name not in names)
    rows = []
    for client in result.clients:
        jobs = {job.name: job for job in client.jobs}
        cells = [str(client.index), client.pod, client.node or "-"]
        for name in names:
            job = jobs.get(name)
            if job is None:
                cells.append("-")
                continue
            share = f" ({job.share_percent:.0f}%)" if job.share_percent is not None else ""
            cells.append(("ERROR " if job.error else "") + _num(job.iops) + share)
        cells.append(client.error or "")
        rows.append(cells)
    out.write("\n")
    headers = ["client", "pod", "node", *names, "problem"]
    write_table(rows, headers, out, title=f"Clients of {result.storage_class}: IOPS (share)")
    skews = [
        f"{name} {value:.0f}%"
        for name, value in result.client_skew_percent.items()
        if value is not None
    ]
    if skews:
        out.write("skew between clients ((max - min) / mean IOPS): " + ", ".join(skews) + "\n")


def _write_local_disk(jobs: Sequence[FioJobSummary], local: LocalDiskResult, out: TextIO) -> None:
    """The volume's IOPS beside the same jobs' on the node's own disk (--compare-local)."""
    theirs = {job.name: job for job in local.jobs}
    rows = []
    for job in jobs:
        other = theirs.get(job.name)
        if other is None:
            continue
        cells = [job.name]
        for side in ("read", "write"):
            mine, disk = job.value(f"{side}_iops"), other.value(f"{side}_iops")
            if not mine and not disk:
                cells += ["-", "-"]  # a direction the job does not do
                continue
            ratio = f" ({mine / disk:.2f}x)" if mine and disk else ""
            cells += [_num(mine), _num(disk) + ratio]
        rows.append(cells)
    where = " on ".join(x for x in (local.fs_type, local.source) if x) or "emptyDir"
    node = f" of {local.node}" if local.node else ""
    out.write("\n")
    headers = ["job", "read iops", "on the disk (volume's x)", "write iops", "on the disk (x)"]
    write_table(rows, headers, out, title=f"The same jobs on the node's own disk{node} ({where})")
    if local.probe is not None:
        _write_latency_probe(local.probe, out)


def _write_latency_probe(probe: LatencyProbe, out: TextIO) -> None:
    """The probe that decides --compare-local: each round's median on both sides."""
    rows = []
    for direction in ("read", "write"):
        volume, disk = probe.medians("volume", direction), probe.medians("disk", direction)
        if not volume and not disk:
            continue
        extremes = f"{min(disk) / max(volume):.2f}" if volume and disk else "-"
        rows.append([direction, _rounds(volume), _rounds(disk), extremes])
    if not rows:
        return
    out.write("\n")
    # headers are upper-cased, and an upper-case micro sign is a Greek capital mu: unit in the title
    headers = ["4k at queue depth 1", "volume", "node's disk", "disk's fastest / volume's slowest"]
    title = "Latency probe: median µs per round, rounds interleaved"
    write_table(rows, headers, out, title=title)


def _rounds(values: Sequence[float]) -> str:
    return " ".join(f"{value:.1f}" for value in values) or "-"


def _version_text(version: str | tuple[str, ...]) -> str:
    # Runs that disagree keep the list's Python spelling the table always showed.
    return str(list(version)) if isinstance(version, tuple) else version
