"""The run scope and exec streams against the real API server: half-made objects settle before
they are deleted, a Ctrl-C is never lost, and execs leave no socket to the garbage collector.

The scope is driven in-process here (not through a command) so the moment an object settles is
under the test's control: a ConfigMap stands in for a VolumeSnapshot still being cut, and a
thread "finishes" it by patching it. The snapshot tests cover the same path through
`snapshot check` interrupted mid-snapshot.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import threading
import time
import warnings

import pytest

from kubectl_storage.core.k8s import kinds
from kubectl_storage.errors import Interrupted
from kubectl_storage.kube import run_scope
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.connection import ConnectionSettings, connect
from kubectl_storage.kube.podexec import exec_in_pod


def _done(obj: dict) -> bool:
    return (obj.get("data") or {}).get("state") == "done"


def _configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {}}


@pytest.fixture
def api(cluster, namespace) -> KubeApi:
    return KubeApi(connect(ConnectionSettings(kubeconfig=cluster.kubeconfig, namespace=namespace)))


def test_cleanup_waits_until_the_object_has_settled(api, cluster, namespace, caplog) -> None:
    caplog.set_level(logging.INFO, logger=run_scope.__name__)
    deleted_at: dict[str, float] = {}
    settled_at: dict[str, float] = {}

    def finish_later() -> None:
        time.sleep(2)
        # Taken before the patch is sent: the scope may see it and delete before patch_merge
        # returns here.
        settled_at["t"] = time.monotonic()
        api.patch_merge(kinds.CONFIGMAP, "half-made", {"data": {"state": "done"}}, namespace)

    original_delete = api.delete

    def recording_delete(kind, name, ns, **kw):  # type: ignore[no-untyped-def]
        deleted_at.setdefault(name, time.monotonic())
        return original_delete(kind, name, ns, **kw)

    api.delete = recording_delete  # type: ignore[method-assign]
    with run_scope.RunScope(api, "e2e-settle") as scope:
        scope.create(kinds.CONFIGMAP, _configmap("plain"), namespace)
        scope.create(kinds.CONFIGMAP, _configmap("half-made"), namespace, settled=_done)
        threading.Thread(target=finish_later, daemon=True).start()
    assert set(deleted_at) == {"half-made", "plain"}
    assert deleted_at["half-made"] >= settled_at["t"]
    assert deleted_at["plain"] >= settled_at["t"]  # nothing is deleted before it settles
    assert "to finish before deleting it" in caplog.text
    names = {
        c["metadata"]["name"] for c in cluster.get_json("configmaps", "-n", namespace)["items"]
    }
    assert not names & {"plain", "half-made"}


def test_cleanup_deletes_what_never_settles_after_a_bounded_wait(
    api, cluster, namespace, caplog, monkeypatch
) -> None:
    monkeypatch.setattr(run_scope, "SETTLE_TIMEOUT_S", 2.0)
    started = time.monotonic()
    with run_scope.RunScope(api, "e2e-settle") as scope:
        scope.create(kinds.CONFIGMAP, _configmap("stuck"), namespace, settled=_done)
    assert time.monotonic() - started >= 2.0
    assert "did not finish" in caplog.text
    assert (
        cluster.get_json("configmaps", "-n", namespace, "--field-selector", "metadata.name=stuck")[
            "items"
        ]
        == []
    )


def _lose_a_ctrl_c() -> None:
    """Press Ctrl-C and lose the KeyboardInterrupt, as happens when the handler runs inside a C
    finalizer that restores the error state (CPython's socket finalizer does)."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)
    except KeyboardInterrupt:
        pass


def test_a_lost_ctrl_c_stops_the_next_create(api, cluster, namespace) -> None:
    reached: list[str] = []

    def run() -> None:
        with run_scope.RunScope(api, "e2e-lost") as scope:
            scope.create(kinds.CONFIGMAP, _configmap("before"), namespace)
            _lose_a_ctrl_c()
            reached.append("lost")
            scope.create(kinds.CONFIGMAP, _configmap("after"), namespace)
            reached.append("created after")

    with pytest.raises(Interrupted):
        run()
    assert reached == ["lost"]
    names = {
        c["metadata"]["name"] for c in cluster.get_json("configmaps", "-n", namespace)["items"]
    }
    assert not names & {"before", "after"}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_lost_ctrl_c_still_ends_the_run_as_interrupted(api, cluster, namespace) -> None:
    # Nothing is created after the Ctrl-C: the run must not end as a success all the same.
    def run() -> None:
        with run_scope.RunScope(api, "e2e-lost") as scope:
            scope.create(kinds.CONFIGMAP, _configmap("only"), namespace)
            _lose_a_ctrl_c()

    with pytest.raises(Interrupted):
        run()
    names = {
        c["metadata"]["name"] for c in cluster.get_json("configmaps", "-n", namespace)["items"]
    }
    assert "only" not in names


def test_exec_leaves_no_socket_to_the_garbage_collector(api, cluster, namespace) -> None:
    # An unclosed socket is finalized at a random later moment, and a Ctrl-C that arrives then is
    # lost; every exec must close its websocket's socket itself.
    cluster.kubectl_run(
        "-n",
        namespace,
        "run",
        "sleeper",
        f"--image={cluster.busybox_image}",
        "--restart=Never",
        "--image-pull-policy=IfNotPresent",
        "--command",
        "--",
        "sleep",
        "600",
    )
    cluster.wait(namespace, "pod/sleeper", "condition=Ready")
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(3):
            assert exec_in_pod(api, "sleeper", ["true"], namespace=namespace).exit_code == 0
        gc.collect()
    unclosed = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == []
