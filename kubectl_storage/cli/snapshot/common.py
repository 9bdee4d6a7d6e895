"""Flags and pod settings shared by the snapshot subcommands that create pods."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kubectl_storage.cli.options import (
    parse_size,
    placement_from_flags,
)
from kubectl_storage.core.k8s.quantities import Size

if TYPE_CHECKING:
    from kubectl_storage.operations.snapshot import PodSettings

# -- options shared by the commands that create pods ------------------------------------------

ImageOpt = Annotated[str | None, typer.Option("--image", help="Toolbox image (sh, tar, tree).")]
RestoreClassOpt = Annotated[
    str | None,
    typer.Option(
        "--storage-class",
        "-s",
        help="Restore into this class (default: the source PVC's, else the driver's class).",
    ),
]
RestoreSizeOpt = Annotated[
    Size | None,
    typer.Option(
        "--size",
        "-z",
        help="Size of the restored PVC (default: its restoreSize).",
        parser=parse_size,
        metavar="SIZE",
    ),
]


def pod_settings_of(ctx: typer.Context) -> PodSettings:
    """The pod settings from the command's own flags (--node … --keep), which every snapshot
    subcommand that creates pods declares under the same names."""
    given = ctx.params
    return pod_settings(
        node=given.get("node"),
        node_selector=given.get("node_selector"),
        toleration=given.get("toleration"),
        run_as_user=given.get("run_as_user"),
        fs_group=given.get("fs_group"),
        image=given.get("image"),
        registry=given.get("registry"),
        timeout=float(given.get("timeout", 300)),
        keep=bool(given.get("keep", False)),
    )


def pod_settings(
    *,
    node: str | None,
    node_selector: str | None,
    toleration: list[str] | None,
    run_as_user: int | None,
    fs_group: int | None,
    image: str | None,
    registry: str | None,
    timeout: float,
    keep: bool,
) -> PodSettings:
    from kubectl_storage.core.k8s.manifests import (  # noqa: PLC0415 - loaded when the command runs, not for its --help
        PodIdentity,
    )
    from kubectl_storage.core.k8s.pod_defaults import image_from_flags  # noqa: PLC0415 - runtime only
    from kubectl_storage.operations.snapshot import PodSettings  # noqa: PLC0415 - runtime only

    placement = placement_from_flags(
        "snapshot", node=node, node_selector=node_selector, toleration=toleration
    )
    return PodSettings(
        image=image_from_flags(image, registry),
        placement=placement,
        identity=PodIdentity.from_flags(run_as_user, fs_group),
        timeout_s=timeout,
        keep=keep,
    )
