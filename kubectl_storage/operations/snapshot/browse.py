"""`kubectl storage snapshot browse`: a shell, a tree or a listing of a restored snapshot."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import StrEnum

from kubectl_storage.core.snapshot.listing import (
    SnapshotListing,
    build_listing_report,
    listing_command,
    parse_listing,
)
from kubectl_storage.core.snapshot.paths import SNAPSHOT_MOUNT
from kubectl_storage.errors import (
    ClusterError,
    NotFoundError,
    UsageError,
)
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podstream import exec_interactive
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.snapshot.common import (
    PodSettings,
    SnapshotSource,
    Step,
    exec_tool,
)
from kubectl_storage.operations.snapshot.restore import in_snapshot, mount_snapshot, when_ready
from kubectl_storage.operations.snapshot.restoring import MountPlan, restoring_command

log = logging.getLogger(__name__)


class BrowseMode(StrEnum):
    """What browse does once the snapshot is mounted."""

    SHELL = "shell"
    TREE = "tree"
    LS = "ls"


@dataclass(frozen=True)
class BrowseRequest:
    """Everything `snapshot browse` was asked to do."""

    source: SnapshotSource
    pods: PodSettings
    mode: BrowseMode = BrowseMode.SHELL
    path: str = ""
    structured: bool = False  # -o json|yaml: --tree returns entries, not tree's text
    stdin_fd: int = 0
    stdout_fd: int = 1
    term: str = "xterm"
    has_terminal: bool = True  # stdin and stdout are a terminal (the shell needs one)


@dataclass(frozen=True)
class BrowseResult:
    """What browse produced: tree's text, a SnapshotListing, or nothing (after a shell)."""

    text: str | None = None
    report: SnapshotListing | None = None


BrowsePlan = MountPlan[BrowseRequest]


def _shell_command(term: str) -> list[str]:
    script = (
        f"cd {SNAPSHOT_MOUNT} && if command -v bash >/dev/null 2>&1; "
        "then exec bash --norc --noprofile -i; else exec sh -i; fi"
    )
    safe_term = "".join(c for c in term if c.isalnum() or c in "-._") or "xterm"
    return [
        "env",
        f"TERM={safe_term}",
        "HOME=/tmp",
        "HISTFILE=/tmp/.shell_history",
        r"PS1=snapshot:\w\$ ",
        "sh",
        "-c",
        script,
    ]


def validate_browse(request: BrowseRequest) -> str:
    """Inputs that need no cluster; returns the path in the pod.

    Raises:
        UsageError: neither or both of SNAP and --pvc, or a path outside the snapshot.
    """
    source = request.source
    if bool(source.snapshot) == bool(source.pvc):
        raise UsageError(
            "give a snapshot name or --pvc NAME, not both"
            if source.snapshot
            else "give the snapshot to browse (or --pvc NAME to snapshot a live PVC first)",
            "Example: kubectl storage snapshot browse data-snap --tree",
        )
    if source.snapshot_class and not source.pvc:
        raise UsageError(
            "--snapshot-class only applies with --pvc (an existing snapshot has its class)", ""
        )
    in_pod = in_snapshot(request.path)
    if request.mode is BrowseMode.SHELL and not request.has_terminal:
        raise UsageError(
            "browse opens an interactive shell, which needs a terminal (stdin and stdout are "
            "not one)",
            "Use --tree [PATH] or --ls PATH to print a listing, or `kubectl storage snapshot "
            "cp SNAP:PATH LOCAL` to copy files out.",
        )
    return in_pod


def run_browse(api: KubeApi, planned: BrowsePlan, scope: RunScope, step: Step) -> BrowseResult:
    """Mount the snapshot read-only, then open a shell, print a tree, or list a directory."""
    request = planned.request
    in_pod = validate_browse(request)
    pods = request.pods
    plan = when_ready(api, planned.restore)
    ns = request.source.namespace
    pod = mount_snapshot(api, scope, plan, step)
    name = request.source.snapshot or f"PVC {request.source.pvc}"
    if request.mode is BrowseMode.SHELL:
        step(
            f"shell in {name} at {SNAPSHOT_MOUNT} (read-only); type exit or press Ctrl-D "
            "to leave, and the temporary volume is deleted"
        )
        exec_interactive(
            api,
            pod,
            _shell_command(request.term),
            namespace=ns,
            stdin_fd=request.stdin_fd,
            stdout_fd=request.stdout_fd,
        )
        return BrowseResult()
    recursive = request.mode is BrowseMode.TREE
    if recursive and not request.structured:
        script = (
            '[ -e "$1" ] || { echo "no such file or directory" >&2; exit 3; }; '
            'exec env LC_ALL=C.UTF-8 tree -a -h "$1"'
        )
        text = _listing_exec(api, pod, ["sh", "-c", script, "sh", in_pod], ns, pods, request)
        return BrowseResult(text=text)
    output = _listing_exec(
        api, pod, listing_command(in_pod, recursive=recursive), ns, pods, request
    )
    entries = parse_listing(output)
    return BrowseResult(
        report=build_listing_report(name, request.path, entries, recursive=recursive)
    )


def _listing_exec(
    api: KubeApi,
    pod: str,
    command: list[str],
    namespace: str,
    pods: PodSettings,
    request: BrowseRequest,
) -> str:
    outcome = exec_tool(api, pod, command, namespace, pods.timeout_s)
    if outcome.exit_code == 3:
        raise NotFoundError(
            f"{request.path or '/'} does not exist in {request.source.label}",
            "Paths are relative to the snapshot's root; --tree without a path shows it all.",
        )
    if outcome.exit_code != 0 and not outcome.stdout:
        raise ClusterError(
            f"listing {request.path or '/'} failed (exit {outcome.exit_code}): "
            + outcome.stderr.strip()[:800],
            "",
        )
    if outcome.stderr.strip():
        log.warning("%s", outcome.stderr.strip()[:800])
    return outcome.stdout


SNAPSHOT_BROWSE_COMMAND = restoring_command(
    "snapshot-browse",
    validate_browse,
    lambda api, plan, scope, progress: run_browse(api, plan, scope, progress.step),
)
