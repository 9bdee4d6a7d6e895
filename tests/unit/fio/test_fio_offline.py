"""--from-json's reading of fio output: a plain run, and a client/server run (``client_stats``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.offline import report_from_fio_output
from kubectl_storage.core.fio.results import FioOutputError
from kubectl_storage.core.fio.stats import build_fio_report

FIO = Path(__file__).resolve().parents[2] / "fixtures" / "fio"


def _document(name: str) -> dict:
    text = (FIO / name).read_text()
    return json.loads(text[text.index("{") : text.rindex("}") + 1])


def test_three_clients_are_added_up_job_by_job() -> None:
    # Real fio-3.33 json+ output of three `fio --server` on this machine driven by one client.
    name = "fio-3.33-client-server-3-clients-json+.txt"
    report = report_from_fio_output((FIO / name).read_text(), name="cs", source=name)
    result = report.results[0]
    stats = [e for e in _document(name)["client_stats"] if e["jobname"] != "All clients"]
    for job in result.jobs:
        side = "read" if job.name == "read_iops" else "write"
        own = [e[side]["iops"] for e in stats if e["jobname"] == job.name]
        assert len(own) == 3
        # fio's own rule for a sum: 1000 * total_ios / the longest runtime
        ios = sum(e[side]["total_ios"] for e in stats if e["jobname"] == job.name)
        runtime = max(e[side]["runtime"] for e in stats if e["jobname"] == job.name)
        assert job.value(f"{side}_iops") == pytest.approx(1000 * ios / runtime)
        assert job.value(f"{side}_iops") == pytest.approx(sum(own), rel=0.01)
    assert [c.address for c in result.clients] == ["127.0.0.3", "127.0.0.2", "127.0.0.1"]
    assert report.context["clients"] == 3
    notes = [n.message for n in result.notes if n.id == "fio.dataset-small"]
    assert notes
    assert notes[0].startswith("client 0 at 127.0.0.3 (also client 1 at 127.0.0.2")


def test_plain_fio_output_reads_as_before() -> None:
    # A plain run's report is the one build_fio_report made from it before: same dict.
    name = "fio-3.33-quick-profile-ext4.json"
    text = (FIO / name).read_text()
    offline = report_from_fio_output(text, name="quick", source=name)
    direct = build_fio_report(
        {"quick": [parse_fio_output(text)]}, profile="from-file", context={"source": name}
    )
    assert offline.to_dict() == direct.to_dict()
    assert "clients" not in offline.to_dict()


def test_neither_shape_is_refused() -> None:
    with pytest.raises(FioOutputError):
        report_from_fio_output("fio: no jobs\n", name="x", source="x")
