"""Single-node Kubernetes test cluster for kubectl-storage: up / down / status.

Everything runs as a host process started by this script, with a PID file and a log file
under the state dir: containerd, etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, kubelet, the CSI hostpath driver and its sidecars, and the local-path
provisioner. Binaries and images are built from the Go module proxy and Debian packages
and cached by version under the cache root. See tests/cluster/README.md.

stdout carries only the admin kubeconfig path (from `up`); progress goes to stderr.
Stdlib only (Python 3.11).
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import images  # noqa: E402

KUBE_VERSION = os.environ.get("KUBE_VERSION", "v1.34.12")
PROVISIONER_VERSION = os.environ.get("PROVISIONER_VERSION", "v5.3.0")
SNAPSHOTTER_VERSION = os.environ.get("SNAPSHOTTER_VERSION", "v8.4.0")
LOCALPATH_VERSION = os.environ.get("LOCALPATH_VERSION", "v0.0.30")
RESIZER_VERSION = os.environ.get("RESIZER_VERSION", "v2.2.0")

CACHE = Path(os.environ.get("TESTCLUSTER_CACHE", "/var/cache/kubectl-storage-testcluster"))
STATE = Path(os.environ.get("TESTCLUSTER_STATE", "/var/lib/kubectl-storage-testcluster"))
K8S_BIN = CACHE / f"k8s-{KUBE_VERSION}" / "bin"
RUN = STATE / "run"
LOGS = STATE / "logs"
PKI = STATE / "pki"
ADMIN_KUBECONFIG = STATE / "admin.kubeconfig"
KUBELET_KUBECONFIG = STATE / "kubelet.kubeconfig"
TOOLS_BIN = STATE / "bin"  # kubectl (symlink) for developers and tests

NODE = "tk8s-node"
NODE_BRIDGE = "tk8s0"  # harness-owned interface carrying the node IP
NODE_IP = "10.213.0.1"
CNI_BRIDGE = "tk8s-cni0"
POD_CIDR = "10.244.0.0/24"
SERVICE_CIDR = "10.96.0.0/16"
API = "https://127.0.0.1:6443"
CONTAINERD_SOCK = "/run/containerd/containerd.sock"
KUBELET_ROOT = Path("/var/lib/kubelet")
CSI_DRIVER = "hostpath.csi.k8s.io"
CSI_SOCK = KUBELET_ROOT / "plugins" / "csi-hostpath" / "csi.sock"
CSI_STATE = Path("/var/lib/csi-hostpath-data")
LOCAL_PATH_DIR = STATE / "local-path"
CNI_CONF_DIR = STATE / "cni" / "net.d"
CNI_IPAM_DIR = STATE / "cni" / "ipam"

APT_PACKAGES = {
    # package: a file it installs (presence check, no dpkg lock needed on a warm machine)
    "containerd": "/usr/bin/containerd",
    "runc": "/usr/sbin/runc",
    "containernetworking-plugins": "/usr/lib/cni/bridge",
    "iptables": "/usr/sbin/iptables",
    "conntrack": "/usr/sbin/conntrack",
    "socat": "/usr/bin/socat",
    "busybox-static": "/usr/share/doc/busybox-static",
    "fio": "/usr/bin/fio",
    "libc6-dev": "/usr/lib/x86_64-linux-gnu/libc.a",
    "gcc": "/usr/bin/gcc",
    "binutils": "/usr/bin/strip",
    "debootstrap": "/usr/sbin/debootstrap",
    "debian-archive-keyring": "/usr/share/keyrings/debian-archive-keyring.gpg",
    "openssl": "/usr/bin/openssl",
    "iproute2": "/usr/sbin/ip",
    "mount": "/usr/bin/mount",
    "util-linux": "/usr/bin/findmnt",
    "tar": "/usr/bin/tar",
}

PATH_ENV = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class HarnessError(Exception):
    pass


def log(msg: str) -> None:
    print(f"[tk8s] {msg}", file=sys.stderr, flush=True)


def run(
    *args, check=True, capture=False, env=None, timeout=None, input=None
) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(
            [str(a) for a in args],
            check=check,
            text=True,
            env=env,
            timeout=timeout,
            input=input,
            stdout=subprocess.PIPE if capture else sys.stderr,
            stderr=subprocess.PIPE if capture else None,
        )
    except subprocess.CalledProcessError as e:
        detail = (e.stderr or "").strip()
        raise HarnessError(
            f"command failed ({e.returncode}): {' '.join(map(str, args))}"
            + (f"\n{detail}" if detail else "")
        ) from None
    except FileNotFoundError as e:
        raise HarnessError(f"command not found: {e.filename}") from None
    except subprocess.TimeoutExpired:
        raise HarnessError(
            f"command timed out after {timeout}s: {' '.join(map(str, args))}"
        ) from None


def kubectl(
    *args, check=True, capture=True, input=None, timeout=120
) -> subprocess.CompletedProcess:
    return run(
        K8S_BIN / "kubectl",
        "--kubeconfig",
        ADMIN_KUBECONFIG,
        *args,
        check=check,
        capture=capture,
        input=input,
        timeout=timeout,
    )


def tail(path: Path, n: int = 30) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(lines[-n:])


# ------------------------------------------------------------------ processes


@dataclass
class Component:
    name: str
    argv: list
    ready: object = None  # callable -> bool
    ready_timeout: float = 90
    env: dict = field(default_factory=dict)

    @property
    def pidfile(self) -> Path:
        return RUN / f"{self.name}.pid"

    @property
    def logfile(self) -> Path:
        return LOGS / f"{self.name}.log"


def read_pid(name: str) -> int | None:
    try:
        return int((RUN / f"{name}.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def pid_alive(pid: int | None, exe: str | None = None) -> bool:
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[1].split()[0] == "Z":
        return False
    # An empty cmdline is a process in the middle of exec (the kernel sets the new argv
    # after the exec point of no return): alive, identity not yet known.
    return exe is None or not cmdline[0] or cmdline[0].decode(errors="replace") == exe


def running(name: str) -> int | None:
    pid = read_pid(name)
    exe = None
    try:
        exe = (RUN / f"{name}.pid").read_text().split(None, 1)[1].strip()
    except (OSError, IndexError):
        pass
    return pid if pid_alive(pid, exe) else None


def start(c: Component) -> bool:
    """Start c unless its PID file names a live process of the same binary (a component whose
    binary changed, e.g. after a version bump, is restarted). Returns True if it was started."""
    if running(c.name):
        try:
            old_exe = c.pidfile.read_text().split(None, 1)[1].strip()
        except (OSError, IndexError):
            old_exe = ""
        if old_exe == str(c.argv[0]):
            return False
        log(f"{c.name}: binary changed ({old_exe} -> {c.argv[0]}), restarting")
        stop(c.name)
    RUN.mkdir(parents=True, exist_ok=True)
    LOGS.mkdir(parents=True, exist_ok=True)
    if c.logfile.exists() and c.logfile.stat().st_size > 50 << 20:
        c.logfile.replace(c.logfile.with_suffix(".log.1"))
    logf = open(c.logfile, "ab")
    logf.write(
        f"\n===== {time.strftime('%Y-%m-%dT%H:%M:%S')} starting: {' '.join(map(str, c.argv))}\n".encode()
    )
    logf.flush()
    env = {"PATH": PATH_ENV, "HOME": "/root", "LANG": "C.UTF-8", **c.env}
    p = subprocess.Popen(
        [str(a) for a in c.argv],
        stdin=subprocess.DEVNULL,
        stdout=logf,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
        close_fds=True,
    )
    logf.close()
    c.pidfile.write_text(f"{p.pid} {c.argv[0]}\n")
    log(f"started {c.name} (pid {p.pid}, log {c.logfile})")
    return True


def wait_for(
    what: str,
    cond,
    timeout: float,
    logfile: Path | None = None,
    name: str | None = None,
    interval: float = 0.5,
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except Exception:  # noqa: BLE001 - a failing probe just means "not yet"
            pass
        if name and not running(name):
            raise HarnessError(
                f"{name} exited while waiting for {what}; last log lines of {logfile}:\n{tail(logfile)}"
            )
        if time.monotonic() > deadline:
            msg = f"timed out after {timeout:.0f}s waiting for {what}"
            if logfile:
                msg += f"; last log lines of {logfile}:\n{tail(logfile)}"
            raise HarnessError(msg)
        time.sleep(interval)


def stop(name: str, timeout: float = 10) -> None:
    pid = running(name)
    pidfile = RUN / f"{name}.pid"
    if not pid:
        pidfile.unlink(missing_ok=True)
        return
    log(f"stopping {name} (pid {pid})")
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if pid_alive(pid):
        log(f"{name} did not stop in {timeout:.0f}s, sending SIGKILL")
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while pid_alive(pid):
            time.sleep(0.1)
    pidfile.unlink(missing_ok=True)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


# ------------------------------------------------------------------ host preparation


def ensure_root() -> None:
    if os.geteuid() != 0:
        raise HarnessError("must run as root (starts containerd, the kubelet and mounts volumes)")


def ensure_packages() -> None:
    missing = [p for p, f in APT_PACKAGES.items() if not Path(f).exists()]
    if not missing:
        return
    log(f"installing Debian packages: {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    prc = Path("/usr/sbin/policy-rc.d")
    ours = not prc.exists()
    if ours:  # keep apt from starting services (we run our own containerd)
        prc.write_text("#!/bin/sh\nexit 101\n")
        prc.chmod(0o755)
    try:
        run("apt-get", "update", "-q", env=env)
        run("apt-get", "install", "-y", "-q", "--no-install-recommends", *missing, env=env)
    finally:
        if ours:
            prc.unlink(missing_ok=True)
    still = [p for p, f in APT_PACKAGES.items() if not Path(f).exists()]
    if still:
        raise HarnessError(f"packages still missing after apt-get install: {still}")


def ensure_go() -> None:
    import shutil

    if not shutil.which("go") and Path("/usr/local/go/bin/go").exists():
        os.environ["PATH"] = f"/usr/local/go/bin:{os.environ.get('PATH', PATH_ENV)}"
    try:
        v = run("go", "env", "GOVERSION", capture=True).stdout.strip()
    except HarnessError:
        raise HarnessError(
            "Go >= 1.24 is needed to build Kubernetes from the module proxy, and `go` is not on PATH "
            "(Debian bookworm's golang is too old; the machine image ships Go)"
        ) from None
    parts = v.removeprefix("go").split(".")
    if (int(parts[0]), int(parts[1])) < (1, 24):
        raise HarnessError(f"Go >= 1.24 needed, found {v}")


def check_host() -> None:
    problems = []
    if Path("/sys/fs/cgroup").exists():
        cg = Path("/proc/cgroups").read_text()
        for ctl in ("cpu", "cpuacct", "cpuset", "memory"):
            if f"\n{ctl}\t" not in cg:
                problems.append(f"cgroup controller {ctl} not available")
    if not Path("/dev/kmsg").exists():
        log("/dev/kmsg missing: linking /dev/console there (kind's workaround)")
        os.symlink("/dev/console", "/dev/kmsg")
    if not Path("/proc/sys/kernel/keys").exists():
        problems.append("/proc/sys/kernel/keys missing: the kubelet cannot set its kernel tunables")
    st = os.statvfs("/var/lib")
    free = st.f_bavail * st.f_frsize
    if free < 8 << 30:
        problems.append(
            f"only {free >> 30} GiB free under /var/lib; the kubelet evicts below 1 GiB and fio needs ~10 GiB"
        )
    if problems:
        raise HarnessError("host not suitable:\n  " + "\n  ".join(problems))


def build() -> None:
    t0 = time.monotonic()
    env = {**os.environ, "TESTCLUSTER_CACHE": str(CACHE), "KUBE_VERSION": KUBE_VERSION}
    if not all(
        (K8S_BIN / b).exists()
        for b in (
            "kube-apiserver",
            "kube-controller-manager",
            "kube-scheduler",
            "kubelet",
            "kubectl",
            "etcd",
        )
    ):
        log(
            f"building Kubernetes {KUBE_VERSION} + etcd from the Go module proxy (cold: ~25 min on 2 cores)"
        )
    run("bash", HERE / "build-k8s.sh", env=env)
    env.update(
        PROVISIONER_VERSION=PROVISIONER_VERSION,
        SNAPSHOTTER_VERSION=SNAPSHOTTER_VERSION,
        LOCALPATH_VERSION=LOCALPATH_VERSION,
        RESIZER_VERSION=RESIZER_VERSION,
    )
    run("bash", HERE / "build-storage.sh", env=env)
    log(f"binaries ready ({time.monotonic() - t0:.0f}s)")


def storage_bins() -> dict[str, Path]:
    import hashlib

    key = hashlib.sha256(
        b"".join(p.read_bytes() for p in sorted((HERE / "csi").glob("*/*.go")))
    ).hexdigest()[:12]
    # the shell script hashes `cat csi/*/*.go` in glob order, which is the same sorted order
    tk8s = CACHE / f"tk8s-csi-{KUBE_VERSION}-{key}"
    snap = CACHE / f"external-snapshotter-{SNAPSHOTTER_VERSION}"
    return {
        "tk8s-hostpath": tk8s / "tk8s-hostpath",
        "tk8s-registrar": tk8s / "tk8s-registrar",
        "csi-provisioner": CACHE / f"csi-provisioner-{PROVISIONER_VERSION}" / "csi-provisioner",
        "csi-snapshotter": snap / "csi-snapshotter",
        "snapshot-controller": snap / "snapshot-controller",
        "csi-resizer": CACHE / f"csi-resizer-{RESIZER_VERSION}" / "csi-resizer",
        "snapshot-crds": snap / "crd",
        "local-path-provisioner": CACHE
        / f"local-path-provisioner-{LOCALPATH_VERSION}"
        / "local-path-provisioner",
    }


def pause_source() -> Path:
    gomodcache = run("go", "env", "GOMODCACHE", capture=True).stdout.strip()
    p = Path(gomodcache) / f"k8s.io/kubernetes@{KUBE_VERSION}" / "build/pause/linux/pause.c"
    if not p.exists():
        run(
            "go",
            "mod",
            "download",
            f"k8s.io/kubernetes@{KUBE_VERSION}",
            env={**os.environ, "GOFLAGS": ""},
        )
    return p


def ensure_network() -> None:
    links = run("ip", "-o", "link", "show", capture=True).stdout
    if f": {NODE_BRIDGE}:" not in links and f": {NODE_BRIDGE}@" not in links:
        log(f"creating bridge {NODE_BRIDGE} with node IP {NODE_IP}")
        run("ip", "link", "add", NODE_BRIDGE, "type", "bridge")
    addrs = run("ip", "-o", "addr", "show", "dev", NODE_BRIDGE, capture=True).stdout
    if f" {NODE_IP}/" not in addrs:
        run("ip", "addr", "add", f"{NODE_IP}/32", "dev", NODE_BRIDGE)
    run("ip", "link", "set", NODE_BRIDGE, "up")
    for k in ("net/bridge/bridge-nf-call-iptables",):
        p = Path("/proc/sys") / k
        if not p.exists():
            run("modprobe", "br_netfilter", check=False, capture=True)


# ------------------------------------------------------------------ configuration


def openssl(*args) -> None:
    run("openssl", *args, capture=True)


def ensure_pki() -> None:
    PKI.mkdir(parents=True, exist_ok=True)
    os.chmod(PKI, 0o700)
    ca_key, ca_crt = PKI / "ca.key", PKI / "ca.crt"
    if not ca_crt.exists():
        log("writing PKI (openssl)")
        openssl(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            ca_key,
            "-out",
            ca_crt,
            "-days",
            "3650",
            "-subj",
            "/CN=kubectl-storage-testcluster-ca",
        )

    def cert(name: str, subj: str, ext: str) -> None:
        if (PKI / f"{name}.crt").exists():
            return
        with tempfile.NamedTemporaryFile("w", suffix=".ext", delete=False) as f:
            f.write(ext)
        openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            PKI / f"{name}.key",
            "-out",
            PKI / f"{name}.csr",
            "-subj",
            subj,
        )
        openssl(
            "x509",
            "-req",
            "-in",
            PKI / f"{name}.csr",
            "-CA",
            ca_crt,
            "-CAkey",
            ca_key,
            "-CAcreateserial",
            "-days",
            "3650",
            "-out",
            PKI / f"{name}.crt",
            "-extfile",
            f.name,
        )
        os.unlink(f.name)

    sans = (
        f"subjectAltName=IP:127.0.0.1,IP:{NODE_IP},IP:10.96.0.1,DNS:localhost,DNS:kubernetes,"
        "DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n"
    )
    cert("apiserver", "/CN=kube-apiserver", sans + "extendedKeyUsage=serverAuth\n")
    client = "extendedKeyUsage=clientAuth\n"
    cert("admin", "/O=system:masters/CN=kubernetes-admin", client)
    cert("apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client", client)
    cert("kubelet", f"/O=system:nodes/CN=system:node:{NODE}", client)
    if not (PKI / "sa.key").exists():
        openssl("genrsa", "-out", PKI / "sa.key", "2048")
        openssl("rsa", "-in", PKI / "sa.key", "-pubout", "-out", PKI / "sa.pub")
    write_kubeconfig(ADMIN_KUBECONFIG, "admin", "kubernetes-admin")
    write_kubeconfig(KUBELET_KUBECONFIG, "kubelet", f"system:node:{NODE}")


def write_kubeconfig(path: Path, certname: str, user: str) -> None:
    b64 = lambda p: base64.b64encode(p.read_bytes()).decode()  # noqa: E731
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kubectl-storage-test",
                "cluster": {"server": API, "certificate-authority-data": b64(PKI / "ca.crt")},
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": b64(PKI / f"{certname}.crt"),
                    "client-key-data": b64(PKI / f"{certname}.key"),
                },
            }
        ],
        "contexts": [
            {
                "name": "kubectl-storage-test",
                "context": {"cluster": "kubectl-storage-test", "user": user},
            }
        ],
        "current-context": "kubectl-storage-test",
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cfg, indent=1))  # JSON is YAML
    os.chmod(tmp, 0o600)
    tmp.replace(path)


def can_lower_oom_score_adj() -> bool:
    """True if this process has CAP_SYS_RESOURCE (needed to set a negative oom_score_adj)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) >> 24 & 1)
    return False


