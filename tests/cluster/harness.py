"""Kubernetes test cluster for kubectl-storage (one control plane, 1..N nodes): up / down / status.

Everything runs as a host process started by this script, with a PID file and a log file
under the state dir: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the CSI
sidecars and the local-path provisioner once, and per node a containerd, a kubelet and a CSI
hostpath node plugin with its registrar. Binaries and images are built from the Go module proxy and Debian packages
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
import shutil
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
import lazyfs  # noqa: E402

KUBE_VERSION = os.environ.get("KUBE_VERSION", "v1.34.12")
PROVISIONER_VERSION = os.environ.get("PROVISIONER_VERSION", "v5.3.0")
SNAPSHOTTER_VERSION = os.environ.get("SNAPSHOTTER_VERSION", "v8.4.0")
LOCALPATH_VERSION = os.environ.get("LOCALPATH_VERSION", "v0.0.30")
RESIZER_VERSION = os.environ.get("RESIZER_VERSION", "v2.2.0")
GOFUSE_VERSION = os.environ.get("GOFUSE_VERSION", "v2.12.1")  # LazyFS medium (build-storage.sh)

CACHE = Path(os.environ.get("TESTCLUSTER_CACHE", "/var/cache/kubectl-storage-testcluster"))
STATE = Path(os.environ.get("TESTCLUSTER_STATE", "/var/lib/kubectl-storage-testcluster"))
K8S_BIN = CACHE / f"k8s-{KUBE_VERSION}" / "bin"
RUN = STATE / "run"
LOGS = STATE / "logs"
PKI = STATE / "pki"
ADMIN_KUBECONFIG = STATE / "admin.kubeconfig"
KUBELET_KUBECONFIG = STATE / "kubelet.kubeconfig"
TOOLS_BIN = STATE / "bin"  # kubectl (symlink) for developers and tests

NODE = "tk8s-node"  # the first node; the others are tk8s-node-2, tk8s-node-3, ...
NODE_BRIDGE = "tk8s0"  # harness-owned interface carrying the node IPs
NODE_IP = "10.213.0.1"
CNI_BRIDGE = "tk8s-cni0"
POD_CIDR = "10.244.0.0/24"
CLUSTER_POD_CIDR = "10.244.0.0/16"  # every node's pod CIDR; pods route it via their bridge
NODE_LABEL = "kubectl-storage.test/cluster-node"  # set by each harness kubelet (=<index>)
MAX_NODES = 200
NODES_FILE = STATE / "node-count"  # how many nodes the last `up` started
SERVICE_CIDR = "10.96.0.0/16"
API = "https://127.0.0.1:6443"
CONTAINERD_SOCK = "/run/containerd/containerd.sock"
KUBELET_ROOT = Path("/var/lib/kubelet")
CSI_DRIVER = "hostpath.csi.k8s.io"
CSI_SOCK = KUBELET_ROOT / "plugins" / "csi-hostpath" / "csi.sock"
CSI_STATE = Path("/var/lib/csi-hostpath-data")
# The driver's volumes live on a filesystem of their own (btrfs on a loop device over a sparse
# image), not on the host's root filesystem: `snapshot check --freeze` freezes a volume's
# filesystem, which must not be the one etcd, containerd and the kubelets write to. btrfs gives
# the driver's default snapshot mode (atomic) its single instant: each Filesystem volume is a
# subvolume and each snapshot a read-only btrfs snapshot of it (or a reflink of a Block image),
# kept in CSI_VOLUMES/.snapshots; the copy modes keep theirs in CSI_STATE/snapshots on the root
# filesystem.
CSI_VOLUMES = CSI_STATE / "volumes"
# The tmpfs of the driver's memory-backed volumes (class parameter tk8s.io/medium: Memory).
CSI_MEMORY = CSI_STATE / "memory"
CSI_MEMORY_SIZE = "4g"
CSI_VOLUMES_IMAGE = Path("/var/lib/csi-hostpath-volumes.img")
CSI_VOLUMES_SIZE = "64G"
LOCAL_PATH_DIR = STATE / "local-path"
CNI_CONF_DIR = STATE / "cni" / "net.d"
CNI_IPAM_DIR = STATE / "cni" / "ipam"


@dataclass(frozen=True)
class Node:
    """One kubelet of the cluster, with its own containerd, root dirs, IP, pod CIDR and bridge.

    Node 1 keeps the single-node layout (names, paths and sockets as before); node i > 1 has
    everything of its own under STATE/nodes/<name>, /var/lib/tk8s-kubelet-<i>,
    /var/lib/tk8s-containerd-<i> and /run/tk8s-containerd-<i>."""

    index: int

    @property
    def first(self) -> bool:
        return self.index == 1

    @property
    def name(self) -> str:
        return NODE if self.first else f"{NODE}-{self.index}"

    @property
    def ip(self) -> str:
        return f"10.213.{self.index // 250}.{self.index % 250}"

    @property
    def pod_cidr(self) -> str:
        return f"10.244.{self.index - 1}.0/24"

    @property
    def pod_gateway(self) -> str:
        return f"10.244.{self.index - 1}.1"

    @property
    def cni_bridge(self) -> str:
        return CNI_BRIDGE if self.first else f"tk8s-cni{self.index - 1}"

    @property
    def suffix(self) -> str:  # of component names (PID and log files)
        return "" if self.first else f".{self.name}"

    @property
    def dir(self) -> Path:  # configs
        return STATE if self.first else STATE / "nodes" / self.name

    @property
    def containerd_sock(self) -> str:
        return CONTAINERD_SOCK if self.first else f"{self.containerd_state}/containerd.sock"

    @property
    def containerd_root(self) -> str:
        return "/var/lib/containerd" if self.first else f"/var/lib/tk8s-containerd-{self.index}"

    @property
    def containerd_state(self) -> str:
        return "/run/containerd" if self.first else f"/run/tk8s-containerd-{self.index}"

    @property
    def kubelet_root(self) -> Path:
        return KUBELET_ROOT if self.first else Path(f"/var/lib/tk8s-kubelet-{self.index}")

    @property
    def kubeconfig(self) -> Path:
        return KUBELET_KUBECONFIG if self.first else self.dir / "kubelet.kubeconfig"

    @property
    def csi_sock(self) -> Path:
        return self.kubelet_root / "plugins" / "csi-hostpath" / "csi.sock"

    @property
    def cni_conf_dir(self) -> Path:
        return CNI_CONF_DIR if self.first else self.dir / "cni" / "net.d"

    @property
    def cni_ipam_dir(self) -> Path:
        return CNI_IPAM_DIR if self.first else self.dir / "cni" / "ipam"

    @property
    def cgroup_root(self) -> str:
        # kubelets must not share one: each removes the pod cgroups it does not know
        return "/" if self.first else f"/tk8s-{self.name}"

    @property
    def pod_logs_dir(self) -> str:
        return "/var/log/pods" if self.first else f"/var/log/tk8s-pods/{self.name}"

    @property
    def local_path_dir(self) -> Path:  # local-path volumes of this node (node-local storage)
        return LOCAL_PATH_DIR if self.first else STATE / f"local-path-{self.name}"

    def ctr(self) -> list[str]:
        return ["ctr", "--address", self.containerd_sock]


def nodes_of(n: int) -> list[Node]:
    return [Node(i) for i in range(1, n + 1)]


def node_by_name(name: str) -> Node:
    for i in range(1, MAX_NODES + 1):
        if Node(i).name == name:
            return Node(i)
    raise HarnessError(f"{name} is not a node of this harness ({NODE}, {NODE}-2, ...)")


def recorded_nodes() -> int:
    """The node count of the last `up`, at least the highest node with a PID file."""
    try:
        n = int(NODES_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        n = 1
    for pidfile in RUN.glob(f"*.{NODE}-*.pid") if RUN.exists() else []:
        try:
            n = max(n, int(pidfile.name.rsplit("-", 1)[1].split(".")[0]))
        except ValueError:
            pass
    return n


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
    "btrfs-progs": "/usr/bin/btrfs",
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
        + f"go-fuse {GOFUSE_VERSION}\n".encode()
    ).hexdigest()[:12]
    # the shell script hashes `cat csi/*/*.go` in glob order, which is the same sorted order
    # (file names chosen so in every locale), then `echo "go-fuse $GOFUSE_VERSION"`
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


def ensure_network(nodes: list[Node]) -> None:
    links = run("ip", "-o", "link", "show", capture=True).stdout
    if f": {NODE_BRIDGE}:" not in links and f": {NODE_BRIDGE}@" not in links:
        log(f"creating bridge {NODE_BRIDGE} for the node IPs")
        run("ip", "link", "add", NODE_BRIDGE, "type", "bridge")
    addrs = run("ip", "-o", "addr", "show", "dev", NODE_BRIDGE, capture=True).stdout
    for node in nodes:
        if f" {node.ip}/" not in addrs:
            run("ip", "addr", "add", f"{node.ip}/32", "dev", NODE_BRIDGE)
    run("ip", "link", "set", NODE_BRIDGE, "up")
    # every kubelet (its cAdvisor watches all cgroups) and containerd takes inotify instances and
    # watches; the default of 128 instances per user is meant for one of each (not measured here)
    for key, want in (("max_user_instances", 8192), ("max_user_watches", 1048576)):
        f = Path("/proc/sys/fs/inotify") / key
        if len(nodes) > 1 and f.exists() and int(f.read_text()) < want:
            f.write_text(f"{want}\n")
    for k in ("net/bridge/bridge-nf-call-iptables",):
        p = Path("/proc/sys") / k
        if not p.exists():
            run("modprobe", "br_netfilter", check=False, capture=True)


# ------------------------------------------------------------------ configuration


def openssl(*args) -> None:
    run("openssl", *args, capture=True)


def ensure_pki(nodes: list[Node]) -> None:
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
    for node in nodes:
        certname = "kubelet" if node.first else f"kubelet-{node.name}"
        cert(certname, f"/O=system:nodes/CN=system:node:{node.name}", client)
        node.dir.mkdir(parents=True, exist_ok=True)
        if not node.kubeconfig.exists():
            write_kubeconfig(node.kubeconfig, certname, f"system:node:{node.name}")


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


def write_configs(node: Node) -> None:
    restrict_oom = not can_lower_oom_score_adj()
    (node.dir / "containerd").mkdir(parents=True, exist_ok=True)
    node.cni_conf_dir.mkdir(parents=True, exist_ok=True)
    node.cni_ipam_dir.mkdir(parents=True, exist_ok=True)
    # runc's state of node i > 1 lives under its own state dir (the default is shared)
    runc_root = "" if node.first else f"{node.containerd_state}/runc"
    (node.dir / "containerd" / "config.toml").write_text(
        textwrap.dedent(f"""\
        # written by tests/cluster/harness.py
        version = 2
        root = "{node.containerd_root}"
        state = "{node.containerd_state}"
        [grpc]
          address = "{node.containerd_sock}"
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
                Root = "{runc_root}"
          [plugins."io.containerd.grpc.v1.cri".cni]
            bin_dir = "/usr/lib/cni"
            conf_dir = "{node.cni_conf_dir}"
        """)
    )
    # Pods get an address on a host-only bridge per node; no default route and no
    # masquerading, so nothing a pod sends can leave the machine. The bridge IP lets the kubelet
    # probe pods, and the route to all pod CIDRs through it lets pods reach pods on other nodes
    # (the host forwards between the bridges).
    (node.cni_conf_dir / "10-tk8s.conflist").write_text(
        json.dumps(
            {
                "cniVersion": "1.0.0",
                "name": "tk8s",
                "plugins": [
                    {
                        "type": "bridge",
                        "bridge": node.cni_bridge,
                        "isGateway": True,
                        "isDefaultGateway": False,
                        "ipMasq": False,
                        "hairpinMode": True,
                        "ipam": {
                            "type": "host-local",
                            "dataDir": str(node.cni_ipam_dir),
                            "ranges": [[{"subnet": node.pod_cidr}]],
                            "routes": [{"dst": CLUSTER_POD_CIDR, "gw": node.pod_gateway}],
                        },
                    }
                ],
            },
            indent=1,
        )
    )
    fstype = run("stat", "-f", "-c", "%T", "/var/lib", capture=True).stdout.strip()
    lsci = fstype not in ("overlayfs", "9p", "btrfs", "zfs", "tmpfs", "fuseblk", "v9fs")
    node.kubelet_root.mkdir(parents=True, exist_ok=True)
    extra: dict = {}
    if not node.first:
        extra = {"cgroupRoot": node.cgroup_root, "podLogsDir": node.pod_logs_dir}
        ensure_cgroup(node.cgroup_root)
        Path(node.pod_logs_dir).mkdir(parents=True, exist_ok=True)
    (node.dir / "kubelet.yaml").write_text(
        json.dumps(
            {
                "apiVersion": "kubelet.config.k8s.io/v1beta1",
                "kind": "KubeletConfiguration",
                "cgroupDriver": "cgroupfs",
                "failCgroupV1": False,
                "containerRuntimeEndpoint": f"unix://{node.containerd_sock}",
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
                "address": node.ip,
                # one healthz port per IP: node 1 keeps loopback, the others use their node IP
                "healthzBindAddress": "127.0.0.1" if node.first else node.ip,
                "readOnlyPort": 0,
                "staticPodPath": "",
                "resolvConf": "/etc/resolv.conf",
                "maxPods": 110,
                **extra,
            },
            indent=1,
        )
    )


def ensure_cgroup(path: str) -> None:
    """Create a cgroup (v1: in every hierarchy) for a kubelet's cgroupRoot, which must exist."""
    base = Path("/sys/fs/cgroup")
    rel = path.strip("/")
    for hier in sorted(base.iterdir()):
        if not (hier / "cgroup.procs").exists():
            continue
        d = hier / rel
        d.mkdir(exist_ok=True)
        if hier.name == "cpuset":  # a new cpuset starts empty; tasks cannot join it then
            for f in ("cpuset.cpus", "cpuset.mems"):
                if not (d / f).read_text().strip():
                    (d / f).write_text((hier / f).read_text())


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


