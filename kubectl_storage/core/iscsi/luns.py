"""Block devices → the claims that use them, and the sanlun-like view of each LUN: claim → LUN
→ dm device → paths, each path active, passive or failed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kubectl_storage.core.iscsi.multipath import MultipathPath
from kubectl_storage.core.iscsi.node_parse import ParsedNode
from kubectl_storage.core.iscsi.report import ClaimRef, LunPath, LunRow, path_failed
from kubectl_storage.core.iscsi.sanlun_table import SanlunDevice, devices_by_name
from kubectl_storage.core.iscsi.sessions import IscsiDisk, IscsiSession
from kubectl_storage.core.k8s.objects import dig
from kubectl_storage.core.nodes.mount_model import MountEntry
from kubectl_storage.core.nodes.volume_objects import VolumeObjects
from kubectl_storage.core.nodes.volume_owners import VolumeOwner

TRIDENT_CSI_DRIVER = "csi.trident.netapp.io"


@dataclass
class DeviceOwner:
    """The claim behind one block device, gathered over the mounts that use it."""

    namespace: str | None = None
    pvc: str | None = None
    pv: str | None = None
    storage_class: str | None = None
    pods: list[str] = field(default_factory=list)
    mountpoints: list[str] = field(default_factory=list)

    def add(self, owner: VolumeOwner, mountpoint: str) -> None:
        """Fill what is still unknown from ``owner``; note its pod and mount point."""
        self.namespace = self.namespace or owner.namespace or None
        self.pvc = self.pvc or owner.pvc_name or None
        self.pv = self.pv or owner.pv_name or owner.kubelet_path.volume_name or None
        self.storage_class = self.storage_class or owner.storage_class or None
        if owner.pod_name and owner.pod_name not in self.pods:
            self.pods.append(owner.pod_name)
        self.mountpoints.append(mountpoint)

    def claim(self) -> ClaimRef:
        """The report's view: the claim and its pods."""
        return ClaimRef(self.namespace, self.pvc, self.pv, self.storage_class, tuple(self.pods))


def device_owners(node: str, facts: ParsedNode, objects: VolumeObjects) -> dict[str, DeviceOwner]:
    """Block device name (``dm-3``, ``sdb``, or a /dev/mapper name) → the claim that uses it."""
    if not facts.mounts:
        return {}
    visible = [entry for entry in facts.mounts if entry.visible]
    resolved = objects.resolve((entry.mountpoint for entry in visible), node)
    owners: dict[str, DeviceOwner] = {}
    for entry in visible:
        owner = resolved.get(entry.mountpoint)
        device = _device_of(entry, facts.dm_names)
        if owner is None or device is None:
            continue
        owners.setdefault(device, DeviceOwner()).add(owner, entry.mountpoint)
    return owners


def _device_of(entry: MountEntry, dm_names: Mapping[str, str]) -> str | None:
    """The block device behind a mount: its ``/dev/…`` source, or for a raw block volume (a
    bind mount of the device node) the node's name in devtmpfs."""
    if entry.source.startswith("/dev/"):
        name = entry.source[len("/dev/") :]
    elif entry.fstype == "devtmpfs" and entry.root and entry.root != "/":
        name = entry.root.lstrip("/")
    else:
        return None
    if name.startswith("mapper/"):
        mapper = name[len("mapper/") :]
        return dm_names.get(mapper, mapper)
    return name


def bare_devices_in_use(owners: Mapping[str, DeviceOwner]) -> set[str]:
    """``sdX`` devices kubelet uses directly (no dm-multipath in between)."""
    return {device for device in owners if device.startswith("sd")}


def runs_trident(node: str, objects: VolumeObjects) -> bool:
    """A Trident node: a Trident node plugin pod runs on it, or a pod on it uses a PV of the
    Trident CSI driver (MP003 is then a warning, ISCSI012 applies)."""
    claims: set[tuple[object, object]] = set()
    for pod in objects.pods:
        spec = pod.get("spec") or {}
        if spec.get("nodeName") != node:
            continue
        for container in spec.get("containers") or []:
            if "trident" in str(container.get("image", "")):
                return True
        namespace = dig(pod, "metadata", "namespace")
        for volume in spec.get("volumes") or []:
            claim = dig(volume, "persistentVolumeClaim", "claimName")
            if claim:
                claims.add((namespace, claim))
    if not claims:
        return False
    volumes = {
        dig(pvc, "spec", "volumeName")
        for pvc in objects.pvcs
        if (dig(pvc, "metadata", "namespace"), dig(pvc, "metadata", "name")) in claims
    }
    return any(
        dig(pv, "spec", "csi", "driver") == TRIDENT_CSI_DRIVER
        for pv in objects.pvs
        if dig(pv, "metadata", "name") in volumes
    )


