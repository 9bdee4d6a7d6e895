#!/usr/bin/env python3
"""The node lab: a QEMU guest running Debian's stock kernel, with real NFS, iSCSI and multipath.

    tests/nodelab/lab.py build                 # build (cached) and print the cache keys
    tests/nodelab/lab.py run nfs iscsi         # boot one guest per scenario, in parallel
    tests/nodelab/lab.py report OUT/nfs/versions [--profile anf]   # a phase through the audit

The guest is built from Debian packages only and cached outside the repo (``CACHE``), keyed by
the kernel package version, the guest package versions and a hash of every file put inside it
(the guest scripts and the project's own collection scripts), so a warm run rebuilds nothing:

* ``kernel-<version>/``: ``apt-get download`` + ``dpkg -x`` of linux-image-6.1.0-N-amd64;
* ``root-<key>/``: ``debootstrap --variant=minbase`` with ``GUEST_PACKAGES`` and the kernel's
  modules (``depmod``), plus ``packages.tsv`` (what it holds);
* ``initramfs-<key>.cpio.gz``: static busybox + the virtio/ext4 modules (``initramfs-init.sh``);
* ``image-<key>.img``: ``mkfs.ext4 -d`` of the root with ``guest/`` at ``/lab`` and the
  collection scripts that ``kubectl_storage.core.nodes.collect.collection_script`` makes, the
  same text the live debug pods run.

A run boots the image read-only (``-snapshot``) under TCG (``-accel tcg -cpu max``, the
machine's /dev/kvm hangs stock kernels) with no network (``-nic none``); the guest writes its
outputs to a host directory through virtio-9p and powers off. Stdlib only, plus the project.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from kubectl_storage.core.nodes.collect import MOUNT_SECTIONS, collection_script  # noqa: E402
from kubectl_storage.operations import iscsi as iscsi_op  # noqa: E402

CACHE = Path(os.environ.get("NODELAB_CACHE", "/var/cache/kubectl-storage-nodelab"))
SUITE = "bookworm"
MIRROR = os.environ.get("NODELAB_MIRROR", "http://deb.debian.org/debian")
#: The kernel's meta package; NODELAB_KERNEL_PACKAGE pins an exact linux-image-6.1.0-N-amd64.
KERNEL_META = "linux-image-amd64"
GUEST_PACKAGES = (
    "kmod",
    "nfs-kernel-server",
    "nfs-common",
    "open-iscsi",
    "multipath-tools",
    "iproute2",
    "iptables",
    "udev",
    "procps",
    "util-linux",
    "busybox",
    "e2fsprogs",
    # The NFS scenario's sec=krb5p phases (guest/krb5.sh): an MIT KDC (kdb5_util, kadmin.local;
    # rpc.gssd and rpc.svcgssd are in nfs-common and nfs-kernel-server already) and NFS-Ganesha,
    # the krb5p server there (this kernel's nfsd answers krb5p calls GARBAGE_ARGS).
    "krb5-kdc",
    "krb5-admin-server",
    "nfs-ganesha",
    "nfs-ganesha-vfs",
)
#: Host packages, each with a file it installs (checked without the dpkg lock).
HOST_PACKAGES = {
    "qemu-system-x86": "/usr/bin/qemu-system-x86_64",
    "debootstrap": "/usr/sbin/debootstrap",
    "busybox-static": "/usr/share/doc/busybox-static",
    "e2fsprogs": "/usr/sbin/mkfs.ext4",
    # a userspace iSCSI target on the host: the node-crash tests' database volume outlives the
    # guest's crash (tests/nodelab/test_cluster_node.py)
    "tgt": "/usr/sbin/tgtd",
}
#: The initramfs loads these, in this order, to reach the ext4 root on virtio-blk.
INITRAMFS_MODULES = (
    "virtio_ring",
    "virtio",
    "virtio_pci_modern_dev",
    "virtio_pci_legacy_dev",
    "virtio_pci",
    "virtio_blk",
    "crc16",
    "mbcache",
    "jbd2",
    "crc32c_generic",
    "ext4",
)
#: Module trees left out of the guest (large, and nothing the scenarios use).
SKIPPED_MODULE_DIRS = (
    "kernel/sound",
    "kernel/drivers/gpu",
    "kernel/drivers/media",
    "kernel/drivers/net/wireless",
    "kernel/drivers/staging",
    "kernel/drivers/infiniband",
    "kernel/drivers/bluetooth",
    "kernel/drivers/iio",
    "kernel/drivers/hid",
    "kernel/drivers/input",
    "kernel/drivers/usb",
    "kernel/net/wireless",
    "kernel/net/mac80211",
    "kernel/net/bluetooth",
)
IMAGE_SIZE = "2G"
#: The scenarios there are (guest/<name>.sh).
SCENARIOS = ("nfs", "iscsi", "iscsi-netapp", "probe")
#: Collection scripts put in the guest: the live mount-audit and iscsi sections.
COLLECTION_SCRIPTS = {
    "collect-mount.sh": MOUNT_SECTIONS,
    "collect-iscsi.sh": iscsi_op.SECTIONS,
}


def log(message: str) -> None:
    """Progress on stderr, with a wall-clock stamp."""
    print(f"[nodelab {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def sh(*args: str | Path, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run a command, failing loudly with its output."""
    cmd = [str(a) for a in args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    if proc.returncode != 0:
        raise LabError(
            f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )
    return proc


class LabError(RuntimeError):
    """The lab could not be built or run."""


def _digest(*parts: bytes | str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode() if isinstance(part, str) else part)
        hasher.update(b"\0")
    return hasher.hexdigest()[:12]


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f".{name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


# ---------------------------------------------------------------------------------------------
# Host packages and versions (apt)
# ---------------------------------------------------------------------------------------------

_apt_updated = False


def _apt_update() -> None:
    global _apt_updated
    if not _apt_updated:
        log("apt-get update")
        sh("apt-get", "update", "-q")
        _apt_updated = True


def ensure_host_packages() -> None:
    """Install the host packages that are missing (apt-get update once if needed)."""
    missing = [pkg for pkg, path in HOST_PACKAGES.items() if not Path(path).exists()]
    if not missing:
        return
    log(f"installing {' '.join(missing)}")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = (
        "apt-get",
        "install",
        "-y",
        "-q",
        "--no-install-recommends",
        "-o",
        "DPkg::Lock::Timeout=600",
        *missing,
    )
    try:
        sh(*install, env=env)
    except LabError:
        _apt_update()
        sh(*install, env=env)


def suite_versions(packages: Sequence[str], suite: str | None = None) -> dict[str, str]:
    """Each package's version as apt knows it (``apt-cache policy``, no network): the one from
    ``<suite>/main`` when ``suite`` is given (what debootstrap of that suite installs), else the
    candidate. Runs apt-get update once when a package is unknown."""
    for attempt in (1, 2):
        versions = _policy_versions(sh("apt-cache", "policy", *packages).stdout, suite)
        missing = [p for p in packages if p not in versions]
        if not missing:
            return versions
        if attempt == 2:
            raise LabError(
                f"apt knows no version of {', '.join(missing)} in {suite or 'any suite'}"
            )
        _apt_update()
    raise AssertionError("unreachable")


_VERSION_LINE = re.compile(r"^ (?:\*\*\*| {3}) (\S+) -?\d+$")


def _policy_versions(text: str, suite: str | None) -> dict[str, str]:
    versions: dict[str, str] = {}
    current = None
    last_version = None
    for line in text.splitlines():
        stripped = line.strip()
        if line and not line.startswith(" ") and line.endswith(":"):
            current, last_version = line[:-1], None
        elif current is None:
            continue
        elif suite is None and stripped.startswith("Candidate:"):
            value = stripped.split(":", 1)[1].strip()
            if value != "(none)":
                versions[current] = value
        elif suite is not None and (match := _VERSION_LINE.match(line)):
            last_version = match.group(1)
        elif suite is not None and last_version and f" {suite}/main " in line:
            versions.setdefault(current, last_version)
    return versions


def kernel_package() -> str:
    """The stock kernel package: NODELAB_KERNEL_PACKAGE, else what linux-image-amd64 names."""
    pinned = os.environ.get("NODELAB_KERNEL_PACKAGE")
    if pinned:
        return pinned
    for attempt in (1, 2):
        out = subprocess.run(
            ["apt-cache", "depends", KERNEL_META], capture_output=True, text=True, check=False
        ).stdout
        for line in out.splitlines():
            word = line.strip()
            if word.startswith("Depends: linux-image-6."):
                return word.split(":", 1)[1].strip()
        if attempt == 1:
            _apt_update()
    raise LabError(f"apt-cache depends {KERNEL_META} names no linux-image-6.x package")


# ---------------------------------------------------------------------------------------------
# Build steps, each cached
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kernel:
    """An unpacked kernel package."""

    package: str
    version: str
    release: str  # uname -r, e.g. 6.1.0-57-amd64
    vmlinuz: Path
    modules: Path  # .../lib/modules/<release>


@dataclass(frozen=True)
class Guest:
    """Everything a run needs, all in the cache."""

    kernel: Kernel
    initramfs: Path
    image: Path
    root_key: str
    image_key: str
    packages: dict[str, str]  # the guest root's dpkg -l (package → version)


def build_kernel() -> Kernel:
    """Download and unpack the kernel package (cached by package version)."""
    package = kernel_package()
    version = suite_versions([package])[package]
    release = package.removeprefix("linux-image-")
    base = CACHE / f"kernel-{release}-{version}"
    done = base / ".done"
    if not done.exists():
        with _locked("kernel"):
            if not done.exists():
                log(f"downloading {package} {version}")
                shutil.rmtree(base, ignore_errors=True)
                (base / "deb").mkdir(parents=True)
                sh("apt-get", "download", f"{package}={version}", cwd=base / "deb")
                deb = next((base / "deb").glob("*.deb"))
                sh("dpkg", "-x", deb, base / "pkg")
                deb.unlink()
                done.write_text(f"{package} {version}\n")
                _prune_dirs("kernel-*", keep=base)
    return Kernel(
        package=package,
        version=version,
        release=release,
        vmlinuz=base / "pkg" / "boot" / f"vmlinuz-{release}",
        modules=base / "pkg" / "lib" / "modules" / release,
    )


def root_key(kernel: Kernel) -> tuple[str, dict[str, str]]:
    """The guest root's cache key: suite, mirror, the packages' versions in the suite, kernel."""
    versions = suite_versions(GUEST_PACKAGES, SUITE)
    key = _digest(
        SUITE,
        MIRROR,
        *(f"{p}={v}" for p, v in sorted(versions.items())),
        kernel.release,
        kernel.version,
        repr(SKIPPED_MODULE_DIRS),
    )
    return key, versions


def build_root(kernel: Kernel) -> tuple[Path, str]:
    """debootstrap the guest root and put the kernel's modules in it (cached)."""
    key, _versions = root_key(kernel)
    base = CACHE / f"root-{key}"
    root = base / "rootfs"
    done = base / ".done"
    if done.exists():
        return root, key
    with _locked("root"):
        if done.exists():
            return root, key
        shutil.rmtree(base, ignore_errors=True)
        base.mkdir(parents=True)
        log(f"debootstrap {SUITE} minbase into {root} (about 2-3 min)")
        t0 = time.monotonic()
        sh(
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(GUEST_PACKAGES)}",
            SUITE,
            root,
            MIRROR,
        )
        log(f"debootstrap took {time.monotonic() - t0:.0f}s")
        modules = root / "lib" / "modules" / kernel.release
        shutil.copytree(
            kernel.modules,
            modules,
            symlinks=True,
            ignore=_skip_module_dirs(kernel.modules),
        )
        sh("chroot", root, "depmod", "-a", kernel.release)
        for name in ("host", "out", "lab", "srv"):
            (root / name).mkdir(exist_ok=True)
        mtab = root / "etc" / "mtab"
        if mtab.is_symlink() or mtab.exists():
            mtab.unlink()
        mtab.symlink_to("../proc/self/mounts")
        (root / "etc" / "hostname").write_text("nodelab\n")
        # Nothing in the guest starts services from package scripts; apt caches are dead weight.
        shutil.rmtree(root / "var" / "cache" / "apt" / "archives", ignore_errors=True)
        (root / "var" / "cache" / "apt" / "archives" / "partial").mkdir(parents=True)
        listing = sh("chroot", root, "dpkg-query", "-W", "-f", "${Package}\\t${Version}\\n").stdout
        (base / "packages.tsv").write_text(listing)
        done.write_text(key + "\n")
    _prune_dirs("root-*", keep=base)
    return root, key


