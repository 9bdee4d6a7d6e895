"""The cache guards on the real cluster (issue 23 item 1): the honest class ends "trusted" or names
a guard that could not run, and the memory class (the test driver's tk8s.io/medium: Memory, a
tmpfs) is flagged by the guards alone, without --compare-local."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed

QUICK = ("--profile", "quick", "-z", "1Gi")
CACHE_GUARDS = {"fio.dataset-small", "fio.cache-write-latency", "fio.cache-sync-latency"}


@pytest.fixture
def memory_class(make_storage_class):
    """A class of the test driver whose volumes live on a tmpfs."""
    return make_storage_class("memory", parameters={"tk8s.io/medium": "Memory"})


def _entry(result) -> dict:
    assert result.exit_code == 0, result.stderr
    (entry,) = json.loads(result.stdout)["results"]
    return entry


def test_the_honest_class_is_trusted(cluster, namespace) -> None:
    entry = _entry(run_cli("fio", "-s", HOSTPATH_CLASS, *QUICK, "-n", namespace, "-o", "json"))

    fired = {n["id"] for n in entry["notes"]} & CACHE_GUARDS
    assert not fired, entry["notes"]
    assert entry["confidence"] == "trusted", entry["confidence"]
    assert managed(cluster, namespace, FIO_OBJECTS) == []


def test_the_memory_class_is_flagged_by_the_guards(cluster, namespace, memory_class) -> None:
    entry = _entry(run_cli("fio", "-s", memory_class, *QUICK, "-n", namespace, "-o", "json"))

    assert entry["setup"]["volume"]["fs_type"] == "tmpfs"  # the volume really is memory
    fired = {(n["id"], n["job"]) for n in entry["notes"]}
    assert ("fio.dataset-small", "read_iops") in fired, entry["notes"]
    assert ("fio.cache-write-latency", "write_iops") in fired, entry["notes"]
    assert entry["confidence"].startswith("suspect: "), entry["confidence"]
    assert "read_iops: reads from a cache" in entry["confidence"]
    assert managed(cluster, namespace, FIO_OBJECTS) == []
