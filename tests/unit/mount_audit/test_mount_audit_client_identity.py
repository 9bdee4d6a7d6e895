"""NFS120: one NFSv4 client identity on several nodes, judged across the nodes of a run, both
ways, through the live path (each node's sections as a debug pod returns them).

The hostnames and identifiers are INVENTED (no capture of a cloned node pair exists here); the
mount lines are the invented kubelet node's (tests/fixtures/mountinfo). What the kernel builds
from them is fs/nfs/nfs4proc.c nfs4_init_uniform_client_string's rule, cited by the finding.
"""

from __future__ import annotations

from kubectl_storage.core.mount_audit.node_report import build_node_report, build_report
from kubectl_storage.core.mount_audit.rules import client_identity
from kubectl_storage.core.nodes.capture import NodeCapture
from tests.conftest import FIXTURES

MOUNTINFO = (FIXTURES / "mountinfo" / "invented-kubelet-node.mountinfo").read_text()
# The first line: an NFSv4.1 mount of acct01.file.core.windows.net.
V41_ONLY = MOUNTINFO.splitlines()[1] + "\n"


def node(name: str, hostname: str, identifier: str = "", mountinfo: str = V41_ONLY):
    identity = f"/host/etc/hostname: {hostname}\n"
    if identifier:
        identity += f"/host/sys/fs/nfs/net/nfs_client/identifier: {identifier}\n"
    texts = {"mountinfo": (mountinfo,), "nfs-identity": (identity,), "kernel": ("6.1.0-27",)}
    return build_node_report(NodeCapture(name, texts), None, None)


def test_the_uniquifier_comes_from_sysfs_then_the_module_parameter() -> None:
    assert client_identity("w1", "abc", "def").owner_string == "w1/abc"
    assert client_identity("w1", "", "def").uniquifier_from == "module"
    assert client_identity("w1", "(null)", None).owner_string == "w1"
    assert client_identity("", "abc", None) is None


def test_two_cloned_nodes_mounting_one_server_fire_and_the_json_says_why() -> None:
    report = build_report(
        [node("w1", "golden"), node("w2", "golden")], source="cluster", profile=None
    )
    (finding,) = report.cluster_findings
    assert (finding.id, finding.severity.value) == ("NFS120", "error")
    assert "nodes w1, w2" in finding.message
    assert "acct01.file.core.windows.net" in finding.message
    assert "nfs4_init_uniform_client_string" in finding.source
    document = report.to_dict()
    assert document["verdict"] == "fail"
    assert document["nodes"][0]["nfs_client_identity"] == {
        "nodename": "golden",
        "uniquifier": None,
        "uniquifier_from": None,
    }


def test_a_uniquifier_per_node_or_no_common_server_stays_quiet() -> None:
    unique = build_report(
        [node("w1", "golden", "4f1c-a"), node("w2", "golden", "9d0e-b")],
        source="cluster",
        profile=None,
    )
    assert unique.cluster_findings == ()
    # Same identity, but only one of them mounts the server (the other has no NFS at all).
    apart = build_report(
        [node("w1", "golden"), node("w2", "golden", mountinfo="")], source="cluster", profile=None
    )
    assert apart.cluster_findings == ()
    # Different hostnames: different clients.
    named = build_report([node("w1", "w1"), node("w2", "w2")], source="cluster", profile=None)
    assert named.cluster_findings == ()
