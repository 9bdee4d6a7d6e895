"""What the fio unit tests share: the real fio of this machine."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture
def fio() -> str:
    """The path of the real fio. .ci/run installs it, so a machine without it fails these tests
    instead of skipping them: the job files and outputs they check are fio's own."""
    path = shutil.which("fio")
    assert path, "fio is not installed: .ci/run installs it (apt-get install fio)"
    return path
