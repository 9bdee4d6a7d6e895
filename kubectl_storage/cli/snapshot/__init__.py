"""`kubectl storage snapshot list|check|browse|cp`: one module per subcommand.

Importing the package registers every subcommand on :data:`snapshot_app` (app.py loads it only
when `snapshot` is run or its help is asked for).
"""

# Registration order is the order --help lists the subcommands in.
# isort: off
from kubectl_storage.cli.snapshot import listing  # noqa: F401 - registers `list`
from kubectl_storage.cli.snapshot import check  # noqa: F401 - registers `check`
from kubectl_storage.cli.snapshot import browse  # noqa: F401 - registers `browse`
from kubectl_storage.cli.snapshot import copy  # noqa: F401 - registers `cp`

# isort: on
from kubectl_storage.cli.snapshot.group import snapshot_app

__all__ = ["snapshot_app"]
