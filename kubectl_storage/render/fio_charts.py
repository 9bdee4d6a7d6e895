"""Charts of a FioReport: IOPS, bandwidth and completion-latency percentiles per class and job.

One figure, three horizontal-bar panels stacked top to bottom. Every bar is named on the axis
(``class · job · direction``) and carries its value as text, so nobody has to match colours to a
legend; colours only repeat the class to help the eye. When a report holds repeats, bars get
error bars of one sample standard deviation (``<metric>_stddev``). Latency uses a log scale
because p50 and p99.9 can be orders of magnitude apart.

matplotlib is imported inside the functions (it costs a noticeable start-up time) and only its
object-oriented API is used, on the Agg canvas: no pyplot, no global state, no display needed.
This module writes the chart file and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.timeline import JobTimeline
from kubectl_storage.core.k8s.quantities import format_count

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

IOPS_TITLE = "IOPS (higher is better)"
BANDWIDTH_TITLE = "Bandwidth, MiB/s (higher is better)"
LATENCY_TITLE = "Completion latency percentiles, µs, log scale (lower is better)"
CLIENTS_TITLE = "IOPS per client (--clients): each client's share of the job, and its node"
TIMELINE_TITLE = "IOPS per second of each job (first run), log scale; dashed: a burst ends"

SUPPORTED_FORMATS = ("png", "svg")

_PERCENTILES: tuple[tuple[str, str], ...] = (
    ("p50", "clat_p50_us"),
    ("p95", "clat_p95_us"),
    ("p99", "clat_p99_us"),
    ("p99.9", "clat_p99_9_us"),
)
# Colour-blind-safe palette (Okabe-Ito), one colour per StorageClass.
_CLASS_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
_PERCENTILE_SHADES = (1.0, 0.8, 0.6, 0.4)
_BAR_HEIGHT_IN = 0.32


class ChartError(ValueError):
    """The report cannot be drawn (no measured jobs) or the file type is not supported."""


@dataclass(frozen=True)
class _Bar:
    """One direction of one job of one class, with what the three panels need."""

    label: str
    class_index: int
    iops: float
    iops_stddev: float | None
    bw_mib_s: float
    bw_mib_s_stddev: float | None
    percentiles_us: tuple[tuple[str, float | None, float | None], ...]


def charts_available() -> bool:
    """Whether matplotlib can be imported (the single-file binary leaves it out)."""
    import importlib.util  # noqa: PLC0415 - only when a chart is asked for

    return importlib.util.find_spec("matplotlib") is not None


def draw_fio_chart(report: FioReport, path: str | Path) -> Path:
    """Draw a FioReport to a PNG or SVG file, chosen by the file extension.

    Args:
        report: the report (fresh, or read back from saved JSON).
        path: where to write; must end in ``.png`` or ``.svg``.

    Returns:
        The path written.

    Raises:
        ChartError: for another extension, or a report without any measured job.
    """
    target = Path(path)
    file_format = target.suffix.lower().lstrip(".")
    if file_format not in SUPPORTED_FORMATS:
        raise ChartError(f"cannot draw a chart to {target.name!r}: use a .png or .svg file name")
    try:
        figure = build_fio_figure(report)
    except ImportError as exc:
        raise ChartError(
            "charts need matplotlib, which this build of kubectl-storage does not include; "
            "use the krew build or `pip install kubectl-storage`"
        ) from exc
    figure.savefig(target, format=file_format, dpi=120)
    return target


def build_fio_figure(report: FioReport) -> Figure:
    """Build the chart as a matplotlib Figure on an Agg canvas, without saving it.

    Args:
        report: the report.

    Returns:
        The figure; its axes are, in order, IOPS, bandwidth and latency, with ``--clients``
        each client's IOPS per job, and last, when the report holds per-second logs, every
        job's IOPS second by second.

    Raises:
        ChartError: when no job in the report moved any data.
    """
    # Lazy: importing matplotlib costs start-up time every other command would pay.
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415 - runtime only
    from matplotlib.figure import Figure  # noqa: PLC0415 - runtime only

    bars = _collect_bars(report)
    if not bars:
        raise ChartError("the report has no job that did any I/O; nothing to draw")
    latency_rows = sum(1 for bar in bars if any(v for _, v, _ in bar.percentiles_us))
    heights = [max(len(bars), 1), max(len(bars), 1), max(latency_rows * 2.2, 1)]
    client_bars = _collect_client_bars(report)
    if client_bars:
        heights.append(len(client_bars))
    timelines = [(i, t) for i, result in enumerate(report.results) for t in result.timeline]
    if timelines:
        heights.append(6)
    total_height = 1.6 + _BAR_HEIGHT_IN * sum(heights) + 1.2 * len(heights)
    figure = Figure(figsize=(11, total_height), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(len(heights), 1, height_ratios=heights)
    figure.suptitle(_figure_title(report), fontsize=12)

    _draw_simple_panel(
        axes[0], bars, [bar.iops for bar in bars], [bar.iops_stddev for bar in bars], IOPS_TITLE
    )
    _draw_simple_panel(
        axes[1],
        bars,
        [bar.bw_mib_s for bar in bars],
        [bar.bw_mib_s_stddev for bar in bars],
        BANDWIDTH_TITLE,
    )
    _draw_latency_panel(axes[2], bars)
    if client_bars:
        _draw_simple_panel(
            axes[3], client_bars, [b.iops for b in client_bars], [None] * len(client_bars),
            CLIENTS_TITLE,
        )  # fmt: skip
    if timelines:
        _draw_timeline_panel(axes[-1], report, timelines)
    return figure


_LINE_STYLES = ("-", "--", ":", "-.")


def _draw_timeline_panel(
    axes: Axes, report: FioReport, timelines: Sequence[tuple[int, JobTimeline]]
) -> None:
    """One line per class, job and direction; each job's clock starts after its ramp."""
    axes.set_title(TIMELINE_TITLE, loc="left", fontsize=11)
    for number, (class_index, timeline) in enumerate(timelines):
        seconds = [second for second, _ in timeline.iops]
        values = [max(value, 0.1) for _, value in timeline.iops]  # log scale: no zeros
        name = report.results[class_index].storage_class
        colour = _colour(class_index)
        axes.plot(
            seconds,
            values,
            color=colour,
            linestyle=_LINE_STYLES[number % len(_LINE_STYLES)],
            marker=".",
            label=f"{name} · {timeline.job} · {timeline.direction}",
        )
        if timeline.burst is not None:
            axes.axvline(timeline.burst.drop_s, color=colour, linestyle="--", alpha=0.6)
            axes.annotate(
                timeline.burst.summary,
                (timeline.burst.drop_s, timeline.burst.plateau),
                textcoords="offset points",
                xytext=(6, -12),
                fontsize=8,
            )
    axes.set_yscale("log")
    axes.set_xlabel("seconds into the job")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower left")


