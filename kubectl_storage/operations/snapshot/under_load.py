"""`snapshot check --under-load` in the pods: start the log writer in the source pod before
the snapshot is cut, count its acknowledgements right before the request and right after
readyToUse, stop it a while later, and read both logs back from the restore.
The verdict is pure (core/snapshot/under_load.py)."""

from __future__ import annotations

import time

from kubectl_storage.core.snapshot.check_plan import SOURCE_MOUNT
from kubectl_storage.core.snapshot.log_writer import (
    LOG_FILES,
    Ack,
    count_command,
    parse_acks,
    start_command,
    stop_command,
    writer_script,
)
from kubectl_storage.core.snapshot.paths import SNAPSHOT_MOUNT
from kubectl_storage.errors import ClusterError
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podstream import exec_to_sink
from kubectl_storage.operations.snapshot.common import run_tool

#: How long the writer keeps writing after readyToUse: records the restore must not hold (the
#: upper bound). Measured on the test cluster (csi-hostpath-sc, docs/commands/snapshot.md): a
#: second gave 6 and 7 records after readyToUse, each of which a cut taken late would show.
WRITES_AFTER_READY_S = 1.0
#: Records the writer must have acknowledged before the snapshot is requested.
RECORDS_BEFORE_CUT = 10
#: A little over the one-second resolution of a VolumeSnapshot's creationTime.
SECOND_OF_CREATION_TIME = 1.1


def start_writer(api: KubeApi, pod: str, namespace: str, timeout_s: float) -> None:
    """Start the log writer in the source pod and wait until it has records on disk."""
    run_tool(
        api, pod, start_command(writer_script(SOURCE_MOUNT)), namespace, timeout_s, "the log writer"
    )
    deadline = time.monotonic() + timeout_s
    while True:
        counted = count_acks(api, pod, namespace, timeout_s)
        if counted >= RECORDS_BEFORE_CUT:
            # creationTime is given to the second: a cut requested a second after the tenth
            # acknowledgement has a creationTime that counts those ten as before it.
            time.sleep(SECOND_OF_CREATION_TIME)
            return
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the log writer in pod {pod} acknowledged {counted} records in {timeout_s:.0f}s",
                "Run with --keep and read /tmp/log-writer.err in the pod.",
            )
        time.sleep(0.3)


def count_acks(api: KubeApi, pod: str, namespace: str, timeout_s: float) -> int:
    """How many records the writer has acknowledged so far (its global count)."""
    counted = run_tool(api, pod, count_command(), namespace, timeout_s, "the log writer")
    return int(counted.strip() or 0)


def read_restored_logs(
    api: KubeApi, pod: str, namespace: str, timeout_s: float
) -> tuple[bytes, ...]:
    """The restored log files' bytes, in write order (empty for a file the restore lacks)."""
    return tuple(_read_restored(api, pod, namespace, timeout_s, name) for name in LOG_FILES)


def _read_restored(api: KubeApi, pod: str, namespace: str, timeout_s: float, name: str) -> bytes:
    chunks: list[bytes] = []
    path = f"{SNAPSHOT_MOUNT}/{name}"
    outcome = exec_to_sink(
        api,
        pod,
        ["sh", "-c", 'if [ -f "$1" ]; then cat "$1"; fi', "sh", path],
        chunks.append,
        namespace=namespace,
        timeout_s=timeout_s,
    )
    if outcome.exit_code != 0:
        raise ClusterError(
            f"reading {path} in pod {pod} failed (exit {outcome.exit_code}): "
            + outcome.stderr.strip()[:400],
            "Run with --keep to inspect the restored volume.",
        )
    return b"".join(chunks)


def stop_writer(api: KubeApi, pod: str, namespace: str, timeout_s: float) -> tuple[Ack, ...]:
    """Let the writer run on past readyToUse (records the restore must lack), stop it, and
    return its acknowledgements."""
    time.sleep(WRITES_AFTER_READY_S)
    return parse_acks(run_tool(api, pod, stop_command(), namespace, timeout_s, "the log writer"))
