"""Is the server configured to make a commit durable? And what did the writer see acknowledged?

The pure half of issue 12's durability checks: the statement the client runs to read the
server's durability settings, the parser of its ``mysql --batch --skip-column-names`` output,
the judgement of those settings (:func:`judge_durability`), and the parser of the crash
writer's acknowledgement markers (:func:`parse_acks`). Standard library only, no I/O.

A configuration that does not make a commit durable fails the check with the reasons listed
in :attr:`DurabilitySettings.reasons`, unless the user passes ``--allow-non-durable-config``
(the caller decides that; this module only judges). Policy: a setting whose safety depends on
what the storage guarantees (atomic page writes, no volatile write cache) fails, because that
storage is what the check is testing and nothing here can know its guarantees.

Sources (each rule below names the one it rests on):

[MY-IFLATC] MySQL 8.0 manual, innodb_flush_log_at_trx_commit:
    https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html#sysvar_innodb_flush_log_at_trx_commit
[MA-IFLATC] MariaDB, innodb_flush_log_at_trx_commit (values 0-3; 1 and 3 are durable):
    https://mariadb.com/docs/server/ref/mdb/system-variables/innodb_flush_log_at_trx_commit
[MY-BINLOG] MySQL 8.0 manual, Binary Logging Options and Variables, sync_binlog:
    https://dev.mysql.com/doc/refman/8.0/en/replication-options-binary-log.html#sysvar_sync_binlog
[MA-GROUP] MariaDB, Group Commit for the Binary Log, "Durability" (sync_binlog=1 with the
    binary log on) and Binary Log Group Commit and InnoDB Flushing Performance ("with
    innodb_flush_log_at_trx_commit=1 and log-bin but sync-binlog=0, commits are not guaranteed
    durable inside InnoDB after commit"):
    https://mariadb.com/kb/en/group-commit-for-the-binary-log/
    https://mariadb.com/kb/en/binary-log-group-commit-and-innodb-flushing-performance/
[MY-DBLWR] MySQL 8.0 manual, Doublewrite Buffer (ON/OFF; DETECT_AND_RECOVER is ON; DETECT_ONLY
    writes only metadata and does not repair torn pages; disable "if you are more concerned with
    performance than data integrity"):
    https://dev.mysql.com/doc/refman/8.0/en/innodb-doublewrite-buffer.html
[MA-DBLWR] MariaDB, InnoDB Doublewrite Buffer (turning it off "is safe on filesystems that write
    pages atomically"), and MDEV-33545 (11.x: innodb_doublewrite becomes OFF/ON/fast; fast is
    "like ON, but avoid fsync() or fdatasync() on data files", safe or not depending on the file
    systems), https://github.com/MariaDB/server/pull/3091 :
    https://mariadb.com/kb/en/innodb-doublewrite-buffer/
[MY-IFM] MySQL 8.0 manual, innodb_flush_method (fsync, O_DSYNC, littlesync, nosync, O_DIRECT,
    O_DIRECT_NO_FSYNC; littlesync and nosync are "for internal performance testing and are
    currently unsupported"; O_DIRECT_NO_FSYNC skips fsync() after writes and is unsuitable for
    some file systems): same page as [MY-IFLATC], #sysvar_innodb_flush_method
[MA-IFM] MariaDB, InnoDB Flush Method (same values; default O_DIRECT since 10.6; deprecated in
    11.0 in favour of innodb_{data,log}_file_{buffering,write_through}, so an 11.x server may not
    report it): https://mariadb.com/kb/en/innodb-flush-method/ ; System Variables Added in
    MariaDB 11.0 (innodb_data_file_buffering, 11.0.1):
    https://mariadb.com/kb/en/system-variables-added-in-mariadb-11-0/
[MY-REDO] MySQL 8.0 manual, Redo Log, "Disabling Redo Logging" (8.0.21+: ALTER INSTANCE DISABLE
    INNODB REDO_LOG, "intended only for loading data into a new MySQL instance"; "an unexpected
    server stoppage while redo logging is disabled can cause data loss and instance
    corruption"; the status variable Innodb_redo_log_enabled reports it):
    https://dev.mysql.com/doc/refman/8.0/en/innodb-redo-log.html#innodb-disable-redo-logging
[MY-SUBST] MySQL 8.0 manual, Server SQL Modes, NO_ENGINE_SUBSTITUTION (without it, CREATE TABLE
    with an unavailable engine uses the default engine and only warns):
    https://dev.mysql.com/doc/refman/8.0/en/sql-mode.html#sqlmode_no_engine_substitution

A setting the server does not report is *unknown*, never durable: the settings are then
"unknown" (:attr:`DurabilitySettings.state`), which the report turns into a warning; an unknown
innodb_flush_log_at_trx_commit is a reason (not durable), since it alone decides whether a
commit is flushed at all. Not unknown: sync_binlog with the binary log off; innodb_flush_method
on a server that reports MariaDB 11's innodb_data_file_buffering (the variable it was replaced
by); Innodb_redo_log_enabled, which MariaDB and MySQL before 8.0.21 do not have.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubectl_storage.core.validate_persistence.rows import DATABASE, TABLE

#: The variables read, in the order they are reported.
DURABILITY_VARIABLES = (
    "innodb_flush_log_at_trx_commit",
    "log_bin",
    "sync_binlog",
    "innodb_doublewrite",
    "innodb_flush_method",
)

#: Read beside them: MariaDB 11's replacement of innodb_flush_method (only its presence counts),
#: MySQL's redo-log status, and the engine of the check's table.
MARIADB11_FLUSH_VARIABLE = "innodb_data_file_buffering"
REDO_LOG_STATUS = "innodb_redo_log_enabled"
TABLE_ENGINE = "table_engine"
EXPECTED_ENGINE = "InnoDB"

#: Three statements, valid on MySQL 8 and MariaDB 10.x/11.x (both accept ``SHOW GLOBAL
#: VARIABLES/STATUS WHERE expr``); run with ``-N -B`` they print one ``name<TAB>value`` line per
#: variable the server has, then ``Innodb_redo_log_enabled<TAB>ON|OFF`` (MySQL 8.0.21+ only),
#: then ``table_engine<TAB><engine>`` once the table exists. What the server lacks is absent.
DURABILITY_SQL = (
    "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({}); "
    "SHOW GLOBAL STATUS WHERE Variable_name = 'Innodb_redo_log_enabled'; "
    "SELECT '{}', ENGINE FROM information_schema.TABLES "
    "WHERE TABLE_SCHEMA = '{}' AND TABLE_NAME = '{}'"
).format(
    ", ".join(f"'{name}'" for name in (*DURABILITY_VARIABLES, MARIADB11_FLUSH_VARIABLE)),
    TABLE_ENGINE,
    DATABASE,
    TABLE,
)

NOT_REPORTED = "not reported by the server"

_ALLOW = "or pass --allow-non-durable-config to run the check anyway"


@dataclass(frozen=True)
class DurabilitySettings:
    """The server's durability settings and whether they make a commit durable.

    Each value is the server's text, or None when the server did not report the variable.
    """

    innodb_flush_log_at_trx_commit: str | None
    log_bin: str | None
    sync_binlog: str | None
    innodb_doublewrite: str | None
    innodb_flush_method: str | None
    #: Whether nothing in the configuration can lose or corrupt a commit the server acknowledged.
    durable: bool
    #: Why not: one sentence per setting, naming the variable, its value, what it means for a
    #: crash, and the fix. Empty when ``durable``.
    reasons: tuple[str, ...]
    #: Observations that do not fail the check (variables not reported, settings that do not
    #: apply).
    notes: tuple[str, ...] = ()
    #: MySQL 8.0.21+'s Innodb_redo_log_enabled status (None: not reported).
    innodb_redo_log_enabled: str | None = None
    #: The engine of the check's table (None: not reported, the table was not found).
    table_engine: str | None = None
    #: The settings that matter and were not reported: durability unknown (never durable).
    unknown: tuple[str, ...] = ()

    @property
    def state(self) -> str:
        """``durable``, ``not durable`` (a reason), or ``unknown`` (no reason, but a setting
        that matters was not reported)."""
        if self.reasons:
            return "not durable"
        return "unknown" if self.unknown else "durable"

    def values(self) -> dict[str, str | None]:
        """Variable name to reported value (None: not reported), in :data:`DURABILITY_VARIABLES`
        order."""
        return {name: getattr(self, name) for name in DURABILITY_VARIABLES}


def parse_variables(text: str) -> dict[str, str]:
    """Parse ``mysql --batch --skip-column-names`` output of ``SHOW VARIABLES``.

    Each line is ``name<TAB>value``. Names are lower-cased; the value is everything after the
    first tab, with batch-mode escapes (``\\t``, ``\\n``, ``\\\\``) undone. Lines without a tab
    or with an empty name (warnings, half lines, blank lines) are ignored; for a repeated name
    the last line wins.
    """
    variables: dict[str, str] = {}
    for line in text.splitlines():
        name, tab, value = line.rstrip("\r").partition("\t")
        name = name.strip().lower()
        if not tab or not name or any(c.isspace() for c in name):
            continue
        variables[name] = _unescape(value)
    return variables


def _unescape(value: str) -> str:
    out: list[str] = []
    chars = iter(value)
    for char in chars:
        if char == "\\":
            nxt = next(chars, "")
            out.append({"t": "\t", "n": "\n", "0": "\0", "\\": "\\"}.get(nxt, "\\" + nxt))
        else:
            out.append(char)
    return "".join(out)


def _flush_log_reason(value: str) -> str | None:
    # [MY-IFLATC]: 1 is required for full ACID compliance; [MA-IFLATC]: 1 and 3 are durable.
    if value in ("1", "3"):
        return None
    if value == "0":
        crash = (
            "the redo log is written and flushed about once per second, so a crash of mysqld, "
            "the node or its power loses up to about a second of acknowledged commits"
        )
    elif value == "2":
        crash = (
            "the redo log is written at each commit but flushed about once per second, so a "
            "crash of the node's operating system or a power loss loses up to about a second of "
            "acknowledged commits (a crash of mysqld alone does not)"
        )
    else:
        crash = "this is not a value that flushes the redo log at each commit"
    return (
        f"innodb_flush_log_at_trx_commit={value}: {crash}; "
        f"set innodb_flush_log_at_trx_commit=1, {_ALLOW}"
    )


def _binlog_on(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.upper() in ("ON", "1", "TRUE", "YES")


def _sync_binlog_reason(sync_binlog: str, log_bin: str) -> str | None:
    # [MY-BINLOG], [MA-GROUP]: with the binary log on, sync_binlog=1 syncs it before the commit
    # returns; 0 leaves it to the OS and N>1 syncs every N commits, so after an OS crash or power
    # loss the log lacks commits the server acknowledged (and MariaDB recovers InnoDB commits
    # from that log).
    if sync_binlog == "1":
        return None
    return (
        f"sync_binlog={sync_binlog} with log_bin={log_bin}: the binary log is not synced to "
        "disk at each commit, so after a crash of the node's operating system or a power loss "
        "it can lack commits the server acknowledged, and those commits are lost or no longer "
        f"match the binary log; set sync_binlog=1 (or turn binary logging off), {_ALLOW}"
    )


def _doublewrite_reason(value: str) -> str | None:
    # [MY-DBLWR], [MA-DBLWR]. Torn pages break data integrity, and turning the buffer off is safe
    # only when the storage writes a page atomically, which we cannot know: fail.
    upper = value.upper()
    if upper in ("ON", "1", "DETECT_AND_RECOVER"):
        return None
    if upper == "FAST":
        return (
            "innodb_doublewrite=fast: pages go through the doublewrite buffer but InnoDB does "
            "not fsync the data files, so whether a crash or power loss leaves the data files "
            "complete depends on the storage, which is what this check tests; "
            f"set innodb_doublewrite=ON, {_ALLOW}"
        )
    if upper == "DETECT_ONLY":
        crash = (
            "the doublewrite buffer keeps only page metadata, so a page half-written when the "
            "server or node crashes is detected but cannot be repaired"
        )
    elif upper in ("OFF", "0"):
        crash = (
            "there is no doublewrite buffer, so a page half-written (torn) when the server or "
            "node crashes cannot be repaired by crash recovery unless the storage writes pages "
            "atomically, which this check cannot know"
        )
    else:
        crash = "this is not a setting known to protect pages from torn writes"
    return f"innodb_doublewrite={value}: {crash}; set innodb_doublewrite=ON, {_ALLOW}"


def _flush_method_reason(value: str) -> str | None:
    # [MY-IFM], [MA-IFM]. fsync, O_DSYNC and O_DIRECT (and MySQL 5.7's empty/NULL meaning fsync)
    # make writes durable; on Windows the unbuffered methods do as well.
    upper = value.upper()
    if upper in ("NOSYNC", "LITTLESYNC"):
        crash = (
            "InnoDB skips fsync() for the data files"
            + (" and the redo log" if upper == "NOSYNC" else "")
            + ", a setting MySQL documents as for internal performance testing and unsupported, "
            "so a crash of the node or a power loss can lose acknowledged commits or corrupt "
            "the data files"
        )
    elif upper == "O_DIRECT_NO_FSYNC":
        crash = (
            "InnoDB writes the data files with O_DIRECT and skips fsync(), which is safe only on "
            "storage that needs no flush (no volatile write cache, no metadata to sync); after a "
            "crash or power loss the data files may lack writes the server counted as done, and "
            "this check cannot know the storage's guarantees"
        )
    else:
        return None
    return f"innodb_flush_method={value}: {crash}; set innodb_flush_method=O_DIRECT, {_ALLOW}"


def _redo_log_reason(value: str) -> str | None:
    # [MY-REDO]: with redo logging disabled an unexpected stop can lose data or corrupt the
    # instance.
    if value.upper() in ("ON", "1"):
        return None
    return (
        f"Innodb_redo_log_enabled={value}: redo logging is disabled (ALTER INSTANCE DISABLE "
        "INNODB REDO_LOG), which MySQL documents for loading data into a new instance only: a "
        "crash loses acknowledged commits or corrupts the instance; run ALTER INSTANCE ENABLE "
        f"INNODB REDO_LOG, {_ALLOW}"
    )


def _engine_reason(value: str) -> str | None:
    # [MY-SUBST]: the table is created ENGINE=InnoDB; another engine means the server substituted
    # its default (InnoDB unavailable, sql_mode without NO_ENGINE_SUBSTITUTION), and the
    # non-transactional engines (MyISAM, Aria, MEMORY) have no commit to make durable.
    if value.lower() == EXPECTED_ENGINE.lower():
        return None
    return (
        f"the check's table {DATABASE}.{TABLE} uses ENGINE={value}, not {EXPECTED_ENGINE}: the "
        "server substituted its default engine (InnoDB unavailable, and sql_mode without "
        "NO_ENGINE_SUBSTITUTION), which has no crash-safe commit to test; make InnoDB available "
        f"(and add NO_ENGINE_SUBSTITUTION to sql_mode), {_ALLOW}"
    )


def judge_durability(variables: Mapping[str, str]) -> DurabilitySettings:
    """Judge the settings :func:`parse_variables` read (names in lower case).

    Rules: innodb_flush_log_at_trx_commit must be 1 (or MariaDB's 3), and is not durable when not
    reported; sync_binlog must be 1 when log_bin is ON (it does not matter when binary logging is
    off); innodb_doublewrite must be ON (DETECT_AND_RECOVER in MySQL 8.0.30+);
    innodb_flush_method must not skip fsync() (nosync, littlesync, O_DIRECT_NO_FSYNC);
    Innodb_redo_log_enabled must not be OFF (absent: not a finding); the check's table must be
    InnoDB. Any other setting the server did not report makes the settings unknown
    (:attr:`DurabilitySettings.unknown`), never durable.
    """
    values = {name: variables.get(name) for name in DURABILITY_VARIABLES}
    reasons: list[str] = []
    notes: list[str] = []
    unknown: list[str] = []

    def missing(name: str) -> None:
        notes.append(f"{name}: {NOT_REPORTED}")
        unknown.append(name)

    flush_log = values["innodb_flush_log_at_trx_commit"]
    if flush_log is None:
        reasons.append(
            f"innodb_flush_log_at_trx_commit: {NOT_REPORTED}, so nothing shows that the redo log "
            "is flushed at each commit; check that the server (not a proxy) answers SHOW GLOBAL "
            f"VARIABLES and set innodb_flush_log_at_trx_commit=1, {_ALLOW}"
        )
    elif (reason := _flush_log_reason(flush_log.strip())) is not None:
        reasons.append(reason)

    log_bin, sync_binlog = values["log_bin"], values["sync_binlog"]
    binlog_on = _binlog_on(log_bin)
    if log_bin is None and (sync_binlog or "").strip() == "1":
        notes.append(f"log_bin: {NOT_REPORTED} (sync_binlog=1 is durable either way)")
    elif log_bin is None:
        missing("log_bin")
    if binlog_on is False:
        notes.append(f"sync_binlog: does not apply, binary logging is off (log_bin={log_bin})")
    elif sync_binlog is None:
        missing("sync_binlog")
    elif binlog_on and (reason := _sync_binlog_reason(sync_binlog.strip(), str(log_bin))):
        reasons.append(reason)
    elif binlog_on is None and sync_binlog.strip() != "1":
        notes.append(
            f"sync_binlog={sync_binlog}: not judged, the server did not report whether binary "
            "logging is on"
        )

    doublewrite = values["innodb_doublewrite"]
    if doublewrite is None:
        missing("innodb_doublewrite")
    elif (reason := _doublewrite_reason(doublewrite.strip())) is not None:
        reasons.append(reason)

    flush_method = values["innodb_flush_method"]
    if flush_method is None and MARIADB11_FLUSH_VARIABLE in variables:
        notes.append(
            "innodb_flush_method: not reported, replaced in MariaDB 11.0 by "
            "innodb_{data,log}_file_{buffering,write_through}, none of which skips the flush "
            "(the setting that does is innodb_doublewrite=fast, judged above)"
        )
    elif flush_method is None:
        missing("innodb_flush_method")
    elif (reason := _flush_method_reason(flush_method.strip())) is not None:
        reasons.append(reason)

    redo = variables.get(REDO_LOG_STATUS)
    if redo is None:
        notes.append(
            "Innodb_redo_log_enabled: not reported (a status of MySQL 8.0.21+, the release "
            "that added ALTER INSTANCE DISABLE INNODB REDO_LOG), not judged"
        )
    elif (reason := _redo_log_reason(redo.strip())) is not None:
        reasons.append(reason)

    engine = variables.get(TABLE_ENGINE)
    if engine is None:
        notes.append(f"the engine of {DATABASE}.{TABLE}: {NOT_REPORTED} (table not found)")
        unknown.append("table engine")
    elif (reason := _engine_reason(engine.strip())) is not None:
        reasons.append(reason)

    return DurabilitySettings(
        innodb_flush_log_at_trx_commit=flush_log,
        log_bin=log_bin,
        sync_binlog=sync_binlog,
        innodb_doublewrite=doublewrite,
        innodb_flush_method=flush_method,
        durable=not reasons and not unknown,
        reasons=tuple(reasons),
        notes=tuple(notes),
        innodb_redo_log_enabled=redo,
        table_engine=engine,
        unknown=tuple(unknown),
    )


# -- acknowledgements -----------------------------------------------------------------------


def parse_acks(text: str) -> tuple[int, ...]:
    """The sequence numbers the crash writer saw acknowledged, in order.

    The rule: an acknowledgement is the COMMIT's own success; no second statement may stand
    between the commit returning and the row being counted. The writer protocol that keeps it:

    * Preferred: the marker comes from the commit's own round trip. Each attempt is one client
      run of one autocommit ``INSERT`` with an id the writer chose (``seq``), and the shell
      prints ``ack <seq>`` only when that client exited 0, i.e. when the server's OK for the
      INSERT, which is the commit, came back: ``sql -e "INSERT ...(id = $i)" && echo "ack $i"``.
      Nothing else runs between that OK and the marker.
    * Also acceptable: ``INSERT ...; COMMIT; SELECT 'ack <seq>';`` in one client run. Without
      ``--force`` the client stops at the first failing statement, so the SELECT runs only
      after COMMIT returned OK; it prints the seq the client already chose and decides nothing.
      A crash between COMMIT's OK and the SELECT loses the marker, which can only under-count
      (that row is then treated like the one in flight), never count a commit that did not
      return. Statements such as ``SELECT LAST_INSERT_ID()`` after an autocommit INSERT are a
      second server-side statement and do not belong in the acknowledgement.

    Only complete lines that are exactly ``ack <seq>`` (seq a positive integer) count; a last
    line without its newline was cut off by a lost connection and never counts. Other lines
    (the writer's ``killed``/``fail``/``end`` lines, client noise) are ignored.

    Raises:
        ValueError: when a seq is not greater than the one before (the protocol is broken).
    """
    lines = text.splitlines()
    if lines and not text.endswith(("\n", "\r")):
        lines.pop()
    acks: list[int] = []
    for number, line in enumerate(lines, 1):
        words = line.split()
        if len(words) != 2 or words[0] != "ack" or not (words[1].isascii() and words[1].isdigit()):
            continue
        seq = int(words[1])
        if seq == 0:
            continue
        if acks and seq <= acks[-1]:
            raise ValueError(
                f"line {number} of the writer output acknowledges seq {seq} after seq {acks[-1]}"
            )
        acks.append(seq)
    return tuple(acks)