def write_configs() -> None:
    restrict_oom = not can_lower_oom_score_adj()
    (STATE / "containerd").mkdir(parents=True, exist_ok=True)
    CNI_CONF_DIR.mkdir(parents=True, exist_ok=True)
    CNI_IPAM_DIR.mkdir(parents=True, exist_ok=True)
    (STATE / "containerd" / "config.toml").write_text(
        textwrap.dedent(f"""\
        # written by tests/cluster/harness.py
        version = 2
        root = "/var/lib/containerd"
        state = "/run/containerd"
        [grpc]
          address = "{CONTAINERD_SOCK}"
        [plugins."io.containerd.grpc.v1.cri"]
          sandbox_image = "{images.PAUSE_IMAGE}"
          # This machine's root lacks CAP_SYS_RESOURCE, so runc cannot lower oom_score_adj
          # (the kubelet asks for -998 on every pod sandbox): clamp to containerd's own value.
          restrict_oom_score_adj = {"true" if restrict_oom else "false"}
          [plugins."io.containerd.grpc.v1.cri".containerd]
            snapshotter = "overlayfs"
            default_runtime_name = "runc"
            [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
              runtime_type = "io.containerd.runc.v2"
              [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
                SystemdCgroup = false
          [plugins."io.containerd.grpc.v1.cri".cni]
            bin_dir = "/usr/lib/cni"
            conf_dir = "{CNI_CONF_DIR}"
        """)
    )
    # Pods get an address on a host-only bridge; no default route and no masquerading, so
    # nothing a pod sends can leave the machine. The bridge IP lets the kubelet probe pods.
    (CNI_CONF_DIR / "10-tk8s.conflist").write_text(
        json.dumps(
            {
                "cniVersion": "1.0.0",
                "name": "tk8s",
                "plugins": [
                    {
                        "type": "bridge",
                        "bridge": CNI_BRIDGE,
                        "isGateway": True,
                        "isDefaultGateway": False,
                        "ipMasq": False,
                        "hairpinMode": True,
                        "ipam": {
                            "type": "host-local",
                            "dataDir": str(CNI_IPAM_DIR),
                            "ranges": [[{"subnet": POD_CIDR}]],
                        },
                    }
                ],
            },
            indent=1,
        )
    )
    fstype = run("stat", "-f", "-c", "%T", "/var/lib", capture=True).stdout.strip()
    lsci = fstype not in ("overlayfs", "9p", "btrfs", "zfs", "tmpfs", "fuseblk", "v9fs")
    KUBELET_ROOT.mkdir(parents=True, exist_ok=True)
    (STATE / "kubelet.yaml").write_text(
        json.dumps(
            {
                "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "kind": "KubeletConfiguration",
                "cgroupDriver": "cgroupfs",
                "failCgroupV1": False,
                "containerRuntimeEndpoint": f"unix://{CONTAINERD_SOCK}",
                "failSwapOn": False,
                "authentication": {
                    "anonymous": {"enabled": False},
                    "webhook": {"enabled": True},
                    "x509": {"clientCAFile": str(PKI / "ca.crt")},
                },
                "authorization": {"mode": "Webhook"},
                "clusterDomain": "cluster.local",
                "imageGCHighThresholdPercent": 100,
                "imageGCLowThresholdPercent": 99,
                "evictionHard": {
                    "memory.available": "100Mi",
                    "nodefs.available": "1Gi",
                    "imagefs.available": "1Gi",
                    "nodefs.inodesFree": "1%",
                },
                "localStorageCapacityIsolation": lsci,
                "protectKernelDefaults": False,
                "serializeImagePulls": False,
                "address": NODE_IP,
                "healthzBindAddress": "127.0.0.1",
                "readOnlyPort": 0,
                "staticPodPath": "",
                "resolvConf": "/etc/resolv.conf",
                "maxPods": 110,
            },
            indent=1,
        )
    )


