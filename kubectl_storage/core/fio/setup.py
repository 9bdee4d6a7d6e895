"""What a benchmark ran on: the class, its provisioner and parameters, the volume as the pod
mounted it, and the nodes. Numbers without this cannot be compared across clusters.

Read from the StorageClass and Node objects and from the benchmark pod's own
``/proc/self/mountinfo`` (the kernel's view of the volume: file system, source, the mount and
super-block options in force). The CSI driver's version is not in any Kubernetes object (a
CSIDriver has no version field, and a CSINode lists only names and node ids), so the
provisioner's name is what is reported; the driver's image tag is a matter for its namespace.

:func:`setup_differences` lists what differs between two setups, shown beside the numbers
when a report is compared with a saved baseline.

Pure module: objects and text in, dataclasses out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubectl_storage.core.k8s.objects import dig, labels_of, name_of, section
from kubectl_storage.core.nodes.mount_model import MountParseError
from kubectl_storage.core.nodes.mounts import parse_mountinfo

INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


@dataclass(frozen=True)
class NodeSetup:
    """A node a benchmark pod ran on."""

    name: str
    kernel: str | None = None
    os_image: str | None = None
    kubelet: str | None = None
    instance_type: str | None = None
    zone: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "name": self.name,
            "kernel": self.kernel,
            "os_image": self.os_image,
            "kubelet": self.kubelet,
            "instance_type": self.instance_type,
            "zone": self.zone,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NodeSetup:
        """Read one back from a saved report."""
        return cls(
            name=str(data.get("name", "")),
            **{key: _text(data.get(key)) for key in _NODE_FIELDS},
        )


_NODE_FIELDS = ("kernel", "os_image", "kubelet", "instance_type", "zone")


@dataclass(frozen=True)
class VolumeSetup:
    """The volume as the benchmark pod's kernel mounted it (absent in Block mode)."""

    fs_type: str
    source: str
    options: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {"fs_type": self.fs_type, "source": self.source, "options": list(self.options)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> VolumeSetup:
        """Read one back from a saved report."""
        return cls(
            fs_type=str(data.get("fs_type", "")),
            source=str(data.get("source", "")),
            options=tuple(str(o) for o in data.get("options") or ()),
        )


@dataclass(frozen=True)
class TargetSetup:
    """Everything known about where one class's numbers were measured.

    Attributes:
        storage_class: the class (``None`` for a given PVC whose class is unset).
        provisioner: the class's provisioner (the CSI driver's name).
        parameters: the class's parameters, as given to the driver.
        volume_binding_mode: ``Immediate`` or ``WaitForFirstConsumer``.
        volume: the mount the pod saw, ``None`` in Block mode or when it could not be read.
        nodes: the nodes the benchmark pods ran on.
    """

    storage_class: str | None
    provisioner: str | None = None
    parameters: Mapping[str, str] = field(default_factory=dict)
    volume_binding_mode: str | None = None
    volume: VolumeSetup | None = None
    nodes: tuple[NodeSetup, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "storage_class": self.storage_class,
            "provisioner": self.provisioner,
            "parameters": dict(self.parameters),
            "volume_binding_mode": self.volume_binding_mode,
            "volume": self.volume.to_dict() if self.volume else None,
            "nodes": [node.to_dict() for node in self.nodes],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TargetSetup:
        """Read one back from a saved report."""
        volume = data.get("volume")
        return cls(
            storage_class=_text(data.get("storage_class")),
            provisioner=_text(data.get("provisioner")),
            parameters={str(k): str(v) for k, v in (data.get("parameters") or {}).items()},
            volume_binding_mode=_text(data.get("volume_binding_mode")),
            volume=VolumeSetup.from_dict(volume) if isinstance(volume, Mapping) else None,
            nodes=tuple(NodeSetup.from_dict(n) for n in data.get("nodes") or ()),
        )


def node_setup(node: Mapping[str, Any]) -> NodeSetup:
    """What a Node object says about the machine."""
    info = section(node, "status", "nodeInfo")
    labels = labels_of(node)
    return NodeSetup(
        name=name_of(node),
        kernel=_text(info.get("kernelVersion")),
        os_image=_text(info.get("osImage")),
        kubelet=_text(info.get("kubeletVersion")),
        instance_type=next((str(labels[k]) for k in INSTANCE_TYPE_LABELS if k in labels), None),
        zone=next((str(labels[k]) for k in ZONE_LABELS if k in labels), None),
    )


def volume_setup(mountinfo: str, mount_path: str) -> VolumeSetup | None:
    """The mount at ``mount_path`` in a pod's ``/proc/self/mountinfo``, None if not there."""
    try:
        entries = parse_mountinfo(mountinfo)
    except MountParseError:
        return None
    found = [e for e in entries if e.mountpoint == mount_path and e.visible]
    if not found:
        return None
    entry = found[-1]
    options = tuple(k if v is True else f"{k}={v}" for k, v in entry.options.items())
    return VolumeSetup(fs_type=entry.fstype, source=entry.source, options=options)


def target_setup(
    storage_class: Mapping[str, Any] | None,
    nodes: Sequence[Mapping[str, Any]],
    volume: VolumeSetup | None,
) -> TargetSetup:
    """The setup of one class's run from its StorageClass and Node objects."""
    return TargetSetup(
        storage_class=name_of(storage_class) or None if storage_class else None,
        provisioner=_text(dig(storage_class, "provisioner")),
        parameters={str(k): str(v) for k, v in section(storage_class, "parameters").items()},
        volume_binding_mode=_text(dig(storage_class, "volumeBindingMode")),
        volume=volume,
        nodes=tuple(node_setup(node) for node in nodes),
    )


def setup_differences(current: TargetSetup, baseline: TargetSetup) -> tuple[str, ...]:
    """What differs between two setups, one line each (``kernel: 6.1.0 -> 6.8.0``)."""
    lines: list[str] = []

    def compare(what: str, old: object, new: object) -> None:
        if old != new:
            lines.append(f"{what}: {_shown(old)} -> {_shown(new)}")

    compare("storage class", baseline.storage_class, current.storage_class)
    compare("provisioner", baseline.provisioner, current.provisioner)
    compare("volume binding", baseline.volume_binding_mode, current.volume_binding_mode)
    for key in sorted(set(baseline.parameters) | set(current.parameters)):
        compare(f"parameter {key}", baseline.parameters.get(key), current.parameters.get(key))
    old_volume, new_volume = baseline.volume, current.volume
    compare("file system", old_volume and old_volume.fs_type, new_volume and new_volume.fs_type)
    old_options = set(old_volume.options) if old_volume else set()
    new_options = set(new_volume.options) if new_volume else set()
    if old_options != new_options:
        gone, added = sorted(old_options - new_options), sorted(new_options - old_options)
        lines.append(
            "mount options: " + ", ".join([*(f"-{o}" for o in gone), *(f"+{o}" for o in added)])
        )
    for what in _NODE_FIELDS:
        old = sorted({getattr(n, what) or "-" for n in baseline.nodes})
        new = sorted({getattr(n, what) or "-" for n in current.nodes})
        compare(f"node {what.replace('_', ' ')}", ", ".join(old), ", ".join(new))
    return tuple(lines)


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _shown(value: object) -> str:
    return "-" if value in (None, "") else str(value)
