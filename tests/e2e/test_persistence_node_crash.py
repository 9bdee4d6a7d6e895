"""node-crash refusals on the real test cluster (issue 26 item 2): its three nodes are kubelets of
this machine, one kernel, so crashing any of them would reboot the machine running the tests.
Every refusal exits 2 before anything is created and touches no node. The crash itself runs only
against the node lab's guest (tests/nodelab/test_node_crash.py)."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from tests.e2e.conftest import HOSTPATH_CLASS, PERSISTENCE_OBJECTS, managed


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--node", "tk8s-node-2"], "needs --crash-node"),
        (["--node", "tk8s-node-2", "--crash-node", "tk8s-node-3"], "is not the node"),
        (["--node", "no-such-node", "--crash-node", "no-such-node"], "does not exist"),
        (
            ["--node", "tk8s-node-2", "--crash-node", "tk8s-node-2"],
            "runs on the kernel of the machine this command runs on",
        ),
        (
            ["--node", "tk8s-node-2", "--crash-node", "tk8s-node-2", "--dry-run"],
            "runs on the kernel of the machine this command runs on",
        ),
    ],
    ids=["not-named-twice", "another-node", "no-such-node", "shared-kernel", "shared-dry-run"],
)
def test_node_crash_is_refused_before_anything_exists(
    cluster, namespace, flags: list[str], said: str
) -> None:
    nodes_before = {
        n["metadata"]["name"]: (n["status"]["nodeInfo"]["bootID"], n["spec"].get("unschedulable"))
        for n in cluster.get_json("nodes")["items"]
    }
    result = run_cli(
        "validate-persistence", "-s", HOSTPATH_CLASS, "-n", namespace,
        "--disruptions", "node-crash", *flags,
    )  # fmt: skip

    assert result.exit_code == 2, result.stderr
    assert said in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    assert managed(cluster, namespace, PERSISTENCE_OBJECTS) == []
    assert cluster.get_json("pods", "-n", namespace)["items"] == []
    nodes_after = {
        n["metadata"]["name"]: (n["status"]["nodeInfo"]["bootID"], n["spec"].get("unschedulable"))
        for n in cluster.get_json("nodes")["items"]
    }
    assert nodes_after == nodes_before  # nothing cordoned, nothing rebooted
