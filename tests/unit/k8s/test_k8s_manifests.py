"""Manifest builders: what we create must fit the restricted Pod Security level."""

from __future__ import annotations

import pytest

from kubectl_storage.core.k8s.manifests import (
    PodIdentity,
    PodPlacement,
    Toleration,
    build_node_inspection_pod,
    build_pvc,
    build_workload_pod,
    parse_node_selector,
)


def restricted_violations(pod: dict) -> list[str]:
    """The checks of the restricted level (Kubernetes Pod Security Standards) our pods touch."""
    spec = pod["spec"]
    problems = []
    pod_sc = spec.get("securityContext") or {}
    for key in ("hostPID", "hostIPC", "hostNetwork"):
        if spec.get(key):
            problems.append(key)
    for volume in spec.get("volumes") or []:
        if "hostPath" in volume:
            problems.append("hostPath volume")
    for container in spec["containers"]:
        sc = container.get("securityContext") or {}
        if sc.get("privileged"):
            problems.append("privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            problems.append("allowPrivilegeEscalation must be false")
        if sc.get("capabilities", {}).get("drop") != ["ALL"]:
            problems.append("capabilities must drop ALL")
        if not (sc.get("runAsNonRoot") or pod_sc.get("runAsNonRoot")):
            problems.append("runAsNonRoot")
        if sc.get("runAsUser") == 0 or pod_sc.get("runAsUser") == 0:
            problems.append("runAsUser 0")
        seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            problems.append("seccompProfile")
    return problems


def test_workload_pod_is_restricted() -> None:
    pod = build_workload_pod("p", "ns", "img:1", pvc_name="claim", configmap_name="cm")
    assert restricted_violations(pod) == []
    container = pod["spec"]["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {"name": "data", "mountPath": "/data", "readOnly": False} in container["volumeMounts"]
    assert pod["spec"]["securityContext"]["fsGroup"] == 1000


def test_openshift_identity_leaves_uid_unset() -> None:
    pod = build_workload_pod("p", "ns", "img:1", pvc_name="c", identity=PodIdentity(None, None))
    sc = pod["spec"]["securityContext"]
    assert "runAsUser" not in sc
    assert "fsGroup" not in sc
    assert restricted_violations(pod) == []


def test_block_mode_uses_volume_devices() -> None:
    pod = build_workload_pod("p", "ns", "img:1", pvc_name="c", block_device_path="/dev/xb")
    container = pod["spec"]["containers"][0]
    assert container["volumeDevices"] == [{"name": "data", "devicePath": "/dev/xb"}]
    assert all(m["name"] != "data" for m in container["volumeMounts"])
    assert pod["spec"]["securityContext"]["supplementalGroups"] == [6]  # disk group, not root
    assert restricted_violations(pod) == []


def test_placement_and_resources() -> None:
    placement = PodPlacement(
        node_name="n1",
        node_selector={"disk": "ssd"},
        tolerations=(Toleration.parse("dedicated=storage:NoSchedule"), Toleration.parse("*")),
        cpu="2",
        memory="1Gi",
    )
    pod = build_workload_pod("p", "ns", "img:1", pvc_name="c", placement=placement)
    spec = pod["spec"]
    # the named node through the scheduler, which binds WaitForFirstConsumer claims
    assert "nodeName" not in spec
    assert spec["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
                ]
            }
        }
    }
    assert spec["nodeSelector"] == {"disk": "ssd"}
    assert spec["tolerations"] == [
        {"key": "dedicated", "operator": "Equal", "value": "storage", "effect": "NoSchedule"},
        {"operator": "Exists"},
        {"operator": "Exists", "effect": "NoSchedule"},  # the named node's NoSchedule taints
    ]
    resources = spec["containers"][0]["resources"]
    assert resources["requests"] == resources["limits"] == {"cpu": "2", "memory": "1Gi"}


def test_a_named_node_joins_every_term_of_an_affinity_the_command_adds() -> None:
    away = {"key": "metadata.name", "operator": "NotIn", "values": ["n2"]}
    on_ssd = {"key": "disk", "operator": "In", "values": ["ssd"]}
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [away]}, {"matchExpressions": [on_ssd]}]
            }
        }
    }
    placement = PodPlacement(node_name="n1", affinity=affinity)
    pod = build_workload_pod("p", "ns", "img:1", pvc_name="c", placement=placement)

    on_n1 = {"key": "metadata.name", "operator": "In", "values": ["n1"]}
    terms = pod["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert terms["nodeSelectorTerms"] == [
        {"matchFields": [away, on_n1]},
        {"matchExpressions": [on_ssd], "matchFields": [on_n1]},
    ]
    # the placement's own affinity is left as it was (plans are built more than once)
    assert affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ] == [{"matchFields": [away]}, {"matchExpressions": [on_ssd]}]


def test_without_a_named_node_there_is_no_node_affinity_nor_extra_toleration() -> None:
    pod = build_workload_pod("p", "ns", "img:1", pvc_name="c", placement=PodPlacement())
    assert "affinity" not in pod["spec"]
    assert "tolerations" not in pod["spec"]
    assert "nodeName" not in pod["spec"]


def test_an_all_keys_toleration_keeps_its_effect() -> None:
    assert Toleration.parse("*:NoSchedule").to_dict() == {
        "operator": "Exists",
        "effect": "NoSchedule",
    }


@pytest.mark.parametrize("text", ["", "=v", "k:Sometimes"])
def test_bad_tolerations(text: str) -> None:
    with pytest.raises(ValueError, match="toleration"):
        Toleration.parse(text)


def test_node_selector_parsing() -> None:
    assert parse_node_selector("a=1,b=2") == {"a": "1", "b": "2"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_node_selector("a")


def test_pvc_from_snapshot() -> None:
    source = {"name": "snap", "kind": "VolumeSnapshot", "apiGroup": "snapshot.storage.k8s.io"}
    pvc = build_pvc("c", "ns", "fast", "5Gi", data_source=source)
    assert pvc["spec"]["dataSource"] == source
    assert pvc["spec"]["resources"]["requests"]["storage"] == "5Gi"


def test_node_inspection_pod_reads_host_read_only() -> None:
    pod = build_node_inspection_pod("d", "ns", "node-1", "img:1", privileged=False)
    spec = pod["spec"]
    assert spec["nodeName"] == "node-1"
    assert spec["hostPID"] is True
    assert spec["tolerations"] == [{"operator": "Exists"}]
    assert spec["activeDeadlineSeconds"] > 0
    host_mount = next(m for m in spec["containers"][0]["volumeMounts"] if m["name"] == "host")
    assert host_mount == {"name": "host", "mountPath": "/host", "readOnly": True}
    assert "privileged" not in spec["containers"][0]["securityContext"]
    assert spec["hostNetwork"] is False
    privileged = build_node_inspection_pod("d", "ns", "node-1", "img:1", privileged=True)
    assert privileged["spec"]["containers"][0]["securityContext"]["privileged"] is True
    # iscsiadm and multipathd talk to their daemons over abstract sockets of the host's netns.
    assert privileged["spec"]["hostNetwork"] is True
