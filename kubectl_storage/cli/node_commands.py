"""What the node-inspecting commands (mount-audit, iscsi) share: their options, the checks of
those options, the live or --dry-run path, and how findings become the exit code."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Protocol, TypeVar

import typer

from kubectl_storage.cli.context import GlobalOptions
from kubectl_storage.cli.finish import finish as finish_outcome
from kubectl_storage.cli.options import positive_seconds, seconds
from kubectl_storage.core.report.findings import FailOn
from kubectl_storage.errors import ClusterError, UsageError

if TYPE_CHECKING:
    from kubectl_storage.core.report.verdict import Outcome
    from kubectl_storage.operations.node_inspection import InspectionCommand, InspectionKind


class InspectedNode(Protocol):
    """A node of a node command's report: its name, and why it could not be read."""

    @property
    def node(self) -> str:
        """The node's name."""
        ...

    @property
    def error(self) -> str | None:
        """Why the node could not be inspected (None: it was)."""
        ...


class NodeCommandReport(Protocol):
    """What ``finish`` needs of a MountAuditReport or an IscsiReport."""

    @property
    def nodes(self) -> Sequence[InspectedNode]:
        """Every node, in report order."""
        ...

    @property
    def outcome(self) -> Outcome:
        """The report's verdict and its reasons."""
        ...


ReportT = TypeVar("ReportT", bound=NodeCommandReport)

# Options of every node-inspecting command (mount-audit, iscsi).
NodesArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Nodes to inspect (or use -l / --all-nodes).", metavar="NODE", show_default=False
    ),
]
SelectorOpt = Annotated[
    str | None,
    typer.Option("--selector", "-l", help="Inspect the nodes matching this label selector."),
]
AllNodesOpt = Annotated[bool, typer.Option("--all-nodes", help="Inspect every node.")]
ParallelOpt = Annotated[int, typer.Option("--parallel", help="Nodes inspected at the same time.")]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="How long to wait for each node's pod and its output: seconds, or a duration (90s).",
        parser=seconds,
        callback=positive_seconds,
    ),
]
ImageOpt = Annotated[
    str | None, typer.Option("--image", help="Image of the debug pods (default: the toolbox).")
]
RegistryOpt = Annotated[
    str | None, typer.Option("--registry", help="Pull the default image from this registry.")
]
KeepOpt = Annotated[bool, typer.Option("--keep", help="Leave the debug pods for debugging.")]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the debug pods as YAML; create nothing.")
]
FromFileOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--from-file",
        help="Read captured output instead of nodes; no cluster (repeatable, format detected). "
        "The files are one node's; NODE=FILE puts a file on node NODE (several nodes in one "
        "run). `kubectl get pv,pvc,sc,pods -o json` captures stand for the cluster's objects.",
    ),
]
NodeNameOpt = Annotated[
    str | None,
    typer.Option(
        "--node-name",
        help="With --from-file: the node of the files given without NODE= (default: node).",
    ),
]


def check_offline(
    nodes: list[str] | None, selector: str | None, all_nodes: bool, dry_run: bool
) -> None:
    """--from-file reads files: choosing nodes or --dry-run make no sense with it."""
    if nodes or selector or all_nodes or dry_run:
        raise UsageError(
            "--from-file reads captured files; it takes no NODE, -l, --all-nodes or --dry-run",
            "Name the node the files come from with --node-name, or give --from-file NODE=FILE.",
        )


def run_live(
    options: GlobalOptions,
    kind: InspectionKind,
    command: InspectionCommand[ReportT],
    *,
    nodes: list[str] | None,
    selector: str | None,
    all_nodes: bool,
    parallel: int,
    timeout: float,
    image: str | None,
    registry: str | None,
    keep: bool,
    dry_run: bool,
    node_name: str | None,
) -> ReportT | None:
    """Run a node command through the pipeline; None after printing a --dry-run plan."""
    from kubectl_storage.core.k8s.pod_defaults import image_from_flags  # noqa: PLC0415 - runtime only

    if node_name:
        raise UsageError("--node-name only goes with --from-file", "")
    request = kind.request(
        namespace=options.resolved_namespace(),
        image=image_from_flags(image, registry),
        nodes=tuple(nodes or ()),
        selector=selector,
        all_nodes=all_nodes,
        parallel=parallel,
        timeout_s=timeout,
        keep=keep,
    )
    return options.execute(command, request, dry_run=dry_run, keep=keep, cleanup_timeout_s=60)


def finish(report: NodeCommandReport, fail_on: FailOn) -> None:
    """Exit 2 when no node could be inspected; else the report's verdict decides
    (cli/finish.py): 1 on an error finding, and on a warning with --fail-on warn."""
    nodes = report.nodes
    failed = [node for node in nodes if node.error]
    if nodes and len(failed) == len(nodes):
        raise ClusterError(
            f"no node could be inspected ({failed[0].node}: {failed[0].error})",
            "The report above has each node's reason.",
        )
    outcome = report.outcome
    finish_outcome(
        outcome,
        message=f"{outcome.verdict.value}: at or above --fail-on {fail_on.value}: "
        + ", ".join(outcome.reasons[:10]),
        fail_on=fail_on,
    )