def containerd_component(node: Node) -> Component:
    return Component(
        "containerd" + node.suffix,
        ["/usr/bin/containerd", "--config", node.dir / "containerd" / "config.toml"],
        ready=lambda: run(*node.ctr(), "version", capture=True, timeout=5).returncode == 0,
    )


EXTRA_NODE_TAINT = "kubectl-storage.test/extra-node=true:NoSchedule"


def kubelet_component(node: Node, tainted: bool = False) -> Component:
    """tainted: register with EXTRA_NODE_TAINT (see `up --taint-nodes-from`)."""
    return Component(
        "kubelet" + node.suffix,
        [
            K8S_BIN / "kubelet",
            f"--config={node.dir / 'kubelet.yaml'}",
            f"--kubeconfig={node.kubeconfig}",
            f"--hostname-override={node.name}",
            f"--node-ip={node.ip}",
            f"--root-dir={node.kubelet_root}",
            f"--node-labels={NODE_LABEL}={node.index}",
            *([f"--register-with-taints={EXTRA_NODE_TAINT}"] if tainted else []),
            "--v=2",
        ],
    )


def node_plugin_components(node: Node) -> list[Component]:
    """The CSI hostpath driver as this node's plugin (node 1's instance also serves the
    controller calls of the sidecars) and its kubelet registrar. Every instance uses the same
    state dir, so a volume is reachable from every node, like network storage."""
    s = storage_bins()
    return [
        Component(
            "tk8s-hostpath" + node.suffix,
            [
                s["tk8s-hostpath"],
                f"--endpoint=unix://{node.csi_sock}",
                f"--drivername={CSI_DRIVER}",
                f"--nodeid={node.name}",
                f"--statedir={CSI_STATE}",
            ],
            ready=lambda: node.csi_sock.is_socket(),
        ),
        Component(
            "tk8s-registrar" + node.suffix,
            [
                s["tk8s-registrar"],
                f"--driver={CSI_DRIVER}",
                f"--kubelet-registration-path={node.csi_sock}",
                f"--plugin-registration-path={node.kubelet_root / 'plugins_registry'}",
            ],
        ),
    ]


