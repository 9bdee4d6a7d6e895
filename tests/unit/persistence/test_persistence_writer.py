"""The crash writer and the accounting of its acknowledged commits (issue 12: an acknowledgement is
the COMMIT's own success, with nothing between).

The writer's script runs here for real under dash and bash, against
``tests/fixtures/validate_persistence/fake_mysql_server.py``: a stand-in for the client *and* the
server that runs the statements of one ``-e`` in order, keeps the committed rows in a file, and
can die right after acknowledging its Nth commit. That death is what a real server can do between
two statements of one client run, and what no e2e run can aim at reliably (the kill lands where
it lands); it is the case the old writer got wrong.
"""

from __future__ import annotations

import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from kubectl_storage.core.report.verdict import Verdict
from kubectl_storage.core.validate_persistence.report import evaluate_phase
from kubectl_storage.core.validate_persistence.rows import StoredRow, compare_rows
from kubectl_storage.core.validate_persistence.writer import (
    account_commits,
    crash_writer_command,
    parse_writer_output,
    writer_row,
    writer_task_id,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "validate_persistence"
SHELLS = [s for s in ("dash", "bash") if shutil.which(s)]

#: What the old writer printed (``INSERT`` in autocommit, then ``SELECT LAST_INSERT_ID()`` in the
#: same client run) against the fake server dying right after acknowledging its 5th commit:
#: recorded from the code before this change. Row 1005 was committed and acknowledged by the
#: server, but the marker waited for a second statement, so the old parser saw it "in flight".
OLD_WRITER_OUTPUT = (
    "ack 1 1001\nack 2 1002\nack 3 1003\nack 4 1004\n"
    "fail 5 ERROR 2013 (HY000): Lost connection to server during query\nend 5\n"
)

#: The writer as it is now, in the same situation: the 5th COMMIT returned, so it is acked.
WRITER_OUTPUT = (
    "ack 1\nack 2\nack 3\nack 4\nack 5\n"
    "fail 6 ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:3306' (111)\nend 6\n"
)


def _found(rows: list[tuple[int, int]]) -> list[StoredRow]:
    """Rows as read back: (seq, task_id) of the writer's rows that the server still has."""
    return [StoredRow(tid, *_content(seq, tid), 1_700_000_000) for seq, tid in rows]


def _content(seq: int, task_id: int) -> tuple[str, str | None]:
    row = writer_row(seq, task_id)
    return row.title, row.description


# -- parsing ----------------------------------------------------------------------------------


def test_ids_are_chosen_by_the_writer() -> None:
    log = parse_writer_output(WRITER_OUTPUT, first_id=1001)
    assert log.acknowledged == tuple((seq, 1000 + seq) for seq in range(1, 6))
    assert (log.in_flight_seq, log.in_flight_id) == (6, 1006)
    assert log.ended == "fail"
    assert log.error.startswith("ERROR 2003")
    assert log.attempts == 6
    assert writer_task_id(1001, 1) == 1001


def test_killed_and_stopped_lines() -> None:
    log = parse_writer_output("ack 1\nkilled 9 mysqld\nstop 1\nend 1\n", first_id=7)
    assert log.killed == ((9, "mysqld"),)
    assert log.in_flight_seq is None
    assert log.ended == "stop"


def test_a_cut_line_is_never_an_acknowledgement() -> None:
    log = parse_writer_output("ack 1\nack 2\nack", first_id=10)
    assert [seq for seq, _ in log.acknowledged] == [1, 2]
    assert log.ended == "cut"
    # The output ended mid-run: the next attempt may have been under way.
    assert log.in_flight_seq == 3


def test_the_old_two_field_marker_is_not_an_acknowledgement() -> None:
    # "ack SEQ ID" came from a second statement; it must never count under the new protocol.
    assert parse_writer_output("ack 1 1001\n", first_id=1001).acknowledged == ()


def test_writer_error_without_the_echoed_statement() -> None:
    log = parse_writer_output(
        "fail 63 -------------- INSERT INTO testdb.tasks VALUES (1) --------------  "
        "ERROR 2013 (HY000): Lost connection\n",
        first_id=1,
    )
    assert log.error == "ERROR 2013 (HY000): Lost connection"


def test_acks_out_of_order_break_the_protocol() -> None:
    with pytest.raises(ValueError, match="acknowledges seq 2 after seq 3"):
        parse_writer_output("ack 3\nack 2\n", first_id=1)


# -- accounting -------------------------------------------------------------------------------


def test_the_lost_last_acknowledged_commit_fails() -> None:
    # The storage lost the 5th commit, which the server had acknowledged before it died.
    log = parse_writer_output(WRITER_OUTPUT, first_id=1001)
    found = _found([(seq, 1000 + seq) for seq in range(1, 5)])
    accounting, durable, tolerated = account_commits(log, found)
    assert accounting.lost_ids == (1005,)
    assert not accounting.ok
    assert tolerated == ()
    phase = evaluate_phase(
        "crash",
        compare_rows(list(durable), found, tolerated_ids=tolerated),
        time_to_ready_s=1.0,
        commits=accounting,
    )
    assert phase.verdict is Verdict.FAIL
    assert "1 of 5 acknowledged commits lost" in phase.note


def test_every_acknowledged_commit_present_and_the_in_flight_one_absent() -> None:
    log = parse_writer_output(WRITER_OUTPUT, first_id=1001)
    found = _found([(seq, 1000 + seq) for seq in range(1, 6)])
    accounting, durable, tolerated = account_commits(log, found)
    assert accounting.ok
    assert (accounting.acknowledged, accounting.acknowledged_present) == (5, 5)
    assert accounting.in_flight_present is False
    assert [r.task_id for r in durable] == [1001, 1002, 1003, 1004, 1005]
    assert tolerated == ()


def test_the_in_flight_commit_may_survive() -> None:
    log = parse_writer_output(WRITER_OUTPUT, first_id=1001)
    found = _found([(seq, 1000 + seq) for seq in range(1, 7)])
    accounting, durable, tolerated = account_commits(log, found)
    assert accounting.ok
    assert accounting.in_flight_present is True
    assert durable[-1] == writer_row(6, 1006)
    assert tolerated == (1006,)


def test_a_wrong_row_under_the_in_flight_id_is_not_tolerated() -> None:
    log = parse_writer_output(WRITER_OUTPUT, first_id=1001)
    found = [*_found([(seq, 1000 + seq) for seq in range(1, 6)]), StoredRow(1006, "x", None, 1)]
    accounting, durable, tolerated = account_commits(log, found)
    assert accounting.in_flight_present is False
    assert tolerated == ()
    assert compare_rows(list(durable), found, tolerated_ids=tolerated).unexpected_ids == (1006,)


# -- the script, against a server that dies right after acknowledging a commit -----------------


@pytest.fixture
def server(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("mysql", "mariadb"):  # the script prefers mariadb when there is one
        client = bin_dir / name
        shutil.copy(FIXTURES / "fake_mysql_server.py", client)
        client.chmod(client.stat().st_mode | stat.S_IEXEC)
    state = tmp_path / "state"
    state.mkdir()
    return {"PATH": f"{bin_dir}:/usr/bin:/bin", "STATE": str(state), "MYSQL_PWD": "pw"}


def _run_writer(shell: str, env: dict[str, str], *, first_id: int, max_commits: int) -> str:
    argv = crash_writer_command(1000, first_id=first_id, max_commits=max_commits)
    argv[0] = shell  # the kill is never armed here (after the 1000th commit)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _committed(env: dict[str, str]) -> list[tuple[int, str]]:
    lines = (Path(env["STATE"]) / "table").read_text().splitlines()
    return [(int(i), title) for i, title in (line.split("\t") for line in lines)]


@pytest.mark.parametrize("shell", SHELLS)
def test_a_commit_acknowledged_just_before_the_server_died_counts(server, shell: str) -> None:
    env = dict(server, DIE_AFTER_COMMIT="5")
    out = _run_writer(shell, env, first_id=1001, max_commits=50)
    assert out == WRITER_OUTPUT
    committed = _committed(env)
    assert committed == [(1000 + seq, f"crash-{seq}") for seq in range(1, 6)]
    log = parse_writer_output(out, first_id=1001)
    # The storage then loses the last commit the server acknowledged: that must fail.
    found = [StoredRow(i, *_content(int(t.split("-")[1]), i), 1) for i, t in committed[:-1]]
    accounting, _, _ = account_commits(log, found)
    assert accounting.lost_ids == (1005,)


def test_the_old_writer_output_let_that_loss_pass() -> None:
    # Under the old protocol the same run printed OLD_WRITER_OUTPUT: row 1005 was "in flight",
    # so losing it passed. Under the new parser that output acknowledges nothing at all (its
    # markers came from a second statement), so it cannot pass as four acknowledged commits.
    log = parse_writer_output(OLD_WRITER_OUTPUT, first_id=1001)
    assert log.acknowledged == ()
    assert log.in_flight_seq == 5


@pytest.mark.parametrize("shell", SHELLS)
def test_each_attempt_is_one_transaction_ending_in_commit(server, shell: str) -> None:
    out = _run_writer(shell, server, first_id=42, max_commits=3)
    assert out == "ack 1\nack 2\nack 3\nend 3\n"
    assert _committed(server) == [(42, "crash-1"), (43, "crash-2"), (44, "crash-3")]
    statement = (Path(server["STATE"]) / "last_sql").read_text()
    assert statement.startswith("START TRANSACTION; INSERT INTO testdb.tasks ")
    assert statement.endswith("; COMMIT")
    assert "LAST_INSERT_ID" not in statement
    argv = (Path(server["STATE"]) / "argv").read_text()
    assert "--protocol=TCP" in argv
    assert "pw" not in argv.split()  # the password stays in the environment


@pytest.mark.parametrize("shell", SHELLS)
def test_a_server_gone_before_the_commit_leaves_it_in_flight(server, shell: str) -> None:
    env = dict(server, DIE_BEFORE_COMMIT="3")
    out = _run_writer(shell, env, first_id=1, max_commits=10)
    log = parse_writer_output(out, first_id=1)
    assert [seq for seq, _ in log.acknowledged] == [1, 2]
    assert log.in_flight_seq == 3
    assert "Lost connection" in log.error
    accounting, _, _ = account_commits(log, _found([(1, 1), (2, 2)]))
    assert accounting.ok
    assert accounting.in_flight_present is False


def test_a_shell_is_there_for_the_script_tests() -> None:
    assert SHELLS, "dash or bash is needed to test the in-pod scripts"
