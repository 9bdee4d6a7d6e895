"""The run scope: the one way operations create objects, and the promise to delete them.

Every object gets the run's labels. The scope records an object *before* asking the API to create
it (deleting something that never got created is harmless; forgetting something that did is a
leak), and deletes everything in reverse order when the run ends: success, error, timeout, Ctrl-C or
SIGTERM. While the deletion requests go out, further Ctrl-C and SIGTERM are ignored; once they are
sent, a second Ctrl-C only stops the waiting.
"""

from __future__ import annotations

import copy
import logging
import signal
import threading
import time
from types import FrameType, TracebackType
from typing import Any

from kubectl_storage.core.kinds import ResourceKind
from kubectl_storage.core.labels import new_run_id, run_labels
from kubectl_storage.errors import Interrupted, Terminated
from kubectl_storage.kube.api import JsonDict, KubeApi
from kubectl_storage.kube.waits import wait_gone

log = logging.getLogger(__name__)


class _SigTerm(BaseException):
    """Raised in the main thread when SIGTERM arrives, so ``finally`` blocks and cleanup run."""


class RunScope:
    """Creates objects with the run's labels and deletes them when the run ends."""

    def __init__(
        self,
        api: KubeApi,
        command: str,
        *,
        keep: bool = False,
        cleanup_timeout_s: float = 120,
        run_id: str | None = None,
    ) -> None:
        """Prepare a scope; nothing is created until :meth:`create`."""
        self.api = api
        self.command = command
        self.run_id = run_id or new_run_id()
        self.labels = run_labels(self.run_id, command)
        self.keep = keep
        self.cleanup_timeout_s = cleanup_timeout_s
        self._created: list[tuple[ResourceKind, str, str | None]] = []
        self._previous_handlers: dict[int, Any] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> RunScope:
        """Install the SIGTERM handler (SIGINT already raises KeyboardInterrupt)."""
        if threading.current_thread() is threading.main_thread():
            self._previous_handlers[signal.SIGTERM] = signal.signal(
                signal.SIGTERM, self._on_sigterm
            )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Delete what the run created, then report an interruption as our own error type."""
        try:
            if self.keep:
                if self._created:
                    log.warning(
                        "--keep: leaving %d object(s) of run %s; delete them with "
                        "`kubectl storage cleanup --run-id %s --yes`",
                        len(self._created),
                        self.run_id,
                        self.run_id,
                    )
            else:
                self.delete_all()
        finally:
            for signum, handler in self._previous_handlers.items():
                signal.signal(signum, handler)
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
            raise Interrupted(
                f"interrupted; deleted what run {self.run_id} had created", ""
            ) from None
        if exc_type is not None and issubclass(exc_type, _SigTerm):
            raise Terminated(
                f"terminated; deleted what run {self.run_id} had created", ""
            ) from None

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        raise _SigTerm()

    # -- creating --------------------------------------------------------------------------
    def labelled(self, manifest: JsonDict) -> JsonDict:
        """A copy of ``manifest`` carrying the run's labels, also on pod and claim templates."""
        labelled = copy.deepcopy(manifest)
        _add_labels(labelled.setdefault("metadata", {}), self.labels)
        spec = labelled.get("spec") or {}
        template = spec.get("template")
        if isinstance(template, dict):
            _add_labels(template.setdefault("metadata", {}), self.labels)
        for claim in spec.get("volumeClaimTemplates") or []:
            _add_labels(claim.setdefault("metadata", {}), self.labels)
        return labelled

    def create(
        self, kind: ResourceKind, manifest: JsonDict, namespace: str | None = None
    ) -> JsonDict:
        """Create an object with the run's labels and remember to delete it."""
        body = self.labelled(manifest)
        meta = body["metadata"]
        if not meta.get("name"):
            raise ValueError("objects created in a run scope need a fixed metadata.name")
        ns = (namespace or meta.get("namespace") or self.api.namespace) if kind.namespaced else None
        if ns and kind.namespaced:
            meta["namespace"] = ns
        # Record first: an interrupt during the request must still lead to a delete.
        self._created.append((kind, meta["name"], ns))
        log.debug("creating %s %s/%s", kind.kind, ns, meta["name"])
        return self.api.create(kind, body, ns)

    def adopt(self, kind: ResourceKind, name: str, namespace: str | None) -> None:
        """Take responsibility for an object created on our behalf (e.g. a StatefulSet's PVC)."""
        self._created.append((kind, name, namespace))

    def forget(self, kind: ResourceKind, name: str, namespace: str | None) -> None:
        """Stop tracking an object the operation has deleted itself."""
        self._created = [c for c in self._created if c != (kind, name, namespace)]

    def delete_now(self, kind: ResourceKind, name: str, namespace: str | None) -> None:
        """Delete one tracked object before the run ends (e.g. a class finished), and wait."""
        self.forget(kind, name, namespace)
        if self.api.delete(kind, name, namespace, grace_period_s=_grace_for(kind)):
            wait_gone(self.api, kind, name, namespace=namespace, timeout_s=self.cleanup_timeout_s)

    @property
    def created(self) -> list[tuple[ResourceKind, str, str | None]]:
        """What the run has created so far, oldest first."""
        return list(self._created)

    # -- deleting --------------------------------------------------------------------------
    def delete_all(self) -> None:
        """Delete everything created, newest first, and wait (bounded) until it is gone."""
        if not self._created:
            return
        pending = list(reversed(self._created))
        in_main = threading.current_thread() is threading.main_thread()
        saved = {}
        if in_main:
            # Deletion requests must all go out, whatever the user presses meanwhile.
            for signum in (signal.SIGINT, signal.SIGTERM):
                saved[signum] = signal.signal(signum, signal.SIG_IGN)
        requested: list[tuple[ResourceKind, str, str | None]] = []
        try:
            log.info("cleaning up %d object(s) of run %s", len(pending), self.run_id)
            for kind, name, ns in pending:
                try:
                    if self.api.delete(kind, name, ns, grace_period_s=_grace_for(kind)):
                        requested.append((kind, name, ns))
                except Exception as exc:  # noqa: BLE001 - keep deleting the rest, then say so
                    log.warning("could not delete %s %s/%s: %s", kind.kind, ns, name, exc)
        finally:
            for signum, handler in saved.items():
                signal.signal(signum, handler)
        deadline = time.monotonic() + self.cleanup_timeout_s
        try:
            for kind, name, ns in requested:
                remaining = max(1.0, deadline - time.monotonic())
                if not wait_gone(self.api, kind, name, namespace=ns, timeout_s=remaining):
                    log.warning(
                        "%s %s/%s is still terminating; `kubectl storage cleanup --run-id %s` "
                        "checks on it later",
                        kind.kind,
                        ns,
                        name,
                        self.run_id,
                    )
        except KeyboardInterrupt:
            log.warning("deletion requested; not waiting for it to finish (second Ctrl-C)")
        self._created = []


def _add_labels(meta: dict[str, Any], labels: dict[str, str]) -> None:
    meta.setdefault("labels", {}).update(labels)


def _grace_for(kind: ResourceKind) -> int | None:
    # Our pods run `sleep`-like commands that ignore SIGTERM; waiting 30s for them buys nothing.
    return 0 if kind.kind == "Pod" else None
