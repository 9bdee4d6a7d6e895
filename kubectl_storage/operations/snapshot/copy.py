"""`kubectl storage snapshot cp`: copy a file or directory out of a snapshot (tar over exec)."""

from __future__ import annotations

import logging
import posixpath
import shutil
import stat
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from kubectl_storage.core.k8s.quantities import format_bytes
from kubectl_storage.core.snapshot.copy import SnapshotCopy
from kubectl_storage.core.snapshot.paths import SNAPSHOT_MOUNT
from kubectl_storage.errors import (
    ClusterError,
    NotFoundError,
    UsageError,
)
from kubectl_storage.kube.api import KubeApi
from kubectl_storage.kube.podstream import exec_to_sink
from kubectl_storage.kube.run_scope import RunScope
from kubectl_storage.operations.snapshot.common import (
    PodSettings,
    SnapshotSource,
    Step,
)
from kubectl_storage.operations.snapshot.restore import in_snapshot, mount_snapshot, when_ready
from kubectl_storage.operations.snapshot.restoring import MountPlan, restoring_command

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CopyRequest:
    """Everything `snapshot cp` was asked to do."""

    source: SnapshotSource
    path: str
    destination: str
    pods: PodSettings
    force: bool = False


CopyPlan = MountPlan[CopyRequest]


def copy_destination(request: CopyRequest) -> Path:
    """Where the copy lands: DEST, or DEST/NAME when DEST is an existing directory.

    Raises:
        UsageError: it exists and --force was not given, or its directory does not exist.
    """
    in_pod = in_snapshot(request.path)
    item = posixpath.basename(in_pod) if in_pod != SNAPSHOT_MOUNT else str(request.source.snapshot)
    dest = Path(request.destination)
    target = dest / item if dest.is_dir() and not dest.is_symlink() else dest
    if not target.parent.is_dir():
        raise UsageError(
            f"the directory {target.parent} does not exist", "Create it first, or copy elsewhere."
        )
    if (target.exists() or target.is_symlink()) and not request.force:
        raise UsageError(
            f"{target} exists; not overwriting it", "Give --force to overwrite, or another path."
        )
    return target


def validate_copy(request: CopyRequest) -> Path:
    """Inputs that need no cluster; returns the local target.

    Raises:
        UsageError: no snapshot name, a path outside the snapshot, an existing target.
    """
    if not request.source.snapshot:
        raise UsageError("give the source as SNAPSHOT:PATH", "Example: data-snap:/etc/app.conf")
    return copy_destination(request)


@dataclass
class _CopyStats:
    files: int = 0
    directories: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def run_copy(api: KubeApi, planned: CopyPlan, scope: RunScope, step: Step) -> SnapshotCopy:
    """Copy a file or directory out of the snapshot with tar over exec; a SnapshotCopy report."""
    request = planned.request
    target = validate_copy(request)
    pods = request.pods
    plan = when_ready(api, planned.restore)
    in_pod = in_snapshot(request.path)
    ns = request.source.namespace
    if in_pod == SNAPSHOT_MOUNT:
        workdir, item = SNAPSHOT_MOUNT, "."
    else:
        workdir, item = posixpath.dirname(in_pod), posixpath.basename(in_pod)
    script = (
        '[ -e "$1/$2" ] || [ -L "$1/$2" ] || { echo "no such file or directory" >&2; exit 3; }; '
        'cd "$1" && exec tar -cf - -- "$2"'
    )
    command = ["sh", "-c", script, "sh", workdir, item]
    stats = _CopyStats()
    pod = mount_snapshot(api, scope, plan, step)
    step(f"copying {request.source.snapshot}:{request.path or '/'} to {target}")
    with tempfile.TemporaryFile(dir=target.parent, prefix=".ks-cp-") as spool:
        result = exec_to_sink(
            api,
            pod,
            command,
            spool.write,
            namespace=ns,
            timeout_s=pods.timeout_s,
            on_tick=lambda n: step(f"received {format_bytes(n)}"),
        )
        if result.exit_code == 3:
            raise NotFoundError(
                f"{request.path or '/'} does not exist in snapshot {request.source.snapshot}",
                "kubectl storage snapshot browse SNAP --tree shows what is there.",
            )
        if result.exit_code != 0:
            raise ClusterError(
                f"tar could not read {request.path or '/'} (exit {result.exit_code}): "
                + result.stderr.strip()[:800],
                "Files the pod's user cannot read need --run-as-user/--fs-group of their "
                "owner. Nothing was written locally.",
            )
        spool.seek(0)
        _extract_and_place(spool, target, root=item == ".", force=request.force, stats=stats)
    for name in stats.skipped:
        log.warning("skipped %s", name)
    return SnapshotCopy(
        snapshot=str(request.source.snapshot),
        namespace=ns,
        path="/" + request.path.strip("/"),
        destination=str(target),
        files=stats.files,
        directories=stats.directories,
        bytes=stats.bytes,
        skipped=tuple(stats.skipped),
        run_id=scope.run_id,
    )


