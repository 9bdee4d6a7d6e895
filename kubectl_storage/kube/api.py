"""Plain-dict REST access to the Kubernetes API: get, list, create, delete, watch.

We speak JSON through the official client's configured transport (auth, TLS, proxies) but skip its
generated model classes: callers get plain dicts, the same shapes ``kubectl get -o json`` shows, and
one code path serves every kind in core/kinds.py.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from kubectl_storage.core.k8s.kinds import ResourceKind
from kubectl_storage.core.k8s.objects import JsonDict, dig
from kubectl_storage.errors import ClusterError, ForbiddenError, NotFoundError
from kubectl_storage.kube.connection import Connection, describe_unreachable

log = logging.getLogger(__name__)


class ApiError(ClusterError):
    """The API server answered with an error status."""

    def __init__(self, status: int, reason: str, message: str, hint: str = "") -> None:
        """Keep the HTTP status and the API's reason next to the message."""
        super().__init__(message, hint)
        self.status = status
        self.reason = reason


class ConflictError(ApiError):
    """409: the object exists already, or changed under us."""


class KubeApi:
    """REST calls returning plain dicts, errors mapped to our error types."""

    def __init__(self, connection: Connection) -> None:
        """Wrap an established connection."""
        self.connection = connection
        self.namespace = connection.namespace

    # -- low level -------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout_s: float | None = None,
        stream: bool = False,
    ) -> Any:
        """One API call; returns parsed JSON, or the raw streaming response when ``stream``."""
        from urllib3.exceptions import HTTPError  # noqa: PLC0415 - comes with the client

        api_client = self.connection.api_client
        query_params = [(k, v) for k, v in (query or {}).items() if v is not None]
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = content_type
        method_, url, header_params, body_, post = api_client.param_serialize(
            method=method,
            resource_path=path,
            query_params=query_params,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        timeout = timeout_s if timeout_s is not None else self.connection.request_timeout_s
        if timeout is None and not stream:
            # No request may block a run forever (its cleanup included); kubectl's default has
            # no limit, --request-timeout still sets one.
            timeout = DEFAULT_REQUEST_TIMEOUT_S
        try:
            response = api_client.call_api(
                method_, url, header_params, body_, post, _request_timeout=timeout
            )
        except HTTPError as exc:
            raise describe_unreachable(self.connection, exc) from exc
        except Exception as exc:
            # The client raises ApiException for some statuses itself.
            status = getattr(exc, "status", None)
            if status is None:
                raise describe_unreachable(self.connection, exc) from exc
            raise _api_error(int(status), getattr(exc, "body", "") or "", method, path) from exc
        if not 200 <= response.status <= 299:
            data = response.read()
            raise _api_error(response.status, data.decode("utf-8", "replace"), method, path)
        if stream:
            return response.response
        data = response.read()
        return json.loads(data) if data else {}

    # -- objects ---------------------------------------------------------------------------
    def get(self, kind: ResourceKind, name: str, namespace: str | None = None) -> JsonDict:
        """Get one object."""
        ns = self._ns(kind, namespace)
        result: JsonDict = self.request("GET", kind.object_path(name, ns))
        return result

    def get_or_none(
        self, kind: ResourceKind, name: str, namespace: str | None = None
    ) -> JsonDict | None:
        """Get one object, or None when it does not exist."""
        try:
            return self.get(kind, name, namespace)
        except NotFoundError:
            return None

    def list(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        all_namespaces: bool = False,
    ) -> list[JsonDict]:
        """List objects (following ``continue`` tokens), in one namespace or all of them."""
        ns = None if all_namespaces else self._ns(kind, namespace)
        items: list[JsonDict] = []
        token: str | None = None
        while True:
            page = self.request(
                "GET",
                kind.collection_path(ns),
                query={
                    "labelSelector": label_selector,
                    "fieldSelector": field_selector,
                    "limit": 500,
                    "continue": token,
                },
            )
            items.extend(page.get("items") or [])
            token = dig(page, "metadata", "continue")
            if not token:
                return items

    def create(
        self, kind: ResourceKind, manifest: JsonDict, namespace: str | None = None
    ) -> JsonDict:
        """Create an object from a manifest dict."""
        ns = self._ns(kind, namespace or dig(manifest, "metadata", "namespace"))
        created: JsonDict = self.request("POST", kind.collection_path(ns), body=manifest)
        return created

    def patch_merge(
        self, kind: ResourceKind, name: str, patch: JsonDict, namespace: str | None = None
    ) -> JsonDict:
        """Apply a JSON merge patch."""
        ns = self._ns(kind, namespace)
        patched: JsonDict = self.request(
            "PATCH",
            kind.object_path(name, ns),
            body=patch,
            content_type="application/merge-patch+json",
        )
        return patched

    def delete(
        self,
        kind: ResourceKind,
        name: str,
        namespace: str | None = None,
        *,
        grace_period_s: int | None = None,
        propagation: str = "Background",
    ) -> bool:
        """Request deletion; returns False when the object was already gone."""
        ns = self._ns(kind, namespace)
        body: JsonDict = {
            "kind": "DeleteOptions",
            "apiVersion": "v1",
            "propagationPolicy": propagation,
        }
        if grace_period_s is not None:
            body["gracePeriodSeconds"] = grace_period_s
        try:
            self.request("DELETE", kind.object_path(name, ns), body=body)
        except NotFoundError:
            return False
        return True

    def watch(
        self,
        kind: ResourceKind,
        namespace: str | None = None,
        *,
        field_selector: str | None = None,
        label_selector: str | None = None,
        resource_version: str | None = None,
        timeout_s: int = 60,
    ) -> Iterator[tuple[str, JsonDict]]:
        """Yield (event type, object) until the server ends the watch after ``timeout_s``."""
        ns = self._ns(kind, namespace)
        response = self.request(
            "GET",
            kind.collection_path(ns),
            query={
                "watch": "true",
                "fieldSelector": field_selector,
                "labelSelector": label_selector,
                "resourceVersion": resource_version,
                "timeoutSeconds": max(1, int(timeout_s)),
                "allowWatchBookmarks": "false",
            },
            stream=True,
            # the read timeout must outlast the server-side watch timeout
            timeout_s=timeout_s + 10,
        )
        from urllib3.exceptions import HTTPError  # noqa: PLC0415 - comes with the client

        buffer = b""
        ended = False
        try:
            for chunk in _stream_chunks(response, self.connection, HTTPError):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        # Usually 410 Gone (resourceVersion too old); the caller re-lists.
                        return
                    yield event.get("type", ""), event.get("object") or {}
            ended = True
        finally:
            if not ended:
                # Left mid-stream (the caller found what it waited for, an error, Ctrl-C): the
                # server is still sending on this connection, so it must not go back to the
                # pool for the next request to be sent on.
                response.close()
            response.release_conn()

    def _ns(self, kind: ResourceKind, namespace: str | None) -> str | None:
        if not kind.namespaced:
            return None
        return namespace or self.namespace


#: The limit of one API request when --request-timeout sets none (watches have their own).
DEFAULT_REQUEST_TIMEOUT_S = 60.0


def _stream_chunks(
    response: Any, connection: Connection, errors: type[Exception]
) -> Iterator[bytes]:
    """The watch stream's chunks; a server that goes away mid-stream is a cluster error."""
    try:
        yield from response.stream(4096, decode_content=False)
    except errors as exc:
        raise describe_unreachable(connection, exc) from exc


def _api_error(status: int, body: str, method: str, path: str) -> ApiError:
    """Turn an error Status body into the matching error type."""
    message, reason = body.strip()[:500], ""
    try:
        decoded = json.loads(body)
        message = decoded.get("message") or message
        reason = decoded.get("reason") or ""
    except ValueError:
        pass
    log.debug("%s %s -> %s %s", method, path, status, message)
    if status == 404:
        return _NotFoundError(status, reason, message)
    if status == 403 and "PodSecurity" in message:
        return _ForbiddenError(
            status,
            reason,
            message,
            "The namespace's Pod Security level does not admit this pod. Use a namespace that "
            "allows it (-n), or label one: kubectl label ns NAME "
            "pod-security.kubernetes.io/enforce=privileged (node inspection needs privileged).",
        )
    if status == 403:
        return _ForbiddenError(
            status,
            reason,
            message,
            "Ask a cluster admin for the permissions listed by `kubectl storage rbac`, "
            "or run as a user who has them.",
        )
    if status == 401:
        return ApiError(
            status,
            reason,
            f"the cluster rejected our credentials: {message}",
            "Refresh the kubeconfig credentials (log in again) and retry.",
        )
    if status == 409:
        return ConflictError(status, reason, message)
    return ApiError(status, reason, message)


class _NotFoundError(ApiError, NotFoundError):
    """404 from the API."""


class _ForbiddenError(ApiError, ForbiddenError):
    """403 from the API (RBAC or admission)."""
