"""`kubectl storage fio`, what runs inside the benchmark pod: its command and the execs.

The container runs fio once as it starts (:func:`first_run_command`), the run collects that by
exec (:func:`collect_first_run_command`), and any ``--repeat`` and the ``--compare-local`` run
are further execs (:func:`fio_command`, :func:`local_fio_command`, :func:`probe_command`).
"""

from __future__ import annotations

import logging
import shlex

from kubectl_storage.core.fio.local_disk import (
    LOCAL_DIRECTORY,
    LOCAL_JOB_FILE_NAME,
    PROBE_JOB_FILE_NAME,
)
from kubectl_storage.core.fio.profiles import DEFAULT_DIRECTORY
from kubectl_storage.core.k8s.manifests import SCRATCH_DIRECTORY
from kubectl_storage.operations.fio.request import FioRequest

log = logging.getLogger(__name__)


JOB_FILE_NAME = "job.fio"
#: fio's output format in the pod. ``json+`` is ``json`` plus each latency block's histogram
#: (``bins``), which adding up ``numjobs`` clones needs for exact percentiles (fio's own
#: method, :mod:`kubectl_storage.core.fio.clones`); with plain ``json`` they are upper bounds.
#: Nothing else in fio-3.33's output differs (tests/unit/fio/test_fio_pod_output.py).
OUTPUT_FORMAT = "--output-format=json+"
CONFIG_PATH = "/etc/kubectl-storage"
#: Where the pod's own first fio run leaves its output (on the pod's emptyDir).
FIRST_RUN = f"{SCRATCH_DIRECTORY}/kubectl-storage-fio"
#: The first run also logs each job's IOPS once a second, for the burst guard
#: (:mod:`kubectl_storage.core.fio.timeline`): fio names the files ``log_iops.<job>.log``.
#: Given on the command line, the options are global defaults; a job file's own log options win.
PER_SECOND_LOG = (f"--write_iops_log={FIRST_RUN}/log", "--log_avg_msec=1000")
_LOG_MARKER = "@@kubectl-storage log "
_LOGS_END = "@@kubectl-storage logs end"


def fio_command(request: FioRequest) -> list[str]:
    """The fio command line of one run in the benchmark pod."""
    command = ["fio", OUTPUT_FORMAT]
    if not request.block:
        # fio writes where it runs unless told otherwise, and the root filesystem is read-only:
        # point a user's job file without `directory=` at the volume.
        command.append(f"--directory={DEFAULT_DIRECTORY}")
    command.append(f"{CONFIG_PATH}/{JOB_FILE_NAME}")
    return command


def first_run_command(request: FioRequest) -> list[str]:
    """The benchmark container's command: fio at once, its output kept, then idle.

    Running the first fio as the container starts, instead of by exec once the pod shows
    Running, saves the kubelet's delay in reporting the container as started (up to a second:
    its pod lifecycle relist period) and the exec's round trips. The mountinfo is kept too
    (how the volume is mounted, for the report). When fio has finished, the script opens the
    FIFO ``done`` for writing, which waits for the run's collecting exec
    (:func:`collect_first_run_command`) to open it for reading, then sleeps like any idle pod
    (``--keep``, and ``--repeat`` runs by exec). A container restarted after fio ended does
    not run it again.
    """
    command = fio_command(request)
    words = " ".join(shlex.quote(word) for word in [*command[:2], *PER_SECOND_LOG, *command[2:]])
    script = (
        # A restarted container finds the pod's /tmp as its first run left it: fio ran to the
        # end once (rc is there), so it must not run again over the collected result.
        f"d={FIRST_RUN}; if [ ! -e $d/rc ]; then "
        "mkdir -p $d && { [ -p $d/done ] || mkfifo $d/done; }; "
        "cat /proc/self/mountinfo > $d/mountinfo; "
        f"{words} > $d/stdout 2> $d/stderr; "
        'echo "$?" > $d/rc.tmp && mv $d/rc.tmp $d/rc; '
        "fi; "
        "echo done > $d/done; "
        "exec sleep 86400"
    )
    return ["sh", "-c", script]


def collect_first_run_command(mountinfo_start: str, mountinfo_end: str) -> list[str]:
    """The exec that waits for the container's own fio run to end and prints what it left.

    stdout: the mountinfo between the marker lines, then each per-second log after a line
    naming it (:func:`split_logs`), then fio's stdout; stderr: fio's; exit status: fio's.
    Reading the FIFO returns when the container's script has written to it, that is when fio
    has ended; it is waited for first in case the exec arrives before the script made it.
    """
    script = (
        f"d={FIRST_RUN}; "
        "while [ ! -p $d/done ]; do sleep 0.1; done; "
        "cat $d/done > /dev/null; "
        f'echo "{mountinfo_start}"; cat $d/mountinfo; echo "{mountinfo_end}"; '
        'for f in $d/log_iops.*.log; do [ -f "$f" ] || continue; '
        f'echo "{_LOG_MARKER}${{f##*/}}"; cat "$f"; done; echo "{_LOGS_END}"; '
        "cat $d/stdout; cat $d/stderr >&2; "
        'exit "$(cat $d/rc)"'
    )
    return ["sh", "-c", script]


def split_logs(stdout: str) -> tuple[dict[str, str] | None, str]:
    """Take the per-second logs out of the collecting exec's stdout: ``({file name: text},
    the rest)``, or ``(None, stdout)`` when the section is missing (a pod of an older
    version, kept with ``--keep``)."""
    end = stdout.find(_LOGS_END + "\n")
    if end < 0:
        return None, stdout
    logs: dict[str, str] = {}
    name: str | None = None
    for line in stdout[:end].splitlines(keepends=True):
        if line.startswith(_LOG_MARKER):
            name = line[len(_LOG_MARKER) :].strip()
            logs[name] = ""
        elif name is not None:
            logs[name] += line
    start = stdout.find(_LOG_MARKER)
    head = stdout[:start] if 0 <= start < end else stdout[:end]
    return logs, head + stdout[end + len(_LOGS_END) + 1 :]


def client_job_name(index: int) -> str:
    """The ConfigMap key of client ``index``'s job file."""
    return f"job-{index}.fio"


def local_fio_command() -> list[str]:
    """The fio command line of the run on the node's disk (``--compare-local``)."""
    return [
        "fio",
        OUTPUT_FORMAT,
        f"--directory={LOCAL_DIRECTORY}",
        f"{CONFIG_PATH}/{LOCAL_JOB_FILE_NAME}",
    ]


def probe_command(directory: str) -> list[str]:
    """The latency probe of ``--compare-local`` in ``directory`` (the volume or the disk's)."""
    return [
        "fio",
        "--output-format=json",
        f"--directory={directory}",
        f"{CONFIG_PATH}/{PROBE_JOB_FILE_NAME}",
    ]
