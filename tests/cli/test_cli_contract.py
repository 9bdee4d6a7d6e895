"""The command-line contract: exit codes, flag errors, streams, kubectl-style global options.

These run the real CLI in a subprocess without a cluster; cluster behaviour is in tests/e2e.
"""

from __future__ import annotations

import pytest

from kubectl_storage import __version__
from kubectl_storage.cli.app import hoist_global_options
from tests.conftest import run_cli

NO_CLUSTER = {"KUBECONFIG": "/nonexistent/kubeconfig", "KUBERNETES_SERVICE_HOST": ""}


def test_version_goes_to_stdout() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.stdout == f"kubectl-storage {__version__}\n"


def test_help_reads_as_a_kubectl_plugin() -> None:
    result = run_cli("--help")
    assert result.exit_code == 0
    assert "Usage: kubectl storage" in result.stdout
    for command in ("classes", "cleanup"):
        assert command in result.stdout


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["classes", "--bogus"], "--bogus"),
        (["--bogus", "classes"], "--bogus"),
        (["-o", "xml", "classes"], "--output"),
        (["classes", "-o", "xml"], "--output"),
        (["cleanup", "--older-than", "5x"], "--older-than"),
        (["cleanup", "--timeout", "soon"], "--timeout"),
        (["--request-timeout", "-3", "classes"], "--request-timeout"),
    ],
)
def test_flag_errors_exit_2_naming_the_flag(args: list[str], flag: str) -> None:
    result = run_cli(*args, env=NO_CLUSTER)
    assert result.exit_code == 2, result.stderr
    assert flag in result.stderr
    assert result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_unknown_command() -> None:
    result = run_cli("frobnicate")
    assert result.exit_code == 2
    assert "frobnicate" in result.stderr


@pytest.mark.parametrize("args", [["classes"], ["classes", "-o", "json"], ["cleanup"], []])
def test_no_cluster_configured_is_a_clear_usage_error(args: list[str]) -> None:
    result = run_cli(*args, env=NO_CLUSTER)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: no cluster is configured")
    assert "tests/cluster/up" in result.stderr  # says what to do
    assert "Traceback" not in result.stderr


def test_missing_kubeconfig_file_named_by_flag() -> None:
    result = run_cli("--kubeconfig", "/nope/config", "classes")
    assert result.exit_code == 2
    assert "/nope/config does not exist" in result.stderr


def test_unknown_context(tmp_path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: a, context: {cluster: c, user: u}}]\n"
    )
    result = run_cli("--kubeconfig", str(config), "--context", "b", "classes")
    assert result.exit_code == 2
    assert 'context "b" is not in the kubeconfig' in result.stderr
    assert "Known contexts: a" in result.stderr


def test_unreachable_cluster_exits_2_with_a_hint(tmp_path) -> None:
    # Port 1 on loopback: nothing listens, the connection is refused at once.
    config = tmp_path / "config"
    config.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: a\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: a, context: {cluster: c, user: u, namespace: team-a}}]\n"
    )
    result = run_cli("classes", env={"KUBECONFIG": str(config)})
    assert result.exit_code == 2
    assert "cannot reach the Kubernetes API at https://127.0.0.1:1" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("given", "hoisted"),
    [
        (["classes", "-o", "json"], ["-o", "json", "classes"]),
        (["-o", "json", "classes"], ["-o", "json", "classes"]),
        (["cleanup", "--yes", "-n", "x", "-vv"], ["-n", "x", "-vv", "cleanup", "--yes"]),
        (["cleanup", "--namespace=x", "--context=c"], ["--namespace=x", "--context=c", "cleanup"]),
        (["classes", "-ojson"], ["-ojson", "classes"]),
        (["fio", "-s", "a", "--", "-o", "x"], ["fio", "-s", "a", "--", "-o", "x"]),
    ],
)
def test_global_options_after_the_subcommand(given: list[str], hoisted: list[str]) -> None:
    assert hoist_global_options(given) == hoisted
