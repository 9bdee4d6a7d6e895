"""The benchmark pod's own first fio run and the exec that collects it (operations/fio/pod_commands.py).

The container runs fio as it starts (``first_run_command``); the run's first exec
(``collect_first_run_command``) waits for it through a FIFO and prints what it left. The e2e tests
run both in real pods; here the two scripts run under this machine's ``sh`` with a stand-in
``fio`` on PATH, so that the hand-over can be checked in the orders a real pod can only produce
by chance (the exec arriving before the container made its FIFO, fio failing, fio still running).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from kubectl_storage.core.k8s.manifests import VolumeMode
from kubectl_storage.core.k8s.quantities import Size
from kubectl_storage.operations.fio.pod_commands import (
    FIRST_RUN,
    PER_SECOND_LOG,
    collect_first_run_command,
    fio_command,
    first_run_command,
    split_logs,
)
from kubectl_storage.operations.fio.request import FioRequest
from kubectl_storage.operations.fio.run import split_mountinfo

START, END = "@@kubectl-storage mountinfo", "@@kubectl-storage end"


def _fake_fio(tmp_path: Path, *, seconds: float, code: int) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fio = bin_dir / "fio"
    fio.write_text(
        "#!/bin/sh\n"
        # as fio does with --write_iops_log=PREFIX: one log per job, named PREFIX_iops.N.log
        'for a in "$@"; do case "$a" in --write_iops_log=*) '
        "printf '1000, 5, 0, 0, 0\\n2000, 6, 0, 0, 0\\n' > \"${a#*=}_iops.1.log\";; esac; done\n"
        f"sleep {seconds}\n"
        'echo "args: $*"\n'
        'echo \'{"fio version": "fio-3.33", "jobs": []}\'\n'
        "echo 'fio: a note' >&2\n"
        f"exit {code}\n"
    )
    fio.chmod(0o755)
    return dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def _scripts(tmp_path: Path, request: FioRequest) -> tuple[str, str]:
    where = str(tmp_path / "run")
    container = first_run_command(request)
    collect = collect_first_run_command(START, END)
    assert container[:2] == collect[:2] == ["sh", "-c"]
    assert container[2].endswith("exec sleep 86400")  # idles afterwards, like any of our pods
    own = container[2].replace(FIRST_RUN, where).replace("exec sleep 86400", "exec sleep 30")
    return own, collect[2].replace(FIRST_RUN, where)


def _hand_over(own: str, collect: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Start the container's script, then run the collecting exec to its end."""
    container = subprocess.Popen(["sh", "-c", own], env=env)
    try:
        return subprocess.run(
            ["sh", "-c", collect], env=env, capture_output=True, text=True, timeout=20
        )
    finally:
        container.kill()
        container.wait()


@pytest.mark.parametrize("collect_first", [False, True])
def test_the_collecting_exec_gets_fios_output_status_and_the_mountinfo(
    tmp_path: Path, collect_first: bool
) -> None:
    env = _fake_fio(tmp_path, seconds=0.5, code=0)
    own, collect = _scripts(tmp_path, FioRequest())
    started = time.monotonic()
    procs: list[subprocess.Popen] = []
    try:
        order = [collect, own] if collect_first else [own, collect]
        for script in order:
            procs.append(
                subprocess.Popen(
                    ["sh", "-c", script],
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            time.sleep(0.3)  # the other one starts later
        collector = procs[0] if collect_first else procs[1]
        out, err = collector.communicate(timeout=20)
        container = procs[1] if collect_first else procs[0]
        assert container.poll() is None, "the container idles after handing over"
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    assert collector.returncode == 0, err
    assert time.monotonic() - started >= 0.5  # it waited for fio to end
    mountinfo, stdout = split_mountinfo(out)
    assert mountinfo is not None
    assert " / " in mountinfo  # /proc/self/mountinfo lines
    logs, stdout = split_logs(stdout)
    assert logs == {"log_iops.1.log": "1000, 5, 0, 0, 0\n2000, 6, 0, 0, 0\n"}
    command = fio_command(FioRequest())
    where = str(tmp_path / "run")
    logged = [word.replace(FIRST_RUN, where) for word in PER_SECOND_LOG]
    assert stdout.splitlines() == [
        "args: " + " ".join([command[1], *logged, *command[2:]]),
        '{"fio version": "fio-3.33", "jobs": []}',
    ]
    assert err == "fio: a note\n"


def test_fios_exit_status_comes_back_and_block_mode_sets_no_directory(tmp_path: Path) -> None:
    env = _fake_fio(tmp_path, seconds=0, code=3)
    block = FioRequest(volume_mode=VolumeMode.BLOCK, size=Size.parse("1Gi"))
    assert not any(w.startswith("--directory") for w in fio_command(block))
    own, collect = _scripts(tmp_path, block)
    result = _hand_over(own, collect, env)
    assert result.returncode == 3, result.stderr
    assert "--directory" not in result.stdout
    assert "fio: a note" in result.stderr


def test_a_restarted_container_does_not_run_fio_again(tmp_path: Path) -> None:
    # The pod's /tmp (an emptyDir) outlives a container restart: the second start finds the
    # first run's result and hands it over again instead of benchmarking over it.
    env = _fake_fio(tmp_path, seconds=0, code=0)
    runs = tmp_path / "fio-runs"
    fio = tmp_path / "bin" / "fio"
    fio.write_text(fio.read_text().replace("#!/bin/sh\n", f"#!/bin/sh\necho run >> {runs}\n", 1))
    own, collect = _scripts(tmp_path, FioRequest())
    outputs = []
    for _start in range(2):
        result = _hand_over(own, collect, env)
        assert result.returncode == 0, result.stderr
        outputs.append(split_mountinfo(result.stdout)[1])
    assert runs.read_text() == "run\n"  # fio ran once, for the first start only
    assert outputs[0] == outputs[1]
    assert '{"fio version": "fio-3.33", "jobs": []}' in outputs[1]


def test_a_container_restarted_before_fio_ended_runs_it(tmp_path: Path) -> None:
    # fio was cut off (no rc yet): the new start runs it, and the collector gets that run.
    env = _fake_fio(tmp_path, seconds=0, code=0)
    own, collect = _scripts(tmp_path, FioRequest())
    where = tmp_path / "run"
    where.mkdir()
    os.mkfifo(where / "done")
    (where / "stdout").write_text("cut off\n")
    result = _hand_over(own, collect, env)
    assert result.returncode == 0, result.stderr
    assert "cut off" not in result.stdout
    assert '{"fio version": "fio-3.33", "jobs": []}' in result.stdout
