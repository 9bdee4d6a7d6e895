"""Kubelet path mapping and the join with pods, PVs, PVCs and StorageClasses."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.mount_audit.rules import audit_mounts
from kubectl_storage.core.nodes.kubelet_paths import (
    KIND_BLOCK,
    KIND_GLOBAL_MOUNT,
    KIND_POD_SUBPATH,
    KIND_POD_VOLUME,
    KubeletPath,
    parse_kubelet_path,
    volume_handle_sha256,
)
from kubectl_storage.core.nodes.mounts import parse_mounts
from kubectl_storage.core.nodes.volume_owners import resolve_mountpoints, resolve_volume

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
POD_UID = "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"
PV = "pvc-3c1d2e4f-1111-4222-8333-944455556666"
HANDLE = "rg#acct01#share01###default"
ROOT = "/var/lib/kubelet"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            f"{ROOT}/pods/{POD_UID}/volumes/kubernetes.io~csi/{PV}/mount",
            KubeletPath("", KIND_POD_VOLUME, "kubernetes.io~csi", POD_UID, PV),
        ),
        (
            f"{ROOT}/pods/{POD_UID}/volumes/kubernetes.io~nfs/shared-data",
            KubeletPath("", KIND_POD_VOLUME, "kubernetes.io~nfs", POD_UID, "shared-data"),
        ),
        (
            f"{ROOT}/pods/{POD_UID}/volumes/kubernetes.io~empty-dir/cache",
            KubeletPath("", KIND_POD_VOLUME, "kubernetes.io~empty-dir", POD_UID, "cache"),
        ),
        (
            f"{ROOT}/pods/{POD_UID}/volume-subpaths/data/app/0",
            KubeletPath("", KIND_POD_SUBPATH, None, POD_UID, "data"),
        ),
        (
            f"{ROOT}/pods/{POD_UID}/volumeDevices/kubernetes.io~csi/{PV}",
            KubeletPath("", KIND_BLOCK, "kubernetes.io~csi", POD_UID, PV, PV),
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/csi/file.csi.azure.com/{'a' * 64}/globalmount",
            KubeletPath(
                "", KIND_GLOBAL_MOUNT, "kubernetes.io~csi", None, None, None,
                "file.csi.azure.com", "a" * 64,
            ),
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/csi/pv/{PV}/globalmount",
            KubeletPath("", KIND_GLOBAL_MOUNT, "kubernetes.io~csi", None, PV, PV),
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/csi/volumeDevices/{PV}/dev/{POD_UID}",
            KubeletPath("", KIND_BLOCK, "kubernetes.io~csi", POD_UID, PV, PV),
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/csi/volumeDevices/publish/{PV}/{POD_UID}",
            KubeletPath("", KIND_BLOCK, "kubernetes.io~csi", POD_UID, PV, PV),
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/csi/volumeDevices/staging/{PV}",
            KubeletPath("", KIND_BLOCK, "kubernetes.io~csi", None, PV, PV),
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/iscsi/iface-default/10.0.0.1:3260-iqn.x-lun-0",
            None,
        ),
        (
            f"{ROOT}/plugins/kubernetes.io/rbd/mounts/pool-image-vol1",
            KubeletPath("", KIND_GLOBAL_MOUNT, "rbd", None, "pool-image-vol1"),
        ),
    ],
)  # fmt: skip
def test_parse_kubelet_path(path: str, expected: KubeletPath | None) -> None:
    parsed = parse_kubelet_path(path)
    if expected is None:
        assert parsed is None
    else:
        assert parsed == KubeletPath(
            path, *[getattr(expected, f) for f in list(expected.to_dict())[1:]]
        )


def test_paths_outside_kubelet_are_not_kubelet_paths() -> None:
    assert parse_kubelet_path("/mnt/data") is None
    assert parse_kubelet_path(f"{ROOT}/pods/{POD_UID}/etc-hosts") is None
    # CSI publishes at .../<pv>/mount; the directory itself is not the mount.
    assert (
        parse_kubelet_path(f"{ROOT}/pods/{POD_UID}/volumes/kubernetes.io~csi/{PV}/vol_data.json")
        is None
    )


def test_custom_kubelet_root() -> None:
    path = f"/var/lib/k0s/kubelet/pods/{POD_UID}/volumes/kubernetes.io~nfs/example-pv-testing"
    # Not a known root, but a pod directory under it says where the root is.
    found = parse_kubelet_path(path)
    assert found is not None
    assert found.pod_uid == POD_UID
    parsed = parse_kubelet_path(path, kubelet_root="/var/lib/k0s/kubelet/")
    assert parsed is not None
    assert parsed.volume_name == "example-pv-testing"
    parsed = parse_kubelet_path(path, kubelet_root=[ROOT, "/var/lib/k0s/kubelet"])
    assert parsed is not None
    assert parsed.pod_uid == POD_UID


def test_volume_handle_hash_matches_hashlib() -> None:
    assert volume_handle_sha256(HANDLE) == hashlib.sha256(HANDLE.encode()).hexdigest()


def pod(uid: str, name: str, volumes: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "metadata": {"uid": uid, "name": name, "namespace": "shop"},
        "spec": {"volumes": volumes},
    }


PODS = [
    pod(POD_UID, "web-0", [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}]),
    pod(
        "1a2b3c4d-0000-4000-8000-00000000abcd",
        "legacy",
        [{"name": "shared-data", "nfs": {"server": "10.0.0.7", "path": "/exports/data"}}],
    ),
]
PVS = [
    {
        "metadata": {
            "name": PV,
            "annotations": {"volume.beta.kubernetes.io/mount-options": "hard"},
        },
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "azurefile-nfs",
            "mountOptions": ["nconnect=4", "actimeo=30"],
            "claimRef": {"namespace": "shop", "name": "data-web-0"},
            "csi": {
                "driver": "file.csi.azure.com",
                "volumeHandle": HANDLE,
                "volumeAttributes": {"mountOptions": "noresvport"},
            },
        },
    },
]
PVCS = [
    {
        "metadata": {"name": "data-web-0", "namespace": "shop"},
        "spec": {"storageClassName": "azurefile-nfs", "volumeName": PV},
    }
]
CLASSES = [{"metadata": {"name": "azurefile-nfs"}, "mountOptions": ["nconnect=4", "actimeo=60"]}]


def test_resolve_csi_pod_volume() -> None:
    path = parse_kubelet_path(f"{ROOT}/pods/{POD_UID}/volumes/kubernetes.io~csi/{PV}/mount")
    assert path is not None
    owner = resolve_volume(path, pods=PODS, pvs=PVS, pvcs=PVCS, storage_classes=CLASSES)
    assert (owner.namespace, owner.pod_name, owner.pod_volume_name) == ("shop", "web-0", "data")
    assert (owner.pvc_name, owner.pv_name, owner.storage_class) == (
        "data-web-0",
        PV,
        "azurefile-nfs",
    )
    assert owner.csi_driver == "file.csi.azure.com"
    assert owner.volume_handle == HANDLE
    assert owner.access_modes == ("ReadWriteMany",)
    assert owner.mount_options == ("nconnect=4", "actimeo=30", "hard", "noresvport")
    assert owner.storage_class_mount_options == ("nconnect=4", "actimeo=60")
    assert owner.legacy_annotation is True
    data = owner.to_dict()
    assert data["pvc"] == "data-web-0"
    assert data["kubelet_path"]["kind"] == KIND_POD_VOLUME


def test_resolve_staging_path_by_hashed_handle() -> None:
    digest = volume_handle_sha256(HANDLE)
    staging = f"{ROOT}/plugins/kubernetes.io/csi/file.csi.azure.com/{digest}/globalmount"
    path = parse_kubelet_path(staging)
    assert path is not None
    owner = resolve_volume(path, pods=PODS, pvs=PVS, pvcs=PVCS)
    assert owner.pv_name == PV
    assert owner.pvc_name == "data-web-0"
    assert owner.namespace == "shop"
    assert owner.pod_name is None  # staging is per node, not per pod
    other = parse_kubelet_path(staging.replace(volume_handle_sha256(HANDLE), "b" * 64))
    assert other is not None
    assert resolve_volume(other, pvs=PVS).pv_name is None


def test_resolve_inline_in_tree_nfs_volume() -> None:
    path = parse_kubelet_path(
        f"{ROOT}/pods/1a2b3c4d-0000-4000-8000-00000000abcd/volumes/kubernetes.io~nfs/shared-data"
    )
    assert path is not None
    owner = resolve_volume(path, pods=PODS, pvs=PVS, pvcs=PVCS)
    assert (owner.pod_name, owner.pod_volume_name) == ("legacy", "shared-data")
    assert owner.pv_name is None
    assert owner.pvc_name is None
    assert owner.mount_options is None  # inline volumes cannot request options


def test_resolve_unknown_pod_keeps_what_the_path_says() -> None:
    path = parse_kubelet_path(f"{ROOT}/plugins/kubernetes.io/csi/pv/{PV}/globalmount")
    assert path is not None
    owner = resolve_volume(path, pvs=PVS)
    assert owner.pv_name == PV
    assert owner.pvc_name == "data-web-0"
    assert owner.namespace == "shop"


def test_end_to_end_with_the_nfs_audit() -> None:
    mounts = parse_mounts((FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo").read_text())
    owners = resolve_mountpoints(
        [m.mountpoint for m in mounts], pods=PODS, pvs=PVS, pvcs=PVCS, storage_classes=CLASSES
    )
    staging = next(mp for mp in owners if mp.endswith("/globalmount") and "azure" in mp)
    assert owners[staging].pv_name is None  # the fixture's hash is not sha256 of HANDLE
    publish = next(mp for mp in owners if PV in mp)
    contexts = {mp: owner.volume_context(rw_node_count=3) for mp, owner in owners.items()}
    audits = {a.mount.mountpoint: a for a in audit_mounts(mounts, contexts=contexts)}
    audit = audits[publish]
    assert audit.pv_name == PV
    assert audit.profile == "azure-files"
    assert audit.profile_reason == "csi-driver"
    ids = {f.id for f in audit.findings}
    assert "NFSK8S002" in ids  # class says actimeo=60, PV says 30
    assert "NFSK8S005" in ids  # legacy annotation
    assert "NFSK8S001" in ids  # actimeo=30 requested, kernel shows defaults


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        # the test cluster's nodes 2+ (tests/cluster, --root-dir=/var/lib/tk8s-kubelet-<i>)
        (
            "/var/lib/tk8s-kubelet-2/pods/0b5e6f7a-1234-4cde-8f00-123456789abc/volumes/"
            "kubernetes.io~csi/pvc-1/mount",
            "pod-volume",
        ),
        (
            "/mnt/disk1/kubelet/pods/0b5e6f7a-1234-4cde-8f00-123456789abc/volume-subpaths/"
            "pvc-1/app/0",
            "pod-subpath",
        ),
        (
            "/var/lib/tk8s-kubelet-2/plugins/kubernetes.io/csi/hostpath.csi.k8s.io/abc/globalmount",
            "global-mount",
        ),
    ],
)
def test_a_kubelet_root_of_its_own_is_recognised(path: str, kind: str) -> None:
    parsed = parse_kubelet_path(path)
    assert parsed is not None
    assert parsed.kind == kind


@pytest.mark.parametrize(
    "path",
    [
        "/srv/backups/pods/0b5e6f7a-1234-4cde-8f00-123456789abc/other",  # not a volume dir
        "/data/pods/not-a-uid/volumes/kubernetes.io~csi/pvc-1/mount",  # no pod UID
        "/var/lib/docker/overlay2/abc/merged",
    ],
)
def test_other_paths_are_not_taken_for_kubelet_ones(path: str) -> None:
    assert parse_kubelet_path(path) is None
