"""Where a job file's I/O goes: on the volume, or somewhere it would not measure the class.

In the benchmark pod the volume is mounted at
:data:`~kubectl_storage.core.fio.profiles.DEFAULT_DIRECTORY` (or, in Block mode, its device is at
:data:`~kubectl_storage.core.fio.profiles.BLOCK_DEVICE_PATH`); the run points a job without
``directory=`` there. A job that names another absolute place measures something else: ``/tmp``
is the pod's emptyDir, on the node's own disk, so fio would report the node's disk as the
class's numbers; anywhere else is the read-only root file system, where fio fails with EROFS
and the error would read as a read-only volume. Either way the run is refused before anything
is created.

The options that place files (fio's HOWTO, "Target file/device"): ``directory`` and
``filename`` (both ``:``-separated lists), ``filename_format`` and ``opendir``.

Pure module.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from kubectl_storage.core.fio.job_file import parse_job_file

#: Options whose values are paths of the job's files (``:`` separates several).
PATH_OPTIONS = ("directory", "filename", "filename_format", "opendir")


@dataclass(frozen=True)
class JobPath:
    """An absolute path a job file gives its I/O.

    Attributes:
        where: the section, ``[global]`` or ``[name]``.
        option: the option that names it.
        path: the path as written.
    """

    where: str
    option: str
    path: str

    def said(self) -> str:
        """How the job file says it, for messages."""
        return f"{self.where} sets {self.option}={self.path}"


def absolute_paths(job_text: str) -> list[JobPath]:
    """Every absolute path in the options that place a job's files, section by section.

    A ``[global]`` option is reported once, from ``[global]``, not again for every job it
    applies to.
    """
    parsed = parse_job_file(job_text)
    found: list[JobPath] = []
    sections = [("[global]", parsed.global_options)] + [
        (f"[{job.name}]", job.options) for job in parsed.jobs
    ]
    for where, options in sections:
        for option in PATH_OPTIONS:
            value = options.get(option)
            if not value or (where != "[global]" and parsed.global_options.get(option) == value):
                continue
            found += [JobPath(where, option, p) for p in value.split(":") if p.startswith("/")]
    return found


def outside_volume(job_text: str, *, mount_path: str, device: str | None = None) -> JobPath | None:
    """The first path of the job that is neither the volume's mount (or below it) nor its
    device, ``None`` when every file of the job is on the volume."""
    root = posixpath.normpath(mount_path)
    for path in absolute_paths(job_text):
        normal = posixpath.normpath(path.path)
        if device is not None and normal == posixpath.normpath(device):
            continue
        if device is None and (normal == root or normal.startswith(root + "/")):
            continue
        return path
    return None
