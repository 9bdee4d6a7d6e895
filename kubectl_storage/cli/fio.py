"""`kubectl storage fio`."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from kubectl_storage.cli.context import GlobalOptions, options_of
from kubectl_storage.cli.finish import finish
from kubectl_storage.cli.options import (
    CpuOpt,
    DryRunOpt,
    FailOnOpt,
    FsGroupOpt,
    KeepOpt,
    MemoryOpt,
    NodeOpt,
    NodeSelectorOpt,
    RegistryOpt,
    RunAsUserOpt,
    TimeoutOpt,
    TolerationOpt,
    parse_size,
    placement_from_flags,
    positive_count,
)
from kubectl_storage.core.fio.choices import ProfileName, Spread
from kubectl_storage.core.fio.local_disk import LOCAL_DISK_FACTOR, PROBE_ROUNDS
from kubectl_storage.core.k8s.manifests import VolumeMode
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.report.findings import FailOn
from kubectl_storage.errors import UsageError

if TYPE_CHECKING:
    from kubectl_storage.core.fio.report import FioReport

log = logging.getLogger(__name__)


def fio_command(
    ctx: typer.Context,
    storage_class: Annotated[
        list[str] | None,
        typer.Option(
            "--storage-class", "-s", help="StorageClass to benchmark (repeat to compare several)."
        ),
    ] = None,
    size: Annotated[
        Size,
        typer.Option(
            "--size",
            "-z",
            help="PVC size, a quantity with a unit (cloud disks scale with size).",
            parser=parse_size,
            metavar="SIZE",
        ),
    ] = "100Gi",  # type: ignore[assignment]  # typer runs the default through parse_size
    pvc: Annotated[
        str | None,
        typer.Option("--pvc", help="Benchmark this existing PVC instead (it is never deleted)."),
    ] = None,
    volume_mode: Annotated[
        VolumeMode, typer.Option("--volume-mode", help="Filesystem or Block.")
    ] = VolumeMode.FILESYSTEM,
    profile: Annotated[
        ProfileName, typer.Option("--profile", "-p", help="Built-in job set.")
    ] = ProfileName.DEFAULT,
    job_file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Your own fio job file instead of a profile."),
    ] = None,
    runtime: Annotated[
        int | None, typer.Option("--runtime", help="Seconds each job measures.")
    ] = None,
    ramp_time: Annotated[
        int | None, typer.Option("--ramp-time", help="Seconds each job runs before measuring.")
    ] = None,
    node: NodeOpt = None,
    node_selector: NodeSelectorOpt = None,
    toleration: TolerationOpt = None,
    cpu: CpuOpt = None,
    memory: MemoryOpt = None,
    run_as_user: RunAsUserOpt = None,
    fs_group: FsGroupOpt = None,
    image: Annotated[str | None, typer.Option("--image", help="Toolbox image with fio.")] = None,
    registry: RegistryOpt = None,
    timeout: TimeoutOpt = 300,
    fail_on: FailOnOpt = FailOn.ERROR,
    keep: KeepOpt = False,
    dry_run: DryRunOpt = False,
    parallel: Annotated[
        bool, typer.Option("--parallel", help="Benchmark all classes at the same time.")
    ] = False,
    repeat: Annotated[
        int,
        typer.Option("--repeat", help="Runs per class (mean ± stddev).", callback=positive_count),
    ] = 1,
    chart: Annotated[
        Path | None, typer.Option("--chart", help="Draw the results to FILE.png or FILE.svg.")
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="Compare with a saved -o json report.")
    ] = None,
    max_regression: Annotated[
        str, typer.Option("--max-regression", help="Allowed worsening against --baseline.")
    ] = "10%",
    from_json: Annotated[
        Path | None,
        typer.Option(
            "--from-json",
            help="Re-render a saved report or raw fio JSON (also fio --client output); no cluster.",
        ),
    ] = None,
    clients: Annotated[
        int,
        typer.Option(
            "--clients",
            help="Run the job on N pods at once (fio client/server) and add the results up.",
            callback=positive_count,
            metavar="N",
        ),
    ] = 1,
    shared: Annotated[
        bool,
        typer.Option(
            "--shared", help="All --clients on one ReadWriteMany PVC (each its own files)."
        ),
    ] = False,
    spread: Annotated[
        Spread, typer.Option("--spread", help="Spread --clients over nodes or zones (preferred).")
    ] = Spread.NODES,
    no_prefill: Annotated[
        bool,
        typer.Option(
            "--no-prefill",
            help="With --volume-mode Block, do not write the range the read jobs read before "
            "them (their numbers are then marked suspect: unwritten blocks read as zeros).",
        ),
    ] = False,
    until_steady: Annotated[
        bool,
        typer.Option(
            "--until-steady",
            help="End each timed job of a built-in profile as soon as fio finds its IOPS "
            "steady (fio's steadystate=iops_slope:1%, ss_dur=10s, ss_ramp=5s); --runtime is "
            "then the most each job may run (default 120 s). A job that never settles is "
            "marked suspect (fio.not-steady).",
        ),
    ] = False,
    compare_local: Annotated[
        bool,
        typer.Option(
            "--compare-local",
            help="Also run the same jobs on the node's own disk (an emptyDir in the benchmark "
            f"pod), then a 4k queue-depth-1 latency probe on both, {PROBE_ROUNDS} rounds each, "
            "interleaved; "
            f"the class is suspect (a cache) when the volume answered {LOCAL_DISK_FACTOR:g}x "
            "faster than the disk in every round.",
        ),
    ] = False,
) -> None:
    """Benchmark StorageClasses with fio: IOPS, bandwidth and latency percentiles.

    Creates a PVC and a non-root pod per class, runs fio, deletes them (also on Ctrl-C).
    The default profile runs kubestr's four jobs one after another, plus latency jobs.

    Examples:

        kubectl storage fio -s fast

        kubectl storage fio -s fast -s standard --repeat 3 --chart compare.png

        kubectl storage fio -s fast --profile quick -o json > fast.json

        kubectl storage fio -s fast --baseline fast.json --max-regression 15%

        kubectl storage fio --pvc my-data -f my-job.fio

        kubectl storage fio -s shared-nfs --clients 4 --shared

        kubectl storage fio -s fast --volume-mode Block -z 20Gi

        kubectl storage fio -s fast --compare-local

        kubectl storage fio --from-json fast.json
    """
    from kubectl_storage.core.k8s.manifests import PodIdentity  # noqa: PLC0415 - runtime only
    from kubectl_storage.core.k8s.pod_defaults import image_from_flags  # noqa: PLC0415 - runtime only
    from kubectl_storage.operations.fio import FIO_COMMAND, FioRequest  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    threshold = _parse_percent(max_regression)
    if chart is not None:
        from kubectl_storage.render.fio_charts import charts_available  # noqa: PLC0415 - runtime only

        # Say it before a ten-minute benchmark, not after.
        if not charts_available():
            raise UsageError(
                "--chart needs matplotlib, which this build of kubectl-storage does not include",
                "Use the krew build or `pip install kubectl-storage`, or drop --chart.",
            )
        if chart.suffix.lower() not in (".png", ".svg"):
            raise UsageError(f"--chart {chart}: use a .png or .svg file name", "")
    if no_prefill and (volume_mode is not VolumeMode.BLOCK or job_file is not None):
        raise UsageError(
            "--no-prefill applies to the built-in profiles with --volume-mode Block",
            "Only there does the run write the read jobs' range first (a Filesystem volume's "
            "files are laid out by fio itself, and a job file runs as written).",
        )
    if from_json is not None and until_steady:
        raise UsageError(
            "--until-steady changes how fio runs, and --from-json runs nothing: it reads a "
            f"saved report or fio output ({from_json}), whose jobs already ran as they did",
            "Drop --until-steady; the report still says, per job that asked fio for steady "
            "state, whether it attained it.",
        )
    if from_json is not None:
        report = _load_report(from_json, "--from-json")
        _finish(options, report, chart, baseline, threshold, fail_on)
        return
    placement = placement_from_flags(
        "fio",
        node=node,
        node_selector=node_selector,
        toleration=toleration,
        cpu=cpu,
        memory=memory,
    )
    request = FioRequest(
        storage_classes=tuple(storage_class or ()),
        size=size,
        pvc=pvc,
        volume_mode=volume_mode,
        profile=str(profile),
        job_file=str(job_file) if job_file else None,
        runtime_s=runtime,
        ramp_time_s=ramp_time,
        image=image_from_flags(image, registry),
        placement=placement,
        identity=PodIdentity.from_flags(run_as_user, fs_group),
        timeout_s=timeout,
        keep=keep,
        parallel=parallel,
        repeat=repeat,
        clients=clients,
        shared=shared,
        spread=spread,
        prefill=not no_prefill,
        compare_local=compare_local,
        until_steady=until_steady,
    )
    measured = options.execute(
        FIO_COMMAND, request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if measured is not None:
        _log_prefills(measured)
        _finish(options, measured, chart, baseline, threshold, fail_on)


def _log_prefills(report: FioReport) -> None:
    """Say on stderr, with the progress, how long each class's Block prefill took."""
    from kubectl_storage.core.fio.notes import NOTE_PREFILL  # noqa: PLC0415 - runtime only

    for result in report.results:
        for note in result.notes:
            if note.id == NOTE_PREFILL:
                log.info("%s: %s", result.storage_class, note.message)


