"""`kubectl storage snapshot` without a cluster: usage errors first, --dry-run manifests."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import run_cli
from tests.unit.k8s.test_k8s_manifests import restricted_violations

NO_CLUSTER = {"KUBECONFIG": "/nonexistent/kubeconfig", "KUBERNETES_SERVICE_HOST": ""}


def test_group_without_subcommand_shows_help() -> None:
    result = run_cli("snapshot", env=NO_CLUSTER)
    assert result.exit_code == 0
    for command in ("list", "check", "browse", "cp"):
        assert command in result.stdout
    assert "Examples" in result.stdout


@pytest.mark.parametrize("command", ["list", "check", "browse", "cp"])
def test_every_command_has_examples(command: str) -> None:
    result = run_cli("snapshot", command, "--help")
    assert result.exit_code == 0
    assert "Examples" in result.stdout
    assert f"kubectl storage snapshot {command}" in result.stdout


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["list", "--bogus"], "--bogus"),
        (["check", "-z", "45", "--dry-run"], "45Gi"),
        (["check", "-z", "10Mi", "-s", "fast", "--snapshot-class", "v", "--dry-run"], "-z 10Mi"),
        (["check", "--timeout", "0", "--dry-run"], "--timeout"),
        (["check", "--timeout", "soon"], "--timeout"),
        (["check", "--toleration", ":NoSchedule", "--dry-run"], "toleration"),
        (["check", "--node-selector", "zone", "--dry-run"], "node selector"),
        (["browse"], "--pvc"),
        (["browse", "snap", "--tree", "--ls"], "--tree or --ls"),
        (["browse", "snap", "logs"], "--tree or --ls"),
        (["browse", "snap", "../../etc", "--tree"], "outside the snapshot"),
        (["browse", "snap", "--pvc", "data", "x", "--tree"], "not both"),
        (["browse", "snap", "--snapshot-class", "v", "--tree"], "--snapshot-class"),
        (["browse", "snap"], "--tree"),  # no terminal: say so and offer the listings
        (["cp", "snap", "out"], "SNAPSHOT:PATH"),
        (["cp", "snap:/x"], "LOCAL"),
        (["cp", "snap:../x", "out"], "outside the snapshot"),
        (["cp", "snap:/x", "/nonexistent-dir/x"], "/nonexistent-dir does not exist"),
    ],
)
def test_usage_errors_exit_2_before_any_connection(args: list[str], named: str) -> None:
    result = run_cli("snapshot", *args, env=NO_CLUSTER)
    assert result.exit_code == 2, result.stderr
    assert named in result.stderr
    assert result.stderr.startswith("error: ")
    assert "no cluster is configured" not in result.stderr  # refused before connecting
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_browse_without_a_terminal_suggests_listings() -> None:
    result = run_cli("snapshot", "browse", "snap", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert "needs a terminal" in result.stderr
    assert "--ls PATH" in result.stderr
    assert "snapshot cp" in result.stderr


def test_cp_refuses_to_overwrite_before_anything(tmp_path) -> None:
    existing = tmp_path / "app.conf"
    existing.write_text("mine")
    result = run_cli("snapshot", "cp", "snap:/etc/app.conf", str(existing), env=NO_CLUSTER)
    assert result.exit_code == 2
    assert f"{existing} exists; not overwriting it" in result.stderr
    assert "--force" in result.stderr
    into_dir = run_cli("snapshot", "cp", "snap:/etc/app.conf", str(tmp_path), env=NO_CLUSTER)
    assert into_dir.exit_code == 2
    assert "app.conf exists" in into_dir.stderr
    assert existing.read_text() == "mine"
    forced = run_cli("snapshot", "cp", "snap:/etc/app.conf", str(existing), "-f", env=NO_CLUSTER)
    assert "no cluster is configured" in forced.stderr  # got past the check, to the connection


@pytest.mark.parametrize("command", [["list"], ["list", "-A"], ["check", "-s", "fast"]])
def test_no_cluster_is_a_clear_error(command: list[str]) -> None:
    result = run_cli("snapshot", *command, env=NO_CLUSTER)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no cluster is configured")


def test_check_dry_run_prints_every_object_and_creates_nothing() -> None:
    result = run_cli(
        "snapshot",
        "check",
        "-s",
        "fast",
        "--snapshot-class",
        "fast-snaps",
        "-z",
        "2Gi",
        "-n",
        "bench",
        "--toleration",
        "storage=only:NoSchedule",
        "--image",
        "registry.local/toolbox:1",
        "--dry-run",
        env=NO_CLUSTER,
    )
    assert result.exit_code == 0, result.stderr
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == [
        "PersistentVolumeClaim",
        "Pod",
        "VolumeSnapshot",
        "VolumeSnapshot",
        "PersistentVolumeClaim",
        "Pod",
    ]
    source, writer, earlier, snapshot, restore, reader = docs
    assert earlier["metadata"]["name"].endswith("-earlier")
    assert earlier["spec"] == snapshot["spec"]
    assert all(d["metadata"]["namespace"] == "bench" for d in docs)
    assert source["spec"]["storageClassName"] == "fast"
    assert source["spec"]["resources"]["requests"]["storage"] == "2Gi"
    assert snapshot["spec"] == {
        "volumeSnapshotClassName": "fast-snaps",
        "source": {"persistentVolumeClaimName": source["metadata"]["name"]},
    }
    assert restore["spec"]["dataSource"] == {
        "apiGroup": "snapshot.storage.k8s.io",
        "kind": "VolumeSnapshot",
        "name": snapshot["metadata"]["name"],
    }
    assert reader["spec"]["volumes"][1]["persistentVolumeClaim"]["readOnly"] is True
    for pod in (writer, reader):
        assert restricted_violations(pod) == []
        assert pod["spec"]["containers"][0]["image"] == "registry.local/toolbox:1"
        assert pod["spec"]["tolerations"] == [
            {"key": "storage", "operator": "Equal", "value": "only", "effect": "NoSchedule"}
        ]


def test_browse_dry_run_offline_with_class_and_size() -> None:
    result = run_cli(
        "snapshot",
        "browse",
        "old-snap",
        "--tree",
        "--storage-class",
        "fast",
        "--size",
        "5Gi",
        "-n",
        "db",
        "--dry-run",
        env=NO_CLUSTER,
    )
    assert result.exit_code == 0, result.stderr
    pvc, pod = yaml.safe_load_all(result.stdout)
    assert pvc["spec"]["storageClassName"] == "fast"
    assert pvc["spec"]["resources"]["requests"]["storage"] == "5Gi"
    assert pvc["spec"]["dataSource"]["name"] == "old-snap"
    mount = pod["spec"]["containers"][0]["volumeMounts"][1]
    assert mount == {"name": "data", "mountPath": "/snapshot", "readOnly": True}
    assert restricted_violations(pod) == []


def test_cp_dry_run_offline() -> None:
    result = run_cli(
        "snapshot",
        "cp",
        "old-snap:/etc",
        "/tmp/nonexistent-target-for-dry-run",
        "-s",
        "fast",
        "-z",
        "1Gi",
        "--dry-run",
        env=NO_CLUSTER,
    )
    assert result.exit_code == 0, result.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(result.stdout)]
    assert kinds == ["PersistentVolumeClaim", "Pod"]