# ------------------------------------------------------------------ components


def control_plane() -> list[Component]:
    b = K8S_BIN
    return [
        Component(
            "etcd",
            [
                b / "etcd",
                "--name",
                "tk8s",
                "--data-dir",
                STATE / "etcd",
                "--listen-client-urls",
                "http://127.0.0.1:2379",
                "--advertise-client-urls",
                "http://127.0.0.1:2379",
                "--listen-peer-urls",
                "http://127.0.0.1:2380",
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:2380",
                "--initial-cluster",
                "tk8s=http://127.0.0.1:2380",
                "--listen-metrics-urls",
                "http://127.0.0.1:2381",
                "--unsafe-no-fsync",
                "--log-level",
                "warn",
            ],
            ready=lambda: port_open(2379),
        ),
        Component(
            "kube-apiserver",
            [
                b / "kube-apiserver",
                "--etcd-servers=http://127.0.0.1:2379",
                "--bind-address=0.0.0.0",
                "--secure-port=6443",
                f"--advertise-address={NODE_IP}",
                f"--tls-cert-file={PKI / 'apiserver.crt'}",
                f"--tls-private-key-file={PKI / 'apiserver.key'}",
                f"--client-ca-file={PKI / 'ca.crt'}",
                f"--kubelet-client-certificate={PKI / 'apiserver-kubelet-client.crt'}",
                f"--kubelet-client-key={PKI / 'apiserver-kubelet-client.key'}",
                "--kubelet-preferred-address-types=InternalIP",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-account-signing-key-file={PKI / 'sa.key'}",
                f"--service-account-key-file={PKI / 'sa.pub'}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--authorization-mode=Node,RBAC",
                "--enable-admission-plugins=NodeRestriction",
                "--allow-privileged=true",
                "--v=1",
            ],
            ready=lambda: kubectl("get", "--raw", "/readyz", timeout=10).stdout.strip() == "ok",
            ready_timeout=120,
        ),
        Component(
            "kube-controller-manager",
            [
                b / "kube-controller-manager",
                f"--kubeconfig={ADMIN_KUBECONFIG}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--root-ca-file={PKI / 'ca.crt'}",
                f"--service-account-private-key-file={PKI / 'sa.key'}",
                f"--cluster-signing-cert-file={PKI / 'ca.crt'}",
                f"--cluster-signing-key-file={PKI / 'ca.key'}",
                "--use-service-account-credentials=false",
                "--v=1",
            ],
        ),
        Component(
            "kube-scheduler",
            [
                b / "kube-scheduler",
                f"--kubeconfig={ADMIN_KUBECONFIG}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                # Seen here about once per CI run: a pod whose claim was provisioned and bound
                # stayed in the scheduler's unschedulable queue for the default 5 minutes (the
                # bind event did not requeue it), so a 300 s wait timed out. Retry it sooner.
                "--pod-max-in-unschedulable-pods-duration=15s",
                "--v=1",
            ],
        ),
    ]


