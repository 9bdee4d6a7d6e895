"""Fixtures for end-to-end tests against the real test cluster (tests/cluster).

* ``cluster`` (session): runs ``tests/cluster/up`` (idempotent: reuses a running cluster with
  the node count it has, builds and starts one otherwise), sets ``KUBECONFIG`` to the admin
  kubeconfig and puts the cluster's kubectl first on ``PATH``. Set ``TESTCLUSTER_KUBECONFIG`` to
  use an already running cluster without calling ``up``. ``cluster.nodes`` lists the harness's
  own nodes (label ``kubectl-storage.test/cluster-node``; nodes joined from elsewhere, such as a
  QEMU guest, are not in it); ``cluster.node`` is the first one.
* ``multinode`` (session): the cluster, failing the test when it has fewer than
  ``MIN_NODES`` harness nodes (start it with ``tests/cluster/up --nodes 3``).
* ``namespace`` (function): a fresh namespace per test, deleted afterwards.
* ``make_storage_class`` (function): creates StorageClasses of the test driver for one test,
  named after its namespace, and deletes them afterwards.
* ``HOSTPATH_CLASS``: the test driver's StorageClass; ``managed(cluster, namespace, kinds)``: the
  objects of ``kinds`` (``FIO_OBJECTS``, ``PERSISTENCE_OBJECTS``, ``SNAPSHOT_OBJECTS``) that
  kubectl-storage still has in a namespace.
* at session start, test namespaces that an earlier session left stuck in Terminating (for more
  than ``STALE_NAMESPACE_S``) are forced out, with a warning naming what was forced, so that one
  bad run does not fail the next; failures within this session still fail their test.
* after every e2e test (autouse): the test fails if any object labelled
  ``app.kubernetes.io/managed-by=kubectl-storage`` is left in any namespace (or cluster-wide,
  for PVs and VolumeSnapshotContents) that was not there before the test, after a bounded
  wait for objects that are already terminating.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CLUSTER_DIR = REPO / "tests" / "cluster"
sys.path.insert(0, str(CLUSTER_DIR))
import harness  # noqa: E402  (tests/cluster/harness.py: paths, names and versions of the cluster)

MANAGED_BY = "app.kubernetes.io/managed-by=kubectl-storage"
#: The test driver's StorageClass (hostpath.csi.k8s.io, tests/cluster/README.md): the default
#: class, one volume tree every node reaches (like network storage), snapshots, Block volumes.
HOSTPATH_CLASS = "csi-hostpath-sc"
#: The kinds each command creates in the test's namespace, for ``managed``.
FIO_OBJECTS = "pods,pvc,configmaps"
PERSISTENCE_OBJECTS = "statefulsets,pods,pvc,secrets"
SNAPSHOT_OBJECTS = "pods,pvc,volumesnapshots"
LEFTOVER_KINDS = ",".join(
    [
        "pods",
        "persistentvolumeclaims",
        "persistentvolumes",
        "configmaps",
        "secrets",
        "services",
        "statefulsets.apps",
        "deployments.apps",
        "jobs.batch",
        "volumesnapshots.snapshot.storage.k8s.io",
        "volumesnapshotcontents.snapshot.storage.k8s.io",
    ]
)
LEFTOVER_WAIT_S = 90
UP_TIMEOUT_S = 80 * 60  # a cold machine builds Kubernetes first
STALE_NAMESPACE_S = 300
MIN_NODES = 3  # what the multi-node tests need (tests/run starts the cluster with 3)
E2E_NAMESPACE_LABEL = "kubectl-storage.test/e2e=true"


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "cluster: end-to-end test against the real test cluster (tests/cluster/up, needs root)",
    )


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.cluster)


@dataclass
class Cluster:
    kubeconfig: str
    kubectl: str
    node: str
    toolbox_image: str
    busybox_image: str
    mariadb_image: str
    mysql_image: str
    #: MariaDB with libeatmydata preloaded: fsync does nothing (tests/cluster/images.py).
    eatmydata_image: str = ""
    nodes: tuple[str, ...] = ()  # the harness's nodes, first one first

    def kubelet(self, action: str, node: str) -> None:
        """Stop or start one harness node's kubelet (``tests/cluster/harness.py node``)."""
        r = subprocess.run(
            [sys.executable, str(CLUSTER_DIR / "harness.py"), "node", action, node],
            capture_output=True,
            text=True,
            timeout=300,
        )
        if r.returncode != 0:
            raise AssertionError(f"harness node {action} {node} failed:\n{r.stderr}")

    def kubectl_run(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess:
        """Run kubectl against the cluster; raises AssertionError with stderr when check fails."""
        r = subprocess.run(
            [self.kubectl, "--kubeconfig", self.kubeconfig, *args],
            input=input,
            text=True,
            capture_output=True,
            timeout=timeout,
        )
        if check and r.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({r.returncode}):\n{r.stderr}{r.stdout}"
            )
        return r

    def apply(self, manifest: str, namespace: str | None = None) -> None:
        self.kubectl_run(
            *(["-n", namespace] if namespace else []), "apply", "-f", "-", input=manifest
        )

    def get_json(self, *args: str) -> dict:
        return json.loads(self.kubectl_run("get", *args, "-o", "json").stdout)

    def wait(self, namespace: str, resource: str, condition: str, timeout: int = 120) -> None:
        r = self.kubectl_run(
            "-n",
            namespace,
            "wait",
            f"--for={condition}",
            resource,
            f"--timeout={timeout}s",
            check=False,
            timeout=timeout + 30,
        )
        if r.returncode != 0:
            desc = self.kubectl_run("-n", namespace, "describe", resource, check=False).stdout
            events = self.kubectl_run(
                "-n", namespace, "get", "events", "--sort-by=.lastTimestamp", check=False
            ).stdout
            raise AssertionError(
                f"{resource} in {namespace}: {condition} not reached in {timeout}s: "
                f"{r.stderr.strip()}\n--- describe ---\n{desc[-4000:]}\n--- events ---\n"
                f"{events[-3000:]}"
            )

    def logs(self, namespace: str, pod: str) -> str:
        return self.kubectl_run("-n", namespace, "logs", pod).stdout


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    kubeconfig = os.environ.get("TESTCLUSTER_KUBECONFIG")
    if not kubeconfig:
        r = subprocess.run(
            [str(CLUSTER_DIR / "up")],
            stdout=subprocess.PIPE,
            stderr=None,
            text=True,
            timeout=UP_TIMEOUT_S,
        )
        if r.returncode != 0:
            pytest.fail(
                f"tests/cluster/up failed with exit code {r.returncode} (its stderr is above)",
                pytrace=False,
            )
        kubeconfig = r.stdout.strip().splitlines()[-1]
    os.environ["KUBECONFIG"] = kubeconfig
    os.environ["PATH"] = f"{harness.TOOLS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    from images import (
        BUSYBOX_IMAGE,
        MARIADB_EATMYDATA_IMAGE,
        MARIADB_IMAGE,
        MYSQL_IMAGE,
        toolbox_image,
    )

    found = Cluster(
        kubeconfig=kubeconfig,
        kubectl=str(harness.K8S_BIN / "kubectl"),
        node=harness.NODE,
        toolbox_image=toolbox_image(),
        busybox_image=BUSYBOX_IMAGE,
        mariadb_image=MARIADB_IMAGE,
        mysql_image=MYSQL_IMAGE,
        eatmydata_image=MARIADB_EATMYDATA_IMAGE,
    )
    labelled = found.get_json("nodes", "-l", harness.NODE_LABEL)["items"]
    found.nodes = tuple(
        n["metadata"]["name"]
        for n in sorted(labelled, key=lambda n: int(n["metadata"]["labels"][harness.NODE_LABEL]))
    )
    _force_out_stale_test_namespaces(found)
    yield found
    still = wait_for_deleted_namespaces(found)
    if still:
        print(f"warning: test namespaces still terminating: {', '.join(still)}", file=sys.stderr)


