"""Run a command in a pod and collect stdout, stderr and the exit status."""

from __future__ import annotations

import importlib
import re
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType
from typing import Any
from urllib.parse import quote, urlencode

from kubectl_storage.errors import ClusterError, WaitTimeoutError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.connection import describe_unreachable


def preload_exec_support() -> None:
    """Import the exec machinery (websocket-client, the client's ws_client) in the background.

    Commands call this before waiting for their pod, so the import overlaps the wait instead of
    delaying the first exec.
    """

    def load() -> None:
        importlib.import_module("kubernetes.stream.ws_client")

    threading.Thread(target=load, name="preload-exec", daemon=True).start()


def exec_query(
    command: list[str], *, container: str | None, stdin: bool, tty: bool
) -> list[tuple[str, str]]:
    """The exec call's query parameters, as kubectl sends them (one ``command`` per word)."""
    query = [("command", word) for word in command]
    if container:
        query.append(("container", container))
    query += [
        ("stderr", "false" if tty else "true"),  # a TTY merges stderr into stdout
        ("stdin", "true" if stdin else "false"),
        ("stdout", "true"),
        ("tty", "true" if tty else "false"),
    ]
    return query


def interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` stands for a Ctrl-C.

    The client's websocket call turns a KeyboardInterrupt during the connection into an
    ApiException with status 0; the run scope must see it as the interrupt it was.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def open_exec(
    api: KubeApi,
    pod: str,
    command: list[str],
    *,
    namespace: str | None = None,
    container: str | None = None,
    stdin: bool = False,
    tty: bool = False,
    binary: bool = False,
) -> Any:
    """Open an exec websocket to ``pod`` (stderr separate unless ``tty``).

    Raises:
        KeyboardInterrupt: Ctrl-C while connecting (the client reports it as an API error).
        ClusterError: the API server is unreachable or refused the exec (404, 403, …).
    """
    from kubernetes.stream.ws_client import websocket_call  # noqa: PLC0415 - runtime only

    # The websocket is opened straight from the configured client, not through the generated
    # CoreV1Api.connect_get_namespaced_pod_exec: importing CoreV1Api builds some 250 pydantic
    # models (0.3-0.8 s of CPU here), all for one URL. param_serialize adds the same auth
    # headers (and refreshes an expiring token) as every other call of ours.
    api_client = api.connection.api_client
    path = f"/api/v1/namespaces/{quote(namespace or api.namespace, safe='')}/pods/"
    path += f"{quote(pod, safe='')}/exec"
    query = exec_query(command, container=container, stdin=stdin, tty=tty)
    try:
        _, url, headers, _, _ = api_client.param_serialize(
            method="GET", resource_path=path, header_params={}, auth_settings=["BearerToken"]
        )
        return websocket_call(
            api_client.configuration,
            "GET",
            f"{url}?{urlencode(query)}",
            headers=headers,
            _preload_content=False,
            binary=binary,
        )
    except Exception as exc:
        if interrupted(exc):
            raise KeyboardInterrupt from exc  # so the run scope cleans up and exits 130
        status, body = getattr(exc, "status", None), str(getattr(exc, "body", "") or exc)
        if not status:
            # The client reports a refused websocket upgrade as status 0 with the handshake's
            # text: the server answered, so it is the server's status, not an unreachable API.
            status, body = handshake_refusal(str(getattr(exc, "reason", "") or exc))
        if not status:
            raise describe_unreachable(api.connection, exc) from exc
        from kubectl_storage.kube.api import _api_error  # noqa: PLC0415 - runtime only

        raise _api_error(int(status), body, "EXEC", pod) from exc


_HANDSHAKE = re.compile(r"Handshake status (\d{3})")


def handshake_refusal(text: str) -> tuple[int | None, str]:
    """The HTTP status and Status body of a refused websocket upgrade, from the text the
    websocket client gives it (``Handshake status 404 Not Found -+-+- {headers} -+-+- b'{…}'``);
    ``(None, text)`` for anything else."""
    found = _HANDSHAKE.search(text)
    if found is None:
        return None, text
    body = text.rsplit("-+-+-", 1)[-1].strip() if "-+-+-" in text else text
    if body[:2] in ("b'", 'b"') and body[-1:] == body[1]:
        body = body[2:-1].encode("latin-1", "replace").decode("unicode_escape", "replace")
    return int(found.group(1)), body


def exit_status(client: Any) -> int | None:
    """The command's exit status from a closed exec stream; None when the connection was cut
    before the status message arrived."""
    try:
        code = client.returncode
    except (TypeError, KeyError, ValueError, IndexError, AttributeError):
        return None
    return None if code is None else int(code)


def close_stream(client: Any) -> None:
    """Close an exec websocket, and its socket, without losing a Ctrl-C that arrives meanwhile.

    websocket-client's close() waits up to 3 s for the server's close frame inside a bare
    ``except: pass``, which swallows a KeyboardInterrupt; and when the server closed first it
    returns without closing the socket, which is then finalized by the garbage collector at
    some random later point, where a Ctrl-C can be lost too (see RunScope._on_signal). So: no
    wait for the close frame (the command has finished, or is being abandoned), the socket is
    closed here, and a SIGINT during all this is held back and raised afterwards.
    """
    if threading.current_thread() is not threading.main_thread():
        _close_now(client)  # signals are only delivered to the main thread
        return
    pressed: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        pressed.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        _close_now(client)
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


def _close_now(client: Any) -> None:
    client.close(timeout=0)
    socket = getattr(client, "sock", None)  # websocket.WebSocket under the client's WSClient
    if socket is not None:
        socket.shutdown()  # closes the OS socket; close() skips that when the server closed first


@dataclass(frozen=True)
class ExecResult:
    """What a command in a pod produced."""

    stdout: str
    stderr: str
    exit_code: int


#: The last line a witnessed command writes to stderr: its own exit status.
EXIT_WITNESS = "kubectl-storage-exit"
_WITNESSED = re.compile(r"\n" + EXIT_WITNESS + r" (\d+)\n\Z")


def witnessed(command: list[str]) -> list[str]:
    """``command`` run by ``sh``, which then writes the command's exit status to stderr.

    Why: when the node's kubelet stops while an exec runs, the API server can report the exec
    as a success with nothing on the status channel to say otherwise (its stream translator
    takes the kubelet's stream ending without an error as exit 0). A commit counted as
    acknowledged on that word was never answered: the test cluster's `power-off` showed it,
    the "lost" commit was never written to the log. The shell's own line is only there when
    the command really ended. Sources: k8s.io/apiserver pkg/util/proxy/streamtranslator.go
    writes a Success status once the SPDY stream to the kubelet returns without an error, and
    client-go tools/remotecommand/errorstream.go returns no error for an empty error stream.
    """
    script = '"$@"; s=$?; printf "\\n%s %d\\n" ' + EXIT_WITNESS + ' "$s" >&2; exit "$s"'
    return ["sh", "-c", script, "sh", *command]


def read_witness(stderr: str) -> tuple[str, int | None]:
    """stderr without the witness line, and the exit status the shell wrote (None: no line)."""
    found = _WITNESSED.search(stderr)
    if found is None:
        return stderr, None
    return stderr[: found.start()], int(found.group(1))


def exec_in_pod(
    api: KubeApi,
    pod: str,
    command: list[str],
    *,
    namespace: str | None = None,
    container: str | None = None,
    timeout_s: float = 600,
    stdin: bytes | None = None,
    on_tick: Callable[[], None] | None = None,
    tick_every_s: float = 10,
    witness_exit: bool = False,
) -> ExecResult:
    """Run ``command`` in the pod (no TTY) and wait for it to finish.

    ``witness_exit`` (the container needs ``sh``): the command's exit status must also come
    from the shell that ran it (see :func:`witnessed`), else the exec counts as cut off.

    Raises:
        WaitTimeoutError: the command did not finish within ``timeout_s``.
        ClusterError: the connection was lost before the command's exit status came back.
    """
    sent = witnessed(command) if witness_exit else command
    client = open_exec(
        api, pod, sent, namespace=namespace, container=container, stdin=stdin is not None
    )
    stdout: list[str] = []
    stderr: list[str] = []
    deadline = time.monotonic() + timeout_s
    next_tick = time.monotonic() + tick_every_s
    try:
        if stdin is not None:
            client.write_stdin(stdin.decode("utf-8", "surrogateescape"))
        while client.is_open():
            if time.monotonic() > deadline:
                raise WaitTimeoutError(
                    f"command {' '.join(command)!r} in pod {pod} did not finish within "
                    f"{timeout_s:.0f}s",
                    "Raise --timeout if the workload is only slow.",
                )
            client.update(timeout=1)
            if on_tick is not None and time.monotonic() >= next_tick:
                on_tick()
                next_tick = time.monotonic() + tick_every_s
            if client.peek_stdout():
                stdout.append(client.read_stdout())
            if client.peek_stderr():
                stderr.append(client.read_stderr())
        # drain what arrived with the close
        stdout.append(client.read_stdout() or "")
        stderr.append(client.read_stderr() or "")
        code = exit_status(client)
    finally:
        close_stream(client)
    err = "".join(stderr)
    if witness_exit:
        err, shell_code = read_witness(err)
        if shell_code is None or shell_code != code:
            code = None  # the status came from a stream that ended, not from the command
    if code is None:
        raise ClusterError(
            f"lost the connection to pod {pod} while {command[0]} was running",
            "Check that the API server and the node are healthy, then run again.",
        )
    return ExecResult("".join(stdout), err, int(code))
