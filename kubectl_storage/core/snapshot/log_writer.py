"""The writer of `snapshot check --under-load`: a shell loop that appends log records while the
snapshot is cut, alternating over two files in two directories, and what its acknowledgements say.

Global record ``g`` (from 1) goes to file ``(g - 1) % 2`` as that file's record
``(g - 1) // 2 + 1`` (the layout :mod:`.log_cut` judges): each file is a log of its own, and the
two together show whether the snapshot is one instant across files and directories.

The writer runs in the source pod (the toolbox image: bash and coreutils, no Python), so the
record format of :mod:`kubectl_storage.core.snapshot.log_prefix` is built here in bash with
``printf``, ``sha256sum`` and ``dd``. Each record is appended with ``dd conv=fsync`` and only
then acknowledged on stdout: ``ack SEQ TIMESTAMP_NS ACKED_NS`` (SEQ global; the timestamp inside the
record, taken before the write, and the time the fsync had returned). An acknowledged record was
on stable storage before ``ACKED_NS``, so every record acknowledged before the snapshot's
``creationTime`` must be in the restore (:func:`acknowledged_before`).

Pure module: text in, text and numbers out. The script itself is run by the unit tests with the
local bash and compared byte for byte with :func:`~.log_prefix.encode_record`.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kubectl_storage.core.snapshot.log_record import DEFAULT_RECORD_SIZE, MAGIC

#: Where the log lives on the source volume; the checksum check leaves this directory out.
LOG_DIR = ".kubectl-storage-log"
#: The files the writer alternates over, in write order (global record g to file (g - 1) % 2).
LOG_FILES = (f"{LOG_DIR}/a/records.log", f"{LOG_DIR}/b/records.log")
#: Where the writer keeps its own files in the pod (an emptyDir): pid, acks, errors.
STATE_DIR = "/tmp"

_ACK = re.compile(r"^ack (\d+) (\d+) (\d+)$")


@dataclass(frozen=True)
class Ack:
    """One acknowledged record: its seq, the timestamp written into it, and when its fsync had
    returned."""

    seq: int
    timestamp_ns: int
    acked_ns: int


def _paths(state_dir: str) -> tuple[str, str, str]:
    """The writer's pid, acks and error files in ``state_dir``, quoted for the shell."""
    pid, acks, err = (shlex.quote(f"{state_dir}/log-writer.{n}") for n in ("pid", "acks", "err"))
    return pid, acks, err


def writer_script(
    mount: str,
    *,
    record_size: int = DEFAULT_RECORD_SIZE,
    pause_s: float = 0.0,
    state_dir: str = STATE_DIR,
) -> str:
    """A bash script appending records alternately to ``mount``/LOG_FILES until killed, fsync
    each.

    It writes its pid to ``state_dir``/log-writer.pid first, then ``ack SEQ TS ACKED`` per
    record on stdout.
    ``pause_s`` sleeps between records (0: as fast as the shell can).
    """
    payload_len = record_size - 28 - 32
    pid, _, _ = _paths(state_dir)
    logs = " ".join(shlex.quote(f"{mount}/{name}") for name in LOG_FILES)
    dirs = " ".join(shlex.quote(f"{mount}/{name.rsplit('/', 1)[0]}") for name in LOG_FILES)
    magic = "".join(f"\\x{b:02x}" for b in MAGIC)
    return f"""set -eu
echo $$ > {pid}
mkdir -p {dirs}
logs=({logs})
for log in "${{logs[@]}}"; do : > "$log"; done
work=$(mktemp -d)
# bytes from hex: printf with \\x escapes, two digits at a time
unhex() {{ printf "$(printf '%s' "$1" | sed 's/../\\\\x&/g')"; }}
seq=0
while :; do
  seq=$((seq + 1))
  log=${{logs[$(((seq - 1) % {len(LOG_FILES)}))]}}
  fseq=$(((seq - 1) / {len(LOG_FILES)} + 1))
  ts=$(date +%s%N)
  seqhex=$(printf '%016x' "$fseq")
  {{ printf '{magic}'; unhex "$seqhex"; unhex "$(printf '%016x%08x' "$ts" {record_size})"; }} \
    > "$work/rec"
  digest=$({{ printf 'kubectl-storage log '; unhex "$seqhex"; }} | sha256sum | cut -c1-64)
  unhex "$digest" > "$work/d"
  for _ in $(seq {payload_len // 32 + 1}); do cat "$work/d"; done \
    | head -c {payload_len} >> "$work/rec"
  unhex "$(sha256sum "$work/rec" | cut -c1-64)" >> "$work/rec"
  dd if="$work/rec" of="$log" bs={record_size} oflag=append conv=notrunc,fsync status=none
  echo "ack $seq $ts $(date +%s%N)"
  {f"sleep {pause_s}" if pause_s > 0 else ":"}
done
"""


def start_command(script: str, *, state_dir: str = STATE_DIR) -> list[str]:
    """The exec that starts ``script`` detached from the exec session (it outlives it)."""
    _, acks, err = _paths(state_dir)
    body = shlex.quote(f"{state_dir}/log-writer.sh")
    launcher = f'printf "%s" "$1" > {body} && setsid -f bash {body} < /dev/null > {acks} 2> {err}'
    return ["sh", "-c", launcher, "sh", script]


def stop_command(*, state_dir: str = STATE_DIR) -> list[str]:
    """The exec that stops the writer and prints its acknowledgements (its errors on stderr)."""
    pid, acks, err = _paths(state_dir)
    script = (
        f'kill "$(cat {pid})" 2>/dev/null || true; sleep 0.3; cat {acks}; cat {err} >&2 || true'
    )
    return ["sh", "-c", script]


def count_command(*, state_dir: str = STATE_DIR) -> list[str]:
    """The exec that prints how many records the writer has acknowledged so far."""
    _, acks, _ = _paths(state_dir)
    return ["sh", "-c", f"wc -l < {acks} 2>/dev/null || echo 0"]


def parse_acks(text: str) -> tuple[Ack, ...]:
    """The writer's ``ack SEQ TS ACKED`` lines; anything else (a half-written last line) is
    skipped."""
    acks = []
    for line in text.splitlines():
        match = _ACK.match(line.strip())
        if match:
            acks.append(Ack(int(match.group(1)), int(match.group(2)), int(match.group(3))))
    return tuple(acks)


def acknowledged_before(acks: Iterable[Ack], moment_ns: int) -> int:
    """The highest seq whose fsync had returned before ``moment_ns`` (0 when none).

    Callers pass the snapshot's creationTime, which the API gives to the second and which is
    rounded down here: that asks less of a snapshot, never more. The pod's clock and the
    storage system's are assumed to agree (the report says so).
    """
    return max((ack.seq for ack in acks if ack.acked_ns < moment_ns), default=0)


def written_between(acks: Sequence[Ack], start_ns: int, end_ns: int) -> int:
    """How many records were acknowledged between two moments (the writes during the cut)."""
    return sum(1 for ack in acks if start_ns <= ack.acked_ns < end_ns)
