"""The test driver's snapshot modes (class parameter tk8s.io/snapshot-mode, tests/cluster/README.md)
on the real cluster, checked on the driver itself rather than through `snapshot check`.

A pod appends numbered records to two files in different directories, alternately, each
fsynced before the next: at any instant the first file holds the same count as the second, or
one more. A snapshot of one instant (`atomic`, the default: a read-only btrfs snapshot) keeps
that in the restore; a copy made file by file while the pod writes (`copy`: the driver pauses a
fixed 1 s after each file, so the second file is read at least a second after the first) does
not. A `stale` restore (the previous snapshot) fails `snapshot check` through its earlier
snapshot. Also: the snapshot's data is where the mode says and is gone with the snapshot,
unknown `tk8s.io/` keys are refused, and `down` leaves no loop device or mount of the volume
filesystem.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.e2e.conftest import HOSTPATH_CLASS, SNAPSHOT_OBJECTS, managed
from tests.e2e.test_cluster_harness import pod, pvc

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]
STATE = Path("/var/lib/csi-hostpath-data")
VOLUMES = STATE / "volumes"
VOLUMES_IMAGE = "/var/lib/csi-hostpath-volumes.img"
#: records each file must hold before the snapshot is cut (the writer is well under way)
WARM_RECORDS = 20

WRITER = (
    "mkdir -p /data/a /data/b; i=0; while :; do i=$((i+1)); "
    "echo $i >> /data/a/log; sync /data/a/log; echo $i >> /data/b/log; sync /data/b/log; done"
)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _handle(cluster, namespace: str, claim: str) -> str:
    volume = cluster.get_json("-n", namespace, f"pvc/{claim}")["spec"]["volumeName"]
    return cluster.get_json("pv", volume)["spec"]["csi"]["volumeHandle"]


def _subvolumes() -> str:
    return subprocess.run(
        ["btrfs", "subvolume", "list", str(VOLUMES)], capture_output=True, text=True, check=True
    ).stdout


def _is_subvolume(path: Path) -> bool:
    return path.is_dir() and path.stat().st_ino == 256


def _snapshot(name: str, source: str) -> str:
    return f"""
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: {name}
spec:
  volumeSnapshotClassName: csi-hostpath-snapclass
  source:
    persistentVolumeClaimName: {source}
