"""Shell completion against the real test cluster: names come from the cluster, the flags on the
line choose which cluster and namespace, and kubectl itself runs kubectl_complete-storage.

Objects are created only in a namespace of this module's own (``ks-compl-…``): two PVCs on the
WaitForFirstConsumer class (they stay Pending, nothing is provisioned) and a VolumeSnapshot
whose source does not exist (listed by the API, never bound).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, run_cli

PVCS = ("data-a", "data-b")
SNAPSHOT = "nightly-1"


def complete(*words: str, env: dict[str, str] | None = None) -> list[str]:
    """The candidates (without descriptions) ``__complete`` prints, the directive last."""
    result = run_cli("__complete", *words, env=env)
    assert (result.exit_code, result.stderr) == (0, ""), result.stderr
    return [line.split("\t")[0] for line in result.stdout.splitlines()]


def names_of(cluster, *args: str) -> list[str]:
    return sorted(item["metadata"]["name"] for item in cluster.get_json(*args)["items"])


@pytest.fixture(scope="module")
def own_namespace(cluster) -> Iterator[str]:
    name = f"ks-compl-{uuid.uuid4().hex[:6]}"
    cluster.kubectl_run("create", "namespace", name)
    try:
        for pvc in PVCS:
            cluster.apply(
                "apiVersion: v1\nkind: PersistentVolumeClaim\n"
                f"metadata: {{name: {pvc}}}\n"
                "spec: {accessModes: [ReadWriteOnce], storageClassName: local-path,"
                " resources: {requests: {storage: 1Mi}}}\n",
                namespace=name,
            )
        cluster.apply(
            "apiVersion: snapshot.storage.k8s.io/v1\nkind: VolumeSnapshot\n"
            f"metadata: {{name: {SNAPSHOT}}}\n"
            "spec: {volumeSnapshotClassName: csi-hostpath-snapclass,"
            " source: {persistentVolumeClaimName: no-such-claim}}\n",
            namespace=name,
        )
        yield name
    finally:
        cluster.kubectl_run(
            "-n", name, "delete", "volumesnapshot", "--all", "--wait=false", check=False
        )
        no_finalizers = '{"metadata":{"finalizers":null}}'
        cluster.kubectl_run(
            *("-n", name, "patch", "volumesnapshot", SNAPSHOT, "--type=merge"),
            *("-p", no_finalizers),
            check=False,
        )
        cluster.kubectl_run(
            "delete", "namespace", name, "--wait=true", "--timeout=120s", check=False, timeout=180
        )


def test_storage_class_names(cluster) -> None:
    expected = names_of(cluster, "storageclasses")
    assert expected
    assert complete("fio", "-s", "") == [*expected, ":4"]
    assert complete("validate-persistence", "--storage-class", "") == [*expected, ":4"]
    prefix = expected[0][:3]
    assert complete("fio", f"--storage-class={prefix}") == [
        *(f"--storage-class={n}" for n in expected if n.startswith(prefix)),
        ":4",
    ]
    described = run_cli("__complete", "fio", "-s", "").stdout
    sc = cluster.get_json("storageclass", expected[0])
    assert f"{expected[0]}\t{sc['provisioner']}" in described


def test_node_names(cluster) -> None:
    expected = names_of(cluster, "nodes")
    assert cluster.node in expected
    for words in (["iscsi", ""], ["mount-audit", "--all-nodes", ""], ["fio", "--node", ""]):
        assert complete(*words) == [*expected, ":4"], words
    assert complete("iscsi", cluster.node, "") == [*expected, ":4"]  # one more node


def test_pvc_names_in_the_namespace_given(cluster, own_namespace: str) -> None:
    expected = [*PVCS, ":4"]
    assert complete("-n", own_namespace, "fio", "--pvc", "") == expected
    assert complete("fio", "-n", own_namespace, "--pvc", "") == expected
    assert complete("snapshot", "browse", f"--namespace={own_namespace}", "--pvc", "d") == expected
    assert complete("fio", "--pvc", "") != expected  # the context's namespace has none of them


def test_snapshot_names(cluster, own_namespace: str) -> None:
    assert complete("-n", own_namespace, "snapshot", "browse", "") == [SNAPSHOT, ":4"]
    assert complete("snapshot", "cp", "-n", own_namespace, "night") == [f"{SNAPSHOT}:", ":6"]


def test_namespaces(cluster, own_namespace: str) -> None:
    assert own_namespace in complete("-n", "")
    assert complete("fio", "--namespace", own_namespace[:-1]) == [own_namespace, ":4"]


def test_kubeconfig_and_context_on_the_line(cluster, own_namespace: str, tmp_path: Path) -> None:
    """A kubeconfig whose current context is unreachable: --context picks the working one,
    and the namespace comes from that context."""
    config = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    real = config["contexts"][0]
    config["clusters"].append({"name": "gone", "cluster": {"server": "https://127.0.0.1:1"}})
    config["contexts"] = [
        {"name": "gone", "context": {"cluster": "gone", "user": real["context"]["user"]}},
        {"name": "real", "context": {**real["context"], "namespace": own_namespace}},
    ]
    config["current-context"] = "gone"
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump(config))
    no_env = {"KUBECONFIG": "/nonexistent/kubeconfig"}
    assert complete("--kubeconfig", str(path), "fio", "--pvc", "", env=no_env) == [":4"]
    assert complete(
        "--kubeconfig", str(path), "--context", "real", "fio", "--pvc", "", env=no_env
    ) == [*PVCS, ":4"]
    assert complete("fio", "--context", "real", "--pvc", "", env={"KUBECONFIG": str(path)}) == [
        *PVCS,
        ":4",
    ]
    assert complete("--kubeconfig", str(path), "--context", "", env=no_env) == [
        "gone",
        "real",
        ":4",
    ]


def test_kubectl_runs_kubectl_complete_storage(cluster, tmp_path: Path) -> None:
    """kubectl's own completion of `kubectl storage …`, with the plugin and its completion
    executable (build/kubectl_complete-storage) on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    plugin = bin_dir / "kubectl-storage"
    plugin.write_text(
        f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m kubectl_storage "$@"\n'
    )
    plugin.chmod(0o755)
    shutil.copyfile(
        REPO / "build" / "kubectl_complete-storage", bin_dir / "kubectl_complete-storage"
    )
    (bin_dir / "kubectl_complete-storage").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    def kubectl_complete(*words: str) -> list[str]:
        started = time.monotonic()
        result = subprocess.run(
            [cluster.kubectl, "__complete", *words],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - started < 10
        return [line.split("\t")[0] for line in result.stdout.splitlines()]

    assert "storage" in kubectl_complete("stor")
    assert kubectl_complete("storage", "snapshot", "c") == ["check", "cp", ":4"]
    assert kubectl_complete("storage", "fio", "-s", "") == [
        *names_of(cluster, "storageclasses"),
        ":4",
    ]
    assert kubectl_complete("storage", "iscsi", "") == [*names_of(cluster, "nodes"), ":4"]


def test_through_krew_after_the_caveats_copy(cluster, tmp_path: Path) -> None:
    """The krew archive installed by krew, the completion executable copied into
    ~/.krew/bin as the manifest's caveats say, then kubectl completes `kubectl storage`."""
    from tests.e2e.test_krew_install import krew_tools  # builds or reuses krew
    from tests.packaging.conftest import load_package_module, missing

    package = load_package_module()
    os_name, arch = package.host_platform()
    archive = package.DIST / package.archive_name(os_name, arch)
    manifest = package.DIST / f"{package.PLUGIN}.yaml"
    for path in (archive, manifest):
        if not path.is_file():
            missing(f"dist/{path.name}")
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "kubectl").symlink_to(cluster.kubectl)
    (shim / "kubectl-krew").symlink_to(krew_tools() / "krew")
    krew_root = tmp_path / "krew"
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "KREW_ROOT": str(krew_root),
        "KREW_NO_UPGRADE_CHECK": "1",
        "PATH": f"{krew_root / 'bin'}{os.pathsep}{shim}{os.pathsep}/usr/bin:/bin",
        "KUBECONFIG": cluster.kubeconfig,
    }
    installed = subprocess.run(
        ["kubectl", "krew", "install", f"--manifest={manifest}", f"--archive={archive}"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    (completer,) = (krew_root / "store" / "storage").glob("*/kubectl_complete-storage")
    assert os.access(completer, os.X_OK)
    # the caveats: cp ~/.krew/store/storage/*/kubectl_complete-storage ~/.krew/bin/
    shutil.copy2(completer, krew_root / "bin" / "kubectl_complete-storage")
    result = subprocess.run(
        ["kubectl", "__complete", "storage", "fio", "-s", ""],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    offered = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert offered == [*names_of(cluster, "storageclasses"), ":4"]
