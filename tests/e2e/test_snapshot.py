"""`kubectl storage snapshot` on the real cluster: check, list, browse, cp, interruption.

csi-hostpath-sc (hostpath.csi.k8s.io) really snapshots and restores; local-path has no snapshot
class. Each test works in its own namespace; the autouse check in conftest.py fails a test that
leaves any object labelled managed-by=kubectl-storage behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import select
import signal
import sys
import time
import uuid

import pytest

from tests.conftest import REPO, finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import HOSTPATH_CLASS, SNAPSHOT_OBJECTS, managed

CLASS = HOSTPATH_CLASS
SNAPSHOT_CLASS = "csi-hostpath-snapclass"
DRIVER = "hostpath.csi.k8s.io"


# -- helpers ----------------------------------------------------------------------------------


def _volume_with_files(cluster, namespace: str, script: str, pvc: str = "data") -> None:
    """A PVC on csi-hostpath-sc with a pod ("writer") that ran ``script`` in /data."""
    cluster.apply(
        f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {pvc}}}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {CLASS}
  resources: {{requests: {{storage: 100Mi}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: writer}}
spec:
  terminationGracePeriodSeconds: 0
  securityContext: {{runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, runAsNonRoot: true}}
  containers:
  - name: w
    image: {cluster.toolbox_image}
    imagePullPolicy: IfNotPresent
    command: [sleep, "3600"]
    volumeMounts: [{{name: d, mountPath: /data}}]
  volumes:
  - name: d
    persistentVolumeClaim: {{claimName: {pvc}}}
""",
        namespace,
    )
    cluster.wait(namespace, "pod/writer", "condition=Ready")
    _in_writer(cluster, namespace, script)


def _in_writer(cluster, namespace: str, script: str) -> str:
    return cluster.kubectl_run(
        "-n", namespace, "exec", "writer", "--", "sh", "-c", f"set -eu; cd /data; {script}; sync"
    ).stdout


def _snapshot(cluster, namespace: str, name: str, pvc: str = "data") -> dict:
    cluster.apply(
        f"apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\n"
        f"metadata: {{name: {name}}}\n"
        f"spec: {{volumeSnapshotClassName: {SNAPSHOT_CLASS}, "
        f"source: {{persistentVolumeClaimName: {pvc}}}}}\n",
        namespace,
    )
    cluster.wait(namespace, f"volumesnapshot/{name}", "jsonpath={.status.readyToUse}=true")
    return cluster.get_json("volumesnapshot", name, "-n", namespace)


def _contents_for(cluster, namespace: str) -> list[str]:
    """VolumeSnapshotContents (cluster-scoped, unlabelled) that point into ``namespace``: a
    snapshot deleted half-made can leave its content behind."""
    items = cluster.get_json("volumesnapshotcontents")["items"]
    return [
        i["metadata"]["name"]
        for i in items
        if i["spec"].get("volumeSnapshotRef", {}).get("namespace") == namespace
    ]


def _ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    return result.stdout


# -- check ------------------------------------------------------------------------------------


def test_check_passes_on_the_csi_class(cluster, namespace) -> None:
    result = run_cli("snapshot", "check", "-s", CLASS, "-n", namespace, "-o", "json", "-v")
    report = json.loads(_ok(result))
    assert (report["kind"], report["verdict"]) == ("SnapshotCheckReport", "pass")
    assert report["snapshotClass"] == SNAPSHOT_CLASS  # inferred from the provisioner
    assert report["driver"] == DRIVER
    assert [s["name"] for s in report["steps"]] == [
        "provision source volume",
        "take earlier snapshot",
        "write known files",
        "take snapshot",
        "change source",
        "restore snapshot",
        "verify restore",
    ]
    assert all(s["seconds"] >= 0 for s in report["steps"])
    statuses = {f["path"]: f["status"] for f in report["files"]}
    assert statuses.pop("dir/added-after-snapshot.bin") == "absent"
    assert set(statuses.values()) == {"ok"}
    assert len(statuses) == 6
    assert sum(f["changedAfterSnapshot"] for f in report["files"]) == 4
    assert report["problems"] == []
    assert report["earlierSnapshot"]["marked"] is True
    assert report["earlierSnapshot"]["restoreIsEarlier"] is False
    assert "cleaning up 6 object(s)" in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_check_table_output(cluster, namespace) -> None:
    out = _ok(run_cli("snapshot", "check", "-s", CLASS, "-n", namespace))
    assert out.startswith(f"Snapshot check of StorageClass {CLASS}: PASS\n")
    assert "absent (ok)" in out
    assert "none of the change" in out


def test_check_in_a_restricted_namespace(cluster, namespace) -> None:
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    result = run_cli("snapshot", "check", "-s", CLASS, "-n", namespace, "-o", "json")
    assert json.loads(_ok(result))["verdict"] == "pass"