"""


def _cut_while_writing(cluster, namespace: str, storage_class: str) -> dict:
    """Snapshot a volume while the writer runs, restore it; counts and handles."""
    c = cluster
    c.apply(pvc("source", storage_class=storage_class), namespace)
    c.apply(pod("writer", c.toolbox_image, WRITER, claim="source"), namespace)
    c.wait(namespace, "pod/writer", "condition=Ready", 180)
    source = _handle(c, namespace, "source")
    log_b = VOLUMES / source / "b" / "log"  # written second: the later of the two
    deadline = time.monotonic() + 120
    while _lines(log_b) < WARM_RECORDS:
        assert time.monotonic() < deadline, f"the writer wrote {_lines(log_b)} records in 120 s"
        time.sleep(0.5)
    c.apply(_snapshot("snap", "source"), namespace)
    c.wait(namespace, "volumesnapshot/snap", "jsonpath={.status.readyToUse}=true", 180)
    at_ready = _lines(log_b)
    time.sleep(1)
    assert _lines(log_b) > at_ready, "the writer stopped: the cut was not made under load"
    snap = c.get_json("-n", namespace, "volumesnapshot/snap")
    content = c.get_json("volumesnapshotcontent", snap["status"]["boundVolumeSnapshotContentName"])
    c.kubectl_run("-n", namespace, "delete", "pod", "writer", "--wait=true", "--timeout=60s")

    c.apply(pvc("restored", storage_class=storage_class, data_source="snap"), namespace)
    c.apply(
        pod(
            "reader", c.toolbox_image, "wc -l < /data/a/log; wc -l < /data/b/log", claim="restored"
        ),
        namespace,
    )
    c.wait(namespace, "pod/reader", "jsonpath={.status.phase}=Succeeded", 180)
    a, b = (int(n) for n in c.logs(namespace, "reader").split())
    return {
        "a": a,
        "b": b,
        "source": source,
        "restored": _handle(c, namespace, "restored"),
        "snapshot": content["status"]["snapshotHandle"],
    }


#: Block: records alternate between two regions of a 256 MiB device, 192 MiB apart (4 KiB blocks)
REGION_B = 49152
BLOCK_WRITER = (
    "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); "
    "printf '%08d' $i | dd of=/dev/xvdb bs=4096 seek=$i conv=sync,notrunc,fsync status=none; "
    f"printf '%08d' $i | dd of=/dev/xvdb bs=4096 seek=$(({REGION_B}+i)) conv=sync,notrunc,fsync "
    "status=none; done; sleep 3600"
)
#: each record is 8 non-zero bytes: the count of a region is its non-zero bytes / 8
BLOCK_READER = (
    f"dd if=/dev/xvdb bs=4096 count={REGION_B} status=none | tr -d '\\000' | wc -c; "
    f"dd if=/dev/xvdb bs=4096 skip={REGION_B} status=none | tr -d '\\000' | wc -c"
)


def _block_claim(name: str, storage_class: str, source: str = "") -> str:
    src = (
        f", dataSource: {{name: {source}, kind: VolumeSnapshot, apiGroup: snapshot.storage.k8s.io}}"
        if source
        else ""
    )
    return (
        "apiVersion: v1\nkind: PersistentVolumeClaim\n"
        f"metadata: {{name: {name}}}\n"
        "spec: {accessModes: [ReadWriteOnce], volumeMode: Block, "
        f"storageClassName: {storage_class}, resources: {{requests: {{storage: 256Mi}}}}{src}}}\n"
    )


def _block_pod(name: str, image: str, claim: str, script: str) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "restartPolicy": "Never",
                "terminationGracePeriodSeconds": 1,
                "securityContext": {"runAsUser": 1000, "supplementalGroups": [6]},
                "containers": [
                    {
                        "name": "c",
                        "image": image,
                        "command": ["sh", "-c", script],
                        "volumeDevices": [{"name": "d", "devicePath": "/dev/xvdb"}],
                    }
                ],
                "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}],
            },
        }
    )


def _block_record(image: Path, block: int) -> bool:
    """Whether a record is at 4 KiB block ``block`` of the image (read on the host)."""
    with image.open("rb") as f:
        return any(os.pread(f.fileno(), 8, block * 4096))


@pytest.mark.parametrize("mode", ["atomic", "copy"])
def test_block_snapshot_of_two_distant_ranges(cluster, namespace, make_storage_class, mode) -> None:
    """Block: atomic (the default class) reflinks the image at one instant, so the two regions'
    counts stay within one; copy reads the device front to back (20 ms after each 4 MiB), so the
    region 192 MiB further on is read about a second later and holds more records."""
    c = cluster
    cls = HOSTPATH_CLASS
    if mode == "copy":
        cls = make_storage_class("bcopy", parameters={"tk8s.io/snapshot-mode": "copy"})
    c.apply(_block_claim("source", cls), namespace)
    c.apply(_block_pod("writer", c.toolbox_image, "source", BLOCK_WRITER), namespace)
    c.wait(namespace, "pod/writer", "condition=Ready", 180)
    image = VOLUMES / f"{_handle(c, namespace, 'source')}.img"
    deadline = time.monotonic() + 120
    while not _block_record(image, REGION_B + WARM_RECORDS):
        assert time.monotonic() < deadline, "the writer did not get going in 120 s"
        time.sleep(0.5)
    c.apply(_snapshot("snap", "source"), namespace)
    c.wait(namespace, "volumesnapshot/snap", "jsonpath={.status.readyToUse}=true", 180)
    c.kubectl_run("-n", namespace, "delete", "pod", "writer", "--wait=true", "--timeout=60s")
    c.apply(_block_claim("restored", cls, source="snap"), namespace)
    c.apply(_block_pod("reader", c.toolbox_image, "restored", BLOCK_READER), namespace)
    c.wait(namespace, "pod/reader", "jsonpath={.status.phase}=Succeeded", 180)
    a, b = (int(n) // 8 for n in c.logs(namespace, "reader").split())
    print(f"{mode} Block: restored counts", a, b)
    assert b >= WARM_RECORDS, (a, b)
    if mode == "atomic":
        assert a - b in (0, 1), (a, b)
    else:
        assert b - a >= 2, (a, b)


def _delete_all_and_wait(cluster, namespace: str, gone: list[Path]) -> None:
    c = cluster
    c.kubectl_run("-n", namespace, "delete", "pod", "--all", "--wait=true", "--timeout=60s")
    c.kubectl_run("-n", namespace, "delete", "pvc", "--all", "--wait=true", "--timeout=60s")
    c.kubectl_run(
        "-n", namespace, "delete", "volumesnapshot", "--all", "--wait=true", "--timeout=60s"
    )
    deadline = time.monotonic() + 120
    while any(p.exists() for p in gone):
        left = [str(p) for p in gone if p.exists()]
        assert time.monotonic() < deadline, f"still there 120 s after the deletes: {left}"
        time.sleep(1)


def test_atomic_default_snapshot_keeps_two_files_in_step(cluster, namespace) -> None:
    """The default class has no snapshot-mode: atomic. Source, snapshot and restore are btrfs
    subvolumes; the snapshot is read-only; the restored counts are one instant's."""
    cut = _cut_while_writing(cluster, namespace, HOSTPATH_CLASS)
    print("atomic: restored counts", cut)  # for the run's log
    assert cut["b"] >= WARM_RECORDS, cut
    assert cut["a"] - cut["b"] in (0, 1), cut  # a is written first: equal, or one ahead
    snap = VOLUMES / ".snapshots" / cut["snapshot"]
    source, restored = VOLUMES / cut["source"], VOLUMES / cut["restored"]
    assert _is_subvolume(source)
    assert _is_subvolume(restored)
    assert _is_subvolume(snap)
    ro = subprocess.run(
        ["btrfs", "property", "get", "-ts", str(snap), "ro"], capture_output=True, text=True
    )
    assert ro.stdout.strip() == "ro=true", ro
    listed = _subvolumes()
    assert all(h in listed for h in (cut["source"], cut["restored"], cut["snapshot"])), listed
    _delete_all_and_wait(cluster, namespace, [source, restored, snap])
    listed = _subvolumes()
    assert not any(h in listed for h in (cut["source"], cut["restored"], cut["snapshot"])), listed


