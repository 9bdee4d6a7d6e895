"""fio JSON parser against real outputs of fio 2.17, 3.1, 3.16, 3.20 and 3.33 (see SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.fio.fio_json import (
    parse_fio_document,
    parse_fio_output,
)
from kubectl_storage.core.fio.results import FioOutputError, job_contract

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# (fixture, job, direction, iops, bw KiB/s, io_bytes, runtime ms,
#  clat mean/p50/p95/p99/p99.9 in µs, lat mean in µs), values read off each file by hand.
DIRECTION_FACTS = [
    pytest.param(
        "fio-2.17-perfkit-randread-randwrite.json",
        "rand_16k_read_100%-io-depth-1-num-jobs-2",
        "read",
        8086.673998,
        129386,
        1294256 * 1024,  # fio 2.x io_bytes is KiB
        10003,
        (238.357679, 96, 1288, 1352, 1896),
        245.531122,
        id="fio-2.17-clat-in-us-read",
    ),
    pytest.param(
        "fio-2.17-perfkit-randread-randwrite.json",
        "rand_16k_write_100%-io-depth-1-num-jobs-2",
        "write",
        2457.017193,
        39312,
        393280 * 1024,
        10004,
        (800.193694, 548, 2192, 2384, 5728),
        810.977136,
        id="fio-2.17-clat-in-us-write",
    ),
    pytest.param(
        "fio-3.1-fio-plot-randread-sdb.json",
        "random-read",
        "read",
        6614.073099,
        26456,
        1625501696,
        60001,
        (135.557025488, 134.144, 142.336, 142.336, 464.896),
        147.792395919,
        id="fio-3.1-clat-ns",
    ),
    pytest.param(
        "fio-3.20-kubestr-gtod-reduce.json",
        "write_iops",
        "write",
        390.525218,
        1578,
        24805376,
        15346,
        (None, None, None, None, None),
        None,
        id="fio-3.20-gtod-reduce-no-latency",
    ),
    pytest.param(
        "fio-3.16-superbench-lat-percentiles.json",
        "rand_read_write",
        "write",
        85066.128925,
        340283,
        10454208512,
        30002,
        # lat_percentiles=1 moves the percentiles from clat_ns to lat_ns.
        (1558.511433458, None, None, None, None),
        1560.749444938,
        id="fio-3.16-lat-percentiles-only",
    ),
    pytest.param(
        "fio-3.33-quick-profile-ext4.json",
        "read_iops",
        "read",
        23363.127375,
        93465,
        478638080,
        5001,
        (671.166733257, 181.248, 2113.536, 10420.224, 45875.2),
        683.678334991,
        id="fio-3.33-own-capture-read",
    ),
    pytest.param(
        "fio-3.33-quick-profile-ext4.json",
        "write_iops",
        "write",
        11942.834299,
        47783,
        244797440,
        5003,
        (1323.264575287, 374.784, 4014.08, 17956.864, 119013.376),
        1337.852906869,
        id="fio-3.33-own-capture-write",
    ),
]


@pytest.mark.parametrize(
    ("fixture", "job_name", "direction", "iops", "bw", "io_bytes", "runtime", "clat", "lat_mean"),
    DIRECTION_FACTS,
)
def test_direction_values_in_explicit_units(
    fixture: str,
    job_name: str,
    direction: str,
    iops: float,
    bw: float,
    io_bytes: int,
    runtime: int,
    clat: tuple[float | None, ...],
    lat_mean: float | None,
) -> None:
    measured = getattr(parse_fio_output(load(fixture)).job(job_name), direction)

    assert measured.iops == pytest.approx(iops)
    assert measured.bw_kib_s == bw
    assert measured.io_bytes == io_bytes
    assert measured.runtime_ms == runtime
    got = (
        measured.clat_mean_us,
        measured.clat_p50_us,
        measured.clat_p95_us,
        measured.clat_p99_us,
        measured.clat_p99_9_us,
    )
    assert got == pytest.approx(clat)
    assert measured.lat_mean_us == pytest.approx(lat_mean)


@pytest.mark.parametrize(
    ("fixture", "version", "job_names"),
    [
        (
            "fio-2.17-perfkit-randread-randwrite.json",
            "fio-2.17",
            [
                "rand_16k_read_100%-io-depth-1-num-jobs-2",
                "rand_16k_write_100%-io-depth-1-num-jobs-2",
            ],
        ),
        ("fio-3.1-fio-plot-randread-sdb.json", "fio-3.1", ["random-read"]),
        ("fio-3.16-superbench-lat-percentiles.json", "fio-3.16", ["rand_read_write"]),
        ("fio-3.20-kubestr-gtod-reduce.json", "fio-3.20", ["read_iops", "write_iops"]),
        ("fio-3.33-quick-profile-ext4.json", "fio-3.33", ["read_iops", "write_iops"]),
    ],
)
def test_version_and_job_order(fixture: str, version: str, job_names: list[str]) -> None:
    result = parse_fio_output(load(fixture))

    assert result.fio_version == version
    assert [job.name for job in result.jobs] == job_names
    assert result.failed_jobs == ()


@pytest.mark.parametrize(
    "fixture",
    [
        "fio-2.17-perfkit-randread-randwrite.json",
        "fio-3.1-fio-plot-randread-sdb.json",
        "fio-3.16-superbench-lat-percentiles.json",
        "fio-3.20-kubestr-gtod-reduce.json",
        "fio-3.33-quick-profile-ext4.json",
    ],
)
def test_io_bytes_agree_with_bandwidth_times_runtime_in_every_version(fixture: str) -> None:
    # Catches unit mistakes (fio 2.x io_bytes is KiB; 3.x is bytes) across all versions.
    for job in parse_fio_output(load(fixture)).jobs:
        for direction in (job.read, job.write):
            if not direction.did_io:
                continue
            expected = direction.bw_kib_s * 1024 * direction.runtime_ms / 1000
            assert direction.io_bytes == pytest.approx(expected, rel=0.01)


def test_direction_without_io_has_no_latency_rather_than_zero() -> None:
    job = parse_fio_output(load("fio-3.1-fio-plot-randread-sdb.json")).job("random-read")

    assert job.write.did_io is False
    assert job.write.iops == 0
    assert job.write.clat_mean_us is None
    assert job.write.clat_p99_us is None
    assert job.write.lat_mean_us is None


def test_disk_util_is_read_when_present() -> None:
    sdb = parse_fio_output(load("fio-3.1-fio-plot-randread-sdb.json")).disk_util
    rbd = parse_fio_output(load("fio-3.20-kubestr-gtod-reduce.json")).disk_util
    none = parse_fio_output(load("fio-2.17-perfkit-randread-randwrite.json")).disk_util

    assert [(d.name, d.read_ios, d.write_ios, d.util_percent) for d in sdb] == [
        ("sdb", 396018, 0, 86.082113)
    ]
    assert [(d.name, d.read_ios, d.write_ios) for d in rbd] == [("rbd4", 16957, 6896)]
    assert none == ()


def test_global_and_job_options_are_kept_as_strings() -> None:
    result = parse_fio_output(load("fio-3.20-kubestr-gtod-reduce.json"))

    assert result.global_options["gtod_reduce"] == "1"
    assert result.job("read_iops").job_options["bs"] == "4K"


def test_job_error_and_stderr_before_json_from_real_capture() -> None:
    text = load("fio-3.33-dev-full-error-stderr-merged.txt")
    assert text.startswith("fio: io_u error on file /dev/full")

    result = parse_fio_output(text)

    failing = result.job("write_to_dev_full")
    assert failing.error == 28  # ENOSPC from writing to /dev/full
    assert failing.failed
    assert result.failed_jobs == (failing,)
    healthy = result.job("read_ok")
    assert healthy.error == 0
    assert healthy.read.io_bytes == 1024 * 1024


def test_signal_text_before_json_from_real_capture() -> None:
    text = load("fio-3.33-sigint-stderr-merged.txt")
    assert "fio: terminating on signal 2" in text.split("{", 1)[0]

    job = parse_fio_output(text).job("randread_interrupted")

    assert job.read.runtime_ms == 2950
    assert job.read.clat_p99_us is not None


def test_status_interval_output_gives_the_final_report() -> None:
    text = load("fio-3.33-status-interval.txt")

    result = parse_fio_output(text)

    # Four reports, at 854, 1857, 2857 and 3002 ms: the last is the run's; the interim ones are
    # reports too, not text around it (which a run's notes would show).
    assert text.count('"jobs"') == 4
    assert result.job("randwrite_status").write.runtime_ms == 3002
    assert '"jobs"' not in result.surrounding_text
    assert '"runtime" : 854' not in result.surrounding_text


def test_text_after_json_and_braces_in_surrounding_text() -> None:
    # Invented surroundings around a real document: kubectl exec's trailer and a warning with
    # braces that is not JSON.
    real = load("fio-3.1-fio-plot-randread-sdb.json")
    text = f"warning: {{odd}} value ignored\n{real}\ncommand terminated with exit code 1\n"

    assert parse_fio_output(text).job("random-read").read.iops == pytest.approx(6614.073099)


def test_document_nested_in_a_wrapper_is_found() -> None:
    # kubestr -o json nests fio's document under Raw.result.
    document = json.loads(load("fio-3.20-kubestr-gtod-reduce.json"))
    wrapper = json.dumps([{"TestName": "FIO test results", "Raw": {"result": document}}])

    assert parse_fio_output(wrapper).fio_version == "fio-3.20"


@pytest.mark.parametrize(
    "text",
    ["", "fio: failed parsing rw=wrte\n", '{"not": "fio"}', "{broken json"],
    ids=["empty", "error-text-only", "other-json", "broken-json"],
)
def test_output_without_a_fio_document_is_refused(text: str) -> None:
    with pytest.raises(FioOutputError, match="no fio JSON report"):
        parse_fio_output(text)


def test_document_with_a_non_object_job_is_refused() -> None:
    with pytest.raises(FioOutputError, match="job #0"):
        parse_fio_document({"fio version": "fio-3.33", "jobs": ["oops"]})


def test_job_contract_keys_units_and_raw() -> None:
    result = parse_fio_output(load("fio-3.33-quick-profile-ext4.json"))

    contract = job_contract(result.job("read_iops"))

    metrics = [
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
    ]
    sync = ["total_ios", "lat_mean_us", "lat_p50_us", "lat_p95_us", "lat_p99_us", "lat_p99_9_us"]
    expected_keys = ["name", "error", "clones"]
    expected_keys += [f"read_{metric}" for metric in metrics]
    expected_keys += [f"write_{metric}" for metric in metrics]
    expected_keys += [f"mixed_{metric}" for metric in metrics]
    expected_keys += [f"sync_{metric}" for metric in sync]
    expected_keys += ["percentile_merge", "raw", "steady_state"]
    assert list(contract) == expected_keys
    assert contract["clones"] == 1
    assert contract["percentile_merge"] is None
    # No unified_rw_reporting and no fsync in this job: fio reported neither block.
    assert all(contract[f"mixed_{metric}"] is None for metric in metrics)
    assert all(contract[f"sync_{metric}"] is None for metric in sync)
    assert contract["read_iops"] == pytest.approx(23363.127375)
    assert contract["read_bw_kib_s"] == 93465
    assert contract["read_clat_p99_us"] == pytest.approx(10420.224)
    assert contract["read_clat_p99_9_us"] == pytest.approx(45875.2)
    assert contract["write_clat_p99_us"] is None
    assert contract["raw"]["jobname"] == "read_iops"
    assert contract["raw"]["read"]["clat_ns"]["percentile"]["99.000000"] == 10420224
    json.dumps(contract)  # must serialise as is
