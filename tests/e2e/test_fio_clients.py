"""`kubectl storage fio --clients`: fio's client/server mode over several nodes of the real cluster.

The sum is checked against each client's own fio numbers (kept in the report's raw data); the
failure case makes one client unschedulable for real (each node has two CPUs, each client asks
for 1.5 of them, so the fourth of four clients on three nodes cannot be placed).
"""

from __future__ import annotations

import json
import signal
import time

import pytest

from tests.conftest import finish_cli, run_cli, start_cli, wait_for_stderr
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed
from tests.e2e.test_fio import _report

QUICK = ("--profile", "quick", "--runtime", "3", "--ramp-time", "0")


def test_three_clients_on_three_nodes_add_up(multinode, namespace) -> None:
    report = _report(
        run_cli(
            "fio",
            "-s",
            HOSTPATH_CLASS,
            "-z",
            "1Gi",
            *QUICK,
            "--clients",
            "3",
            "-n",
            namespace,
            "-o",
            "json",
        )
    )

    (result,) = report["results"]
    clients = result["clients"]
    assert [c["error"] for c in clients] == [None, None, None]
    # Spread over nodes (a preference, so a busy or cordoned node may take two): the suite's
    # own nodes, never the lab's, and more than one of them.
    nodes = [c["node"] for c in clients]
    assert set(nodes) <= set(multinode.nodes)
    assert len(set(nodes)) >= 2, nodes
    packed = [n for n in result["notes"] if n["id"] == "fio.clients-packed"]
    assert bool(packed) == (len(set(nodes)) < 3), (nodes, packed)  # said only when packed
    for job in result["jobs"]:
        name = job["name"]
        side = "read" if name.startswith("read") else "write"
        assert job["clones"] == 3  # the same job of three clients, added up
        raws = job["raw"][0]  # one run; the clients' own fio job dicts
        assert sorted(r["hostname"] for r in raws) == sorted(c["address"] for c in clients)
        own = [r[side]["iops"] for r in raws]
        # fio's sum: all I/Os over the longest client's runtime, so at most the plain sum (how
        # far under it depends on how far apart the clients ran: 1.2 % on a loaded CI node).
        total_ios = sum(r[side]["total_ios"] for r in raws)
        longest_ms = max(r[side]["runtime"] for r in raws)
        assert job[f"{side}_iops"] == pytest.approx(1000.0 * total_ios / longest_ms, rel=1e-3)
        assert job[f"{side}_iops"] <= sum(own) * 1.0001
        assert job["percentile_merge"] == "exact"
        p99s = [r[side]["clat_ns"]["percentile"]["99.000000"] / 1000 for r in raws]
        assert min(p99s) <= job[f"{side}_clat_p99_us"] <= max(p99s)
        shares = [next(j for j in c["jobs"] if j["name"] == name)["share_percent"] for c in clients]
        assert sum(shares) == pytest.approx(100)
        assert result["client_skew_percent"][name] >= 0
    assert report["clients"] == 3
    setup = result["setup"]
    assert setup["provisioner"] == "hostpath.csi.k8s.io"
    assert {n["name"] for n in setup["nodes"]} == {c["node"] for c in clients}
    assert all(n["kernel"] for n in setup["nodes"])
    assert setup["volume"]["fs_type"]
    assert managed(multinode, namespace, FIO_OBJECTS) == []


def test_shared_volume_each_client_writes_its_own_files(multinode, namespace) -> None:
    result = run_cli(
        "fio", "-s", HOSTPATH_CLASS, "-z", "2Gi", *QUICK, "--clients", "3", "--shared",
        "--keep", "-n", namespace, "-o", "json",
    )  # fmt: skip
    report = _report(result)
    try:
        claims = multinode.get_json("pvc", "-n", namespace)["items"]
        assert len(claims) == 1
        assert claims[0]["spec"]["accessModes"] == ["ReadWriteMany"]
        driver = report["results"][0]["clients"][0]
        listing = multinode.kubectl_run(
            "-n", namespace, "exec", driver["pod"], "--", "ls", "/dataset"
        )  # fmt: skip
        files = sorted(listing.stdout.split())
        # fio's unique_filename prefixes the address each server sees the fio --client process
        # connect from, which two servers can share; the client number keeps the files apart.
        suffixes = sorted(name.split(".client-", 1)[-1] for name in files)
        assert len(files) == 3
        assert suffixes == [f"{i}.kubectl-storage-fio.dat" for i in range(3)]
        assert report["shared_volume"] is True
    finally:
        cleaned = run_cli("cleanup", "-n", namespace, "--yes")
        assert cleaned.exit_code == 0, cleaned.stderr
    assert managed(multinode, namespace, FIO_OBJECTS) == []


def test_a_client_that_cannot_start_is_reported_and_the_run_fails(multinode, namespace) -> None:
    result = run_cli(
        "fio", "-s", HOSTPATH_CLASS, "-z", "1Gi", *QUICK, "--clients", "4", "--cpu", "1500m",
        "--timeout", "30", "-n", namespace, "-o", "json",
    )  # fmt: skip

    assert result.exit_code == 1, result.stderr
    assert "fio clients took no part" in result.stderr
    report = json.loads(result.stdout)  # the clients that ran are still reported
    clients = report["results"][0]["clients"]
    failed = [c for c in clients if c["error"]]
    ran = [c for c in clients if not c["error"]]
    # Three nodes fit three clients; other pods on the cluster may take a node's CPU too.
    assert failed, clients
    assert ran, clients
    assert all("Insufficient cpu" in c["error"] and c["jobs"] == [] for c in failed)
    assert all(c["jobs"] for c in ran)
    assert report["results"][0]["jobs"][0]["clones"] == len(ran)
    assert managed(multinode, namespace, FIO_OBJECTS) == []


def test_sigint_while_the_clients_run_leaves_nothing(multinode, namespace) -> None:
    proc = start_cli(
        "fio", "-s", HOSTPATH_CLASS, "-z", "1Gi", "--profile", "quick", "--runtime", "30",
        "--clients", "3", "-n", namespace,
    )  # fmt: skip
    wait_for_stderr(proc, "fio starts", timeout=180)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    _, stderr = finish_cli(proc, 180)
    assert proc.returncode == 130, stderr
    assert managed(multinode, namespace, FIO_OBJECTS) == []


@pytest.fixture
def one_node_class(multinode, make_storage_class):
    """A class of the test driver whose every volume lives on tk8s-node-2 (node-local, pinned):
    pods that use them can only run there."""
    return make_storage_class(
        "pinned",
        parameters={"tk8s.io/node-local": "true", "tk8s.io/node-local-node": "tk8s-node-2"},
    )


def test_clients_kept_on_one_node_by_their_volumes_are_said(
    multinode, namespace, one_node_class
) -> None:
    args = ["-s", one_node_class, "-z", "1Gi", *QUICK, "--clients", "3", "-n", namespace]
    report = _report(run_cli("fio", *args, "-o", "json"))
    (result,) = report["results"]
    assert [c["node"] for c in result["clients"]] == ["tk8s-node-2"] * 3
    (packed,) = [n for n in result["notes"] if n["id"] == "fio.clients-packed"]
    assert (
        "the 3 clients ran on 1 node (tk8s-node-2) though 3 nodes could take them"
        in (packed["message"])
    )
    assert "clients ran on" not in result["confidence"]  # true numbers, of one node
    assert managed(multinode, namespace, FIO_OBJECTS) == []
