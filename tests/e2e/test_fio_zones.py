"""`kubectl storage fio --clients N --spread zones` on the real cluster, with zones made for it.

The test cluster's nodes carry no zone label, so a fixture gives the harness's three nodes
``topology.kubernetes.io/zone``: the first two ``zone-a``, the third ``zone-b``, and takes the
labels off again afterwards, also when the test fails (the cluster is shared).

What the product promises (core/fio/clients.py ``Spread``, operations/fio/plan.py, the help and
docs/commands/fio.md): the client pods are spread over the zones as a preference, not a rule
(a topology spread constraint over ``topology.kubernetes.io/zone`` with ``maxSkew: 1`` and
``whenUnsatisfiable: ScheduleAnyway``). So two clients on two zones run one per zone; three
clients on two zones all run, two in one zone and one in the other (a skew of one), none refused.
Which node and zone each client ran on is read from the report: ``clients[].node`` and the zone
of that node in ``setup.nodes``.
"""

from __future__ import annotations

import collections

import pytest

from tests.conftest import run_cli
from tests.e2e.conftest import FIO_OBJECTS, HOSTPATH_CLASS, managed
from tests.e2e.test_fio import _report
from tests.e2e.test_fio_clients import QUICK

ZONE_LABEL = "topology.kubernetes.io/zone"


@pytest.fixture
def two_zones(multinode):
    """{node: zone} for the harness's first three nodes; the labels go again afterwards."""
    first, second, third = multinode.nodes[:3]
    zones = {first: "zone-a", second: "zone-a", third: "zone-b"}
    for node in zones:  # a zone label already there is not ours to overwrite
        labels = multinode.get_json("node", node)["metadata"].get("labels", {})
        assert ZONE_LABEL not in labels, f"{node} already has {ZONE_LABEL}={labels[ZONE_LABEL]}"
    try:
        for node, zone in zones.items():
            multinode.kubectl_run("label", "node", node, f"{ZONE_LABEL}={zone}")
        yield zones
    finally:
        for node in zones:
            multinode.kubectl_run("label", "node", node, f"{ZONE_LABEL}-", check=False)
        for node in zones:  # the next test must not see our zones
            labels = multinode.get_json("node", node)["metadata"].get("labels", {})
            assert ZONE_LABEL not in labels, f"could not remove {ZONE_LABEL} from {node}"


def _zones_of_clients(report: dict) -> list[str]:
    """Each client's zone, as the report says: its node, and that node's zone in the setup."""
    (result,) = report["results"]
    zone_of = {n["name"]: n["zone"] for n in result["setup"]["nodes"]}
    return [zone_of[c["node"]] for c in result["clients"]]


def _run(namespace: str, clients: int) -> dict:
    result = run_cli(
        "fio", "-s", HOSTPATH_CLASS, "-z", "1Gi", *QUICK, "--clients", str(clients),
        "--spread", "zones", "-n", namespace, "-o", "json",
    )  # fmt: skip
    return _report(result)


def test_two_clients_run_in_different_zones(multinode, two_zones, namespace) -> None:
    report = _run(namespace, 2)

    (result,) = report["results"]
    clients = result["clients"]
    assert [c["error"] for c in clients] == [None, None]
    # the report's zones are the ones the fixture gave those nodes
    for node in result["setup"]["nodes"]:
        assert node["zone"] == two_zones[node["name"]], node
    assert sorted(_zones_of_clients(report)) == ["zone-a", "zone-b"], clients
    assert all(job["clones"] == 2 for job in result["jobs"])  # both clients were added up
    assert managed(multinode, namespace, FIO_OBJECTS) == []


def test_three_clients_on_two_zones_all_run_two_and_one(multinode, two_zones, namespace) -> None:
    report = _run(namespace, 3)

    (result,) = report["results"]
    clients = result["clients"]
    # a preference, not a rule: the third client is not refused for want of a third zone
    assert [c["error"] for c in clients] == [None, None, None]
    assert all(job["clones"] == 3 for job in result["jobs"])
    # maxSkew 1 over two zones: both zones used, two clients in one, one in the other
    per_zone = collections.Counter(_zones_of_clients(report))
    assert sorted(per_zone.values()) == [1, 2], (per_zone, clients)
    assert set(per_zone) == {"zone-a", "zone-b"}
    assert managed(multinode, namespace, FIO_OBJECTS) == []