def containerd_component() -> Component:
    return Component(
        "containerd",
        ["/usr/bin/containerd", "--config", STATE / "containerd" / "config.toml"],
        ready=lambda: (
            run("ctr", "--address", CONTAINERD_SOCK, "version", capture=True, timeout=5).returncode
            == 0
        ),
    )


def kubelet_component() -> Component:
    return Component(
        "kubelet",
        [
            K8S_BIN / "kubelet",
            f"--config={STATE / 'kubelet.yaml'}",
            f"--kubeconfig={KUBELET_KUBECONFIG}",
            f"--hostname-override={NODE}",
            f"--node-ip={NODE_IP}",
            f"--root-dir={KUBELET_ROOT}",
            "--v=2",
        ],
    )


def storage_components() -> list[Component]:
    s = storage_bins()
    k = f"--kubeconfig={ADMIN_KUBECONFIG}"
    return [
        Component(
            "tk8s-hostpath",
            [
                s["tk8s-hostpath"],
                f"--endpoint=unix://{CSI_SOCK}",
                f"--drivername={CSI_DRIVER}",
                f"--nodeid={NODE}",
                f"--statedir={CSI_STATE}",
            ],
            ready=lambda: CSI_SOCK.is_socket(),
        ),
        Component(
            "tk8s-registrar",
            [
                s["tk8s-registrar"],
                f"--driver={CSI_DRIVER}",
                f"--kubelet-registration-path={CSI_SOCK}",
                f"--plugin-registration-path={KUBELET_ROOT / 'plugins_registry'}",
            ],
        ),
        Component(
            "csi-provisioner",
            [
                s["csi-provisioner"],
                f"--csi-address={CSI_SOCK}",
                k,
                "--extra-create-metadata",
                "--leader-election=false",
                "--timeout=60s",
                "--v=2",
            ],
        ),
        Component(
            "csi-snapshotter",
            [
                s["csi-snapshotter"],
                f"--csi-address={CSI_SOCK}",
                k,
                "--leader-election=false",
                "--timeout=60s",
                "--v=2",
            ],
        ),
        Component(
            "snapshot-controller", [s["snapshot-controller"], k, "--leader-election=false", "--v=2"]
        ),
        Component(
            "csi-resizer",
            [
                s["csi-resizer"],
                f"--csi-address={CSI_SOCK}",
                k,
                "--leader-election=false",
                "--timeout=60s",
                "--v=2",
            ],
        ),
        Component(
            "local-path-provisioner",
            [
                s["local-path-provisioner"],
                "--debug",
                "start",
                k,
                "--namespace",
                "local-path-storage",
                "--service-account-name",
                "local-path-provisioner-service-account",
                "--configmap-name",
                "local-path-config",
                "--provisioner-name",
                "rancher.io/local-path",
            ],
        ),
    ]


