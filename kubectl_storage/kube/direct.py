"""GET from the API server with the kubeconfig's credentials, without the kubernetes client.

Shell completion lists names while the user waits at a TAB. Importing the generated client
(``kubernetes.config`` and ``kubernetes.client``: pydantic, urllib3, requests-oauthlib, dateutil)
takes longer than the whole lookup may (tests/bench/README.md, "Start-up"), so kube/names.py asks
here first. The kubeconfig is read as kubectl reads it (--kubeconfig, else every KUBECONFIG file,
the first file to name a context, cluster or user wins; --context else current-context), and
what nearly every kubeconfig uses is supported:

* the cluster: an ``https://`` (or ``http://``) server, its CA (``certificate-authority`` file or
  ``-data``) or ``insecure-skip-tls-verify``, and ``tls-server-name``;
* the user: a bearer ``token`` (or ``tokenFile``), a client certificate and key (files or
  ``-data``), or an ``exec`` credential plugin that returns either (run as the client runs it:
  non-interactive, KUBERNETES_EXEC_INFO set, in the kubeconfig's folder).

Anything else raises :class:`UnsupportedError` before any request, and the caller uses the client
instead: an ``auth-provider``, username/password, impersonation, a ``proxy-url`` or a proxy in the
environment, and running in a pod without a kubeconfig.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

from kubectl_storage.core.k8s.objects import JsonDict
from kubectl_storage.kube.connection import ConnectionSettings, kubeconfig_paths

_PROXY_VARIABLES = ("https_proxy", "http_proxy", "all_proxy")
_UNSUPPORTED_USER_KEYS = (
    "auth-provider",
    "username",
    "password",
    "as",
    "as-uid",
    "as-groups",
    "as-user-extra",
)


class UnsupportedError(Exception):
    """The kubeconfig needs something only the kubernetes client does; use the client."""


class RequestError(Exception):
    """The request could not be made, or the server answered with an error."""


@dataclass
class _Entry:
    """A cluster, user or context stanza and the folder its relative paths are relative to."""

    value: dict[str, Any]
    base: Path


@dataclass
class _Kubeconfig:
    current: str | None = None
    contexts: dict[str, _Entry] = field(default_factory=dict)
    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)


def _load(paths: list[str]) -> _Kubeconfig:
    """kubectl's merge: the first file to set current-context or to name an entry wins."""
    import yaml  # noqa: PLC0415 - as in connection.py: only lookups read the files themselves

    merged = _Kubeconfig()
    for path in paths:
        file = Path(path)
        if not file.is_file():
            continue
        document = yaml.safe_load(file.read_text())
        if not isinstance(document, dict):
            continue
        base = file.resolve().parent
        if merged.current is None and document.get("current-context"):
            merged.current = str(document["current-context"])
        for key, target in (
            ("contexts", merged.contexts),
            ("clusters", merged.clusters),
            ("users", merged.users),
        ):
            inner = key[:-1]  # "context", "cluster", "user"
            for item in document.get(key) or []:
                if isinstance(item, dict) and item.get("name") and item["name"] not in target:
                    target[str(item["name"])] = _Entry(item.get(inner) or {}, base)
    return merged


@dataclass
class Target:
    """Where to send requests and how to authenticate."""

    scheme: str
    host: str
    port: int
    prefix: str  # a path the server URL carries (a proxying front end), without a trailing /
    server_name: str  # the name the certificate must carry
    context: ssl.SSLContext | None
    headers: dict[str, str]


def _file_or_data(entry: _Entry, key: str) -> tuple[str | None, bytes | None]:
    """(path, data) of a ``key`` / ``key-data`` pair; a relative path is relative to the file."""
    data = entry.value.get(f"{key}-data")
    if data:
        return None, base64.b64decode(data)
    path = entry.value.get(key)
    if path:
        return str(entry.base / Path(path).expanduser()), None
    return None, None


