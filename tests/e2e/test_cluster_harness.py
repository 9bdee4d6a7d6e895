"""End-to-end checks that the test cluster (tests/cluster) gives kubectl-storage what it needs:
working CSI snapshots, host mount visibility, Pod Security admission, plugin discovery
through kubectl, and the locally built toolbox and MariaDB images."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import HOSTPATH_CLASS

pytestmark = pytest.mark.cluster

REPO = Path(__file__).resolve().parents[2]


def pvc(
    name: str,
    storage_class: str = HOSTPATH_CLASS,
    size: str = "64Mi",
    data_source: str | None = None,
) -> str:
    src = ""
    if data_source:
        src = (
            f"  dataSource:\n    name: {data_source}\n    kind: VolumeSnapshot\n"
            f"    apiGroup: snapshot.storage.k8s.io\n"
        )
    return f"""
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {name}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: {storage_class}
  resources:
    requests:
      storage: {size}
{src}"""


def pod(
    name: str,
    image: str,
    script: str,
    claim: str | None = None,
    extra_spec: str = "",
    container_extra: str = "",
) -> str:
    vol_mounts = "    volumeMounts: [{name: data, mountPath: /data}]\n" if claim else ""
    volumes = (
        f"  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {claim}}}}}]\n"
        if claim
        else ""
    )
    return f"""
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
{extra_spec}  containers:
  - name: main
    image: {image}
    imagePullPolicy: IfNotPresent
    command: [sh, -c, {json.dumps(script)}]
{container_extra}{vol_mounts}{volumes}"""


def test_snapshot_restore_preserves_bytes(cluster, namespace):
    c = cluster
    c.apply(pvc("source"), namespace)
    c.apply(
        pod(
            "writer",
            c.toolbox_image,
            "head -c 1048576 /dev/urandom > /data/blob && mkdir -p /data/sub && echo hello > /data/sub/f "
            "&& sync && sha256sum /data/blob /data/sub/f | cut -d' ' -f1",
            claim="source",
        ),
        namespace,
    )
    c.wait(namespace, "pod/writer", "jsonpath={.status.phase}=Succeeded", 180)
    written = c.logs(namespace, "writer").split()
    assert len(written) == 2, written
    assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in written), written

    c.apply(
        """
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata:
  name: snap
spec:
  volumeSnapshotClassName: csi-hostpath-snapclass
  source:
    persistentVolumeClaimName: source
