"""numjobs clones add up like fio's group_reporting, checked against fio's own numbers.

Fixtures (tests/fixtures/fio/SOURCES.md): the same 4-clone randread job run once without
group_reporting as ``--output-format=json+,normal`` (per-clone histograms, plus fio's own
"Run status group" total of that run in the normal text) and once with group_reporting as
``json+`` (fio's merged histogram and percentiles).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.clones import (
    combine_clones,
    merge_bins,
    merge_clone_dicts,
    percentiles_from_bins,
)
from kubectl_storage.core.fio.fio_json import (
    parse_fio_document,
    parse_fio_output,
)
from kubectl_storage.core.fio.results import PERCENTILES_EXACT, PERCENTILES_UPPER_BOUND
from kubectl_storage.core.fio.stats import build_fio_report

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
CLONES = "fio-3.33-numjobs4-clones-json+normal.txt"
GROUP = "fio-3.33-numjobs4-group-reporting-json+.json"
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def document(name: str) -> dict[str, Any]:
    return dict(parse_fio_output(load(name)).raw)


def fio_levels(block: dict[str, Any]) -> list[float]:
    return [float(key) for key in block["percentile"]]


def fio_values(block: dict[str, Any]) -> dict[float, int]:
    return {float(key): value for key, value in block["percentile"].items()}


def group_line(text: str) -> dict[str, int]:
    """fio's own READ total of the run, from the normal output's "Run status group" block."""
    match = re.search(
        r"READ: bw=(?P<bw>[\d.]+)(?P<bw_unit>\w+)/s .*?io=(?P<io>[\d.]+)(?P<io_unit>\w+) .*?"
        r"run=(?P<min>\d+)-(?P<max>\d+)msec",
        text,
    )
    assert match, "no Run status group line in the fixture"
    return {
        "bw_bytes": round(float(match["bw"]) * _UNITS[match["bw_unit"]]),
        "io_bytes": round(float(match["io"]) * _UNITS[match["io_unit"]]),
        "max_run_ms": int(match["max"]),
    }


# --- fio's percentile algorithm -------------------------------------------------------------


@pytest.mark.parametrize("fixture", [CLONES, GROUP])
def test_percentiles_from_bins_reproduce_fio_to_the_nanosecond(fixture: str) -> None:
    # Every job's own histogram gives exactly the percentiles fio printed for it, including
    # the group_reporting job, whose histogram fio itself summed over the 4 clones.
    jobs = document(fixture)["jobs"]
    for job in jobs:
        clat = job["read"]["clat_ns"]
        bins = merge_bins([clat["bins"]])
        assert sum(bins.values()) == clat["N"]

        assert percentiles_from_bins(bins, fio_levels(clat), samples=clat["N"]) == fio_values(clat)


# --- clones of one run ----------------------------------------------------------------------


def test_clones_are_one_job_whose_iops_and_bandwidth_add_up() -> None:
    text = load(CLONES)
    raw_jobs = document(CLONES)["jobs"]
    assert [job["jobname"] for job in raw_jobs] == ["randread_clones"] * 4

    (job,) = combine_clones(parse_fio_output(text))

    assert job.clones == 4
    assert len(job.clone_raws) == 4
    reads = [clone["read"] for clone in raw_jobs]
    io_bytes = sum(read["io_bytes"] for read in reads)
    runtime = max(read["runtime"] for read in reads)
    # fio's own total for this very run (normal output): io and the longest runtime agree
    # exactly, bandwidth to the precision fio prints it.
    total = group_line(text)
    assert job.read.io_bytes == io_bytes == total["io_bytes"]
    assert job.read.runtime_ms == runtime == total["max_run_ms"]
    assert job.read.bw_kib_s * 1024 == pytest.approx(total["bw_bytes"], rel=0.001)
    assert job.read.total_ios == sum(read["total_ios"] for read in reads)
    assert job.read.iops == pytest.approx(1000 * job.read.total_ios / runtime)
    assert job.read.iops == pytest.approx(sum(read["iops"] for read in reads))
    assert job.write.did_io is False


def test_clone_latencies_merge_exactly_from_the_json_plus_histograms() -> None:
    raw_jobs = document(CLONES)["jobs"]
    clats = [clone["read"]["clat_ns"] for clone in raw_jobs]

    (job,) = combine_clones(parse_fio_output(load(CLONES)))

    assert job.percentile_merge == PERCENTILES_EXACT
    summed = merge_bins(clat["bins"] for clat in clats)
    samples = sum(clat["N"] for clat in clats)
    expected = percentiles_from_bins(summed, fio_levels(clats[0]), samples=samples)
    assert job.read.clat_p50_us == expected[50.0] / 1000
    assert job.read.clat_p99_us == expected[99.0] / 1000
    assert job.read.clat_p99_9_us == expected[99.9] / 1000
    for level, value in expected.items():
        own = [fio_values(clat)[level] for clat in clats]
        assert min(own) <= value <= max(own)
    weighted = sum(clat["mean"] * clat["N"] for clat in clats) / samples
    assert job.read.clat_mean_us == pytest.approx(weighted / 1000)


def test_merged_clones_match_the_group_reporting_run() -> None:
    # Two runs of the same job file, so only close, not equal (rate_iops=250 per clone keeps
    # them close): our sum of the clones against fio's own group_reporting total.
    (ours,) = combine_clones(parse_fio_output(load(CLONES)))
    (fios,) = parse_fio_output(load(GROUP)).jobs

    assert fios.clones == 1  # fio merged them itself: nothing left to add up
    assert ours.read.iops == pytest.approx(fios.read.iops, rel=0.02)
    assert ours.read.bw_kib_s == pytest.approx(fios.read.bw_kib_s, rel=0.02)
    assert ours.read.total_ios == fios.read.total_ios


def test_without_histograms_percentiles_are_the_largest_clone_an_upper_bound() -> None:
    # Real-derived: the same clones with fio's json+ "bins" removed, i.e. plain json output.
    plain = copy.deepcopy(document(CLONES))
    for clone in plain["jobs"]:
        for block in ("slat_ns", "clat_ns", "lat_ns"):
            clone["read"][block].pop("bins", None)
    clats = [clone["read"]["clat_ns"] for clone in plain["jobs"]]

    (bounded,) = combine_clones(parse_fio_document(plain))
    (exact,) = combine_clones(parse_fio_output(load(CLONES)))

    assert bounded.percentile_merge == PERCENTILES_UPPER_BOUND
    assert bounded.read.clat_p99_us == max(fio_values(c)[99.0] for c in clats) / 1000
    for level in ("clat_p50_us", "clat_p95_us", "clat_p99_us", "clat_p99_9_us"):
        assert getattr(bounded.read, level) >= getattr(exact.read, level)
    assert bounded.read.iops == exact.read.iops


def test_jobs_without_numjobs_are_never_merged() -> None:
    for fixture in (
        "fio-3.20-kubestr-gtod-reduce.json",  # 2 different jobs in one group
        "fio-2.17-perfkit-randread-randwrite.json",  # numjobs=2 with group_reporting
        "fio-3.33-quick-profile-ext4.json",
    ):
        result = parse_fio_output(load(fixture))
        assert combine_clones(result) == result.jobs, fixture


def test_merge_needs_at_least_one_clone() -> None:
    with pytest.raises(ValueError, match="no clones"):
        merge_clone_dicts([])


# --- in the report --------------------------------------------------------------------------


def test_report_counts_clones_once_per_run_and_repeats_across_runs() -> None:
    run = parse_fio_output(load(CLONES))

    report = build_fio_report({"local": [run, run]}, profile="custom").to_dict()

    (job,) = report["results"][0]["jobs"]
    assert job["repeats"] == 2
    assert job["clones"] == 4
    assert job["percentile_merge"] == PERCENTILES_EXACT
    (merged,) = combine_clones(run)
    assert job["read_iops"] == pytest.approx(merged.read.iops)
    assert job["read_iops_stddev"] == 0
    assert len(job["raw"]) == 2  # one entry per run ...
    assert len(job["raw"][0]) == 4  # ... each the list of fio's dicts of the 4 clones
    assert json.loads(json.dumps(report)) == report


def test_same_name_in_two_stonewall_groups_is_not_a_repeat() -> None:
    # Real-derived: the quick profile's second job renamed to the first one's name.
    doc = copy.deepcopy(document("fio-3.33-quick-profile-ext4.json"))
    doc["jobs"][1]["jobname"] = doc["jobs"][0]["jobname"]
    run = parse_fio_document(doc)

    report = build_fio_report({"local": [run]}, profile="custom").to_dict()

    jobs = report["results"][0]["jobs"]
    assert [(job["name"], job["repeats"]) for job in jobs] == [("read_iops", 1), ("read_iops", 1)]
    assert jobs[0]["read_iops"] == pytest.approx(run.jobs[0].read.iops)
    assert jobs[1]["write_iops"] == pytest.approx(run.jobs[1].write.iops)


def test_threshold_rounding_is_x86_long_double() -> None:
    # fio compares the running count with (long double) p / 100.0 * N; on x86-64 that is the
    # 80-bit format, which numpy's longdouble is there too.
    np = pytest.importorskip("numpy")
    if np.finfo(np.longdouble).nmant != 63:
        pytest.skip("long double here is not x86's 80-bit format")
    from fractions import Fraction

    from kubectl_storage.core.fio.clones import _x87

    def exact(value: object) -> Fraction:
        mantissa, exponent = np.frexp(value)
        return Fraction(int(np.ldexp(mantissa, 64))) * Fraction(2) ** (int(exponent) - 64)

    for level in (1.0, 5.0, 50.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99):
        for samples in [*range(1, 2001), 10029, 126124, 2**40 + 3]:
            fio = np.longdouble(level) / np.longdouble(100.0) * np.longdouble(samples)
            assert _x87(_x87(Fraction(level) / 100) * samples) == exact(fio), (level, samples)
