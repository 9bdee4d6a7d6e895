"""fio charts: the Figure's panels, labels and error bars, and the PNG/SVG files written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.render.fio_charts import (
    BANDWIDTH_TITLE,
    IOPS_TITLE,
    LATENCY_TITLE,
    ChartError,
    build_fio_figure,
    draw_fio_chart,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def parsed(name: str) -> Any:
    return parse_fio_output((FIXTURES / name).read_text(encoding="utf-8"))


@pytest.fixture
def two_class_report() -> FioReport:
    quick = parsed("fio-3.33-quick-profile-ext4.json")
    return build_fio_report(
        {"local": [quick, quick], "ceph": [parsed("fio-3.20-kubestr-gtod-reduce.json")]},
        profile="quick",
    )


def texts(axes: Any) -> list[str]:
    return [text.get_text() for text in axes.texts]


def test_three_panels_with_titles_in_order(two_class_report: FioReport) -> None:
    figure = build_fio_figure(two_class_report)

    assert [axes.get_title(loc="left") for axes in figure.axes] == [
        IOPS_TITLE,
        BANDWIDTH_TITLE,
        LATENCY_TITLE,
    ]
    assert figure.axes[2].get_xscale() == "log"


def test_bars_are_named_on_the_axis_so_no_legend_is_needed(
    two_class_report: FioReport,
) -> None:
    figure = build_fio_figure(two_class_report)
    iops_axes, _, latency_axes = figure.axes

    labels = [tick.get_text() for tick in iops_axes.get_yticklabels()]
    assert labels == [
        "local · read_iops · read",
        "local · write_iops · write",
        "ceph · read_iops · read",
        "ceph · write_iops · write",
    ]
    assert iops_axes.get_legend() is None
    # ceph ran with gtod_reduce: no latency bars, and the chart says so.
    latency_labels = [tick.get_text() for tick in latency_axes.get_yticklabels()]
    assert latency_labels == ["local · read_iops · read", "local · write_iops · write"]
    assert any("no latency measured for: ceph · read_iops · read" in t for t in texts(latency_axes))


def test_values_are_written_on_the_bars(two_class_report: FioReport) -> None:
    figure = build_fio_figure(two_class_report)
    iops_axes, bandwidth_axes, latency_axes = figure.axes

    assert "23.4k" in " ".join(texts(iops_axes))
    assert "982" in " ".join(texts(iops_axes))
    assert "91.3" in " ".join(texts(bandwidth_axes))  # 93465 KiB/s
    latency_text = " ".join(texts(latency_axes))
    for expected in ("p50 181µs", "p95 2.11ms", "p99 10.4ms", "p99.9 45.9ms"):
        assert expected in latency_text


def bar_container(axes: Any) -> Any:
    from matplotlib.container import BarContainer

    return next(c for c in axes.containers if isinstance(c, BarContainer))


def test_error_bars_only_when_repeats_vary(two_class_report: FioReport) -> None:
    steady = build_fio_figure(two_class_report)
    assert bar_container(steady.axes[0]).errorbar is None  # identical repeats: no spread

    varying = two_class_report.to_dict()
    varying["results"][0]["jobs"][0]["read_iops_stddev"] = 1500.0
    figure = build_fio_figure(FioReport.from_dict(varying))

    assert bar_container(figure.axes[0]).errorbar is not None
    assert any("± 1500" in text for text in texts(figure.axes[0]))


def test_title_mentions_profile_and_repeats(two_class_report: FioReport) -> None:
    title = build_fio_figure(two_class_report).get_suptitle()

    assert "profile quick" in title
    assert "mean of 2 runs" in title


@pytest.mark.parametrize(("suffix", "magic"), [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_files_written_by_extension(
    two_class_report: FioReport, tmp_path: Path, suffix: str, magic: bytes
) -> None:
    target = tmp_path / f"chart{suffix}"

    written = draw_fio_chart(two_class_report, target)

    content = written.read_bytes()
    assert written == target
    assert content.startswith(magic)
    assert len(content) > 10_000
    if suffix == ".svg":
        assert b"<svg" in content


def test_unsupported_extension_is_refused(two_class_report: FioReport, tmp_path: Path) -> None:
    with pytest.raises(ChartError, match=r"\.png or \.svg"):
        draw_fio_chart(two_class_report, tmp_path / "chart.pdf")
    assert not (tmp_path / "chart.pdf").exists()


def test_report_without_io_cannot_be_drawn() -> None:
    empty = build_fio_report({}, profile="quick")

    with pytest.raises(ChartError, match="no job that did any I/O"):
        build_fio_figure(empty)


def test_report_with_only_unmeasured_latency_still_draws() -> None:
    report = build_fio_report({"ceph": [parsed("fio-3.20-kubestr-gtod-reduce.json")]}, profile="x")

    latency_axes = build_fio_figure(report).axes[2]

    assert any("no latency measured" in text for text in texts(latency_axes))


def test_the_nodes_disk_is_drawn_in_grey_below_each_bar_it_was_compared_with() -> None:
    from matplotlib.colors import to_hex

    from kubectl_storage.core.fio.local_disk import LocalDiskRun

    disk = LocalDiskRun("node-1", None, parsed("fio-3.33-quick-vda-ext4-a.json"))
    report = build_fio_report(
        {"memory": [parsed("fio-3.33-quick-tmpfs.json")]},
        profile="quick",
        local_disks={"memory": disk},
    )
    iops_axes = build_fio_figure(report).axes[0]
    labels = [tick.get_text() for tick in iops_axes.get_yticklabels()]
    assert labels == [
        "memory · read_iops · read",
        "memory · read_iops · read · node's disk",
        "memory · write_iops · write",
        "memory · write_iops · write · node's disk",
    ]
    colours = [to_hex(patch.get_facecolor()) for patch in iops_axes.patches]
    assert colours[1] == colours[3] == "#999999"
    assert colours[0] != "#999999"
    widths = [patch.get_width() for patch in iops_axes.patches]
    local = report.results[0].local_disk
    assert local is not None
    assert widths[1] == pytest.approx(local.jobs[0].value("read_iops"))
