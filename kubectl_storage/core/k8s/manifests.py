"""Manifest builders: plain dicts for every object we create, also printed by --dry-run.

Benchmark and browse pods fit the ``restricted`` Pod Security level: non-root, no privilege
escalation, all capabilities dropped, RuntimeDefault seccomp, read-only root filesystem. Node
inspection pods are the one exception and are built separately, pinned to their node.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.k8s.pod_defaults import DEFAULT_FS_GROUP, DEFAULT_UID

#: where our pods write (an emptyDir; their root file system is read-only)
SCRATCH_DIRECTORY = "/tmp"


class VolumeMode(StrEnum):
    """How a volume reaches the pod (PVC ``spec.volumeMode``)."""

    FILESYSTEM = "Filesystem"
    BLOCK = "Block"


#: GID of the "disk" group that owns block device nodes on common distributions.
DISK_GROUP_GID = 6


@dataclass(frozen=True)
class Toleration:
    """A toleration as given on the command line: KEY[=VALUE][:EFFECT]."""

    key: str
    value: str | None = None
    effect: str | None = None

    @classmethod
    def parse(cls, text: str) -> Toleration:
        """Parse ``key=value:NoSchedule``, ``key:NoExecute``, ``key`` or ``*`` (all taints).

        Raises:
            ValueError: on an empty key or an unknown effect.
        """
        body, _, effect = text.partition(":")
        key, _, value = body.partition("=")
        if not key:
            raise ValueError(f"toleration {text!r} has no key (form: KEY[=VALUE][:EFFECT])")
        if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ValueError(
                f"toleration {text!r}: effect must be NoSchedule, PreferNoSchedule or NoExecute"
            )
        return cls(key=key, value=value or None, effect=effect or None)

    def to_dict(self) -> dict[str, str]:
        """Kubernetes shape."""
        if self.key == "*":
            return {"operator": "Exists", **({"effect": self.effect} if self.effect else {})}
        out = {"key": self.key, "operator": "Equal" if self.value else "Exists"}
        if self.value:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        return out


@dataclass(frozen=True)
class PodPlacement:
    """Where and how big a pod is: node, selectors, tolerations, resources."""

    node_name: str | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[Toleration, ...] = ()
    cpu: str | None = None
    memory: str | None = None
    #: A pod ``affinity`` our command adds itself (e.g. the restore on another node).
    affinity: Mapping[str, Any] | None = None

    @property
    def effective_tolerations(self) -> tuple[Toleration, ...]:
        """The tolerations the pod gets: a named node's NoSchedule taints (a cordon among
        them) do not keep the pod off it; its NoExecute taints still do."""
        if self.node_name:
            return (*self.tolerations, NAMED_NODE_TOLERATION)
        return self.tolerations

    def apply(self, spec: JsonDict, container: JsonDict) -> None:
        """Write the placement into a pod spec and its container.

        A named node is required through the scheduler (a nodeAffinity on the node's name),
        not by ``spec.nodeName``: a pod bound by name skips the scheduler, whose volume binder
        is what provisions a WaitForFirstConsumer claim, so the claim would stay Pending."""
        affinity = copy.deepcopy(dict(self.affinity)) if self.affinity else {}
        if self.node_name:
            _require_node(affinity, self.node_name)
        if affinity:
            spec["affinity"] = affinity
        if self.node_selector:
            spec["nodeSelector"] = dict(self.node_selector)
        if self.effective_tolerations:
            spec["tolerations"] = [t.to_dict() for t in self.effective_tolerations]
        resources: dict[str, str] = {}
        if self.cpu:
            resources["cpu"] = self.cpu
        if self.memory:
            resources["memory"] = self.memory
        if resources:
            # Requests equal limits: a benchmark must not be throttled differently between runs.
            container["resources"] = {"requests": dict(resources), "limits": dict(resources)}


#: What ``--node NAME`` tolerates on that node: NoSchedule taints, as a pod bound by name would.
NAMED_NODE_TOLERATION = Toleration(key="*", effect="NoSchedule")


def _require_node(affinity: dict[str, Any], node: str) -> None:
    """Add "on this node" to a pod affinity, in every nodeSelectorTerm (terms are ORed)."""
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.setdefault("nodeSelectorTerms", []) or [{}]
    for term in terms:
        term.setdefault("matchFields", []).append(
            {"key": "metadata.name", "operator": "In", "values": [node]}
        )
    required["nodeSelectorTerms"] = terms


@dataclass(frozen=True)
class PodIdentity:
    """UID and fsGroup for non-root pods; None leaves them to the cluster (OpenShift assigns)."""

    run_as_user: int | None = DEFAULT_UID
    fs_group: int | None = DEFAULT_FS_GROUP

    @classmethod
    def from_flags(cls, run_as_user: int | None, fs_group: int | None) -> PodIdentity | None:
        """--run-as-user and --fs-group; None when neither is given (preflight then decides
        from the namespace)."""
        if run_as_user is None and fs_group is None:
            return None
        return cls(run_as_user if run_as_user is not None else DEFAULT_UID, fs_group)


def parse_node_selector(text: str) -> dict[str, str]:
    """Parse ``k=v[,k2=v2]`` as given to --node-selector.

    Raises:
        ValueError: when a pair has no ``=`` or an empty key.
    """
    selector: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"node selector {pair!r} is not KEY=VALUE")
        selector[key] = value
    return selector


def build_pvc(
    name: str,
    namespace: str,
    storage_class: str,
    size: str,
    *,
    volume_mode: str = "Filesystem",
    access_mode: str = "ReadWriteOnce",
    data_source: JsonDict | None = None,
) -> JsonDict:
    """A PersistentVolumeClaim (optionally restored from a snapshot via ``data_source``)."""
    spec: JsonDict = {
        "storageClassName": storage_class,
        "accessModes": [access_mode],
        "volumeMode": str(volume_mode),
        "resources": {"requests": {"storage": size}},
    }
    if data_source:
        spec["dataSource"] = data_source
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def build_configmap(name: str, namespace: str, data: dict[str, str]) -> JsonDict:
    """A ConfigMap holding text files (fio job files, scripts)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": dict(data),
    }


