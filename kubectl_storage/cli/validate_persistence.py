"""`kubectl storage validate-persistence`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated

import typer

from kubectl_storage.cli.context import options_of
from kubectl_storage.cli.finish import finish
from kubectl_storage.cli.options import (
    DryRunOpt,
    FailOnOpt,
    KeepOpt,
    NodeOpt,
    NodeSelectorOpt,
    RegistryOpt,
    TimeoutOpt,
    TolerationOpt,
    parse_size,
    placement_from_flags,
)
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.core.report.findings import FailOn
from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.mysql import (
    Disruption,
    VolumeType,
    parse_disruptions,
)

if TYPE_CHECKING:
    from kubectl_storage.core.validate_persistence.report import PersistenceReport

log = logging.getLogger(__name__)


def validate_persistence_command(
    ctx: typer.Context,
    storage_class: Annotated[
        str | None,
        typer.Option(
            "--storage-class", "-s", help="StorageClass to check (default: the cluster's default)."
        ),
    ] = None,
    size: Annotated[
        Size,
        typer.Option(
            "--size",
            "-z",
            help="PVC size, a quantity with a unit (at least ~330Mi).",
            parser=parse_size,
            metavar="SIZE",
        ),
    ] = "1Gi",  # type: ignore[assignment]  # typer runs the default through parse_size
    rows: Annotated[
        int, typer.Option("--rows", help="Rows written before the disruptions.")
    ] = 1000,
    disruptions: Annotated[
        str | None,
        typer.Option(
            "--disruptions",
            help=(
                "Comma-separated: restart, crash, reschedule, node-drain, external, "
                "node-crash (default: restart, crash, reschedule; the others are opt-in). "
                "external: a writer commits while you disrupt the database yourself "
                "(instructions on stderr); --timeout bounds the wait for the disruption and "
                "for the recovery. node-crash: a writer commits while the database's node "
                "reboots at once without syncing (sysrq b); needs --node N --crash-node N."
            ),
            metavar="LIST",
        ),
    ] = None,
    volume_type: Annotated[
        VolumeType,
        typer.Option(
            "--volume-type",
            help="pvc, or emptyDir: a pod-local control volume that must show data loss.",
            case_sensitive=False,
        ),
    ] = VolumeType.PVC,
    node: NodeOpt = None,
    crash_node: Annotated[
        str | None,
        typer.Option(
            "--crash-node",
            help=(
                "The node node-crash may crash, named again: it must be --node's. Refused "
                "(exit 2, nothing created) for a node that shares its kernel with other "
                "nodes or with this machine."
            ),
            metavar="NODE",
        ),
    ] = None,
    node_selector: NodeSelectorOpt = None,
    toleration: TolerationOpt = None,
    cpu: Annotated[
        str | None, typer.Option("--cpu", help="CPU request and limit of the server.")
    ] = None,
    memory: Annotated[
        str | None, typer.Option("--memory", help="Memory request and limit of the server.")
    ] = None,
    image: Annotated[
        str | None,
        typer.Option("--image", help="MySQL-compatible server image (MySQL, MariaDB, Percona)."),
    ] = None,
    registry: RegistryOpt = None,
    server_arg: Annotated[
        list[str] | None,
        typer.Option(
            "--server-arg",
            help=(
                "One option appended to the server's command line, repeatable (e.g. "
                "--server-arg=--innodb-flush-log-at-trx-commit=2). The settings the server "
                "reports are judged all the same."
            ),
            metavar="OPTION",
        ),
    ] = None,
    allow_non_durable_config: Annotated[
        bool,
        typer.Option(
            "--allow-non-durable-config",
            help=(
                "Run the disruptions even when the server is not configured to make a commit "
                "durable (the report still says so)."
            ),
        ),
    ] = False,
    fsync_probe: Annotated[
        bool,
        typer.Option(
            "--fsync-probe/--no-fsync-probe",
            help="Measure fdatasync latency on the same volume with fio (etcd's check).",
        ),
    ] = True,
    probe_image: Annotated[
        str | None,
        typer.Option("--probe-image", help="Image with fio for the fsync probe (the toolbox)."),
    ] = None,
    timeout: TimeoutOpt = 300,
    fail_on: FailOnOpt = FailOn.ERROR,
    keep: KeepOpt = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Check that committed MySQL data survives pod loss on a StorageClass.

    Deploys MySQL (a one-replica StatefulSet with a PVC of the class and a random root password
    that is never shown), writes --rows rows to testdb.tasks and reads them back (checksum),
    then for each disruption waits until MySQL answers again and compares every row:
    restart (graceful pod delete), crash (mysqld SIGKILLed while a writer commits rows one at a
    time: every acknowledged commit must survive), reschedule (the pod's node cordoned and the
    pod deleted, so it runs on another node; skipped on a single-node cluster) and, opt-in,
    node-drain (the pod evicted from its cordoned node). The server's durability settings are
    read and judged, and fio measures fdatasync latency on the same volume. Exit 1 when any
    committed row was lost, the data cannot follow the pod to another node, or the server is
    not configured to make a commit durable (unless --allow-non-durable-config).
    Everything created is deleted at the end, also on Ctrl-C.

    Examples:

        kubectl storage validate-persistence -s fast

        kubectl storage validate-persistence -s fast --disruptions crash --rows 5000 -o json

        kubectl storage validate-persistence --volume-type emptyDir

        kubectl storage validate-persistence -s fast --image mariadb:11.4 --toleration db

        kubectl storage validate-persistence -s fast --disruptions reschedule,node-drain

        kubectl storage validate-persistence --disruptions node-crash --node n3 --crash-node n3

        kubectl storage validate-persistence -s fast --dry-run
    """
    from kubectl_storage.core.k8s.pod_defaults import MYSQL_IMAGE, image_from_flags  # noqa: PLC0415 - runtime only
    from kubectl_storage.operations.validate_persistence import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
        PERSISTENCE_COMMAND,
        PersistenceRequest,
    )
    from kubectl_storage.render.validate_persistence import write_persistence_table  # noqa: PLC0415 - runtime only

    options = options_of(ctx)
    placement = placement_from_flags(
        "validate-persistence",
        node=node,
        node_selector=node_selector,
        toleration=toleration,
        cpu=cpu,
        memory=memory,
    )
    request = PersistenceRequest(
        storage_class=storage_class,
        namespace=options.resolved_namespace(),
        size=size,
        rows=rows,
        disruptions=_parse_disruptions(disruptions) if disruptions is not None else None,
        volume_type=volume_type,
        image=image_from_flags(image, registry, MYSQL_IMAGE),
        placement=placement,
        timeout_s=timeout,
        keep=keep,
        server_args=tuple(server_arg or ()),
        allow_non_durable=allow_non_durable_config,
        probe_image=image_from_flags(probe_image, registry) if fsync_probe else None,
        crash_node=crash_node,
        crash_image=image_from_flags(None, registry),
    )
    report = options.execute(
        PERSISTENCE_COMMAND, request, dry_run=dry_run, keep=keep, cleanup_timeout_s=timeout
    )
    if report is None:
        # --dry-run: the manifests are on stdout; the phases the run would go through here.
        log.info(
            "planned phases: seed, then %s",
            ", ".join(
                d.value
                + (
                    " (you disrupt the database while a writer commits; waits up to "
                    f"--timeout {timeout:.0f}s for it)"
                    if d is Disruption.EXTERNAL
                    else f" (node {request.crash_node} rebooted at once without sync)"
                    if d is Disruption.NODE_CRASH
                    else ""
                )
                for d in request.chosen
            ),
        )
        return
    options.emit(report, write_persistence_table)
    message, hint = _explained(report)
    finish(report.outcome, message=message, hint=hint, fail_on=fail_on)


