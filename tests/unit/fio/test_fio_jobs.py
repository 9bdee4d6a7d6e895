"""fio job files: built-in profiles, the job-file reader, sizes, fit checks and validation."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.job_checks import validate_job_text
from kubectl_storage.core.fio.job_file import FioJobFile, parse_job_file
from kubectl_storage.core.fio.job_sizes import (
    FioJobError,
    check_fits,
    estimate_job_space,
    parse_fio_size,
)
from kubectl_storage.core.fio.profile_render import (
    PREFILL_JOB_NAME,
    READ_RW_VALUES,
    prefill_job,
    render_profile,
)
from kubectl_storage.core.fio.profiles import DEFAULT_TEST_FILENAME, PROFILES, FioJobSpec

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
GiB = 2**30
MiB = 2**20


# --- profiles ------------------------------------------------------------------------------


def test_default_profile_is_kubestr_jobs_run_one_at_a_time_plus_latency_jobs() -> None:
    parsed = parse_job_file(render_profile("default"))

    shape = {
        job.name: (job.options["bs"], job.options["iodepth"], job.options["rw"])
        for job in parsed.jobs
    }
    assert shape == {
        "read_iops": ("4k", "64", "randread"),
        "write_iops": ("4k", "64", "randwrite"),
        "read_bw": ("128k", "64", "randread"),
        "write_bw": ("128k", "64", "randwrite"),
        "read_lat": ("4k", "1", "randread"),
        "write_lat": ("4k", "1", "randwrite"),
    }
    for job in parsed.jobs:
        assert job.options["stonewall"] == "1", job.name  # kubestr runs them concurrently
        assert job.options["ioengine"] == "libaio"
        assert job.options["direct"] == "1"
        assert job.options["size"] == "2G"
        assert job.options["runtime"] == "15"
        assert job.options["ramp_time"] == "2"
        assert job.options["time_based"] == "1"
        assert job.options["percentile_list"] == "50:95:99:99.9"
        assert "gtod_reduce" not in job.options
        assert job.options["directory"] == "/dataset"
        assert job.options["filename"] == DEFAULT_TEST_FILENAME


def test_quick_profile_is_small_and_short() -> None:
    parsed = parse_job_file(render_profile("quick"))

    assert parse_fio_size(parsed.jobs[0].options["size"]) == 256 * MiB
    assert all(int(job.options["runtime"]) <= 5 for job in parsed.jobs)
    assert estimate_job_space(parsed).total_bytes == 256 * MiB


def test_database_profile_is_8k_randrw_70_30_with_synchronized_writes() -> None:
    parsed = parse_job_file(render_profile("database"))
    randrw, commit = (job.options for job in parsed.jobs)

    assert (randrw["rw"], randrw["rwmixread"], randrw["bs"]) == ("randrw", "70", "8k")
    # O_DSYNC writes: fdatasync=1 would also sync after every read under fio < 3.38
    assert randrw["sync"] == "dsync"
    assert "fdatasync" not in randrw
    assert (commit["rw"], commit["fdatasync"]) == ("write", "1")


@pytest.mark.parametrize("profile", sorted(set(PROFILES) - {"kubestr"}))
def test_every_profile_validates_cleanly_and_needs_its_size_once(profile: str) -> None:
    text = render_profile(profile)
    size = parse_fio_size(parse_job_file(text).jobs[0].options["size"])

    assert validate_job_text(text) == ()
    # All jobs share one file, so the volume needs the size once, not once per job.
    assert estimate_job_space(text).total_bytes == size


# Byte for byte from kubestr's source (tests/fixtures/fio/SOURCES.md).
KUBESTR_JOB1 = (FIXTURES / "kubestr-testJob1.fio").read_text()


def test_kubestr_profile_is_kubestrs_default_job_file_option_for_option() -> None:
    # KUBESTR_JOB1 is testJob1 of kastenhq/kubestr pkg/fio/fio_jobs.go (HEAD 2777277), which
    # kubestr runs as `fio --directory /dataset <file>`; ours names the directory in the file.
    ours = parse_job_file(render_profile("kubestr"))
    theirs = parse_job_file(KUBESTR_JOB1)

    assert [job.name for job in ours.jobs] == [job.name for job in theirs.jobs]
    for mine, kubestrs in zip(ours.jobs, theirs.jobs, strict=True):
        assert dict(mine.options) == {**kubestrs.options, "directory": "/dataset"}
        assert "stonewall" not in mine.options  # all four at once, as kubestr runs them
        assert "filename" not in mine.options  # each job lays out its own file
    assert [job.options["name"] for job in ours.jobs] == [
        "read_iops",
        "write_iops",
        "read_bw",
        "write_bw",
    ]
    # Four 2G files, as kubestr needs on its volume.
    assert estimate_job_space(render_profile("kubestr")).total_bytes == 4 * 2 * GiB
    warnings = validate_job_text(render_profile("kubestr"))
    assert [finding.id for finding in warnings] == ["fio-job.no-latency"] * 4


def test_kubestr_profile_overrides_reach_its_per_job_options() -> None:
    parsed = parse_job_file(render_profile("kubestr", runtime_s=3, ramp_time_s=1, size="64M"))

    for job in parsed.jobs:
        assert (job.options["runtime"], job.options["ramp_time"], job.options["size"]) == (
            "3",
            "1",
            "64M",
        )
    assert "runtime" not in parsed.global_options


def test_etcd_profile_is_etcds_documented_fio_command() -> None:
    # fio --rw=write --ioengine=sync --fdatasync=1 --directory=test-data --size=22m --bs=2300
    (job,) = parse_job_file(render_profile("etcd")).jobs

    assert job.name == "etcd_fdatasync"
    assert {key: job.options[key] for key in ("rw", "ioengine", "fdatasync", "size", "bs")} == {
        "rw": "write",
        "ioengine": "sync",
        "fdatasync": "1",
        "size": "22m",
        "bs": "2300",
    }
    assert "direct" not in job.options
    assert "time_based" not in job.options
    assert job.options["percentile_list"] == "50:95:99:99.9"
    assert estimate_job_space(render_profile("etcd")).total_bytes == 22 * MiB


def test_default_profile_no_longer_claims_comparability_with_kubestr() -> None:
    import kubectl_storage.core.fio.profiles as jobs_module

    doc = jobs_module.__doc__ or ""
    default = doc.split("* ``default``", 1)[1].split("* ``kubestr``", 1)[0]
    assert "not* comparable with kubestr" in default
    assert "for comparability" not in doc
    assert "kubestr" not in PROFILES["default"].description


def test_overrides_replace_runtime_ramp_and_size() -> None:
    parsed = parse_job_file(render_profile("default", runtime_s=60, ramp_time_s=0, size="512M"))

    options = parsed.jobs[0].options
    assert (options["runtime"], options["ramp_time"], options["size"]) == ("60", "0", "512M")
    assert estimate_job_space(parsed).total_bytes == 512 * MiB


def test_block_mode_uses_the_device_as_filename_without_directory() -> None:
    text = render_profile("default", directory=None, filename="/dev/xvda")
    parsed = parse_job_file(text)

    assert "directory" not in text
    assert {job.options["filename"] for job in parsed.jobs} == {"/dev/xvda"}
    assert estimate_job_space(parsed).total_bytes == 2 * GiB
    assert validate_job_text(text) == ()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"runtime_s": 0}, "runtime"),
        ({"ramp_time_s": -1}, "ramp"),
        ({"size": "50%"}, "absolute fio size"),
        ({"directory": None}, "directory"),
    ],
)
def test_bad_overrides_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(FioJobError, match=message):
        render_profile("quick", **kwargs)  # type: ignore[arg-type]


def test_unknown_profile_lists_the_known_ones() -> None:
    with pytest.raises(FioJobError, match="default, quick, database"):
        render_profile("fast")


# --- sizes (values checked against fio-3.33 writing files of each size) ---------------------


@pytest.mark.parametrize(
    ("text", "kb_base", "expected"),
    [
        ("8k", 1024, 8192),
        ("8KB", 1024, 8192),
        ("8kib", 1024, 8000),  # fio's IEC spelling is base 10 by default
        ("8KiB", 1024, 8000),
        ("8k", 1000, 8000),
        ("8kib", 1000, 8192),
        ("1m", 1024, 1048576),
        ("1mib", 1024, 1000000),
        ("1m", 1000, 1000000),
        ("8", 1024, 8),
        ("2G", 1024, 2 * GiB),
        ("1t", 1024, 2**40),
        ("1M-10M", 1024, 10 * MiB),
        ("4k:64k", 1024, 64 * 1024),
        ("0x1000", 1024, 4096),
    ],
)
def test_fio_sizes_follow_fio_unit_rules(text: str, kb_base: int, expected: int) -> None:
    assert parse_fio_size(text, kb_base=kb_base) == expected


def test_percentage_size_has_no_byte_count() -> None:
    assert parse_fio_size("50%") is None


@pytest.mark.parametrize("text", ["big", "2X", "", "ki"])
def test_non_sizes_are_refused(text: str) -> None:
    with pytest.raises(FioJobError):
        parse_fio_size(text)


# --- reading job files ----------------------------------------------------------------------


def test_globals_apply_only_to_jobs_after_them_and_comments_are_ignored() -> None:
    text = """
