"""Kubelet mount paths: what a path kubelet mounted a volume at says about it (rules.md C.1).

kubelet mounts volumes at paths that name the pod and the volume:

* ``<root>/pods/<pod-uid>/volumes/kubernetes.io~csi/<pv-name>/mount`` (CSI publish),
  ``.../kubernetes.io~nfs/<volume>``, ``.../kubernetes.io~empty-dir/<volume>`` (in-tree plugins);
* ``<root>/pods/<pod-uid>/volume-subpaths/<volume>/<container>/<index>`` (subPath bind mounts);
* ``<root>/pods/<pod-uid>/volumeDevices/<plugin>/<pv-name>`` (block volumes in a pod);
* ``<root>/plugins/kubernetes.io/csi/<driver>/<sha256(volumeHandle)>/globalmount`` (CSI staging),
  and the older ``<root>/plugins/kubernetes.io/csi/pv/<pv-name>/globalmount``;
* ``<root>/plugins/kubernetes.io/csi/volumeDevices/[staging/|publish/]<pv-name>[/dev]/...`` (block).

:func:`parse_kubelet_path` reads one path; the root is a parameter because k3s, k0s and
containerized kubelets use other directories. Joining a path with the pods, PVs, PVCs and
StorageClasses behind it is :mod:`kubectl_storage.core.nodes.volume_owners`.

Pure: strings in, frozen dataclasses out, no I/O.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_KUBELET_ROOT = "/var/lib/kubelet"

KIND_POD_VOLUME = "pod-volume"
KIND_POD_SUBPATH = "pod-subpath"
KIND_GLOBAL_MOUNT = "global-mount"
KIND_BLOCK = "block"

CSI_PLUGIN = "kubernetes.io~csi"


@dataclass(frozen=True)
class KubeletPath:
    """What a kubelet-managed path says about the volume mounted there.

    Attributes:
        path: the path as given.
        kind: ``pod-volume``, ``pod-subpath``, ``global-mount`` or ``block``.
        plugin: the volume plugin directory name (``kubernetes.io~csi``, ``kubernetes.io~nfs``).
        pod_uid: the pod's UID, for per-pod paths.
        volume_name: the directory naming the volume (the PV name for PV-backed volumes, the
            pod's volume name for inline ones, the subPath's volume name).
        pv_name: set when the layout guarantees the name is a PV (old globalmount, block).
        csi_driver: the CSI driver, for staging paths that name it.
        volume_handle_sha256: the hashed volume handle of new-style staging paths.
    """

    path: str
    kind: str
    plugin: str | None = None
    pod_uid: str | None = None
    volume_name: str | None = None
    pv_name: str | None = None
    csi_driver: str | None = None
    volume_handle_sha256: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "path": self.path,
            "kind": self.kind,
            "plugin": self.plugin,
            "pod_uid": self.pod_uid,
            "volume_name": self.volume_name,
            "pv_name": self.pv_name,
            "csi_driver": self.csi_driver,
            "volume_handle_sha256": self.volume_handle_sha256,
        }


def parse_kubelet_path(
    path: str, *, kubelet_root: str | Sequence[str] = DEFAULT_KUBELET_ROOT
) -> KubeletPath | None:
    """Read a mount point as a kubelet volume path.

    Args:
        path: a mount point, e.g. from mountinfo.
        kubelet_root: kubelet's ``--root-dir`` (or several candidates, e.g. ``/var/lib/kubelet``
            and ``/var/lib/k0s/kubelet``).

    Returns:
        The parsed path, or None when the path is not one kubelet manages.
    """
    roots = [kubelet_root] if isinstance(kubelet_root, str) else list(kubelet_root)
    for root in roots:
        prefix = root.rstrip("/") + "/"
        if path.startswith(prefix):
            parts = [part for part in path[len(prefix) :].split("/") if part]
            parsed = _parse_relative(path, parts)
            if parsed is not None:
                return parsed
    # A kubelet with a --root-dir of its own: its layout under the root is the same, and a pod
    # directory is named by the pod's UID, so the root is whatever comes before that.
    found = _OTHER_ROOT.match(path)
    if found:
        rest = path[len(found.group("root")) + 1 :]
        return _parse_relative(path, [part for part in rest.split("/") if part])
    return None


#: ``<root>/pods/<uid>/volumes|volume-subpaths|volumeDevices/...`` or
#: ``<root>/plugins/kubernetes.io/...`` under a root that is not one of the known ones.
_OTHER_ROOT = re.compile(
    r"^(?P<root>/.+?)/(?:pods/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/"
    r"(?:volumes|volume-subpaths|volumeDevices)/|plugins/kubernetes\.io/)"
)


def _parse_relative(path: str, parts: list[str]) -> KubeletPath | None:
    if len(parts) >= 5 and parts[0] == "pods":
        return _parse_pod_path(path, parts)
    if len(parts) >= 4 and parts[:3] == ["plugins", "kubernetes.io", "csi"]:
        return _parse_csi_plugin_path(path, parts[3:])
    if len(parts) >= 5 and parts[:2] == ["plugins", "kubernetes.io"] and "mounts" in parts:
        # In-tree attachable plugins: plugins/kubernetes.io/<plugin>/mounts/<name>.
        index = parts.index("mounts")
        if index + 1 < len(parts):
            return KubeletPath(
                path, KIND_GLOBAL_MOUNT, plugin=parts[2], volume_name=parts[index + 1]
            )
    return None


def _parse_pod_path(path: str, parts: list[str]) -> KubeletPath | None:
    pod_uid, area = parts[1], parts[2]
    if area == "volumes" and len(parts) >= 5:
        plugin, name = parts[3], parts[4]
        # csi publishes at .../<name>/mount; in-tree plugins mount at .../<name> itself.
        if plugin == CSI_PLUGIN and parts[5:] not in ([], ["mount"]):
            return None
        return KubeletPath(path, KIND_POD_VOLUME, plugin=plugin, pod_uid=pod_uid, volume_name=name)
    if area == "volume-subpaths" and len(parts) >= 4:
        return KubeletPath(path, KIND_POD_SUBPATH, pod_uid=pod_uid, volume_name=parts[3])
    if area == "volumeDevices" and len(parts) >= 5:
        plugin, name = parts[3], parts[4]
        return KubeletPath(
            path, KIND_BLOCK, plugin=plugin, pod_uid=pod_uid, volume_name=name, pv_name=name
        )
    return None


def _parse_csi_plugin_path(path: str, rest: list[str]) -> KubeletPath | None:
    if rest[0] == "volumeDevices" and len(rest) >= 3:
        # volumeDevices/staging/<pv>, volumeDevices/publish/<pv>/<pod>, volumeDevices/<pv>/dev/<pod>
        if rest[1] in ("staging", "publish"):
            pv_name = rest[2]
            pod_uid = rest[3] if rest[1] == "publish" and len(rest) > 3 else None
        else:
            pv_name = rest[1]
            pod_uid = rest[3] if rest[2] == "dev" and len(rest) > 3 else None
        return KubeletPath(
            path,
            KIND_BLOCK,
            plugin=CSI_PLUGIN,
            pod_uid=pod_uid,
            volume_name=pv_name,
            pv_name=pv_name,
        )
    if len(rest) >= 3 and rest[2] == "globalmount":
        if rest[0] == "pv":
            return KubeletPath(
                path, KIND_GLOBAL_MOUNT, plugin=CSI_PLUGIN, volume_name=rest[1], pv_name=rest[1]
            )
        return KubeletPath(
            path,
            KIND_GLOBAL_MOUNT,
            plugin=CSI_PLUGIN,
            csi_driver=rest[0],
            volume_handle_sha256=rest[1],
        )
    return None


def volume_handle_sha256(volume_handle: str) -> str:
    """The directory name kubelet gives a CSI volume's staging path (hex SHA-256 of the handle)."""
    return hashlib.sha256(volume_handle.encode()).hexdigest()
