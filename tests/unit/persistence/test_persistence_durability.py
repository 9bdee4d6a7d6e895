"""validate-persistence durability checks: the server's settings and the writer's acknowledgements.

The outputs below are constructed, not captured: they are written in the format of
``mysql --batch --skip-column-names -e "<DURABILITY_SQL>"`` (one ``name<TAB>value`` line per
variable, sorted by name as both servers sort SHOW VARIABLES), with each server's documented
values and image defaults (MySQL 8.0: binary log on, sync_binlog=1, innodb_flush_method=fsync;
MariaDB 11: binary log off, sync_binlog=0, innodb_flush_method=O_DIRECT), followed by what the
other two statements print: MySQL 8.0.21+'s ``Innodb_redo_log_enabled<TAB>ON`` status line
(MariaDB has none) and the ``table_engine<TAB>InnoDB`` line of the SELECT on
information_schema.TABLES.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kubectl_storage.core.validate_persistence.durability import (
    DURABILITY_SQL,
    DURABILITY_VARIABLES,
    NOT_REPORTED,
    DurabilitySettings,
    judge_durability,
    parse_acks,
    parse_variables,
)


def _batch(**values: str) -> str:
    """A constructed ``mysql -N -B`` output of :data:`DURABILITY_SQL`."""
    return "".join(f"{name}\t{value}\n" for name, value in sorted(values.items()))


MYSQL8_DEFAULT = (
    "innodb_doublewrite\tON\n"
    "innodb_flush_log_at_trx_commit\t1\n"
    "innodb_flush_method\tfsync\n"
    "log_bin\tON\n"
    "sync_binlog\t1\n"
    "Innodb_redo_log_enabled\tON\n"
    "table_engine\tInnoDB\n"
)

MARIADB11_DEFAULT = (
    "innodb_doublewrite\tON\n"
    "innodb_flush_log_at_trx_commit\t1\n"
    "innodb_flush_method\tO_DIRECT\n"
    "log_bin\tOFF\n"
    "sync_binlog\t0\n"
    "table_engine\tInnoDB\n"
)

REDO_NOTE = (
    "Innodb_redo_log_enabled: not reported (a status of MySQL 8.0.21+, the release that added "
    "ALTER INSTANCE DISABLE INNODB REDO_LOG), not judged"
)
BINLOG_OFF_NOTE = "sync_binlog: does not apply, binary logging is off (log_bin=OFF)"


def _judge(text: str) -> DurabilitySettings:
    return judge_durability(parse_variables(text))


def _only_reason(settings: DurabilitySettings) -> str:
    assert not settings.durable
    assert len(settings.reasons) == 1, settings.reasons
    return settings.reasons[0]


# -- the statement --------------------------------------------------------------------------


def test_sql_reads_the_variables_the_redo_log_status_and_the_tables_engine() -> None:
    variables, status, engine = DURABILITY_SQL.split("; ")
    assert variables.startswith("SHOW GLOBAL VARIABLES WHERE Variable_name IN (")
    for name in (*DURABILITY_VARIABLES, "innodb_data_file_buffering"):
        assert f"'{name}'" in variables
    assert status == "SHOW GLOBAL STATUS WHERE Variable_name = 'Innodb_redo_log_enabled'"
    assert engine == (
        "SELECT 'table_engine', ENGINE FROM information_schema.TABLES "
        "WHERE TABLE_SCHEMA = 'testdb' AND TABLE_NAME = 'tasks'"
    )
    assert set(DURABILITY_VARIABLES) == {
        "innodb_flush_log_at_trx_commit",
        "sync_binlog",
        "log_bin",
        "innodb_doublewrite",
        "innodb_flush_method",
    }


# -- parsing --------------------------------------------------------------------------------


def test_parse_variables_reads_batch_lines() -> None:
    assert parse_variables(MYSQL8_DEFAULT) == {
        "innodb_doublewrite": "ON",
        "innodb_flush_log_at_trx_commit": "1",
        "innodb_flush_method": "fsync",
        "log_bin": "ON",
        "sync_binlog": "1",
        "innodb_redo_log_enabled": "ON",
        "table_engine": "InnoDB",
    }


def test_parse_variables_ignores_malformed_lines_without_crashing() -> None:
    text = (
        "mysql: [Warning] Using a password on the command line interface can be insecure.\n"
        "\n"
        "\tON\n"  # no name
        "innodb_doublewrite ON\n"  # a space, not a tab
        "garbage\n"
        "Innodb_Flush_Log_At_Trx_Commit\t1\r\n"  # names are case-insensitive; CRLF
        "innodb_flush_method\tO_DIRECT\n"
        "log_bin\tON\n"
        "sync_binlog\t1"  # last line without its newline still parses
    )
    assert parse_variables(text) == {
        "innodb_flush_log_at_trx_commit": "1",
        "innodb_flush_method": "O_DIRECT",
        "log_bin": "ON",
        "sync_binlog": "1",
    }
    settings = judge_durability(parse_variables(text))
    # Nothing fails, but what was not reported is unknown, never durable.
    assert (settings.reasons, settings.state) == ((), "unknown")
    assert not settings.durable
    assert settings.unknown == ("innodb_doublewrite", "table engine")
    assert f"innodb_doublewrite: {NOT_REPORTED}" in settings.notes


def test_parse_variables_undoes_batch_escapes_and_keeps_empty_values() -> None:
    assert parse_variables("a\tx\\ty\\\\z\nb\t\n") == {"a": "x\ty\\z", "b": ""}


def test_parse_variables_of_nothing() -> None:
    assert parse_variables("") == {}


# -- judging --------------------------------------------------------------------------------


def test_mysql8_default_config_is_durable() -> None:
    settings = _judge(MYSQL8_DEFAULT)
    assert settings.durable
    assert settings.reasons == ()
    assert settings.notes == ()
    assert settings.values() == {
        "innodb_flush_log_at_trx_commit": "1",
        "log_bin": "ON",
        "sync_binlog": "1",
        "innodb_doublewrite": "ON",
        "innodb_flush_method": "fsync",
    }


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _judge(MYSQL8_DEFAULT).durable = False  # type: ignore[misc]


@pytest.mark.parametrize("value", ["2", "0"])
def test_flush_log_at_trx_commit_not_1_fails(value: str) -> None:
    text = MYSQL8_DEFAULT.replace(
        "innodb_flush_log_at_trx_commit\t1", f"innodb_flush_log_at_trx_commit\t{value}"
    )
    reason = _only_reason(_judge(text))
    assert f"innodb_flush_log_at_trx_commit={value}" in reason
    assert "a second of acknowledged commits" in reason
    assert "set innodb_flush_log_at_trx_commit=1" in reason
    assert "--allow-non-durable-config" in reason


def test_flush_log_at_trx_commit_2_survives_mysqld_crash_but_not_os_crash() -> None:
    values = {**parse_variables(MYSQL8_DEFAULT), "innodb_flush_log_at_trx_commit": "2"}
    reason = _only_reason(_judge(_batch(**values)))
    assert "operating system" in reason
    assert "a crash of mysqld alone does not" in reason


def test_sync_binlog_0_with_binlog_on_fails() -> None:
    text = MYSQL8_DEFAULT.replace("sync_binlog\t1", "sync_binlog\t0")
    reason = _only_reason(_judge(text))
    assert "sync_binlog=0 with log_bin=ON" in reason
    assert "set sync_binlog=1" in reason


def test_sync_binlog_every_100_commits_with_binlog_on_fails() -> None:
    text = MYSQL8_DEFAULT.replace("sync_binlog\t1", "sync_binlog\t100")
    assert "sync_binlog=100 with log_bin=ON" in _only_reason(_judge(text))


def test_sync_binlog_0_with_binlog_off_passes() -> None:
    text = MYSQL8_DEFAULT.replace("log_bin\tON", "log_bin\tOFF").replace(
        "sync_binlog\t1", "sync_binlog\t0"
    )
    settings = _judge(text)
    assert settings.durable
    assert settings.notes == (BINLOG_OFF_NOTE,)


def test_doublewrite_off_fails_for_torn_pages() -> None:
    text = MYSQL8_DEFAULT.replace("innodb_doublewrite\tON", "innodb_doublewrite\tOFF")
    reason = _only_reason(_judge(text))
    assert "innodb_doublewrite=OFF" in reason
    assert "torn" in reason
    assert "set innodb_doublewrite=ON" in reason


def test_mysql_doublewrite_detect_only_fails_and_detect_and_recover_passes() -> None:
    only = MYSQL8_DEFAULT.replace("innodb_doublewrite\tON", "innodb_doublewrite\tDETECT_ONLY")
    assert "innodb_doublewrite=DETECT_ONLY" in _only_reason(_judge(only))
    recover = MYSQL8_DEFAULT.replace(
        "innodb_doublewrite\tON", "innodb_doublewrite\tDETECT_AND_RECOVER"
    )
    assert _judge(recover).durable


@pytest.mark.parametrize("method", ["nosync", "littlesync", "O_DIRECT_NO_FSYNC"])
def test_flush_methods_that_skip_fsync_fail(method: str) -> None:
    text = MYSQL8_DEFAULT.replace("innodb_flush_method\tfsync", f"innodb_flush_method\t{method}")
    reason = _only_reason(_judge(text))
    assert f"innodb_flush_method={method}" in reason
    assert "fsync()" in reason
    assert "set innodb_flush_method=O_DIRECT" in reason


@pytest.mark.parametrize("method", ["fsync", "O_DSYNC", "O_DIRECT", "", "NULL"])
def test_flush_methods_that_sync_pass(method: str) -> None:
    text = MYSQL8_DEFAULT.replace("innodb_flush_method\tfsync", f"innodb_flush_method\t{method}")
    assert _judge(text).durable


def test_mariadb11_default_config_is_durable() -> None:
    settings = _judge(MARIADB11_DEFAULT)
    assert settings.durable
    assert settings.innodb_flush_method == "O_DIRECT"
    assert settings.sync_binlog == "0"
    assert settings.notes == (BINLOG_OFF_NOTE, REDO_NOTE)


def test_mariadb_flush_log_at_trx_commit_3_is_durable() -> None:
    text = MARIADB11_DEFAULT.replace(
        "innodb_flush_log_at_trx_commit\t1", "innodb_flush_log_at_trx_commit\t3"
    )
    assert _judge(text).durable


def test_mariadb11_doublewrite_fast_fails() -> None:
    text = MARIADB11_DEFAULT.replace("innodb_doublewrite\tON", "innodb_doublewrite\tfast")
    reason = _only_reason(_judge(text))
    assert "innodb_doublewrite=fast" in reason
    assert "does not fsync the data files" in reason


def test_mariadb11_binlog_on_without_sync_fails() -> None:
    text = MARIADB11_DEFAULT.replace("log_bin\tOFF", "log_bin\tON")
    assert "sync_binlog=0 with log_bin=ON" in _only_reason(_judge(text))


def test_several_failures_are_all_reported() -> None:
    text = _batch(
        innodb_doublewrite="OFF",
        innodb_flush_log_at_trx_commit="0",
        innodb_flush_method="nosync",
        log_bin="ON",
        sync_binlog="0",
    )
    settings = _judge(text)
    assert not settings.durable
    assert [r.split("=", 1)[0] for r in settings.reasons] == [
        "innodb_flush_log_at_trx_commit",
        "sync_binlog",
        "innodb_doublewrite",
        "innodb_flush_method",
    ]


def test_a_missing_flush_method_is_unknown_unless_mariadb11_replaced_it() -> None:
    text = "".join(
        line + "\n" for line in MARIADB11_DEFAULT.splitlines() if "flush_method" not in line
    )
    settings = _judge(text)
    assert (settings.state, settings.durable, settings.reasons) == ("unknown", False, ())
    assert settings.unknown == ("innodb_flush_method",)
    assert f"innodb_flush_method: {NOT_REPORTED}" in settings.notes
    # MariaDB 11.0 deprecated it for innodb_{data,log}_file_{buffering,write_through}: a server
    # that reports innodb_data_file_buffering has nothing unknown here.
    replaced = _judge(text + "innodb_data_file_buffering\tOFF\n")
    assert replaced.durable
    assert any(n.startswith("innodb_flush_method: not reported, replaced") for n in replaced.notes)


def test_nothing_reported_is_not_durable() -> None:
    # A proxy or server that answers none of the variables: the redo log's flush is not known,
    # which alone decides whether a commit is flushed, so it is a reason, not a note.
    settings = judge_durability({})
    assert not settings.durable
    assert settings.state == "not durable"
    (reason,) = settings.reasons
    assert reason.startswith(f"innodb_flush_log_at_trx_commit: {NOT_REPORTED}")
    assert settings.unknown == (
        "log_bin",
        "sync_binlog",
        "innodb_doublewrite",
        "innodb_flush_method",
        "table engine",
    )


def test_an_unreported_flush_log_at_trx_commit_is_not_durable() -> None:
    text = "".join(line + "\n" for line in MYSQL8_DEFAULT.splitlines() if "trx_commit" not in line)
    settings = _judge(text)
    assert settings.innodb_flush_log_at_trx_commit is None
    assert _only_reason(settings).startswith("innodb_flush_log_at_trx_commit: not reported")


def test_sync_binlog_is_not_judged_when_log_bin_is_not_reported() -> None:
    text = "sync_binlog\t0\ninnodb_flush_log_at_trx_commit\t1\n"
    settings = _judge(text)
    assert not settings.durable
    assert "log_bin" in settings.unknown
    assert f"log_bin: {NOT_REPORTED}" in settings.notes
    assert any(n.startswith("sync_binlog=0: not judged") for n in settings.notes)
    # sync_binlog=1 is durable whether the binary log is on or not: log_bin is not needed
    synced = _judge(MYSQL8_DEFAULT.replace("log_bin\tON\n", ""))
    assert synced.durable
    assert f"log_bin: {NOT_REPORTED} (sync_binlog=1 is durable either way)" in synced.notes


def test_a_disabled_redo_log_is_not_durable() -> None:
    # MySQL 8.0.21+ after ALTER INSTANCE DISABLE INNODB REDO_LOG.
    text = MYSQL8_DEFAULT.replace("Innodb_redo_log_enabled\tON", "Innodb_redo_log_enabled\tOFF")
    settings = _judge(text)
    assert settings.innodb_redo_log_enabled == "OFF"
    reason = _only_reason(settings)
    assert reason.startswith("Innodb_redo_log_enabled=OFF: redo logging is disabled")
    assert "ALTER INSTANCE ENABLE INNODB REDO_LOG" in reason
    # ON (MySQL 8.0.21+ by default) is quiet; absent (MariaDB) is a note, not a finding.
    assert _judge(MYSQL8_DEFAULT).innodb_redo_log_enabled == "ON"
    assert _judge(MYSQL8_DEFAULT).notes == ()
    mariadb = _judge(MARIADB11_DEFAULT)
    assert mariadb.durable
    assert REDO_NOTE in mariadb.notes


def test_a_substituted_table_engine_is_not_durable() -> None:
    # CREATE TABLE ... ENGINE=InnoDB without NO_ENGINE_SUBSTITUTION on a server without InnoDB.
    for engine in ("MyISAM", "Aria", "MEMORY"):
        text = MYSQL8_DEFAULT.replace("table_engine\tInnoDB", f"table_engine\t{engine}")
        reason = _only_reason(_judge(text))
        assert reason.startswith(f"the check's table testdb.tasks uses ENGINE={engine}, not InnoDB")
        assert "NO_ENGINE_SUBSTITUTION" in reason
    assert _judge(MYSQL8_DEFAULT.replace("\tInnoDB", "\tinnodb")).durable
    # No engine line: the table was not found, so the engine is unknown, never durable.
    missing = _judge(MYSQL8_DEFAULT.replace("table_engine\tInnoDB\n", ""))
    assert (missing.state, missing.unknown) == ("unknown", ("table engine",))


# -- real servers ---------------------------------------------------------------------------

PERSISTENCE_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "validate_persistence"


def test_mariadb_10_11_as_the_test_image_runs_it_is_durable() -> None:
    # Real output of DURABILITY_SQL on Debian's MariaDB 10.11.19 after the check's SCHEMA_SQL.
    settings = _judge((PERSISTENCE_FIXTURES / "mariadb-10.11-durability.txt").read_text())
    assert settings.durable
    assert settings.state == "durable"
    assert settings.table_engine == "InnoDB"
    assert settings.innodb_redo_log_enabled is None  # MariaDB has no such status: a note
    assert settings.notes == (BINLOG_OFF_NOTE, REDO_NOTE)


def test_mariadb_without_innodb_substitutes_aria_and_reports_no_innodb_setting() -> None:
    # Real: the same server started with --skip-innodb --default-storage-engine=Aria
    # --sql-mode="" (no NO_ENGINE_SUBSTITUTION): CREATE TABLE ... ENGINE=InnoDB only warned
    # (mariadb-10.11-skip-innodb-aria-schema-warnings.txt) and the table is Aria; no innodb_*
    # variable is reported at all.
    text = (PERSISTENCE_FIXTURES / "mariadb-10.11-skip-innodb-aria-durability.txt").read_text()
    settings = _judge(text)
    assert settings.state == "not durable"
    assert settings.table_engine == "Aria"
    assert [r.split(":")[0].split(" uses")[0] for r in settings.reasons] == [
        "innodb_flush_log_at_trx_commit",
        "the check's table testdb.tasks",
    ]
    assert settings.unknown == ("innodb_doublewrite", "innodb_flush_method")
    warnings = PERSISTENCE_FIXTURES / "mariadb-10.11-skip-innodb-aria-schema-warnings.txt"
    assert "Using storage engine Aria for table 'tasks'" in warnings.read_text()


# -- acknowledgements -----------------------------------------------------------------------


def test_parse_acks_reads_markers_in_order() -> None:
    # Constructed output of a writer printing `ack <seq>` after each commit returned OK.
    text = "ack 1\nack 2\nack 3\nkilled 57 mysqld\nfail 4 ERROR 2013 (HY000): Lost connection\n"
    assert parse_acks(text) == (1, 2, 3)


def test_parse_acks_drops_a_cut_last_line() -> None:
    assert parse_acks("ack 1\nack 2\nack 3") == (1, 2)
    assert parse_acks("ack 1\nack 2\nack 3\n") == (1, 2, 3)


def test_parse_acks_ignores_malformed_markers() -> None:
    text = "ack\nack x\nack 1 17\nACK 2\nack 0\nack -3\nack ²\n ack 4 \nend 4\n"
    assert parse_acks(text) == (4,)


def test_parse_acks_of_nothing() -> None:
    assert parse_acks("") == ()


def test_parse_acks_rejects_a_seq_that_does_not_increase() -> None:
    with pytest.raises(ValueError, match=r"line 3 .* seq 2 after seq 2"):
        parse_acks("ack 1\nack 2\nack 2\n")
