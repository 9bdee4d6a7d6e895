"""The rows the check writes and reads back: payloads, the seed SQL, the dump parser, checksums
and the comparison of what was written with what came back. Standard library only."""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

DATABASE = "testdb"
TABLE = "tasks"
QUALIFIED_TABLE = f"`{DATABASE}`.`{TABLE}`"

SCHEMA_SQL = (
    f"CREATE DATABASE IF NOT EXISTS `{DATABASE}`;\n"
    f"CREATE TABLE IF NOT EXISTS {QUALIFIED_TABLE} (\n"
    "  task_id INT AUTO_INCREMENT PRIMARY KEY,\n"
    "  title VARCHAR(255) NOT NULL,\n"
    "  description TEXT,\n"
    "  created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP\n"
    ") ENGINE=InnoDB;\n"
)

#: The table as the checks read it: hex keeps any byte exact through the client's batch output.
DUMP_SQL = (
    "SELECT task_id, HEX(title), HEX(description), UNIX_TIMESTAMP(created_at) "
    f"FROM {QUALIFIED_TABLE} ORDER BY task_id"
)

_PAYLOAD_ALPHABET = string.ascii_letters + string.digits + " .,-_"


@dataclass(frozen=True)
class TaskRow:
    """A row as written: the content the application controls."""

    task_id: int
    title: str
    description: str | None


@dataclass(frozen=True)
class StoredRow:
    """A row as read back, with the server's timestamp."""

    task_id: int
    title: str
    description: str | None
    created_at: int | None

    def content(self) -> TaskRow:
        """The written part of the row."""
        return TaskRow(self.task_id, self.title, self.description)


def generate_rows(count: int, rng: random.Random, *, start_id: int = 1) -> tuple[TaskRow, ...]:
    """``count`` rows with explicit ids and random printable payloads."""

    def text(low: int, high: int) -> str:
        return "".join(rng.choice(_PAYLOAD_ALPHABET) for _ in range(rng.randint(low, high)))

    return tuple(
        TaskRow(task_id, f"task {task_id}: {text(8, 40)}", text(32, 400))
        for task_id in range(start_id, start_id + count)
    )


def _sql_string(value: str | None) -> str:
    if value is None:
        return "NULL"
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def seed_sql(rows: Sequence[TaskRow], *, batch: int = 100) -> str:
    """The schema, then the rows in committed transactions of ``batch`` rows."""
    parts = [SCHEMA_SQL]
    for start in range(0, len(rows), batch):
        values = ",\n".join(
            f"({r.task_id}, {_sql_string(r.title)}, {_sql_string(r.description)})"
            for r in rows[start : start + batch]
        )
        parts.append(
            "START TRANSACTION;\n"
            f"INSERT INTO {QUALIFIED_TABLE} (task_id, title, description) VALUES\n{values};\n"
            "COMMIT;\n"
        )
    return "".join(parts)


def _unhex(text: str) -> str | None:
    if text == "NULL":
        return None
    return bytes.fromhex(text).decode("utf-8", "surrogateescape")


def parse_dump(text: str) -> tuple[StoredRow, ...]:
    """Parse the client's batch output of :data:`DUMP_SQL`.

    Raises:
        ValueError: on a line that is not four tab-separated fields.
    """
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 4:
            raise ValueError(f"line {number} of the table dump has {len(fields)} fields: {line!r}")
        task_id, title, description, created = fields
        try:
            rows.append(
                StoredRow(
                    int(task_id),
                    _unhex(title) or "",
                    _unhex(description),
                    None if created == "NULL" else int(float(created)),
                )
            )
        except ValueError as exc:
            raise ValueError(f"line {number} of the table dump: {exc}") from exc
    return tuple(rows)


def table_checksum(rows: Iterable[TaskRow]) -> str:
    """SHA-256 over the rows' written content in id order: ``sha256:<hex>``."""
    digest = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r.task_id):
        description = "NULL" if row.description is None else row.description.encode().hex()
        digest.update(f"{row.task_id}\t{row.title.encode().hex()}\t{description}\n".encode())
    return "sha256:" + digest.hexdigest()


@dataclass(frozen=True)
class TableComparison:
    """The expected rows against those found after a disruption."""

    rows_expected: int
    rows_found: int
    missing_ids: tuple[int, ...]
    changed_ids: tuple[int, ...]
    #: Rows found that were never written or acknowledged (the crash's in-flight row aside).
    unexpected_ids: tuple[int, ...]
    checksum_expected: str
    #: Checksum of the found rows with the expected ids.
    checksum_found: str
    table_missing: bool = False

    @property
    def checksum_match(self) -> bool:
        """Whether every expected row came back byte for byte."""
        return self.checksum_expected == self.checksum_found

    @property
    def intact(self) -> bool:
        """Nothing lost, changed or made up."""
        return (
            self.checksum_match
            and not self.missing_ids
            and not self.changed_ids
            and not self.unexpected_ids
        )


def compare_rows(
    expected: Sequence[TaskRow],
    found: Sequence[StoredRow],
    *,
    baseline: Mapping[int, StoredRow] | None = None,
    tolerated_ids: Iterable[int] = (),
    table_missing: bool = False,
) -> TableComparison:
    """Compare what was written with what was read back.

    ``baseline`` (the rows as read right after writing) also catches a changed ``created_at``;
    ``tolerated_ids`` are rows that may or may not exist (the commit in flight at a crash).
    """
    by_id = {row.task_id: row for row in found}
    missing = []
    changed = []
    for row in expected:
        got = by_id.get(row.task_id)
        if got is None:
            missing.append(row.task_id)
        elif got.content() != row or (
            baseline is not None and baseline.get(row.task_id, got) != got
        ):
            changed.append(row.task_id)
    expected_ids = {row.task_id for row in expected}
    tolerated = set(tolerated_ids)
    unexpected = sorted(i for i in by_id if i not in expected_ids and i not in tolerated)
    return TableComparison(
        rows_expected=len(expected),
        rows_found=len(found),
        missing_ids=tuple(missing),
        changed_ids=tuple(changed),
        unexpected_ids=tuple(unexpected),
        checksum_expected=table_checksum(expected),
        checksum_found=table_checksum(by_id[i].content() for i in expected_ids if i in by_id),
        table_missing=table_missing,
    )
