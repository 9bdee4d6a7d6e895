"""Errors a user can act on.

Each error carries a message (what happened), a hint (what to do) and optionally the Kubernetes
events that explain it. Only cli/ turns them into an exit code and an ``error:`` paragraph.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubectl_storage.exit_codes import ExitCode


class StorageToolError(Exception):
    """Base of every error meant for the user rather than for a traceback."""

    exit_code: ExitCode = ExitCode.ERROR

    def __init__(self, message: str, hint: str = "", events: Sequence[str] = ()) -> None:
        """Keep the message, the hint and related event lines."""
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.events = tuple(events)


class UsageError(StorageToolError):
    """The command line or an input file is wrong; nothing was created."""


class ClusterError(StorageToolError):
    """The cluster refused or failed: not found, forbidden, timed out, unreachable."""


class NotFoundError(ClusterError):
    """An object the command needs (StorageClass, node, snapshot…) does not exist."""


class ForbiddenError(ClusterError):
    """RBAC or Pod Security does not allow what the command must do."""


class WaitTimeoutError(ClusterError):
    """An object did not reach the wanted state in time."""


class FindingsError(StorageToolError):
    """The check ran and failed (findings at or above --fail-on, lost data)."""

    exit_code = ExitCode.FINDINGS


class Interrupted(StorageToolError):  # noqa: N818 - it is a signal, not an error of ours
    """The run was interrupted by Ctrl-C (SIGINT) and has cleaned up."""

    exit_code = ExitCode.INTERRUPTED


class Terminated(Interrupted):
    """The run was stopped by SIGTERM and has cleaned up."""

    exit_code = ExitCode.TERMINATED