; leading comment
# another
[global]
size=1G ; trailing comment is stripped, as fio does
[first]
rw=read
[global]
size=2G
[second]
rw=write
bs=4k # comment
"""
    parsed = parse_job_file(text)

    assert [(job.name, job.options["size"]) for job in parsed.jobs] == [
        ("first", "1G"),
        ("second", "2G"),
    ]
    assert parsed.jobs[1].options["bs"] == "4k"
    assert parsed.jobs[1].line == 10
    assert parsed.problems == ()


def test_includes_are_resolved_through_the_callback() -> None:
    files = {"common.fio": "[global]\nsize=3G\n"}
    text = "include common.fio\n[job]\nrw=randread\n"

    resolved = parse_job_file(text, resolve_include=files.__getitem__)
    unresolved = parse_job_file(text)

    assert resolved.jobs[0].options["size"] == "3G"
    assert resolved.includes == ()
    assert unresolved.includes == ("common.fio",)
    assert "size" not in unresolved.jobs[0].options


def test_space_counts_numjobs_nrfiles_and_shared_files() -> None:
    text = """
[global]
directory=/dataset
[private]
size=1G
numjobs=3
[many_small_files]
filesize=64M
nrfiles=4
[shared_a]
filename=shared.dat
size=2G
[shared_b]
filename=shared.dat
size=1G
[relative]
filename=/dev/xvdb
size=50%
"""
    estimate = estimate_job_space(text)

    assert estimate.total_bytes == 3 * GiB + 4 * 64 * MiB + 2 * GiB
    assert estimate.relative_jobs == ("relative",)
    assert estimate.unsized_jobs == ()


def test_space_honours_kb_base() -> None:
    text = "[job]\nkb_base=1000\nsize=1g\nrw=write\n"

    assert estimate_job_space(text).total_bytes == 10**9


# --- fit check ------------------------------------------------------------------------------


def test_fits_with_room_for_filesystem_overhead() -> None:
    assert check_fits(2 * GiB, 10 * GiB) is None
    assert check_fits(9 * GiB, 10 * GiB) is None  # exactly 90%


def test_does_not_fit_says_by_how_much_and_what_would() -> None:
    message = check_fits(12 * GiB, 10 * GiB)

    assert message is not None
    assert "needs 12Gi" in message
    assert "10Gi volume leaves about 9Gi after 10% filesystem overhead" in message
    assert "3Gi short" in message
    assert "at least 14Gi" in message  # 12 / 0.9 = 13.3 -> 14


def test_just_over_the_margin_does_not_fit() -> None:
    assert check_fits(9 * GiB + 1, 10 * GiB) is not None


def test_block_volumes_have_no_filesystem_overhead() -> None:
    assert check_fits(10 * GiB, 10 * GiB, overhead_fraction=0) is None
    message = check_fits(11 * GiB, 10 * GiB, overhead_fraction=0)
    assert message is not None
    assert "holds 10Gi" in message
    assert "1Gi short" in message


def test_default_profile_against_small_volume() -> None:
    needed = estimate_job_space(render_profile("default")).total_bytes

    assert check_fits(needed, 2 * GiB) is not None
    assert check_fits(needed, 3 * GiB) is None


# --- validation without fio -----------------------------------------------------------------


def finding_ids(text: str) -> list[str]:
    return [finding.id for finding in validate_job_text(text)]


def test_no_jobs() -> None:
    assert finding_ids("[global]\nsize=1G\n") == ["fio-job.no-jobs"]


def test_option_outside_a_section() -> None:
    findings = validate_job_text("size=1m\n[t]\nrw=write\n")

    assert [f.id for f in findings] == ["fio-job.syntax", "fio-job.missing-size"]
    assert "line 1" in findings[0].message
    assert findings[0].severity.value == "error"


def test_missing_size_for_directory_io_but_not_for_a_device() -> None:
    assert finding_ids("[t]\nrw=write\ndirectory=/dataset\n") == ["fio-job.missing-size"]
    assert finding_ids("[t]\nrw=read\nfilename=/dev/xvda\n") == []


def test_unknown_rw_and_bad_size() -> None:
    assert finding_ids("[t]\nrw=wrte\nsize=1m\n") == ["fio-job.rw"]
    assert finding_ids("[t]\nrw=randread:8\nsize=lots\n") == ["fio-job.size"]


def test_malformed_and_empty_section_headers() -> None:
    ids = finding_ids("[broken\nsize=1G\n[]\nrw=read\nsize=1G\n")

    assert ids.count("fio-job.syntax") == 3  # malformed header, its orphan option, empty name


def test_warnings_for_gtod_reduce_and_unread_includes() -> None:
    findings = validate_job_text("include extra.fio\n[t]\nsize=1G\ngtod_reduce=1\n")

    assert [(f.id, f.severity.value) for f in findings] == [
        ("fio-job.include", "warn"),
        ("fio-job.no-latency", "warn"),
    ]


@pytest.mark.parametrize(
    "job_file",
    [
        "fio-3.33-quick-profile-ext4.fio",
        "fio-3.33-dev-full-error.fio",
        "fio-3.33-sigint.fio",
        "fio-3.33-status-interval.fio",
    ],
)
def test_job_files_fio_ran_for_the_fixtures_validate(job_file: str) -> None:
    assert validate_job_text((FIXTURES / job_file).read_text(encoding="utf-8")) == ()


# --- real fio -------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("mode", ["filesystem", "block", "block-prefill"])
def test_fio_parse_only_accepts_every_profile(
    profile: str, mode: str, tmp_path: Path, fio: str
) -> None:
    if mode != "filesystem":
        prefill = mode == "block-prefill"
        text = render_profile(profile, directory=None, filename="/dev/xvda", prefill=prefill)
    else:
        text = render_profile(profile, directory=str(tmp_path))
    job_file = tmp_path / f"{profile}.fio"
    job_file.write_text(text, encoding="utf-8")

    completed = subprocess.run(
        [fio, "--parse-only", str(job_file)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr


def test_fio_parse_only_rejects_what_validation_rejects(tmp_path: Path, fio: str) -> None:
    # Both fio and our reader refuse an option outside a section.
    job_file = tmp_path / "bad.fio"
    job_file.write_text("size=1m\n[t]\nrw=write\n", encoding="utf-8")

    completed = subprocess.run(
        [fio, "--parse-only", str(job_file)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )

    assert completed.returncode != 0
    assert "outside of [] job section" in completed.stderr


@pytest.mark.slow
def test_quick_profile_runs_under_real_fio_and_parses(tmp_path: Path, fio: str) -> None:
    text = render_profile("quick", runtime_s=1, ramp_time_s=0, size="16M", directory=str(tmp_path))
    job_file = tmp_path / "quick.fio"
    job_file.write_text(text, encoding="utf-8")

    completed = subprocess.run(
        [fio, "--output-format=json", str(job_file)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    result = parse_fio_output(completed.stdout)

    assert completed.returncode == 0, completed.stderr
    assert [job.name for job in result.jobs] == ["read_iops", "write_iops"]
    assert result.job("read_iops").read.iops > 0
    assert result.job("read_iops").read.clat_p99_9_us is not None
    assert result.job("write_iops").write.clat_p50_us is not None
    assert (tmp_path / DEFAULT_TEST_FILENAME).stat().st_size == 16 * MiB


# --- Block volumes: the prefill before the read jobs (issue 15) -------------------------------


def _block(profile: str, **kwargs: object) -> FioJobFile:
    text = render_profile(profile, directory=None, filename="/dev/xvda", **kwargs)  # type: ignore[arg-type]
    return parse_job_file(text)


@pytest.mark.parametrize("profile", ["default", "quick", "database", "kubestr"])
def test_block_prefill_writes_the_read_range_first(profile: str) -> None:
    parsed = _block(profile, prefill=True)
    plain = _block(profile)
    prefill, *jobs = parsed.jobs

    assert prefill.name == PREFILL_JOB_NAME
    assert [job.name for job in jobs] == [job.name for job in plain.jobs]
    options = prefill.options
    assert (options["rw"], options["bs"], options["offset"]) == ("write", "1M", "0")
    # every byte is written once and counted: not time based, no runtime limit, no ramp
    assert (options["time_based"], options["runtime"], options["ramp_time"]) == ("0", "0", "0")
    assert options["filename"] == "/dev/xvda"
    assert options["ioengine"] == "libaio"
    assert options["direct"] == "1"
    reads = [j for j in jobs if j.options.get("rw", j.options.get("readwrite")) in READ_RW_VALUES]
    assert reads, "the profile reads"
    # exactly the range the read jobs read: [0, size) of the device, none of them has an offset
    assert {parse_fio_size(j.options["size"]) for j in reads} == {parse_fio_size(options["size"])}
    assert not any("offset" in j.options for j in reads)
    # the job after the prefill waits for it (and the rest as before)
    assert jobs[0].options.get("stonewall") == "1"
    # the same device range: no more space needed than without the prefill
    assert estimate_job_space(parsed).total_bytes == estimate_job_space(plain).total_bytes


def test_block_prefill_follows_a_size_override() -> None:
    (prefill, *_jobs) = _block("default", prefill=True, size="512M").jobs
    assert prefill.options["size"] == "512M"


def test_kubestr_jobs_still_start_together_after_the_prefill() -> None:
    text = render_profile("kubestr", directory=None, filename="/dev/xvda", prefill=True)
    sections = text.split("\n[")[1:]
    stonewalls = [s.split("]")[0] for s in sections if "\nstonewall" in s]
    assert stonewalls == ["job1"]  # one serialisation point: after the prefill, not between


def test_no_prefill_for_a_profile_that_only_writes() -> None:
    assert [job.name for job in _block("etcd", prefill=True).jobs] == ["etcd_fdatasync"]


def test_no_prefill_unless_asked_and_never_on_a_directory() -> None:
    assert PREFILL_JOB_NAME not in render_profile("quick", directory=None, filename="/dev/xvda")
    with pytest.raises(FioJobError, match="device"):
        render_profile("quick", prefill=True)


def test_block_prefill_passes_the_job_checks() -> None:
    text = render_profile("quick", directory=None, filename="/dev/xvda", prefill=True)
    assert validate_job_text(text) == ()
    assert prefill_job("quick") == parse_prefill_spec(text)


def parse_prefill_spec(text: str) -> FioJobSpec:
    """The prefill section of a rendered job file, as a spec (file order kept)."""
    section = text.split(f"[{PREFILL_JOB_NAME}]\n", 1)[1].split("\n\n", 1)[0]
    options = tuple(tuple(line.split("=", 1)) for line in section.splitlines())
    return FioJobSpec(PREFILL_JOB_NAME, options)  # type: ignore[arg-type]
