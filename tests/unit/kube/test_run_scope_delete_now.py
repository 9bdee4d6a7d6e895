"""RunScope.delete_now deletes objects before the run ends (fio: a class's PVC and pod once the
class is done) all at once, and waits until they are gone (kube/run_scope.py).

The e2e tests (tests/e2e/test_fio.py) check on the real cluster that nothing is left after a run
and after Ctrl-C. What they cannot hit on demand is an interruption *between* two deletion
requests, or an object that stays Terminating; the stand-in API below produces both.
"""

from __future__ import annotations

import logging

import pytest

from kubectl_storage.core.k8s import kinds
from kubectl_storage.kube.run_scope import RunScope


class RecordingApi:
    """Deletes and gets, recorded; an object disappears ``gets_until_gone`` gets after its delete."""

    namespace = "ns"

    def __init__(self, gets_until_gone: dict[str, int] | None = None, fail_on: str = "") -> None:
        self.calls: list[tuple] = []
        self.gets_until_gone = dict(gets_until_gone or {})
        self.fail_on = fail_on
        self.deleted: set[str] = set()

    def delete(self, kind, name, namespace=None, *, grace_period_s=None, propagation="Background"):
        self.calls.append(("delete", kind.kind, name, grace_period_s))
        if name == self.fail_on:
            raise KeyboardInterrupt  # Ctrl-C while this request is on its way
        self.deleted.add(name)
        return True

    def get_or_none(self, kind, name, namespace=None):
        self.calls.append(("get", kind.kind, name))
        left = self.gets_until_gone.get(name, 0)
        if name in self.deleted and left <= 0:
            return None
        self.gets_until_gone[name] = left - 1
        return {"metadata": {"name": name}}


CREATED = [(kinds.CONFIGMAP, "cm", "ns"), (kinds.PVC, "pvc", "ns"), (kinds.POD, "pod", "ns")]


def _scope(api: RecordingApi, timeout_s: float = 120) -> RunScope:
    scope = RunScope(api, "fio", cleanup_timeout_s=timeout_s, run_id="abcd1234")  # type: ignore[arg-type]
    for kind, name, namespace in CREATED:
        scope.adopt(kind, name, namespace)
    return scope


def test_every_request_goes_out_before_any_wait_newest_first() -> None:
    api = RecordingApi(gets_until_gone={"pvc": 2})
    scope = _scope(api)
    scope.delete_now(*CREATED)

    deletes = [c for c in api.calls if c[0] == "delete"]
    assert deletes == [
        ("delete", "Pod", "pod", 0),  # no grace period: our pods ignore SIGTERM
        ("delete", "PersistentVolumeClaim", "pvc", None),
        ("delete", "ConfigMap", "cm", None),
    ]
    assert api.calls[:3] == deletes  # no get (no wait) between the deletion requests
    # the PVC was still there twice; the wait went on until it was gone, and no longer
    pvc_gets = [c for c in api.calls if c == ("get", "PersistentVolumeClaim", "pvc")]
    assert len(pvc_gets) == 3
    assert scope.created == []


def test_an_interruption_between_requests_leaves_the_rest_to_the_scope() -> None:
    api = RecordingApi(fail_on="pvc")
    scope = _scope(api)
    with pytest.raises(KeyboardInterrupt):
        scope.delete_now(*CREATED)
    # the pod's deletion was accepted, so it is no longer the scope's to delete; the PVC's
    # request may or may not have arrived and the ConfigMap's never went out: both stay
    assert [(k.kind, n) for k, n, _ in scope.created] == [
        ("ConfigMap", "cm"),
        ("PersistentVolumeClaim", "pvc"),
    ]


def test_an_object_still_terminating_at_the_deadline_is_named(caplog) -> None:
    api = RecordingApi(gets_until_gone={"pvc": 10**6})
    scope = _scope(api, timeout_s=0.05)
    with caplog.at_level(logging.WARNING):
        scope.delete_now(*CREATED)
    assert "PersistentVolumeClaim ns/pvc is still terminating" in caplog.text
    assert "cleanup --run-id abcd1234" in caplog.text
    assert scope.created == []  # its deletion was accepted; Kubernetes finishes it
