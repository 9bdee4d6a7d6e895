"""fio client/server runs: each client's jobs kept, the same job added up over the clients.

On real fio 3.33 output of three `fio --server` processes (tests/fixtures/fio/SOURCES.md).
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.fio.clients import (
    ALL_CLIENTS,
    ClientRuns,
    FioClient,
    Spread,
    client_arguments,
    client_job_text,
    client_notes,
    job_iops,
    own_file_problem,
    packing_note,
    parse_client_output,
    skew_percent,
)
from kubectl_storage.core.fio.notes import NOTE_CLIENTS_PACKED, SUSPECT_NOTES
from kubectl_storage.core.fio.profile_render import render_profile
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.results import FioOutputError
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.render.fio import write_fio_table
from kubectl_storage.render.fio_charts import (
    BANDWIDTH_TITLE,
    CLIENTS_TITLE,
    IOPS_TITLE,
    LATENCY_TITLE,
    build_fio_figure,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
ADDRESSES = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def document(name: str) -> dict[str, Any]:
    raw = text(name)
    return json.loads(raw[raw.index("\n{") :])


def percentile_from_bins(bins: dict[int, int], percent: float) -> int:
    """The smallest bin value at or below which ``percent`` of the samples lie (nearest rank).

    An independent, plain reading of a histogram to check the merge against; fio's own
    algorithm (core/fio/clones.py) additionally maps values to its bucket boundaries, which
    the bins' keys already are.
    """
    total = sum(bins.values())
    needed = total * percent / 100
    seen = 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= needed:
            return value
    raise AssertionError("empty histogram")


def test_each_client_keeps_its_own_jobs_in_the_order_given() -> None:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)

    assert [client.address for client in run.clients] == ADDRESSES
    assert all([j.name for j in c.result.jobs] == ["read_iops", "write_iops"] for c in run.clients)
    raw = document("fio-3.33-client-server-3-clients-json+.txt")["client_stats"]
    client_2_read = next(
        e for e in raw if e["hostname"] == "127.0.0.2" and e["jobname"] == "read_iops"
    )
    assert run.clients[1].result.jobs[0].read.iops == pytest.approx(client_2_read["read"]["iops"])
    # fio's per-host text lines are kept for the guards that read them.
    assert run.combined.surrounding_text.startswith("<vm> read_iops: (g=0)")


def test_the_sum_is_per_job_not_fios_all_clients_entry() -> None:
    raw = document("fio-3.33-client-server-3-clients-json+.txt")["client_stats"]
    all_clients = next(e for e in raw if e["jobname"] == ALL_CLIENTS)
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)

    read, write = run.combined.jobs
    assert (read.name, write.name) == ("read_iops", "write_iops")
    assert read.clones == write.clones == 3
    # fio's "All clients" adds the read job and the write job of every client together.
    assert all_clients["read"]["iops"] > 0
    assert all_clients["write"]["iops"] > 0
    assert read.write.iops == 0
    assert write.read.iops == 0
    client_reads = [c.result.jobs[0].read.iops for c in run.clients]
    assert read.read.iops == pytest.approx(sum(client_reads), rel=0.002)


def test_one_job_sum_matches_fios_own_all_clients_numbers() -> None:
    name = "fio-3.33-client-server-3-clients-one-job-json+.txt"
    raw = document(name)["client_stats"]
    fio_sum = next(e for e in raw if e["jobname"] == ALL_CLIENTS)["read"]
    run = parse_client_output(text(name), ADDRESSES)

    (job,) = run.combined.jobs
    merged = job.raw["read"]
    assert merged["total_ios"] == fio_sum["total_ios"]
    assert merged["runtime"] == fio_sum["runtime"]
    assert job.read.iops == pytest.approx(fio_sum["iops"])
    assert merged["clat_ns"]["N"] == fio_sum["clat_ns"]["N"]
    assert merged["clat_ns"]["mean"] == pytest.approx(fio_sum["clat_ns"]["mean"], rel=1e-9)
    assert merged["clat_ns"]["min"] == fio_sum["clat_ns"]["min"]
    assert merged["clat_ns"]["max"] == fio_sum["clat_ns"]["max"]


def test_percentiles_come_from_the_summed_histograms() -> None:
    name = "fio-3.33-client-server-3-clients-one-job-json+.txt"
    clients = [e for e in document(name)["client_stats"] if e["jobname"] != ALL_CLIENTS]
    summed: dict[int, int] = {}
    for entry in clients:
        for value, count in entry["read"]["clat_ns"]["bins"].items():
            summed[int(value)] = summed.get(int(value), 0) + int(count)
    run = parse_client_output(text(name), ADDRESSES)

    (job,) = run.combined.jobs
    assert job.percentile_merge == "exact"
    assert job.read.clat_p99_us == pytest.approx(percentile_from_bins(summed, 99) / 1000)
    assert job.read.clat_p50_us == pytest.approx(percentile_from_bins(summed, 50) / 1000)
    # Not an average of the clients' p99s: here the merged p99 differs from their mean.
    p99s = [e["read"]["clat_ns"]["percentile"]["99.000000"] / 1000 for e in clients]
    assert min(p99s) <= job.read.clat_p99_us <= max(p99s)
    assert job.read.clat_p99_us != pytest.approx(sum(p99s) / 3)


def test_a_failing_client_keeps_its_error_and_the_others_their_results() -> None:
    run = parse_client_output(
        text("fio-3.33-client-server-job-error-json+.txt"), ["127.0.0.1", "127.0.0.2"]
    )

    healthy, failing = run.clients
    assert [j.error for j in healthy.result.jobs] == [0, 0]
    assert [(j.name, j.error) for j in failing.result.jobs] == [("write_to_dev_full", 28)]
    assert [(j.name, j.error) for j in run.combined.jobs] == [
        ("read_iops", 0),
        ("write_iops", 0),
        ("write_to_dev_full", 28),
    ]


def test_a_client_that_reported_nothing_still_has_an_entry() -> None:
    run = parse_client_output(
        text("fio-3.33-client-server-job-error-json+.txt"), ["127.0.0.1", "127.0.0.2", "10.9.9.9"]
    )

    assert run.clients[2].address == "10.9.9.9"
    assert run.clients[2].result.jobs == ()


def test_output_without_a_client_document_is_refused() -> None:
    with pytest.raises(FioOutputError, match="client/server"):
        parse_client_output(text("fio-3.33-quick-profile-ext4.json"), ADDRESSES)
    with pytest.raises(FioOutputError, match="empty"):
        parse_client_output("", ADDRESSES)


def test_client_arguments_pair_each_address_with_its_job_file() -> None:
    assert client_arguments([("10.0.0.5", "/etc/j0.fio"), ("10.0.0.6", "/etc/j1.fio")]) == [
        "--client=10.0.0.5,8765",
        "/etc/j0.fio",
        "--client=10.0.0.6,8765",
        "/etc/j1.fio",
    ]


def test_skew_and_iops() -> None:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)
    reads = [job_iops(c.result.jobs[0]) for c in run.clients]

    skew = skew_percent(reads)
    assert skew is not None
    assert skew == pytest.approx((max(reads) - min(reads)) / (sum(reads) / 3) * 100)
    assert skew_percent([100.0]) is None
    assert skew_percent([0.0, 0.0]) is None
    assert skew_percent([50.0, 150.0]) == pytest.approx(100.0)


# --- in the report ---------------------------------------------------------------------------


def client_report(*, failed_pod: bool = False) -> FioReport:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)
    clients = [
        FioClient(index, f"fio-run1-fast-c{index}", f"node-{index}", address)
        for index, address in enumerate(ADDRESSES)
    ]
    if failed_pod:
        clients.append(FioClient(3, "fio-run1-fast-c3", None, None, "Pending: 0/3 nodes free"))
    return build_fio_report(
        {"fast": [run.combined, run.combined]},
        profile="custom",
        client_runs={"fast": ClientRuns(tuple(clients), (run, run))},
    )


def test_report_sums_the_job_and_gives_each_clients_share() -> None:
    report = client_report()

    (result,) = report.results
    read = result.jobs[0]
    client_reads = [client.jobs[0].iops for client in result.clients]
    assert read.value("read_iops") == pytest.approx(sum(c or 0 for c in client_reads), rel=0.002)
    shares = [client.jobs[0].share_percent or 0 for client in result.clients]
    assert sum(shares) == pytest.approx(100)
    assert [c.node for c in result.clients] == ["node-0", "node-1", "node-2"]
    assert result.client_skew_percent["read_iops"] == pytest.approx(
        skew_percent([c or 0 for c in client_reads])
    )
    assert not report.failed_clients


def test_a_client_that_never_ran_is_reported_and_the_others_stay() -> None:
    report = client_report(failed_pod=True)

    (result,) = report.results
    assert report.failed_clients == ("fast/fio-run1-fast-c3 (Pending: 0/3 nodes free)",)
    assert [len(c.jobs) for c in result.clients] == [2, 2, 2, 0]
    assert result.jobs[0].value("read_iops")


def test_client_report_reads_back_from_json() -> None:
    report = client_report(failed_pod=True)
    saved = json.loads(json.dumps(report.to_dict()))

    assert list(saved["results"][0])[-2:] == ["clients", "client_skew_percent"]
    assert FioReport.from_dict(saved).to_dict() == saved


def test_a_report_without_clients_has_no_client_keys() -> None:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)

    document = build_fio_report({"fast": [run.combined]}, profile="custom").to_dict()

    assert "clients" not in document["results"][0]


def test_table_shows_each_client_its_node_share_and_problem() -> None:
    out = io.StringIO()
    write_fio_table(client_report(failed_pod=True), out)

    lines = out.getvalue().splitlines()
    start = lines.index("Clients of fast: IOPS (share)")
    assert lines[start + 1].split() == [
        "CLIENT",
        "POD",
        "NODE",
        "READ_IOPS",
        "WRITE_IOPS",
        "PROBLEM",
    ]
    assert lines[start + 2].split()[:3] == ["0", "fio-run1-fast-c0", "node-0"]
    assert lines[start + 5].split() == [
        "3", "fio-run1-fast-c3", "-", "-", "-", "Pending:", "0/3", "nodes", "free",
    ]  # fmt: skip
    assert lines[start + 6].startswith("skew between clients")


# --- each client its own files on a shared volume -------------------------------------------


@pytest.mark.parametrize("profile", ["quick", "kubestr"])
def test_clients_on_one_volume_write_only_their_own_files(
    profile: str, tmp_path: Path, fio: str
) -> None:
    """Run by the real fio, as two clients of one shared directory would."""
    job = render_profile(profile, runtime_s=1, ramp_time_s=0, size="1M", directory=str(tmp_path))
    for index in (0, 1):
        path = tmp_path / f"job-{index}.fio"
        path.write_text(client_job_text(job, index, directory=str(tmp_path)))
        subprocess.run([fio, "--output-format=json", str(path)], check=True, capture_output=True)

    files = sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".fio"))
    assert files
    assert all(name.startswith(("client-0.", "client-1.")) for name in files), files
    assert {name.split(".")[0] for name in files} == {"client-0", "client-1"}


def test_a_job_file_that_names_its_file_cannot_be_shared() -> None:
    own = "[global]\nsize=1M\n[w]\nrw=write\nfilename=data.bin\n"

    assert (
        own_file_problem(own) == "[w] sets filename=data.bin, so every client would use that file"
    )
    assert own_file_problem("[global]\nfilename_format=x\n[w]\nrw=write\n") is not None
    assert own_file_problem("[global]\nsize=1M\n[w]\nrw=write\n") is None


def test_chart_has_a_panel_of_each_clients_iops() -> None:
    figure = build_fio_figure(client_report(failed_pod=True))

    assert [axes.get_title(loc="left") for axes in figure.axes] == [
        IOPS_TITLE,
        BANDWIDTH_TITLE,
        LATENCY_TITLE,
        CLIENTS_TITLE,
    ]
    labels = [tick.get_text() for tick in figure.axes[3].get_yticklabels()]
    assert labels[0] == "fast · read_iops · client 0 (node-0, 33%)"
    assert len(labels) == 6  # three clients that ran, two jobs each; none for the one that did not


def test_chart_without_clients_keeps_three_panels() -> None:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)

    figure = build_fio_figure(build_fio_report({"fast": [run.combined]}, profile="custom"))

    assert len(figure.axes) == 3


# --- where the clients ran: packed onto fewer nodes than could take them ---------------------


def _runs(nodes: list[str | None], eligible: dict[str, str | None], spread: Spread) -> ClientRuns:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)
    clients = tuple(
        FioClient(i, f"c{i}", node, ADDRESSES[i] if node else None, None if node else "Pending")
        for i, node in enumerate(nodes)
    )
    return ClientRuns(clients, (run,), spread, eligible)


THREE = {"n1": "a", "n2": "b", "n3": "b"}


@pytest.mark.parametrize(
    ("nodes", "spread", "said"),
    [
        (["n1", "n1", "n1"], Spread.NODES, "the 3 clients ran on 1 node (n1) though 3 nodes"),
        (["n1", "n2", "n2"], Spread.NODES, "the 3 clients ran on 2 nodes (n1, n2) though 3"),
        (["n2", "n3", "n3"], Spread.ZONES, "the 3 clients ran on 1 zone (b) though 2 zones"),
    ],
)
def test_clients_kept_together_are_said(nodes: list[str], spread: Spread, said: str) -> None:
    note = packing_note(_runs(nodes, THREE, spread))
    assert note is not None
    assert note.id == NOTE_CLIENTS_PACKED
    assert said in note.message
    assert NOTE_CLIENTS_PACKED not in SUSPECT_NOTES  # the numbers are true, of fewer nodes


@pytest.mark.parametrize(
    ("nodes", "eligible", "spread"),
    [
        (["n1", "n2", "n3"], THREE, Spread.NODES),  # spread as far as it could
        (["n1", "n2", "n2"], THREE, Spread.ZONES),  # both zones
        (["n1", "n1"], {"n1": None}, Spread.NODES),  # one node could take them
        (["n1", "n2", None], THREE, Spread.NODES),  # the third never started: 2 of 2
        (["n1", "n1", "n1"], {}, Spread.NODES),  # the nodes could not be read: unknown
    ],
)
def test_clients_that_spread_as_far_as_they_could_stay_quiet(
    nodes: list[str | None], eligible: dict[str, str | None], spread: Spread
) -> None:
    assert packing_note(_runs(nodes, eligible, spread)) is None


def test_the_report_carries_the_packing_note() -> None:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)
    report = build_fio_report(
        {"fast": [run.combined]},
        profile="custom",
        client_runs={"fast": _runs(["n1", "n1", "n1"], THREE, Spread.NODES)},
    )
    assert NOTE_CLIENTS_PACKED in [note.id for note in report.results[0].notes]


# --- each client's notes say which client and node they came from ----------------------------


def test_a_note_of_one_client_names_that_client_and_its_node() -> None:
    # Only the second client's job hit ENOSPC (real fio output): the note must say where.
    run = parse_client_output(text("fio-3.33-client-server-job-error-json+.txt"), ADDRESSES[:2])
    clients = (
        FioClient(0, "c0", "node-a", ADDRESSES[0]),
        FioClient(1, "c1", "node-b", ADDRESSES[1]),
    )

    notes = client_notes(ClientRuns(clients, (run,)))

    (no_space,) = [note for note in notes if note.id == "fio.env-no-space"]
    assert no_space.message.startswith("client 1 on node-b: ")
    assert "also" not in no_space.message
    small = [note for note in notes if note.id == "fio.dataset-small"]
    assert small
    assert all(note.message.startswith("client 0 on node-a: ") for note in small)


def test_a_rule_every_client_fired_is_kept_once_naming_them_all() -> None:
    run = parse_client_output(text("fio-3.33-client-server-3-clients-json+.txt"), ADDRESSES)
    clients = tuple(FioClient(i, f"c{i}", f"node-{i}", a) for i, a in enumerate(ADDRESSES))

    notes = client_notes(ClientRuns(clients, (run, run)))  # two repeats: still once per client

    # The clients' job file is buffered (direct=0): the page cache served the reads of its
    # 64M file and acknowledged the writes (issue 23).
    assert sorted((note.id, note.job) for note in notes) == [
        ("fio.cache-write-latency", "write_iops"),
        ("fio.dataset-small", "read_iops"),
    ]
    for note in notes:
        assert note.message.startswith(
            "client 0 on node-0 (also client 1 on node-1, client 2 on node-2): job "
        )
