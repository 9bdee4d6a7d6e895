"""`snapshot check --freeze`: an application-consistent cut, with the source filesystem frozen
(FIFREEZE, fsfreeze(8)) from just before the VolumeSnapshot is created until it is cut.

Freezing needs CAP_SYS_ADMIN, which no pod of the restricted or baseline Pod Security level may
have. So the writer stays restricted and a separate freezer pod, root with CAP_SYS_ADMIN only,
mounts the same claim on the writer's node (a pod affinity to the writer) and freezes through
its own mount: a freeze acts on the filesystem, whichever mount asks. Where the namespace does
not allow that pod, the check runs without a freeze and the report says why.

A frozen filesystem stays frozen when the process that froze it dies; so the freeze starts a
watchdog in the freezer pod that thaws after FREEZE_WATCHDOG_S, the run thaws as soon as the
snapshot is cut, and an interrupted run thaws before it deletes anything.

Pure: the freezer's manifest, its shell commands, and the result.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.core.snapshot.log_writer import Ack, written_between

#: The label that names the writer pod for the freezer's pod affinity.
ROLE_LABEL = "kubectl-storage/role"
#: Where the freezer mounts the source claim.
FREEZER_MOUNT = "/freeze"
#: The longest a freeze may last: the watchdog thaws then, whatever the run does.
FREEZE_WATCHDOG_S = 30
#: Files in every container that come from the node's disk (kubelet's pod directory, the
#: runtime's sandbox directory): their filesystem is the node's.
NODE_FILES = ("/etc/hosts", "/etc/hostname", "/dev/termination-log")
#: Clock margin between the run's view of the freeze and the writer's acknowledgements.
CLOCK_MARGIN_NS = 300_000_000


def freezer_pod(
    name: str, namespace: str, image: str, *, pvc: str, writer_labels: dict[str, str]
) -> JsonDict:
    """The freezer: root with CAP_SYS_ADMIN only, next to the writer, idle until exec'd."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "terminationGracePeriodSeconds": 0,
            "securityContext": {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}},
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": dict(writer_labels)},
                            "topologyKey": "kubernetes.io/hostname",
                        }
                    ]
                }
            },
            "containers": [
                {
                    "name": "freezer",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "command": ["sleep", "86400"],
                    # CAP_SYS_ADMIN for FIFREEZE/FITHAW and nothing else; Kubernetes refuses
                    # allowPrivilegeEscalation: false next to CAP_SYS_ADMIN, so it is unset.
                    "securityContext": {
                        "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
                        "readOnlyRootFilesystem": True,
                    },
                    "volumeMounts": [
                        {"name": "source", "mountPath": FREEZER_MOUNT},
                        {"name": "tmp", "mountPath": "/tmp"},
                    ],
                }
            ],
            "volumes": [
                {"name": "source", "persistentVolumeClaim": {"claimName": pvc}},
                {"name": "tmp", "emptyDir": {}},
            ],
        },
    }


def freeze_command(watchdog_s: int = FREEZE_WATCHDOG_S) -> list[str]:
    """Freeze, then leave a watchdog behind that thaws after ``watchdog_s`` seconds.

    The watchdog runs in its own session so it outlives the exec; it writes its pid first, so
    the thaw can stop it, and a mark when it had to thaw."""
    mount = shlex.quote(FREEZER_MOUNT)
    script = (
        # Files the kubelet and the runtime bind-mount from the node's own disk: a volume on the
        # same filesystem (a hostPath-like driver) would freeze the node with it.
        f"v=$(stat -c %d {mount}) || exit 4\n"
        f"for f in {' '.join(NODE_FILES)}; do\n"
        '  if [ -e "$f" ] && [ "$(stat -c %d "$f")" = "$v" ]; then echo "node-fs $f"; exit 3; fi\n'
        "done\n"
        f"fsfreeze --freeze {mount} || exit $?\n"
        f"setsid sh -c 'echo $$ > /tmp/watchdog.pid; sleep {int(watchdog_s)}; "
        f"fsfreeze --unfreeze {mount} && date +%s > /tmp/watchdog.thawed' "
        "</dev/null >/dev/null 2>&1 &\n"
        "echo frozen\n"
    )
    return ["sh", "-c", script]


