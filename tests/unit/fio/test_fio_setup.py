"""What a fio report says it measured: class, mount, nodes; and what differs from a baseline."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

from kubectl_storage.core.fio.baseline import compare_with_baseline
from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.report import FioReport
from kubectl_storage.core.fio.setup import (
    NodeSetup,
    TargetSetup,
    VolumeSetup,
    node_setup,
    setup_differences,
    target_setup,
    volume_setup,
)
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.operations.fio.run import split_mountinfo, with_mountinfo
from kubectl_storage.render.fio import write_fio_table

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
POD_MOUNTINFO = (FIXTURES / "mountinfo" / "testcluster-fio-pod-csi-hostpath.mountinfo").read_text()

STORAGE_CLASS = {
    "metadata": {"name": "fast"},
    "provisioner": "ebs.csi.aws.com",
    "parameters": {"type": "gp3", "iops": "3000"},
    "volumeBindingMode": "WaitForFirstConsumer",
}
NODE = {
    "metadata": {
        "name": "ip-10-0-1-5",
        "labels": {
            "node.kubernetes.io/instance-type": "m6i.large",
            "topology.kubernetes.io/zone": "eu-west-1a",
        },
    },
    "status": {
        "nodeInfo": {
            "kernelVersion": "6.1.0-57-amd64",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "kubeletVersion": "v1.34.12",
        }
    },
}


def test_the_volume_is_read_from_the_pods_own_mountinfo() -> None:
    volume = volume_setup(POD_MOUNTINFO, "/dataset")

    assert volume == VolumeSetup(
        fs_type="ext4",
        source="/dev/vda",
        options=("rw", "relatime", "discard", "resv_strict", "resuid=65534", "resgid=65534"),
    )
    assert volume_setup(POD_MOUNTINFO, "/not-mounted") is None
    assert volume_setup("not mountinfo at all", "/dataset") is None


def test_node_and_class_say_what_the_machine_and_driver_are() -> None:
    setup = target_setup(STORAGE_CLASS, [NODE], None)

    assert setup.provisioner == "ebs.csi.aws.com"
    assert setup.parameters == {"type": "gp3", "iops": "3000"}
    assert setup.volume_binding_mode == "WaitForFirstConsumer"
    assert setup.nodes == (
        NodeSetup(
            "ip-10-0-1-5",
            "6.1.0-57-amd64",
            "Debian GNU/Linux 12 (bookworm)",
            "v1.34.12",
            "m6i.large",
            "eu-west-1a",
        ),
    )
    bare = node_setup({"metadata": {"name": "n"}})
    assert (bare.kernel, bare.instance_type, bare.zone) == (None, None, None)


def test_differences_name_what_changed_and_stay_quiet_when_nothing_did() -> None:
    old = target_setup(STORAGE_CLASS, [NODE], volume_setup(POD_MOUNTINFO, "/dataset"))
    newer_kernel = json.loads(json.dumps(NODE))
    newer_kernel["status"]["nodeInfo"]["kernelVersion"] = "6.8.0-1016-aws"
    faster = {**STORAGE_CLASS, "parameters": {"type": "gp3", "iops": "6000"}}
    volume = VolumeSetup("ext4", "/dev/vda", ("rw", "noatime", "discard"))
    new = target_setup(faster, [newer_kernel], volume)

    assert setup_differences(old, old) == ()
    assert setup_differences(new, old) == (
        "parameter iops: 3000 -> 6000",
        "mount options: -relatime, -resgid=65534, -resuid=65534, -resv_strict, +noatime",
        "node kernel: 6.1.0-57-amd64 -> 6.8.0-1016-aws",
    )


def test_baseline_shows_the_setup_difference_beside_the_numbers() -> None:
    result = parse_fio_output((FIXTURES / "fio" / "fio-3.33-quick-profile-ext4.json").read_text())
    old = build_fio_report(
        {"fast": [result]},
        profile="quick",
        setups={"fast": target_setup(STORAGE_CLASS, [NODE], None)},
    )
    other = {**STORAGE_CLASS, "provisioner": "pd.csi.storage.gke.io"}
    new = build_fio_report(
        {"fast": [result]}, profile="quick", setups={"fast": target_setup(other, [NODE], None)}
    )

    comparison = compare_with_baseline(
        new, FioReport.from_dict(json.loads(json.dumps(old.to_dict())))
    )

    assert comparison.setup_differences == {
        "fast": ("provisioner: ebs.csi.aws.com -> pd.csi.storage.gke.io",)
    }
    assert compare_with_baseline(old, old).setup_differences == {}
    out = io.StringIO()
    write_fio_table(new.with_baseline(comparison), out)
    text = out.getvalue()
    assert "setup: provisioner pd.csi.storage.gke.io; parameters iops=3000, type=gp3" in text
    assert "setup of fast differs from the baseline's:\n    provisioner: ebs" in text


def test_a_report_without_setup_keeps_its_json_and_reads_back() -> None:
    result = parse_fio_output((FIXTURES / "fio" / "fio-3.33-quick-profile-ext4.json").read_text())
    plain = build_fio_report({"fast": [result]}, profile="quick").to_dict()
    with_setup = build_fio_report(
        {"fast": [result]},
        profile="quick",
        setups={
            "fast": target_setup(STORAGE_CLASS, [NODE], volume_setup(POD_MOUNTINFO, "/dataset"))
        },
    ).to_dict()

    assert "setup" not in plain["results"][0]
    assert list(with_setup["results"][0])[-1] == "setup"
    assert FioReport.from_dict(with_setup).to_dict() == with_setup
    assert isinstance(FioReport.from_dict(with_setup).results[0].setup, TargetSetup)


def test_the_first_run_prints_mountinfo_before_fios_output() -> None:
    """The wrapper the first fio exec runs, run by the local shell."""
    command = with_mountinfo(["printf", '{"fio version": "x", "jobs": []}\n'])
    stdout = subprocess.run(command, capture_output=True, text=True, check=True).stdout

    mountinfo, rest = split_mountinfo(stdout)
    assert mountinfo is not None
    root = volume_setup(mountinfo, "/")  # the shell's own mount table, read like the pod's
    assert root is not None
    assert rest == '{"fio version": "x", "jobs": []}\n'
    assert split_mountinfo("plain fio output") == (None, "plain fio output")
