"""Flags several workload commands share (fio, snapshot, validate-persistence), defined once.

Same spelling, same help, same parsing everywhere: a placement flag that works for fio works the
same for snapshot and validate-persistence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kubectl_storage.core.k8s.pod_defaults import DEFAULT_FS_GROUP, DEFAULT_UID
from kubectl_storage.core.k8s.quantities import QuantityError, Size, parse_duration_s
from kubectl_storage.core.report.findings import FailOn
from kubectl_storage.errors import UsageError

if TYPE_CHECKING:
    from kubectl_storage.core.k8s.manifests import PodPlacement


def parse_size(text: str) -> Size:
    """Typer parser for size flags: a Kubernetes quantity with a unit, parsed once, here.

    A bad size is a usage error (exit 2) that names the flag, before anything else happens.
    """
    if isinstance(text, Size):  # typer hands defaults through the parser too
        return text
    try:
        return Size.parse(text)
    except QuantityError as exc:
        raise typer.BadParameter(str(exc)) from exc


def seconds(text: str | float) -> float:
    """A time option: seconds (``90``, ``2.5``) or a kubectl-style duration (``90s``, ``5m``)."""
    if isinstance(text, int | float):
        return float(text)
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_duration_s(text)
    except ValueError as exc:
        raise typer.BadParameter(
            f"{text!r} is not a number of seconds nor a duration (90, 90s, 5m, 1h)"
        ) from exc


def positive_seconds(value: float | None) -> float | None:
    if value is not None and value <= 0:
        raise typer.BadParameter("must be a positive number of seconds (example: 600)")
    return value


def positive_count(value: int | None) -> int | None:
    if value is not None and value < 1:
        raise typer.BadParameter("must be at least 1")
    return value


NodeOpt = Annotated[str | None, typer.Option("--node", help="Run the pod on this node.")]
NodeSelectorOpt = Annotated[
    str | None, typer.Option("--node-selector", help="k=v[,k2=v2] for the pod.")
]
TolerationOpt = Annotated[
    list[str] | None,
    typer.Option("--toleration", help="KEY[=VALUE][:EFFECT], or * for all (repeatable)."),
]
CpuOpt = Annotated[str | None, typer.Option("--cpu", help="CPU request and limit.")]
MemoryOpt = Annotated[str | None, typer.Option("--memory", help="Memory request and limit.")]
RunAsUserOpt = Annotated[
    int | None,
    typer.Option(
        "--run-as-user", help=f"UID of the pod (default {DEFAULT_UID}; unset on OpenShift)."
    ),
]
FsGroupOpt = Annotated[
    int | None, typer.Option("--fs-group", help=f"fsGroup (default {DEFAULT_FS_GROUP}).")
]
RegistryOpt = Annotated[
    str | None, typer.Option("--registry", help="Pull the default image from this registry.")
]
TimeoutOpt = Annotated[
    float,
    typer.Option(
        "--timeout",
        help="How long to wait for each step: seconds, or a duration (90s, 5m).",
        parser=seconds,
        callback=positive_seconds,
    ),
]
FailOnOpt = Annotated[
    FailOn,
    typer.Option(
        "--fail-on",
        help="Exit 1 at this verdict or worse: error (fail or inconclusive; the default) or "
        "warn (a warning too).",
        case_sensitive=False,
    ),
]
KeepOpt = Annotated[bool, typer.Option("--keep", help="Leave the objects for debugging.")]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the manifests as YAML; create nothing.")
]


def placement_from_flags(
    command: str,
    *,
    node: str | None = None,
    node_selector: str | None = None,
    toleration: list[str] | None = None,
    cpu: str | None = None,
    memory: str | None = None,
) -> PodPlacement:
    """Build a PodPlacement from the placement flags, or a UsageError naming what is wrong."""
    from kubectl_storage.core.k8s.manifests import (  # noqa: PLC0415 - keep --help fast
        PodPlacement,
        Toleration,
        parse_node_selector,
    )

    try:
        return PodPlacement(
            node_name=node,
            node_selector=parse_node_selector(node_selector) if node_selector else {},
            tolerations=tuple(Toleration.parse(t) for t in toleration or ()),
            cpu=cpu,
            memory=memory,
        )
    except ValueError as exc:
        raise UsageError(str(exc), f"See kubectl storage {command} --help.") from exc
