"""Benchmark: start-up time of the built binaries against ``python -m kubectl_storage``.

Not a test (nothing is asserted): run it by hand after building (build/build.sh) and read the
figures.

    python tests/bench/bench_startup.py [--runs 15] [--archive dist/….tar.gz] [--binary dist/…]

Forms timed, each for ``--help``, ``--version``, an offline ``mount-audit --from-file`` and two
shell completions as kubectl asks for them (``__complete ""``: the subcommands, from the command
table; ``__complete fio -``: a command's flags, which imports that command's module); pass
``--no-completion`` to leave those out, e.g. against a build from before completion existed:

* krew (one folder): the krew archive extracted to a temporary folder, as krew installs it;
* one file: the single-binary download (unpacks itself to a temporary folder on every run);
* python -m: this interpreter running the checkout, with typer's rich help (the package's
  default), and again with ``TYPER_USE_RICH=0``, the plain help the binaries print.

Runs go round-robin over the forms so that a busy machine slows all of them alike; the table
shows the median, min and max wall time of ``--runs`` runs after one warm-up run each.
Targets (issue 8): krew form ``--help`` under 250 ms and within 2x of ``python -m``; one file
under 700 ms.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AUDIT_FIXTURE = REPO / "tests" / "fixtures" / "mountinfo" / "invented-kubelet-node.mountinfo"
COMMANDS = {
    "--help": ["--help"],
    "--version": ["--version"],
    "mount-audit --from-file": ["mount-audit", "--from-file", str(AUDIT_FIXTURE)],
    "__complete ''": ["__complete", ""],
    "__complete fio -": ["__complete", "fio", "-"],
}
COMPLETION = ("__complete ''", "__complete fio -")


def default_names() -> tuple[str, str]:
    """The archive and one-file names build/package.py writes for this machine."""
    os_name = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform, "")
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), ""
    )
    suffix = ".exe" if os_name == "windows" else ""
    return f"kubectl-storage_{os_name}_{arch}.tar.gz", f"kubectl-storage_{os_name}_{arch}{suffix}"


def time_once(argv: list[str], env: dict[str, str]) -> float:
    """Wall time of one run in seconds; a failing run aborts the benchmark."""
    started = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # mount-audit exits 1 when it finds problems
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.decode()}")
    return elapsed


def main() -> int:
    archive_name, binary_name = default_names()
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--archive", type=Path, default=REPO / "dist" / archive_name)
    parser.add_argument("--binary", type=Path, default=REPO / "dist" / binary_name)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-completion", action="store_true", help="skip the __complete rows")
    args = parser.parse_args()
    commands = {k: v for k, v in COMMANDS.items() if not (args.no_completion and k in COMPLETION)}

    env = dict(os.environ)
    env.pop("TYPER_USE_RICH", None)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    plain_env = {**env, "TYPER_USE_RICH": "0"}
    with tempfile.TemporaryDirectory(prefix="kubectl-storage-bench-") as tmp:
        forms: dict[str, tuple[list[str], dict[str, str]]] = {}
        if args.archive.is_file():
            with tarfile.open(args.archive) as tar:
                tar.extractall(tmp, filter="data")
            exe = "kubectl-storage.exe" if sys.platform == "win32" else "kubectl-storage"
            forms["krew (one folder)"] = ([str(Path(tmp) / exe)], env)
        else:
            print(f"note: {args.archive} not found; skipping the one-folder form", file=sys.stderr)
        if args.binary.is_file():
            forms["one file"] = ([str(args.binary)], env)
        else:
            print(f"note: {args.binary} not found; skipping the one-file form", file=sys.stderr)
        forms["python -m"] = ([args.python, "-m", "kubectl_storage"], env)
        forms["python -m, plain help"] = ([args.python, "-m", "kubectl_storage"], plain_env)

        times: dict[tuple[str, str], list[float]] = {}
        for command, command_args in commands.items():
            for prefix, form_env in forms.values():
                time_once(prefix + command_args, form_env)  # warm-up: page cache, font cache
            for _ in range(args.runs):
                for form, (prefix, form_env) in forms.items():
                    elapsed = time_once(prefix + command_args, form_env)
                    times.setdefault((command, form), []).append(elapsed)

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"start-up, {args.runs} runs each, median (min-max) in ms; "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, load {load:.1f}"
    )
    header = f"{'command':<26}{'form':<24}{'median':>8}{'min':>8}{'max':>8}{'vs python -m':>14}"
    print(header)
    print("-" * len(header))
    for command in commands:
        python_median = statistics.median(times[(command, "python -m")])
        for form in forms:
            samples = times[(command, form)]
            median = statistics.median(samples)
            print(
                f"{command:<26}{form:<24}{median * 1000:>8.0f}{min(samples) * 1000:>8.0f}"
                f"{max(samples) * 1000:>8.0f}{median / python_median:>13.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
