"""The node lab, built and run once per pytest session.

``lab`` (session): builds the guest (cached, see lab.py), boots one guest per scenario group side
by side, and hands every test the same run directory. In a session that also runs the e2e suite
the run starts in the background right after the fio benchmarks (``_BackgroundLab``), so its
five minutes overlap tests that mostly wait. As root a failure to build or run fails the tests;
only a non-root user skips them (the lab needs apt-get, debootstrap and QEMU as root). ``NODELAB_RUN_DIR=<dir of an earlier run>`` reuses that run's
outputs instead of booting (for working on the tests).

``cluster_node`` (module): the guest booted as a node of the e2e suite's test cluster
(``node.py``), Ready, tainted and labelled; stopped and deleted from the cluster afterwards, also
when the tests fail. ``cluster`` is the e2e suite's own fixture (tests/e2e/conftest.py), shared.
As root a guest that cannot join fails the tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import conftest as e2e
from tests.e2e.conftest import Cluster
from tests.nodelab import lab as nodelab
from tests.nodelab import node as nodeguest
from tests.nodelab import reports

RUNS = nodelab.CACHE / "runs"
KEEP_RUNS = 3
GROUPS = (("nfs",), ("iscsi",), ("iscsi-netapp",))

#: The e2e suite's session fixture, shared: one cluster, one kubeconfig convention.
cluster = e2e.cluster

_timings: dict[str, Any] = {}
_node_timings: dict[str, Any] = {}


@dataclass
class LabRun:
    """One run of the lab: where its outputs are, and what was built."""

    root: Path
    facts: dict[str, Any] = field(default_factory=dict)

    def phase(self, scenario: str, name: str) -> Path:
        """``<run>/<scenario>/<scenario>/<phase>``: one guest per scenario."""
        path = self.root / scenario / scenario / name
        assert (path / "volumes.tsv").exists() or any(path.glob("collect-*.txt")), (
            f"phase {scenario}/{name} left no capture in {path}"
        )
        return path

    def phases(self, scenario: str) -> list[str]:
        """The phases the scenario ran, in order."""
        return (self.root / scenario / scenario / "phases.txt").read_text().split()

    def mount_report(self, name: str, profile: str | None = None) -> dict[str, Any]:
        """mount-audit's node report of an NFS phase."""
        report = reports.mount_report(self.phase("nfs", name), profile)
        return report["nodes"][0]

    def iscsi_report(self, name: str) -> dict[str, Any]:
        """iscsi's node report of an iSCSI phase."""
        return reports.iscsi_report(self.phase("iscsi", name))["nodes"][0]


def _run_lab(stop: threading.Event) -> LabRun:
    """Build the guest (cached) and run every scenario group; the run's timings are kept."""
    t0 = time.monotonic()
    guest = nodelab.build()
    build_s = time.monotonic() - t0
    RUNS.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix=time.strftime("%Y%m%d-%H%M%S-"), dir=RUNS))
    t1 = time.monotonic()
    results = nodelab.run(guest, run_dir, [list(g) for g in GROUPS], timeout_s=600, stop=stop)
    facts = {
        "run_dir": str(run_dir),
        "build_s": round(build_s, 1),
        "run_wall_s": round(time.monotonic() - t1, 1),
        "guests": {
            "+".join(r.scenarios): {"wall_s": round(r.wall_s, 1), **nodelab.guest_timings(r.out)}
            for r in results
        },
        "kernel": guest.kernel.release,
        "kernel_package": f"{guest.kernel.package} {guest.kernel.version}",
    }
    (run_dir / "timings.json").write_text(json.dumps(facts, indent=2) + "\n")
    _timings.update(facts)
    _prune_runs(keep=run_dir)
    return LabRun(run_dir, facts)