def _parse_percent(text: str) -> float:
    try:
        value = float(text.strip().rstrip("%"))
    except ValueError as exc:
        raise UsageError(f"--max-regression {text!r} is not a percentage", "Example: 10%") from exc
    if value < 0:
        raise UsageError("--max-regression must not be negative", "Example: 10%")
    return value


def _load_report(path: Path, flag: str) -> FioReport:
    """A saved FioReport, or raw fio JSON output (a plain or a client/server run) made into one."""
    from kubectl_storage.core.fio.offline import report_from_fio_output  # noqa: PLC0415 - runtime only
    from kubectl_storage.core.fio.report import FioReport, FioReportError  # noqa: PLC0415 - runtime only
    from kubectl_storage.core.fio.results import FioOutputError  # noqa: PLC0415 - runtime only

    try:
        text = path.read_text()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}", "") from exc
    try:
        document = json.loads(text)
    except ValueError:
        document = None  # raw fio output with text around it: handled below
    if isinstance(document, dict) and "kind" in document:
        try:
            return FioReport.from_dict(document)
        except FioReportError as exc:
            raise UsageError(f"{flag} {path}: {exc}", "") from exc
    try:
        return report_from_fio_output(text, name=path.stem, source=str(path))
    except FioOutputError as exc:
        raise UsageError(
            f"{path} is neither a FioReport nor fio JSON output: {exc}",
            "Give a file saved with `kubectl storage fio -o json` or `fio --output-format=json` "
            "(also `fio --client=HOST job.fio --output-format=json`).",
        ) from exc