def _skip_module_dirs(modules: Path):  # type: ignore[no-untyped-def]
    skipped = {modules / rel for rel in SKIPPED_MODULE_DIRS}

    def ignore(directory: str, names: list[str]) -> list[str]:
        return [n for n in names if Path(directory) / n in skipped]

    return ignore


def build_initramfs(kernel: Kernel) -> Path:
    """A busybox initramfs that loads virtio/ext4 and switch_roots into the image (cached)."""
    init = (HERE / "initramfs-init.sh").read_bytes()
    busybox = Path("/bin/busybox").read_bytes()
    key = _digest(kernel.release, kernel.version, init, hashlib.sha256(busybox).hexdigest())
    path = CACHE / f"initramfs-{key}.cpio.gz"
    if path.exists():
        return path
    files: list[tuple[str, int, bytes]] = [
        ("init", 0o100755, init),
        ("bin/busybox", 0o100755, busybox),
    ]
    for name in INITRAMFS_MODULES:
        found = _find_module(kernel.modules, name)
        files.append((f"lib/modules/{name}.ko", 0o100644, _module_bytes(found)))
    dirs = ["bin", "dev", "proc", "sys", "newroot", "lib", "lib/modules"]
    tmp = path.with_suffix(".tmp")
    with gzip.open(tmp, "wb") as handle:
        handle.write(_newc(dirs, files))
    tmp.rename(path)
    _prune("initramfs-*.cpio.gz", keep=path)
    return path