def test_check_on_a_class_without_snapshot_class_creates_nothing(cluster, namespace) -> None:
    result = run_cli("snapshot", "check", "-s", "local-path", "-n", namespace)
    assert result.exit_code == 2
    assert "StorageClass local-path cannot be snapshotted" in result.stderr
    assert "rancher.io/local-path" in result.stderr
    assert f"{SNAPSHOT_CLASS} ({DRIVER})" in result.stderr  # what exists instead
    assert cluster.get_json("events", "-n", namespace)["items"] == []
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_check_refuses_a_snapshot_class_of_another_driver(cluster, namespace) -> None:
    result = run_cli(
        "snapshot", "check", "-s", "local-path", "--snapshot-class", SNAPSHOT_CLASS, "-n", namespace
    )
    assert result.exit_code == 2
    assert f"VolumeSnapshotClass {SNAPSHOT_CLASS} is for driver {DRIVER}" in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_check_dry_run_infers_the_snapshot_class(cluster, namespace) -> None:
    out = _ok(run_cli("snapshot", "check", "-s", CLASS, "-n", namespace, "--dry-run"))
    assert f"volumeSnapshotClassName: {SNAPSHOT_CLASS}" in out
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


# -- list -------------------------------------------------------------------------------------


def test_list_shows_a_snapshot_with_its_fields(cluster, namespace) -> None:
    _volume_with_files(cluster, namespace, "head -c 100000 /dev/urandom > blob")
    created = _snapshot(cluster, namespace, "nightly")
    report = json.loads(_ok(run_cli("snapshot", "list", "-n", namespace, "-o", "json")))
    assert report["kind"] == "SnapshotList"
    [entry] = report["snapshots"]
    assert entry["name"] == "nightly"
    assert entry["namespace"] == namespace
    assert entry["readyToUse"] is True
    assert entry["sourcePvc"] == "data"
    assert entry["sourcePvcPresent"] is True
    assert entry["sourceContent"] is None
    assert entry["snapshotClass"] == SNAPSHOT_CLASS
    assert entry["driver"] == DRIVER
    assert entry["boundContent"] == created["status"]["boundVolumeSnapshotContentName"]
    assert entry["restoreSizeBytes"] >= 100000
    assert entry["error"] is None
    assert entry["ageSeconds"] < 600

    table = _ok(run_cli("snapshot", "list", "-n", namespace))
    header, row = table.splitlines()[:2]
    assert header.split()[:3] == ["NAME", "READY", "SOURCE"]
    assert row.split()[:5] == ["nightly", "true", "pvc/data", SNAPSHOT_CLASS, DRIVER]

    everywhere = _ok(run_cli("snapshot", "list", "-A"))
    assert any(line.split()[:2] == [namespace, "nightly"] for line in everywhere.splitlines())


def test_list_in_an_empty_namespace(cluster, namespace) -> None:
    out = _ok(run_cli("snapshot", "list", "-n", namespace))
    assert out == f"No VolumeSnapshots found in namespace {namespace}.\n"


# -- browse -----------------------------------------------------------------------------------


def test_browse_tree_shows_the_snapshot_time_files_only(cluster, namespace) -> None:
    _volume_with_files(
        cluster, namespace, "mkdir -p logs && echo one > logs/before.log && echo x > top.txt"
    )
    _snapshot(cluster, namespace, "snap")
    _in_writer(cluster, namespace, "echo two > logs/after.log && rm top.txt")
    result = run_cli("snapshot", "browse", "snap", "--tree", "-n", namespace, "-v")
    tree = _ok(result)
    assert "before.log" in tree
    assert "top.txt" in tree
    assert "after.log" not in tree
    assert "the class of source PVC data" in result.stderr

    listing = json.loads(
        _ok(run_cli("snapshot", "browse", "snap", "logs", "--ls", "-n", namespace, "-o", "json"))
    )
    assert listing["kind"] == "SnapshotListing"
    assert [(e["path"], e["type"], e["sizeBytes"]) for e in listing["entries"]] == [
        ("before.log", "file", 4)
    ]
    missing = run_cli("snapshot", "browse", "snap", "nope", "--tree", "-n", namespace)
    assert missing.exit_code == 2
    assert "nope does not exist in snapshot snap" in missing.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_browse_a_live_pvc_deletes_its_temporary_snapshot(cluster, namespace) -> None:
    _volume_with_files(cluster, namespace, "echo live > now.txt")
    result = run_cli(
        "snapshot",
        "browse",
        "--pvc",
        "data",
        "--snapshot-class",
        SNAPSHOT_CLASS,
        "--tree",
        "-n",
        namespace,
        "-v",
    )
    assert "now.txt" in _ok(result)
    assert "taking temporary VolumeSnapshot" in result.stderr
    assert "cleaning up 3 object(s)" in result.stderr
    assert cluster.get_json("volumesnapshots", "-n", namespace)["items"] == []