@pytest.fixture(scope="session")
def multinode(cluster: Cluster) -> Cluster:
    if len(cluster.nodes) < MIN_NODES:
        pytest.fail(
            f"this test needs a cluster of at least {MIN_NODES} nodes, the cluster has "
            f"{len(cluster.nodes)} ({', '.join(cluster.nodes)}): start it with "
            f"tests/cluster/up --nodes {MIN_NODES}",
            pytrace=False,
        )
    return cluster


def _force_out_stale_test_namespaces(cluster: Cluster) -> None:
    """Finish deleting test namespaces an earlier session left Terminating.

    The cluster's state survives between sessions, so an object stuck on a controller's finalizer
    (e.g. a PVC held by the snapshot controller) would otherwise fail the next session's leftover
    checks and all-namespace cleanup tests. Only e2e test namespaces that have been Terminating
    for STALE_NAMESPACE_S are touched: their objects' finalizers are removed, and
    VolumeSnapshotContents pointing into them are deleted the same way.
    """
    now = time.time()
    stale = set()
    for ns in cluster.get_json("namespaces", "-l", E2E_NAMESPACE_LABEL)["items"]:
        since = ns["metadata"].get("deletionTimestamp")
        if since and now - _epoch(since) > STALE_NAMESPACE_S:
            stale.add(ns["metadata"]["name"])
    if not stale:
        return
    forced: list[str] = []
    for kind in ("persistentvolumeclaims", "volumesnapshots.snapshot.storage.k8s.io", "pods"):
        for obj in cluster.get_json(kind, "--all-namespaces")["items"]:
            md = obj["metadata"]
            if md.get("namespace") in stale and md.get("finalizers"):
                _drop_finalizers(cluster, kind, md["name"], md["namespace"])
                forced.append(f"{obj['kind']} {md['namespace']}/{md['name']} {md['finalizers']}")
    for content in cluster.get_json("volumesnapshotcontents.snapshot.storage.k8s.io")["items"]:
        ref = content["spec"].get("volumeSnapshotRef") or {}
        if ref.get("namespace") in stale:
            name = content["metadata"]["name"]
            cluster.kubectl_run(
                "delete", "volumesnapshotcontent", name, "--wait=false", check=False
            )
            _drop_finalizers(cluster, "volumesnapshotcontents.snapshot.storage.k8s.io", name, None)
            forced.append(f"VolumeSnapshotContent {name}")
    print(
        f"warning: forced out {len(stale)} test namespace(s) stuck in Terminating since an "
        f"earlier session ({', '.join(sorted(stale))}):\n  " + "\n  ".join(forced or ["(none)"]),
        file=sys.stderr,
    )


