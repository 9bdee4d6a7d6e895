"""The table the command line is made of: every subcommand and the global flags.

One table, read by the command group (app.py: the command list of ``--help``, importing a
command's module only when it is used) and by completion (cli/completion: the subcommands and
the global flags), so neither imports the other for it. Nothing here imports typer or a command.
"""

from __future__ import annotations

#: The root's own help text (``kubectl storage --help``), before its options and commands.
ROOT_HELP = (
    "Check that a cluster's storage can be trusted: benchmark StorageClasses, check "
    "snapshots and persistence, audit NFS and iSCSI on nodes.\n\n"
    "Without a subcommand, lists the storage classes (same as `kubectl storage classes`). "
    "Global options (--kubeconfig, --context, -n, -o, -v, -q, --request-timeout) may come "
    "before or after the subcommand, as with kubectl."
)

#: Without a subcommand, `kubectl storage` runs this one.
DEFAULT_COMMAND = "classes"


class CommandEntry:
    """Where a subcommand lives, and its one-line help for the command list.

    A plain class: cli/fastpath.py reads this table on every start, and importing dataclasses
    (inspect, re, …) would cost more than the rest of a completion of the first word.
    """

    __slots__ = ("attr", "help", "module")

    def __init__(self, module: str, attr: str, help: str) -> None:
        """``attr``: a command function, or a typer.Typer for a command group; ``help``: the
        first paragraph of the command's own help (a unit test keeps them equal)."""
        self.module = module
        self.attr = attr
        self.help = help


COMMANDS: dict[str, CommandEntry] = {
    "classes": CommandEntry(
        "kubectl_storage.cli.classes",
        "classes_command",
        "List StorageClasses, VolumeSnapshotClasses and CSI drivers, with notes on what is odd.",
    ),
    "fio": CommandEntry(
        "kubectl_storage.cli.fio",
        "fio_command",
        "Benchmark StorageClasses with fio: IOPS, bandwidth and latency percentiles.",
    ),
    "snapshot": CommandEntry(
        "kubectl_storage.cli.snapshot",
        "snapshot_app",
        "List, check, browse and copy out of VolumeSnapshots, all from the terminal.",
    ),
    "validate-persistence": CommandEntry(
        "kubectl_storage.cli.validate_persistence",
        "validate_persistence_command",
        "Check that committed MySQL data survives pod loss on a StorageClass.",
    ),
    "mount-audit": CommandEntry(
        "kubectl_storage.cli.mount_audit",
        "mount_audit_command",
        "Audit NFS mounts on nodes against vendor guidance and what each PV asked for.",
    ),
    "iscsi": CommandEntry(
        "kubectl_storage.cli.iscsi",
        "iscsi_command",
        "Show iSCSI sessions and dm-multipath maps of nodes, and check them.",
    ),
    "cleanup": CommandEntry(
        "kubectl_storage.cli.cleanup",
        "cleanup_command",
        "Find objects that kubectl-storage runs left behind, and delete them with --yes.",
    ),
    "rbac": CommandEntry(
        "kubectl_storage.cli.rbac",
        "rbac_command",
        "Print the minimal Role and ClusterRole that COMMANDs need, ready for kubectl apply.",
    ),
    "completion": CommandEntry(
        "kubectl_storage.cli.completion",
        "completion_command",
        "Print a shell completion script for kubectl-storage (bash, zsh or fish).",
    ),
}


#: Global flags that take a value, and those that do not: app.py accepts them after the
#: subcommand too (as kubectl does), and completion offers them there.
VALUE_FLAGS = {
    "--kubeconfig",
    "--context",
    "-n",
    "--namespace",
    "-o",
    "--output",
    "--request-timeout",
}
BARE_FLAGS = {"-v", "--verbose", "-q", "--quiet"}
#: Every global flag that may come after the subcommand (completion offers them there too).
GLOBAL_FLAGS = frozenset(VALUE_FLAGS | BARE_FLAGS)
