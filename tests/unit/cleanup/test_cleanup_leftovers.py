"""Leftover selection and durations for `cleanup`."""

import io
from datetime import UTC, datetime, timedelta

import pytest

from kubectl_storage.core.cleanup import (
    CleanupReport,
    finalizer_hints,
    leftover_from_object,
    parse_duration_s,
    select_leftovers,
)
from kubectl_storage.core.k8s.objects import deletion_waits_for_resync
from kubectl_storage.render.cleanup import write_cleanup_table

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def obj(name: str, run: str, age: timedelta | None) -> dict:
    meta: dict = {
        "name": name,
        "namespace": "ns",
        "labels": {"kubectl-storage/run-id": run, "kubectl-storage/command": "fio"},
    }
    if age is not None:
        meta["creationTimestamp"] = (NOW - age).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("1h", 3600), ("2h30m", 9000), ("1d", 86400), ("1.5h", 5400)],
)
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration_s(text) == seconds


@pytest.mark.parametrize("text", ["", "1", "5x", "1h 30m", "h"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration_s(text)


def test_select_by_run_and_age() -> None:
    items = [
        leftover_from_object("Pod", obj("old", "aaaa1111", timedelta(hours=2))),
        leftover_from_object("Pod", obj("new", "aaaa1111", timedelta(minutes=5))),
        leftover_from_object("Pod", obj("other", "bbbb2222", timedelta(hours=3))),
        leftover_from_object("Pod", obj("unknown-age", "aaaa1111", None)),
    ]
    assert [i.name for i in select_leftovers(items, now=NOW)] == [
        "old",
        "new",
        "other",
        "unknown-age",
    ]
    assert [i.name for i in select_leftovers(items, now=NOW, run_id="aaaa1111")] == [
        "old",
        "new",
        "unknown-age",
    ]
    assert [i.name for i in select_leftovers(items, now=NOW, older_than_s=3600)] == [
        "old",
        "other",
        "unknown-age",
    ]


def test_report_contract() -> None:
    item = leftover_from_object("PersistentVolumeClaim", obj("pvc", "aaaa1111", timedelta(0)))
    report = CleanupReport(objects=(item,), deleted=False).to_dict()
    assert report["kind"] == "CleanupReport"
    assert report["objects"][0] == {
        "kind": "PersistentVolumeClaim",
        "namespace": "ns",
        "name": "pvc",
        "runId": "aaaa1111",
        "command": "fio",
        "created": "2026-11-29T12:00:00Z",
        "deleted": False,
        "terminating": False,
        "finalizers": [],
    }


def _held_pvc() -> dict:
    # Shape of the PVC left by an interrupted `snapshot check` on the test cluster (CI, 2026-11-29)
    held = obj("ks-snapshot-check-47xmjxuo-source", "47xmjxuo", timedelta(minutes=19))
    held["metadata"]["deletionTimestamp"] = "2026-11-29T12:00:00Z"
    held["metadata"]["finalizers"] = ["snapshot.storage.kubernetes.io/pvc-as-source-protection"]
    return held


def test_still_present_objects_say_what_holds_them() -> None:
    item = leftover_from_object("PersistentVolumeClaim", _held_pvc())
    assert item.terminating
    assert item.finalizers == ("snapshot.storage.kubernetes.io/pvc-as-source-protection",)
    (hint,) = finalizer_hints(item)
    assert hint.startswith("snapshot.storage.kubernetes.io/pvc-as-source-protection: ")
    assert "kubectl patch pvc ks-snapshot-check-47xmjxuo-source -n ns --type=merge" in hint
    assert """-p '{"metadata":{"finalizers":null}}'""" in hint
    report = CleanupReport(objects=(item,), deleted=True, still_present=(item,))
    out = io.StringIO()
    write_cleanup_table(report, out)
    text = out.getvalue()
    assert "1 object(s) are still terminating." in text
    assert "PersistentVolumeClaim ks-snapshot-check-47xmjxuo-source -n ns: held by " in text


def test_unknown_finalizers_are_named_not_explained() -> None:
    held = _held_pvc()
    held["metadata"]["finalizers"] = ["example.com/backup-in-progress"]
    (hint,) = finalizer_hints(leftover_from_object("PersistentVolumeClaim", held))
    assert (
        hint == "example.com/backup-in-progress: set by another controller; see its documentation."
    )


_AS_SOURCE = "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection"
_BOUND = "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection"


@pytest.mark.parametrize(
    ("metadata", "stuck"),
    [
        # deleted, and held by the finalizer the controller forgets to look at again
        ({"deletionTimestamp": "2026-12-01T14:27:15Z", "finalizers": [_AS_SOURCE, _BOUND]}, True),
        # not deleted: nothing to nudge, whatever holds it
        ({"finalizers": [_AS_SOURCE, _BOUND]}, False),
        # deleted, and waiting for the CSI sidecar, which does requeue
        ({"deletionTimestamp": "2026-12-01T14:27:15Z", "finalizers": [_BOUND]}, False),
        ({"deletionTimestamp": "2026-12-01T14:27:15Z"}, False),
    ],
)
def test_which_deletions_wait_for_a_resync(metadata: dict, stuck: bool) -> None:
    assert deletion_waits_for_resync({"metadata": metadata}) is stuck