def storage_components() -> list[Component]:
    s = storage_bins()
    k = f"--kubeconfig={ADMIN_KUBECONFIG}"
    return [
        *node_plugin_components(Node(1)),
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
NODE_NAMES = ("containerd", "kubelet", "tk8s-hostpath", "tk8s-registrar")  # per node i > 1


def node_component_names(node: Node) -> list[str]:
    return [n + node.suffix for n in NODE_NAMES]


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
    {{node_path_map}}
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


def storage_objects(nodes: list[Node]) -> str:
    # local-path is the node-local class: each node has its own directory, and the provisioner
    # pins every PV to its node (nodeAffinity), so a pod cannot take its data elsewhere. Nodes
    # not listed (a guest joined from outside) get node 1's path, as before.
    paths = [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": [str(LOCAL_PATH_DIR)]}]
    paths += [{"node": n.name, "paths": [str(n.local_path_dir)]} for n in nodes if not n.first]
    return STORAGE_OBJECTS.replace("{node_path_map}", json.dumps({"nodePathMap": paths}))


def apply_storage_objects(nodes: list[Node]) -> None:
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
    kubectl("apply", "-f", "-", input=storage_objects(nodes))


def node_ready(name: str = NODE) -> bool:
    out = kubectl(
        "get",
        "node",
        name,
        "-o",
        "jsonpath={.status.conditions[?(@.type=='Ready')].status}",
        check=False,
        timeout=10,
    )
    return out.returncode == 0 and out.stdout.strip() == "True"


def csinode_has_driver(name: str = NODE) -> bool:
    out = kubectl(
        "get", "csinode", name, "-o", "jsonpath={.spec.drivers[*].name}", check=False, timeout=10
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
metadata: {{name: block}}
spec:
  accessModes: [ReadWriteOnce]
  volumeMode: Block
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
  nodeSelector: {{kubernetes.io/hostname: {node}}}
  securityContext: {{supplementalGroups: [6]}}  # the disk group owns the raw device
  containers:
  - name: w
    image: {toolbox}
    command: [sh, -c, "echo smoke > /a/f && echo smoke > /b/f && fio --version && cat /a/f /b/f
      && printf smoke | dd of=/dev/tk8s-block bs=512 conv=sync oflag=direct status=none"]
    volumeMounts: [{{name: a, mountPath: /a}}, {{name: b, mountPath: /b}}]
    volumeDevices: [{{name: c, devicePath: /dev/tk8s-block}}]
  volumes:
  - {{name: a, persistentVolumeClaim: {{claimName: hostpath}}}}
  - {{name: b, persistentVolumeClaim: {{claimName: localpath}}}}
  - {{name: c, persistentVolumeClaim: {{claimName: block}}}}
"""

SMOKE_READER = """
apiVersion: v1
kind: Pod
metadata: {{name: reader}}
spec:
  restartPolicy: Never
  nodeSelector: {{kubernetes.io/hostname: {node}}}
  securityContext: {{supplementalGroups: [6]}}
  containers:
  - name: r
    image: {toolbox}
    command: [sh, -c, "grep -qx smoke /a/f && head -c 5 /dev/tk8s-block | grep -qx smoke"]
    volumeMounts: [{{name: a, mountPath: /a}}]
    volumeDevices: [{{name: c, devicePath: /dev/tk8s-block}}]
  volumes:
  - {{name: a, persistentVolumeClaim: {{claimName: hostpath}}}}
  - {{name: c, persistentVolumeClaim: {{claimName: block}}}}
"""

SMOKE_SNAPSHOT = """
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: snap}
spec:
  volumeSnapshotClassName: csi-hostpath-snapclass
  source: {persistentVolumeClaimName: hostpath}
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshot
metadata: {name: snap-block}
spec:
  volumeSnapshotClassName: csi-hostpath-snapclass
  source: {persistentVolumeClaimName: block}
"""


def _smoke_step(
    ns: str,
    manifest: str,
    condition: str,
    objects: list[str],
    timeout_s: int,
    failed: str,
    describe: list[str],
) -> None:
    """Apply ``manifest``, wait for ``condition`` on ``objects``; on failure raise with what
    ``kubectl describe`` says of ``describe``."""
    kubectl("-n", ns, "apply", "-f", "-", input=manifest)
    try:
        kubectl(
            "-n", ns, "wait", f"--for={condition}", *objects, f"--timeout={timeout_s}s",
            timeout=timeout_s + 20,
        )  # fmt: skip
    except HarnessError as e:
        desc = "".join(kubectl("-n", ns, "describe", d, check=False).stdout for d in describe)
        raise HarnessError(f"storage smoke test: {failed}: {e}\n{desc[-3000:]}") from None


def smoke_test(nodes: list[Node]) -> None:
    """PVCs in both classes bind (and a Block one of csi-hostpath-sc), a toolbox pod on the last
    node writes to all three, a pod on the first node reads the shared volume and the raw device
    (with more than one node), a snapshot of each csi-hostpath-sc volume becomes ready."""
    ns = f"tk8s-smoke-{int(time.time())}"
    t0 = time.monotonic()
    log(f"verifying storage in namespace {ns}")
    kubectl("create", "namespace", ns)
    succeeded = "jsonpath={.status.phase}=Succeeded"
    try:
        toolbox = images.toolbox_image()
        _smoke_step(
            ns,
            SMOKE.format(toolbox=toolbox, node=nodes[-1].name),
            succeeded,
            ["pod/writer"],
            150,
            "writer pod did not succeed",
            ["pod/writer", "pvc"],
        )
        if len(nodes) > 1:
            _smoke_step(
                ns,
                SMOKE_READER.format(toolbox=toolbox, node=nodes[0].name),
                succeeded,
                ["pod/reader"],
                120,
                f"{nodes[0].name} did not read what {nodes[-1].name} wrote to the shared volume",
                ["pod/reader"],
            )
        _smoke_step(
            ns,
            SMOKE_SNAPSHOT,
            "jsonpath={.status.readyToUse}=true",
            ["volumesnapshot/snap", "volumesnapshot/snap-block"],
            90,
            "snapshot not ready",
            ["volumesnapshot"],
        )
    finally:
        kubectl("delete", "namespace", ns, "--wait=false", check=False)
    log(f"storage verified ({time.monotonic() - t0:.0f}s)")


# ------------------------------------------------------------------ up / down / status


def wanted_nodes(args) -> int:
    """--nodes, else TESTCLUSTER_NODES, else as many as the last `up` started (so a plain `up`
    from a test fixture never shrinks a running multi-node cluster), else 1."""
    n = getattr(args, "nodes", None)
    if n is None and os.environ.get("TESTCLUSTER_NODES"):
        try:
            n = int(os.environ["TESTCLUSTER_NODES"])
        except ValueError:
            raise HarnessError(
                f"TESTCLUSTER_NODES={os.environ['TESTCLUSTER_NODES']!r} is not a number"
            ) from None
    if n is None:
        n = recorded_nodes()
    if not 1 <= n <= MAX_NODES:
        raise HarnessError(f"--nodes must be between 1 and {MAX_NODES}, not {n}")
    return n


def up(args) -> int:
    ensure_root()
    t0 = time.monotonic()
    n = wanted_nodes(args)
    nodes = nodes_of(n)
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
    for extra in range(recorded_nodes(), n, -1):  # fewer nodes than before
        remove_node(Node(extra))
    ensure_network(nodes)
    ensure_pki(nodes)
    for node in nodes:
        write_configs(node)
    TOOLS_BIN.mkdir(parents=True, exist_ok=True)
    link = TOOLS_BIN / "kubectl"
    if not link.is_symlink() or os.readlink(link) != str(K8S_BIN / "kubectl"):
        link.unlink(missing_ok=True)
        link.symlink_to(K8S_BIN / "kubectl")

    started = driver_started = False
    for node in nodes:
        c = containerd_component(node)
        if (
            running(c.name) is None
            and Path(node.containerd_sock).exists()
            and port_is_containerd(node)
        ):
            raise HarnessError(
                f"a containerd not started by this harness is serving {node.containerd_sock}; stop it first"
            )
        started |= start(c)
    for node in nodes:
        c = containerd_component(node)
        wait_for(c.name, c.ready, 60, c.logfile, c.name)
        marker_dir = None if node.first else node.dir / "images"
        images.ensure_images(CACHE, pause_source(), node.ctr(), marker_dir=marker_dir)

    for c in control_plane():
        started |= start(c)
        if c.ready:
            wait_for(c.name, c.ready, c.ready_timeout, c.logfile, c.name)
    taint_from = args.taint_nodes_from or MAX_NODES + 1
    for node in nodes:
        kl = kubelet_component(node, tainted=node.index >= taint_from)
        if not running(kl.name):
            # A CSINode's driver entries are immutable: one left from an earlier driver build
            # (other topology keys) would refuse the driver's registration. The kubelet makes
            # the object again when it starts.
            kubectl("delete", "csinode", node.name, "--ignore-not-found", check=False)
        started |= start(kl)
    for node in nodes:
        kl = kubelet_component(node)
        wait_for(
            f"node {node.name} Ready",
            lambda node=node: node_ready(node.name),
            180,
            kl.logfile,
            kl.name,
            interval=1,
        )
    log(f"{n} node(s) Ready: {', '.join(x.name for x in nodes)}")
    # the kubelets set the label at registration; a node registered before it existed gets it here
    for node in nodes:
        kubectl("label", "node", node.name, f"{NODE_LABEL}={node.index}", "--overwrite")
    NODES_FILE.write_text(f"{n}\n")

    ensure_volume_fs()
    ensure_memory_fs()
    apply_storage_objects(nodes)
    components = storage_components()
    for node in nodes[1:]:
        components += node_plugin_components(node)
    for c in components:
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
    for node in nodes:
        wait_for(
            f"CSINode {node.name} to list {CSI_DRIVER}",
            lambda node=node: csinode_has_driver(node.name),
            60,
            LOGS / f"kubelet{node.suffix}.log",
            f"kubelet{node.suffix}",
        )
    time.sleep(1)
    for c in components:  # crash-looping sidecars show up here
        if not running(c.name):
            raise HarnessError(f"{c.name} exited; last log lines:\n{tail(c.logfile)}")
    if started or args.verify:
        smoke_test(
            [x for x in nodes if x.index < taint_from]
        )  # pods of its own cannot go to tainted nodes
    else:
        log("everything was already running")
    log(f"cluster up in {time.monotonic() - t0:.0f}s ({n} node(s))")
    log(f"export KUBECONFIG={ADMIN_KUBECONFIG} PATH={TOOLS_BIN}:$PATH")
    print(ADMIN_KUBECONFIG)
    return 0


def port_is_containerd(node: Node) -> bool:
    r = subprocess.run([*node.ctr(), "version"], capture_output=True, timeout=5)
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


def fs_type_of(path: Path) -> str:
    """The file system type of ``path``'s mount ("" when it is not a mount point)."""
    if not os.path.ismount(path):
        return ""
    r = run("findmnt", "-n", "-o", "FSTYPE", "--mountpoint", str(path), capture=True, check=False)
    return r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""


def ensure_volume_fs() -> None:
    """Mount the driver's volume filesystem, a btrfs, at CSI_VOLUMES (made on first use). The
    ext4 of an older cluster is recreated as btrfs: its volumes are lost."""
    mounted = fs_type_of(CSI_VOLUMES)
    if mounted == "btrfs":
        return
    if running("tk8s-hostpath"):
        raise HarnessError(
            f"{CSI_VOLUMES} is not the volume filesystem (a btrfs) but the driver runs on it: "
            "run tests/cluster/down first"
        )
    if mounted:
        log(f"unmounting the {mounted} volume filesystem of an older cluster from {CSI_VOLUMES}")
        run("umount", CSI_VOLUMES)
    if CSI_VOLUMES.exists() and any(CSI_VOLUMES.iterdir()):
        log(f"removing volumes of an earlier layout in {CSI_VOLUMES}")
        shutil.rmtree(CSI_VOLUMES)
    CSI_VOLUMES.mkdir(parents=True, exist_ok=True)
    if CSI_VOLUMES_IMAGE.exists():
        kind = run(
            "blkid", "-p", "-o", "value", "-s", "TYPE", CSI_VOLUMES_IMAGE, capture=True, check=False
        ).stdout.strip()
        if kind != "btrfs":
            log(
                f"{CSI_VOLUMES_IMAGE} is {kind or 'not a file system'}, not btrfs: recreating it "
                "(the volumes of the older cluster are lost)"
            )
            CSI_VOLUMES_IMAGE.unlink()
    if not CSI_VOLUMES_IMAGE.exists():
        log(
            f"making the volume filesystem: btrfs on {CSI_VOLUMES_IMAGE} ({CSI_VOLUMES_SIZE}, sparse)"
        )
        run("truncate", "-s", CSI_VOLUMES_SIZE, CSI_VOLUMES_IMAGE)
        run("mkfs.btrfs", "-q", "-f", "-L", "tk8s-volumes", CSI_VOLUMES_IMAGE)
    # discard: a file deleted inside gives its blocks back to the sparse image. Without it the
    # image only grows; the e2e suite's fio files filled this host's disk in half an hour, and
    # the kubelets' image garbage collection then removed every image, pause included.
    # nodatasum: no data checksums, so the Block volumes' loop devices keep real direct I/O
    # (btrfs turns direct writes to checksummed files into buffered ones); copy-on-write,
    # snapshots and reflinks work as with checksums.
    run("mount", "-o", "loop,discard,nodatasum", CSI_VOLUMES_IMAGE, CSI_VOLUMES)


def release_volume_mount() -> None:
    """Unmount the volume filesystem (its loop device goes with it: `mount -o loop` sets
    autoclear). Nothing uses it once the pods and the driver are stopped."""
    if not os.path.ismount(CSI_VOLUMES):
        return
    r = subprocess.run(["umount", str(CSI_VOLUMES)], capture_output=True, text=True)
    if r.returncode != 0:
        log(f"warning: umount {CSI_VOLUMES}: {r.stderr.strip()}; detaching it lazily")
        subprocess.run(["umount", "-l", str(CSI_VOLUMES)], capture_output=True)


def ensure_memory_fs() -> None:
    """Mount the tmpfs of memory-backed volumes at CSI_MEMORY (its pages are used only as
    volumes are written, up to CSI_MEMORY_SIZE)."""
    if os.path.ismount(CSI_MEMORY):
        return
    CSI_MEMORY.mkdir(parents=True, exist_ok=True)
    run(
        "mount", "-t", "tmpfs", "-o", f"size={CSI_MEMORY_SIZE},mode=0711", "tk8s-memory", CSI_MEMORY
    )


def release_volume_fs() -> None:
    """Unmount the volume filesystems and remove the image (for --purge)."""
    if os.path.ismount(CSI_MEMORY):
        subprocess.run(["umount", str(CSI_MEMORY)], capture_output=True)
    release_volume_mount()
    CSI_VOLUMES_IMAGE.unlink(missing_ok=True)


def loop_devices() -> dict[str, str]:
    """Attached loop devices (/dev/loopN) and their backing files, from sysfs."""
    out = {}
    for f in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            backing = f.read_text().strip()
        except OSError:
            continue
        out["/dev/" + f.parent.parent.name] = backing.removesuffix("(deleted)").strip()
    return out


def device_mounted(dev: str) -> bool:
    """Whether a bind mount of the device node ``dev`` (a published block volume) is left."""
    root = "/" + Path(dev).name
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        fstype = fields[fields.index("-") + 1] if "-" in fields else ""
        if fstype == "devtmpfs" and fields[3] == root:
            return True
    return False


def detach_loops(*prefixes: str, unused_only: bool = False) -> None:
    """Detach the loop devices whose backing file is under one of ``prefixes``: the CSI driver's
    block volume images (CSI_STATE) and the kubelet's own loop device on each block volume it
    maps (under its root dir), which nothing unpublishes when the harness kills the pods.
    ``unused_only`` keeps the devices that a mount (another node's publish) still uses."""
    for dev, backing in sorted(loop_devices().items()):
        if not any(backing.startswith(p) for p in prefixes):
            continue
        if unused_only and device_mounted(dev):
            continue
        r = subprocess.run(["losetup", "--detach", dev], capture_output=True, text=True)
        if r.returncode != 0 and Path(f"/sys/block/{Path(dev).name}/loop").exists():
            log(f"warning: losetup --detach {dev} ({backing}): {r.stderr.strip()}")


def kill_containers(node: Node) -> None:
    """Stop every container of the node's k8s.io namespace (shims outlive containerd otherwise)."""
    ctr = [*node.ctr(), "-n", "k8s.io"]
    r = subprocess.run([*ctr, "tasks", "ls", "-q"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return
    tasks = r.stdout.split()
    if tasks:
        log(f"killing {len(tasks)} containers of {node.name}")
    for t in tasks:
        subprocess.run([*ctr, "tasks", "kill", "-s", "SIGKILL", t], capture_output=True, timeout=30)
    for t in tasks:
        subprocess.run([*ctr, "tasks", "delete", "-f", t], capture_output=True, timeout=60)
    r = subprocess.run([*ctr, "containers", "ls", "-q"], capture_output=True, text=True, timeout=30)
    for cid in r.stdout.split():
        subprocess.run([*ctr, "containers", "delete", cid], capture_output=True, timeout=60)


def freeze_containers(node: Node) -> int:
    """SIGSTOP every process of every container of the node (their tasks and all that they
    started), in one pass; returns how many were stopped. Killing them later still works."""
    ctr = [*node.ctr(), "-n", "k8s.io"]
    r = subprocess.run([*ctr, "tasks", "ls"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return 0
    roots = [
        int(f[1])
        for f in (line.split() for line in r.stdout.splitlines()[1:])
        if len(f) > 1 and f[1].isdigit() and f[1] != "0"
    ]
    children = _proc_children()
    stopped, todo = 0, list(roots)
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            os.kill(pid, signal.SIGSTOP)
            stopped += 1
        except ProcessLookupError:
            pass
    return stopped


def stop_node(node: Node, purge: bool = False) -> None:
    """Stop a node i > 1: plugin, kubelet, its containers and mounts, its containerd."""
    for name in reversed(node_component_names(node)[1:]):
        stop(name)
    if running("containerd" + node.suffix):
        kill_containers(node)
        if purge:
            ctr = [*node.ctr(), "-n", "k8s.io"]
            refs = subprocess.run(
                [*ctr, "images", "ls", "-q"], capture_output=True, text=True
            ).stdout.split()
            if refs:
                subprocess.run([*ctr, "images", "rm", *refs], capture_output=True)
    unmount_all(str(node.kubelet_root) + "/", node.containerd_state + "/")
    # the kubelet's loop devices on its block volumes, and volumes only this node had published
    detach_loops(str(node.kubelet_root) + "/")
    detach_loops(str(CSI_STATE) + "/", unused_only=True)
    stop("containerd" + node.suffix)
    if node.cni_ipam_dir.exists():
        for f in node.cni_ipam_dir.glob("*/*"):
            if f.name[0].isdigit():
                f.unlink(missing_ok=True)
    subprocess.run(["ip", "link", "del", node.cni_bridge], capture_output=True)
    subprocess.run(["ip", "addr", "del", f"{node.ip}/32", "dev", NODE_BRIDGE], capture_output=True)


def remove_node(node: Node) -> None:
    """`up --nodes` with fewer nodes than before: stop the node and delete its Node object
    (the pod garbage collector then deletes the pods that were bound to it)."""
    import shutil

    log(f"removing node {node.name}")
    stop_node(node, purge=True)
    if running("kube-apiserver"):
        kubectl("delete", "node", node.name, "--ignore-not-found", "--wait=false", check=False)
    # its images alone take ~1.5 GB; a later `up --nodes` recreates everything
    unmount_all(str(node.kubelet_root) + "/", node.containerd_root + "/")
    for d in (node.kubelet_root, node.containerd_root, node.dir, node.pod_logs_dir):
        shutil.rmtree(d, ignore_errors=True)
    remove_cgroup(node.cgroup_root)


def remove_cgroup(path: str) -> None:
    """Remove a node's cgroup root (empty now) and what its kubelet made below, deepest first."""
    for hier in Path("/sys/fs/cgroup").iterdir():
        top = hier / path.strip("/")
        if not top.is_dir() or top == hier:
            continue
        for d, _subdirs, _files in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
            try:
                os.rmdir(d)
            except OSError:
                pass


def down(args) -> int:
    ensure_root()
    nodes = nodes_of(recorded_nodes())
    # LazyFS daemons first: SIGTERM writes their dirty data back, then they unmount
    lazyfs.stop_all(CSI_STATE, log)
    for node in reversed(nodes[1:]):
        stop_node(node, purge=args.purge)
    for name in reversed(ALL_NAMES[ALL_NAMES.index("tk8s-hostpath") :]):
        stop(name)
    stop("kubelet")
    first = Node(1)
    if running("containerd"):
        kill_containers(first)
        if args.purge:
            ctr = [*first.ctr(), "-n", "k8s.io"]
            refs = subprocess.run(
                [*ctr, "images", "ls", "-q"], capture_output=True, text=True
            ).stdout.split()
            if refs:
                log(f"removing {len(refs)} images from containerd")
                subprocess.run([*ctr, "images", "rm", *refs], capture_output=True)
            for m in (CACHE / "images").glob("*.imported"):
                m.unlink()
    # any LazyFS daemon a plugin started meanwhile, and FUSE mounts left without a record
    lazyfs.stop_all(CSI_STATE, log)
    # pod volume mounts, container rootfs and network namespaces
    unmount_all(str(KUBELET_ROOT) + "/", "/run/containerd/io.containerd.", "/run/netns/cni-")
    # block volumes: the kubelet's loop devices and the driver's (nothing is published now)
    detach_loops(str(KUBELET_ROOT) + "/", str(CSI_STATE) + "/")
    # the volume filesystem and its loop device (up mounts it again; its data stays in the image)
    release_volume_mount()
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

        others = [n for n in nodes if not n.first]
        extra = [str(n.kubelet_root) for n in others] + [n.containerd_root for n in others]
        log(
            f"removing cluster state: {STATE}, {KUBELET_ROOT}, {CSI_STATE}"
            + (f", {len(others)} more nodes' roots" if others else "")
            + f" (build cache {CACHE} is kept)"
        )
        unmount_all(str(KUBELET_ROOT) + "/", str(STATE) + "/", *(e + "/" for e in extra))
        release_volume_fs()
        for d in (STATE, KUBELET_ROOT, CSI_STATE, *extra):
            shutil.rmtree(d, ignore_errors=True)
        for n in others:
            shutil.rmtree(n.pod_logs_dir, ignore_errors=True)
    log("cluster stopped")
    return 0


def node_cmd(args) -> int:
    """`node stop|start NAME`: stop or start one node's kubelet (its containers keep running,
    as when a kubelet dies on a real node); for tests of NotReady nodes."""
    ensure_root()
    node = node_by_name(args.name)
    if node.index > recorded_nodes():
        raise HarnessError(f"{node.name} is not part of the running cluster")
    kl = kubelet_component(node)
    if args.action == "stop":
        stop(kl.name)
        log(f"kubelet of {node.name} stopped")
        return 0
    _start_kubelet_until_ready(node, kl)
    log(f"node {node.name} Ready")
    return 0


def _start_kubelet_until_ready(node, kl) -> None:
    """Start a node's kubelet and wait until the node reports Ready (kubelet start, power-off)."""
    start(kl)
    wait_for(
        f"node {node.name} Ready",
        lambda: node_ready(node.name),
        180,
        kl.logfile,
        kl.name,
        interval=1,
    )


def power_off(args) -> int:
    """`power-off NODE`: the node loses power, for the volumes that can tell (tk8s.io/medium:
    LazyFS): its kubelet stops (so it restarts nothing meanwhile), every container of the node
    is SIGKILLed, the cache of every LazyFS mount published on the node is dropped (what was
    not fsynced is lost), then the kubelet starts again and the node comes back Ready."""
    ensure_root()
    node = node_by_name(args.name)
    if node.index > recorded_nodes():
        raise HarnessError(f"{node.name} is not part of the running cluster")
    kl = kubelet_component(node)
    # The moment power is lost: every process of the node's containers stops at once. Stopping
    # the kubelet and killing the containers one by one takes seconds, in which a database
    # would go on flushing (InnoDB writes its log once a second with
    # innodb_flush_log_at_trx_commit=2), which a real power cut does not allow.
    frozen = freeze_containers(node) if running("containerd" + node.suffix) else 0
    print(f"{node.name}: power lost: {frozen} container processes stopped")
    stop(kl.name)
    if running("containerd" + node.suffix):
        kill_containers(node)
    recs = lazyfs.records(CSI_STATE, node.name)
    for rec in recs:
        try:
            answer = lazyfs.control(rec, "clear-cache").strip()
        except OSError as e:
            answer = f"no answer from its daemon (pid {rec.get('pid')}): {e}"
        lines = answer.splitlines() or ["(nothing)"]
        print(f"{node.name}: LazyFS volume {rec['volume']} at {rec['target']}: {lines[0]}")
        for line in lines[1:]:
            print(f"  {line}")
    if not recs:
        print(f"{node.name}: no LazyFS mount published here: nothing dropped")
    sys.stdout.flush()
    _start_kubelet_until_ready(node, kl)
    log(f"node {node.name} powered on again and Ready")
    return 0


def _proc_children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int(d.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    return children


def cluster_pids() -> dict[str, list[int]]:
    """PIDs by group: each component, and "pods" (containerd shims and everything under them)."""
    children = _proc_children()
    groups: dict[str, list[int]] = {}
    names = list(ALL_NAMES)
    for node in nodes_of(recorded_nodes())[1:]:
        names += node_component_names(node)
    for name in names:
        pid = running(name)
        if pid:
            groups[name] = [pid]
    shims = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                exe = d.joinpath("cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if exe.endswith(b"containerd-shim-runc-v2"):
                shims.append(int(d.name))
    pods, todo = [], list(shims)
    while todo:
        pid = todo.pop()
        pods.append(pid)
        todo += children.get(pid, [])
    groups["pods"] = pods
    return groups


def _mem_kib(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of a process in KiB (0, 0 if it is gone)."""
    rss = pss = 0
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    except (OSError, ValueError):
        pass
    return rss, pss


def _cpu_ticks(pid: int) -> int:
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])  # utime + stime
    except (OSError, ValueError, IndexError):
        return 0


def usage(args) -> int:
    """Memory (RSS and PSS) and CPU over an interval of every cluster process (for the README)."""
    groups = cluster_pids()
    pids = sorted({p for ps in groups.values() for p in ps})
    t0, before = time.monotonic(), {p: _cpu_ticks(p) for p in pids}
    time.sleep(args.seconds)
    elapsed = time.monotonic() - t0
    hz = os.sysconf("SC_CLK_TCK")
    rows = []
    for name, ps in groups.items():
        rss = sum(_mem_kib(p)[0] for p in ps)
        pss = sum(_mem_kib(p)[1] for p in ps)
        cpu = sum(max(0, _cpu_ticks(p) - before.get(p, 0)) for p in ps) / hz / elapsed
        rows.append((name, len(ps), rss, pss, cpu))
    print(f"{'process group':36} {'procs':>5} {'RSS MiB':>8} {'PSS MiB':>8} {'CPU %':>6}")
    for name, n, rss, pss, cpu in rows:
        print(f"{name:36} {n:5} {rss / 1024:8.0f} {pss / 1024:8.0f} {cpu * 100:6.1f}")
    total = [sum(r[i] for r in rows) for i in (1, 2, 3, 4)]
    print(
        f"{'total (' + str(recorded_nodes()) + ' nodes)':36} {total[0]:5} {total[1] / 1024:8.0f} "
        f"{total[2] / 1024:8.0f} {total[3] * 100:6.1f}"
    )
    return 0


def status(args) -> int:
    rc = 0
    n = recorded_nodes()
    names = list(ALL_NAMES)
    for node in nodes_of(n)[1:]:
        names += node_component_names(node)
    for name in names:
        pid = running(name)
        print(f"{name:36} {'running pid ' + str(pid) if pid else 'stopped'}")
        if not pid:
            rc = 3
    if running("kube-apiserver"):
        r = kubectl("get", "nodes", "-o", "wide", check=False, timeout=10)
        print(r.stdout.rstrip() or r.stderr.rstrip())
        r = kubectl("get", "storageclass,volumesnapshotclass", check=False, timeout=10)
        print(r.stdout.rstrip() or r.stderr.rstrip())
    print(f"nodes={n}")
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
        "--taint-nodes-from",
        type=int,
        metavar="I",
        help=f"nodes I..N register with the taint {EXTRA_NODE_TAINT}, so that only pods that "
        "tolerate it (node debug pods) run there; for fan-out benchmarks beside running tests",
    )
    u.add_argument(
        "--nodes",
        type=int,
        help="number of nodes (default: $TESTCLUSTER_NODES, else as many as the last up, else 1)",
    )
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
    us = sub.add_parser("usage", help="memory and CPU of every cluster process")
    us.add_argument("--seconds", type=float, default=30, help="CPU measurement interval")
    nd = sub.add_parser("node", help="stop or start one node's kubelet (tests of NotReady nodes)")
    nd.add_argument("action", choices=["stop", "start"])
    nd.add_argument("name", help=f"node name ({NODE}, {NODE}-2, ...)")
    po = sub.add_parser(
        "power-off",
        help="a node loses power: SIGKILL its containers, drop the unsynced data of its LazyFS "
        "mounts, start its kubelet again and wait until it is Ready",
    )
    po.add_argument("name", help=f"node name ({NODE}, {NODE}-2, ...)")
    args = p.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `status | head` should not trace back
    try:
        if args.cmd == "status":
            return status(args)
        if args.cmd == "usage":
            return usage(args)
        ensure_root()
        STATE.mkdir(parents=True, exist_ok=True)
        with open(STATE / ".lock", "w") as lock:  # one up/down at a time (parallel test sessions)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log("another up/down is running; waiting for it")
                fcntl.flock(lock, fcntl.LOCK_EX)
            return {"up": up, "down": down, "node": node_cmd, "power-off": power_off}[args.cmd](
                args
            )
    except HarnessError as e:
        print(f"[tk8s] ERROR: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