def restricted_security_context(identity: PodIdentity) -> tuple[JsonDict, JsonDict]:
    """(pod securityContext, container securityContext) that pass the restricted level."""
    pod: JsonDict = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    if identity.run_as_user is not None:
        pod["runAsUser"] = identity.run_as_user
        pod["runAsGroup"] = identity.run_as_user
    if identity.fs_group is not None:
        pod["fsGroup"] = identity.fs_group
    container: JsonDict = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
    }
    return pod, container


def build_workload_pod(
    name: str,
    namespace: str,
    image: str,
    *,
    pvc_name: str | None,
    mount_path: str = "/data",
    block_device_path: str | None = None,
    read_only: bool = False,
    configmap_name: str | None = None,
    configmap_path: str = "/etc/kubectl-storage",
    identity: PodIdentity = PodIdentity(),
    placement: PodPlacement = PodPlacement(),
    command: list[str] | None = None,
    active_deadline_s: int | None = None,
) -> JsonDict:
    """A restricted-level pod we exec into (fio, browse, checks).

    By default the container only sleeps, and the work runs by exec, so output comes back with
    its exit status; ``command`` may start work at once and then idle (fio's first run does, to
    save the exec round trips; its output is collected by exec all the same). The pod is
    deleted as soon as we are done.
    """
    pod_sc, container_sc = restricted_security_context(identity)
    container: JsonDict = {
        "name": "toolbox",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "command": command or ["sleep", "86400"],
        "securityContext": container_sc,
        "volumeMounts": [{"name": "tmp", "mountPath": SCRATCH_DIRECTORY}],
    }
    volumes: list[JsonDict] = [{"name": "tmp", "emptyDir": {}}]
    if pvc_name:
        claim = {"claimName": pvc_name, "readOnly": read_only}
        volumes.append({"name": "data", "persistentVolumeClaim": claim})
        if block_device_path:
            container["volumeDevices"] = [{"name": "data", "devicePath": block_device_path}]
            # kubelet does not apply fsGroup to raw devices; the node's device node is owned by
            # root:disk (GID 6 on Debian, Ubuntu, RHEL and Alpine), so join that group instead
            # of running as root.
            pod_sc["supplementalGroups"] = [DISK_GROUP_GID]
        else:
            container["volumeMounts"].append(
                {"name": "data", "mountPath": mount_path, "readOnly": read_only}
            )
    if configmap_name:
        container["volumeMounts"].append(
            {"name": "config", "mountPath": configmap_path, "readOnly": True}
        )
        volumes.append({"name": "config", "configMap": {"name": configmap_name}})
    spec: JsonDict = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 0,
        "securityContext": pod_sc,
        "containers": [container],
        "volumes": volumes,
    }
    if active_deadline_s:
        spec["activeDeadlineSeconds"] = active_deadline_s
    placement.apply(spec, container)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def build_node_inspection_pod(
    name: str,
    namespace: str,
    node_name: str,
    image: str,
    *,
    privileged: bool,
    active_deadline_s: int = 300,
) -> JsonDict:
    """A short-lived pod on one node that reads the host: hostPID, host root read-only at /host.

    hostPID lets it read /proc/1/mountinfo and /proc/1/mountstats of the host's mount namespace
    (/proc/self is the container's own). It tolerates every taint so NotReady-but-running and
    tainted nodes can still be inspected, and activeDeadlineSeconds ends it even if we vanish.
    A privileged pod runs the host's own tools, so it also shares the host's network namespace:
    iscsiadm and multipathd reach their daemons through abstract unix sockets, which belong to a
    network namespace (from the pod's own, iscsiadm prints "Unknown" for the connection and
    iscsid states and multipathd answers nothing; seen on the node lab's real node).
    """
    # Root in the container: /proc/1/mountstats and chroot into the host need it, and the
    # toolbox image's default user is 1000. Capabilities are dropped unless privileged, all but
    # SYSLOG: dmesg reads the kernel log through syslog(2), which needs it where
    # kernel.dmesg_restrict is 1 (Debian, Ubuntu, RHEL); it grants reading, not writing, the log.
    container_sc: JsonDict = {"readOnlyRootFilesystem": True, "runAsUser": 0, "runAsNonRoot": False}
    if privileged:
        container_sc["privileged"] = True
    else:
        container_sc.update(
            {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"], "add": ["SYSLOG"]},
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "nodeName": node_name,
            "hostPID": True,
            "hostNetwork": privileged,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "terminationGracePeriodSeconds": 0,
            "activeDeadlineSeconds": active_deadline_s,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": "inspect",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["sleep", str(active_deadline_s)],
                    "securityContext": container_sc,
                    "volumeMounts": [
                        {"name": "host", "mountPath": "/host", "readOnly": True},
                        {"name": "tmp", "mountPath": SCRATCH_DIRECTORY},
                    ],
                }
            ],
            "volumes": [
                {"name": "host", "hostPath": {"path": "/", "type": "Directory"}},
                {"name": "tmp", "emptyDir": {}},
            ],
        },
    }
