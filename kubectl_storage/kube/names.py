"""Names of cluster objects for shell completion: quick, bounded in time, and silent.

A completion runs while the user waits at a prompt, so a lookup here never raises and never
takes longer than its timeout: the request runs in a daemon thread and whatever has not come
back by then is dropped (an unreachable server, a slow exec credential plugin, retries). The
caller gets an empty list and prints no candidate. Connection settings are the command line's
(--kubeconfig, --context, -n), resolved as every command resolves them (kube/connection.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubectl_storage.core.k8s import kinds
from kubectl_storage.core.k8s.objects import dig, is_default_storage_class, name_of
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.connection import (
    ConnectionSettings,
    connect,
    kubeconfig_paths,
    resolve_namespace,
)

#: Upper bound of one lookup, from reading the kubeconfig (or importing the client) to the last
#: page.
LOOKUP_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Name:
    """One candidate: an object's name and a few words about it."""

    name: str
    description: str = ""


def _storage_class(obj: dict[str, Any]) -> str:
    provisioner = str(obj.get("provisioner") or "")
    return f"{provisioner} (default)" if is_default_storage_class(obj) else provisioner


def _node(obj: dict[str, Any]) -> str:
    for condition in dig(obj, "status", "conditions") or []:
        if isinstance(condition, dict) and condition.get("type") == "Ready":
            return "Ready" if condition.get("status") == "True" else "NotReady"
    return ""


def _pvc(obj: dict[str, Any]) -> str:
    phase = str(dig(obj, "status", "phase") or "")
    storage_class = str(dig(obj, "spec", "storageClassName") or "")
    return ", ".join(part for part in (phase, storage_class) if part)


def _snapshot(obj: dict[str, Any]) -> str:
    source = dig(obj, "spec", "source", "persistentVolumeClaimName")
    ready = "ready" if dig(obj, "status", "readyToUse") is True else "not ready"
    return f"of PVC {source}, {ready}" if source else ready


def _snapshot_class(obj: dict[str, Any]) -> str:
    return str(obj.get("driver") or "")


def _nothing(obj: dict[str, Any]) -> str:
    return ""


#: What can be looked up: the kind, and how to describe one of its objects.
LOOKUPS: dict[str, tuple[kinds.ResourceKind, Callable[[dict[str, Any]], str]]] = {
    "storageclass": (kinds.STORAGE_CLASS, _storage_class),
    "volumesnapshotclass": (kinds.VOLUME_SNAPSHOT_CLASS, _snapshot_class),
    "node": (kinds.NODE, _node),
    "pvc": (kinds.PVC, _pvc),
    "volumesnapshot": (kinds.VOLUME_SNAPSHOT, _snapshot),
    "namespace": (kinds.NAMESPACE, _nothing),
}


def _list(what: str, settings: ConnectionSettings, timeout_s: float) -> list[Name]:
    # Imported here, inside the bounded thread, as the client is: ssl, http.client and yaml
    # are part of the wait, which must end within the timeout however long they take.
    from kubectl_storage.kube import direct  # noqa: PLC0415

    kind, describe = LOOKUPS[what]
    namespace = resolve_namespace(settings) if kind.namespaced else None
    try:
        # A direct GET: importing the kubernetes client alone takes longer than a TAB should.
        where = direct.target(settings)
        items = direct.list_items(where, kind.collection_path(namespace), timeout_s)
    except direct.UnsupportedError:
        # connect() imports the client, inside the bounded thread: the import is part of the wait.
        api = KubeApi(connect(replace(settings, request_timeout_s=timeout_s)))
        items = api.list(kind)
    names = [Name(name_of(obj), describe(obj)) for obj in items]
    return sorted((n for n in names if n.name), key=lambda n: n.name)


def list_names(
    what: str, settings: ConnectionSettings, *, timeout_s: float = LOOKUP_TIMEOUT_S
) -> list[Name]:
    """Names of the objects of one kind (a key of :data:`LOOKUPS`), sorted; namespaced kinds
    in the namespace the settings resolve to. Empty on any error or after ``timeout_s``.

    A lookup still running at the deadline is left to its daemon thread; the process should
    exit soon after (the completion command does).
    """
    if what not in LOOKUPS:
        return []
    found: list[list[Name]] = []

    def work() -> None:
        try:
            found.append(_list(what, settings, timeout_s))
        except Exception:  # noqa: BLE001 - a failed lookup only means no candidates
            found.append([])

    thread = threading.Thread(target=work, name=f"complete-{what}", daemon=True)
    thread.start()
    thread.join(timeout_s)
    return found[0] if found else []


def context_names(settings: ConnectionSettings) -> list[Name]:
    """The contexts of the kubeconfig files kubectl would read (no network), sorted; the
    description is the context's cluster."""
    import yaml  # noqa: PLC0415 - only completion of --context reads the files itself

    contexts: dict[str, str] = {}
    for path in kubeconfig_paths(settings):
        try:
            document = yaml.safe_load(Path(path).read_text())
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(document, dict):
            continue
        for entry in document.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name"):
                cluster = dig(entry, "context", "cluster")
                contexts.setdefault(str(entry["name"]), str(cluster or ""))
    return [Name(name, cluster) for name, cluster in sorted(contexts.items())]
