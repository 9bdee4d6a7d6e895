"""The command pipeline's promises, on the live code path, without a cluster (issue 13).

Every command: each bad input exits 2 with the input's own message before any connection is
tried (the kubeconfig points at a closed local port, so a connection attempt would show as
"cannot reach"); --dry-run honours the context's namespace and carries the run labels.
The four regressions of issue 13 each have a test here that fails on the code before it.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from kubectl_storage.cli.options import seconds
from tests.conftest import run_cli

LABELS = ("app.kubernetes.io/managed-by", "kubectl-storage/run-id", "kubectl-storage/command")


def _closed_port() -> int:
    """A local TCP port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kubeconfig whose current context sets namespace team-a and whose server is closed."""
    path = tmp_path_factory.mktemp("kubeconfig") / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "team",
                "clusters": [
                    {
                        "name": "closed",
                        "cluster": {
                            "server": f"https://127.0.0.1:{_closed_port()}",
                            "insecure-skip-tls-verify": True,
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": "not-a-real-token"}}],
                "contexts": [
                    {
                        "name": "team",
                        "context": {"cluster": "closed", "user": "u", "namespace": "team-a"},
                    },
                    {
                        "name": "other",
                        "context": {"cluster": "closed", "user": "u", "namespace": "team-b"},
                    },
                ],
            }
        )
    )
    return path


def _env(kubeconfig: Path) -> dict[str, str]:
    return {"KUBECONFIG": str(kubeconfig), "KUBERNETES_SERVICE_HOST": ""}


# -- 3. usage errors come before any connection ------------------------------------------------

USAGE_ERRORS = [
    (["fio", "-s", "x", "-z", "45"], "has no unit"),
    (["fio", "-s", "x", "--repeat", "0"], "--repeat"),
    (["fio", "-s", "x", "--profile", "turbo"], "'turbo' is not one of"),
    (["fio", "-s", "x", "--volume-mode", "Tape"], "'Tape' is not one of"),
    (["fio", "-s", "x", "--pvc", "data"], "not both"),
    (["fio", "-s", "x", "--timeout", "-1"], "--timeout"),
    (["fio", "-s", "x", "--clients", "0"], "--clients"),
    (["fio", "-s", "x", "--shared"], "--shared needs --clients 2 or more"),
    (["fio", "-s", "x", "--clients", "2", "--shared", "--volume-mode", "Block"], "raw block"),
    (["fio", "-s", "x", "--clients", "2", "--spread", "racks"], "'racks' is not one of"),
    (["snapshot", "check", "-z", "45"], "has no unit"),
    (["snapshot", "check", "-z", "0Gi"], "greater than zero"),
    (["snapshot", "browse", "snap", "--tree", "-z", "45"], "has no unit"),
    (["snapshot", "cp", "snap:/f", "./f", "-z", "45"], "has no unit"),
    (["snapshot", "browse"], "--pvc"),
    (["snapshot", "cp", "snap:/f"], "LOCAL"),
    (["validate-persistence", "-z", "45"], "has no unit"),
    (["validate-persistence", "--rows", "0"], "--rows"),
    (["validate-persistence", "--disruptions", "reboot"], "unknown disruption"),
    (["validate-persistence", "--volume-type", "hostPath"], "'hostPath' is not one of"),
    (["mount-audit"], "no nodes chosen"),
    (["mount-audit", "n1", "--all-nodes"], "one way"),
    (["mount-audit", "n1", "--parallel", "0"], "--parallel"),
    (["mount-audit", "n1", "--fail-on", "sometimes"], "sometimes"),
    (["iscsi", "n1", "--timeout", "0"], "--timeout"),
    (["fio", "-s", "x", "--timeout", "soon"], "'soon' is not a number of seconds nor a duration"),
    (["cleanup", "--timeout", "0s"], "--timeout"),
    (["--request-timeout", "1x", "cleanup"], "--request-timeout"),
    (["iscsi", "-l", "a=b", "--all-nodes"], "one way"),
]


@pytest.mark.parametrize(
    ("args", "message"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS]
)
def test_bad_input_exits_2_before_any_connection(
    kubeconfig: Path, args: list[str], message: str
) -> None:
    result = run_cli(*args, env=_env(kubeconfig), timeout=60)
    assert result.exit_code == 2, result.stderr
    assert message in result.stderr
    # A connection attempt to the closed port would say so; none may have been made.
    assert "cannot reach" not in result.stderr
    assert "Connection refused" not in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_a_good_input_does_try_the_cluster(kubeconfig: Path) -> None:
    """The control for the test above: the same kubeconfig, valid input, a connection error."""
    result = run_cli("fio", "-s", "x", "-z", "10Gi", env=_env(kubeconfig), timeout=60)
    assert result.exit_code == 2
    assert "cannot reach the Kubernetes API" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["fio", "-s", "x", "-z", "10Gi", "--timeout", "5m"],
        ["fio", "-s", "x", "-z", "10Gi", "--timeout", "90"],
        ["--request-timeout", "30s", "cleanup", "--timeout", "1m30s"],
        ["mount-audit", "n1", "--timeout", "45s"],
    ],
)
def test_times_take_seconds_or_kubectl_durations(kubeconfig: Path, args: list[str]) -> None:
    result = run_cli(*args, env=_env(kubeconfig), timeout=60)
    assert result.exit_code == 2
    assert "cannot reach the Kubernetes API" in result.stderr  # past the options


def test_a_duration_is_read_as_its_seconds() -> None:
    assert [seconds(text) for text in ("90", "2.5", "90s", "5m", "1m30s", "1h")] == [
        90.0,
        2.5,
        90.0,
        300.0,
        90.0,
        3600.0,
    ]


# -- 1. sizes are parsed for offline restore plans too ----------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["snapshot", "cp", "SNAP:/f", "./f", "-s", "fast", "-z", "45", "--dry-run"],
        ["snapshot", "browse", "SNAP", "--tree", "-s", "fast", "-z", "45", "--dry-run"],
    ],
)
def test_offline_restore_plan_refuses_a_size_without_unit(
    kubeconfig: Path, args: list[str]
) -> None:
    result = run_cli(*args, env=_env(kubeconfig), timeout=60)
    assert result.exit_code == 2, result.stdout
    assert "'45' has no unit" in result.stderr
    assert result.stdout == ""


def test_offline_restore_plan_keeps_the_size_as_typed(kubeconfig: Path) -> None:
    result = run_cli(
        "snapshot",
        "cp",
        "SNAP:/f",
        "./f",
        "-s",
        "fast",
        "-z",
        "45Gi",
        "--dry-run",
        env=_env(kubeconfig),
    )
    assert result.exit_code == 0, result.stderr
    pvc = next(d for d in yaml.safe_load_all(result.stdout) if d["kind"] == "PersistentVolumeClaim")
    assert pvc["spec"]["resources"]["requests"]["storage"] == "45Gi"


# -- 2 and 4. --dry-run: the context's namespace, and the run labels ---------------------------

DRY_RUNS = {
    "fio": ["fio", "-s", "fast", "-z", "10Gi", "--profile", "quick", "--dry-run"],
    "snapshot check": [
        "snapshot",
        "check",
        "-s",
        "fast",
        "--snapshot-class",
        "snaps",
        "--dry-run",
    ],
    "snapshot browse": [
        "snapshot",
        "browse",
        "SNAP",
        "--tree",
        "-s",
        "fast",
        "-z",
        "1Gi",
        "--dry-run",
    ],
    "snapshot cp": ["snapshot", "cp", "SNAP:/f", "./f", "-s", "fast", "-z", "1Gi", "--dry-run"],
    "validate-persistence": ["validate-persistence", "-s", "fast", "--dry-run"],
    "mount-audit": ["mount-audit", "node-a", "node-b", "--dry-run"],
    "iscsi": ["iscsi", "node-a", "--dry-run"],
}


def _dry_run(kubeconfig: Path, args: list[str]) -> list[dict]:
    result = run_cli(*args, env=_env(kubeconfig), timeout=60)
    assert result.exit_code == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert docs
    return docs


@pytest.mark.parametrize("command", sorted(DRY_RUNS))
def test_dry_run_uses_the_context_namespace(kubeconfig: Path, command: str) -> None:
    for doc in _dry_run(kubeconfig, DRY_RUNS[command]):
        assert doc["metadata"]["namespace"] == "team-a", doc["metadata"]


@pytest.mark.parametrize("command", ["fio", "validate-persistence", "mount-audit"])
def test_dry_run_namespace_follows_context_and_flag(kubeconfig: Path, command: str) -> None:
    other = _dry_run(kubeconfig, [*DRY_RUNS[command], "--context", "other"])
    assert {d["metadata"]["namespace"] for d in other} == {"team-b"}
    given = _dry_run(kubeconfig, [*DRY_RUNS[command], "-n", "given"])
    assert {d["metadata"]["namespace"] for d in given} == {"given"}


@pytest.mark.parametrize("command", sorted(DRY_RUNS))
def test_dry_run_carries_the_run_labels(kubeconfig: Path, command: str) -> None:
    docs = _dry_run(kubeconfig, DRY_RUNS[command])
    run_ids = set()
    for doc in docs:
        labels = doc["metadata"].get("labels") or {}
        assert set(LABELS) <= set(labels), (doc["kind"], labels)
        assert labels["app.kubernetes.io/managed-by"] == "kubectl-storage"
        run_ids.add(labels["kubectl-storage/run-id"])
        template = (doc.get("spec") or {}).get("template")
        if template:
            assert template["metadata"]["labels"]["kubectl-storage/run-id"] in run_ids
    # One run: one id, and every name carries it (so cleanup --run-id finds them all).
    assert len(run_ids) == 1
    (run_id,) = run_ids
    assert all(run_id in doc["metadata"]["name"] for doc in docs)
