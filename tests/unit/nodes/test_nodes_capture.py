"""--from-file inputs as the node commands read them: files grouped into nodes (one node unless
NODE=FILE), the ``=`` in real paths, e-mail quoting, and ``kubectl get -o json|yaml`` captures
read as the cluster's objects.

Texts written inline here are INVENTED (small stand-ins for files); the captures are fixtures
(tests/fixtures/*/SOURCES.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.nodes.capture import DEFAULT_NODE
from kubectl_storage.core.nodes.kubectl_objects import kubernetes_items, volume_objects_from_items
from kubectl_storage.core.nodes.paste import unquote_mail
from kubectl_storage.errors import UsageError
from kubectl_storage.operations.iscsi import iscsi_files
from kubectl_storage.operations.mount_audit import audit_files
from kubectl_storage.operations.node_capture import (
    load_yaml_documents,
    read_capture_files,
    split_node_assignment,
)
from tests.conftest import FIXTURES

MOUNTINFO = FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo"
MOUNTSTATS = FIXTURES / "mountstats" / "invented-edge-cases.mountstats"
BUNDLE = FIXTURES / "kubernetes" / "constructed-anf-bundle.pv-pvc-sc.json"
PODS = FIXTURES / "kubernetes" / "constructed-anf-bundle.pods.json"
POD_VOLUME = (
    "/var/lib/kubelet/pods/0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a/volumes/kubernetes.io~csi/"
    "pvc-3c1d2e4f-1111-4222-8333-944455556666/mount"
)


def kind_of(path: Path, text: str) -> str:
    return path.suffix.lstrip(".") or "text"


# ---------------------------------------------------------------------------------------------
# Grouping
# ---------------------------------------------------------------------------------------------


def test_files_given_together_are_one_node() -> None:
    files = read_capture_files([MOUNTINFO, MOUNTSTATS], None, kind_of)
    (node,) = files.nodes
    assert node.node == DEFAULT_NODE == "node"
    assert set(node.texts) == {"mountinfo", "mountstats"}
    assert node.sources == {"mountinfo": (str(MOUNTINFO),), "mountstats": (str(MOUNTSTATS),)}
    assert files.objects is None


def test_node_name_names_the_one_node() -> None:
    (node,) = read_capture_files([MOUNTINFO, MOUNTSTATS], "w1", kind_of).nodes
    assert node.node == "w1"


def test_node_equals_file_gives_several_nodes(tmp_path: Path) -> None:
    files = read_capture_files(
        [f"w1={MOUNTINFO}", f"w2={MOUNTSTATS}", f"w1={MOUNTSTATS}"], None, kind_of
    )
    nodes = {node.node: node for node in files.nodes}
    assert list(nodes) == ["w1", "w2"]
    assert set(nodes["w1"].texts) == {"mountinfo", "mountstats"}
    assert set(nodes["w2"].texts) == {"mountstats"}


def test_files_without_node_go_to_node_name_next_to_assigned_ones() -> None:
    files = read_capture_files([f"w2={MOUNTSTATS}", MOUNTINFO], "w1", kind_of)
    assert sorted(node.node for node in files.nodes) == ["w1", "w2"]


def test_node_name_with_every_file_assigned_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="every --from-file names its node"):
        read_capture_files([f"w1={MOUNTINFO}"], "w9", kind_of)


def test_a_path_with_an_equals_sign_that_exists_is_a_path(tmp_path: Path) -> None:
    odd = tmp_path / "node=a.mountinfo"
    odd.write_text(MOUNTINFO.read_text())
    assert split_node_assignment(odd) == (None, odd)
    (node,) = read_capture_files([odd], None, kind_of).nodes
    assert node.node == "node"
    # In a directory whose name holds "=": the whole argument exists, so it is a path.
    folder = tmp_path / "w1=dump"
    folder.mkdir()
    (folder / "mountinfo").write_text("x")
    assert split_node_assignment(folder / "mountinfo") == (None, folder / "mountinfo")


def test_equals_sign_before_something_that_is_not_a_node_name_is_a_path() -> None:
    assert split_node_assignment("/no/such/a=b") == (None, Path("/no/such/a=b"))
    assert split_node_assignment("worker-1.example.com=/x/y") == (
        "worker-1.example.com",
        Path("/x/y"),
    )
    assert split_node_assignment("w1=") == (None, Path("w1="))


def test_unreadable_assigned_file_names_the_file() -> None:
    with pytest.raises(UsageError, match="--from-file w1=/no/such: cannot read /no/such"):
        read_capture_files(["w1=/no/such"], None, kind_of)


# ---------------------------------------------------------------------------------------------
# E-mail quoting
# ---------------------------------------------------------------------------------------------


def test_mail_quote_prefix_is_removed_when_every_line_has_it() -> None:
    assert unquote_mail("> a\n>\n>  b\n") == ("a\n\n b\n", 1)
    assert unquote_mail(">> a\n> > b\n") == ("a\nb\n", 2)
    assert unquote_mail("> a\nb\n") == ("> a\nb\n", 0)
    (node,) = read_capture_files(
        [FIXTURES / "nfsstat" / "linux-nfs-quoted-reply.nfsstat"], None, kind_of
    ).nodes
    assert node.first("nfsstat").startswith("[root@nfsvmd07 ~]# nfsstat -m\n/tmp/mnt from")
    assert node.warnings == (
        f"{FIXTURES / 'nfsstat' / 'linux-nfs-quoted-reply.nfsstat'}: "
        "the e-mail quote prefix (>) was removed from every line",
    )


# ---------------------------------------------------------------------------------------------
# kubectl get -o json|yaml
# ---------------------------------------------------------------------------------------------


def test_kubectl_lists_are_objects_not_node_files() -> None:
    files = read_capture_files([MOUNTINFO, BUNDLE, PODS], None, kind_of)
    (node,) = files.nodes
    assert set(node.texts) == {"mountinfo"}
    assert node.inputs[-1] == (
        "kubernetes objects (1 PersistentVolume, 1 PersistentVolumeClaim, 1 Pod, 1 StorageClass)"
    )
    objects = files.objects
    assert objects is not None
    assert [pv["metadata"]["name"] for pv in objects.pvs] == [
        "pvc-3c1d2e4f-1111-4222-8333-944455556666"
    ]
    assert [sc["parameters"]["backendType"] for sc in objects.storage_classes] == [
        "azure-netapp-files"
    ]
    # The PodList's items carry no kind (as the API returns them): the List's names it.
    assert [pod["kind"] for pod in objects.pods] == ["Pod"]


def test_several_documents_arrays_and_yaml() -> None:
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "a"}}
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "b"}}
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        "reason": "FailedMount",
        "message": "mount failed",
    }
    other_event = {**event, "reason": "Scheduled"}
    concatenated = json.dumps(pv) + "\n" + json.dumps([pvc, event, other_event])
    items = kubernetes_items(concatenated, load_yaml_documents)
    assert items is not None
    objects = volume_objects_from_items(items)
    assert (len(objects.pvs), len(objects.pvcs), len(objects.events)) == (1, 1, 1)
    yaml_text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: storage.k8s.io/v1\n  kind: StorageClass\n  metadata:\n    name: anf\n"
        "  provisioner: csi.trident.netapp.io\n"
    )
    items = kubernetes_items(yaml_text, load_yaml_documents)
    assert items is not None
    assert volume_objects_from_items(items).storage_classes[0]["metadata"]["name"] == "anf"


@pytest.mark.parametrize(
    "relative",
    [
        "multipathd/ubiquity_list_maps_json_with_prompt.txt",
        "multipathd/vexxhost_pure_assembled.json",
        "mountinfo/invented-kubelet-node.mountinfo",
        "iscsid/iscsid.conf.open-iscsi",
    ],
)
def test_node_files_are_not_taken_for_kubernetes_objects(relative: str) -> None:
    assert kubernetes_items((FIXTURES / relative).read_text(), load_yaml_documents) is None


def test_objects_alone_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="only Kubernetes objects"):
        read_capture_files([BUNDLE], None, kind_of)


def test_bundle_gives_requested_options_and_the_class_profile_offline() -> None:
    report = audit_files([MOUNTINFO, BUNDLE, PODS], None, None).to_dict()
    (node,) = report["nodes"]
    (mount,) = [m for m in node["mounts"] if m["mountpoint"] == POD_VOLUME]
    assert (mount["namespace"], mount["pod"], mount["pvc"]) == ("team-a", "web-0", "shared")
    assert (mount["storage_class"], mount["driver"]) == ("anf-premium", "csi.trident.netapp.io")
    assert (mount["profile"], mount["profile_reason"]) == ("anf", "storage-class")
    assert mount["requested_options"] == [
        "nfsvers=4.1",
        "nconnect=8",
        "rsize=262144",
        "wsize=262144",
        "hard",
    ]
    ids = {f["id"]: f for f in mount["findings"]}
    assert "nconnect: requested 8, effective 4" in ids["NFSK8S001"]["message"]
    assert "NFS021" in ids  # rsize/wsize 1048576 above ANF's 262144
    (volume,) = [v for v in node["volumes"] if v["mountpoint"] == POD_VOLUME]
    assert (volume["pvc"], volume["storage_class"]) == ("shared", "anf-premium")


def test_without_bundle_the_same_mount_knows_no_request() -> None:
    report = audit_files([MOUNTINFO], None, None)
    (node,) = report.nodes
    (mount,) = [m for m in node.mounts if m.mountpoint == POD_VOLUME]
    assert mount.requested_options is None
    assert (mount.profile, mount.owner.pvc) == ("azure-files", None)
    (document,) = [
        m for m in report.to_dict()["nodes"][0]["mounts"] if m["mountpoint"] == POD_VOLUME
    ]
    assert (document["requested_options"], document["pvc"]) == (None, None)


def test_bundle_names_the_claim_behind_a_lun(tmp_path: Path) -> None:
    # INVENTED mountinfo: a kubelet staging mount and the pod's mount of /dev/mapper/mpatha
    # (the map of the stockage multipath fixture).
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "25 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/root rw\n"
        "201 25 253:2 / /var/lib/kubelet/pods/aaaa-1111/volumes/kubernetes.io~csi/pvc-db/mount "
        "rw,relatime shared:80 - ext4 /dev/mapper/mpatha rw\n"
    )
    bundle = tmp_path / "objects.json"
    bundle.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolume",
                        "metadata": {"name": "pvc-db"},
                        "spec": {
                            "claimRef": {"name": "db", "namespace": "team-a"},
                            "csi": {"driver": "csi.trident.netapp.io", "volumeHandle": "h"},
                        },
                    },
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "db", "namespace": "team-a"},
                        "spec": {"volumeName": "pvc-db"},
                    },
                ],
            }
        )
    )
    report = iscsi_files(
        [mountinfo, FIXTURES / "multipath" / "stockage_path_down_failed_faulty.txt", bundle],
        "chunk1",
    )
    (node,) = report.to_dict()["nodes"]
    luns = {row["alias"]: row for row in node["luns"]}
    assert (luns["mpatha"]["namespace"], luns["mpatha"]["pvc"]) == ("team-a", "db")
