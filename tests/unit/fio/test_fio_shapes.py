"""Every fio output shape the parser accepts, checked against fio's own numbers in that output.

Each case is one real capture (tests/fixtures/fio/SOURCES.md). The expected values are read
from fio's JSON in the same file, never typed by hand, so the test checks units and field
choice (ns vs µs, KiB vs bytes, clat vs lat, read/write vs mixed, sync) for every shape. Where
fio also printed another format in the same run (terse, normal), that is checked too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.results import FioDirectionResult, FioJobResult, job_contract

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"

SHAPES = [
    pytest.param("fio-3.33-quick-profile-ext4.json", id="json"),
    pytest.param("fio-3.33-numjobs4-group-reporting-json+.json", id="json+-group_reporting"),
    pytest.param("fio-3.33-numjobs4-clones-json+normal.txt", id="json+-numjobs-normal-text"),
    pytest.param("fio-3.33-unified-rw-mixed.json", id="mixed-unified_rw_reporting"),
    pytest.param("fio-3.33-terse-and-json.txt", id="terse-line-before-json"),
    pytest.param("fio-3.33-etcd-profile-ext4.json", id="sync-fdatasync-block"),
    pytest.param("fio-3.33-kubestr-profile-ext4.json", id="gtod_reduce-4-jobs-at-once"),
    pytest.param("fio-3.33-dev-full-error-stderr-merged.txt", id="stderr-before-json"),
    pytest.param("fio-3.33-libaio-eagain-stdout.txt", id="fio-error-line-on-stdout"),
    pytest.param("fio-3.33-sigint-stderr-merged.txt", id="signal-text-before-json"),
    pytest.param("fio-3.33-status-interval.txt", id="status-interval-documents"),
    pytest.param("fio-3.16-superbench-lat-percentiles.json", id="lat_percentiles"),
    pytest.param("fio-3.1-fio-plot-randread-sdb.json", id="fio-3.1-no-N"),
    pytest.param("fio-2.17-perfkit-randread-randwrite.json", id="fio-2.17-microseconds"),
]


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def percentile(block: dict[str, Any], level: str) -> float | None:
    value = (block.get("percentile") or {}).get(level)
    return None if value is None else float(value)


def expected_direction(section: dict[str, Any]) -> dict[str, Any]:
    """What our parser must give for one of fio's direction blocks, from fio's own fields."""
    modern = "clat_ns" in section or "io_kbytes" in section
    clat = section.get("clat_ns" if modern else "clat") or {}
    lat = section.get("lat_ns" if modern else "lat") or {}
    to_us = 1000.0 if modern else 1.0
    measured = clat.get("N", 1) > 0 and any(clat.get(key) for key in ("min", "max", "mean"))
    lat_measured = lat.get("N", 1) > 0 and any(lat.get(key) for key in ("min", "max", "mean"))

    def level(name: str) -> float | None:
        value = percentile(clat, name) if measured else None
        return None if value is None else value / to_us

    return {
        "iops": section["iops"],
        "bw_kib_s": section["bw"],
        "io_bytes": section["io_bytes"] * (1 if modern else 1024),
        "runtime_ms": section["runtime"],
        "clat_mean_us": clat["mean"] / to_us if measured else None,
        "clat_p50_us": level("50.000000"),
        "clat_p95_us": level("95.000000"),
        "clat_p99_us": level("99.000000"),
        "clat_p99_9_us": level("99.900000"),
        "lat_mean_us": lat["mean"] / to_us if lat_measured else None,
    }


def ours(direction: FioDirectionResult) -> dict[str, Any]:
    return {key: getattr(direction, key) for key in expected_direction_keys()}


def expected_direction_keys() -> tuple[str, ...]:
    return (
        "iops",
        "bw_kib_s",
        "io_bytes",
        "runtime_ms",
        "clat_mean_us",
        "clat_p50_us",
        "clat_p95_us",
        "clat_p99_us",
        "clat_p99_9_us",
        "lat_mean_us",
    )


@pytest.mark.parametrize("fixture", SHAPES)
def test_parsed_numbers_are_fios_own_numbers(fixture: str) -> None:
    text = load(fixture)
    document = dict(parse_fio_output(text).raw)

    result = parse_fio_output(text)

    assert len(result.jobs) == len(document["jobs"])
    compared = 0
    for raw, job in zip(document["jobs"], result.jobs, strict=True):
        assert job.name == raw["jobname"]
        assert job.error == raw["error"]
        for direction in ("read", "write", "trim", "mixed"):
            section = raw.get(direction)
            if section is None:
                assert direction != "mixed" or job.mixed is None
                continue
            parsed = job.mixed if direction == "mixed" else getattr(job, direction)
            assert parsed is not None
            assert ours(parsed) == pytest.approx(expected_direction(section)), direction
            compared += 1
        check_sync(raw, job)
    assert compared > 0


def check_sync(raw: dict[str, Any], job: FioJobResult) -> None:
    sync = raw.get("sync") or {}
    lat = sync.get("lat_ns") or {}
    if not lat.get("N"):
        assert job.sync is None
        return
    assert job.sync is not None
    assert job.sync.total_ios == max(sync["total_ios"], lat["N"])
    assert job.sync.lat_mean_us == pytest.approx(lat["mean"] / 1000)
    for name, level in (("lat_p50_us", "50.000000"), ("lat_p99_us", "99.000000")):
        assert getattr(job.sync, name) == pytest.approx(float(lat["percentile"][level]) / 1000)


def test_mixed_is_its_own_direction_and_reaches_the_report() -> None:
    # unified_rw_reporting=1: fio prints only "mixed"; before, this job showed 0 IOPS.
    document = dict(parse_fio_output(load("fio-3.33-unified-rw-mixed.json")).raw)
    raw = document["jobs"][0]
    assert "read" not in raw
    assert "write" not in raw

    job = parse_fio_output(load("fio-3.33-unified-rw-mixed.json")).jobs[0]
    contract = job_contract(job)

    assert job.read.did_io is False
    assert job.write.did_io is False
    assert job.mixed is not None
    assert contract["mixed_iops"] == raw["mixed"]["iops"]
    assert contract["mixed_bw_kib_s"] == raw["mixed"]["bw"]
    assert (
        contract["mixed_clat_p99_us"] == raw["mixed"]["clat_ns"]["percentile"]["99.000000"] / 1000
    )
    assert contract["read_iops"] == 0
    assert contract["write_iops"] == 0


def test_terse_line_in_the_same_run_agrees() -> None:
    # --output-format=json,terse: fio's terse v3 line (read KiB, KiB/s, IOPS, runtime, clat
    # mean and percentiles in µs) comes before the JSON and describes the same run.
    text = load("fio-3.33-terse-and-json.txt")
    terse = text.splitlines()[0].split(";")
    assert terse[:3] == ["3", "fio-3.33", "randread_terse"]

    read = parse_fio_output(text).jobs[0].read

    assert read.io_bytes // 1024 == int(terse[5])
    assert read.bw_kib_s == int(terse[6])
    assert round(read.iops) == int(terse[7])
    assert read.runtime_ms == int(terse[8])
    assert read.clat_mean_us == pytest.approx(float(terse[15]), abs=1e-6)
    levels = dict(field.split("%=") for field in terse[17:21])
    assert int(read.clat_p50_us or 0) == int(levels["50.000000"])
    assert int(read.clat_p99_us or 0) == int(levels["99.000000"])
    assert int(read.clat_p99_9_us or 0) == int(levels["99.900000"])


def test_text_outside_the_json_is_kept_for_the_guards() -> None:
    eagain = parse_fio_output(load("fio-3.33-libaio-eagain-stdout.txt"))
    normal = parse_fio_output(load("fio-3.33-numjobs4-clones-json+normal.txt"))

    assert "func=io_queue_init" in eagain.surrounding_text
    assert "{" not in eagain.surrounding_text
    assert "Run status group 0 (all jobs):" in normal.surrounding_text
    assert normal.surrounding_text.startswith("randread_clones: (g=0): rw=randread")
