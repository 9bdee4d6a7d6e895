"""What node commands read besides the node itself: captures grouped by node, and the volumes,
claims and classes behind kubelet's mount paths. Shared by mount-audit and iscsi.

Offline (``--from-file``), the files given together are one node's, named by ``--node-name`` or
else :data:`DEFAULT_NODE`; ``--from-file NODE=FILE`` puts a file on a named node, so one run can
hold several nodes. ``kubectl get … -o json`` (or ``-o yaml``) captures among them are not node
files: they are read as the cluster's objects, as the live path reads them, for every node.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.nodes.kubelet_paths import VolumeContext, VolumeOwner, resolve_mountpoints
from kubectl_storage.core.nodes.mounts import LineNote, unquote_mail
from kubectl_storage.errors import ClusterError, UsageError
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.operations.node_inspection import NodeOutput

log = logging.getLogger(__name__)

#: Where kubelets keep volumes: the default, k0s and MicroK8s.
KUBELET_ROOTS = (
    "/var/lib/kubelet",
    "/var/lib/k0s/kubelet",
    "/var/snap/microk8s/common/var/lib/kubelet",
)


# ---------------------------------------------------------------------------------------------
# Inputs: what one node gave us, from a debug pod or from files
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeCapture:
    """The raw texts of one node, by kind (a live section name or a detected file format).

    Several files of one kind (two multipath captures, say) stay separate texts. Offline,
    ``sources`` names the file of each text (same order as ``texts``) and ``warnings`` holds
    what reading the files changed (an e-mail quote prefix removed); live both are empty.
    """

    node: str
    texts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    error: str | None = None
    inputs: tuple[str, ...] = ()
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def all(self, kind: str) -> tuple[str, ...]:
        """Every non-blank text of one kind."""
        return tuple(text for text in self.texts.get(kind, ()) if text.strip())

    def first(self, kind: str) -> str:
        """The first non-blank text of one kind, or ``""``."""
        texts = self.all(kind)
        return texts[0] if texts else ""

    def labelled(self, kind: str) -> tuple[tuple[str, str], ...]:
        """``(file, text)`` for every non-blank text of one kind (the kind's name for live
        sections)."""
        texts = self.texts.get(kind, ())
        labels = self.sources.get(kind, ())
        return tuple(
            (labels[index] if index < len(labels) else kind, text)
            for index, text in enumerate(texts)
            if text.strip()
        )

    @property
    def from_files(self) -> bool:
        """Whether the texts came from ``--from-file`` (line notes become warnings then)."""
        return bool(self.sources)

    @classmethod
    def from_output(cls, output: NodeOutput) -> NodeCapture:
        """A live node's sections, one text each."""
        return cls(
            node=output.node,
            texts={name: (text,) for name, text in output.sections.items()},
            error=output.error,
            inputs=tuple(output.sections),
        )


def line_warnings(capture: NodeCapture, label: str, notes: Iterable[LineNote]) -> list[str]:
    """One warning per skipped or rejoined line of a captured file, in line order; none for a
    live node (the kernel's and the tools' own output is not pasted text)."""
    if not capture.from_files:
        return []
    return [note.describe(label) for note in sorted(notes, key=lambda note: note.line)]


#: The node's name when files are given without --node-name or NODE=.
DEFAULT_NODE = "node"

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


@dataclass(frozen=True)
class CaptureFiles:
    """What ``--from-file`` gave: one capture per node, and the cluster's objects if any file
    was a ``kubectl get -o json|yaml`` capture (None otherwise)."""

    nodes: list[NodeCapture]
    objects: VolumeObjects | None = None


