"""The LazyFS medium and the harness's `power-off NODE` (issue 26; tests/cluster/README.md,
"The LazyFS medium").

A pod writes file A and fsyncs it (``dd conv=fsync``), then appends to A and writes file B
without an fsync, and reads both back (the unsynced data is visible before the power cut). The
harness powers its node off (kubelet stopped, containers SIGKILLed, the node's LazyFS caches
dropped, kubelet started again), and a new pod on the same node reads the volume:

- class ``tk8s.io/medium: LazyFS``: A holds its fsynced part only, B is empty (its creation, a
  metadata operation, passed through);
- with ``tk8s.io/fsync: ignore`` as well: A is lost too (the fsync was acknowledged, nothing
  persisted);
- the honest class ``csi-hostpath-sc``: nothing is lost (the host's page cache survives a
  power-off of a node that is a process).

Each case ends with no daemon, mount or record of the volume left. The driver's refusals
(LazyFS on a Block volume, ``fsync: ignore`` without LazyFS) fail the claim's provisioning with
the parameter named in its events.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import power_off

CLUSTER_DIR = Path(__file__).resolve().parents[1] / "cluster"
sys.path.insert(0, str(CLUSTER_DIR))
import harness  # noqa: E402
import lazyfs  # noqa: E402

WRITER = (
    "set -e; printf 'synced-A\\n' | dd of=/data/A conv=fsync 2>/dev/null; "
    "printf 'unsynced-A\\n' >> /data/A; printf 'B\\n' > /data/B; "
    "cat /data/A /data/B > /tmp/seen; mv /tmp/seen /tmp/ready; sleep 3600"
)
READER = "printf 'A=['; cat /data/A; printf ']\\nB=['; cat /data/B 2>&1; printf ']\\n'"
# Debian's dd (the MariaDB image): A written through an O_DSYNC descriptor and nothing else, B
# plainly. A write on an O_DSYNC or O_SYNC descriptor is durable when it returns; the kernel
# sends the daemon no FSYNC after it (FOPEN_DIRECT_IO), so the daemon must sync it itself.
DSYNC_WRITER = (
    "set -e; printf 'dsync-A\\n' | dd of=/data/A oflag=dsync 2>/dev/null; "
    "printf 'B\\n' | dd of=/data/B 2>/dev/null; "
    "cat /data/A /data/B > /tmp/seen; mv /tmp/seen /tmp/ready; sleep 3600"
)


def _pvc(name: str, cls: str, mode: str = "Filesystem") -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": name},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": cls,
                "volumeMode": mode,
                "resources": {"requests": {"storage": "64Mi"}},
            },
        }
    )


def _pod(name: str, node: str, image: str, script: str, restart: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "nodeName": node,
                "restartPolicy": restart,
                "terminationGracePeriodSeconds": 1,
                "securityContext": {"runAsUser": 1000, "runAsGroup": 1000},
                "containers": [
                    {
                        "name": "c",
                        "image": image,
                        "imagePullPolicy": "IfNotPresent",
                        "command": ["sh", "-c", script],
                        "volumeMounts": [{"name": "v", "mountPath": "/data"}],
                    }
                ],
                "volumes": [{"name": "v", "persistentVolumeClaim": {"claimName": "data"}}],
            },
        }
    )


def _leftovers(pv: str) -> list[str]:
    """Daemons, FUSE mounts and driver records of volume ``pv`` still on this machine."""
    left = [f"record {r['dir']}" for r in lazyfs.records(harness.CSI_STATE) if r["volume"] == pv]
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if fields[fields.index("-") + 1] == lazyfs.FSTYPE and pv in fields[4]:
            left.append(f"mount {fields[4]}")
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if len(args) > 1 and args[1] == b"lazyfs" and pv.encode() in b" ".join(args):
                left.append(f"daemon pid {proc.name}")
    return left


def _power_cut(
    cluster, namespace: str, cls: str, writer: str = WRITER, image: str = ""
) -> tuple[str, str, str]:
    """Write, power off the writer's node, read back. Returns (what the writer read before the
    power-off, what the harness printed, what the reader read after)."""
    image = image or cluster.busybox_image
    node = cluster.nodes[-1] if cluster.nodes else cluster.node
    cluster.apply(_pvc("data", cls), namespace)
    cluster.wait(namespace, "pvc/data", "jsonpath={.status.phase}=Bound")
    pv = cluster.get_json("pvc", "data", "-n", namespace)["spec"]["volumeName"]
    cluster.apply(_pod("writer", node, image, writer, "Never"), namespace)
    cluster.wait(namespace, "pod/writer", "condition=Ready")
    seen = ""
    for _ in range(60):
        r = cluster.kubectl_run(
            "-n", namespace, "exec", "writer", "--", "cat", "/tmp/ready", check=False
        )
        if r.returncode == 0:
            seen = r.stdout
            break
        time.sleep(1)
    printed = power_off(node)
    cluster.kubectl_run(
        "-n", namespace, "delete", "pod", "writer", "--wait=true", "--timeout=120s", timeout=180
    )
    cluster.apply(_pod("reader", node, cluster.busybox_image, READER, "Never"), namespace)
    cluster.wait(namespace, "pod/reader", "jsonpath={.status.phase}=Succeeded")
    after = cluster.logs(namespace, "reader")
    cluster.kubectl_run(
        "-n", namespace, "delete", "pod", "reader", "--wait=true", "--timeout=120s", timeout=180
    )
    # the pod object can be gone before the kubelet's NodeUnpublishVolume has returned
    deadline = time.monotonic() + 60
    while _leftovers(pv) and time.monotonic() < deadline:
        time.sleep(1)
    assert _leftovers(pv) == [], "a LazyFS daemon, mount or record outlived its pods"
    return seen, printed, after


def test_power_off_loses_what_was_not_fsynced_on_lazyfs(
    cluster, namespace, make_storage_class
) -> None:
    cls = make_storage_class("lazyfs", parameters={"tk8s.io/medium": "LazyFS"})
    seen, printed, after = _power_cut(cluster, namespace, cls)
    assert seen == "synced-A\nunsynced-A\nB\n", "the unsynced writes were not even readable"
    assert "dropped 2 files" in printed, printed
    assert after == "A=[synced-A\n]\nB=[]\n", after


def test_a_write_through_an_o_dsync_descriptor_survives_the_power_off(
    cluster, namespace, make_storage_class
) -> None:
    cls = make_storage_class("lazyfs-dsync", parameters={"tk8s.io/medium": "LazyFS"})
    seen, printed, after = _power_cut(cluster, namespace, cls, DSYNC_WRITER, cluster.mariadb_image)
    assert seen == "dsync-A\nB\n", "the writes were not even readable"
    assert "dropped 1 files" in printed, printed
    assert after == "A=[dsync-A\n]\nB=[]\n", after


def test_power_off_loses_fsynced_data_when_fsync_is_ignored(
    cluster, namespace, make_storage_class
) -> None:
    cls = make_storage_class(
        "lazyfs-ignore", parameters={"tk8s.io/medium": "lazyfs", "tk8s.io/fsync": "Ignore"}
    )
    seen, printed, after = _power_cut(cluster, namespace, cls)
    assert seen == "synced-A\nunsynced-A\nB\n"
    assert "dropped 2 files" in printed, printed
    assert after == "A=[]\nB=[]\n", after


def test_power_off_loses_nothing_on_the_honest_class(cluster, namespace) -> None:
    seen, printed, after = _power_cut(cluster, namespace, "csi-hostpath-sc")
    assert seen == "synced-A\nunsynced-A\nB\n"
    assert "no LazyFS mount published here: nothing dropped" in printed, printed
    assert after == "A=[synced-A\nunsynced-A\n]\nB=[B\n]\n", after


def _provisioning_failure(cluster, namespace: str) -> str:
    """The ProvisioningFailed event messages of pvc/data, once there is one (60 s at most)."""
    for _ in range(60):
        events = cluster.get_json(
            "events", "-n", namespace, "--field-selector", "involvedObject.name=data"
        )["items"]
        msgs = [e["message"] for e in events if e.get("reason") == "ProvisioningFailed"]
        if msgs:
            return "\n".join(msgs)
        time.sleep(1)
    pytest.fail("pvc/data got no ProvisioningFailed event in 60 s")


@pytest.mark.parametrize(
    ("parameters", "mode", "named"),
    [
        ({"tk8s.io/medium": "LazyFS"}, "Block", "tk8s.io/medium"),
        ({"tk8s.io/fsync": "ignore"}, "Filesystem", "tk8s.io/fsync"),
        ({"tk8s.io/medium": "Memory", "tk8s.io/fsync": "ignore"}, "Filesystem", "tk8s.io/fsync"),
        ({"tk8s.io/burst": "iops=200,credits-seconds=10"}, "Block", "tk8s.io/burst"),
        (
            {"tk8s.io/burst": "iops=200,credits-seconds=10", "tk8s.io/medium": "LazyFS"},
            "Filesystem",
            "tk8s.io/burst",
        ),
        ({"tk8s.io/burst": "iops=0,credits-seconds=10"}, "Filesystem", "tk8s.io/burst"),
        ({"tk8s.io/burst": "iops=200"}, "Filesystem", "tk8s.io/burst"),
    ],
    ids=[
        "lazyfs-on-block",
        "fsync-ignore-alone",
        "fsync-ignore-on-memory",
        "burst-on-block",
        "burst-on-lazyfs",
        "burst-zero-iops",
        "burst-without-credits",
    ],
)
def test_a_class_that_models_nothing_fails_provisioning_naming_the_parameter(
    cluster, namespace, make_storage_class, parameters, mode, named
) -> None:
    cls = make_storage_class("refused", parameters=parameters)
    cluster.apply(_pvc("data", cls, mode), namespace)
    message = _provisioning_failure(cluster, namespace)
    assert "InvalidArgument" in message, message
    assert named in message, message
    pvc = cluster.get_json("pvc", "data", "-n", namespace)
    assert pvc["status"]["phase"] == "Pending"
    assert not pvc["spec"].get("volumeName")
