"""Labels and REST paths of the kinds we create."""

import re

import pytest

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.labels import (
    MANAGED_BY,
    new_run_id,
    object_name,
    run_labels,
    run_selector,
)

DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_run_ids_are_random_and_label_safe() -> None:
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(re.fullmatch(r"[a-z0-9]{8}", i) for i in ids)


def test_run_labels_and_selector() -> None:
    labels = run_labels("abcd1234", "fio")
    assert labels == {
        MANAGED_BY: "kubectl-storage",
        "kubectl-storage/run-id": "abcd1234",
        "kubectl-storage/command": "fio",
    }
    assert run_selector("abcd1234") == (
        "app.kubernetes.io/managed-by=kubectl-storage,kubectl-storage/run-id=abcd1234"
    )


@pytest.mark.parametrize(
    ("command", "suffix"),
    [("fio", "csi-hostpath-sc"), ("mount_audit", "Node_1.example.com"), ("x" * 80, "")],
)
def test_object_names_are_dns_labels(command: str, suffix: str) -> None:
    name = object_name(command, "abcd1234", suffix)
    assert len(name) <= 63
    assert DNS1123.match(name), name


@pytest.mark.parametrize(
    ("kind", "namespace", "path"),
    [
        (kinds.POD, "ns1", "/api/v1/namespaces/ns1/pods"),
        (kinds.POD, None, "/api/v1/pods"),
        (kinds.STATEFULSET, "a", "/apis/apps/v1/namespaces/a/statefulsets"),
        (kinds.STORAGE_CLASS, "ignored", "/apis/storage.k8s.io/v1/storageclasses"),
        (
            kinds.VOLUME_SNAPSHOT,
            "b",
            "/apis/snapshot.storage.k8s.io/v1/namespaces/b/volumesnapshots",
        ),
    ],
)
def test_collection_paths(kind: kinds.ResourceKind, namespace: str | None, path: str) -> None:
    assert kind.collection_path(namespace) == path


def test_cleanup_order_deletes_workloads_before_claims() -> None:
    order = [k.kind for k in kinds.RUN_CREATED_KINDS]
    assert order.index("Pod") < order.index("PersistentVolumeClaim")
    assert order.index("StatefulSet") < order.index("PersistentVolumeClaim")
    assert order.index("VolumeSnapshot") < order.index("PersistentVolumeClaim")
    assert all(k.created_by_runs for k in kinds.RUN_CREATED_KINDS)


def test_kind_lookup() -> None:
    assert kinds.kind_for("v1", "Pod") is kinds.POD
    with pytest.raises(KeyError):
        kinds.kind_for("v1", "Nonsense")
