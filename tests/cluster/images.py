"""Build the test cluster's container images locally (no registry, no Docker).

Each image is one uncompressed layer written as a docker-archive tarball, which
`ctr -n k8s.io images import` reads (manifest.json + config blob + layer tar). Rootfs
trees come from Debian: busybox-static, a static pause binary built with gcc from the
k8s module's pause.c, and debootstrap --variant=minbase chroots for the toolbox and
the MariaDB server images (bookworm) and the MySQL server image (unstable, Oracle MySQL 9.x). Everything is cached under the cache root by a key of its
inputs, so a warm machine only re-imports what containerd lacks.

Stdlib only.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
IMAGES_SRC = REPO / "build" / "images"

PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
DEBIAN_SUITE = "bookworm"
DEBIAN_MIRROR = os.environ.get("TESTCLUSTER_DEBIAN_MIRROR", "http://deb.debian.org/debian")

PAUSE_IMAGE = "registry.k8s.io/pause:3.10"
BUSYBOX_IMAGE = "docker.io/library/busybox:latest"
MARIADB_IMAGE = "localhost/kubectl-storage/mariadb:test"
TOOLBOX_REPO = "ghcr.io/kubectl-storage/toolbox"

# Keep in sync with build/images/toolbox/Dockerfile (test_cluster_harness checks it).
TOOLBOX_PACKAGES = ["coreutils", "util-linux", "procps", "tree", "tar", "fio", "mariadb-client"]
TOOLBOX_UID = 1000
# libeatmydata1 is for MARIADB_EATMYDATA_IMAGE only: without LD_PRELOAD it is never loaded.
MARIADB_PACKAGES = ["mariadb-server", "mariadb-client", "libeatmydata1"]
#: The same MariaDB with libeatmydata preloaded, so fsync, fdatasync and O_SYNC do nothing: an
#: image that looks durable (innodb_flush_log_at_trx_commit=1) and is not (issue 26).
MARIADB_EATMYDATA_IMAGE = "localhost/kubectl-storage/mariadb:eatmydata"
EATMYDATA_PRELOAD = "LD_PRELOAD=libeatmydata.so.1"
MARIADB_UID = 999  # same uid/gid as the official mysql/mariadb images
MYSQL_IMAGE = "localhost/kubectl-storage/mysql:test"
# Oracle MySQL is only in Debian's unstable suite (source mysql-9.7). The version is pinned: it is
# the image's cache key, and a new upload to unstable (the old one leaves the mirror) makes the
# build fail with apt's "Version ... not found" until this line is bumped.
MYSQL_SUITE = "unstable"
MYSQL_VERSION = "9.7.4-2"
MYSQL_PACKAGES = ["mysql-server-core", "mysql-client-core"]


def log(msg: str) -> None:
    print(f"[images] {msg}", file=sys.stderr, flush=True)


def sh(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=True, **kw)


def toolbox_version() -> str:
    init = REPO / "kubectl_storage" / "__init__.py"
    try:
        m = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", init.read_text(), re.M)
    except OSError:
        m = None
    return m.group(1) if m else "0.1.0"


def toolbox_image() -> str:
    return f"{TOOLBOX_REPO}:{toolbox_version()}"


# ---------------------------------------------------------------- docker-archive writer


def write_docker_archive(layer_tar: Path, out: Path, tag: str, config: dict) -> None:
    """Wrap one uncompressed layer tar into a docker-archive that containerd imports."""
    h = hashlib.sha256()
    with open(layer_tar, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    diff_id = h.hexdigest()
    cfg = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": [f"sha256:{diff_id}"]},
        "history": [
            {
                "created": "1970-01-01T00:00:00Z",
                "created_by": "kubectl-storage tests/cluster/images.py",
            }
        ],
    }
    cfg_bytes = json.dumps(cfg, sort_keys=True).encode()
    cfg_name = hashlib.sha256(cfg_bytes).hexdigest() + ".json"
    manifest = json.dumps(
        [{"Config": cfg_name, "RepoTags": [tag], "Layers": [f"{diff_id}/layer.tar"]}]
    ).encode()
    tmp = out.with_suffix(".tmp")
    with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as t:
        for name, data in (("manifest.json", manifest), (cfg_name, cfg_bytes)):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mode = 0o644
            t.addfile(ti, io.BytesIO(data))
        t.add(str(layer_tar), arcname=f"{diff_id}/layer.tar")
    tmp.rename(out)


def pack_rootfs(rootfs: Path, layer_tar: Path) -> None:
    sh(
        "tar",
        "--numeric-owner",
        "--xattrs",
        "-C",
        str(rootfs),
        "-cf",
        str(layer_tar),
        "--exclude=./proc/*",
        "--exclude=./sys/*",
        "--exclude=./dev/*",
        "--exclude=./var/cache/apt/archives/*.deb",
        "--exclude=./var/lib/apt/lists/*",
        "--exclude=./tmp/*",
        ".",
    )


def build_image(out: Path, tag: str, config: dict, make_rootfs) -> Path:
    """Build <out> (a docker-archive) unless it is cached. make_rootfs(dir) fills the rootfs."""
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    log(f"building {tag}")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".build-") as tmp:
        rootfs = Path(tmp) / "rootfs"
        rootfs.mkdir()
        make_rootfs(rootfs)
        layer = Path(tmp) / "layer.tar"
        pack_rootfs(rootfs, layer)
        write_docker_archive(layer, out, tag, config)
    log(f"built {tag} in {time.monotonic() - t0:.0f}s -> {out}")
    return out


def derived_image(source: Path, build_source, out: Path, tag: str, config: dict) -> Path:
    """Build <out> (cached): the layer of the <source> archive (built first if needed) under
    another tag and image config; no second rootfs is made."""
    if out.exists():
        return out
    build_source(source)
    out.parent.mkdir(parents=True, exist_ok=True)
    with (
        tarfile.open(source) as archive,
        tempfile.TemporaryDirectory(dir=out.parent, prefix=".build-") as tmp,
    ):
        member = next(m for m in archive.getmembers() if m.name.endswith("/layer.tar"))
        layer = Path(tmp) / "layer.tar"
        with archive.extractfile(member) as src, open(layer, "wb") as dst:  # type: ignore[union-attr]
            shutil.copyfileobj(src, dst, 1 << 20)
        write_docker_archive(layer, out, tag, config)
    log(f"built {tag} from {source.name}")
    return out


# ---------------------------------------------------------------- pause / busybox


def pause_rootfs(pause_c: Path):
    def make(rootfs: Path) -> None:
        sh(
            "gcc",
            "-Os",
            "-Wall",
            "-Werror",
            "-static",
            "-DVERSION=v3.10-tk8s",
            "-o",
            str(rootfs / "pause"),
            str(pause_c),
        )
        sh("strip", str(rootfs / "pause"))

    return make


def busybox_rootfs(rootfs: Path) -> None:
    (rootfs / "bin").mkdir()
    shutil.copy2("/bin/busybox", rootfs / "bin" / "busybox")
    sh("chroot", str(rootfs), "/bin/busybox", "--install", "-s", "/bin")
    for d in ("tmp", "etc", "root", "var", "proc", "sys", "dev"):
        (rootfs / d).mkdir(exist_ok=True)
    (rootfs / "tmp").chmod(0o1777)
    (rootfs / "etc" / "passwd").write_text(
        "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
    )
    (rootfs / "etc" / "group").write_text("root:x:0:\nnogroup:x:65534:\n")


# ---------------------------------------------------------------- debootstrap images


def debian_base(cache: Path, suite: str = DEBIAN_SUITE) -> Path:
    """A debootstrap --variant=minbase rootfs tarball of ``suite``, cached (once per machine)."""
    out = cache / f"debian-{suite}-minbase.tar"
    if out.exists():
        return out
    log(f"debootstrap --variant=minbase {suite} (once per machine)")
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(dir=cache, prefix=".debootstrap-") as tmp:
        root = Path(tmp) / "root"
        sh(
            "debootstrap",
            "--variant=minbase",
            suite,
            str(root),
            DEBIAN_MIRROR,
            stdout=sys.stderr,
        )
        sh("tar", "--numeric-owner", "--xattrs", "-C", str(root), "-cf", str(out) + ".tmp", ".")
        os.rename(str(out) + ".tmp", out)
    log(f"debootstrap done in {time.monotonic() - t0:.0f}s")
    return out


class Chroot:
    """Unpack the base into rootfs and run commands in it with /proc mounted and
    services blocked (policy-rc.d), for apt-get inside the image."""

    def __init__(self, base: Path, rootfs: Path):
        self.base, self.root = base, rootfs

    def __enter__(self):
        sh("tar", "--numeric-owner", "--xattrs", "-C", str(self.root), "-xf", str(self.base))
        shutil.copy2("/etc/resolv.conf", self.root / "etc" / "resolv.conf")
        prc = self.root / "usr" / "sbin" / "policy-rc.d"
        prc.write_text("#!/bin/sh\nexit 101\n")
        prc.chmod(0o755)
        sh("mount", "-t", "proc", "proc", str(self.root / "proc"))
        return self

    def run(self, script: str) -> None:
        env = {
            "PATH": PATH_ENV.split("=", 1)[1],
            "DEBIAN_FRONTEND": "noninteractive",
            "LC_ALL": "C",
            "HOME": "/root",
        }
        sh("chroot", str(self.root), "/bin/sh", "-ec", script, env=env, stdout=sys.stderr)

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", str(self.root / "proc")], check=False)
        (self.root / "usr" / "sbin" / "policy-rc.d").unlink(missing_ok=True)
        (self.root / "etc" / "resolv.conf").write_text("")
        for p in ("var/lib/apt/lists", "var/cache/apt", "var/log"):
            d = self.root / p
            if d.is_dir():
                for c in d.iterdir():
                    if c.is_dir() and not c.is_symlink():
                        shutil.rmtree(c, ignore_errors=True)
                    else:
                        c.unlink(missing_ok=True)
        return False


def toolbox_rootfs(base: Path):
    def make(rootfs: Path) -> None:
        with Chroot(base, rootfs) as c:
            c.run(
                "apt-get update -q\n"
                f"apt-get install -y -q --no-install-recommends {' '.join(TOOLBOX_PACKAGES)}\n"
                f"groupadd -g {TOOLBOX_UID} toolbox\n"
                f"useradd -u {TOOLBOX_UID} -g {TOOLBOX_UID} -m -d /home/toolbox -s /bin/bash toolbox\n"
                "apt-get clean\n"
            )

    return make


MARIADB_CNF = """\
# kubectl-storage test image: behave like the official image (listen on all addresses).
[mariadbd]
bind-address = 0.0.0.0
port = 3306
skip-name-resolve
socket = /run/mysqld/mysqld.sock
"""


def mariadb_rootfs(base: Path):
    def make(rootfs: Path) -> None:
        with Chroot(base, rootfs) as c:
            c.run(
                f"groupadd -r -g {MARIADB_UID} mysql\n"
                f"useradd -r -u {MARIADB_UID} -g {MARIADB_UID} -d /var/lib/mysql -s /usr/sbin/nologin mysql\n"
                "apt-get update -q\n"
                f"apt-get install -y -q --no-install-recommends {' '.join(MARIADB_PACKAGES)}\n"
                "apt-get clean\n"
                # the entrypoint initialises an empty datadir, like the official image
                "rm -rf /var/lib/mysql && mkdir -p /var/lib/mysql /run/mysqld /docker-entrypoint-initdb.d\n"
                "chown mysql:mysql /var/lib/mysql /run/mysqld && chmod 0755 /var/lib/mysql /run/mysqld\n"
            )
        (rootfs / "etc/mysql/mariadb.conf.d/99-docker.cnf").write_text(MARIADB_CNF)
        ep = rootfs / "usr/local/bin/docker-entrypoint.sh"
        shutil.copy2(IMAGES_SRC / "mariadb" / "docker-entrypoint.sh", ep)
        ep.chmod(0o755)

    return make


MYSQL_CNF = """\
# kubectl-storage test image: behave like the official mysql image (listen on all addresses).
[mysqld]
bind-address = *
port = 3306
skip-name-resolve
datadir = /var/lib/mysql
socket = /run/mysqld/mysqld.sock
pid-file = /run/mysqld/mysqld.pid
secure-file-priv = NULL

