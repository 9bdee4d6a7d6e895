"""Closing an exec stream keeps a Ctrl-C that arrives during the close.

websocket-client's ``WebSocket.close()`` waits for the server's close frame inside a bare
``except: pass`` (websocket/_core.py, 1.9.x), so a SIGINT during that wait vanished and
`snapshot check` went on to pass (exit 0) after the user pressed Ctrl-C, about one run in ten
when interrupted near an exec's end. A real cluster cannot be made to hit that window on
demand, so the stream here is a stand-in whose close() behaves like websocket-client's: it
receives the signal while it "waits" and swallows everything.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from kubectl_storage.kube.podexec import close_stream


class SwallowingStream:
    """Like kubernetes.stream.ws_client.WSClient over websocket-client: close(**kwargs) ends in
    a bare except."""

    def __init__(self) -> None:
        self.close_kwargs: dict = {}

    def close(self, **kwargs) -> None:
        self.close_kwargs = kwargs
        try:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while waiting for the close frame
            time.sleep(0.2)
        except:  # noqa: E722 - exactly what websocket-client does
            pass


def test_ctrl_c_during_close_is_raised_afterwards() -> None:
    stream = SwallowingStream()
    with pytest.raises(KeyboardInterrupt):
        close_stream(stream)
    assert stream.close_kwargs == {"timeout": 0}  # no 3 s wait for the server's close frame
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_close_stream_the_interrupt_is_lost() -> None:
    # The failure close_stream exists for: the stand-in really swallows the Ctrl-C.
    SwallowingStream().close()


def test_quiet_close_raises_nothing_and_restores_the_handler() -> None:
    class Quiet:
        def close(self, **kwargs) -> None:
            pass

    close_stream(Quiet())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_close_from_a_worker_thread_does_not_touch_signal_handlers() -> None:
    seen: list[dict] = []

    class Recording:
        def close(self, **kwargs) -> None:
            seen.append(kwargs)

    worker = threading.Thread(target=close_stream, args=(Recording(),))
    worker.start()
    worker.join()
    assert seen == [{"timeout": 0}]