def _explained(report: PersistenceReport) -> tuple[str, str]:
    """The error paragraph (message, hint) for a verdict that exits 1, in this command's words
    (the verdict itself is the report's: PersistenceReport.outcome)."""
    if report.volume_type is VolumeType.EMPTY_DIR:
        return (
            "the emptyDir control did not show the loss it exists to show: "
            + ", ".join(report.outcome.reasons),
            "A control that keeps its data means the check cannot see a loss; see the "
            "NOTE column, and run the control again with --keep to look at the pod.",
        )
    if report.failed_phases:
        return (
            "committed data was lost or did not come back after: "
            + ", ".join(report.failed_phases),
            "See the NOTE column; --keep leaves the pod and its volume for a closer look.",
        )
    if report.cannot_follow:
        return (
            "the data cannot follow the pod to another node: " + ", ".join(report.cannot_follow),
            "The class's volumes are pinned to one node (a local disk): when that node is "
            "drained or fails, the database stays down until it returns. Use a class whose "
            "volumes can attach on other nodes for data that must survive a node.",
        )
    check = report.durability
    if check is not None and check.settings.reasons:
        if check.allowed_non_durable:
            return (
                "the server is not configured to make a commit durable: "
                "--allow-non-durable-config let the disruptions run, but what survived them "
                "need not survive a power loss",
                "Fix the settings listed above for a check that can pass.",
            )
        return (
            "the server is not configured to make a commit durable, so the "
            "disruptions were not run",
            "Fix the settings listed above, or pass --allow-non-durable-config to run "
            "the check on this configuration anyway.",
        )
    if report.no_disruption_phases:
        return (
            "no disruption was observed during: "
            + ", ".join(report.no_disruption_phases)
            + " before --timeout (no failed commit, no pod or server restart), so nothing "
            "was proven",
            "Disrupt the database while the run waits (the instruction is printed on stderr), "
            "or raise --timeout.",
        )
    if report.unavailable_phases:
        return (
            "MySQL did not answer within --timeout after: "
            + ", ".join(report.unavailable_phases)
            + "; nothing could be read back, so nothing was proven either way",
            "Raise --timeout if the cluster is only slow (a volume's detach and attach "
            "can take minutes); the events are in the NOTE column.",
        )
    if report.outcome.verdict is Verdict.WARN:
        # Exits 1 only with --fail-on warn.
        return (
            "committed data survived, but " + "; ".join(report.warning_texts()),
            "A pass needs a volume that is not memory-backed and a server that reports its "
            "durability settings; see the fsync probe and durability lines above.",
        )
    return (
        "no disruption could run, so nothing was tested",
        "See why each was skipped in the NOTE column (a move needs a second schedulable node).",
    )


def _parse_disruptions(text: str) -> tuple[Disruption, ...]:
    try:
        return parse_disruptions(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--disruptions") from exc