def test_a_snapshot_whose_source_pvc_is_gone_still_browses(cluster, namespace) -> None:
    _volume_with_files(cluster, namespace, "echo kept > kept.txt")
    _snapshot(cluster, namespace, "orphan")
    cluster.kubectl_run("-n", namespace, "delete", "pod", "writer", "--grace-period=0")
    cluster.kubectl_run("-n", namespace, "delete", "pvc", "data", "--wait=true")
    report = json.loads(_ok(run_cli("snapshot", "list", "-n", namespace, "-o", "json")))
    assert report["snapshots"][0]["sourcePvcPresent"] is False
    assert "pvc/data (gone)" in _ok(run_cli("snapshot", "list", "-n", namespace))

    inferred = run_cli("snapshot", "browse", "orphan", "--tree", "-n", namespace, "-v")
    assert "kept.txt" in _ok(inferred)
    assert f"the only StorageClass of driver {DRIVER}" in inferred.stderr
    given = run_cli("snapshot", "browse", "orphan", "--tree", "-s", CLASS, "-n", namespace, "-v")
    assert "kept.txt" in _ok(given)
    assert "given with --storage-class" in given.stderr
    wrong = run_cli("snapshot", "browse", "orphan", "--tree", "-s", "local-path", "-n", namespace)
    assert wrong.exit_code == 2
    assert f"was taken by driver {DRIVER}" in wrong.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_pre_provisioned_snapshot_browses(cluster, namespace) -> None:
    _volume_with_files(cluster, namespace, "echo imported > imported.txt")
    dynamic = _snapshot(cluster, namespace, "original")
    content = cluster.get_json(
        "volumesnapshotcontent", dynamic["status"]["boundVolumeSnapshotContentName"]
    )
    handle = content["status"]["snapshotHandle"]
    imported = f"e2e-imported-{uuid.uuid4().hex[:8]}"
    try:
        cluster.apply(
            f"""
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotContent
metadata: {{name: {imported}}}
spec:
  deletionPolicy: Retain
  driver: {DRIVER}
  source: {{snapshotHandle: {handle}}}
  sourceVolumeMode: Filesystem
  volumeSnapshotRef: {{name: imported, namespace: {namespace}}}
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {{name: imported, namespace: {namespace}}}
spec:
  source: {{volumeSnapshotContentName: {imported}}}
"""
        )
        cluster.wait(namespace, "volumesnapshot/imported", "jsonpath={.status.readyToUse}=true")
        listed = json.loads(_ok(run_cli("snapshot", "list", "-n", namespace, "-o", "json")))
        entry = next(s for s in listed["snapshots"] if s["name"] == "imported")
        assert entry["sourceContent"] == imported
        assert entry["sourcePvc"] is None
        assert entry["driver"] == DRIVER
        result = run_cli(
            "snapshot", "browse", "imported", "--tree", "--size", "100Mi", "-n", namespace, "-v"
        )
        assert "imported.txt" in _ok(result)
        assert f"the only StorageClass of driver {DRIVER}" in result.stderr
    finally:
        cluster.kubectl_run(
            "-n", namespace, "delete", "volumesnapshot", "imported", "--ignore-not-found"
        )
        cluster.kubectl_run("delete", "volumesnapshotcontent", imported, "--ignore-not-found")


def test_browse_of_a_missing_snapshot(cluster, namespace) -> None:
    result = run_cli("snapshot", "browse", "nope", "--tree", "-n", namespace)
    assert result.exit_code == 2
    assert f'VolumeSnapshot "nope" does not exist in namespace {namespace}' in result.stderr


