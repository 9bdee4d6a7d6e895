"""`snapshot check --freeze`: the freezer pod, when a run may freeze, and what a freeze proves."""

from __future__ import annotations

import pytest

from kubectl_storage.core.snapshot.freeze import (
    CLOCK_MARGIN_NS,
    FREEZER_MOUNT,
    FreezeResult,
    freeze_command,
    freeze_failure,
    freeze_refusal,
    freezer_pod,
    thaw_command,
)
from kubectl_storage.core.snapshot.log_writer import Ack

S = 1_000_000_000


def test_the_freezer_has_cap_sys_admin_and_nothing_more_next_to_the_writer() -> None:
    pod = freezer_pod("f", "ns", "toolbox", pvc="src", writer_labels={"run": "r", "role": "w"})
    container = pod["spec"]["containers"][0]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["SYS_ADMIN"]}
    assert "privileged" not in container["securityContext"]
    # The API refuses allowPrivilegeEscalation: false together with CAP_SYS_ADMIN.
    assert "allowPrivilegeEscalation" not in container["securityContext"]
    assert pod["spec"]["automountServiceAccountToken"] is False
    term = pod["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == [
        {
            "labelSelector": {"matchLabels": {"run": "r", "role": "w"}},
            "topologyKey": "kubernetes.io/hostname",
        }
    ]
    assert pod["spec"]["volumes"][0] == {
        "name": "source",
        "persistentVolumeClaim": {"claimName": "src"},
    }
    assert container["volumeMounts"][0]["mountPath"] == FREEZER_MOUNT


@pytest.mark.parametrize(
    ("level", "block", "refused"),
    [
        ("privileged", False, None),
        ("baseline", False, "baseline"),
        ("restricted", False, "restricted"),
        ("privileged", True, "raw block volume"),
    ],
)
def test_who_may_freeze(level: str, block: bool, refused: str | None) -> None:
    reason = freeze_refusal(level, block)
    if refused is None:
        assert reason is None
    else:
        assert reason is not None
        assert refused in reason


def test_the_freeze_guards_the_node_and_leaves_a_watchdog() -> None:
    script = freeze_command(watchdog_s=7)[2]
    guard, freeze = script.index("/etc/hosts"), script.index("fsfreeze --freeze")
    assert guard < freeze  # the node's filesystem is never frozen, not even for a moment
    assert "sleep 7; fsfreeze --unfreeze" in script
    assert "setsid" in script
    thaw = thaw_command()[2]
    assert thaw.index("kill") < thaw.index("fsfreeze --unfreeze")


def test_why_a_freeze_failed() -> None:
    node = freeze_failure(3, "node-fs /etc/hosts\n", "")
    assert "node's own filesystem" in node
    assert "/etc/hosts" in node
    assert freeze_failure(1, "", "fsfreeze: /freeze: freeze failed: Operation not supported\n") == (
        "fsfreeze failed: fsfreeze: /freeze: freeze failed: Operation not supported"
    )
    assert freeze_failure(126, "", "") == "fsfreeze failed: exit 126"


def _held(**kw) -> FreezeResult:
    base = {"frozen": True, "frozen_ns": 100 * S, "thawed_ns": 102 * S, "thawed_by": "run"}
    return FreezeResult(**{**base, **kw})


def test_a_freeze_that_held_has_no_problems() -> None:
    acks = [Ack(1, 0, 99 * S), Ack(2, 0, 102 * S + CLOCK_MARGIN_NS)]  # before and after
    held = _held().with_log(acks, torn_offset=None)
    assert held.acknowledged_while_frozen == 0
    assert held.problems == []
    assert held.frozen_seconds == pytest.approx(2.0)
    assert held.to_dict()["cutWhileFrozen"] is True


def test_writes_acknowledged_while_frozen_fail() -> None:
    acks = [Ack(1, 0, 101 * S)]
    leaked = _held().with_log(acks, torn_offset=None)
    assert leaked.acknowledged_while_frozen == 1
    assert leaked.problems == [
        "1 record(s) were acknowledged while the filesystem was frozen: the freeze did not hold "
        "the writes"
    ]


def test_a_torn_record_fails_only_when_the_run_thawed_after_the_cut() -> None:
    torn = _held().with_log([], torn_offset=8192)
    assert torn.problems == [
        "the restored log has a torn record at offset 8192 although the filesystem was frozen "
        "for the cut"
    ]
    late = _held(thawed_by="watchdog").with_log([], torn_offset=8192)
    assert late.problems == [
        "the filesystem was thawed by its 30s watchdog before the snapshot was cut: the snapshot "
        "is not application-consistent"
    ]


def test_a_snapshot_not_cut_while_frozen_fails() -> None:
    assert _held(cut_while_frozen=False).problems == [
        "the filesystem was thawed before the snapshot was cut: the snapshot is not "
        "application-consistent"
    ]


def test_no_freeze_is_a_note_not_a_failure() -> None:
    none = FreezeResult(frozen=False, reason="the namespace enforces restricted")
    assert none.problems == []
    assert none.notes == ["not frozen: the namespace enforces restricted"]
    assert none.with_log([Ack(1, 0, 101 * S)], torn_offset=0) == none
    assert none.to_dict()["cutWhileFrozen"] is None
