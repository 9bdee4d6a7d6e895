"""Opening an exec websocket (kube/podexec.py open_exec): the URL kubectl would use, the client's
own auth headers, and no import of the generated CoreV1Api.

The e2e tests exec in real pods (fio, snapshot, node commands). What they do not show is the cost
this module avoids: importing ``kubernetes.client.CoreV1Api`` builds some 250 pydantic models,
0.3-0.8 s of CPU on the test machine, which the first fio exec used to pay after the pod was
Running. The websocket call itself is replaced by a recorder here: the point is what it is given.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from kubectl_storage.kube.podexec import exec_query

REPO = Path(__file__).resolve().parents[3]


def test_query_has_one_command_parameter_per_word_in_order() -> None:
    query = exec_query(
        ["sh", "-c", 'echo "a b" && x=1?', "sh"], container=None, stdin=False, tty=False
    )
    assert query == [
        ("command", "sh"),
        ("command", "-c"),
        ("command", 'echo "a b" && x=1?'),
        ("command", "sh"),
        ("stderr", "true"),
        ("stdin", "false"),
        ("stdout", "true"),
        ("tty", "false"),
    ]


def test_query_with_a_terminal_merges_stderr_and_names_the_container() -> None:
    query = dict(exec_query(["bash"], container="toolbox", stdin=True, tty=True))
    assert query == {
        "command": "bash",
        "container": "toolbox",
        "stderr": "false",  # the API refuses stderr with a TTY
        "stdin": "true",
        "stdout": "true",
        "tty": "true",
    }


# Runs in a fresh interpreter, so that no other test has imported CoreV1Api before.
_PROBE = r"""
import json, sys
from kubernetes import client
import kubernetes.stream.ws_client as ws
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.connection import Connection
from kubectl_storage.kube.podexec import open_exec

seen = {}
def fake_websocket_call(configuration, method, url, **kwargs):
    seen.update(method=method, url=url, headers=kwargs.get("headers"),
                preload=kwargs.get("_preload_content"), binary=kwargs.get("binary"),
                host=configuration.host)
    return "stream"
ws.websocket_call = fake_websocket_call

configuration = client.Configuration()
configuration.host = "https://api.example:6443"
configuration.api_key = {"BearerToken": "Bearer s3cret"}
connection = Connection(api_client=client.ApiClient(configuration), namespace="team-a",
                        context="ctx", server=configuration.host, request_timeout_s=None)
result = open_exec(KubeApi(connection), "fio-pod", ["fio", "--output-format=json", "/etc/x.fio"],
                   namespace="bench ns", binary=True)
seen["result"] = result
seen["core_v1_imported"] = "kubernetes.client.api.core_v1_api" in sys.modules
print(json.dumps(seen))
"""


def test_open_exec_calls_the_websocket_directly_without_core_v1_api() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["result"] == "stream"
    assert seen["core_v1_imported"] is False
    assert seen["method"] == "GET"
    assert seen["preload"] is False
    assert seen["binary"] is True
    url = urlsplit(seen["url"])
    assert (url.scheme, url.netloc) == ("https", "api.example:6443")
    assert url.path == "/api/v1/namespaces/bench%20ns/pods/fio-pod/exec"
    assert parse_qsl(url.query) == [
        ("command", "fio"),
        ("command", "--output-format=json"),
        ("command", "/etc/x.fio"),
        ("stderr", "true"),
        ("stdin", "false"),
        ("stdout", "true"),
        ("tty", "false"),
    ]
    # the same auth header every REST call of ours carries (create_websocket passes it on)
    assert {k.lower(): v for k, v in seen["headers"].items()}.get("authorization") == (
        "Bearer s3cret"
    )
