"""Objects earlier runs left behind, found by our labels, and the CleanupReport."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubectl_storage.core.k8s.labels import COMMAND, RUN_ID
from kubectl_storage.core.k8s.quantities import (
    parse_duration_s as parse_duration_s,  # lives there since --help needs it; kept for cli/cleanup
)
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import Outcome, judge


@dataclass(frozen=True)
class Leftover:
    """One object carrying our managed-by label."""

    kind: str
    namespace: str | None
    name: str
    run_id: str
    command: str
    created: datetime | None
    deleted: bool = False
    terminating: bool = False
    finalizers: tuple[str, ...] = ()

    def age_s(self, now: datetime) -> float | None:
        """Seconds since creation, None when unknown."""
        return (now - self.created).total_seconds() if self.created else None

    def to_dict(self) -> dict[str, Any]:
        """Contract shape."""
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "runId": self.run_id,
            "command": self.command,
            "created": self.created.isoformat().replace("+00:00", "Z") if self.created else None,
            "deleted": self.deleted,
            "terminating": self.terminating,
            "finalizers": list(self.finalizers),
        }


def leftover_from_object(kind: str, obj: dict[str, Any]) -> Leftover:
    """Describe an API object as a Leftover."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    stamp = meta.get("creationTimestamp")
    created = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
    return Leftover(
        kind=kind,
        namespace=meta.get("namespace"),
        name=str(meta.get("name", "")),
        run_id=str(labels.get(RUN_ID, "")),
        command=str(labels.get(COMMAND, "")),
        created=created,
        terminating=bool(meta.get("deletionTimestamp")),
        finalizers=tuple(str(f) for f in meta.get("finalizers") or ()),
    )


# Why an object we deleted can still be there: the finalizers Kubernetes and the CSI snapshot
# machinery put on our kinds of objects, and what to do about each.
FINALIZER_HINTS = {
    "kubernetes.io/pvc-protection": "a pod still uses the PVC; it goes once the pod is gone.",
    "snapshot.storage.kubernetes.io/pvc-as-source-protection": (
        "the snapshot controller holds the PVC while a VolumeSnapshot of it is being taken. If "
        "no snapshot of it is in progress (kubectl get volumesnapshot -n {namespace}), the "
        "controller lost track of it (an external-snapshotter race when a snapshot is deleted "
        "mid-creation): kubectl patch pvc {name} -n {namespace} --type=merge "
        '-p \'{{"metadata":{{"finalizers":null}}}}\' releases it.'
    ),
    "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection": (
        "a PVC is still being restored from the snapshot, or was when the snapshot controller "
        "last looked: it looks again only when the snapshot changes or at its resync (15 "
        "minutes by default). `cleanup --yes` nudges it; by hand: kubectl annotate "
        "volumesnapshot {name} -n {namespace} kubectl-storage/nudged-at=now --overwrite."
    ),
    "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection": (
        "the snapshot's VolumeSnapshotContent is still being deleted by the CSI driver's "
        "snapshotter sidecar; its logs (and kubectl describe volumesnapshotcontent) say why."
    ),
    "external-provisioner.volume.kubernetes.io/finalizer": (
        "the CSI provisioner is still deleting the volume; its logs say why."
    ),
}


def finalizer_hints(item: Leftover) -> list[str]:
    """One line per finalizer that holds ``item``: what it waits for, or that it is unknown."""
    unknown = "set by another controller; see its documentation."
    return [
        f"{finalizer}: "
        + FINALIZER_HINTS.get(finalizer, unknown).format(
            name=item.name, namespace=item.namespace or ""
        )
        for finalizer in item.finalizers
    ]


def select_leftovers(
    leftovers: list[Leftover],
    *,
    now: datetime,
    run_id: str | None = None,
    older_than_s: float | None = None,
) -> list[Leftover]:
    """Filter by run id and minimum age (objects of unknown age are kept)."""
    chosen = []
    for item in leftovers:
        if run_id and item.run_id != run_id:
            continue
        age = item.age_s(now)
        if older_than_s is not None and age is not None and age < older_than_s:
            continue
        chosen.append(item)
    return chosen


@dataclass(frozen=True)
class CleanupReport:
    """What cleanup found and, with --yes, deleted."""

    objects: tuple[Leftover, ...]
    deleted: bool
    still_present: tuple[Leftover, ...] = ()

    @property
    def outcome(self) -> Outcome:
        """fail while leftovers remain: listed and not deleted (``leftovers``), or still there
        after the delete (``still-present``)."""
        return judge(
            fail=[
                *(["leftovers"] if self.objects and not self.deleted else []),
                *(["still-present"] if self.still_present else []),
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        """The report with apiVersion and kind."""
        return report_envelope(
            "CleanupReport",
            self.outcome,
            {
                "deleted": self.deleted,
                "objects": [o.to_dict() for o in self.objects],
                "stillPresent": [o.to_dict() for o in self.still_present],
            },
        )
