"""Logging and progress, always on stderr so stdout carries only results.

Verbosity follows ``-v``/``-q``: progress steps show by default on a terminal; ``-v`` shows them
everywhere plus details, ``-vv`` debug, ``-vvv`` also tracebacks; ``-q`` only errors.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TextIO

LOGGER_NAME = "kubectl_storage"


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


def setup_logging(verbosity: int, stream: TextIO | None = None) -> None:
    """Route our logs to stderr at a level chosen by -v/-q (verbosity = v - q)."""
    stream = stream or sys.stderr
    if verbosity < 0:
        level = logging.ERROR
    elif verbosity == 0:
        # Progress is for people watching; scripts piping stderr get warnings only.
        level = logging.INFO if _is_tty(stream) else logging.WARNING
    elif verbosity == 1:
        level = logging.INFO
    else:
        level = logging.DEBUG
    logger = logging.getLogger(LOGGER_NAME)
    logger.handlers.clear()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_StepFormatter(time.monotonic()))
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
