"""`kubectl storage validate-persistence` without a cluster: usage errors and --dry-run."""

from __future__ import annotations

import pytest
import yaml

from kubectl_storage import __version__
from tests.conftest import run_cli
from tests.unit.k8s.test_k8s_manifests import restricted_violations

NO_CLUSTER = {"KUBECONFIG": "/nonexistent/kubeconfig", "KUBERNETES_SERVICE_HOST": ""}


def _dry_run(*args: str):
    result = run_cli("validate-persistence", "--dry-run", *args, env=NO_CLUSTER)
    assert result.exit_code == 0, result.stderr
    return list(yaml.safe_load_all(result.stdout))


def test_dry_run_prints_secret_and_statefulset_without_the_password() -> None:
    secret, sts = _dry_run("-s", "fast", "-z", "2Gi", "-n", "db")
    assert (secret["kind"], sts["kind"]) == ("Secret", "StatefulSet")
    assert secret["stringData"]["password"].startswith("<generated at run time")
    assert {secret["metadata"]["namespace"], sts["metadata"]["namespace"]} == {"db"}
    (claim,) = sts["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["storageClassName"] == "fast"
    assert claim["spec"]["resources"]["requests"]["storage"] == "2Gi"
    pod_spec = sts["spec"]["template"]["spec"]
    assert restricted_violations({"spec": pod_spec}) == []
    images = {c["name"]: c["image"] for c in pod_spec["containers"]}
    assert images == {
        "mysql": "docker.io/library/mysql:8.4",
        "client": "docker.io/library/mysql:8.4",
        "probe": f"ghcr.io/kubectl-storage/toolbox:{__version__}",
    }


def test_dry_run_image_registry_and_placement() -> None:
    _, sts = _dry_run(
        "-s",
        "fast",
        "--registry",
        "mirror.example:5000",
        "--node-selector",
        "disk=ssd",
        "--toleration",
        "db:NoSchedule",
        "--cpu",
        "1",
        "--memory",
        "2Gi",
    )
    spec = sts["spec"]["template"]["spec"]
    assert {c["image"] for c in spec["containers"]} == {
        "mirror.example:5000/library/mysql:8.4",
        f"mirror.example:5000/kubectl-storage/toolbox:{__version__}",
    }
    assert spec["nodeSelector"] == {"disk": "ssd"}
    assert spec["tolerations"] == [{"key": "db", "operator": "Exists", "effect": "NoSchedule"}]
    server = next(c for c in spec["containers"] if c["name"] == "mysql")
    assert server["resources"]["limits"] == {"cpu": "1", "memory": "2Gi"}


def test_dry_run_image_override() -> None:
    _, sts = _dry_run("-s", "fast", "--image", "mariadb:11.4", "--probe-image", "tools:1")
    images = {c["name"]: c["image"] for c in sts["spec"]["template"]["spec"]["containers"]}
    assert images == {"mysql": "mariadb:11.4", "client": "mariadb:11.4", "probe": "tools:1"}


def test_dry_run_server_args_and_no_probe() -> None:
    _, sts = _dry_run(
        "-s",
        "fast",
        "--server-arg=--innodb-flush-log-at-trx-commit=2",
        "--server-arg",
        "--sync-binlog=0",
        "--no-fsync-probe",
        "--allow-non-durable-config",
        "--disruptions",
        "reschedule,node-drain",
    )
    containers = {c["name"]: c for c in sts["spec"]["template"]["spec"]["containers"]}
    assert list(containers) == ["mysql", "client"]
    assert containers["mysql"]["args"] == [
        "--innodb-flush-log-at-trx-commit=2",
        "--sync-binlog=0",
    ]


def test_dry_run_empty_dir_needs_no_class_and_no_cluster() -> None:
    _, sts = _dry_run("--volume-type", "emptyDir")
    assert "volumeClaimTemplates" not in sts["spec"]
    volumes = {v["name"]: v for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert "emptyDir" in volumes["data"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-s", "fast", "--rows", "0"], "--rows must be between"),
        (["-s", "fast", "-z", "45"], "has no unit"),
        (["-s", "fast", "-z", "100Mi"], "too small"),
        (["-s", "fast", "--disruptions", "restart,reboot"], "unknown disruption 'reboot'"),
        (["-s", "fast", "--volume-type", "hostPath"], "'hostPath' is not one of 'pvc'"),
        (["-s", "fast", "--volume-type", "emptyDir"], "exclude each other"),
        (["-s", "fast", "--toleration", "=x"], "has no key"),
        (["-s", "fast", "--node-selector", "nokey"], "is not KEY=VALUE"),
        (["-s", "fast", "--timeout", "0"], "--timeout"),
        (["-s", "fast", "--rows", "many"], "--rows"),
        (["-s", "fast", "--server-arg", "mysqld"], "is not one server option"),
        (["-s", "fast", "--disruptions", "drain"], "node-drain"),
    ],
)
def test_usage_errors_exit_2_before_anything(args: list[str], message: str) -> None:
    result = run_cli("validate-persistence", "--dry-run", *args, env=NO_CLUSTER)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_without_a_cluster_the_run_says_so() -> None:
    result = run_cli("validate-persistence", "-s", "fast", env=NO_CLUSTER)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr


def test_help_has_examples() -> None:
    result = run_cli("validate-persistence", "--help")
    assert result.exit_code == 0
    assert "Examples" in result.stdout
    assert "kubectl storage validate-persistence -s fast" in result.stdout
    for flag in (
        "--rows",
        "--disruptions",
        "--volume-type",
        "--keep",
        "--dry-run",
        "--server-arg",
        "--allow-non-durable-config",
        "--no-fsync-probe",
        "--probe-image",
    ):
        assert flag in result.stdout
