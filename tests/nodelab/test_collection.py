"""The guest ran the live collection: the very script the debug pods run, and nothing else."""

from __future__ import annotations

import re

import pytest

from kubectl_storage.core.nodes.collect import MOUNT_SECTIONS, collection_script
from kubectl_storage.operations import iscsi as iscsi_op
from tests.nodelab.conftest import LabRun
from tests.nodelab.reports import node_output

pytestmark = pytest.mark.nodelab

KINDS = {"nfs": ("mount", MOUNT_SECTIONS), "iscsi": ("iscsi", iscsi_op.SECTIONS)}


@pytest.mark.parametrize("scenario", list(KINDS))
def test_guest_ran_the_live_collection_script(lab: LabRun, scenario: str) -> None:
    kind, sections = KINDS[scenario]
    ran = (lab.root / scenario / scenario / f"collect-{kind}.sh").read_text()
    assert ran == collection_script(tuple(sections))
    for name in lab.phases(scenario):
        output = node_output(lab.phase(scenario, name), kind)
        assert tuple(output.sections) == tuple(sections), name
        assert re.fullmatch(r"6\.1\.0-\d+-amd64\n", output.sections["kernel"]), name
        assert (lab.phase(scenario, name) / f"collect-{kind}.err").read_text() == "", name


def test_mountinfo_is_the_host_namespace(lab: LabRun) -> None:
    """/proc/1/mountinfo is the guest's init's: the kubelet mounts, not the pod's /host view."""
    mountinfo = node_output(lab.phase("nfs", "versions"), "mount").sections["mountinfo"]
    assert " /var/lib/kubelet/pods/" in mountinfo
    assert " /host" not in mountinfo
    iscsi = node_output(lab.phase("iscsi", "healthy"), "iscsi").sections
    assert "/globalmount " in iscsi["mountinfo"]
    assert "tool multipathd: /usr/sbin/multipathd" in iscsi["tools"]
