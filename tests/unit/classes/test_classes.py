"""ClassList: the facts per class, the notes a user must see, and the rendered forms."""

from __future__ import annotations

import io
import json
from typing import Any

from kubectl_storage.core.classes import ClassList, build_class_list, looks_like_nfs
from kubectl_storage.render.classes import write_classes_table
from kubectl_storage.render.structured import write_json


def make_storage_class(
    name: str = "fast",
    provisioner: str = "hostpath.csi.k8s.io",
    default: bool = False,
    **spec: Any,
) -> dict[str, Any]:
    annotations = {"storageclass.kubernetes.io/is-default-class": "true"} if default else {}
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name, "annotations": annotations},
        "provisioner": provisioner,
        **spec,
    }


def make_snapshot_class(
    name: str = "snap", driver: str = "hostpath.csi.k8s.io", default: bool = False
) -> dict[str, Any]:
    annotations = {"snapshot.storage.kubernetes.io/is-default-class": "true"} if default else {}
    return {
        "metadata": {"name": name, "annotations": annotations},
        "driver": driver,
        "deletionPolicy": "Delete",
    }


def make_csi_driver(name: str = "hostpath.csi.k8s.io", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": spec}


def note_ids(report: Any) -> list[str]:
    return [n.id for n in report.notes]


def test_facts_per_class() -> None:
    report = build_class_list(
        [
            make_storage_class(
                "csi-hostpath-sc",
                default=True,
                reclaimPolicy="Retain",
                volumeBindingMode="WaitForFirstConsumer",
                allowVolumeExpansion=True,
                mountOptions=["debug"],
                parameters={"a": "1"},
            )
        ],
        [make_snapshot_class("csi-hostpath-snapclass", default=True)],
        [
            make_csi_driver(
                attachRequired=False,
                fsGroupPolicy="File",
                volumeLifecycleModes=["Persistent", "Ephemeral"],
            )
        ],
    )
    sc = report.storage_classes[0]
    assert sc.is_default
    assert sc.reclaim_policy == "Retain"
    assert sc.volume_binding_mode == "WaitForFirstConsumer"
    assert sc.allow_volume_expansion
    assert sc.mount_options == ("debug",)
    assert sc.snapshot_classes == ("csi-hostpath-snapclass",)
    assert sc.has_csi_driver
    driver = report.csi_drivers[0]
    assert driver.attach_required is False
    assert driver.fs_group_policy == "File"
    assert driver.lifecycle_modes == ("Persistent", "Ephemeral")
    assert report.notes == ()


def test_defaults_of_unset_fields() -> None:
    report = build_class_list([make_storage_class()], [], [make_csi_driver()])
    sc = report.storage_classes[0]
    assert (sc.reclaim_policy, sc.volume_binding_mode, sc.allow_volume_expansion) == (
        "Delete",
        "Immediate",
        False,
    )
    assert report.csi_drivers[0].attach_required is True


def test_no_default_class() -> None:
    report = build_class_list([make_storage_class()], [make_snapshot_class()], [make_csi_driver()])
    assert note_ids(report) == ["CLS001"]


def test_two_default_classes() -> None:
    report = build_class_list(
        [make_storage_class("a", default=True), make_storage_class("b", default=True)],
        [make_snapshot_class()],
        [make_csi_driver()],
    )
    assert note_ids(report) == ["CLS002"]
    assert "a, b" in report.notes[0].message


def test_nfs_class_without_mount_options() -> None:
    nfs = make_storage_class("nfs", provisioner="nfs.csi.k8s.io", default=True)
    tuned = make_storage_class(
        "nfs-tuned", provisioner="nfs.csi.k8s.io", mountOptions=["nfsvers=4.1"]
    )
    report = build_class_list([nfs, tuned], None, [make_csi_driver("nfs.csi.k8s.io")])
    cls003 = [n for n in report.notes if n.id == "CLS003"]
    assert len(cls003) == 1
    assert "StorageClass nfs " in cls003[0].message


def test_nfs_detection() -> None:
    assert looks_like_nfs("file.csi.azure.com", {"protocol": "nfs"})
    assert not looks_like_nfs("file.csi.azure.com", {"protocol": "smb"})
    assert looks_like_nfs("csi.trident.netapp.io", {"backendType": "ontap-nas"})
    assert looks_like_nfs("efs.csi.aws.com", {})
    assert not looks_like_nfs("ebs.csi.aws.com", {})


def test_provisioner_without_csidriver_and_missing_snapshot_api() -> None:
    report = build_class_list(
        [make_storage_class("local-path", provisioner="rancher.io/local-path", default=True)],
        None,
        [],
    )
    assert note_ids(report) == ["CLS004", "CLS006"]
    assert report.snapshot_api_available is False


def test_in_tree_provisioner_is_not_flagged() -> None:
    report = build_class_list(
        [make_storage_class("local", provisioner="kubernetes.io/no-provisioner", default=True)],
        [],
        [],
    )
    assert note_ids(report) == []


def test_csi_class_without_snapshot_class() -> None:
    report = build_class_list(
        [make_storage_class(default=True)],
        [make_snapshot_class(driver="other")],
        [make_csi_driver()],
    )
    assert note_ids(report) == ["CLS005"]


def test_two_default_snapshot_classes_for_one_driver() -> None:
    report = build_class_list(
        [make_storage_class(default=True)],
        [make_snapshot_class("s1", default=True), make_snapshot_class("s2", default=True)],
        [make_csi_driver()],
    )
    assert note_ids(report) == ["CLS007"]


def _sample_report() -> ClassList:
    return build_class_list(
        [
            make_storage_class("csi-hostpath-sc", default=True, allowVolumeExpansion=True),
            make_storage_class(
                "local-path",
                provisioner="rancher.io/local-path",
                volumeBindingMode="WaitForFirstConsumer",
            ),
        ],
        [make_snapshot_class("csi-hostpath-snapclass")],
        [make_csi_driver(attachRequired=False, fsGroupPolicy="File")],
    )


def test_json_contract() -> None:
    report = _sample_report().to_dict()
    assert list(report)[:2] == ["apiVersion", "kind"]
    assert report["apiVersion"] == "kubectl-storage/v1alpha1"
    assert report["kind"] == "ClassList"
    assert set(report["storageClasses"][0]) == {
        "name",
        "default",
        "provisioner",
        "reclaimPolicy",
        "volumeBindingMode",
        "allowVolumeExpansion",
        "mountOptions",
        "parameters",
        "snapshotClasses",
        "csiDriver",
    }


def test_golden_table(golden) -> None:
    out = io.StringIO()
    write_classes_table(_sample_report(), out, False)
    golden("classes-basic.txt", out.getvalue())


def test_golden_wide_table(golden) -> None:
    out = io.StringIO()
    write_classes_table(_sample_report(), out, True)
    golden("classes-basic-wide.txt", out.getvalue())


def test_golden_json(golden) -> None:
    out = io.StringIO()
    write_json(_sample_report().to_dict(), out)
    json.loads(out.getvalue())
    golden("classes-basic.json", out.getvalue())