def path_role(path: MultipathPath, group_status: str) -> str:
    """``failed``, ``active`` (in the group I/O goes to) or ``passive`` (a standby group)."""
    if path_failed(path):
        return "failed"
    return "active" if group_status == "active" else "passive"


def lun_view(facts: ParsedNode, owners: Mapping[str, DeviceOwner]) -> tuple[LunRow, ...]:
    """One row per LUN, as ``sanlun lun show -p`` shows them: who uses it, its LUN number and
    target, the dm device, and each path with its role. Bare iSCSI disks get a row too."""
    disks = {
        disk.disk: (session, disk)
        for session in facts.sessions
        for disk in session.disks
        if disk.disk
    }
    sanlun = {key: lun for lun in facts.sanlun for key in (lun.host_device, lun.dm_device) if key}
    by_device = devices_by_name(facts.sanlun_devices)
    rows = []
    covered: set[str] = set()
    for mpath in facts.maps:
        paths = []
        for group in mpath.path_groups:
            for path in group.paths:
                session = disks[path.dev][0] if path.dev and path.dev in disks else None
                covered.add(path.dev or "")
                paths.append(
                    LunPath(
                        dev=path.dev,
                        hctl=path.hctl,
                        portal=_portal(session),
                        group_status=group.status,
                        role=path_role(path, group.status),
                        dm_state=path.dm_state,
                        path_state=path.path_state,
                        online_state=path.online_state,
                    )
                )
        lun, target = _lun_and_target(mpath.paths, disks)
        ontap = sanlun.get(mpath.wwid) or (sanlun.get(mpath.alias) if mpath.alias else None)
        rows.append(
            LunRow(
                owner=_claim_of(owners, mpath.dm, mpath.alias, mpath.wwid),
                lun=lun,
                target=target,
                wwid=mpath.wwid,
                alias=mpath.alias,
                dm=mpath.dm,
                vendor=mpath.vendor,
                product=mpath.product,
                size=mpath.size,
                ontap_path=f"{ontap.vserver}:{ontap.lun_path}"
                if ontap
                else _ontap_paths(by_device, (path.dev for path in mpath.paths)),
                paths=tuple(paths),
            )
        )
    for session in facts.sessions:
        for disk in session.disks:
            if not disk.disk or disk.disk in covered:
                continue
            bare = LunPath(
                dev=disk.disk,
                hctl=disk.hctl,
                portal=_portal(session),
                group_status=None,
                role="no-multipath",
                dm_state=None,
                path_state=None,
                online_state=disk.state,
            )
            rows.append(
                LunRow(
                    owner=_claim_of(owners, disk.disk),
                    lun=disk.lun,
                    target=session.target,
                    paths=(bare,),
                    ontap_path=_ontap_paths(by_device, (disk.disk,)),
                )
            )
    return tuple(rows)


def _ontap_paths(
    by_device: Mapping[str, SanlunDevice], devices: Iterable[str | None]
) -> str | None:
    """The ONTAP LUN(s) ``sanlun lun show`` names for these host devices (paired by ``/dev``
    node): ``vserver:/vol/…``; several, comma-separated, when the paths reach more than one
    (SnapMirror active sync presents one LUN from two clusters)."""
    found: list[str] = []
    for device in devices:
        row = by_device.get(device or "")
        if row is not None and row.ontap_path not in found:
            found.append(row.ontap_path)
    return ", ".join(found) or None


def _claim_of(owners: Mapping[str, DeviceOwner], *names: str | None) -> ClaimRef:
    for name in names:
        if name and name in owners:
            return owners[name].claim()
    return ClaimRef()


def _lun_and_target(
    paths: Iterable[MultipathPath], disks: Mapping[str, tuple[IscsiSession, IscsiDisk]]
) -> tuple[int | None, str | None]:
    """The LUN number and target from the session that owns a path, else from an H:C:T:L."""
    lun: int | None = None
    for path in paths:
        if path.dev is not None and path.dev in disks:
            session, disk = disks[path.dev]
            return disk.lun, session.target
        if lun is None and path.hctl:
            lun = int(path.hctl.rsplit(":", 1)[1])
    return lun, None


def _portal(session: IscsiSession | None) -> str | None:
    if session is None:
        return None
    return session.current_portal or session.persistent_portal
