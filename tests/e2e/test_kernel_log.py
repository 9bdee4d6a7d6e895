"""mount-audit's kernel-log health on the real cluster: a volume that went read-only under a
running pod (issue 22 item 4).

A `local` PersistentVolume is an ext4 on a loop device of this machine, mounted
``errors=remount-ro``, used by a pod of the first node. ext4's own error trigger
(/sys/fs/ext4/<dev>/trigger_fs_error, fs/ext4/sysfs.c) makes the kernel log an ext4 error and
refuse writes, as a failed path under an iSCSI LUN would. Before it, the audit raises nothing
about the volume; after it, the pod's writes fail and the audit names the claim and the pod as
read-only now (KLOG001, an error: exit 1). The debug pod is not privileged: it reads the log
with dmesg and CAP_SYSLOG. Only a loop device of this machine is touched; the host kernel's
log is shared by the harness's nodes, so other events may be in it, and the test judges only
its own device.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.cluster

WORK = Path("/var/lib/kubectl-storage-e2e")

PV = """
apiVersion: v1
kind: PersistentVolume
metadata:
  name: {name}
  labels: {{kubectl-storage.test/e2e: "true"}}
spec:
  capacity: {{storage: 32Mi}}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  local: {{path: {path}}}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - {{key: kubernetes.io/hostname, operator: In, values: [{node}]}}
"""

CLAIM_AND_POD = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: {pv}
  resources: {{requests: {{storage: 32Mi}}}}
---
apiVersion: v1
kind: Pod
metadata:
  name: writer
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: {image}
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
    volumeMounts: [{{name: data, mountPath: /data}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: data}}}}]
"""


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def ext4_volume(cluster, namespace):
    """An ext4 loop device mounted errors=remount-ro, and a local PV of the first node on it;
    all of it undone afterwards, the namespace's pods first (so the kubelet unmounts its bind
    mounts before the filesystem goes, and no later audit sees a read-only volume still
    mounted)."""
    name = f"e2e-klog-{uuid.uuid4().hex[:6]}"
    folder = WORK / name
    image, mountpoint = folder / "ext4.img", folder / "mnt"
    mountpoint.mkdir(parents=True)
    sh("truncate", "-s", "32M", str(image))
    sh("mkfs.ext4", "-q", "-F", str(image))
    device = sh("losetup", "--find", "--show", str(image))
    try:
        sh("mount", "-o", "errors=remount-ro", device, str(mountpoint))
        cluster.apply(PV.format(name=name, path=mountpoint, node=cluster.node))
        yield name, Path(device).name
    finally:
        cluster.kubectl_run(
            "-n", namespace, "delete", "pods,pvc", "--all", "--wait=true", "--timeout=120s",
            check=False, timeout=180,
        )  # fmt: skip
        cluster.kubectl_run("delete", "pv", name, "--wait=false", check=False)
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)
        subprocess.run(["losetup", "-d", device], check=False)
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def audit(cluster, namespace: str) -> tuple[int, dict]:
    result = run_cli(
        "-n", namespace, "mount-audit", cluster.node, "--image", cluster.toolbox_image, "-o", "json"
    )
    assert result.exit_code in (0, 1), result.stderr
    return result.exit_code, result.json()


def our_events(report: dict, device: str) -> list[dict]:
    (node,) = report["nodes"]
    return [event for event in node["kernel_events"] if event["subject"] == device]


def test_a_volume_that_went_read_only_under_its_pod_is_named_with_the_pod(
    cluster, namespace, ext4_volume
) -> None:
    pv, device = ext4_volume
    cluster.apply(CLAIM_AND_POD.format(pv=pv, image=cluster.busybox_image), namespace)
    cluster.wait(namespace, "pod/writer", "condition=Ready", 180)
    write = ("-n", namespace, "exec", "writer", "--", "sh", "-c", "echo x > /data/f && sync")
    cluster.kubectl_run(*write)

    # Quiet: the volume is healthy, so nothing of this device is above information.
    _, before = audit(cluster, namespace)
    (node,) = before["nodes"]
    assert node["kernel_log"]["source"] == "dmesg", node["kernel_log"]
    # The host nodes share one mount table: another test's "writer" may still be going away.
    mine = [v for v in node["volumes"] if v["pod"] == "writer" and v["namespace"] == namespace]
    assert [v["pvc"] for v in mine] == ["data"]
    assert all(
        finding["severity"] == "info"
        for event in our_events(before, device)
        for finding in event["findings"]
    ), our_events(before, device)

    Path(f"/sys/fs/ext4/{device}/trigger_fs_error").write_text("kubectl-storage e2e\n")
    refused = cluster.kubectl_run(*write, check=False)
    assert refused.returncode != 0
    assert "Read-only file system" in refused.stderr + refused.stdout

    # Fires: read-only now, with the claim and the pod that writes to it.
    code, after = audit(cluster, namespace)
    assert code == 1
    assert after["verdict"] == "fail"
    events = our_events(after, device)
    fs = [event for event in events if event["kind"] == "fs-remounted-ro"]
    assert fs, events
    assert fs[-1]["state"] == "still-read-only"
    assert [f["id"] for f in fs[-1]["findings"]] == ["KLOG001"]
    assert {"namespace": namespace, "pod": "writer", "pvc": "data", "pv": pv} in fs[-1]["volumes"]
    assert fs[-1]["last_age_seconds"] is not None
    assert fs[-1]["last_age_seconds"] < 600

    table = run_cli("-n", namespace, "mount-audit", cluster.node, "--image", cluster.toolbox_image)
    assert table.exit_code == 1
    assert "KLOG001" in table.stdout
    assert f"{namespace}/data (pod writer)" in table.stdout
