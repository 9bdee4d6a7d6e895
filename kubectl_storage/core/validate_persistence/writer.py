"""The crash writer: rows committed one at a time while mysqld is SIGKILLed, and their accounting.

The rule the writer keeps (issue 12): an acknowledgement is the COMMIT's own success, with no
second statement between the commit returning and the row being counted. Each attempt is one
client run of ``START TRANSACTION; INSERT ... (task_id = <chosen by the writer>); COMMIT`` and
the shell prints ``ack <seq>`` only when that client exited 0, i.e. when the server's OK for the
COMMIT came back (the client stops at the first failing statement, and COMMIT is the last one).
The writer chooses every row's id itself (``first_id + seq - 1``), so nothing has to be asked of
the server after the commit. The old writer ran ``SELECT LAST_INSERT_ID()`` after an autocommit
INSERT: a server killed between the two turned an acknowledged row into an "in flight" one, and
its loss passed. Standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubectl_storage.core.validate_persistence.durability import parse_acks
from kubectl_storage.core.validate_persistence.mysql import (
    CLIENT_SCRIPT,
    SERVER_PROCESS_NAMES,
    WRITER_STOP_FILE,
)
from kubectl_storage.core.validate_persistence.rows import (
    DATABASE,
    TABLE,
    StoredRow,
    TaskRow,
)


def writer_row(seq: int, task_id: int) -> TaskRow:
    """The row the crash writer commits as its ``seq``-th commit."""
    return TaskRow(task_id, f"crash-{seq}", f"written by the crash writer, commit {seq}")


def writer_task_id(first_id: int, seq: int) -> int:
    """The task_id the writer gives its ``seq``-th row (seq counts from 1)."""
    return first_id + seq - 1


def crash_writer_command(
    kill_after: int, *, first_id: int, kill_delay_s: int = 1, max_commits: int = 100_000
) -> list[str]:
    """argv of the crash writer: it commits rows one at a time and SIGKILLs mysqld mid-stream.

    Each attempt is one client run of one explicit transaction that ends in COMMIT, for the row
    with ``task_id = first_id + seq - 1``; ``ack SEQ`` is printed only when the client exited 0.
    ``kill_delay_s`` seconds after the ``kill_after``-th acknowledged commit, a background job
    SIGKILLs the server while the loop keeps committing; the pod shares one process namespace,
    so the client container sees mysqld in /proc, and the same UID needs no capability. The
    writer and its killer live in the client container, so their output survives the crash.

    Output lines: ``ack SEQ`` once the server acknowledged the COMMIT of row SEQ; ``killed PID
    NAME`` per process killed (``nokill`` when none was found); ``fail SEQ ERROR`` when attempt
    SEQ failed (its commit may or may not have happened) and the writer stops; ``stop SEQ`` when
    it stopped between attempts; ``end SEQ`` last.
    """
    names = "|".join(SERVER_PROCESS_NAMES)
    # Inside the script's double quotes: plain identifiers (backticks would run a command).
    transaction = (
        f"START TRANSACTION; INSERT INTO {DATABASE}.{TABLE} (task_id, title, description) "
        "VALUES ($(($4 + i)), 'crash-$i', 'written by the crash writer, commit $i'); COMMIT"
    )
    script = (
        CLIENT_SCRIPT + "kill_server() { k=0; for p in /proc/[0-9]*; do "
        'read -r n 2>/dev/null < "$p/comm" || continue; '
        f'case "$n" in {names}) kill -KILL "${{p#/proc/}}" && echo "killed ${{p#/proc/}} $n" '
        "&& k=1;; esac; done; "
        f'[ "$k" = 1 ] || echo nokill; : > "{WRITER_STOP_FILE}"; }}; '
        f'rm -f "{WRITER_STOP_FILE}"; i=0; '
        'while [ "$i" -lt "$1" ]; do '
        f'if [ -e "{WRITER_STOP_FILE}" ]; then echo "stop $i"; break; fi; '
        "i=$((i+1)); "
        # The marker follows the client's exit status and nothing else.
        f'if out=$(sql -e "{transaction}" 2>&1); then echo "ack $i"; '
        'if [ "$i" -eq "$2" ]; then ( sleep "$3"; kill_server ) & fi; '
        'else echo "fail $i $(printf "%s" "$out" | tr "\\n" " ")"; break; fi; '
        'done; wait; echo "end $i"'
    )
    return [
        "sh",
        "-c",
        script,
        "sh",
        str(max_commits),
        str(kill_after),
        str(kill_delay_s),
        str(first_id - 1),
    ]


# -- what the writer printed ----------------------------------------------------------------


@dataclass(frozen=True)
class WriterLog:
    """What the crash writer printed: the commits it saw acknowledged, and how it ended."""

    #: (seq, task_id) of every commit the server acknowledged, in order.
    acknowledged: tuple[tuple[int, int], ...]
    #: The attempt that failed or was cut off (its commit may or may not have happened).
    in_flight_seq: int | None
    ended: str  # "fail", "stop" or "cut" (the output ended without the writer's last line)
    #: The task_id of the writer's first row; row ``seq`` has ``first_id + seq - 1``.
    first_id: int
    error: str = ""
    #: (pid, process name) of each server process the writer's killer SIGKILLed.
    killed: tuple[tuple[int, str], ...] = ()

    @property
    def attempts(self) -> int:
        """Commits tried: the acknowledged ones and the one in flight."""
        return len(self.acknowledged) + (1 if self.in_flight_seq is not None else 0)

    @property
    def in_flight_id(self) -> int | None:
        """The task_id of the commit in flight, if any."""
        if self.in_flight_seq is None:
            return None
        return writer_task_id(self.first_id, self.in_flight_seq)


def parse_writer_output(text: str, *, first_id: int) -> WriterLog:
    """Read the crash writer's lines (see :func:`crash_writer_command`).

    Acknowledgements are read by :func:`~.durability.parse_acks`: only complete ``ack SEQ``
    lines count, a line cut off by a lost connection never does.

    Raises:
        ValueError: when the acknowledged seqs do not increase (the protocol is broken).
    """
    acks = parse_acks(text)
    killed: list[tuple[int, str]] = []
    in_flight: int | None = None
    ended = "cut"
    error = ""
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
        lines.pop()  # half a line: the connection was cut while it was written
    for line in lines:
        words = line.split(" ", 2)
        number = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        if words[0] == "killed" and number is not None and len(words) == 3:
            killed.append((number, words[2].strip()))
        elif words[0] == "fail" and number is not None:
            in_flight = number
            ended = "fail"
            error = words[2].strip() if len(words) == 3 else ""
            # Some clients echo the failed statement first; the ERROR line is what matters.
            error = error[error.find("ERROR ") :] if "ERROR " in error else error
        elif words[0] in ("stop", "end") and ended == "cut":
            ended = "stop"
    if ended == "cut":
        # The output stopped mid-run: the attempt after the last acknowledged one may have
        # been under way.
        in_flight = (acks[-1] if acks else 0) + 1
    acknowledged = tuple((seq, writer_task_id(first_id, seq)) for seq in acks)
    return WriterLog(acknowledged, in_flight, ended, first_id, error, tuple(killed))


# -- acknowledged commits against what came back --------------------------------------------


@dataclass(frozen=True)
class CommitAccounting:
    """Acknowledged commits against the rows found after recovery."""

    acknowledged: int
    acknowledged_present: int
    #: task_ids of acknowledged commits that are missing or changed: data loss.
    lost_ids: tuple[int, ...]
    in_flight_seq: int | None
    #: Whether the unacknowledged in-flight commit survived (either outcome is correct).
    in_flight_present: bool | None

    @property
    def ok(self) -> bool:
        """Every acknowledged commit survived."""
        return not self.lost_ids


def account_commits(
    log: WriterLog, found: Sequence[StoredRow]
) -> tuple[CommitAccounting, tuple[TaskRow, ...], tuple[int, ...]]:
    """Check that every acknowledged commit is present after recovery.

    Returns the accounting, the writer's rows that must exist from now on (acknowledged ones,
    plus the in-flight one when it turned out committed) and the ids of the found rows the
    writer may have written without acknowledgement (tolerated by ``compare_rows``).
    """
    by_id = {row.task_id: row for row in found}
    lost = []
    present = 0
    durable: list[TaskRow] = []
    for seq, task_id in log.acknowledged:
        row = writer_row(seq, task_id)
        durable.append(row)
        got = by_id.get(task_id)
        if got is not None and got.content() == row:
            present += 1
        else:
            lost.append(task_id)
    in_flight_present: bool | None = None
    tolerated: list[int] = []
    if log.in_flight_seq is not None and log.in_flight_id is not None:
        row = writer_row(log.in_flight_seq, log.in_flight_id)
        got = by_id.get(row.task_id)
        in_flight_present = got is not None and got.content() == row
        if in_flight_present:
            # It committed after all: it must exist from now on. Anything else under its id
            # is a row nobody wrote, which compare_rows reports.
            tolerated.append(row.task_id)
            durable.append(row)
    accounting = CommitAccounting(
        acknowledged=len(log.acknowledged),
        acknowledged_present=present,
        lost_ids=tuple(lost),
        in_flight_seq=log.in_flight_seq,
        in_flight_present=in_flight_present,
    )
    return accounting, tuple(durable), tuple(tolerated)