def _finish(
    options: GlobalOptions,
    report: FioReport,
    chart: Path | None,
    baseline: Path | None,
    threshold: float,
    fail_on: FailOn,
) -> None:
    from kubectl_storage.core.fio.baseline import compare_with_baseline  # noqa: PLC0415 - runtime only
    from kubectl_storage.render.fio import write_fio_table  # noqa: PLC0415 - runtime only

    if baseline is not None:
        saved = _load_report(baseline, "--baseline")
        report = report.with_baseline(
            compare_with_baseline(report, saved, max_regression_percent=threshold)
        )
    options.emit(report, write_fio_table)
    if chart is not None:
        from kubectl_storage.render.fio_charts import ChartError, draw_fio_chart  # noqa: PLC0415 - runtime only

        try:
            draw_fio_chart(report, chart)
        except ChartError as exc:
            raise UsageError(f"--chart {chart}: {exc}", "Use a .png or .svg file name.") from exc
    message, hint = _explained(report)
    finish(report.outcome, message=message, hint=hint, fail_on=fail_on)


def _explained(report: FioReport) -> tuple[str, str]:
    """The error paragraph (message, hint) for a verdict that exits 1, in this command's words
    (the verdict itself is the report's: FioReport.outcome)."""
    if report.failed_jobs:
        return f"fio reported errors in {', '.join(report.failed_jobs)}", ""
    if report.failed_clients:
        return (
            f"fio clients took no part: {'; '.join(report.failed_clients)}",
            "The others' results are above. See the events printed earlier (kubectl "
            "describe pod), or use --node/--node-selector/--toleration to place the clients.",
        )
    etcd = [reason for reason in report.outcome.reasons if reason.startswith("etcd")]
    if etcd:
        return (
            "etcd's disk check did not pass: " + ", ".join(etcd),
            "etcd wants the fdatasync p99 under 10 ms; see the etcd line above.",
        )
    if report.baseline is not None and report.baseline.failed:
        return "the comparison with the baseline did not pass (the table above)", ""
    return (
        "warn with --fail-on warn: the numbers may not be what the storage does ("
        + ", ".join(report.outcome.reasons)
        + ")",
        "The notes under the table say why each guard fired (docs/commands/fio.md lists them).",
    )