def _drop_finalizers(cluster: Cluster, kind: str, name: str, namespace: str | None) -> None:
    cluster.kubectl_run(
        *(["-n", namespace] if namespace else []),
        "patch",
        kind,
        name,
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":null}}',
        check=False,
    )


def _epoch(timestamp: str) -> float:
    return calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))


@pytest.fixture
def namespace(cluster: Cluster, request) -> str:
    base = re.sub(r"[^a-z0-9-]+", "-", request.node.name.lower()).strip("-")[:40].strip("-")
    name = f"e2e-{base}-{uuid.uuid4().hex[:6]}"
    cluster.kubectl_run("create", "namespace", name)
    cluster.kubectl_run("label", "namespace", name, E2E_NAMESPACE_LABEL)
    yield name
    # Not waited for: the namespace controller starts 5 s after the deletion, whatever the
    # namespace holds (namespaceDeletionGracePeriod, a constant in kubernetes
    # pkg/controller/namespace), and ~180 tests waiting for it cost CI 15 minutes. What a test
    # leaves goes while the next one runs; a test that needs the whole cluster settled calls
    # wait_for_deleted_namespaces, and the session waits for all of them at its end.
    r = cluster.kubectl_run("delete", "namespace", name, "--wait=false", check=False)
    if r.returncode != 0:
        print(f"warning: namespace {name} not deleted: {r.stderr}", file=sys.stderr)
    else:
        _deleted_namespaces.append(name)


_deleted_namespaces: list[str] = []


def wait_for_deleted_namespaces(cluster: Cluster, timeout_s: float = 240) -> list[str]:
    """Wait until the namespaces earlier tests deleted are gone; the ones still there."""
    deadline = time.monotonic() + timeout_s
    while True:
        still = sorted(set(_deleted_namespaces) & e2e_namespaces(cluster))
        if not still or time.monotonic() > deadline:
            return still
        time.sleep(1)


@pytest.fixture
def make_storage_class(cluster: Cluster, namespace: str):
    """Create a StorageClass of the test driver for this test; deleted after it.

    ``make(suffix, binding, parameters)`` names the class ``<namespace>-<suffix>`` (cut to 63
    characters), with ``volumeBindingMode: binding`` and ``reclaimPolicy: Delete`` (the API's
    default), and returns the name."""
    made: list[str] = []

    def make(
        suffix: str, binding: str = "Immediate", parameters: dict[str, str] | None = None
    ) -> str:
        name = f"{namespace}-{suffix}"[:63]
        manifest = {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": name},
            "provisioner": "hostpath.csi.k8s.io",
            "volumeBindingMode": binding,
            "reclaimPolicy": "Delete",
            **({"parameters": parameters} if parameters else {}),
        }
        cluster.apply(json.dumps(manifest))
        made.append(name)
        return name

    yield make
    for name in reversed(made):
        cluster.kubectl_run("delete", "storageclass", name, "--ignore-not-found")


def start_sleeper(cluster: Cluster, namespace: str, node: str | None = None) -> str:
    """A busybox pod ``sleeper`` that sleeps for 10 minutes (pinned to ``node`` if given), once
    Ready: a target for execs. Returns its name. Its grace period is 1 s: ``sleep`` as PID 1
    ignores SIGTERM, and the default 30 s made the namespace's deletion wait for it."""
    spec: dict[str, object] = {"terminationGracePeriodSeconds": 1}
    if node:
        spec["nodeName"] = node
    overrides = [f"--overrides={json.dumps({'spec': spec})}"]
    cluster.kubectl_run(
        "-n",
        namespace,
        "run",
        "sleeper",
        f"--image={cluster.busybox_image}",
        "--restart=Never",
        "--image-pull-policy=IfNotPresent",
        *overrides,
        "--command",
        "--",
        "sleep",
        "600",
    )
    cluster.wait(namespace, "pod/sleeper", "condition=Ready")
    return "sleeper"


