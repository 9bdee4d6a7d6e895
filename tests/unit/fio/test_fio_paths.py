"""Where a job file's I/O goes (core/fio/paths.py): on the volume, or somewhere else in the pod.

Job files are written here; what fio does with these options is fio's HOWTO ("Target
file/device"), and what the pod has at those paths is the benchmark pod's manifest (the volume at
/dataset or its device, /tmp an emptyDir, a read-only root).
"""

from __future__ import annotations

import pytest

from kubectl_storage.core.fio.paths import JobPath, absolute_paths, outside_volume
from kubectl_storage.core.fio.profile_render import render_profile
from kubectl_storage.core.fio.profiles import BLOCK_DEVICE_PATH, DEFAULT_DIRECTORY


def _outside(text: str, *, block: bool = False) -> JobPath | None:
    device = BLOCK_DEVICE_PATH if block else None
    return outside_volume(text, mount_path=DEFAULT_DIRECTORY, device=device)


@pytest.mark.parametrize(
    "text",
    [
        "[j]\nrw=read\nsize=1M\n",  # no directory: the run points fio at the volume
        f"[j]\nrw=read\nsize=1M\ndirectory={DEFAULT_DIRECTORY}\n",
        f"[j]\nrw=read\nsize=1M\ndirectory={DEFAULT_DIRECTORY}/sub/\n",
        f"[j]\nrw=read\nsize=1M\nfilename={DEFAULT_DIRECTORY}/a.dat:b.dat\n",
        render_profile("default", directory=DEFAULT_DIRECTORY),
    ],
)
def test_files_on_the_volume_pass(text: str) -> None:
    assert _outside(text) is None


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[j]\nrw=write\nsize=1M\ndirectory=/tmp\n", "[j] sets directory=/tmp"),
        ("[global]\ndirectory=/tmp/x\n[j]\nrw=write\nsize=1M\n", "[global] sets directory=/tmp/x"),
        (f"[j]\nrw=read\nsize=1M\ndirectory={DEFAULT_DIRECTORY}:/tmp\n", "directory=/tmp"),
        ("[j]\nrw=read\nsize=1M\nfilename=a.dat:/etc/b.dat\n", "[j] sets filename=/etc/b.dat"),
        (f"[j]\nrw=read\nsize=1M\nfilename={DEFAULT_DIRECTORY}x/f\n", "filename=/datasetx/f"),
        (f"[j]\nrw=read\nsize=1M\nfilename={DEFAULT_DIRECTORY}/../etc/f\n", "/../etc/f"),
        ("[j]\nrw=read\nsize=1M\nopendir=/var/lib\n", "[j] sets opendir=/var/lib"),
        ("[j]\nrw=read\nsize=1M\nfilename_format=/tmp/$jobname\n", "filename_format=/tmp/$jobname"),
    ],
)
def test_files_elsewhere_are_named(text: str, said: str) -> None:
    found = _outside(text)
    assert found is not None
    assert said in found.said()


def test_block_mode_allows_the_device_only() -> None:
    assert _outside(f"[j]\nrw=read\nfilename={BLOCK_DEVICE_PATH}\n", block=True) is None
    assert (
        _outside(render_profile("quick", directory=None, filename=BLOCK_DEVICE_PATH), block=True)
        is None
    )
    other = _outside("[j]\nrw=read\nfilename=/dev/sdb\n", block=True)
    assert other is not None
    assert other.path == "/dev/sdb"
    # no file system is mounted in Block mode: the mount path is the read-only root there
    mounted = _outside(f"[j]\nrw=read\nsize=1M\ndirectory={DEFAULT_DIRECTORY}\n", block=True)
    assert mounted is not None


def test_a_global_path_is_said_once() -> None:
    text = "[global]\ndirectory=/tmp\n[a]\nrw=read\nsize=1M\n[b]\nrw=write\nsize=1M\n"
    assert absolute_paths(text) == [JobPath("[global]", "directory", "/tmp")]
