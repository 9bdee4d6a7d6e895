"""Block volumes (volumeMode: Block) on the real cluster: fio on the raw device, the prefill of
the read range (issue 15), snapshots of block volumes, and interruption.

The test cluster's csi-hostpath-sc serves a Block volume as a sparse image file in the driver's
state dir attached to a loop device (tests/cluster/README.md); the kubelet adds a loop device of
its own on the path it maps. Every test here checks that no loop device is left attached to a
volume of its own afterwards.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import yaml

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed
from tests.e2e.test_fio import _report
from tests.e2e.test_plan_matches_run import _cleanup, _created, _planned

CSI_VOLUMES = Path("/var/lib/csi-hostpath-data/volumes")
QUICK_READ_RANGE = 256 * 2**20  # the quick profile's size: what its read job reads
DEVICE = "/dev/xvdb"


# --- helpers --------------------------------------------------------------------------------


def _loops() -> dict[str, str]:
    """Attached loop devices and their backing files (sysfs, as `losetup -a` shows them)."""
    found = {}
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            found["/dev/" + backing.parent.parent.name] = backing.read_text().strip()
        except OSError:
            continue
    return found


def _loops_of(pv: str) -> dict[str, str]:
    """Loop devices on the volume: the driver's (its image) and the kubelet's (its map path)."""
    return {dev: backing for dev, backing in _loops().items() if pv in backing}


def _wait_until_detached(pv: str, timeout: float = 120) -> None:
    """The kubelet tears down a deleted pod's device after the API object is gone: wait."""
    deadline = time.monotonic() + timeout
    while _loops_of(pv) and time.monotonic() < deadline:
        time.sleep(2)
    assert _loops_of(pv) == {}, f"loop devices left on {pv}: {_loops_of(pv)}"


