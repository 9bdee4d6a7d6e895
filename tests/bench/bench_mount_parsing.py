"""Benchmark: parse a 10,000-mount node (mountinfo + mountstats) and audit it.

Not a test (nothing is asserted): run it by hand and read the figures.

    python tests/bench/bench_mount_parsing.py [--mounts 10000] [--repeats 5]

The target is under 0.5 s to parse the mountinfo and the mountstats of 10,000 NFS mounts.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from kubectl_storage.core.mount_audit.mountstats import parse_mountstats
from kubectl_storage.core.mount_audit.rules import audit_mounts
from kubectl_storage.core.nodes.mounts import parse_mounts

OPTIONS = (
    "vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,nconnect=4,timeo=600,"
    "retrans=2,sec=sys,clientaddr=10.0.0.9,local_lock=none"
)
OPS = ("NULL", "READ", "WRITE", "COMMIT", "OPEN", "CLOSE", "SETATTR", "FSINFO", "LOCK", "LOCKU",
       "ACCESS", "GETATTR", "LOOKUP", "REMOVE", "RENAME", "CREATE", "STATFS", "READDIR",
       "SEQUENCE", "LAYOUTGET")  # fmt: skip


def mountpoint(index: int) -> str:
    return (
        f"/var/lib/kubelet/pods/00000000-0000-4000-8000-{index:012d}"
        f"/volumes/kubernetes.io~csi/pvc-{index:08d}/mount"
    )


def generate(count: int) -> tuple[str, str]:
    """A mountinfo and a mountstats text describing ``count`` NFS mounts on 16 servers."""
    mountinfo = ["25 1 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/root rw,attr2"]
    mountstats = ["device /dev/mapper/root mounted on / with fstype xfs"]
    for index in range(count):
        server = f"10.0.1.{index % 16}"
        source = f"{server}:/exports/pvc-{index:08d}"
        mountinfo.append(
            f"{100 + index} 25 0:{50 + index} / {mountpoint(index)} rw,relatime shared:{60 + index}"
            f" - nfs4 {source} rw,{OPTIONS},addr={server}"
        )
        mountstats.append(
            f"device {source} mounted on {mountpoint(index)} with fstype nfs4 statvers=1.1"
        )
        mountstats.append(f"\topts:\trw,{OPTIONS},acregmin=3,acregmax=60,acdirmin=30,acdirmax=60")
        mountstats.append(f"\tage:\t{index}")
        mountstats.append("\tsec:\tflavor=1,pseudoflavor=1")
        mountstats.append("\tevents:\t" + " ".join(["7"] * 27))
        mountstats.append("\tbytes:\t1 2 3 4 5 6 7 8")
        mountstats.append("\tRPC iostats version: 1.1  p/v: 100003/4 (nfs)")
        for connection in range(4):
            mountstats.append(f"\txprt:\ttcp {800 + connection} 0 1 0 5 100 100 0 200 0 8 1 2")
        mountstats.append("\tper-op statistics")
        for op in OPS:
            mountstats.append(f"\t{op:>12}: 10 11 0 1000 2000 3 40 50 0")
    return "\n".join(mountinfo) + "\n", "\n".join(mountstats) + "\n"


def timed(label: str, repeats: int, action: Callable[[], object]) -> float:
    """Run ``action`` ``repeats`` times, print best and median, return the best in seconds."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        runs.append(time.perf_counter() - start)
    best, median = min(runs), statistics.median(runs)
    print(f"{label:<36} best {best * 1000:8.1f} ms   median {median * 1000:8.1f} ms")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description="Time mount-table parsing on a large node.")
    parser.add_argument("--mounts", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    mountinfo_text, mountstats_text = generate(args.mounts)
    print(
        f"{args.mounts} NFS mounts: mountinfo {len(mountinfo_text) / 1e6:.1f} MB, "
        f"mountstats {len(mountstats_text) / 1e6:.1f} MB, {args.repeats} repeats"
    )
    mounts = parse_mounts(mountinfo_text)
    stats = parse_mountstats(mountstats_text)
    if len(mounts) != args.mounts + 1 or len(stats) != args.mounts:
        raise SystemExit("generated text did not parse to the expected number of mounts")

    mountinfo_s = timed(
        "parse_mounts(mountinfo)", args.repeats, lambda: parse_mounts(mountinfo_text)
    )
    stats_s = timed(
        "parse_mountstats(mountstats)", args.repeats, lambda: parse_mountstats(mountstats_text)
    )
    timed(
        "audit_mounts(mounts, stats=stats)", args.repeats, lambda: audit_mounts(mounts, stats=stats)
    )
    total = mountinfo_s + stats_s
    verdict = "within" if total < 0.5 else "OVER"
    print(f"parse total (best): {total * 1000:.1f} ms -> {verdict} the 0.5 s target")


if __name__ == "__main__":
    main()
