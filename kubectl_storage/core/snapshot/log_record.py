"""One record of the under-load check's log: its byte format, and :func:`encode_record`.

:func:`encode_record` is the one definition of a record (the tests build logs with it, and so
does the writer); the clean-prefix verdict over a restored log is in
:mod:`kubectl_storage.core.snapshot.log_prefix`, separate because it judges many records.

Record format (``record_size`` bytes, default 4096; integers big-endian)::

    offset  size            field
    0       8               magic  b"KSLOG001" (format version 1)
    8       8               seq            u64, 1 for the first record, +1 for each after it
    16      8               timestamp_ns   u64, the writer's wall clock (ns since the epoch)
                                           when it wrote the record
    24      4               record_size    u32, the record's own size
    28      record_size-60  payload        derived from seq (below)
    size-32 32              checksum       sha256 of bytes [0, record_size - 32)

The payload is ``sha256(b"kubectl-storage log " + seq as u64)`` repeated and cut to length, so
a block copied from another record cannot pass for this one even with its header rewritten and
its checksum recomputed. Record ``n`` lives at byte offset ``(n - 1) * record_size``.

Pure: integers in, bytes out.
"""

from __future__ import annotations

import hashlib

MAGIC = b"KSLOG001"
DEFAULT_RECORD_SIZE = 4096
HEADER_SIZE = 28  # magic 8 + seq 8 + timestamp 8 + record_size 4
CHECKSUM_SIZE = 32
#: Smallest record: header, checksum and a 4-byte payload.
MIN_RECORD_SIZE = 64
_PAYLOAD_SEED = b"kubectl-storage log "
_U64_MAX = 2**64 - 1
_U32_MAX = 2**32 - 1


def check_record_size(record_size: int) -> None:
    """Refuse a record size outside [MIN_RECORD_SIZE, 2**32 - 1] with a ValueError."""
    if not MIN_RECORD_SIZE <= record_size <= _U32_MAX:
        raise ValueError(
            f"record size must be between {MIN_RECORD_SIZE} and {_U32_MAX} bytes, got {record_size}"
        )


def record_payload(seq: int, record_size: int = DEFAULT_RECORD_SIZE) -> bytes:
    """The payload record ``seq`` carries in a record of ``record_size`` bytes."""
    length = record_size - HEADER_SIZE - CHECKSUM_SIZE
    digest = hashlib.sha256(_PAYLOAD_SEED + seq.to_bytes(8, "big")).digest()
    return (digest * (length // len(digest) + 1))[:length]


def encode_record(seq: int, timestamp_ns: int, *, size: int = DEFAULT_RECORD_SIZE) -> bytes:
    """Record ``seq`` (from 1) written at ``timestamp_ns``, as ``size`` bytes (module docstring)."""
    check_record_size(size)
    if not 1 <= seq <= _U64_MAX:
        raise ValueError(f"seq must be between 1 and {_U64_MAX}, got {seq}")
    if not 0 <= timestamp_ns <= _U64_MAX:
        raise ValueError(f"timestamp_ns must be between 0 and {_U64_MAX}, got {timestamp_ns}")
    body = (
        MAGIC
        + seq.to_bytes(8, "big")
        + timestamp_ns.to_bytes(8, "big")
        + size.to_bytes(4, "big")
        + record_payload(seq, size)
    )
    return body + hashlib.sha256(body).digest()