def _read_until(fd: int, seen: bytearray, needle: bytes, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            return False
        if not chunk:
            return False
        seen.extend(chunk)
        if needle in seen:
            return True
    return False


def test_interactive_shell_in_a_terminal(cluster, namespace) -> None:
    _volume_with_files(cluster, namespace, "echo hello-from-snapshot > greeting.txt")
    _snapshot(cluster, namespace, "snap")
    env = dict(os.environ, PYTHONPATH=str(REPO), TERM="xterm")
    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI on a terminal, as a person runs it
        os.execvpe(
            sys.executable,
            [
                sys.executable,
                "-m",
                "kubectl_storage",
                "snapshot",
                "browse",
                "snap",
                "-n",
                namespace,
            ],
            env,
        )
    seen = bytearray()
    try:
        assert _read_until(fd, seen, b"snapshot:/snapshot$"), seen.decode(errors="replace")
        os.write(fd, b"cat greeting.txt; touch new; echo END-$((6*7))\r")
        assert _read_until(fd, seen, b"END-42"), seen.decode(errors="replace")
        os.write(fd, b"exit\r")
        _read_until(fd, seen, b"cleaning up", timeout=60)
        _, status = os.waitpid(pid, 0)
    except BaseException:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(fd)
    text = seen.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text
    assert "hello-from-snapshot" in text
    assert "Read-only file system" in text  # mounted read-only
    assert "cleaning up 2 object(s)" in text


# -- cp ---------------------------------------------------------------------------------------


def test_cp_returns_identical_bytes_and_modes(cluster, namespace, tmp_path) -> None:
    _volume_with_files(
        cluster,
        namespace,
        "mkdir -p app/bin && head -c 1500000 /dev/urandom > app/blob.bin && "
        "chmod 640 app/blob.bin && printf '#!/bin/sh\\n' > app/bin/run && chmod 750 app/bin/run",
    )
    remote_sum = _in_writer(cluster, namespace, "sha256sum app/blob.bin").split()[0]
    _snapshot(cluster, namespace, "snap")
    _in_writer(cluster, namespace, "echo changed >> app/blob.bin")
    target = tmp_path / "blob.bin"
    result = run_cli("snapshot", "cp", "snap:/app/blob.bin", str(target), "-n", namespace)
    assert result.stdout.startswith("copied 1 file (1.4Mi)"), result.stderr
    data = target.read_bytes()
    assert len(data) == 1500000  # the snapshot's version, without the later append
    assert hashlib.sha256(data).hexdigest() == remote_sum
    assert target.stat().st_mode & 0o777 == 0o640

    again = run_cli("snapshot", "cp", "snap:/app/blob.bin", str(target), "-n", namespace)
    assert again.exit_code == 2
    assert "exists; not overwriting it" in again.stderr
    target.write_bytes(b"local edit")
    forced = run_cli("snapshot", "cp", "snap:app/blob.bin", str(target), "--force", "-n", namespace)
    assert forced.exit_code == 0, forced.stderr
    assert hashlib.sha256(target.read_bytes()).hexdigest() == remote_sum

    folder = json.loads(
        _ok(run_cli("snapshot", "cp", "snap:/app", str(tmp_path), "-n", namespace, "-o", "json"))
    )
    assert folder["kind"] == "SnapshotCopy"
    assert (folder["files"], folder["directories"]) == (2, 2)
    assert (tmp_path / "app" / "bin" / "run").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "app" / "bin" / "run").read_bytes() == b"#!/bin/sh\n"
    missing = run_cli("snapshot", "cp", "snap:/nope", str(tmp_path / "x"), "-n", namespace)
    assert missing.exit_code == 2
    assert "/nope does not exist in snapshot snap" in missing.stderr
    assert not (tmp_path / "x").exists()
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


# -- interruption -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("when", "sig", "code"),
    [
        ("creating PVC", signal.SIGINT, 130),
        ("taking the earlier VolumeSnapshot", signal.SIGINT, 130),
        ("writing known files", signal.SIGINT, 130),
        ("waiting for the snapshot", signal.SIGINT, 130),
        ("changing the source", signal.SIGINT, 130),
        ("waiting for the restored volume", signal.SIGINT, 130),
        ("comparing checksums", signal.SIGINT, 130),
        ("waiting for the restored volume", signal.SIGTERM, 143),
    ],
)
def test_interrupted_check_leaves_nothing(
    cluster, namespace, when: str, sig: signal.Signals, code: int
) -> None:
    proc = start_cli("snapshot", "check", "-s", CLASS, "-n", namespace, "-v")
    wait_for_stderr(proc, when)
    proc.send_signal(sig)
    _, err = finish_cli(proc, 240)
    assert proc.returncode == code, err
    assert "deleted what run" in err
    assert "Traceback" not in err
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []
    assert cluster.get_json("volumesnapshots", "-n", namespace)["items"] == []
    assert _contents_for(cluster, namespace) == []


def test_interrupted_browse_leaves_nothing(cluster, namespace) -> None:
    _volume_with_files(cluster, namespace, "echo x > x")
    proc = start_cli("snapshot", "browse", "--pvc", "data", "--tree", "-n", namespace, "-v")
    wait_for_stderr(proc, "taking temporary VolumeSnapshot")
    proc.send_signal(signal.SIGINT)
    _, err = finish_cli(proc, 240)
    assert proc.returncode == 130, err
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []
    assert cluster.get_json("volumesnapshots", "-n", namespace)["items"] == []
    assert _contents_for(cluster, namespace) == []
    # The user's PVC must not keep the snapshot controller's finalizer.
    data = cluster.get_json("pvc", "data", "-n", namespace)
    assert "snapshot.storage.kubernetes.io/pvc-as-source-protection" not in data["metadata"].get(
        "finalizers", []
    )