def _find_module(modules: Path, name: str) -> Path:
    for candidate in (name, name.replace("_", "-")):
        for suffix in (".ko", ".ko.xz", ".ko.zst", ".ko.gz"):
            found = sorted(modules.rglob(candidate + suffix))
            if found:
                return found[0]
    raise LabError(f"module {name} not found under {modules}")


def _module_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".xz":
        import lzma

        return lzma.decompress(data)
    if path.suffix == ".gz":
        return gzip.decompress(data)
    if path.suffix == ".zst":
        return subprocess.run(["zstd", "-dc", str(path)], capture_output=True, check=True).stdout
    return data


def _newc(dirs: Iterable[str], files: Iterable[tuple[str, int, bytes]]) -> bytes:
    """A cpio archive in the kernel's "newc" format."""
    out = bytearray()
    ino = 1

    def entry(name: str, mode: int, data: bytes) -> None:
        nonlocal ino
        encoded = name.encode() + b"\0"
        fields = [ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0]
        out.extend(b"070701" + b"".join(f"{f:08x}".encode() for f in fields) + encoded)
        out.extend(b"\0" * (-len(out) % 4))
        out.extend(data)
        out.extend(b"\0" * (-len(out) % 4))
        ino += 1

    for directory in dirs:
        entry(directory, 0o040755, b"")
    for name, mode, data in files:
        entry(name, mode, data)
    entry("TRAILER!!!", 0, b"")
    return bytes(out)


