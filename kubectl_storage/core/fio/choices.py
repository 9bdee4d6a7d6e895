"""The closed choices of fio's flags (``--profile``, ``--spread``), apart from the code behind them.

The command line needs these enums to build ``fio``'s options, for its help and for every TAB
after ``kubectl storage fio``; jobs.py and clients.py, where the choices are acted on, take
~0.1 s to import with guards, clones and results, so the enums live here and those modules
re-export them.
"""

from __future__ import annotations

from enum import StrEnum


class ProfileName(StrEnum):
    """The built-in profiles by name, the closed choice ``--profile`` takes."""

    DEFAULT = "default"
    QUICK = "quick"
    DATABASE = "database"
    KUBESTR = "kubestr"
    ETCD = "etcd"


class Spread(StrEnum):
    """How ``--clients`` spreads its pods (a preference: they still run when it cannot)."""

    NODES = "nodes"
    ZONES = "zones"

    @property
    def topology_key(self) -> str:
        """The node label the spread is over."""
        return "kubernetes.io/hostname" if self is Spread.NODES else "topology.kubernetes.io/zone"
