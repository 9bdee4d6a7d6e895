"""validate-persistence's parsers and durability rules on real MySQL 9.7 outputs.

Every text here was captured from Oracle MySQL 9.7.4 (Debian unstable's mysql-server-core, the
test image localhost/kubectl-storage/mysql:test) with the product's own client command and
statements; tests/fixtures/mysql/SOURCES.md says how. What MySQL 8.4+/9.x does differently from
the MariaDB 10.11 the other real fixtures come from: the binary log is on by default (with
sync_binlog=1), innodb_doublewrite may read DETECT_AND_RECOVER or DETECT_ONLY (8.0.30+), the
redo log can be switched off at run time (Innodb_redo_log_enabled), and innodb_flush_method
defaults to O_DIRECT.
"""

from __future__ import annotations

import random
from pathlib import Path

from kubectl_storage.core.validate_persistence.durability import (
    DurabilitySettings,
    judge_durability,
    parse_variables,
)
from kubectl_storage.core.validate_persistence.mysql import is_missing_table_error
from kubectl_storage.core.validate_persistence.rows import generate_rows, parse_dump

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "mysql"


def _judge(name: str) -> DurabilitySettings:
    return judge_durability(parse_variables((FIXTURES / name).read_text()))


def test_mysql_9_7_defaults_are_durable_with_the_binary_log_synced() -> None:
    settings = _judge("mysql-9.7-durability.txt")
    assert settings.state == "durable"
    assert settings.values() == {
        "innodb_flush_log_at_trx_commit": "1",
        "log_bin": "ON",
        "sync_binlog": "1",
        "innodb_doublewrite": "ON",
        "innodb_flush_method": "O_DIRECT",
    }
    assert settings.innodb_redo_log_enabled == "ON"
    assert settings.table_engine == "InnoDB"
    # Everything was reported and judged: no note (unlike MariaDB, which lacks the redo status).
    assert (settings.reasons, settings.notes, settings.unknown) == ((), (), ())


def test_mysql_9_7_doublewrite_detect_and_recover_is_durable() -> None:
    settings = _judge("mysql-9.7-doublewrite-detect-and-recover.txt")
    assert settings.innodb_doublewrite == "DETECT_AND_RECOVER"
    assert settings.state == "durable"


def test_mysql_9_7_doublewrite_detect_only_fails_and_binlog_off_is_only_a_note() -> None:
    settings = _judge("mysql-9.7-skip-log-bin-doublewrite-detect-only.txt")
    assert settings.state == "not durable"
    (reason,) = settings.reasons
    assert reason.startswith("innodb_doublewrite=DETECT_ONLY: ")
    assert "detected but cannot be repaired" in reason
    # --skip-log-bin: sync_binlog still reads 1 and does not matter.
    assert settings.notes == ("sync_binlog: does not apply, binary logging is off (log_bin=OFF)",)


def test_mysql_9_7_doublewrite_off_and_o_direct_no_fsync_both_fail() -> None:
    settings = _judge("mysql-9.7-doublewrite-off-o-direct-no-fsync.txt")
    assert [r.split(":")[0] for r in settings.reasons] == [
        "innodb_doublewrite=OFF",
        "innodb_flush_method=O_DIRECT_NO_FSYNC",
    ]


def test_mysql_9_7_binary_log_on_without_sync_fails() -> None:
    settings = _judge("mysql-9.7-sync-binlog-0.txt")
    (reason,) = settings.reasons
    assert reason.startswith("sync_binlog=0 with log_bin=ON: ")


def test_mysql_9_7_disabled_redo_log_fails() -> None:
    settings = _judge("mysql-9.7-redo-log-disabled.txt")
    assert settings.innodb_redo_log_enabled == "OFF"
    (reason,) = settings.reasons
    assert reason.startswith("Innodb_redo_log_enabled=OFF: ")


def test_mysql_9_7_dump_reads_back_what_was_seeded() -> None:
    # The fixture is DUMP_SQL's output after seed_sql(generate_rows(3, random.Random(26))).
    stored = parse_dump((FIXTURES / "mysql-9.7-dump.txt").read_text())
    written = generate_rows(3, random.Random(26))
    assert tuple(row.content() for row in stored) == written
    assert all(isinstance(row.created_at, int) and row.created_at > 1_700_000_000 for row in stored)


def test_mysql_9_7_missing_table_and_database_errors_mean_the_data_is_gone() -> None:
    for name in ("mysql-9.7-dump-missing-table.stderr", "mysql-9.7-dump-missing-database.stderr"):
        assert is_missing_table_error((FIXTURES / name).read_text()), name
    assert not is_missing_table_error(
        "ERROR 2003 (HY000): Can't connect to MySQL server on '127.0.0.1:13306' (111)\n"
    )