def test_copy_snapshot_is_not_one_instant(cluster, namespace, make_storage_class) -> None:
    """copy reads a/log, pauses 1 s, then reads b/log: the writer added records to b meanwhile,
    so the restore holds more of b than of a (one instant never shows that)."""
    copy_class = make_storage_class("copy", parameters={"tk8s.io/snapshot-mode": "copy"})
    cut = _cut_while_writing(cluster, namespace, copy_class)
    print("copy: restored counts", cut)
    assert cut["a"] >= WARM_RECORDS, cut
    assert cut["b"] - cut["a"] >= 2, cut  # b was read at least a second after a
    data = STATE / "snapshots" / cut["snapshot"]  # a plain directory on the root filesystem
    assert (data / "a" / "log").is_file(), data
    assert not (VOLUMES / ".snapshots" / cut["snapshot"]).exists()
    _delete_all_and_wait(
        cluster, namespace, [VOLUMES / cut["source"], VOLUMES / cut["restored"], data]
    )
    listed = _subvolumes()
    assert cut["source"] not in listed, listed
    assert cut["restored"] not in listed, listed


@pytest.mark.parametrize(
    ("parameters", "said"),
    [
        ({"tk8s.io/snapshot-mod": "copy"}, "unknown class parameter(s) tk8s.io/snapshot-mod"),
        ({"tk8s.io/snapshot-mode": "instant"}, 'tk8s.io/snapshot-mode: "instant" is none of'),
    ],
    ids=["unknown-key", "unknown-mode"],
)
def test_a_class_with_an_unknown_parameter_gets_no_volume(
    cluster, namespace, make_storage_class, parameters, said
) -> None:
    bad = make_storage_class("bad", parameters=parameters)
    cluster.apply(pvc("claim", storage_class=bad), namespace)
    deadline = time.monotonic() + 90
    while True:
        events = cluster.get_json(
            "events", "-n", namespace, "--field-selector", "involvedObject.name=claim"
        )["items"]
        failed = [e["message"] for e in events if e["reason"] == "ProvisioningFailed"]
        if failed:
            break
        assert time.monotonic() < deadline, [e["message"] for e in events]
        time.sleep(2)
    assert any("InvalidArgument" in m and said in m for m in failed), failed
    assert cluster.get_json("-n", namespace, "pvc/claim")["status"]["phase"] == "Pending"


