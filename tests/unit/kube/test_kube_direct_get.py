"""kube/direct.py: completion's GET without the kubernetes client, against a local HTTPS server.

Each credential kind a kubeconfig may carry (token, tokenFile, client certificate as files or
data, an exec plugin returning a token or a certificate) must reach the server as the client
would send it; what the module does not do must raise UnsupportedError (the caller then uses
the client), never be silently ignored.
"""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.kube import direct
from kubectl_storage.kube.connection import ConnectionSettings
from kubectl_storage.kube.names import list_names

SERVER_NAME = "kubernetes.test"  # the server certificate's only name: 127.0.0.1 is not in it


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for kubernetes.test and a client certificate for CN=alice."""
    folder = tmp_path_factory.mktemp("pki")
    _openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.crt", cwd=folder,
    )  # fmt: skip
    (folder / "san.ext").write_text(f"subjectAltName=DNS:{SERVER_NAME}\n")
    for name, subject, extra in (
        ("server", f"/CN={SERVER_NAME}", ["-extfile", "san.ext"]),
        ("client", "/CN=alice", []),
    ):
        _openssl(
            "req", "-newkey", "rsa:2048", "-nodes", "-subj", subject,
            "-keyout", f"{name}.key", "-out", f"{name}.csr", cwd=folder,
        )  # fmt: skip
        _openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", *extra, cwd=folder,
        )  # fmt: skip
    return folder


class _Seen:
    requests: list[dict[str, Any]]

    def __init__(self) -> None:
        self.requests = []


@pytest.fixture
def server(pki: Path) -> Iterator[tuple[int, _Seen]]:
    """An API server listing two StorageClasses on two pages; records each request."""
    seen = _Seen()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            peer = self.connection.getpeercert()  # type: ignore[attr-defined]
            subject = dict(item[0] for item in peer["subject"]) if peer else {}
            seen.requests.append(
                {
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "client": subject.get("commonName"),
                }
            )
            if "continue=page2" in self.path:
                body: dict[str, Any] = {"items": [{"metadata": {"name": "slow"}}]}
            else:
                body = {
                    "items": [{"metadata": {"name": "fast"}, "provisioner": "csi.test"}],
                    "metadata": {"continue": "page2"},
                }
            data = json.dumps(body).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.crt", pki / "server.key")
    context.load_verify_locations(pki / "ca.crt")
    context.verify_mode = ssl.CERT_OPTIONAL
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _kubeconfig(folder: Path, port: int, user: dict[str, Any], **cluster: Any) -> Path:
    cluster = {"server": f"https://127.0.0.1:{port}", "tls-server-name": SERVER_NAME, **cluster}
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "ctx",
    }
    path = folder / "kubeconfig"
    path.write_text(json.dumps(document))  # JSON is YAML
    return path


def _names(config: Path) -> list[str]:
    where = direct.target(ConnectionSettings(kubeconfig=str(config)))
    items = direct.list_items(where, "/apis/storage.k8s.io/v1/storageclasses", 5.0)
    return [item["metadata"]["name"] for item in items]


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def test_token_with_ca_data_and_pages(tmp_path: Path, pki: Path, server: tuple[int, _Seen]) -> None:
    port, seen = server
    config = _kubeconfig(
        tmp_path, port, {"token": "t0ken"}, **{"certificate-authority-data": _b64(pki / "ca.crt")}
    )
    assert _names(config) == ["fast", "slow"]
    assert [r["authorization"] for r in seen.requests] == ["Bearer t0ken", "Bearer t0ken"]
    assert seen.requests[0]["path"] == "/apis/storage.k8s.io/v1/storageclasses?limit=500"
    assert seen.requests[1]["path"].endswith("&continue=page2")


def test_token_file_and_relative_ca_file(
    tmp_path: Path, pki: Path, server: tuple[int, _Seen]
) -> None:
    port, seen = server
    shutil.copy(pki / "ca.crt", tmp_path / "ca.crt")
    (tmp_path / "token").write_text("from-file\n")
    config = _kubeconfig(
        tmp_path, port, {"tokenFile": "token"}, **{"certificate-authority": "ca.crt"}
    )
    assert _names(config) == ["fast", "slow"]
    assert seen.requests[0]["authorization"] == "Bearer from-file"


@pytest.mark.parametrize("as_data", [False, True])
def test_client_certificate(
    tmp_path: Path, pki: Path, server: tuple[int, _Seen], as_data: bool
) -> None:
    port, seen = server
    if as_data:
        user = {
            "client-certificate-data": _b64(pki / "client.crt"),
            "client-key-data": _b64(pki / "client.key"),
        }
    else:
        user = {
            "client-certificate": str(pki / "client.crt"),
            "client-key": str(pki / "client.key"),
        }
    config = _kubeconfig(tmp_path, port, user, **{"certificate-authority": str(pki / "ca.crt")})
    assert _names(config) == ["fast", "slow"]
    assert seen.requests[0]["client"] == "alice"
    assert seen.requests[0]["authorization"] is None


@pytest.mark.parametrize("returns", ["token", "certificate"])
def test_exec_plugin(tmp_path: Path, pki: Path, server: tuple[int, _Seen], returns: str) -> None:
    port, seen = server
    status = (
        {"token": "from-exec"}
        if returns == "token"
        else {
            "clientCertificateData": (pki / "client.crt").read_text(),
            "clientKeyData": (pki / "client.key").read_text(),
        }
    )
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, os, sys\n"
        "info = json.loads(os.environ['KUBERNETES_EXEC_INFO'])\n"
        "assert info['spec']['interactive'] is False, info\n"
        "assert os.environ['EXTRA'] == 'yes'\n"
        "json.dump({'apiVersion': info['apiVersion'], 'kind': 'ExecCredential',\n"
        f"           'status': {status!r}}}, sys.stdout)\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "env": [{"name": "EXTRA", "value": "yes"}],
            "interactiveMode": "Never",
        }
    }
    config = _kubeconfig(tmp_path, port, user, **{"certificate-authority": str(pki / "ca.crt")})
    assert _names(config) == ["fast", "slow"]
    if returns == "token":
        assert seen.requests[0]["authorization"] == "Bearer from-exec"
    else:
        assert seen.requests[0]["client"] == "alice"


def test_a_token_wins_over_the_exec_plugin_as_in_the_client(
    tmp_path: Path, pki: Path, server: tuple[int, _Seen]
) -> None:
    port, seen = server
    user = {"token": "t0ken", "exec": {"apiVersion": "v1", "command": "/nonexistent/plugin"}}
    config = _kubeconfig(tmp_path, port, user, **{"certificate-authority": str(pki / "ca.crt")})
    assert _names(config) == ["fast", "slow"]
    assert seen.requests[0]["authorization"] == "Bearer t0ken"


def test_a_certificate_for_another_name_is_refused(
    tmp_path: Path, pki: Path, server: tuple[int, _Seen]
) -> None:
    port, seen = server
    config = _kubeconfig(
        tmp_path, port, {"token": "t"}, **{"certificate-authority": str(pki / "ca.crt")}
    )
    document = json.loads(config.read_text())
    del document["clusters"][0]["cluster"]["tls-server-name"]  # 127.0.0.1 is not in the cert
    config.write_text(json.dumps(document))
    with pytest.raises(direct.RequestError):
        _names(config)
    assert seen.requests == []


def test_insecure_skip_tls_verify(tmp_path: Path, server: tuple[int, _Seen]) -> None:
    port, _ = server
    config = _kubeconfig(tmp_path, port, {"token": "t"}, **{"insecure-skip-tls-verify": True})
    assert _names(config) == ["fast", "slow"]


@pytest.mark.parametrize(
    ("user", "cluster"),
    [
        ({"auth-provider": {"name": "oidc"}}, {}),
        ({"username": "a", "password": "b"}, {}),
        ({"token": "t", "as": "someone"}, {}),
        ({"token": "t"}, {"proxy-url": "http://proxy:3128"}),
    ],
)
def test_what_only_the_client_does_is_unsupported(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any]
) -> None:
    config = _kubeconfig(tmp_path, 1, user, **cluster)
    with pytest.raises(direct.UnsupportedError):
        direct.target(ConnectionSettings(kubeconfig=str(config)))


def test_a_proxy_in_the_environment_is_unsupported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    config = _kubeconfig(tmp_path, 1, {"token": "t"})
    with pytest.raises(direct.UnsupportedError):
        direct.target(ConnectionSettings(kubeconfig=str(config)))


def test_names_lists_through_the_direct_get_without_the_client(
    tmp_path: Path, pki: Path, server: tuple[int, _Seen]
) -> None:
    port, _ = server
    config = _kubeconfig(
        tmp_path, port, {"token": "t"}, **{"certificate-authority": str(pki / "ca.crt")}
    )
    code = (
        "import sys\n"
        "from kubectl_storage.kube.connection import ConnectionSettings\n"
        "from kubectl_storage.kube.names import list_names\n"
        f"names = list_names('storageclass', ConnectionSettings(kubeconfig={str(config)!r}))\n"
        "print([(n.name, n.description) for n in names])\n"
        "print('kubernetes' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[('fast', 'csi.test'), ('slow', '')]", "False"]
    assert list_names("storageclass", ConnectionSettings(kubeconfig=str(config)))