def thaw_command() -> list[str]:
    """Stop the watchdog and thaw; prints ``thawed``, or ``watchdog`` when it had thawed first."""
    mount = shlex.quote(FREEZER_MOUNT)
    script = (
        'if [ -f /tmp/watchdog.pid ]; then kill "$(cat /tmp/watchdog.pid)" 2>/dev/null; fi\n'
        "if [ -f /tmp/watchdog.thawed ]; then echo watchdog; exit 0; fi\n"
        f"fsfreeze --unfreeze {mount} && echo thawed\n"
    )
    return ["sh", "-c", script]


def freeze_failure(exit_code: int, stdout: str, stderr: str) -> str:
    """Why the freeze command did not freeze, in words."""
    said = stdout.strip()
    if exit_code == 3 and said.startswith("node-fs "):
        return (
            f"the volume is on the node's own filesystem (the one holding {said[8:]} of the pod), "
            "and freezing it would stall the node"
        )
    return f"fsfreeze failed: {(stderr or stdout).strip()[:300] or f'exit {exit_code}'}"


def freeze_refusal(pod_security: str, block: bool) -> str | None:
    """Why this run may not freeze, before anything is created; None when it may try."""
    if block:
        return "a raw block volume has no filesystem to freeze"
    if pod_security != "privileged":
        return (
            f'the namespace enforces the "{pod_security}" Pod Security level, and freezing '
            "needs a pod with CAP_SYS_ADMIN (allowed only at the privileged level)"
        )
    return None


@dataclass(frozen=True)
class FreezeResult:
    """What the freeze did around the cut."""

    frozen: bool
    #: Why there was no freeze (refused by the namespace, or fsfreeze failed), when there was not.
    reason: str | None = None
    frozen_ns: int | None = None
    thawed_ns: int | None = None
    thawed_by: str | None = None  # "run" or "watchdog"
    #: The snapshot had a creationTime (was cut) before the thaw.
    cut_while_frozen: bool = True
    #: Records the writer acknowledged while the filesystem was frozen (with --under-load).
    acknowledged_while_frozen: int | None = None
    #: Offset of a torn record in the restored log (with --under-load): a frozen filesystem
    #: finishes every write in progress before it freezes, so none may be torn.
    torn_offset: int | None = None

    @property
    def frozen_seconds(self) -> float | None:
        """How long the filesystem was frozen, as the run saw it."""
        if self.frozen_ns is None or self.thawed_ns is None:
            return None
        return (self.thawed_ns - self.frozen_ns) / 1e9

    @property
    def problems(self) -> list[str]:
        """A freeze that did not hold the writes, or ended before the snapshot was cut."""
        found = []
        if self.frozen and (self.thawed_by == "watchdog" or not self.cut_while_frozen):
            found.append(
                "the filesystem was thawed "
                + (f"by its {FREEZE_WATCHDOG_S}s watchdog " if self.thawed_by == "watchdog" else "")
                + "before the snapshot was cut: the snapshot is not application-consistent"
            )
        if self.acknowledged_while_frozen:
            found.append(
                f"{self.acknowledged_while_frozen} record(s) were acknowledged while the "
                "filesystem was frozen: the freeze did not hold the writes"
            )
        if self.torn_offset is not None and self.thawed_by == "run":
            found.append(
                f"the restored log has a torn record at offset {self.torn_offset} although the "
                "filesystem was frozen for the cut"
            )
        return found

    @property
    def notes(self) -> list[str]:
        """Why the check ran without a freeze, when it did (whether the cut was crash-consistent
        is the under-load check's to say: UnderLoadResult.crash_consistent)."""
        return [] if self.frozen else [f"not frozen: {self.reason}"]

    def with_log(self, acks: Sequence[Ack], torn_offset: int | None) -> FreezeResult:
        """The result judged against the writer's acknowledgements and the restored log."""
        if not self.frozen or self.frozen_ns is None or self.thawed_ns is None:
            return self
        inside = written_between(
            acks, self.frozen_ns + CLOCK_MARGIN_NS, self.thawed_ns - CLOCK_MARGIN_NS
        )
        return replace(self, acknowledged_while_frozen=inside, torn_offset=torn_offset)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        seconds = self.frozen_seconds
        return {
            "frozen": self.frozen,
            "reason": self.reason,
            "frozenSeconds": round(seconds, 2) if seconds is not None else None,
            "thawedBy": self.thawed_by,
            "cutWhileFrozen": self.cut_while_frozen if self.frozen else None,
            "acknowledgedWhileFrozen": self.acknowledged_while_frozen,
            "tornRecordOffset": self.torn_offset,
            "problems": self.problems,
            "notes": self.notes,
        }
