"""Process exit codes, the contract scripts rely on (design.md section 3)."""

from enum import IntEnum


class ExitCode(IntEnum):
    """What the process exit status means."""

    OK = 0
    #: The check ran and found problems: findings at or above --fail-on, failed validation.
    FINDINGS = 1
    #: Usage error, or the cluster refused (not found, forbidden, timeout).
    ERROR = 2
    #: Interrupted by Ctrl-C; what the run created has been deleted.
    INTERRUPTED = 130
    #: Stopped by SIGTERM (128 + 15, as shells report it); what the run created has been deleted.
    TERMINATED = 143