def power_off(node: str) -> str:
    """The harness's ``power-off NODE`` (a simulated power cut of a host node: never a real
    one, they share this machine's kernel); what it printed (the LazyFS caches it dropped)."""
    r = subprocess.run(
        [sys.executable, str(CLUSTER_DIR / "harness.py"), "power-off", node],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert r.returncode == 0, f"power-off {node} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


def external_persistence_args(
    cluster: Cluster,
    namespace: str,
    storage_class: str,
    timeout: str,
    *extra: str,
    image: str | None = None,
) -> tuple[str, ...]:
    """validate-persistence with only the ``external`` disruption, JSON out (20 rows, no probe);
    ``image`` is the server's (default the MariaDB test image), ``extra`` more arguments."""
    return (
        "validate-persistence",
        *extra,
        "--image",
        image or cluster.mariadb_image,
        "--timeout",
        timeout,
        "-n",
        namespace,
        "-s",
        storage_class,
        "--rows",
        "20",
        "--no-fsync-probe",
        "--disruptions",
        "external",
        "-o",
        "json",
    )


def managed(cluster: Cluster, namespace: str, kinds: str) -> list[str]:
    """``Kind/name`` of each object of ``kinds`` in ``namespace`` that kubectl-storage made."""
    items = cluster.get_json(kinds, "-n", namespace, "-l", MANAGED_BY)["items"]
    return [f"{i['kind']}/{i['metadata']['name']}" for i in items]


def _managed_objects(cluster: Cluster) -> list[dict]:
    r = cluster.kubectl_run(
        "get",
        LEFTOVER_KINDS,
        "--all-namespaces",
        "-l",
        MANAGED_BY,
        "-o",
        "json",
        "--ignore-not-found",
        check=False,
    )
    if r.returncode != 0:
        raise AssertionError(f"could not list managed objects: {r.stderr}")
    return json.loads(r.stdout or '{"items": []}').get("items", [])


def _describe(obj: dict) -> str:
    md = obj.get("metadata", {})
    where = f"{md.get('namespace')}/" if md.get("namespace") else ""
    term = " (terminating)" if md.get("deletionTimestamp") else ""
    return f"{obj.get('kind')} {where}{md.get('name')}{term}"


def e2e_namespaces(cluster: Cluster) -> set[str]:
    """Every e2e test namespace there is, Terminating ones included."""
    names = cluster.kubectl_run(
        "get", "namespaces", "-l", E2E_NAMESPACE_LABEL, "-o", "name", check=False
    ).stdout.split()
    return {n.split("/", 1)[1] for n in names}


def _other_tests_namespaces(cluster: Cluster, own: str | None) -> set[str]:
    """Namespaces of e2e tests other than this one (another pytest session may share the
    cluster while developing); what happens in them is not this test's doing."""
    return e2e_namespaces(cluster) - {own}


def check_no_managed_leftovers(
    cluster: Cluster, before: set[str] = frozenset(), own_namespace: str | None = None
) -> None:
    """Fail if managed objects that did not exist before the test are still there.

    Objects that are already being deleted get a bounded grace period first."""
    foreign = _other_tests_namespaces(cluster, own_namespace)

    def current() -> list[dict]:
        return [
            o
            for o in _managed_objects(cluster)
            if o["metadata"].get("uid") not in before
            and o["metadata"].get("namespace") not in foreign
        ]

    deadline = time.monotonic() + LEFTOVER_WAIT_S
    objs = current()
    while (
        objs
        and all(o["metadata"].get("deletionTimestamp") for o in objs)
        and time.monotonic() < deadline
    ):
        time.sleep(2)
        objs = current()
    if objs:
        pytest.fail(
            f"{len(objs)} object(s) labelled {MANAGED_BY} left behind:\n  "
            + "\n  ".join(_describe(o) for o in objs),
            pytrace=False,
        )


@pytest.fixture(autouse=True)
def no_managed_leftovers(request, cluster: Cluster):
    """After the test body, fail the test if kubectl-storage left labelled objects behind.

    The check itself runs from pytest_runtest_call below, i.e. right after the test function
    and before fixtures such as ``namespace`` clean up, so it reports as a test failure."""
    # Objects that existed before the test (e.g. a developer's own run on a shared cluster) are
    # not this test's leftovers; a test that leaked them has already failed.
    before = {o["metadata"].get("uid") for o in _managed_objects(cluster)}
    request.node._managed_leftover_check = lambda: check_no_managed_leftovers(
        cluster, before, request.node.funcargs.get("namespace")
    )
    return


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield  # re-raises if the test itself failed
    check = getattr(item, "_managed_leftover_check", None)
    if check is not None:
        check()
    return result
