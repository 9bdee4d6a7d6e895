"""Shell completion: cobra's ``__complete`` protocol (kubectl's plugin completion) and scripts.

:mod:`.protocol` answers ``kubectl-storage __complete WORD…`` (what ``kubectl_complete-storage``
runs); :mod:`.scripts` prints the bash, zsh and fish scripts of ``kubectl storage completion``.
"""

from kubectl_storage.cli.completion.protocol import (
    DEFAULT,
    ERROR,
    FILTER_DIRS,
    NO_FILE_COMP,
    NO_SPACE,
    Completions,
    complete,
    complete_main,
)
from kubectl_storage.cli.completion.scripts import SCRIPTS, Shell, completion_command

__all__ = [
    "DEFAULT",
    "ERROR",
    "FILTER_DIRS",
    "NO_FILE_COMP",
    "NO_SPACE",
    "SCRIPTS",
    "Completions",
    "Shell",
    "complete",
    "complete_main",
    "completion_command",
]
