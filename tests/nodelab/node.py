"""The node lab's guest as a node of the test cluster: a kubelet in the QEMU guest, joined to the
host's cluster (tests/cluster), so that ``mount-audit`` and ``iscsi`` run through a real debug pod
on a real kernel with real NFS and iSCSI volumes.

    tests/nodelab/node.py build      # build the node image (cached); print what it holds
    tests/nodelab/node.py up         # boot and join it; Enter (or Ctrl-C) stops and deletes it

The node image (``node-<key>.img`` in the lab's cache) is the lab's guest root plus Debian's
containerd, runc and containernetworking-plugins (installed with dpkg from ``apt-get download``),
the test cluster's own kubelet binary, and the two images a debug pod needs (the toolbox and the
pause image, from the test cluster's image cache) already imported into the guest's containerd
store, so nothing is imported at boot. Its key holds the guest root's key, lab-init.sh, the
packages' versions and the SHA-256 of the kubelet and of both image archives.

A boot (:class:`NodeGuest`) signs a ``system:node:<name>`` client certificate with the test
cluster's CA, puts the kubelet's files in the 9p share and starts QEMU with a tap device
(``HOST_LINK``: 10.219.0.1/30 on the host, the guest's NIC 10.219.0.2, the node's InternalIP).
The kubelet reaches the API server at 10.219.0.1:6443 and the API server reaches the kubelet at
10.219.0.2:10250 (logs, exec): plain routing, nothing forwarded. ``guest/node.sh`` starts the
NFS server, the LIO target, iscsid, multipathd, containerd and the kubelet, then waits for the
host to say stop. Stdlib only, plus the project.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(REPO / "tests" / "cluster") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "cluster"))

import harness  # noqa: E402  (tests/cluster: the test cluster's paths and versions)
import images  # noqa: E402  (tests/cluster: the test cluster's image tags)

from tests.nodelab import lab  # noqa: E402

#: Debian packages added to the lab's root for the node (bookworm's versions).
NODE_PACKAGES = ("containerd", "runc", "containernetworking-plugins")
NODE_IMAGE_SIZE = "5G"
#: Bumped when the way the node image is made changes.
NODE_FORMAT = "1"

#: The node's name and InternalIP, the guest's end of the tap device ``HOST_LINK``, whose host
#: end is ``HOST_IP``. (QEMU's user networking does not do: the kubelet needs the InternalIP as
#: an address of its own, the host must listen on it for a hostfwd, and slirp hands the guest a
#: forwarded connection with the host's source address, which is then that same address, so
#: the guest drops it as a martian.)
NODE_NAME = "tk8s-nodelab"
NODE_IP = "10.219.0.2"
HOST_IP = "10.219.0.1"
HOST_LINK = "nodelab0"
KUBELET_PORT = 10250
#: One vCPU: with two, the guest hung once for good (soft lockups on both vCPUs, kubelet on one
#: and a modprobe it had started on the other) while the host was loaded; TCG runs each vCPU in
#: its own host thread, and a vCPU waiting for the other one's IPI spins.
NODE_CPUS = 1
#: The API server listens on every host address; its certificate does not name HOST_IP, so the
#: guest's kubeconfig asks for a name it does hold.
GUEST_API = f"https://{HOST_IP}:6443"
TLS_SERVER_NAME = "localhost"
#: Taint and label of the node: nothing but what the test pins there lands on it.
TAINT_KEY = "kubectl-storage.dev/nodelab"
TAINT = f"{TAINT_KEY}=true:NoSchedule"
LABEL = f"{TAINT_KEY}=true"


def log(message: str) -> None:
    lab.log(message)


# ---------------------------------------------------------------------------------------------
# The node image
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeImage:
    """The node image and what it was made of."""

    path: Path
    key: str
    guest: lab.Guest
    packages: dict[str, str]  # NODE_PACKAGES → version
    kubelet_sha256: str
    images: dict[str, str]  # image tag → archive SHA-256
    build_s: float


def kubelet_binary() -> Path:
    """The test cluster's kubelet (built by tests/cluster/up)."""
    path = harness.K8S_BIN / "kubelet"
    if not path.exists():
        raise lab.LabError(f"{path} is missing: build the test cluster first (tests/cluster/up)")
    return path