def _exec_credential(user: _Entry, cluster: _Entry) -> JsonDict:
    """Run the exec plugin as the client does (not interactive) and return its status."""
    spec = user.value["exec"]
    if not spec.get("command") or not spec.get("apiVersion"):
        raise UnsupportedError("exec without command or apiVersion")
    env = dict(os.environ)
    for item in spec.get("env") or []:
        env[str(item["name"])] = str(item["value"])
    info: JsonDict = {
        "apiVersion": spec["apiVersion"],
        "kind": "ExecCredential",
        "spec": {"interactive": False},
    }
    if spec.get("provideClusterInfo"):
        info["spec"]["cluster"] = dict(cluster.value)
        for extension in cluster.value.get("extensions") or []:
            if extension.get("name") == "client.authentication.k8s.io/exec":
                info["spec"]["cluster"]["config"] = extension.get("extension")
                break
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    done = subprocess.run(
        [str(spec["command"]), *(str(a) for a in spec.get("args") or [])],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=user.base,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RequestError(f"exec plugin exited {done.returncode}")
    status = json.loads(done.stdout).get("status") or {}
    if not isinstance(status, dict):
        raise RequestError("exec plugin returned no status")
    return status


def _tls_context(cluster: _Entry, user: _Entry, credential: JsonDict) -> ssl.SSLContext:
    if cluster.value.get("insecure-skip-tls-verify"):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        ca_file, ca_data = _file_or_data(cluster, "certificate-authority")
        context = ssl.create_default_context(
            cafile=ca_file, cadata=ca_data.decode() if ca_data else None
        )
    cert_file, cert_data = _file_or_data(user, "client-certificate")
    key_file, key_data = _file_or_data(user, "client-key")
    if credential.get("clientCertificateData") and credential.get("clientKeyData"):
        cert_file, key_file = None, None
        cert_data = str(credential["clientCertificateData"]).encode()
        key_data = str(credential["clientKeyData"]).encode()
    if cert_data is not None or key_data is not None:
        # ssl loads a certificate chain only from files: a private folder, gone right after.
        with tempfile.TemporaryDirectory(prefix="kubectl-storage-") as folder:
            if cert_data is not None:
                cert_file = str(Path(folder) / "cert.pem")
                Path(cert_file).write_bytes(cert_data)
            if key_data is not None:
                key_file = str(Path(folder) / "key.pem")
                Path(key_file).write_bytes(key_data)
            if cert_file:
                context.load_cert_chain(cert_file, key_file)
    elif cert_file:
        context.load_cert_chain(cert_file, key_file)
    return context


def target(settings: ConnectionSettings) -> Target:
    """The server and credentials of the settings' context.

    Raises:
        UnsupportedError: the kubeconfig needs the kubernetes client (see the module's docstring).
        RequestError: no such context, or its exec plugin failed.
    """
    if any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARIABLES):
        raise UnsupportedError("a proxy is configured in the environment")
    config = _load(kubeconfig_paths(settings))
    if not (config.contexts or config.clusters):
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            raise UnsupportedError("in a pod without a kubeconfig: the client's in-cluster config")
        raise RequestError("no kubeconfig")
    name = settings.context or config.current
    context = config.contexts.get(name or "")
    if context is None:
        raise RequestError(f"no context {name!r}")
    cluster = config.clusters.get(str(context.value.get("cluster") or ""))
    user = config.users.get(str(context.value.get("user") or ""), _Entry({}, context.base))
    if cluster is None or not cluster.value.get("server"):
        raise RequestError("the context has no cluster")
    if cluster.value.get("proxy-url"):
        raise UnsupportedError("proxy-url")
    unsupported = [key for key in _UNSUPPORTED_USER_KEYS if user.value.get(key)]
    if unsupported:
        raise UnsupportedError(", ".join(unsupported))

    # The client's order: a token (or token file) first; the exec plugin runs only without one.
    token = user.value.get("token")
    if not token and user.value.get("tokenFile"):
        token = (user.base / Path(user.value["tokenFile"]).expanduser()).read_text().strip()
    credential: JsonDict = {}
    if not token and user.value.get("exec"):
        credential = _exec_credential(user, cluster)
        token = credential.get("token")
    headers = {"Accept": "application/json", "User-Agent": "kubectl-storage"}
    if token:
        headers["Authorization"] = f"Bearer {token}"

    url = urlsplit(str(cluster.value["server"]))
    if url.scheme not in ("https", "http") or not url.hostname:
        raise UnsupportedError(f"server {url.geturl()!r}")
    tls = _tls_context(cluster, user, credential) if url.scheme == "https" else None
    return Target(
        scheme=url.scheme,
        host=url.hostname,
        port=url.port or (443 if url.scheme == "https" else 80),
        prefix=url.path.rstrip("/"),
        server_name=str(cluster.value.get("tls-server-name") or url.hostname),
        context=tls,
        headers=headers,
    )


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS that checks the certificate against ``server_name`` (kubeconfig tls-server-name)."""

    def __init__(self, host: str, port: int, server_name: str, **kwargs: Any) -> None:
        super().__init__(host, port, **kwargs)
        self.server_name = server_name

    def connect(self) -> None:
        """Connect, then wrap the socket with the configured server name."""
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(  # type: ignore[attr-defined]
            self.sock, server_hostname=self.server_name
        )


def get_json(where: Target, path: str, query: dict[str, Any], timeout_s: float) -> JsonDict:
    """One GET; the parsed JSON body of a 2xx answer.

    Raises:
        RequestError: the server could not be reached or answered with an error status.
    """
    connection: http.client.HTTPConnection
    if where.scheme == "https":
        connection = _HTTPSConnection(
            where.host, where.port, where.server_name, context=where.context, timeout=timeout_s
        )
    else:
        connection = http.client.HTTPConnection(where.host, where.port, timeout=timeout_s)
    given = {k: v for k, v in query.items() if v is not None}
    url = quote(where.prefix + path) + (f"?{urlencode(given)}" if given else "")
    try:
        connection.request("GET", url, headers=where.headers)
        response = connection.getresponse()
        body = response.read()
    except (OSError, http.client.HTTPException) as exc:  # timeouts are OSErrors
        raise RequestError(str(exc)) from exc
    finally:
        connection.close()
    if not 200 <= response.status <= 299:
        raise RequestError(f"GET {path}: HTTP {response.status}")
    document = json.loads(body) if body else {}
    if not isinstance(document, dict):
        raise RequestError(f"GET {path}: not a JSON object")
    return document


def list_items(where: Target, path: str, timeout_s: float) -> list[JsonDict]:
    """Every item of a collection, following ``continue`` tokens as kube/api.py does."""
    items: list[JsonDict] = []
    token: str | None = None
    while True:
        page = get_json(where, path, {"limit": 500, "continue": token}, timeout_s)
        items.extend(page.get("items") or [])
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items