def _wait_until_gone(path: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while path.exists() and time.monotonic() < deadline:
        time.sleep(2)
    assert not path.exists(), f"{path} is still there"


def _block_pvc(cluster, namespace: str, name: str, size: str = "1Gi", source: str = "") -> str:
    """A Block PVC of csi-hostpath-sc, bound; its PV's name."""
    cluster.apply(
        "apiVersion: v1\nkind: PersistentVolumeClaim\n"
        f"metadata: {{name: {name}}}\n"
        "spec: {accessModes: [ReadWriteOnce], volumeMode: Block, "
        f"storageClassName: {HOSTPATH_CLASS}, resources: {{requests: {{storage: {size}}}}}"
        f"{source}}}\n",
        namespace,
    )
    cluster.wait(namespace, f"pvc/{name}", "jsonpath={.status.phase}=Bound")
    return cluster.get_json("pvc", name, "-n", namespace)["spec"]["volumeName"]


def _device_pod(cluster, namespace: str, name: str, claim: str, script: str) -> str:
    """Run ``script`` in a toolbox pod (non-root, in the disk group) with the claim's device at
    /dev/xvdb; its log."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "Never",
            "securityContext": {"runAsUser": 1000, "runAsNonRoot": True, "supplementalGroups": [6]},
            "containers": [
                {
                    "name": "c",
                    "image": cluster.toolbox_image,
                    "command": ["sh", "-c", script],
                    "volumeDevices": [{"name": "d", "devicePath": DEVICE}],
                    "securityContext": {
                        "allowPrivilegeEscalation": False,
                        "capabilities": {"drop": ["ALL"]},
                    },
                }
            ],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": claim}}],
        },
    }
    cluster.apply(json.dumps(pod), namespace)
    cluster.wait(namespace, f"pod/{name}", "jsonpath={.status.phase}=Succeeded", timeout=180)
    log = cluster.logs(namespace, name)
    cluster.kubectl_run("-n", namespace, "delete", "pod", name, "--wait=true")
    return log


def _holes(image: Path) -> tuple[int, int | None]:
    """(offset of the first hole, offset of the first data at or after the read range's end,
    None when there is none): what of the sparse image the device really wrote."""
    fd = os.open(image, os.O_RDONLY)
    try:
        first_hole = os.lseek(fd, 0, os.SEEK_HOLE)
        try:
            data_after = os.lseek(fd, QUICK_READ_RANGE, os.SEEK_DATA)
        except OSError:  # ENXIO: no data after that offset
            data_after = None
        return first_hole, data_after
    finally:
        os.close(fd)


def _quick_block(namespace: str, *extra: str) -> dict:
    return _report(
        run_cli(
            "fio", "--volume-mode", "Block", "--profile", "quick", "--runtime", "3",
            "--ramp-time", "0", "-n", namespace, "-o", "json", *extra,
        )
    )  # fmt: skip


def _notes(report: dict) -> dict[str, list[dict]]:
    notes: dict[str, list[dict]] = {}
    for note in report["results"][0]["notes"]:
        notes.setdefault(note["id"], []).append(note)
    return notes


# --- fio on a raw device ----------------------------------------------------------------------


def test_block_fio_reports_iops_and_latency(cluster, namespace) -> None:
    started = time.monotonic()
    result = run_cli(
        "fio", "-s", HOSTPATH_CLASS, "-z", "1Gi", "--volume-mode", "Block",
        "--profile", "quick", "--runtime", "3", "--ramp-time", "0", "-n", namespace, "-o", "json",
    )  # fmt: skip
    report = _report(result)
    print(f"block fio run: {time.monotonic() - started:.1f}s")

    assert report["volume_mode"] == "Block"
    (klass,) = report["results"]
    assert klass["storage_class"] == HOSTPATH_CLASS
    jobs = {job["name"]: job for job in klass["jobs"]}
    assert list(jobs) == ["read_iops", "write_iops"]  # the prefill is not a measurement
    read, write = jobs["read_iops"], jobs["write_iops"]
    assert read["error"] == write["error"] == 0
    assert read["read_iops"] > 0
    assert write["write_iops"] > 0
    for key in ("read_clat_mean_us", "read_clat_p50_us", "read_clat_p99_us"):
        assert read[key] > 0, key
    for key in ("write_clat_mean_us", "write_clat_p50_us", "write_clat_p99_us"):
        assert write[key] > 0, key
    assert read["read_clat_p99_us"] >= read["read_clat_p50_us"]
    # fio ran on the pod's raw device, not on a file
    assert read["raw"][0]["jobname"] == "read_iops"
    assert read["raw"][0]["read"]["io_bytes"] > 0
    notes = _notes(report)
    assert "fio.block-unwritten-read" not in notes
    (prefill,) = notes["fio.block-prefill"]
    assert "wrote 256Mi of /dev/kubectl-storage-block" in prefill["message"]
    # its time is in the progress on stderr too
    assert "prefill: before the read jobs, fio wrote 256Mi" in result.stderr
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    _wait_until_no_orphan_loops()


def _orphans() -> dict[str, str]:
    """Loop devices on a volume image that was deleted (a volume gone, its device left)."""
    return {
        dev: backing
        for dev, backing in _loops().items()
        if backing.startswith(str(CSI_VOLUMES))
        and (backing.endswith("(deleted)") or not Path(backing).exists())
    }


def _wait_until_no_orphan_loops(timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while _orphans() and time.monotonic() < deadline:
        time.sleep(2)
    assert _orphans() == {}, f"loop devices on deleted volumes: {_orphans()}"


def test_prefill_writes_exactly_the_read_range_of_the_loop_device(cluster, namespace) -> None:
    # Two fresh 1Gi Block volumes, benchmarked with --pvc so that their images can be read
    # afterwards: what the loop device really wrote is in the sparse image's allocation.
    fresh = _block_pvc(cluster, namespace, "fresh")
    prefilled = _block_pvc(cluster, namespace, "prefilled")
    fresh_image, prefilled_image = CSI_VOLUMES / f"{fresh}.img", CSI_VOLUMES / f"{prefilled}.img"
    assert _holes(fresh_image) == (0, None)  # nothing written yet: one hole

    run = run_cli(
        "fio", "--volume-mode", "Block", "--profile", "quick", "--runtime", "3",
        "--ramp-time", "0", "-n", namespace, "-o", "json", "--pvc", "fresh", "--no-prefill",
    )  # fmt: skip
    # a given Block claim is overwritten, not given a test file
    assert "fio writes to the raw block device of PVC fresh" in run.stderr
    assert "test file" not in run.stderr
    without = _report(run)
    with_prefill = _quick_block(namespace, "--pvc", "prefilled")

    # --no-prefill: the read job read blocks nobody wrote, and the result says so
    notes = _notes(without)
    assert [n["job"] for n in notes["fio.block-unwritten-read"]] == ["read_iops"]
    assert "fio.block-prefill" not in notes
    assert "read_iops: read unwritten blocks" in without["results"][0]["confidence"]
    # with the prefill: reported, and the reads are not flagged
    notes = _notes(with_prefill)
    assert "fio.block-unwritten-read" not in notes
    assert "wrote 256Mi" in notes["fio.block-prefill"][0]["message"]
    assert "unwritten" not in with_prefill["results"][0]["confidence"]
    for report in (without, with_prefill):
        assert [j["name"] for j in report["results"][0]["jobs"]] == ["read_iops", "write_iops"]

    # The prefilled image has no hole in the read range and no data past it: the prefill
    # wrote [0, 256Mi) through the loop device, all of it and nothing more (write_iops writes
    # inside that range too).
    first_hole, data_after = _holes(prefilled_image)
    assert first_hole >= QUICK_READ_RANGE, f"a hole at {first_hole} inside the read range"
    assert data_after is None, f"data at {data_after}, past the read range"
    print(f"image written without prefill (holes, data past the range): {_holes(fresh_image)}")
    # The read runs measured different things: holes read without any media access.
    fresh_read = without["results"][0]["jobs"][0]
    prefilled_read = with_prefill["results"][0]["jobs"][0]
    print(
        f"read_iops unwritten: {fresh_read['read_iops']:.0f} IOPS p50 "
        f"{fresh_read['read_clat_p50_us']:.0f} µs; prefilled: {prefilled_read['read_iops']:.0f} "
        f"IOPS p50 {prefilled_read['read_clat_p50_us']:.0f} µs"
    )
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    for pv in (fresh, prefilled):
        _wait_until_detached(pv)  # the PVCs are the test's: still there, but not published


def test_interrupted_block_run_leaves_nothing(cluster, namespace) -> None:
    proc = start_cli(
        "fio", "-s", HOSTPATH_CLASS, "-z", "1Gi", "--volume-mode", "Block",
        "--profile", "quick", "--runtime", "30", "-n", namespace, "-v",
    )  # fmt: skip
    wait_for_stderr(proc, "fio starts", timeout=120)
    time.sleep(4)  # inside the exec of fio, the device published
    (pvc,) = cluster.get_json(
        "pvc", "-n", namespace, "-l", "app.kubernetes.io/managed-by=kubectl-storage"
    )["items"]
    pv = pvc["spec"]["volumeName"]
    attached = _loops_of(pv)
    assert any(backing == str(CSI_VOLUMES / f"{pv}.img") for backing in attached.values()), (
        f"the volume's image should be on a loop device while fio runs: {_loops()}"
    )
    print(f"while fio ran: {attached}")
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 180)
    assert proc.returncode == 130, err
    assert "deleted what run" in err
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    _wait_until_detached(pv)
    _wait_until_gone(CSI_VOLUMES / f"{pv}.img")
    _wait_until_no_orphan_loops()


def test_block_dry_run_plan_is_what_the_run_creates(cluster, namespace) -> None:
    # The rule of test_plan_matches_run.py, and the job file itself: the prefill the plan shows
    # is the one the run's ConfigMap holds.
    args = [
        "fio", "-s", HOSTPATH_CLASS, "-z", "1Gi", "--volume-mode", "Block",
        "--profile", "quick", "--runtime", "1", "--ramp-time", "0", "-n", namespace,
    ]  # fmt: skip
    dry = run_cli(*args, "--dry-run")
    assert dry.exit_code == 0, dry.stderr
    planned_docs = [d for d in yaml.safe_load_all(dry.stdout) if d]
    (planned_job,) = [d["data"]["job.fio"] for d in planned_docs if d["kind"] == "ConfigMap"]
    assert "[kubectl-storage-prefill]" in planned_job
    planned = _planned(args)
    report = _report(run_cli(*args, "--keep", "-o", "json", timeout=600))
    run_id = report["run_id"]
    try:
        assert _created(cluster, namespace, run_id) == planned
        (created,) = cluster.get_json(
            "configmaps", "-n", namespace, "-l", f"kubectl-storage/run-id={run_id}"
        )["items"]
        assert created["data"]["job.fio"] == planned_job
        (pvc,) = cluster.get_json("pvc", "-n", namespace, "-l", f"kubectl-storage/run-id={run_id}")[
            "items"
        ]
        assert pvc["spec"]["volumeMode"] == "Block"
        pv = pvc["spec"]["volumeName"]
    finally:
        _cleanup(namespace, run_id)
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    _wait_until_detached(pv)


# --- snapshots of block volumes ---------------------------------------------------------------


def test_block_snapshot_restore_and_clone_keep_the_bytes(cluster, namespace) -> None:
    source = _block_pvc(cluster, namespace, "src", size="64Mi")
    # bytes at the start and at 40 MiB, the rest never written
    _device_pod(
        cluster, namespace, "writer", "src",
        f"printf head-bytes | dd of={DEVICE} bs=512 conv=sync oflag=direct status=none && "
        f"printf tail-bytes | dd of={DEVICE} bs=512 seek=81920 conv=sync oflag=direct status=none",
    )  # fmt: skip
    cluster.apply(
        "apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata: {name: snap}\n"
        "spec: {volumeSnapshotClassName: csi-hostpath-snapclass, "
        "source: {persistentVolumeClaimName: src}}\n",
        namespace,
    )
    cluster.wait(namespace, "volumesnapshot/snap", "jsonpath={.status.readyToUse}=true")
    restored = _block_pvc(
        cluster, namespace, "restored", size="128Mi",
        source=", dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, "
        "name: snap}",
    )  # fmt: skip
    cloned = _block_pvc(
        cluster, namespace, "cloned", size="64Mi",
        source=", dataSource: {kind: PersistentVolumeClaim, name: src}",
    )  # fmt: skip
    read = (
        f"blockdev --getsize64 {DEVICE} && head -c 10 {DEVICE} && echo && "
        f"dd if={DEVICE} bs=512 skip=81920 count=1 status=none | head -c 10 && echo"
    )
    assert _device_pod(cluster, namespace, "read-restored", "restored", read).split() == [
        str(128 * 2**20),  # capacity honoured: the restore is the size asked for
        "head-bytes",
        "tail-bytes",
    ]
    assert _device_pod(cluster, namespace, "read-cloned", "cloned", read).split() == [
        str(64 * 2**20),
        "head-bytes",
        "tail-bytes",
    ]
    # copies are sparse: a few KiB of a 128Mi image are allocated
    allocated = (CSI_VOLUMES / f"{restored}.img").stat().st_blocks * 512
    assert allocated < 1 * 2**20, allocated
    for pv in (source, restored, cloned):
        _wait_until_detached(pv)


def test_snapshot_cp_refuses_a_block_snapshot(cluster, namespace, tmp_path) -> None:
    _block_pvc(cluster, namespace, "blk", size="64Mi")
    cluster.apply(
        "apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\nmetadata: {name: blk-snap}\n"
        "spec: {volumeSnapshotClassName: csi-hostpath-snapclass, "
        "source: {persistentVolumeClaimName: blk}}\n",
        namespace,
    )
    cluster.wait(namespace, "volumesnapshot/blk-snap", "jsonpath={.status.readyToUse}=true")
    content = cluster.get_json("volumesnapshotcontent")["items"]
    modes = [
        c["spec"].get("sourceVolumeMode")
        for c in content
        if c["spec"]["volumeSnapshotRef"].get("namespace") == namespace
    ]
    assert modes == ["Block"]  # the cluster records what the snapshot is of

    result = run_cli(
        "snapshot", "cp", "blk-snap:/etc/hostname", str(tmp_path / "out"), "-n", namespace,
        "--timeout", "40", "-v",
    )  # fmt: skip
    assert result.exit_code == 2, result.stderr
    assert "VolumeSnapshot blk-snap is of a raw block volume (volumeMode Block)" in result.stderr
    assert "Traceback" not in result.stderr
    # Refused before anything was made: no restore claim was even tried.
    assert "restoring" not in result.stderr
    assert "did not become" not in result.stderr
    assert not (tmp_path / "out").exists()
    assert managed(cluster, namespace, FIO_OBJECTS) == []
    browse = run_cli("snapshot", "browse", "--pvc", "blk", "--tree", "-n", namespace)
    assert browse.exit_code == 2, browse.stderr
    assert "PVC blk is of a raw block volume" in browse.stderr
    assert managed(cluster, namespace, FIO_OBJECTS) == []
