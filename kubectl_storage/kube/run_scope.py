"""The run scope: the one way operations create objects, and the promise to delete them.

Every object gets the run's labels. The scope records an object *before* asking the API to create
it (deleting something that never got created is harmless; forgetting something that did is a
leak), and deletes everything in reverse order when the run ends: success, error, timeout, Ctrl-C or
SIGTERM. While the deletion requests go out, further Ctrl-C and SIGTERM are ignored; once they are
sent, a second Ctrl-C only stops the waiting.

Some objects must not be deleted half-made: a VolumeSnapshot deleted while the snapshot controller
and the CSI sidecar are still cutting it can stay Terminating for good, with its source PVC held by
the controller's finalizer (external-snapshotter races; seen on our test cluster). Such objects are
created with a ``settled`` predicate, and the scope waits (bounded) until it holds before deleting.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from kubectl_storage.core.k8s.kinds import ResourceKind
from kubectl_storage.core.k8s.labels import new_run_id, run_labels, with_run_labels
from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.errors import ClusterError, Interrupted, Terminated
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.waits import ObjectKey, wait_all_gone, wait_for

log = logging.getLogger(__name__)

# How long cleanup waits for a half-made object to settle. A snapshot that needs longer is stuck
# anyway; it is deleted regardless and `cleanup` can check on it later.
SETTLE_TIMEOUT_S = 30.0

Settled = Callable[[JsonDict], bool]


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
        self._created: list[ObjectKey] = []
        self._settled: dict[ObjectKey, Settled] = {}
        self._previous_handlers: dict[int, Any] = {}
        self._received: int | None = None  # the first SIGINT/SIGTERM of the run
        self._cleaning = False
        self._undo: list[tuple[str, Callable[[], None]]] = []

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> RunScope:
        """Install the scope's SIGINT and SIGTERM handlers (main thread only)."""
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous_handlers[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Delete what the run created, then report an interruption as our own error type."""
        received = self._received  # signals during cleanup only cut the waiting short
        self._cleaning = True
        try:
            self.undo_all()  # also with --keep: a change to something not ours never stays
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
        if (exc_type is not None and issubclass(exc_type, KeyboardInterrupt)) or (
            received == signal.SIGINT
        ):
            raise Interrupted(
                f"interrupted; deleted what run {self.run_id} had created", ""
            ) from None
        if (exc_type is not None and issubclass(exc_type, _SigTerm)) or (
            received == signal.SIGTERM
        ):
            raise Terminated(
                f"terminated; deleted what run {self.run_id} had created", ""
            ) from None

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # Remember the signal as well as raising it: an exception raised from a signal handler
        # is lost when the handler happens to run inside a C finalizer (CPython's socket
        # finalizer, for one, saves and restores the error state around a ResourceWarning).
        # Seen here: Ctrl-C during `snapshot check`, and the check went on to pass with exit 0.
        if not self._cleaning and self._received is None:
            self._received = signum
        raise KeyboardInterrupt if signum == signal.SIGINT else _SigTerm()

    def checkpoint(self) -> None:
        """Raise again a Ctrl-C or SIGTERM that arrived but got lost on the way (main thread)."""
        if self._received is None or self._cleaning:
            return
        if threading.current_thread() is not threading.main_thread():
            return
        raise KeyboardInterrupt if self._received == signal.SIGINT else _SigTerm()

    # -- creating --------------------------------------------------------------------------
    def labelled(self, manifest: JsonDict) -> JsonDict:
        """A copy of ``manifest`` carrying the run's labels, also on pod and claim templates."""
        return with_run_labels(manifest, self.run_id, self.command)

    def create(
        self,
        kind: ResourceKind,
        manifest: JsonDict,
        namespace: str | None = None,
        *,
        settled: Settled | None = None,
    ) -> JsonDict:
        """Create an object with the run's labels and remember to delete it.

        ``settled``: for objects that must not be deleted half-made (see the module docstring),
        whether the object, as read from the API, may be deleted now.
        """
        self.checkpoint()  # never create more after a Ctrl-C, even a lost one
        body = self.labelled(manifest)
        meta = body["metadata"]
        if not meta.get("name"):
            raise ValueError("objects created in a run scope need a fixed metadata.name")
        ns = (namespace or meta.get("namespace") or self.api.namespace) if kind.namespaced else None
        if ns and kind.namespaced:
            meta["namespace"] = ns
        # Record first: an interrupt during the request must still lead to a delete.
        self._created.append((kind, meta["name"], ns))
        if settled is not None:
            self._settled[(kind, meta["name"], ns)] = settled
        log.debug("creating %s %s/%s", kind.kind, ns, meta["name"])
        return self.api.create(kind, body, ns)

    def adopt(self, kind: ResourceKind, name: str, namespace: str | None) -> None:
        """Take responsibility for an object created on our behalf (e.g. a StatefulSet's PVC)."""
        self._created.append((kind, name, namespace))

    def forget(self, kind: ResourceKind, name: str, namespace: str | None) -> None:
        """Stop tracking an object the operation has deleted itself."""
        self._created = [c for c in self._created if c != (kind, name, namespace)]
        self._settled.pop((kind, name, namespace), None)

    def delete_now(self, *objects: ObjectKey) -> None:
        """Delete tracked objects before the run ends (a class finished, a node inspected),
        newest first, all at once, then wait (bounded) until they are gone.

        Every deletion request goes out before any wait (a PVC's protection finalizer lets go
        as soon as its pod, deleted with no grace period, is gone). Each object stays tracked
        until its deletion was accepted, so an interruption before that still deletes it when
        the run ends; once accepted, Kubernetes finishes the deletion whether or not we wait (a
        Ctrl-C during the wait only stops the waiting).
        """
        pending = list(reversed(objects))
        self._wait_settled(pending)
        requested: list[ObjectKey] = []
        for kind, name, namespace in pending:
            if self.api.delete(kind, name, namespace, grace_period_s=deletion_grace_s(kind)):
                requested.append((kind, name, namespace))
            self.forget(kind, name, namespace)
        for kind, name, namespace in wait_all_gone(
            self.api, requested, timeout_s=self.cleanup_timeout_s
        ):
            self._still_terminating(kind, name, namespace)

    def defer(self, what: str, action: Callable[[], None]) -> Callable[[], None]:
        """Register the undoing of a change the run made to an object it did not create (a
        cordoned node). It runs when the run ends, before the run's objects are deleted, also
        with --keep and on Ctrl-C or SIGTERM; a failure is logged, never raised.

        Returns a function that undoes it now (and unregisters it once it succeeded, so an
        interruption halfway leaves it for the end of the run).
        """
        entry = (what, action)
        self._undo.append(entry)

        def now() -> None:
            if entry in self._undo:
                action()
                self._undo.remove(entry)

        return now

    def undo_all(self) -> None:
        """Run the registered undo actions, newest first, with Ctrl-C and SIGTERM ignored."""
        if not self._undo:
            return
        in_main = threading.current_thread() is threading.main_thread()
        saved = {}
        if in_main:
            for signum in (signal.SIGINT, signal.SIGTERM):
                saved[signum] = signal.signal(signum, signal.SIG_IGN)
        try:
            for what, action in reversed(self._undo):
                log.info("undoing: %s", what)
                try:
                    action()
                except Exception as exc:  # noqa: BLE001 - undo the rest, then say what is left
                    log.warning("could not undo (%s): %s; do it by hand", what, exc)
        finally:
            self._undo = []
            for signum, handler in saved.items():
                signal.signal(signum, handler)

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
        self._wait_settled(pending)
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
                    if self.api.delete(kind, name, ns, grace_period_s=deletion_grace_s(kind)):
                        requested.append((kind, name, ns))
                except Exception as exc:  # noqa: BLE001 - keep deleting the rest, then say so
                    log.warning("could not delete %s %s/%s: %s", kind.kind, ns, name, exc)
        finally:
            for signum, handler in saved.items():
                signal.signal(signum, handler)
        try:
            for kind, name, ns in wait_all_gone(
                self.api, requested, timeout_s=self.cleanup_timeout_s
            ):
                self._still_terminating(kind, name, ns)
        except KeyboardInterrupt:
            log.warning("deletion requested; not waiting for it to finish (second Ctrl-C)")
        self._created = []
        self._settled = {}

    def _still_terminating(self, kind: ResourceKind, name: str, namespace: str | None) -> None:
        log.warning(
            "%s %s/%s is still terminating; `kubectl storage cleanup --run-id %s` checks on it "
            "later",
            kind.kind,
            namespace,
            name,
            self.run_id,
        )

    def _wait_settled(self, objects: list[ObjectKey]) -> None:
        """Before deleting, wait (bounded) until half-made objects are finished.

        A Ctrl-C or SIGTERM here stops the waiting, never the deletion that follows."""
        for key in objects:
            settled = self._settled.get(key)
            if settled is None:
                continue
            kind, name, ns = key
            timeout_s = min(SETTLE_TIMEOUT_S, self.cleanup_timeout_s)
            try:
                current = self.api.get_or_none(kind, name, ns)
                if current is None or settled(current):
                    continue
                log.info(
                    "waiting up to %.0fs for %s %s to finish before deleting it (deleting it "
                    "half-made can leave it stuck)",
                    timeout_s,
                    kind.kind,
                    name,
                )
                wait_for(
                    self.api,
                    kind,
                    name,
                    settled,
                    namespace=ns,
                    timeout_s=timeout_s,
                    what="finished",
                )
            except ClusterError as exc:  # a timeout, or the API failing: delete regardless
                log.warning(
                    "%s %s/%s did not finish (%s); deleting it anyway",
                    kind.kind,
                    ns,
                    name,
                    exc.message,
                )
            except (KeyboardInterrupt, _SigTerm):
                log.warning("not waiting for %s %s to finish; deleting it now", kind.kind, name)
                return


def deletion_grace_s(kind: ResourceKind) -> int | None:
    """The grace period our objects are deleted with: none for pods (they run `sleep`-like
    commands that ignore SIGTERM; waiting 30 s for them buys nothing), the default otherwise."""
    return 0 if kind.kind == "Pod" else None