""",
        namespace,
    )
    c.wait(namespace, "volumesnapshot/snap", "jsonpath={.status.readyToUse}=true", 120)
    snap = c.get_json("-n", namespace, "volumesnapshot/snap")
    assert snap["status"]["restoreSize"] == "64Mi", snap["status"]  # the source volume's capacity
    content = c.get_json("volumesnapshotcontent", snap["status"]["boundVolumeSnapshotContentName"])
    assert content["spec"]["driver"] == "hostpath.csi.k8s.io"
    assert content["status"]["readyToUse"] is True

    c.apply(pvc("restored", data_source="snap"), namespace)
    c.apply(
        pod(
            "reader",
            c.toolbox_image,
            "sha256sum /data/blob /data/sub/f | cut -d' ' -f1",
            claim="restored",
        ),
        namespace,
    )
    c.wait(namespace, "pod/reader", "jsonpath={.status.phase}=Succeeded", 180)
    assert c.logs(namespace, "reader").split() == written
    restored = c.get_json("-n", namespace, "pvc/restored")
    assert restored["status"]["phase"] == "Bound"
    assert restored["spec"]["dataSource"]["name"] == "snap"


def test_privileged_hostpid_pod_sees_kubelet_volume_mounts(cluster, namespace):
    c = cluster
    c.apply(pvc("data"), namespace)
    c.apply(
        pod(
            "holder",
            c.busybox_image,
            "sleep 3600",
            claim="data",
            extra_spec=f"  nodeSelector: {{kubernetes.io/hostname: {c.node}}}\n",  # /var/lib/kubelet
        ),
        namespace,
    )
    c.wait(namespace, "pod/holder", "condition=Ready", 180)
    uid = c.get_json("-n", namespace, "pod/holder")["metadata"]["uid"]
    pv = c.get_json("-n", namespace, "pvc/data")["spec"]["volumeName"]

    c.apply(
        pod(
            "inspector",
            c.toolbox_image,
            "cat /proc/1/mountinfo",
            extra_spec=f"  hostPID: true\n  nodeName: {c.node}\n",
            container_extra="    securityContext: {privileged: true, runAsUser: 0}\n",
        ),
        namespace,
    )
    c.wait(namespace, "pod/inspector", "jsonpath={.status.phase}=Succeeded", 120)
    mountinfo = c.logs(namespace, "inspector")
    want = f"/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~csi/{pv}/mount"
    lines = [ln for ln in mountinfo.splitlines() if ln.split()[4:5] == [want]]
    assert lines, f"{want} not in the host's /proc/1/mountinfo:\n" + "\n".join(
        ln for ln in mountinfo.splitlines() if "/var/lib/kubelet" in ln
    )
    # the mount's source is the driver's volume directory: <pv> at the top of the volume
    # filesystem (tests/cluster/harness.py mounts it at CSI_STATE/volumes)
    assert lines[0].split()[3] == f"/{pv}", lines[0]
    c.kubectl_run("-n", namespace, "delete", "pod", "holder", "--wait=true", "--timeout=60s")


def test_pod_security_restricted_namespace(cluster, namespace):
    c = cluster
    c.kubectl_run(
        "label",
        "namespace",
        namespace,
        "pod-security.kubernetes.io/enforce=restricted",
        "pod-security.kubernetes.io/enforce-version=latest",
    )
    privileged = pod(
        "privileged",
        c.busybox_image,
        "true",
        container_extra="    securityContext: {privileged: true}\n",
    )
    r = c.kubectl_run("-n", namespace, "apply", "-f", "-", input=privileged, check=False)
    assert r.returncode != 0, "privileged pod was admitted into a restricted namespace"
    assert "violates PodSecurity" in r.stderr, r.stderr
    assert "restricted" in r.stderr, r.stderr

    restricted = pod(
        "restricted",
        c.toolbox_image,
        "id -u && fio --version",
        extra_spec="  securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\n",
        container_extra=(
            "    securityContext:\n      allowPrivilegeEscalation: false\n"
            "      capabilities: {drop: [ALL]}\n"
        ),
    )
    c.apply(restricted, namespace)
    c.wait(namespace, "pod/restricted", "jsonpath={.status.phase}=Succeeded", 120)
    out = c.logs(namespace, "restricted").split()
    assert out[0] == "1000", out
    assert out[1].startswith("fio-"), out


def test_kubectl_discovers_storage_plugin(cluster, tmp_path):
    shim = tmp_path / "kubectl-storage"
    shim.write_text(
        "#!/bin/sh\n"
        f'PYTHONPATH="{REPO}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{sys.executable}" -m kubectl_storage "$@"\n'
    )
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(
        [cluster.kubectl, "plugin", "list"], env=env, capture_output=True, text=True, timeout=60
    )
    assert str(shim) in r.stdout, (
        f"kubectl plugin list did not find the shim:\n{r.stdout}\n{r.stderr}"
    )
    r = subprocess.run(
        [cluster.kubectl, "storage", "--help"], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, (
        f"kubectl storage --help failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    )
    assert r.stdout.strip(), "kubectl storage --help printed nothing"


def test_local_path_class_binds_on_first_consumer(cluster, namespace):
    c = cluster
    sc = c.get_json("storageclass", "local-path")
    assert sc["volumeBindingMode"] == "WaitForFirstConsumer"
    classes = c.get_json("volumesnapshotclass")["items"]
    assert [x["driver"] for x in classes] == ["hostpath.csi.k8s.io"]
    c.apply(pvc("lp", storage_class="local-path"), namespace)
    assert c.get_json("-n", namespace, "pvc/lp")["status"]["phase"] == "Pending"
    c.apply(
        pod("user", c.toolbox_image, "echo local > /data/f && cat /data/f", claim="lp"), namespace
    )
    c.wait(namespace, "pod/user", "jsonpath={.status.phase}=Succeeded", 180)
    assert c.logs(namespace, "user").strip() == "local"
    assert c.get_json("-n", namespace, "pvc/lp")["status"]["phase"] == "Bound"


def test_mariadb_image_serves_sql_to_toolbox_client(cluster, namespace):
    c = cluster
    c.apply(pvc("db"), namespace)
    c.apply(
        f"""