def image_archives() -> dict[str, Path]:
    """The docker-archive of each image the node needs, where the test cluster's build puts it
    (``images.image_specs``: the same paths and keys ``tests/cluster/up`` imports)."""
    harness.ensure_go()  # pause_source asks Go where the k8s module (pause.c) is
    wanted = (images.PAUSE_IMAGE, images.toolbox_image(), images.MARIADB_IMAGE)
    specs = images.image_specs(harness.CACHE, harness.pause_source())
    found = {tag: archive for tag, archive, _build in specs if tag in wanted}
    missing = [tag for tag in wanted if tag not in found or not found[tag].exists()]
    if missing:
        raise lab.LabError(
            f"no image archive for {', '.join(missing)} in {harness.CACHE / 'images'}: "
            "start the test cluster first (tests/cluster/up builds them)"
        )
    return found


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, remembered by size and mtime (the archives are hundreds of MB)."""
    memo_path = lab.CACHE / "sha256.json"
    try:
        memo = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    stat = path.stat()
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    entry = memo.get(str(path))
    if entry and entry[0] == stamp:
        return str(entry[1])
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(chunk)
    memo[str(path)] = [stamp, hasher.hexdigest()]
    tmp = memo_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(memo, indent=1))
    tmp.replace(memo_path)
    return hasher.hexdigest()


def build_node_image() -> NodeImage:
    """The node image, from the cache when its key matches."""
    t0 = time.monotonic()
    guest = lab.build()
    packages = lab.suite_versions(NODE_PACKAGES, lab.SUITE)
    kubelet = kubelet_binary()
    kubelet_sha = file_sha256(kubelet)
    archives = image_archives()
    image_shas = {tag: file_sha256(path) for tag, path in sorted(archives.items())}
    key = lab._digest(
        NODE_FORMAT,
        guest.root_key,
        (HERE / "guest" / "lab-init.sh").read_bytes(),
        NODE_IMAGE_SIZE,
        *(f"{p}={v}" for p, v in sorted(packages.items())),
        f"kubelet={kubelet_sha}",
        *(f"{tag}={sha}" for tag, sha in image_shas.items()),
    )
    path = lab.CACHE / f"node-{key}.img"
    if not path.exists():
        with lab._locked("node"):
            if not path.exists():
                _make_node_image(guest, path, packages, kubelet, archives)
                lab._prune("node-*.img", keep=path)
                lab._prune("node-*.packages.tsv", keep=path.with_suffix(".packages.tsv"))
    return NodeImage(
        path, key, guest, packages, kubelet_sha, image_shas, round(time.monotonic() - t0, 1)
    )


def _make_node_image(
    guest: lab.Guest,
    image: Path,
    packages: dict[str, str],
    kubelet: Path,
    archives: dict[str, Path],
) -> None:
    work = lab.CACHE / "node-build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    try:
        root = work / "rootfs"
        t0 = time.monotonic()
        lab.sh("cp", "-a", guest.image.parent / f"root-{guest.root_key}" / "rootfs", root)
        shutil.copy(HERE / "guest" / "lab-init.sh", root / "lab-init.sh")
        (root / "lab-init.sh").chmod(0o755)
        log(f"node image: root copied ({time.monotonic() - t0:.1f}s)")
        debs = root / "tmp" / "debs"
        debs.mkdir(parents=True)
        lab.sh("apt-get", "download", *(f"{p}={v}" for p, v in sorted(packages.items())), cwd=debs)
        policy = root / "usr" / "sbin" / "policy-rc.d"
        policy.write_text("#!/bin/sh\nexit 101\n")  # no service starts in the chroot
        policy.chmod(0o755)
        names = sorted(f"/tmp/debs/{deb.name}" for deb in debs.glob("*.deb"))
        lab.sh("chroot", root, "dpkg", "-i", *names, env={**os.environ, "PATH": harness.PATH_ENV})
        policy.unlink()
        shutil.rmtree(debs)
        log(f"node image: {' '.join(sorted(packages))} installed ({time.monotonic() - t0:.1f}s)")
        target = root / "usr" / "local" / "bin" / "kubelet"
        shutil.copy(kubelet, target)
        target.chmod(0o755)
        _import_images(root, work, archives)
        log(f"node image: images imported ({time.monotonic() - t0:.1f}s)")
        listing = lab.sh(
            "chroot", root, "dpkg-query", "-W", "-f", "${Package}\\t${Version}\\n"
        ).stdout
        image.with_suffix(".packages.tsv").write_text(listing)
        tmp = image.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        lab.sh("mkfs.ext4", "-q", "-F", "-L", "nodelab", "-d", root, tmp, NODE_IMAGE_SIZE)
        tmp.rename(image)
        log(f"node image: {image.name} written ({time.monotonic() - t0:.1f}s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _import_images(root: Path, work: Path, archives: dict[str, Path]) -> None:
    """Import the archives into the guest root's containerd store (``/var/lib/containerd``,
    namespace k8s.io, unpacked for overlayfs) with the guest's own containerd, run on the host
    with its own socket, state and no CRI plugin: the cluster's containerd is not touched."""
    state = work / "containerd-state"
    state.mkdir()
    socket = state / "containerd.sock"
    config = work / "containerd-bake.toml"
    config.write_text(
        "version = 2\n"
        f'root = "{root / "var" / "lib" / "containerd"}"\n'
        f'state = "{state}"\n'
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
        f'[grpc]\n  address = "{socket}"\n'
    )
    logfile = (work / "containerd-bake.log").open("wb")
    proc = subprocess.Popen(
        [str(root / "usr" / "bin" / "containerd"), "--config", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=logfile,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    ctr = [str(root / "usr" / "bin" / "ctr"), "--address", str(socket), "-n", "k8s.io"]
    try:
        deadline = time.monotonic() + 30
        while subprocess.run([*ctr, "version"], capture_output=True).returncode != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise lab.LabError(
                    f"containerd for the image import did not start: "
                    f"{(work / 'containerd-bake.log').read_text()[-2000:]}"
                )
            time.sleep(0.2)
        for tag, archive in sorted(archives.items()):
            lab.sh(*ctr, "images", "import", archive)
            log(f"node image: imported {tag}")
        listed = lab.sh(*ctr, "images", "ls", "-q").stdout.split()
        missing = [tag for tag in archives if tag not in listed]
        if missing:
            raise lab.LabError(f"containerd lists no {', '.join(missing)} after the import")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        logfile.close()


# ---------------------------------------------------------------------------------------------
# Booting the guest as a node
# ---------------------------------------------------------------------------------------------


def write_credentials(run_dir: Path, node: str = NODE_NAME) -> Path:
    """A client certificate for ``system:node:<node>`` (O=system:nodes) signed by the test
    cluster's CA (only read), and the guest's kubeconfig with it; returns the kubeconfig.

    The serial is random rather than ``-CAcreateserial``, which would write into the PKI dir."""
    pki = run_dir / "pki"
    pki.mkdir(parents=True, exist_ok=True)
    key, csr, crt = pki / "node.key", pki / "node.csr", pki / "node.crt"
    ext = pki / "node.ext"
    ext.write_text("extendedKeyUsage=clientAuth\n")
    lab.sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
           "-subj", f"/O=system:nodes/CN=system:node:{node}")  # fmt: skip
    lab.sh("openssl", "x509", "-req", "-in", csr, "-CA", harness.PKI / "ca.crt",
           "-CAkey", harness.PKI / "ca.key", "-set_serial", f"0x{os.urandom(8).hex()}",
           "-days", "2", "-out", crt, "-extfile", ext)  # fmt: skip

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "test-cluster",
                "cluster": {
                    "server": GUEST_API,
                    "tls-server-name": TLS_SERVER_NAME,
                    "certificate-authority-data": b64(harness.PKI / "ca.crt"),
                },
            }
        ],
        "users": [
            {
                "name": f"system:node:{node}",
                "user": {"client-certificate-data": b64(crt), "client-key-data": b64(key)},
            }
        ],
        "contexts": [
            {"name": "node", "context": {"cluster": "test-cluster", "user": f"system:node:{node}"}}
        ],
        "current-context": "node",
    }
    path = run_dir / "kubelet.kubeconfig"
    path.write_text(json.dumps(config, indent=1))
    path.chmod(0o600)
    shutil.copy(harness.PKI / "ca.crt", run_dir / "ca.crt")
    return path