def guest_files() -> dict[str, bytes]:
    """What goes to /lab in the image: guest/*.sh and the project's collection scripts."""
    files = {path.name: path.read_bytes() for path in sorted((HERE / "guest").glob("*.sh"))}
    for name, sections in COLLECTION_SCRIPTS.items():
        files[name] = collection_script(tuple(sections)).encode()
    return files


def build_image(root: Path, key: str) -> tuple[Path, str]:
    """The ext4 image of the root with /lab filled in (cached by root key and file hashes)."""
    files = guest_files()
    image_key = _digest(key, IMAGE_SIZE, *(f"{n}:{_digest(d)}" for n, d in sorted(files.items())))
    image = CACHE / f"image-{image_key}.img"
    if image.exists():
        return image, image_key
    with _locked("image"):
        if image.exists():
            return image, image_key
        lab = root / "lab"
        shutil.rmtree(lab, ignore_errors=True)
        lab.mkdir()
        for name, data in files.items():
            (lab / name).write_bytes(data)
            (lab / name).chmod(0o755)
        init = root / "lab-init.sh"
        shutil.copy(HERE / "guest" / "lab-init.sh", init)
        init.chmod(0o755)
        tmp = image.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        log(f"mkfs.ext4 -d {root} -> {image.name}")
        sh("mkfs.ext4", "-q", "-F", "-L", "nodelab", "-d", root, tmp, IMAGE_SIZE)
        tmp.rename(image)
        _prune("image-*.img", keep=image)
    return image, image_key