def _collect_client_bars(report: FioReport) -> list[_Bar]:
    bars: list[_Bar] = []
    for class_index, result in enumerate(report.results):
        for client in result.clients:
            where = client.node or "not scheduled"
            for job in client.jobs:
                share = f", {job.share_percent:.0f}%" if job.share_percent is not None else ""
                bars.append(
                    _Bar(
                        label=(
                            f"{result.storage_class} · {job.name} · client {client.index} "
                            f"({where}{share})"
                        ),
                        class_index=class_index,
                        iops=job.iops or 0.0,
                        iops_stddev=None,
                        bw_mib_s=(job.bw_kib_s or 0.0) / 1024,
                        bw_mib_s_stddev=None,
                        percentiles_us=(),
                    )
                )
    return bars


def _figure_title(report: FioReport) -> str:
    parts = ["fio"]
    if report.profile:
        parts.append(f"profile {report.profile}")
    if isinstance(report.fio_version, str) and report.fio_version:
        parts.append(report.fio_version)
    if report.repeats > 1:
        parts.append(f"mean of {report.repeats} runs, error bars ±1 stddev")
    return " · ".join(parts)


def _collect_bars(report: FioReport) -> list[_Bar]:
    bars: list[_Bar] = []
    for class_index, result in enumerate(report.results):
        disk = result.local_disk
        on_disk = {job.name: job for job in disk.jobs} if disk is not None else {}
        for job in result.jobs:
            for direction in ("read", "write"):
                label = f"{result.storage_class} · {job.name} · {direction}"
                bars += _direction_bars(job, direction, label, class_index)
                other = on_disk.get(job.name)
                if other is not None:  # --compare-local: the node's disk right below, grey
                    bars += _direction_bars(other, direction, f"{label} · node's disk", NODE_DISK)
    return bars


#: The class index that draws a bar in the node's-disk grey (--compare-local).
NODE_DISK = -1
_NODE_DISK_COLOUR = "#999999"