def _volume_fs_state() -> tuple[str, list[str]]:
    """The mount at VOLUMES (findmnt's line, "" if none) and the loop devices on the image or
    the driver's state dir."""
    mnt = subprocess.run(
        ["findmnt", "-n", "--mountpoint", str(VOLUMES)], capture_output=True, text=True
    ).stdout.strip()
    loops = []
    for f in Path("/sys/block").glob("loop*/loop/backing_file"):
        backing = f.read_text().strip()
        if backing.startswith((VOLUMES_IMAGE, str(STATE) + "/")):
            loops.append(f"{f.parent.parent.name}: {backing}")
    return mnt, loops


def test_down_leaves_no_loop_device_or_mount_and_up_brings_the_data_back(
    cluster, namespace
) -> None:
    c = cluster
    c.apply(pvc("kept"), namespace)
    c.apply(pod("writer", c.toolbox_image, "echo kept > /data/f && sync", claim="kept"), namespace)
    c.wait(namespace, "pod/writer", "jsonpath={.status.phase}=Succeeded", 180)
    handle = _handle(c, namespace, "kept")
    mnt, loops = _volume_fs_state()
    # the checks below can fail: the mount and its loop device are there now
    assert " btrfs " in f" {mnt} ", mnt
    assert loops, loops
    harness = [sys.executable, str(REPO / "tests" / "cluster" / "harness.py")]
    subprocess.run([*harness, "down"], check=True, timeout=300)
    try:
        assert _volume_fs_state() == ("", []), _volume_fs_state()
        assert not (VOLUMES / handle).exists()  # the data is in the image, not on the root fs
    finally:
        up = subprocess.run(
            [*harness, "up"], stdout=subprocess.DEVNULL, timeout=900, env={**os.environ}
        )
    assert up.returncode == 0
    assert (VOLUMES / handle / "f").read_text() == "kept\n"


def test_ready_early_is_ready_before_its_copy_ends(cluster, namespace, make_storage_class) -> None:
    """ready-early answers readyToUse at once and copies afterwards (five more files make the copy
    take 7 s or more): the VolumeSnapshot is ready while the driver's copy is not finished, and
    the restore, which waits for the copy, is not one instant either."""
    c = cluster
    early = make_storage_class("early", parameters={"tk8s.io/snapshot-mode": "ready-early"})
    c.apply(pvc("source", storage_class=early), namespace)
    script = "mkdir -p /data/c && for n in 1 2 3 4 5; do echo $n > /data/c/$n; done; " + WRITER
    c.apply(pod("writer", c.toolbox_image, script, claim="source"), namespace)
    c.wait(namespace, "pod/writer", "condition=Ready", 180)
    source = _handle(c, namespace, "source")
    deadline = time.monotonic() + 120
    while _lines(VOLUMES / source / "b" / "log") < WARM_RECORDS:
        assert time.monotonic() < deadline, "the writer did not get going in 120 s"
        time.sleep(0.5)
    c.apply(_snapshot("snap", "source"), namespace)
    c.wait(namespace, "volumesnapshot/snap", "jsonpath={.status.readyToUse}=true", 60)
    snap = c.get_json("-n", namespace, "volumesnapshot/snap")
    content = c.get_json("volumesnapshotcontent", snap["status"]["boundVolumeSnapshotContentName"])
    handle = content["status"]["snapshotHandle"]
    data = STATE / "snapshots" / handle
    assert not data.exists(), "the copy had ended when the snapshot was ready"  # renamed at its end
    assert (STATE / "snapshots" / f"{handle}.tmp").is_dir()  # the copy under way
    c.apply(pvc("restored", storage_class=early, data_source="snap"), namespace)
    c.apply(
        pod(
            "reader", c.toolbox_image, "wc -l < /data/a/log; wc -l < /data/b/log", claim="restored"
        ),
        namespace,
    )
    c.wait(namespace, "pod/reader", "jsonpath={.status.phase}=Succeeded", 180)
    a, b = (int(n) for n in c.logs(namespace, "reader").split())
    print("ready-early: restored counts", a, b)
    assert b - a >= 2, (a, b)
    assert (data / "c" / "5").is_file()  # the copy ended before the restore was made
    _delete_all_and_wait(cluster, namespace, [VOLUMES / source, data])


