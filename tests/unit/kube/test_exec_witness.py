"""The exec exit witness (kube.podexec.witnessed/read_witness): the shell's own line, read back.

The wrapped command runs here under the machine's sh, as it does under the pod's; the cut-off
case on a real node is tests/e2e/test_exec_cut_off.py.
"""

from __future__ import annotations

import subprocess

import pytest

from kubectl_storage.kube.podexec import EXIT_WITNESS, read_witness, witnessed


@pytest.mark.parametrize(
    ("command", "stdout", "stderr", "code"),
    [
        (["true"], "", "", 0),
        (["sh", "-c", "echo out; echo err >&2; exit 3"], "out\n", "err\n", 3),
        (["sh", "-c", "printf 'no newline' >&2"], "", "no newline", 0),
        (["sh", "-c", "kill -9 $$"], "", "Killed\n", 137),  # dash and busybox say so
        (["printf", "%s\\n", "a b", "$HOME"], "a b\n$HOME\n", "", 0),  # words pass unchanged
    ],
)
def test_the_shell_reports_the_commands_own_exit_status(command, stdout, stderr, code) -> None:
    run = subprocess.run(witnessed(command), capture_output=True, text=True, timeout=30)
    assert run.returncode == code
    assert run.stdout == stdout
    assert read_witness(run.stderr) == (stderr, code)


def test_stdin_still_reaches_the_command() -> None:
    run = subprocess.run(
        witnessed(["head", "-c", "5"]), input="hello world", capture_output=True, text=True
    )
    assert (run.stdout, read_witness(run.stderr)) == ("hello", ("", 0))


@pytest.mark.parametrize(
    "stderr",
    [
        "",  # the stream ended before anything: the case the witness exists for
        "ERROR 2013 (HY000): Lost connection\n",
        f"\n{EXIT_WITNESS} 0",  # cut inside the witness line
        f"\n{EXIT_WITNESS} 0\nmore\n",  # not the last line: something else wrote after it
        f"{EXIT_WITNESS} 0\n",  # without the newline the shell writes first
    ],
)
def test_no_complete_last_witness_line_is_no_status(stderr) -> None:
    assert read_witness(stderr) == (stderr, None)
