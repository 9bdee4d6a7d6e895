"""Benchmark: how the aggregate of `kubectl storage fio --clients N` scales with N.

Not a test (nothing is asserted): run it by hand on the test cluster (tests/cluster/up --nodes 3)
and read the figures.

    python3 tests/bench/bench_fio_clients.py [--clients 1,2,4] [--runtime 5] [--repeats 1]

For each N, ``kubectl storage fio -s CLASS --clients N --profile quick -o json`` runs once per
repeat (N = 1 is the plain one-pod run, without fio's client/server mode). Reported per N and
job: the aggregate IOPS (the report's sum over clients), the mean per client, the skew between
clients, and the run's wall time. On the test cluster every node is this one machine and every
volume lives on its one disk, so the aggregate measures how the disk shares out, not network
storage; the point is that the sum is right and the clients are told apart.
A table goes to stdout and the record to tests/bench/results/bench_fio_clients-<time>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def run(clients: int, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "kubectl_storage", "fio", "-s", args.storage_class, "-z", args.size,
        "--profile", "quick", "--runtime", str(args.runtime), "--ramp-time", "0",
        "--clients", str(clients), "-o", "json",
    ]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"--clients {clients} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    report = json.loads(proc.stdout)
    (result,) = report["results"]
    jobs = {}
    for job in result["jobs"]:
        side = "read" if job["name"].startswith("read") else "write"
        per_client = [
            next(j["iops"] for j in c["jobs"] if j["name"] == job["name"])
            for c in result.get("clients", [])
            if c["jobs"]
        ] or [job[f"{side}_iops"]]
        jobs[job["name"]] = {
            "aggregate_iops": job[f"{side}_iops"],
            "per_client_iops": per_client,
            "skew_percent": (result.get("client_skew_percent") or {}).get(job["name"]),
        }
    nodes = sorted({c["node"] for c in result.get("clients", []) if c.get("node")})
    return {"clients": clients, "wall_s": wall, "jobs": jobs, "nodes": nodes}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", default="1,2,4")
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("-s", "--storage-class", default="csi-hostpath-sc")
    ap.add_argument("-z", "--size", default="1Gi")
    args = ap.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    runs = [run(n, args) for _ in range(args.repeats) for n in counts]
    print(
        f"fio --clients scaling, profile quick, runtime {args.runtime}s, {args.repeats} repeat(s)"
    )
    print(
        f"{'clients':>7} {'job':<11} {'aggregate IOPS':>15} {'per client':>11} {'skew':>6} {'wall':>6}  nodes"
    )
    for n in counts:
        mine = [r for r in runs if r["clients"] == n]
        for name in mine[0]["jobs"]:
            total = statistics.median(r["jobs"][name]["aggregate_iops"] for r in mine)
            each = statistics.median(
                statistics.fmean(r["jobs"][name]["per_client_iops"]) for r in mine
            )
            skews = [
                r["jobs"][name]["skew_percent"]
                for r in mine
                if r["jobs"][name]["skew_percent"] is not None
            ]
            skew = f"{statistics.median(skews):.0f}%" if skews else "-"
            wall = statistics.median(r["wall_s"] for r in mine)
            nodes = ",".join(mine[0]["nodes"]) or "-"
            print(
                f"{n:>7} {name:<11} {total:>15,.0f} {each:>11,.0f} {skew:>6} {wall:>5.1f}s  {nodes}"
            )
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"bench_fio_clients-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps({"args": vars(args), "runs": runs}, indent=2))
    print(f"record: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