[client]
socket = /run/mysqld/mysqld.sock
"""


def mysql_rootfs(base: Path):
    def make(rootfs: Path) -> None:
        pkgs = " ".join(f"{p}={MYSQL_VERSION}" for p in MYSQL_PACKAGES)
        with Chroot(base, rootfs) as c:
            c.run(
                f"groupadd -r -g {MARIADB_UID} mysql\n"
                f"useradd -r -u {MARIADB_UID} -g {MARIADB_UID} -d /var/lib/mysql -s /usr/sbin/nologin mysql\n"
                # unstable's Release is valid for a week only; a mirror that lags (or a clock
                # ahead) would refuse it. The signature is still checked.
                "apt-get update -q -o Acquire::Check-Valid-Until=false\n"
                f"apt-get install -y -q --no-install-recommends {pkgs}\n"
                "apt-get clean\n"
                "rm -rf /var/lib/mysql && mkdir -p /var/lib/mysql /run/mysqld /docker-entrypoint-initdb.d /etc/mysql/conf.d\n"
                "chown mysql:mysql /var/lib/mysql /run/mysqld && chmod 0755 /var/lib/mysql /run/mysqld\n"
            )
        (rootfs / "etc/mysql/my.cnf").write_text(MYSQL_CNF + "\n!includedir /etc/mysql/conf.d/\n")
        ep = rootfs / "usr/local/bin/docker-entrypoint.sh"
        shutil.copy2(IMAGES_SRC / "mysql" / "docker-entrypoint.sh", ep)
        ep.chmod(0o755)

    return make


# ---------------------------------------------------------------- the image set


def _key(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


def image_specs(cache: Path, pause_c: Path) -> list[tuple[str, Path, callable]]:
    """[(tag, archive path, builder)] for every image the cluster imports."""
    img = cache / "images"
    base_fn = lambda: debian_base(img)  # noqa: E731 - built lazily, only if an image needs it
    tb_tag = toolbox_image()
    entry = IMAGES_SRC / "mariadb" / "docker-entrypoint.sh"
    mysql_entry = IMAGES_SRC / "mysql" / "docker-entrypoint.sh"
    specs = []
    specs.append(
        (
            PAUSE_IMAGE,
            img / f"pause-{_key(pause_c.read_bytes())}.tar",
            lambda out: build_image(
                out,
                PAUSE_IMAGE,
                {"Entrypoint": ["/pause"], "User": "65535:65535", "Env": [PATH_ENV]},
                pause_rootfs(pause_c),
            ),
        )
    )
    specs.append(
        (
            BUSYBOX_IMAGE,
            img / f"busybox-{_key(Path('/bin/busybox').stat().st_size)}.tar",
            lambda out: build_image(
                out, BUSYBOX_IMAGE, {"Cmd": ["sh"], "Env": [PATH_ENV]}, busybox_rootfs
            ),
        )
    )
    specs.append(
        (
            tb_tag,
            img / f"toolbox-{_key(tb_tag, TOOLBOX_PACKAGES, TOOLBOX_UID, 2)}.tar",
            lambda out: build_image(
                out,
                tb_tag,
                {
                    "Cmd": ["sleep", "infinity"],
                    "User": str(TOOLBOX_UID),
                    "WorkingDir": "/home/toolbox",
                    "Env": [PATH_ENV, "HOME=/home/toolbox"],
                    "Labels": {
                        "org.opencontainers.image.source": "kubectl-storage build/images/toolbox"
                    },
                },
                toolbox_rootfs(base_fn()),
            ),
        )
    )
    mariadb_key = _key(MARIADB_PACKAGES, MARIADB_CNF, entry.read_bytes(), 2)
    mariadb_archive = img / f"mariadb-{mariadb_key}.tar"

    def mariadb_config(*env: str) -> dict:
        return {
            "Entrypoint": ["docker-entrypoint.sh"],
            "Cmd": ["mariadbd"],
            "Env": [PATH_ENV, *env],
            "ExposedPorts": {"3306/tcp": {}},
            "Volumes": {"/var/lib/mysql": {}},
            "StopSignal": "SIGTERM",
        }

    def build_mariadb(out: Path) -> Path:
        return build_image(out, MARIADB_IMAGE, mariadb_config(), mariadb_rootfs(base_fn()))

    specs.append((MARIADB_IMAGE, mariadb_archive, build_mariadb))
    specs.append(
        (
            MARIADB_EATMYDATA_IMAGE,
            img / f"mariadb_eatmydata-{_key(mariadb_key, EATMYDATA_PRELOAD)}.tar",
            lambda out: derived_image(
                mariadb_archive,
                build_mariadb,
                out,
                MARIADB_EATMYDATA_IMAGE,
                mariadb_config(EATMYDATA_PRELOAD),
            ),
        )
    )
    mysql_key = _key(
        MYSQL_SUITE, MYSQL_VERSION, MYSQL_PACKAGES, MYSQL_CNF, mysql_entry.read_bytes()
    )
    specs.append(
        (
            MYSQL_IMAGE,
            img / f"mysql-{mysql_key}.tar",
            lambda out: build_image(
                out,
                MYSQL_IMAGE,
                {
                    "Entrypoint": ["docker-entrypoint.sh"],
                    "Cmd": ["mysqld"],
                    "Env": [PATH_ENV],
                    "ExposedPorts": {"3306/tcp": {}},
                    "Volumes": {"/var/lib/mysql": {}},
                    "StopSignal": "SIGTERM",
                },
                mysql_rootfs(debian_base(img, MYSQL_SUITE)),
            ),
        )
    )
    return specs


def imported_images(ctr: list[str]) -> set[str]:
    out = subprocess.run(
        [*ctr, "-n", "k8s.io", "images", "ls", "-q"], check=True, capture_output=True, text=True
    ).stdout
    return set(out.split())


def ensure_images(
    cache: Path,
    pause_c: Path,
    ctr: list[str],
    force: bool = False,
    marker_dir: Path | None = None,
) -> list[str]:
    """Build (cached) and import every image containerd does not have yet.

    A marker file records which archive was imported; each containerd of a multi-node cluster
    keeps its markers in its own ``marker_dir`` (default: beside the archives)."""
    have = imported_images(ctr)
    tags = []
    if marker_dir is not None:
        marker_dir.mkdir(parents=True, exist_ok=True)
    for tag, archive, build in image_specs(cache, pause_c):
        tags.append(tag)
        marker = archive.with_suffix(".imported")
        if marker_dir is not None:
            marker = marker_dir / marker.name
        if not force and tag in have and marker.exists():
            continue
        build(archive)
        prefix = archive.name.rsplit("-", 1)[0] + "-"
        for stale in archive.parent.glob(prefix + "*"):  # archives of older inputs
            if (
                stale.stem != archive.stem
                and stale.suffix in (".tar", ".imported")
                and re.fullmatch(re.escape(prefix) + r"[0-9a-f]{12}", stale.stem)
            ):
                stale.unlink(missing_ok=True)
        log(f"importing {tag}")
        sh(*ctr, "-n", "k8s.io", "images", "import", str(archive), stdout=sys.stderr)
        marker.write_text(tag + "\n")
    return tags


if (
    __name__ == "__main__"
):  # manual use: python3 images.py <cache> <pause.c>  (builds, does not import)
    c, p = Path(sys.argv[1]), Path(sys.argv[2])
    for tag, archive, build in image_specs(c, p):
        build(archive)
        print(tag, archive)