def test_stale_restores_the_previous_snapshot(cluster, namespace, make_storage_class) -> None:
    """Two snapshots of one volume, a change between them: a stale-mode restore of the second
    holds the first's content; the first (it has no previous one) restores as itself."""
    c = cluster
    stale = make_storage_class("stale", parameters={"tk8s.io/snapshot-mode": "stale"})
    c.apply(pvc("source", storage_class=stale), namespace)
    for n, word in ((1, "one"), (2, "two")):
        c.apply(
            pod(f"w{n}", c.toolbox_image, f"echo {word} > /data/f && sync", claim="source"),
            namespace,
        )
        c.wait(namespace, f"pod/w{n}", "jsonpath={.status.phase}=Succeeded", 180)
        c.apply(_snapshot(f"s{n}", "source"), namespace)
        c.wait(namespace, f"volumesnapshot/s{n}", "jsonpath={.status.readyToUse}=true", 60)
    for n in (1, 2):
        c.apply(pvc(f"r{n}", storage_class=stale, data_source=f"s{n}"), namespace)
        c.apply(pod(f"read{n}", c.toolbox_image, "cat /data/f", claim=f"r{n}"), namespace)
    for n in (1, 2):
        c.wait(namespace, f"pod/read{n}", "jsonpath={.status.phase}=Succeeded", 180)
    s2 = c.get_json("-n", namespace, "volumesnapshot/s2")["status"]
    handle = c.get_json("volumesnapshotcontent", s2["boundVolumeSnapshotContentName"])["status"][
        "snapshotHandle"
    ]
    assert (VOLUMES / ".snapshots" / handle / "f").read_text() == "two\n"  # what s2 holds
    assert c.logs(namespace, "read1").strip() == "one"
    assert c.logs(namespace, "read2").strip() == "one"  # stale gave s1 instead


@pytest.mark.parametrize("volume_mode", ["Filesystem", "Block"])
def test_snapshot_check_fails_a_driver_that_restores_the_previous_snapshot(
    cluster, namespace, make_storage_class, volume_mode
) -> None:
    """`snapshot check` on the stale mode: its earlier snapshot is the "previous" one the driver
    hands back, so the restore is named as such and the check fails (one snapshot per run passed
    it). The same check on the default (atomic) class passes: tests/e2e/test_snapshot.py."""
    stale = make_storage_class("stale", parameters={"tk8s.io/snapshot-mode": "stale"})
    result = run_cli(
        "snapshot", "check", "-s", stale, "-z", "128Mi", "--volume-mode", volume_mode,
        "-n", namespace, "-o", "json",
    )  # fmt: skip
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "fail", report
    assert "earlier-snapshot" in report["reasons"], report
    assert report["earlierSnapshot"]["restoreIsEarlier"] is True, report
    assert any("restored an older snapshot" in p for p in report["problems"]), report
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_memory_volume_is_snapshotted_by_tar_and_restores_onto_the_btrfs(
    cluster, namespace, make_storage_class
) -> None:
    """A memory volume (tk8s.io/medium: Memory) is on a tmpfs, not the btrfs: its snapshot is a
    tar.gz on the root filesystem, and a restore into the default class is a subvolume."""
    c = cluster
    memory = make_storage_class("memory", parameters={"tk8s.io/medium": "Memory"})
    c.apply(pvc("source", storage_class=memory), namespace)
    c.apply(pod("w", c.toolbox_image, "echo mem > /data/f && sync", claim="source"), namespace)
    c.wait(namespace, "pod/w", "jsonpath={.status.phase}=Succeeded", 180)
    c.apply(_snapshot("snap", "source"), namespace)
    c.wait(namespace, "volumesnapshot/snap", "jsonpath={.status.readyToUse}=true", 60)
    snap = c.get_json("-n", namespace, "volumesnapshot/snap")["status"]
    handle = c.get_json("volumesnapshotcontent", snap["boundVolumeSnapshotContentName"])["status"][
        "snapshotHandle"
    ]
    assert (STATE / "snapshots" / f"{handle}.tar.gz").is_file()
    c.apply(pvc("restored", data_source="snap"), namespace)
    c.apply(pod("r", c.toolbox_image, "cat /data/f", claim="restored"), namespace)
    c.wait(namespace, "pod/r", "jsonpath={.status.phase}=Succeeded", 180)
    assert c.logs(namespace, "r").strip() == "mem"
    assert _is_subvolume(VOLUMES / _handle(c, namespace, "restored"))