def kubelet_config() -> dict[str, Any]:
    """The guest kubelet's configuration: the test cluster's, for a small node on cgroup v2."""
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "cgroupDriver": "cgroupfs",
        "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock",
        "failSwapOn": False,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": "/etc/kubernetes/ca.crt"},
        },
        "authorization": {"mode": "Webhook"},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {
            "memory.available": "50Mi",
            "nodefs.available": "100Mi",
            "imagefs.available": "100Mi",
            "nodefs.inodesFree": "1%",
        },
        "protectKernelDefaults": False,
        "serializeImagePulls": False,
        "address": NODE_IP,
        "port": KUBELET_PORT,
        "healthzBindAddress": "127.0.0.1",
        # No KUBE-KUBELET-CANARY chains: nothing here needs them, and making them loads
        # netfilter modules while the kubelet starts (where the two-vCPU guest hung).
        "makeIPTablesUtilChains": False,
        "readOnlyPort": 0,
        "staticPodPath": "",
        "resolvConf": "",
        "maxPods": 20,
    }


#: The running node guest's QEMU, so that a run killed outright does not leave it to the next.
PIDFILE = lab.CACHE / "node-qemu.pid"


def _kill_stale_guest() -> None:
    """Kill the QEMU of an earlier run that was killed before it could stop its guest (its PID
    file names it, and it still runs a node image)."""
    try:
        pid = int(PIDFILE.read_text().split()[0])
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError, IndexError):
        PIDFILE.unlink(missing_ok=True)
        return
    if b"qemu-system" in cmdline and str(lab.CACHE / "node-").encode() in cmdline:
        log(f"killing the node guest an earlier run left (pid {pid})")
        os.kill(pid, signal.SIGKILL)
    PIDFILE.unlink(missing_ok=True)


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check)