def _direction_bars(job: FioJobSummary, direction: str, label: str, class_index: int) -> list[_Bar]:
    iops = job.value(f"{direction}_iops")
    bw_kib_s = job.value(f"{direction}_bw_kib_s")
    if not iops and not bw_kib_s:
        return []  # the write side of a read job
    bw_stddev = job.stddev(f"{direction}_bw_kib_s")
    return [
        _Bar(
            label=label,
            class_index=class_index,
            iops=iops or 0.0,
            iops_stddev=job.stddev(f"{direction}_iops"),
            bw_mib_s=(bw_kib_s or 0.0) / 1024,
            bw_mib_s_stddev=None if bw_stddev is None else bw_stddev / 1024,
            percentiles_us=tuple(
                (name, job.value(f"{direction}_{key}"), job.stddev(f"{direction}_{key}"))
                for name, key in _PERCENTILES
            ),
        )
    ]


def _draw_simple_panel(
    axes: Axes,
    bars: Sequence[_Bar],
    values: Sequence[float],
    stddevs: Sequence[float | None],
    title: str,
) -> None:
    positions = list(range(len(bars)))
    errors = [stddev or 0.0 for stddev in stddevs]
    axes.barh(
        positions,
        values,
        height=0.7,
        color=[_colour(bar.class_index) for bar in bars],
        xerr=errors if any(errors) else None,
        capsize=3,
    )
    axes.set_yticks(positions, labels=[bar.label for bar in bars])
    axes.invert_yaxis()  # first job on top, in report order
    axes.set_title(title, loc="left", fontsize=11)
    axes.grid(axis="x", alpha=0.3)
    peak = max((value + error for value, error in zip(values, errors, strict=True)), default=0)
    axes.set_xlim(0, peak * 1.25 if peak else 1)
    for position, value, error in zip(positions, values, errors, strict=True):
        text = format_count(value) + (f" ± {format_count(error)}" if error else "")
        axes.text(value + error, position, f"  {text}", va="center", fontsize=8)


def _draw_latency_panel(axes: Axes, bars: Sequence[_Bar]) -> None:
    from matplotlib.colors import to_rgb  # noqa: PLC0415 - lazy, see build_fio_figure

    axes.set_title(LATENCY_TITLE, loc="left", fontsize=11)
    rows = [bar for bar in bars if any(value for _, value, _ in bar.percentiles_us)]
    if not rows:
        axes.text(
            0.5,
            0.5,
            "no latency measured (gtod_reduce or disable_clat in the job file)",
            ha="center",
            va="center",
            transform=axes.transAxes,
        )
        axes.set_yticks([])
        axes.set_xticks([])
        return
    step = 1.0 / (len(_PERCENTILES) + 1)
    tick_positions: list[float] = []
    largest = 0.0
    smallest = float("inf")
    for row_index, bar in enumerate(rows):
        base = row_index * 1.0
        tick_positions.append(base + step * (len(_PERCENTILES) - 1) / 2)
        red, green, blue = to_rgb(_colour(bar.class_index))
        for offset, (label, value, stddev) in enumerate(bar.percentiles_us):
            if not value:
                continue
            shade = _PERCENTILE_SHADES[offset]
            colour = (
                red * shade + (1 - shade),
                green * shade + (1 - shade),
                blue * shade + (1 - shade),
            )
            position = base + offset * step
            axes.barh(
                position,
                value,
                height=step * 0.9,
                color=colour,
                edgecolor=_colour(bar.class_index),
                linewidth=0.6,
                xerr=stddev if stddev else None,
                capsize=2,
            )
            axes.text(value, position, f"  {label} {_duration(value)}", va="center", fontsize=7)
            largest = max(largest, value + (stddev or 0.0))
            smallest = min(smallest, value)
    axes.set_xscale("log")
    axes.set_xlim(max(smallest / 2, 0.1), largest * 6)
    axes.set_yticks(tick_positions, labels=[bar.label for bar in rows])
    axes.invert_yaxis()
    axes.grid(axis="x", which="major", alpha=0.3)
    unmeasured = [bar.label for bar in bars if bar not in rows]
    if unmeasured:
        # Say which bars have no latency instead of leaving the reader to spot the gap.
        axes.text(
            0.995,
            0.01,
            "no latency measured for: " + "; ".join(unmeasured),
            ha="right",
            va="bottom",
            fontsize=7,
            transform=axes.transAxes,
        )


def _colour(class_index: int) -> str:
    if class_index == NODE_DISK:
        return _NODE_DISK_COLOUR
    return _CLASS_COLOURS[class_index % len(_CLASS_COLOURS)]


def _duration(microseconds: float) -> str:
    """Latency for a bar label in the unit that keeps it short: 850µs, 12.4ms, 1.2s."""
    if microseconds >= 1_000_000:
        return f"{microseconds / 1_000_000:.3g}s"
    if microseconds >= 1_000:
        return f"{microseconds / 1_000:.3g}ms"
    return f"{microseconds:.3g}µs"
