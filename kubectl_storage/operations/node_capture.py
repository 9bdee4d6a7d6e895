"""What node commands read besides the node itself: the ``--from-file`` files (read here, then
grouped into nodes by :func:`~kubectl_storage.core.nodes.capture.group_captures`) and the
cluster's pods, volumes, claims and classes (:func:`read_volume_objects`). Shared by mount-audit
and iscsi; what the texts and objects mean is core's (``core.nodes``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.nodes.capture import (
    CaptureFiles,
    CaptureInput,
    first_line,
    group_captures,
)
from kubectl_storage.core.nodes.kubectl_objects import kubernetes_items
from kubectl_storage.core.nodes.paste import unquote_mail
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.errors import ClusterError, UsageError
from kubectl_storage.kube.api import KubeApi

log = logging.getLogger(__name__)

# ---------------------------------------------------------------------------------------------
# --from-file
# ---------------------------------------------------------------------------------------------

# A Kubernetes node name (RFC 1123 subdomain; capitals allowed, as hostnames are often typed).
_NODE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")


def split_node_assignment(argument: str | Path) -> tuple[str | None, Path]:
    """``--from-file NODE=FILE`` → ``(NODE, FILE)``; any other argument → ``(None, path)``.

    A path that exists as given is a path, ``=`` or not; otherwise the part before the first
    ``=`` must read as a node name (letters, digits, ``-`` and ``.``), or the whole argument is
    taken as a path (``./a=b/mountinfo`` stays a path).
    """
    text = str(argument)
    path = Path(text)
    if path.exists():
        return None, path
    node, sep, rest = text.partition("=")
    if sep and rest and _NODE_NAME.match(node):
        return node, Path(rest)
    return None, path


def read_capture_files(
    paths: Sequence[str | Path], node_name: str | None, classify: Callable[[Path, str], str]
) -> CaptureFiles:
    """Read ``--from-file`` inputs and group them by node.

    Args:
        paths: the arguments, in the order given: ``FILE`` or ``NODE=FILE``
            (:func:`split_node_assignment`).
        node_name: the node of every file given without ``NODE=`` (default
            :data:`~kubectl_storage.core.nodes.capture.DEFAULT_NODE`).
        classify: ``classify(path, text) -> kind``, raising :class:`UsageError` for a file it
            cannot place. Kubernetes object captures are recognised before it is asked.

    Raises:
        UsageError: a file cannot be read or its format is not recognised; ``--node-name`` is
            given though every file names its node; only Kubernetes objects were given.
    """
    inputs: list[CaptureInput] = []
    items: list[JsonDict] = []
    for argument in paths:
        node, path = split_node_assignment(argument)
        text = _read(argument, path)
        found = kubernetes_items(text, load_yaml_documents)
        if found is not None:
            items.extend(found)
            continue
        text, levels = unquote_mail(text)
        inputs.append(CaptureInput(node, str(path), classify(path, text), text, levels))
    if node_name and inputs and all(given.node is not None for given in inputs):
        raise UsageError(
            f"--node-name {node_name}: every --from-file names its node (NODE=FILE)",
            "Drop --node-name, or give the files of that node without NODE=.",
        )
    if not inputs:
        raise UsageError(
            "--from-file: only Kubernetes objects were given, no node's capture",
            "Add the node's files (mountinfo, mountstats, multipath -ll, iscsiadm ...).",
        )
    return group_captures(inputs, node_name, items)


def unknown_format(path: Path, text: str, what: str, hint: str) -> UsageError:
    """The error for a ``--from-file`` input in no format the command reads: ``what`` it is not,
    and how it starts (or that it is empty)."""
    return UsageError(
        f"--from-file {path}: {what}"
        + (f" (it starts with {first_line(text)!r})" if text.strip() else " (it is empty)"),
        hint,
    )


def load_yaml_documents(text: str) -> list[Any] | None:
    """The documents of a YAML text (empty ones left out), or None when it is not YAML; the
    YAML decoder :func:`~kubectl_storage.core.nodes.kubectl_objects.kubernetes_items` is given."""
    import yaml  # noqa: PLC0415 - only for YAML captures

    try:
        return [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError:
        return None


def _read(argument: str | Path, path: Path) -> str:
    shown = str(argument)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except IsADirectoryError as exc:
        raise UsageError(f"--from-file {shown}: is a directory", "Give files.") from exc
    except OSError as exc:
        what = str(path) if shown != str(path) else "it"
        raise UsageError(f"--from-file {shown}: cannot read {what}: {exc.strerror}", "") from exc


# ---------------------------------------------------------------------------------------------
# The cluster side: volumes, claims and classes, read once
# ---------------------------------------------------------------------------------------------


def read_volume_objects(api: KubeApi) -> VolumeObjects:
    """Read what the mapping needs, once for all nodes; what cannot be read is left empty."""
    found: dict[str, tuple[JsonDict, ...]] = {}
    for name, kind, selector in (
        ("pods", kinds.POD, None),
        ("pvs", kinds.PV, None),
        ("pvcs", kinds.PVC, None),
        ("storage_classes", kinds.STORAGE_CLASS, None),
        ("events", kinds.EVENT, "reason=FailedMount"),
    ):
        try:
            found[name] = tuple(api.list(kind, all_namespaces=True, field_selector=selector))
        except ClusterError as exc:
            log.warning("cannot list %s (%s); volumes are mapped without them", name, exc.message)
            found[name] = ()
    return VolumeObjects(**found)