def _prune_dirs(pattern: str, keep: Path) -> None:
    """Older builds of one step go: the cache holds one of each (a rebuild is minutes)."""
    for old in CACHE.glob(pattern):
        if old != keep and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _prune(pattern: str, keep: Path) -> None:
    for old in CACHE.glob(pattern):
        if old != keep:
            old.unlink(missing_ok=True)


def build() -> Guest:
    """Everything the guest needs, from the cache when it is there."""
    with _locked("host-packages"):  # the lab's background run and the node guest may build at once
        ensure_host_packages()
    kernel = build_kernel()
    root, key = build_root(kernel)
    initramfs = build_initramfs(kernel)
    image, image_key = build_image(root, key)
    packages = dict(
        line.split("\t", 1)
        for line in (root.parent / "packages.tsv").read_text().splitlines()
        if "\t" in line
    )
    return Guest(kernel, initramfs, image, key, image_key, packages)


# ---------------------------------------------------------------------------------------------
# Running the guest
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GuestRun:
    """One boot of the guest."""

    scenarios: tuple[str, ...]
    out: Path  # the 9p share: <out>/<scenario>/<phase>/...
    console: Path
    wall_s: float
    returncode: int


def qemu_command(
    guest: Guest,
    out: Path,
    scenarios: Sequence[str],
    *,
    memory_mb: int,
    cpus: int,
    image: Path | None = None,
    network: Sequence[str] = ("-nic", "none"),
) -> list[str]:
    """The QEMU command line: TCG, read-only image (``image``, else the guest's), outputs through
    9p, no network unless ``network`` gives QEMU's network options."""
    return [
        "qemu-system-x86_64",
        "-accel",
        "tcg",
        "-cpu",
        "max",
        "-m",
        str(memory_mb),
        "-smp",
        str(cpus),
        "-display",
        "none",
        "-monitor",
        "none",
        "-no-reboot",
        "-kernel",
        str(guest.kernel.vmlinuz),
        "-initrd",
        str(guest.initramfs),
        "-drive",
        f"file={image or guest.image},if=virtio,format=raw,cache=unsafe,snapshot=on",
        "-virtfs",
        f"local,path={out},mount_tag=out,security_model=none",
        *network,
        "-append",
        f"console=ttyS0 panic=-1 quiet loglevel=4 lab={','.join(scenarios)}",
    ]


