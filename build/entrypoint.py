"""PyInstaller entry script for the kubectl-storage binaries (build/kubectl-storage.spec).

Help is printed plain, as kubectl prints it: typer's rich formatting (boxes, markdown) costs
about as much start-up as everything else in ``--help`` (~0.25 s here). TYPER_USE_RICH=1 brings
it back.

The one-file form leaves out the charting stack (matplotlib and what it needs) to start fast.
There, importing matplotlib raises an error the CLI prints as a usage error naming the
alternatives, instead of a traceback. In the one-folder (krew) form matplotlib is found by the
regular finders first and the finder below is never asked.
"""

import os
import sys
from collections.abc import Sequence
from types import ModuleType

os.environ.setdefault("TYPER_USE_RICH", "0")  # read when typer is first imported, if it is

# Answers --help, --version and the first word's completion without typer, else runs cli/app.py
# (kubectl_storage/cli/fastpath.py).
from kubectl_storage.cli.fastpath import main
from kubectl_storage.errors import UsageError

LEFT_OUT = "matplotlib"


class LeftOutError(ModuleNotFoundError, UsageError):
    """matplotlib is not part of this build (a ModuleNotFoundError to code that probes for it)."""

    def __init__(self, name: str) -> None:
        """Message and hint for the CLI's error paragraph."""
        message = "charts need matplotlib, which the single-file build leaves out to start fast"
        ModuleNotFoundError.__init__(self, message, name=name)
        self.message = message
        self.hint = (
            "Use the krew plugin (kubectl krew install storage), the one-folder archive from the "
            "release, or pip install kubectl-storage; or drop --chart and draw from -o json."
        )
        self.events = ()


class LeftOutFinder:
    """Last on sys.meta_path: asked only for modules no other finder has. (A meta path finder
    needs only find_spec; importlib.abc, its base class, costs ~10 ms of every start.)"""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> None:
        """Raise for matplotlib (and its submodules); leave everything else to the default."""
        if fullname.partition(".")[0] == LEFT_OUT:
            raise LeftOutError(fullname)


if __name__ == "__main__":
    sys.meta_path.append(LeftOutFinder())
    main()