def read_capture_files(
    paths: Sequence[str | Path], node_name: str | None, classify: Callable[[Path, str], str]
) -> CaptureFiles:
    """Read ``--from-file`` inputs and group them by node.

    Args:
        paths: the arguments, in the order given: ``FILE`` or ``NODE=FILE``
            (:func:`split_node_assignment`).
        node_name: the node of every file given without ``NODE=`` (default
            :data:`DEFAULT_NODE`).
        classify: ``classify(path, text) -> kind``, raising :class:`UsageError` for a file it
            cannot place. Kubernetes object captures are recognised before it is asked.

    Raises:
        UsageError: a file cannot be read or its format is not recognised; ``--node-name`` is
            given though every file names its node; only Kubernetes objects were given.
    """
    grouped: dict[str, dict[str, list[str]]] = {}
    sources: dict[str, dict[str, list[str]]] = {}
    inputs: dict[str, list[str]] = defaultdict(list)
    warnings: dict[str, list[str]] = defaultdict(list)
    items: list[JsonDict] = []
    unassigned = 0
    for argument in paths:
        node, path = split_node_assignment(argument)
        text = _read(argument, path)
        found = kubernetes_items(text)
        if found is not None:
            items.extend(found)
            continue
        text, levels = unquote_mail(text)
        kind = classify(path, text)
        if node is None:
            unassigned += 1
            node = node_name or DEFAULT_NODE
        grouped.setdefault(node, {}).setdefault(kind, []).append(text)
        sources.setdefault(node, {}).setdefault(kind, []).append(str(path))
        inputs[node].append(f"{path} ({kind})")
        if levels:
            warnings[node].append(
                f"{path}: the e-mail quote prefix ({'>' * levels}) was removed from every line"
            )
    if node_name and not unassigned and grouped:
        raise UsageError(
            f"--node-name {node_name}: every --from-file names its node (NODE=FILE)",
            "Drop --node-name, or give the files of that node without NODE=.",
        )
    if not grouped:
        raise UsageError(
            "--from-file: only Kubernetes objects were given, no node's capture",
            "Add the node's files (mountinfo, mountstats, multipath -ll, iscsiadm ...).",
        )
    objects = volume_objects_from_items(items) if items else None
    if objects is not None:
        for node in inputs:
            inputs[node].append(f"kubernetes objects ({_count_kinds(items)})")
    return CaptureFiles(
        nodes=[
            NodeCapture(
                node=node,
                texts={kind: tuple(texts) for kind, texts in by_kind.items()},
                inputs=tuple(inputs[node]),
                sources={kind: tuple(names) for kind, names in sources[node].items()},
                warnings=tuple(warnings[node]),
            )
            for node, by_kind in grouped.items()
        ],
        objects=objects,
    )


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
# kubectl get -o json|yaml captures
# ---------------------------------------------------------------------------------------------

_OBJECT_FIELDS: Mapping[str, str] = {
    kinds.POD.kind: "pods",
    kinds.PV.kind: "pvs",
    kinds.PVC.kind: "pvcs",
    kinds.STORAGE_CLASS.kind: "storage_classes",
    kinds.EVENT.kind: "events",
}


def kubernetes_items(text: str) -> list[JsonDict] | None:
    """The objects of a ``kubectl get … -o json`` (or ``-o yaml``) capture, Lists unpacked
    (``kubectl get pv,pvc,sc``), several documents one after another allowed; None when the
    text is not Kubernetes objects (multipathd JSON, any node file).
    """
    stripped = text.strip()
    documents: list[Any] | None = None
    if stripped.startswith(("{", "[")):
        documents = _json_documents(stripped)
    elif re.search(r"^apiVersion:", stripped, re.M) and re.search(r"^kind:", stripped, re.M):
        documents = _yaml_documents(stripped)
    if not documents:
        return None
    items: list[JsonDict] = []
    for document in documents:
        found = _objects_of(document)
        if found is None:
            return None
        items.extend(found)
    return items


def _json_documents(text: str) -> list[Any] | None:
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    index = 0
    while index < len(text):
        try:
            document, index = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            return None
        documents.append(document)
        while index < len(text) and text[index].isspace():
            index += 1
    return documents


def _yaml_documents(text: str) -> list[Any] | None:
    import yaml  # noqa: PLC0415 - only for YAML captures

    try:
        return [document for document in yaml.safe_load_all(text) if document is not None]
    except yaml.YAMLError:
        return None


def _objects_of(document: Any) -> list[JsonDict] | None:
    """A document's objects: a List's items (their kind from the List's when missing), an
    object, or a JSON array of either; None when it is none of them."""
    if isinstance(document, list):
        objects: list[JsonDict] = []
        for element in document:
            found = _objects_of(element)
            if found is None:
                return None
            objects.extend(found)
        return objects
    if not isinstance(document, dict) or not document.get("apiVersion"):
        return None
    kind = str(document.get("kind") or "")
    if isinstance(document.get("items"), list) and kind.endswith("List"):
        item_kind = kind[: -len("List")] or None
        return [
            item if item.get("kind") or not item_kind else {**item, "kind": item_kind}
            for item in document["items"]
            if isinstance(item, dict)
        ]
    return [document] if kind and isinstance(document.get("metadata"), dict) else None


def volume_objects_from_items(items: Iterable[JsonDict]) -> VolumeObjects:
    """Pods, PVs, PVCs, StorageClasses and FailedMount events out of any objects (the rest is
    left out), as the live path lists them."""
    found: dict[str, list[JsonDict]] = defaultdict(list)
    for item in items:
        name = _OBJECT_FIELDS.get(str(item.get("kind")))
        if name == "events" and item.get("reason") != "FailedMount":
            continue
        if name:
            found[name].append(item)
    return VolumeObjects(**{name: tuple(objects) for name, objects in found.items()})