class _BackgroundLab:
    """The lab's run in a thread of its own, started once.

    The guests are TCG (CPU-bound) and take about five minutes, most of it waiting on the
    kernel's timeouts; the e2e tests mostly wait on the cluster. So a session that will use the
    lab starts it as soon as the fio benchmarks have run (their numbers are what the guards
    judge, and they should not share the cores with three guests), and the ``lab`` fixture only
    waits for it. Started on first use otherwise (``pytest tests/nodelab``)."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._result: LabRun | None = None
        self._error: BaseException | None = None
        self.start_before: str | None = None  # the nodeid whose setup starts the run

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="nodelab", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        try:
            self._result = _run_lab(self._stop)
        except Exception as exc:  # noqa: BLE001 -- re-raised by result(), in the fixture
            self._error = exc

    def result(self) -> LabRun:
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    # A plugin's hooks, not a conftest's: a conftest's setup hook sees only its own directory.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if item.nodeid == self.start_before:
            self.start()

    def pytest_sessionfinish(self) -> None:
        """Kill the guests of an unfinished run (the session ended without needing them)."""
        if self._thread is not None and self._thread.is_alive():
            self._stop.set()
            self._thread.join()


_background = _BackgroundLab()


def _is_fio_benchmark(item: pytest.Item) -> bool:
    return item.path.parent.name == "e2e" and item.path.name.startswith("test_fio")


def pytest_collection_finish(session: pytest.Session) -> None:
    uses_lab = [
        i for i, item in enumerate(session.items) if "lab" in getattr(item, "fixturenames", ())
    ]
    if not uses_lab or os.environ.get("NODELAB_RUN_DIR") or os.geteuid() != 0:
        return
    benchmarks = [i for i, item in enumerate(session.items) if _is_fio_benchmark(item)]
    first = benchmarks[-1] + 1 if benchmarks else 0
    if first < uses_lab[0]:
        _background.start_before = session.items[first].nodeid
        session.config.pluginmanager.register(_background, "nodelab-background")


@pytest.fixture(scope="session")
def lab() -> Iterator[LabRun]:
    reuse = os.environ.get("NODELAB_RUN_DIR")
    if reuse:
        yield LabRun(Path(reuse), {"reused": reuse})
        return
    if os.geteuid() != 0:
        pytest.skip("the node lab needs root (apt-get, debootstrap, QEMU, a cache under /var)")
    yield _background.result()


@pytest.fixture(scope="module")
def cluster_node(cluster: Cluster) -> Iterator[nodeguest.NodeGuest]:
    if os.geteuid() != 0:
        pytest.skip("the node lab needs root (QEMU, a tap device, the test cluster's CA key)")
    RUNS.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix=time.strftime("node-%Y%m%d-%H%M%S-"), dir=RUNS))
    stack = contextlib.ExitStack()
    try:
        guest = stack.enter_context(nodeguest.joined_node(run_dir, cluster.kubeconfig))
    except nodeguest.lab.LabError as exc:
        pytest.fail(f"the node lab guest did not join the test cluster: {exc}", pytrace=False)
    with stack:
        yield guest
    guest.timings["guest_marks"] = guest.guest_marks()
    guest.timings["guest_peak_used_mib"] = guest.peak_memory_mib()
    (run_dir / "timings.json").write_text(json.dumps(guest.timings, indent=2) + "\n")
    _node_timings.update(guest.timings, run_dir=str(run_dir))
    _prune_runs(keep=run_dir)


def _prune_runs(keep: Path) -> None:
    runs = sorted((p for p in RUNS.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for old in runs[:-KEEP_RUNS]:
        if old != keep:
            shutil.rmtree(old, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _node_timings:
        shown = ", ".join(
            f"{name} {value}"
            for name, value in _node_timings.items()
            if name not in ("guest_marks", "run_dir")
        )
        terminalreporter.write_line(f"nodelab node: {shown}; outputs in {_node_timings['run_dir']}")
    if _timings:
        guests = ", ".join(
            f"{name} {t['wall_s']}s (guest boot {t.get('boot', '?')}s)"
            for name, t in _timings["guests"].items()
        )
        terminalreporter.write_line(
            f"nodelab: build {_timings['build_s']}s, run {_timings['run_wall_s']}s [{guests}], "
            f"kernel {_timings['kernel']}, outputs in {_timings['run_dir']}"
        )
