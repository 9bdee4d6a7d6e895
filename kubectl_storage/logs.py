"""Logging and progress, always on stderr so stdout carries only results.

Verbosity follows ``-v``/``-q``: progress steps show by default, on a terminal and in a log file
or CI log alike (``[  12.3s] step``); ``-v`` adds details, ``-vv`` debug, ``-vvv`` tracebacks;
``-q`` only errors.

Long waits report "still running" ticks (:func:`tick`). On a terminal a tick redraws one line
with a spinner; elsewhere ticks are written as plain step lines, at most one per
:data:`TICK_INTERVAL_S`, so a log shows the run is alive without filling up.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TextIO

LOGGER_NAME = "kubectl_storage"
TICK_INTERVAL_S = 15.0
_SPINNER = "|/-\\"


def tick(logger: logging.Logger, message: str) -> None:
    """Report that a long step is still going (a spinner line on a terminal)."""
    logger.info("%s", message, extra={"tick": True})


class _StepFormatter(logging.Formatter):
    """Progress lines carry the time since the command started: ``[  12.3s] PVC bound``."""

    def __init__(self, started: float) -> None:
        super().__init__()
        self.started = started

    def format(self, record: logging.LogRecord) -> str:
        elapsed = time.monotonic() - self.started
        message = record.getMessage()
        if record.levelno >= logging.ERROR:
            prefix = "error: "
        elif record.levelno >= logging.WARNING:
            prefix = "warning: "
        else:
            prefix = ""
        line = f"[{elapsed:6.1f}s] {prefix}{message}"
        if record.exc_info and record.levelno <= logging.DEBUG:
            line += "\n" + self.formatException(record.exc_info)
        return line


class _ProgressHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes step lines; ticks redraw one spinner line on a terminal, are thinned elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.tty = _is_tty(stream)
        self._spin = 0
        self._last_tick = 0.0
        self._tick_shown = False  # a spinner line is on screen and must be cleared first

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if getattr(record, "tick", False):
                self._emit_tick(record)
                return
            if self._tick_shown:
                self.stream.write("\r\033[K")
                self._tick_shown = False
            super().emit(record)
        except Exception:  # noqa: BLE001 - logging must never break the command
            self.handleError(record)

    def _emit_tick(self, record: logging.LogRecord) -> None:
        if self.tty:
            self._spin = (self._spin + 1) % len(_SPINNER)
            line = f"{self.format(record)} {_SPINNER[self._spin]}"
            self.stream.write("\r\033[K" + line)
            self._tick_shown = True
            self.flush()
            return
        now = time.monotonic()
        if now - self._last_tick >= TICK_INTERVAL_S:
            self._last_tick = now
            super().emit(record)


def setup_logging(verbosity: int, stream: TextIO | None = None) -> None:
    """Route our logs to stderr at a level chosen by -v/-q (verbosity = v - q)."""
    stream = stream or sys.stderr
    if verbosity < 0:
        level = logging.ERROR
    elif verbosity <= 1:
        # Step lines by default, on a terminal and in CI logs or `2> run.log` alike.
        level = logging.INFO
    else:
        level = logging.DEBUG
    logger = logging.getLogger(LOGGER_NAME)
    logger.handlers.clear()
    handler = _ProgressHandler(stream)
    handler.setFormatter(_StepFormatter(time.monotonic()))
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
