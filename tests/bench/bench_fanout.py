"""Benchmark: node fan-out of ``mount-audit`` on the multi-node test cluster (issue 12).

Not a test (nothing is asserted): run it by hand on a cluster started with
``tests/cluster/up --nodes N`` and read the figures.

    python tests/bench/bench_fanout.py [--sizes 1,3,N] [--runs 3] [--all-nodes]

For each size k it times ``kubectl storage mount-audit NODE1 … NODEk -o json`` over the first k
harness nodes (label ``kubectl-storage.test/cluster-node``), which is the code path of
``--all-nodes`` on a k-node cluster without restarting the cluster between sizes; nodes that did
not come from the harness (a QEMU guest joined for a while) are left out. ``--all-nodes`` times
``mount-audit --all-nodes`` instead, once, for the cluster as it is (its size only). Runs go
round-robin over the sizes so that a busy machine slows all of them alike; the table shows the
median, min and max wall time and the ratio of the median to one node's. A run whose report
misses a node or has a node error aborts the benchmark. Target (issue 12): k nodes at most 2x
one node.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "cluster"))
import harness  # noqa: E402  (tests/cluster/harness.py: paths and names of the cluster)
from images import toolbox_image  # noqa: E402


def harness_nodes(env: dict[str, str]) -> list[str]:
    out = subprocess.run(
        [str(harness.K8S_BIN / "kubectl"), "get", "nodes", "-l", harness.NODE_LABEL, "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout
    items = json.loads(out)["items"]
    items.sort(key=lambda n: int(n["metadata"]["labels"][harness.NODE_LABEL]))
    return [n["metadata"]["name"] for n in items]


def time_once(targets: list[str], env: dict[str, str], namespace: str) -> float:
    argv = [sys.executable, "-m", "kubectl_storage", "-n", namespace, "mount-audit", *targets]
    argv += ["--image", toolbox_image(), "-o", "json"]
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    report = json.loads(proc.stdout)
    seen = {n["node"]: n for n in report["nodes"]}
    wanted = seen if targets == ["--all-nodes"] else targets
    for node in wanted:
        if node not in seen or seen[node]["error"]:
            raise SystemExit(f"{node}: {seen.get(node, 'missing from the report')}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", help="comma-separated node counts (default: 1,3,all)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--all-nodes", action="store_true", help="time --all-nodes as is")
    args = parser.parse_args()
    env = {**os.environ, "KUBECONFIG": os.environ.get("KUBECONFIG", str(harness.ADMIN_KUBECONFIG))}
    env["PATH"] = f"{harness.TOOLS_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO)
    nodes = harness_nodes(env)
    if args.all_nodes:
        cases = {f"--all-nodes ({len(nodes)} harness nodes)": ["--all-nodes"]}
    else:
        sizes = [int(s) for s in (args.sizes or f"1,3,{len(nodes)}").split(",")]
        sizes = sorted({s for s in sizes if 1 <= s <= len(nodes)})
        cases = {f"{k} node{'s' * (k > 1)}": nodes[:k] for k in sizes}
    times: dict[str, list[float]] = {name: [] for name in cases}
    # a namespace of its own: another session's cleanup of a shared namespace cannot take our pods
    namespace = f"bench-fanout-{os.getpid()}"
    kubectl = [str(harness.K8S_BIN / "kubectl")]
    subprocess.run([*kubectl, "create", "namespace", namespace], check=True, env=env)
    try:
        for targets in cases.values():  # warm-up: imports, image on every node
            time_once(targets, env, namespace)
        for _ in range(args.runs):
            for name, targets in cases.items():
                times[name].append(time_once(targets, env, namespace))
    finally:
        subprocess.run([*kubectl, "delete", "namespace", namespace, "--wait=false"], env=env)
    base = statistics.median(next(iter(times.values())))
    print(
        f"mount-audit fan-out, {args.runs} runs each (after one warm-up), cluster of {len(nodes)}"
    )
    print(f"{'nodes':32} {'median s':>9} {'min s':>7} {'max s':>7} {'x first':>8}")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:32} {med:9.2f} {min(ts):7.2f} {max(ts):7.2f} {med / base:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