def _count_kinds(items: Iterable[JsonDict]) -> str:
    counts = Counter(str(item.get("kind") or "?") for item in items)
    return ", ".join(f"{count} {kind}" for kind, count in sorted(counts.items()))


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (for messages about unreadable output)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:200]
    return ""


# ---------------------------------------------------------------------------------------------
# The cluster side: volumes, claims and classes, read once
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VolumeObjects:
    """Pods, PVs, PVCs, StorageClasses and FailedMount events, as ``kubectl get -o json`` items."""

    pods: tuple[JsonDict, ...] = ()
    pvs: tuple[JsonDict, ...] = ()
    pvcs: tuple[JsonDict, ...] = ()
    storage_classes: tuple[JsonDict, ...] = ()
    events: tuple[JsonDict, ...] = ()

    def resolve(
        self, mountpoints: Iterable[str], node: str | None = None
    ) -> dict[str, VolumeOwner]:
        """Kubelet mount points mapped to the objects behind them.

        With ``node``, the join first uses only the node's pods and their claims and volumes
        (a large cluster has many PVs, and staging paths are matched by hashing each PV's
        handle); what stays unowned is looked up again in everything.
        """
        points = list(mountpoints)
        if node is None:
            return self._resolve(points, self)
        owners = self._resolve(points, self._on_node(node))
        orphans = [mp for mp, owner in owners.items() if not owner.pv_name and not owner.pod_name]
        if orphans:
            owners.update(self._resolve(orphans, self))
        return owners

    @staticmethod
    def _resolve(mountpoints: Iterable[str], objects: VolumeObjects) -> dict[str, VolumeOwner]:
        return resolve_mountpoints(
            mountpoints,
            pods=objects.pods,
            pvs=objects.pvs,
            pvcs=objects.pvcs,
            storage_classes=objects.storage_classes,
            kubelet_root=KUBELET_ROOTS,
        )

    def _on_node(self, node: str) -> VolumeObjects:
        pods = tuple(p for p in self.pods if dig(p, "spec", "nodeName") == node)
        claims = {
            (dig(p, "metadata", "namespace"), dig(v, "persistentVolumeClaim", "claimName"))
            for p in pods
            for v in dig(p, "spec", "volumes") or []
        }
        pvcs = tuple(
            c
            for c in self.pvcs
            if (dig(c, "metadata", "namespace"), dig(c, "metadata", "name")) in claims
        )
        volumes = {dig(c, "spec", "volumeName") for c in pvcs}
        pvs = tuple(v for v in self.pvs if dig(v, "metadata", "name") in volumes)
        return VolumeObjects(pods, pvs, pvcs, self.storage_classes)

    def volume_context(self, owner: VolumeOwner) -> VolumeContext:
        """The NFS rules' view of one volume: requested options, RW node count, mount errors."""
        usage = self._usage
        pv = owner.pv_name
        if pv is None or not self.pods:
            return owner.volume_context()
        messages = tuple(
            message for uid in usage.pod_uids.get(pv, ()) for message in usage.events.get(uid, ())
        )
        return owner.volume_context(
            rw_node_count=len(usage.rw_nodes.get(pv, ())), mount_events=messages
        )

    @cached_property
    def _usage(self) -> _Usage:
        return _Usage.build(self)


@dataclass
class _Usage:
    """Which nodes mount each PV read-write, and the pods (and their mount errors) using it."""

    rw_nodes: dict[str, set[str]]
    pod_uids: dict[str, list[str]]
    events: dict[str, list[str]]

    @classmethod
    def build(cls, objects: VolumeObjects) -> _Usage:
        claims = {
            (dig(pvc, "metadata", "namespace"), dig(pvc, "metadata", "name")): dig(
                pvc, "spec", "volumeName"
            )
            for pvc in objects.pvcs
        }
        rw_nodes: dict[str, set[str]] = defaultdict(set)
        pod_uids: dict[str, list[str]] = defaultdict(list)
        for pod in objects.pods:
            if dig(pod, "status", "phase") in ("Succeeded", "Failed"):
                continue
            namespace = dig(pod, "metadata", "namespace")
            for volume in dig(pod, "spec", "volumes") or []:
                claim = volume.get("persistentVolumeClaim") or {}
                pv = claims.get((namespace, claim.get("claimName")))
                if not pv:
                    continue
                pod_uids[pv].append(dig(pod, "metadata", "uid"))
                node = dig(pod, "spec", "nodeName")
                if node and not claim.get("readOnly"):
                    rw_nodes[pv].add(node)
        events: dict[str, list[str]] = defaultdict(list)
        for event in objects.events:
            uid = dig(event, "involvedObject", "uid")
            if uid and event.get("message"):
                events[uid].append(str(event["message"]))
        return cls(dict(rw_nodes), dict(pod_uids), dict(events))


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
