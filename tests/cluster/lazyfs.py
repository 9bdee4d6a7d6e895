"""The harness's side of the LazyFS medium (tk8s.io/medium: LazyFS; README "The LazyFS medium").

The driver (tests/cluster/csi/tk8s-hostpath/lazymedium.go) keeps one record directory per
LazyFS publish: ``<CSI_STATE>/lazyfs/<node>/<key>/`` with ``mount.json`` (volume, target,
node, pid), the daemon's ``control.sock`` and its ``daemon.log``. ``power-off NODE`` clears the
cache of every record of that node; ``down`` stops every daemon and unmounts what is left.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

FSTYPE = "fuse.tk8s-lazyfs"  # the daemon's mount type in /proc/self/mountinfo


def records(state: Path, node: str | None = None) -> list[dict]:
    """The LazyFS publishes recorded on ``node`` (every node when None), each with its ``dir``."""
    base = state / "lazyfs"
    pattern = f"{node}/*/mount.json" if node else "*/*/mount.json"
    out = []
    for f in sorted(base.glob(pattern)) if base.is_dir() else []:
        try:
            rec = json.loads(f.read_text())
        except (OSError, ValueError):
            continue
        rec["dir"] = str(f.parent)
        out.append(rec)
    return out


def control(rec: dict, command: str, timeout: float = 30) -> str:
    """Send one command to a daemon's control socket and return its answer."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(str(Path(rec["dir"]) / "control.sock"))
        s.sendall(command.encode() + b"\n")
        chunks = []
        while data := s.recv(65536):
            chunks.append(data)
    return b"".join(chunks).decode(errors="replace")


def daemon_alive(pid: int) -> bool:
    """pid is a live LazyFS daemon (``tk8s-hostpath lazyfs ...``), not a reused pid."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return len(args) > 1 and args[1] == b"lazyfs"


def is_mounted(path: str) -> bool:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        if line.split()[4].replace("\\040", " ") == path:
            return True
    return False


def stop_all(state: Path, log) -> None:
    """Stop every LazyFS daemon (SIGTERM: it unmounts; SIGKILL after 10 s) and unmount and
    forget every recorded mount, so `down` never leaves a FUSE mount behind."""
    import shutil

    for rec in records(state):
        pid = int(rec.get("pid") or 0)
        if pid and daemon_alive(pid):
            log(
                f"stopping the LazyFS daemon of volume {rec['volume']} on {rec['node']} (pid {pid})"
            )
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while daemon_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if daemon_alive(pid):
                os.kill(pid, signal.SIGKILL)
        for _ in range(3):
            if not is_mounted(rec["target"]):
                break
            subprocess.run(["umount", "-l", rec["target"]], capture_output=True)
        shutil.rmtree(rec["dir"], ignore_errors=True)
    # a mount whose record is gone (a daemon killed by hand, a record dir deleted)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        fstype = fields[fields.index("-") + 1]
        if fstype == FSTYPE:
            mp = fields[4].replace("\\040", " ")
            log(f"unmounting a LazyFS mount without a record: {mp}")
            subprocess.run(["umount", "-l", mp], capture_output=True)
