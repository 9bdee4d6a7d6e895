"""Exec streams podexec.py does not cover: binary output, and an interactive terminal.

* :func:`exec_to_sink` runs a command and hands its stdout, as bytes, to a sink while it arrives
  (``tar cf -`` for `snapshot cp`: nothing is decoded, nothing is held in memory).
* :func:`exec_interactive` attaches the local terminal to a command in the pod with a TTY
  (`snapshot browse`): the terminal goes raw, keys go to the pod, the pod's output comes back,
  and window size changes follow (the resize channel). The terminal is restored on every exit.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any

from kubectl_storage.errors import ClusterError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podexec import close_stream, exit_status, interrupted, open_exec

__all__ = ["exec_interactive", "exec_to_sink", "interrupted"]

log = logging.getLogger(__name__)

STDIN_CHANNEL = 0
RESIZE_CHANNEL = 4
#: Ctrl-] ends the session from our side, as kubectl attach documents it for a stuck program.
_ESCAPE = b"\x1d"


@dataclass(frozen=True)
class BinaryExecResult:
    """What a command with binary output produced (stdout went to the sink)."""

    stdout_bytes: int
    stderr: str
    exit_code: int


class _NoCapture:
    """Stands in for the client's copy of all output, which we never read."""

    def write(self, data: Any) -> None:
        """Drop it."""

    def getvalue(self) -> bytes:
        """Nothing was kept."""
        return b""


def _open(
    api: KubeApi,
    pod: str,
    command: list[str],
    *,
    namespace: str | None,
    container: str | None,
    stdin: bool,
    tty: bool,
) -> Any:
    """Open a binary exec websocket that keeps no second copy of the output."""
    client = open_exec(
        api,
        pod,
        command,
        namespace=namespace,
        container=container,
        stdin=stdin,
        tty=tty,
        binary=True,
    )
    # The client keeps a second copy of everything for read_all(); a large tar would double in
    # memory for nothing.
    if hasattr(client, "_all"):
        client._all = _NoCapture()
    return client


def _text(data: Any) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return str(data or "")


def exec_to_sink(
    api: KubeApi,
    pod: str,
    command: list[str],
    sink: Callable[[bytes], object],
    *,
    namespace: str | None = None,
    container: str | None = None,
    timeout_s: float = 600,
    on_tick: Callable[[int], None] | None = None,
    tick_every_s: float = 5,
) -> BinaryExecResult:
    """Run ``command`` (no TTY), passing stdout bytes to ``sink`` as they arrive.

    ``on_tick`` gets the bytes received so far, every ``tick_every_s`` seconds.

    Raises:
        WaitTimeoutError: the command did not finish within ``timeout_s``.
        ClusterError: the connection was lost before the command's exit status arrived.
    """
    client = _open(
        api, pod, command, namespace=namespace, container=container, stdin=False, tty=False
    )
    received = 0
    stderr: list[str] = []
    deadline = time.monotonic() + timeout_s
    next_tick = time.monotonic() + tick_every_s

    def drain() -> None:
        nonlocal received
        chunk = client.read_stdout(timeout=0)
        if chunk:
            received += len(chunk)
            sink(bytes(chunk))
        err = client.read_stderr(timeout=0)
        if err:
            stderr.append(_text(err))

    try:
        while client.is_open():
            if time.monotonic() > deadline:
                raise WaitTimeoutError(
                    f"command {' '.join(command)!r} in pod {pod} did not finish within "
                    f"{timeout_s:.0f}s",
                    "Raise --timeout for large copies.",
                )
            client.update(timeout=1)
            drain()
            if on_tick is not None and time.monotonic() >= next_tick:
                on_tick(received)
                next_tick = time.monotonic() + tick_every_s
        drain()
        code = exit_status(client)
    finally:
        close_stream(client)
    if code is None:
        raise ClusterError(
            f"lost the connection to pod {pod} while {command[0]} was running",
            "Check that the API server and the node are healthy, then run again.",
        )
    return BinaryExecResult(received, "".join(stderr), code)


def terminal_size(fd: int) -> tuple[int, int]:
    """(columns, rows) of the terminal on ``fd``; 80x24 when it cannot be told."""
    try:
        size = os.get_terminal_size(fd)
    except OSError:
        return 80, 24
    if not size.columns or not size.lines:  # a terminal that never had its size set
        return 80, 24
    return size.columns, size.lines


def exec_interactive(
    api: KubeApi,
    pod: str,
    command: list[str],
    *,
    namespace: str | None = None,
    container: str | None = None,
    stdin_fd: int = 0,
    stdout_fd: int = 1,
) -> int | None:
    """Attach this terminal to ``command`` in the pod with a TTY until it exits.

    The local terminal is put in raw mode (Ctrl-C, Ctrl-D and Ctrl-Z go to the pod) and restored
    afterwards, also on errors and signals. Returns the command's exit code, or None when the
    connection ended without one.
    """
    import termios  # noqa: PLC0415 - POSIX only, and only for browse
    import tty  # noqa: PLC0415 - POSIX-only module, needed for an interactive shell

    client = _open(
        api, pod, command, namespace=namespace, container=container, stdin=True, tty=True
    )
    saved = termios.tcgetattr(stdin_fd)
    resized = threading.Event()
    resized.set()  # send the size once at the start
    previous_winch: Any = None
    in_main = threading.current_thread() is threading.main_thread()

    def on_winch(signum: int, frame: FrameType | None) -> None:
        resized.set()

    if in_main:
        previous_winch = signal.signal(signal.SIGWINCH, on_winch)
    try:
        tty.setraw(stdin_fd)
        sock = client.sock.sock
        stdin_open = True
        while client.is_open():
            if resized.is_set():
                resized.clear()
                columns, rows = terminal_size(stdout_fd)
                payload = json.dumps({"Width": columns, "Height": rows}).encode()
                client.write_channel(RESIZE_CHANNEL, payload)
            # TLS may hold decrypted frames the socket no longer shows as readable.
            pending = getattr(sock, "pending", lambda: 0)()
            watched = [sock] + ([stdin_fd] if stdin_open else [])
            try:
                readable, _, _ = select.select(watched, [], [], 0 if pending else 0.5)
            except InterruptedError:
                continue  # SIGWINCH
            if stdin_open and stdin_fd in readable:
                data = os.read(stdin_fd, 4096)
                if not data:
                    stdin_open = False  # local EOF; the remote shell decides when to end
                elif _ESCAPE in data:
                    log.debug("escape character typed; closing the session")
                    break
                else:
                    client.write_channel(STDIN_CHANNEL, data)
            if pending or sock in readable:
                client.update(timeout=0)
            out = client.read_stdout(timeout=0)
            if out:
                os.write(stdout_fd, bytes(out))
        out = client.read_stdout(timeout=0)  # what arrived with the close
        if out:
            os.write(stdout_fd, bytes(out))
        code = exit_status(client) if not client.is_open() else None
    finally:
        termios.tcsetattr(stdin_fd, termios.TCSADRAIN, saved)
        if in_main:
            signal.signal(signal.SIGWINCH, previous_winch)
        close_stream(client)
    return code