def add_host_link() -> None:
    """The host end of the guest's network (a tap device QEMU attaches to); a stale one from an
    interrupted run is replaced."""
    remove_host_link()
    _ip("tuntap", "add", "dev", HOST_LINK, "mode", "tap")
    _ip("addr", "add", f"{HOST_IP}/30", "dev", HOST_LINK)
    _ip("link", "set", HOST_LINK, "up")


def remove_host_link() -> None:
    _ip("link", "del", HOST_LINK, check=False)


@dataclass
class NodeGuest:
    """A booted node guest: its run directory, QEMU process and what was measured."""

    image: NodeImage
    run_dir: Path
    kubeconfig: str  # the host's admin kubeconfig
    proc: subprocess.Popen[bytes] | None = None
    console: Path | None = None
    timings: dict[str, float] = field(default_factory=dict)
    t0: float = 0.0

    @property
    def out(self) -> Path:
        return self.run_dir / "node"

    def kubectl(
        self, *args: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(harness.K8S_BIN / "kubectl"), "--kubeconfig", self.kubeconfig, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and proc.returncode != 0:
            raise lab.LabError(f"kubectl {' '.join(args)}: {proc.stderr.strip()}")
        return proc

    def start(self, *, memory_mb: int = 2048, cpus: int = NODE_CPUS) -> None:
        """Write the node's files into the share and boot; a node of that name left by an
        interrupted run is deleted first."""
        _kill_stale_guest()
        self.kubectl("delete", "node", NODE_NAME, "--ignore-not-found", "--wait=true")
        share = self.out
        share.mkdir(parents=True, exist_ok=True)
        write_credentials(share)
        (share / "kubelet.yaml").write_text(json.dumps(kubelet_config(), indent=1))
        (share / "node.env").write_text(
            f"NODE_NAME={NODE_NAME}\nNODE_IP={NODE_IP}\nNODE_LABEL={LABEL}\n"
            f"KUBELET_PORT={KUBELET_PORT}\n"
            f"NODE_TAINT={TAINT}\nPAUSE_IMAGE={images.PAUSE_IMAGE}\n"
        )
        shutil.copy(HERE / "guest" / "node.sh", share / "node.sh")
        add_host_link()
        self.boot(memory_mb=memory_mb, cpus=cpus)

    def boot(self, *, memory_mb: int = 2048, cpus: int = NODE_CPUS) -> None:
        """Start QEMU on the share as it is (after :meth:`start` wrote it, or again after the
        guest crashed: the node object, its pods and the kubelet's credentials stay)."""
        network = (
            "-netdev",
            f"tap,id=node,ifname={HOST_LINK},script=no,downscript=no",
            "-device",
            "virtio-net-pci,netdev=node",
        )
        self.t0 = time.monotonic()
        self.proc, self.console = lab.start_guest(
            self.image.guest,
            self.out,
            ["node"],
            memory_mb=memory_mb,
            cpus=cpus,
            image=self.image.path,
            network=network,
        )
        PIDFILE.write_text(f"{self.proc.pid}\n")
        log(f"node guest started (pid {self.proc.pid}), console {self.console}")

    def wait_exit(self, timeout_s: float) -> int | None:
        """Wait for QEMU to end (a reboot ends it: ``-no-reboot``); its exit code, or ``None``
        when it still runs after ``timeout_s``."""
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def node(self) -> dict[str, Any] | None:
        proc = self.kubectl("get", "node", NODE_NAME, "-o", "json", check=False)
        return json.loads(proc.stdout) if proc.returncode == 0 else None

    def wait_ready(self, timeout_s: float = 180) -> dict[str, Any]:
        """Wait for the node to register and be Ready; timings in ``self.timings``.

        Raises:
            LabError: QEMU ended, or the node was not Ready in time (with the logs' tails).
        """
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise lab.LabError(
                    f"the node guest ended (qemu rc={self.proc.returncode})" + self.tails()
                )
            if self._hung():
                raise lab.LabError("the guest kernel hung (soft lockup)" + self.tails())
            node = self.node()
            if node is not None:
                self.timings.setdefault("registered_s", round(time.monotonic() - self.t0, 1))
                ready = [c for c in node["status"].get("conditions", []) if c["type"] == "Ready"]
                if ready and ready[0]["status"] == "True":
                    self.timings["ready_s"] = round(time.monotonic() - self.t0, 1)
                    return node
            time.sleep(1)
        raise lab.LabError(f"node {NODE_NAME} not Ready after {timeout_s:.0f}s" + self.tails())

    def _hung(self) -> bool:
        console = self.console
        return console is not None and console.exists() and b"soft lockup" in console.read_bytes()

    def guest_marks(self) -> dict[str, float]:
        """The guest's own marks (seconds of guest uptime) from node/timings.txt."""
        marks: dict[str, float] = {}
        path = self.out / "node" / "timings.txt"
        for line in path.read_text().splitlines() if path.exists() else []:
            name, _, rest = line.partition(" t=")
            with contextlib.suppress(ValueError):
                marks[name] = float(rest)
        boot = lab.guest_timings(self.out).get("boot")
        if boot is not None:
            marks["pid1"] = boot
        return marks

    def peak_memory_mib(self) -> float | None:
        """Largest MemTotal - MemAvailable the guest sampled (every 5 s), MiB."""
        path = self.out / "node" / "memory.txt"
        peak = None
        for line in path.read_text().splitlines() if path.exists() else []:
            words = line.split()
            with contextlib.suppress(ValueError, IndexError):
                used = (int(words[2]) - int(words[4])) / 1024
                peak = used if peak is None else max(peak, used)
        return None if peak is None else round(peak)

    def tails(self) -> str:
        parts = []
        for name in ("node/kubelet.log", "node/containerd.log", "node.log"):
            path = self.out / name
            if path.exists():
                text = path.read_text(errors="replace")[-2500:]
                parts.append(f"\n--- {path} (tail) ---\n{text}")
        if self.console is not None and self.console.exists():
            parts.append(
                f"\n--- {self.console} (tail) ---\n{self.console.read_text(errors='replace')[-1500:]}"
            )
        return "".join(parts)

    def stop(self) -> None:
        """Ask the guest to stop, power it off (killed after 30 s), delete the node and the
        host link. Safe to call twice."""
        if self.proc is not None and self.proc.poll() is None:
            (self.out / "stop").write_text("stop\n")
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        PIDFILE.unlink(missing_ok=True)
        with contextlib.suppress(Exception):
            self.kubectl("delete", "node", NODE_NAME, "--ignore-not-found", "--wait=true")
        remove_host_link()


@contextlib.contextmanager
def joined_node(run_dir: Path, kubeconfig: str, timeout_s: float = 240) -> Iterator[NodeGuest]:
    """Build (cached), boot and join the node guest; whatever happens, the guest is stopped,
    the node deleted and the host link removed afterwards."""
    image = build_node_image()
    guest = NodeGuest(image, run_dir, kubeconfig)
    guest.timings["image_build_s"] = image.build_s
    try:
        guest.start()
        guest.wait_ready(timeout_s)
        yield guest
    finally:
        guest.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="node.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build the node image (cached); print what it holds as JSON")
    up = sub.add_parser("up", help="boot the node, wait until Ready, keep it until Enter or Ctrl-C")
    up.add_argument("--out", type=Path, default=None, help="run directory")
    args = parser.parse_args(argv)
    if args.command == "up":
        run_dir = args.out or Path(tempfile.mkdtemp(prefix="node-", dir=lab.CACHE))
        with joined_node(run_dir, str(harness.ADMIN_KUBECONFIG)) as guest:
            print(json.dumps({"run_dir": str(run_dir), **guest.timings}), flush=True)
            with contextlib.suppress(KeyboardInterrupt, EOFError):
                input()
        return 0
    if args.command == "build":
        node = build_node_image()
        print(
            json.dumps(
                {
                    "image": str(node.path),
                    "key": node.key,
                    "packages": node.packages,
                    "kubelet_sha256": node.kubelet_sha256,
                    "images": node.images,
                    "build_s": node.build_s,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