def _safe_member(member: tarfile.TarInfo, dest: str, stats: _CopyStats) -> tarfile.TarInfo | None:
    """Refuse paths and links that leave ``dest``; keep permission bits (but no set-id bits)."""
    try:
        tarfile.data_filter(member, dest)  # raises for absolute paths, escapes, outside links
    except tarfile.SpecialFileError:
        stats.skipped.append(f"{member.name} (device, FIFO or socket)")
        return None
    except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError):
        stats.skipped.append(f"{member.name} (link to {member.linkname}, outside the copy)")
        return None
    except tarfile.FilterError as exc:
        raise ClusterError(
            f"refusing an unsafe entry in the copy: {exc}", "Nothing outside the target is written."
        ) from exc
    if member.isreg():
        stats.files += 1
        stats.bytes += member.size
    elif member.isdir() and member.name.rstrip("/") not in (".", ""):
        stats.directories += 1
    # Permission bits as in the snapshot, without set-id and sticky bits; ownership stays ours
    # (-1 and empty names leave it unchanged even when run as root).
    return member.replace(mode=member.mode & 0o777, uid=-1, gid=-1, uname="", gname="", deep=False)


def _extract_and_place(
    spool: IO[bytes], target: Path, *, root: bool, force: bool, stats: _CopyStats
) -> None:
    """Extract into a staging directory beside ``target``, then move it into place."""
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".ks-cp-"))
    try:
        with tarfile.open(fileobj=spool, mode="r:") as archive:
            members = []
            for member in archive.getmembers():
                safe = _safe_member(member, str(staging), stats)
                if safe is not None:
                    members.append(safe)
            # Directory modes are applied last by extractall, so read-only ones still fill.
            archive.extractall(staging, members=members, filter="fully_trusted")
        if root:
            staged = staging  # the "." entry gave it the snapshot root's mode
        else:
            entries = list(staging.iterdir())
            if len(entries) != 1:
                raise ClusterError("the copy held no file", "")
            staged = entries[0]
        _place(staged, target, force=force)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _place(staged: Path, target: Path, *, force: bool) -> None:
    exists = target.exists() or target.is_symlink()
    if exists and not force:
        raise UsageError(f"{target} appeared meanwhile; not overwriting it", "Give --force.")
    if not exists:
        staged.replace(target)
        return
    staged_is_dir = staged.is_dir() and not staged.is_symlink()
    target_is_dir = target.is_dir() and not target.is_symlink()
    if staged_is_dir != target_is_dir:
        raise UsageError(
            f"{target} is a {'directory' if target_is_dir else 'file'} and the copy is not",
            "Remove it or copy to another path.",
        )
    if not staged_is_dir:
        staged.replace(target)
        return
    # --force on a directory: merge, replacing files of the same name.
    for child in list(staged.iterdir()):
        _place(child, target / child.name, force=True)
    target.chmod(stat.S_IMODE(staged.stat().st_mode))


SNAPSHOT_COPY_COMMAND = restoring_command(
    "snapshot-cp",
    validate_copy,
    lambda api, plan, scope, progress: run_copy(api, plan, scope, progress.step),
)
