"""`snapshot check --freeze` on the real cluster. The test driver's volumes live on an ext4 of
their own (tests/cluster/harness.py, CSI_VOLUMES), so freezing one freezes that filesystem and
not the node's: the freeze is observed from the host while the run is paused. Where the
namespace forbids the freezer, and where a volume shares the node's filesystem (local-path keeps
its volumes on the host's root filesystem), the check runs without a freeze and says why."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.snapshot.freeze import freezer_pod
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.connection import ConnectionSettings, connect
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.snapshot.freeze import start_freeze
from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import SNAPSHOT_OBJECTS, managed
from tests.e2e.test_snapshot import CLASS, _ok

pytestmark = pytest.mark.cluster

VOLUME_FS = "/var/lib/csi-hostpath-data/volumes"
FREEZE = ("-s", CLASS, "-z", "64Mi", "--freeze", "--under-load")


def _frozen() -> bool:
    """Whether the volume filesystem is frozen: freezing it again is refused with EBUSY."""
    probe = subprocess.run(["fsfreeze", "--freeze", VOLUME_FS], capture_output=True, text=True)
    if probe.returncode == 0:  # it was not frozen: undo our own freeze at once
        subprocess.run(["fsfreeze", "--unfreeze", VOLUME_FS], check=True)
        return False
    assert "Device or resource busy" in probe.stderr, probe.stderr
    return True


def _writable(timeout: float = 10) -> bool:
    """A write to the volume filesystem from the host finishes (it blocks while frozen)."""
    try:
        subprocess.run(
            ["sh", "-c", f"echo x > {VOLUME_FS}/.e2e-probe && sync {VOLUME_FS}/.e2e-probe"],
            check=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return False
    Path(VOLUME_FS, ".e2e-probe").unlink()
    return True


def test_the_freeze_is_real_and_holds_the_writer(cluster, namespace) -> None:
    assert not _frozen()
    proc = start_cli("snapshot", "check", *FREEZE, "-n", namespace, "-o", "json")
    wait_for_stderr(proc, "source filesystem frozen", timeout=240)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        frozen_meanwhile = _frozen()
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    stdout, stderr = finish_cli(proc, 300)
    assert proc.returncode == 0, stderr
    assert frozen_meanwhile
    report = json.loads(stdout)
    freeze = report["freeze"]
    assert freeze["frozen"] is True
    assert (freeze["thawedBy"], freeze["cutWhileFrozen"]) == ("run", True)
    assert freeze["acknowledgedWhileFrozen"] == 0
    assert freeze["problems"] == []
    assert report["verdict"] == "pass", report["problems"]
    assert [f["tornRecord"] for f in report["underLoad"]["files"]] == [None, None]
    assert report["underLoad"]["crashConsistent"] is True
    assert _writable()
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_sigint_while_frozen_thaws_before_it_deletes(cluster, namespace) -> None:
    proc = start_cli("snapshot", "check", *FREEZE, "-n", namespace, "-v")
    wait_for_stderr(proc, "source filesystem frozen", timeout=240)
    proc.send_signal(signal.SIGINT)
    _, stderr = finish_cli(proc, 240)
    assert proc.returncode == 130, stderr
    assert "undoing: thaw the source filesystem" in stderr
    assert stderr.index("undoing: thaw") < stderr.index("cleaning up")
    assert not _frozen()
    assert _writable()
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_restricted_namespace_gets_no_freezer_and_a_check_without_one(cluster, namespace) -> None:
    cluster.kubectl_run(
        "label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted"
    )
    plan = run_cli("snapshot", "check", "-s", CLASS, "--freeze", "--dry-run", "-n", namespace)
    names = [d["metadata"]["name"] for d in yaml.safe_load_all(_ok(plan)) if d]
    assert not [n for n in names if n.endswith("-freezer")]
    result = run_cli(
        "snapshot", "check", "-s", CLASS, "-z", "64Mi", "--freeze", "-n", namespace, "-o", "json"
    )
    report = json.loads(_ok(result))
    assert report["verdict"] == "pass"
    assert report["freeze"]["frozen"] is False
    assert 'enforces the "restricted" Pod Security level' in report["freeze"]["reason"]
    assert "not freezing" in result.stderr
    assert managed(cluster, namespace, SNAPSHOT_OBJECTS) == []


def test_a_volume_on_the_nodes_own_filesystem_is_not_frozen(cluster, namespace) -> None:
    """local-path keeps volumes on the host's root filesystem, which a freeze would stall with
    the whole node. The freezer (driven in-process: local-path has no snapshots, so `snapshot
    check` cannot run on it) sees that its volume shares the pod's /etc/hosts device and does
    not freeze."""
    cluster.apply(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: local}\n"
        "spec: {storageClassName: local-path, accessModes: [ReadWriteOnce], "
        "resources: {requests: {storage: 16Mi}}}\n---\n"
        "apiVersion: v1\nkind: Pod\nmetadata: {name: writer, labels: {role: w}}\n"
        "spec: {terminationGracePeriodSeconds: 0, containers: [{name: c, image: "
        f"{cluster.toolbox_image}, command: [sleep, '600'], volumeMounts: "
        "[{name: v, mountPath: /v}]}], volumes: [{name: v, persistentVolumeClaim: "
        "{claimName: local}}]}\n",
        namespace,
    )
    cluster.wait(namespace, "pod/writer", "condition=Ready")
    api = KubeApi(connect(ConnectionSettings(kubeconfig=cluster.kubeconfig, namespace=namespace)))
    steps: list[str] = []
    with RunScope(api, "e2e-freeze") as scope:
        result = start_freeze(
            api,
            scope,
            freezer_pod(
                "freezer", namespace, cluster.toolbox_image, pvc="local",
                writer_labels={"role": "w"},
            ),
            "local",
            namespace,
            120,
            steps.append,
        )  # fmt: skip
    assert not hasattr(result, "thaw"), "it froze the node's filesystem"
    assert result.frozen is False
    assert "the volume is on the node's own filesystem" in str(result.reason)
    assert any("not freezing" in s for s in steps)
    assert api.get_or_none(kinds.POD, "freezer", namespace) is None  # the scope deleted it