CSI_SIDECARS = (
    "csi-provisioner",
    "csi-snapshotter",
    "csi-resizer",
)  # connected to the driver socket

ALL_NAMES = [
    "containerd",
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubelet",
    "tk8s-hostpath",
    "tk8s-registrar",
    "csi-provisioner",
    "csi-snapshotter",
    "snapshot-controller",
    "csi-resizer",
    "local-path-provisioner",
]


# ------------------------------------------------------------------ cluster objects

STORAGE_OBJECTS = f"""
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: {CSI_DRIVER}
spec:
  attachRequired: false
  podInfoOnMount: true
  volumeLifecycleModes: [Persistent]
  fsGroupPolicy: File
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: csi-hostpath-sc
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: {CSI_DRIVER}
reclaimPolicy: Delete
volumeBindingMode: Immediate
allowVolumeExpansion: true
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: csi-hostpath-snapclass
  annotations:
    snapshot.storage.kubernetes.io/is-default-class: "true"
driver: {CSI_DRIVER}
deletionPolicy: Delete
---
apiVersion: v1
kind: Namespace
metadata:
  name: local-path-storage
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: local-path-provisioner-service-account
  namespace: local-path-storage
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: local-path-config
  namespace: local-path-storage
data:
  config.json: |-
    {{"nodePathMap": [{{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["{LOCAL_PATH_DIR}"]}}]}}
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "$VOL_DIR"
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata:
      name: helper-pod
    spec:
      tolerations:
      - key: node.kubernetes.io/disk-pressure
        operator: Exists
        effect: NoSchedule
      containers:
      - name: helper-pod
        image: {images.BUSYBOX_IMAGE}
        imagePullPolicy: IfNotPresent
"""