apiVersion: v1
kind: Pod
metadata:
  name: mariadb
  labels: {{app: mariadb}}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: mariadb
    image: {c.mariadb_image}
    imagePullPolicy: IfNotPresent
    env:
    - {{name: MYSQL_ROOT_PASSWORD, value: s3cret}}
    - {{name: MYSQL_DATABASE, value: shop}}
    ports: [{{containerPort: 3306}}]
    readinessProbe:
      tcpSocket: {{port: 3306}}
      periodSeconds: 2
    volumeMounts: [{{name: data, mountPath: /var/lib/mysql}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: db}}}}]
""",
        namespace,
    )
    c.wait(namespace, "pod/mariadb", "condition=Ready", 240)
    ip = c.get_json("-n", namespace, "pod/mariadb")["status"]["podIP"]
    sql = (
        "CREATE TABLE shop.t (id INT PRIMARY KEY, v VARCHAR(10)); INSERT INTO shop.t VALUES (1, 'ok'); "
        "SELECT v FROM shop.t WHERE id = 1;"
    )
    c.apply(
        pod("client", c.toolbox_image, f'mariadb -h {ip} -P 3306 -uroot -ps3cret -N -e "{sql}"'),
        namespace,
    )
    c.wait(namespace, "pod/client", "jsonpath={.status.phase}=Succeeded", 120)
    assert c.logs(namespace, "client").strip() == "ok"
    # the server runs as uid 999 (mysql) and owns the initialised data directory
    r = c.kubectl_run(
        "-n",
        namespace,
        "exec",
        "mariadb",
        "--",
        "sh",
        "-c",
        "stat -c %u /var/lib/mysql/mysql && cat /proc/1/status | grep ^Uid",
    )
    lines = r.stdout.split("\n")
    assert lines[0].strip() == "999", r.stdout
    assert lines[1].split()[1] == "999", r.stdout


def test_toolbox_dockerfile_matches_cluster_image():
    """build/images/toolbox/Dockerfile (upstream releases) and the offline build use one package set."""
    sys.path.insert(0, str(REPO / "tests" / "cluster"))
    import images

    text = (REPO / "build" / "images" / "toolbox" / "Dockerfile").read_text()
    listed = re.search(r"# packages: (.*)", text).group(1).split()
    assert sorted(listed) == sorted(images.TOOLBOX_PACKAGES)
    install = (
        re.search(r"apt-get install -y --no-install-recommends \\\s*\n\s*(.*?) \\", text)
        .group(1)
        .split()
    )
    assert sorted(install) == sorted(images.TOOLBOX_PACKAGES)
    assert "USER 1000" in text
    assert "FROM debian:bookworm-slim" in text
    assert images.toolbox_image().startswith("ghcr.io/kubectl-storage/toolbox:")


def test_hostpath_pvc_expands_online(cluster, namespace):
    c = cluster
    c.apply(pvc("grow", size="64Mi"), namespace)
    c.wait(namespace, "pvc/grow", "jsonpath={.status.phase}=Bound", 60)
    c.kubectl_run(
        "-n",
        namespace,
        "patch",
        "pvc",
        "grow",
        "--type=merge",
        "-p",
        '{"spec":{"resources":{"requests":{"storage":"128Mi"}}}}',
    )
    c.wait(namespace, "pvc/grow", "jsonpath={.status.capacity.storage}=128Mi", 90)
    pv = c.get_json("-n", namespace, "pvc/grow")["spec"]["volumeName"]
    assert c.get_json("pv", pv)["spec"]["capacity"]["storage"] == "128Mi"
