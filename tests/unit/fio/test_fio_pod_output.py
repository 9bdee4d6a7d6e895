"""The benchmark pod's fio prints ``json+``: exact percentiles for ``numjobs`` clones, and
otherwise the report of plain ``json`` (operations/fio/pod_commands.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.notes import NOTE_UPPER_BOUND
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.results import PERCENTILES_EXACT, PERCENTILES_UPPER_BOUND
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.operations.fio.pod_commands import (
    CONFIG_PATH,
    JOB_FILE_NAME,
    OUTPUT_FORMAT,
    fio_command,
    local_fio_command,
)
from kubectl_storage.operations.fio.request import FioRequest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"

#: Two clones, each throttled to 200 reads/s, so one second gives each a few hundred samples.
_CLONES_JOB = """[global]
ioengine=psync
size=1M
bs=4k
time_based
runtime=1
rate_iops=200
percentile_list=50:95:99:99.9
filename=clones.dat

[clones]
rw=randread
numjobs=2
"""


def test_the_pods_fio_prints_json_plus() -> None:
    assert OUTPUT_FORMAT == "--output-format=json+"
    assert fio_command(FioRequest())[:2] == ["fio", "--output-format=json+"]
    assert local_fio_command()[:2] == ["fio", "--output-format=json+"]


def _run_pod_command(tmp_path: Path, output_format: str, fio: str) -> FioReport:
    """The pod's fio command line run by this machine's fio, on a job with numjobs=2."""
    (tmp_path / "job.fio").write_text(_CLONES_JOB)
    words = [output_format if word == OUTPUT_FORMAT else word for word in fio_command(FioRequest())]
    words = [
        f"--directory={tmp_path}" if word.startswith("--directory=") else word for word in words
    ]
    words = [
        str(tmp_path / "job.fio") if w == f"{CONFIG_PATH}/{JOB_FILE_NAME}" else w for w in words
    ]
    completed = subprocess.run(
        [fio, *words[1:]], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    return build_fio_report({"c": [parse_fio_output(completed.stdout)]}, profile="custom")


@pytest.mark.slow
def test_numjobs_percentiles_are_exact_with_the_pods_command(tmp_path: Path, fio: str) -> None:
    exact = _run_pod_command(tmp_path, OUTPUT_FORMAT, fio)
    job = exact.results[0].jobs[0]
    assert (job.name, job.clones, job.percentile_merge) == ("clones", 2, PERCENTILES_EXACT)
    assert NOTE_UPPER_BOUND not in {note.id for note in exact.results[0].notes}
    # What the pod printed before (plain json): the same job can only be bounded.
    bounded = _run_pod_command(tmp_path, "--output-format=json", fio)
    job = bounded.results[0].jobs[0]
    assert (job.clones, job.percentile_merge) == (2, PERCENTILES_UPPER_BOUND)
    assert NOTE_UPPER_BOUND in {note.id for note in bounded.results[0].notes}


def _shape(value: Any) -> Any:
    """The keys of a report, recursively; fio's ``raw`` dicts without their ``bins``."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items() if key != "bins"}
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return type(value).__name__ if value is not None else None


def test_json_plus_report_has_the_shape_of_a_json_report() -> None:
    # Real fio-3.33 runs of the quick profile on ext4, one printed as json, one as json+.
    reports = [
        build_fio_report(
            {"c": [parse_fio_output((FIXTURES / name).read_text())]}, profile="quick"
        ).to_dict()
        for name in (
            "fio-3.33-quick-profile-ext4.json",
            "fio-3.33-quick-profile-ext4-direct-json+.json",
        )
    ]
    plain, plus = (_shape(report) for report in reports)
    assert plain == plus
    raw_plus = reports[1]["results"][0]["jobs"][0]["raw"][0]
    raw_plain = reports[0]["results"][0]["jobs"][0]["raw"][0]
    assert "bins" in raw_plus["read"]["clat_ns"]
    assert "bins" not in raw_plain["read"]["clat_ns"]