def apply_storage_objects() -> None:
    crds = storage_bins()["snapshot-crds"]
    kubectl("apply", "-f", crds)
    kubectl(
        "wait",
        "--for=condition=established",
        "--timeout=60s",
        *[
            f"crd/{n}"
            for n in (
                "volumesnapshotclasses.snapshot.storage.k8s.io",
                "volumesnapshotcontents.snapshot.storage.k8s.io",
                "volumesnapshots.snapshot.storage.k8s.io",
            )
        ],
    )
    kubectl("apply", "-f", "-", input=STORAGE_OBJECTS)


def node_ready() -> bool:
    out = kubectl(
        "get",
        "node",
        NODE,
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
        check=False,
        timeout=10,
    )
    return out.returncode == 0 and out.stdout.strip() == "True"


def csinode_has_driver() -> bool:
    out = kubectl(
        "get", "csinode", NODE, "-o", "jsonpath={.spec.drivers[*].name}", check=False, timeout=10
    )
    return CSI_DRIVER in out.stdout.split()


SMOKE = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: hostpath}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 16Mi}}}}
  storageClassName: csi-hostpath-sc
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: localpath}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: 16Mi}}}}
  storageClassName: local-path
---
apiVersion: v1
kind: Pod
metadata: {{name: writer}}
spec:
  restartPolicy: Never
  containers:
  - name: w
    image: {toolbox}
    command: [sh, -c, "echo smoke > /a/f && echo smoke > /b/f && fio --version && cat /a/f /b/f"]
    volumeMounts: [{{name: a, mountPath: /a}}, {{name: b, mountPath: /b}}]
  volumes:
  - {{name: a, persistentVolumeClaim: {{claimName: hostpath}}}}
  - {{name: b, persistentVolumeClaim: {{claimName: localpath}}}}