def start_guest(
    guest: Guest,
    out: Path,
    scenarios: Sequence[str],
    *,
    memory_mb: int = 2048,
    cpus: int = 2,
    image: Path | None = None,
    network: Sequence[str] = ("-nic", "none"),
) -> tuple[subprocess.Popen[bytes], Path]:
    """Boot the guest in the background; its serial console goes to ``out/../console-*.log``."""
    out.mkdir(parents=True, exist_ok=True)
    console = out.parent / f"console-{'-'.join(scenarios)}.log"
    cmd = qemu_command(
        guest, out, scenarios, memory_mb=memory_mb, cpus=cpus, image=image, network=network
    )
    cmd += ["-serial", f"file:{console}"]
    env = {**os.environ, "TMPDIR": str(out.parent)}  # -snapshot's overlay, removed with the run
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env=env)
    return proc, console


def run(
    guest: Guest,
    run_dir: Path,
    groups: Sequence[Sequence[str]],
    *,
    timeout_s: float = 900,
    memory_mb: int = 2048,
    cpus: int = 1,
    stop: threading.Event | None = None,
) -> list[GuestRun]:
    """Boot one guest per group of scenarios, all at once; wait for every one to power off.

    Each group's outputs land in ``run_dir/<group>/<scenario>/``; ``run_dir`` should be new.
    One vCPU per guest by default: two guests side by side on two cores finish sooner than one
    guest with two vCPUs after the other (TCG runs a vCPU per host thread).

    Raises:
        LabError: a guest did not finish in time, a scenario did not report done, or ``stop``
            was set (every guest is killed then).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    started = []
    for scenarios in groups:
        out = run_dir / "-".join(scenarios)
        proc, console = start_guest(guest, out, scenarios, memory_mb=memory_mb, cpus=cpus)
        started.append((tuple(scenarios), out, console, proc, time.monotonic()))
        log(f"guest {'+'.join(scenarios)} started (pid {proc.pid})")
    ended: dict[int, tuple[int, float]] = {}
    try:
        while len(ended) < len(started):
            if stop is not None and stop.is_set():
                raise LabError("the lab run was stopped before its guests finished")
            for index, (scenarios, _out, _console, proc, t0) in enumerate(started):
                if index in ended:
                    continue
                if proc.poll() is None and time.monotonic() - t0 > timeout_s:
                    proc.kill()
                    proc.wait()
                if proc.returncode is not None:
                    ended[index] = (proc.returncode, time.monotonic() - t0)
                    log(
                        f"guest {'+'.join(scenarios)} ended rc={proc.returncode} "
                        f"after {ended[index][1]:.0f}s"
                    )
            time.sleep(0.2)
    finally:
        for _scenarios, _out, _console, proc, _t0 in started:
            if proc.poll() is None:  # interrupted: no guest outlives the run
                proc.kill()
                proc.wait()
    results = [
        GuestRun(scenarios, out, console, ended[index][1], ended[index][0])
        for index, (scenarios, out, console, _proc, _t0) in enumerate(started)
    ]
    problems = [problem for result in results for problem in _run_problems(result)]
    if problems:
        raise LabError("; ".join(problems))
    return results


def _run_problems(result: GuestRun) -> list[str]:
    boot = result.out / "boot.txt"
    text = boot.read_text() if boot.exists() else ""
    problems = []
    if result.returncode != 0:
        problems.append(f"guest {'+'.join(result.scenarios)}: qemu exited {result.returncode}")
    for scenario in result.scenarios:
        if f"=== scenario {scenario} done rc=0" not in text:
            problems.append(
                f"scenario {scenario} did not finish cleanly (see {result.out}/{scenario}.log, "
                f"{result.console})"
            )
    if problems:
        tail = result.console.read_text(errors="replace")[-2000:] if result.console.exists() else ""
        problems.append(f"console tail:\n{tail}")
    return problems


def guest_timings(out: Path) -> dict[str, float]:
    """Seconds since guest boot: ``boot`` (PID 1 up) and ``<scenario>`` (its own duration)."""
    timings: dict[str, float] = {}
    boot = out / "boot.txt"
    for line in boot.read_text().splitlines() if boot.exists() else []:
        words = dict(w.split("=", 1) for w in line.split() if "=" in w)
        if line.startswith("=== guest up"):
            timings["boot"] = float(words["uptime"].rstrip("s"))
        elif line.startswith("=== scenario"):
            name = line.split()[2]
            timings[name] = float(words["end"].rstrip("s")) - float(words["start"].rstrip("s"))
    return timings


# ---------------------------------------------------------------------------------------------
# Captures kept as fixtures
# ---------------------------------------------------------------------------------------------

CAPTURES = HERE / "captures"
#: Per phase, what is kept: the raw collection output and the small evidence files.
KEPT_FILES = (
    "collect-mount.txt",
    "collect-iscsi.txt",
    "volumes.tsv",
    "devices.tsv",
    "connection-counts.txt",
    "nfsfs.txt",
    "multipathd-paths.txt",
    "sysfs-states.txt",
    "iscsiadm-node.txt",
    "node-record-timeouts.txt",
)


def keep_captures(run_dir: Path, guest: Guest) -> None:
    """Copy a run's per-phase captures to captures/<scenario>/<phase>/ and describe them in
    captures/SOURCES.md (replacing what was there)."""
    lines = [
        "# Real captures from the node lab (tests/nodelab)",
        "",
        "Made by `tests/nodelab/lab.py run nfs iscsi` and kept with `lab.py keep RUN_DIR`. Each",
        "`collect-*.txt` is the raw output of the project's own collection script",
        "(`kubectl_storage.core.nodes.collect.collection_script`, the mount-audit or iscsi",
        "sections) run in the guest as a debug pod runs it; `split_sections` splits it. The other",
        "files are evidence from the guest (see guest/*.sh). What each phase sets up is in",
        "guest/nfs.sh and guest/iscsi.sh; what the audit must report is in test_nfs.py and",
        "test_iscsi.py.",
        "",
        f"- date: {time.strftime('%Y-%m-%d', time.gmtime(run_dir.stat().st_mtime))}",
        f"- kernel: Debian {guest.kernel.package} {guest.kernel.version} "
        f"(uname -r {guest.kernel.release}), QEMU TCG guest",
        "- guest packages (Debian bookworm): "
        + ", ".join(
            f"{name} {guest.packages.get(name, '?')}"
            for name in (
                "nfs-kernel-server",
                "nfs-common",
                "open-iscsi",
                "multipath-tools",
                "udev",
                "util-linux",
                "krb5-kdc",
                "nfs-ganesha",
            )
        ),
        "- NFS server: the guest kernel's nfsd, except nfs/krb5-*: NFS-Ganesha (FSAL VFS, the same",
        "  directories, sec=sys and krb5p) with an MIT KDC in the guest; the NFS client is always",
        "  the guest kernel's; iSCSI target: the guest kernel's LIO (configfs)",
        "",
        "| scenario | phase | files |",
        "|---|---|---|",
    ]
    shutil.rmtree(CAPTURES, ignore_errors=True)
    for scenario in ("nfs", "iscsi"):
        base = run_dir / scenario / scenario
        for phase in (base / "phases.txt").read_text().split():
            target = CAPTURES / scenario / phase
            target.mkdir(parents=True)
            kept = []
            for name in KEPT_FILES:
                source = base / phase / name
                if source.exists():
                    shutil.copy(source, target / name)
                    kept.append(name)
            lines.append(f"| {scenario} | {phase} | {', '.join(kept)} |")
    (CAPTURES / "SOURCES.md").write_text("\n".join(lines) + "\n")
    log(f"kept the captures of {run_dir} in {CAPTURES}")


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def _describe(guest: Guest) -> dict[str, object]:
    return {
        "kernel_package": guest.kernel.package,
        "kernel_version": guest.kernel.version,
        "kernel_release": guest.kernel.release,
        "root_key": guest.root_key,
        "image_key": guest.image_key,
        "image": str(guest.image),
        "initramfs": str(guest.initramfs),
        "packages": {
            name: guest.packages.get(name)
            for name in ("nfs-kernel-server", "nfs-common", "open-iscsi", "multipath-tools")
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lab.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build the guest (cached); print what was built as JSON")
    run_parser = sub.add_parser("run", help="boot the guest and run scenarios")
    run_parser.add_argument("scenarios", nargs="+", choices=SCENARIOS)
    run_parser.add_argument("--out", type=Path, default=None, help="run directory")
    run_parser.add_argument(
        "--one-guest", action="store_true", help="run all scenarios in one boot, one by one"
    )
    run_parser.add_argument("--memory", type=int, default=2048, help="guest memory, MiB")
    run_parser.add_argument(
        "--cpus", type=int, default=None, help="vCPUs per guest (default 1 when several run)"
    )
    run_parser.add_argument("--timeout", type=float, default=900)
    run_parser.add_argument(
        "--put", type=Path, action="append", default=[], help="copy FILE into the share first"
    )
    keep_parser = sub.add_parser(
        "keep", help="copy a run's captures to tests/nodelab/captures/ and write SOURCES.md"
    )
    keep_parser.add_argument("run_dir", type=Path)
    report_parser = sub.add_parser("report", help="a phase's capture through the live code")
    report_parser.add_argument("phase", type=Path, help="OUT/<scenario>/<phase>")
    report_parser.add_argument("--profile", default=None)
    report_parser.add_argument(
        "--table", action="store_true", help="draw it as kubectl storage does, not as JSON"
    )
    args = parser.parse_args(argv)
    if args.command == "build":
        t0 = time.monotonic()
        guest = build()
        print(json.dumps({**_describe(guest), "build_s": round(time.monotonic() - t0, 1)}))
        return 0
    if args.command == "run":
        t0 = time.monotonic()
        guest = build()
        log(f"build/check took {time.monotonic() - t0:.1f}s")
        run_dir = args.out or Path(tempfile.mkdtemp(prefix="run-", dir=CACHE))
        groups = [args.scenarios] if args.one_guest else [[s] for s in args.scenarios]
        cpus = args.cpus or (1 if len(groups) > 1 else 2)
        for group in groups:
            out = run_dir / "-".join(group)
            out.mkdir(parents=True, exist_ok=True)
            for path in args.put:
                shutil.copy(path, out / path.name)
        try:
            results = run(
                guest,
                run_dir,
                groups,
                timeout_s=args.timeout,
                memory_mb=args.memory,
                cpus=cpus,
            )
        except LabError as exc:
            log(str(exc))
            return 1
        summary = {
            "run_dir": str(run_dir),
            "guests": [
                {
                    "scenarios": list(r.scenarios),
                    "out": str(r.out),
                    "wall_s": round(r.wall_s, 1),
                    "guest_s": guest_timings(r.out),
                }
                for r in results
            ],
        }
        print(json.dumps(summary, indent=2))
        return 0
    if args.command == "keep":
        keep_captures(args.run_dir, build())
        return 0
    from tests.nodelab import reports

    report = reports.typed_report_for(args.phase, args.profile)
    if not args.table:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    from kubectl_storage.core.iscsi.report import IscsiReport
    from kubectl_storage.render.iscsi import write_iscsi_table
    from kubectl_storage.render.mount_audit import write_mount_audit_table

    if isinstance(report, IscsiReport):
        write_iscsi_table(report, sys.stdout, False)
    else:
        write_mount_audit_table(report, sys.stdout, False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