"""

SMOKE_SNAPSHOT = """
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: snap}
spec:
  volumeSnapshotClassName: csi-hostpath-snapclass
  source: {persistentVolumeClaimName: hostpath}
"""


def smoke_test() -> None:
    """PVCs in both classes bind, a toolbox pod writes to both, a snapshot becomes ready."""
    ns = f"tk8s-smoke-{int(time.time())}"
    t0 = time.monotonic()
    log(f"verifying storage in namespace {ns}")
    kubectl("create", "namespace", ns)
    try:
        kubectl("-n", ns, "apply", "-f", "-", input=SMOKE.format(toolbox=images.toolbox_image()))
        try:
            kubectl(
                "-n",
                ns,
                "wait",
                "--for=jsonpath={.status.phase}=Succeeded",
                "pod/writer",
                "--timeout=150s",
                timeout=170,
            )
        except HarnessError as e:
            desc = (
                kubectl("-n", ns, "describe", "pod/writer", check=False).stdout
                + kubectl("-n", ns, "describe", "pvc", check=False).stdout
            )
            raise HarnessError(
                f"storage smoke test: writer pod did not succeed: {e}\n{desc[-3000:]}"
            ) from None
        kubectl("-n", ns, "apply", "-f", "-", input=SMOKE_SNAPSHOT)
        try:
            kubectl(
                "-n",
                ns,
                "wait",
                "--for=jsonpath={.status.readyToUse}=true",
                "volumesnapshot/snap",
                "--timeout=90s",
                timeout=110,
            )
        except HarnessError as e:
            desc = kubectl("-n", ns, "describe", "volumesnapshot/snap", check=False).stdout
            raise HarnessError(
                f"storage smoke test: snapshot not ready: {e}\n{desc[-3000:]}"
            ) from None
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)
    log(f"storage verified ({time.monotonic() - t0:.0f}s)")


# ------------------------------------------------------------------ up / down / status


def up(args) -> int:
    ensure_root()
    t0 = time.monotonic()
    ensure_packages()
    ensure_go()
    check_host()
    if not args.no_build:
        # Image rootfs builds are mostly downloads and dpkg: run them beside the Go builds.
        errors: list[BaseException] = []

        def build_images() -> None:
            try:
                for _tag, archive, make in images.image_specs(CACHE, pause_source()):
                    make(archive)
            except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
                errors.append(e)

        t = threading.Thread(target=build_images, name="images", daemon=True)
        t.start()
        build()
        t.join()
        if errors:
            e = errors[0]
            raise HarnessError(f"building images failed: {e}") from e
    for name, p in storage_bins().items():
        if not p.exists():
            raise HarnessError(f"{name} missing at {p}: run without --no-build")
    ensure_network()
    ensure_pki()
    write_configs()
    TOOLS_BIN.mkdir(parents=True, exist_ok=True)
    link = TOOLS_BIN / "kubectl"
    if not link.is_symlink() or os.readlink(link) != str(K8S_BIN / "kubectl"):
        link.unlink(missing_ok=True)
        link.symlink_to(K8S_BIN / "kubectl")

    started = driver_started = False
    c = containerd_component()
    if running(c.name) is None and Path(CONTAINERD_SOCK).exists() and port_is_containerd():
        raise HarnessError(
            f"a containerd not started by this harness is serving {CONTAINERD_SOCK}; stop it first"
        )
    started |= start(c)
    wait_for("containerd", c.ready, 60, c.logfile, c.name)
    ctr = ["ctr", "--address", CONTAINERD_SOCK]
    images.ensure_images(CACHE, pause_source(), ctr)

    for c in control_plane():
        started |= start(c)
        if c.ready:
            wait_for(c.name, c.ready, c.ready_timeout, c.logfile, c.name)
    kl = kubelet_component()
    started |= start(kl)
    wait_for(f"node {NODE} Ready", node_ready, 180, kl.logfile, kl.name, interval=1)
    log(f"node {NODE} Ready")

    apply_storage_objects()
    for c in storage_components():
        if c.name in CSI_SIDECARS and driver_started:
            stop(
                c.name
            )  # sidecars exit on their own when the driver socket goes away; do not race them
        s = start(c)
        started |= s
        if c.name == "tk8s-hostpath":
            driver_started = s
        if c.ready:
            wait_for(c.name, c.ready, 30, c.logfile, c.name)
    wait_for(
        f"CSINode {NODE} to list {CSI_DRIVER}",
        csinode_has_driver,
        60,
        LOGS / "kubelet.log",
        "kubelet",
    )
    time.sleep(1)
    for c in storage_components():  # crash-looping sidecars show up here
        if not running(c.name):
            raise HarnessError(f"{c.name} exited; last log lines:\n{tail(c.logfile)}")
    if started or args.verify:
        smoke_test()
    else:
        log("everything was already running")
    log(f"cluster up in {time.monotonic() - t0:.0f}s")
    log(f"export KUBECONFIG={ADMIN_KUBECONFIG} PATH={TOOLS_BIN}:$PATH")
    print(ADMIN_KUBECONFIG)
    return 0


def port_is_containerd() -> bool:
    r = subprocess.run(
        ["ctr", "--address", CONTAINERD_SOCK, "version"], capture_output=True, timeout=5
    )
    return r.returncode == 0


def mounts_under(*prefixes: str) -> list[str]:
    out = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        mp = line.split()[4].replace("\\040", " ")
        if any(mp == p.rstrip("/") or mp.startswith(p) for p in prefixes):
            out.append(mp)
    return out


def unmount_all(*prefixes: str) -> None:
    for _ in range(5):
        mps = mounts_under(*prefixes)
        if not mps:
            return
        for mp in sorted(set(mps), key=lambda m: m.count("/"), reverse=True):
            if subprocess.run(["umount", mp], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", mp], capture_output=True)
    left = mounts_under(*prefixes)
    if left:
        log(f"warning: still mounted: {left[:5]}")


def kill_containers() -> None:
    """Stop every container of the k8s.io namespace (shims outlive containerd otherwise)."""
    ctr = ["ctr", "--address", CONTAINERD_SOCK, "-n", "k8s.io"]
    r = subprocess.run([*ctr, "tasks", "ls", "-q"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return
    tasks = r.stdout.split()
    if tasks:
        log(f"killing {len(tasks)} containers")
    for t in tasks:
        subprocess.run([*ctr, "tasks", "kill", "-s", "SIGKILL", t], capture_output=True, timeout=30)
    for t in tasks:
        subprocess.run([*ctr, "tasks", "delete", "-f", t], capture_output=True, timeout=60)
    r = subprocess.run([*ctr, "containers", "ls", "-q"], capture_output=True, text=True, timeout=30)
    for cid in r.stdout.split():
        subprocess.run([*ctr, "containers", "delete", cid], capture_output=True, timeout=60)


def down(args) -> int:
    ensure_root()
    for name in reversed(ALL_NAMES[ALL_NAMES.index("tk8s-hostpath") :]):
        stop(name)
    stop("kubelet")
    if running("containerd"):
        kill_containers()
        if args.purge:
            ctr = ["ctr", "--address", CONTAINERD_SOCK, "-n", "k8s.io"]
            refs = subprocess.run(
                [*ctr, "images", "ls", "-q"], capture_output=True, text=True
            ).stdout.split()
            if refs:
                log(f"removing {len(refs)} images from containerd")
                subprocess.run([*ctr, "images", "rm", *refs], capture_output=True)
            for m in (CACHE / "images").glob("*.imported"):
                m.unlink()
    # pod volume mounts, container rootfs and network namespaces
    unmount_all(str(KUBELET_ROOT) + "/", "/run/containerd/io.containerd.", "/run/netns/cni-")
    for ns in Path("/run/netns").glob("cni-*") if Path("/run/netns").exists() else []:
        ns.unlink(missing_ok=True)
    for name in reversed(ALL_NAMES[: ALL_NAMES.index("kubelet")]):
        stop(name)
    # all pods are gone: release their IPs
    if CNI_IPAM_DIR.exists():
        for f in CNI_IPAM_DIR.glob("*/*"):
            if f.name[0].isdigit():
                f.unlink(missing_ok=True)
    for link in (CNI_BRIDGE, NODE_BRIDGE):
        subprocess.run(["ip", "link", "del", link], capture_output=True)
    if args.purge:
        import shutil

        log(
            f"removing cluster state: {STATE}, {KUBELET_ROOT}, {CSI_STATE} (build cache {CACHE} is kept)"
        )
        unmount_all(str(KUBELET_ROOT) + "/", str(STATE) + "/")
        for d in (STATE, KUBELET_ROOT, CSI_STATE):
            shutil.rmtree(d, ignore_errors=True)
    log("cluster stopped")
    return 0


def status(args) -> int:
    rc = 0
    for name in ALL_NAMES:
        pid = running(name)
        print(f"{name:24} {'running pid ' + str(pid) if pid else 'stopped'}")
        if not pid:
            rc = 3
    if running("kube-apiserver"):
        r = kubectl("get", "nodes", "-o", "wide", check=False, timeout=10)
        print(r.stdout.rstrip() or r.stderr.rstrip())
        r = kubectl("get", "storageclass,volumesnapshotclass", check=False, timeout=10)
        print(r.stdout.rstrip() or r.stderr.rstrip())
    print(f"KUBECONFIG={ADMIN_KUBECONFIG}")
    return rc


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="tests/cluster", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser(
        "up", help="build (cached), start and verify the cluster; prints the KUBECONFIG path"
    )
    u.add_argument("--no-build", action="store_true", help="do not run the (cached) build scripts")
    u.add_argument(
        "--verify",
        action="store_true",
        help="run the storage smoke test even if nothing was started",
    )
    d = sub.add_parser("down", help="stop everything started by up")
    d.add_argument(
        "--purge",
        action="store_true",
        help="also delete the cluster's state (etcd, PKI, volumes, imported images); keeps the build cache",
    )
    sub.add_parser("status", help="show what runs")
    args = p.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `status | head` should not trace back
    try:
        if args.cmd == "status":
            return status(args)
        ensure_root()
        STATE.mkdir(parents=True, exist_ok=True)
        with open(STATE / ".lock", "w") as lock:  # one up/down at a time (parallel test sessions)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log("another up/down is running; waiting for it")
                fcntl.flock(lock, fcntl.LOCK_EX)
            return {"up": up, "down": down}[args.cmd](args)
    except HarnessError as e:
        print(f"[tk8s] ERROR: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
