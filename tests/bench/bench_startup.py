"""Benchmark: start-up time of the built binaries against ``python -m kubectl_storage``.

Not a test (nothing is asserted): run it by hand after building (build/build.sh) and read the
figures.

    python tests/bench/bench_startup.py [--runs 15] [--archive dist/….tar.gz] [--binary dist/…]

Forms timed, each for ``--help``, ``--version``, an offline ``mount-audit --from-file`` and three
shell completions as kubectl asks for them (``__complete ""``: the subcommands, from the command
table; ``__complete fio -``: a command's flags, which imports that command's module;
``__complete fio -s ""``: StorageClass names from the cluster); pass ``--no-completion`` to leave
those out, e.g. against a build from before completion existed.

The cluster for the StorageClass names is a local stand-in (no cluster needed): an HTTPS server in
this process, with a throwaway CA made by ``openssl``, that answers the list of StorageClasses
(three of them) to a bearer token, as an API server does. It measures everything up to and
including the request: the imports, reading the kubeconfig, TLS and one round trip on loopback;
a real API server adds its own answer time. Without ``openssl`` the row is left out.

Forms:

* krew (one folder): the krew archive extracted to a temporary folder, as krew installs it;
* one file: the single-binary download (unpacks itself to a temporary folder on every run);
* python -m: this interpreter running the checkout, with typer's rich help (the package's
  default), and again with ``TYPER_USE_RICH=0``, the plain help the binaries print;
* ``--baseline-repo DIR``: the same two for another checkout (e.g. ``git archive BASE | tar -x -C
  DIR``) with this interpreter, for before/after figures taken in the same rounds;
* ``--baseline-archive`` / ``--baseline-binary``: the krew archive and one-file binary of another
  build (copy dist/ away before rebuilding), timed in the same rounds as this build's.

``--no-python`` leaves the python -m forms out; ``--only ROW`` (repeatable) times only that row.

Runs go round-robin over the forms so that a busy machine slows all of them alike; the table
shows the median, min and max wall time of ``--runs`` runs after one warm-up run each.
Targets (issue 8): krew form ``--help`` under 250 ms and within 2x of ``python -m``; one file
under 700 ms.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import ssl
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AUDIT_FIXTURE = REPO / "tests" / "fixtures" / "mountinfo" / "invented-kubelet-node.mountinfo"
COMMANDS = {
    "--help": ["--help"],
    "--version": ["--version"],
    "mount-audit --from-file": ["mount-audit", "--from-file", str(AUDIT_FIXTURE)],
    "__complete ''": ["__complete", ""],
    "__complete fio -": ["__complete", "fio", "-"],
    "__complete fio -s ''": ["__complete", "fio", "-s", ""],
}
COMPLETION = ("__complete ''", "__complete fio -", "__complete fio -s ''")
#: The rows that ask the cluster, and what their output must contain.
CLUSTER_ROWS = {"__complete fio -s ''": "fast\t"}
STORAGE_CLASSES = {
    "kind": "StorageClassList",
    "apiVersion": "storage.k8s.io/v1",
    "metadata": {},
    "items": [
        {"metadata": {"name": name}, "provisioner": "csi.bench"}
        for name in ("fast", "slow", "standard")
    ],
}
TOKEN = "bench-token"


def default_names() -> tuple[str, str]:
    """The archive and one-file names build/package.py writes for this machine."""
    os_name = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform, "")
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower(), ""
    )
    suffix = ".exe" if os_name == "windows" else ""
    return f"kubectl-storage_{os_name}_{arch}.tar.gz", f"kubectl-storage_{os_name}_{arch}{suffix}"


def time_once(
    argv: list[str], env: dict[str, str], expect: str = "", cwd: str = "/"
) -> tuple[float, bool]:
    """Wall time of one run in seconds, and whether its output had ``expect`` in it (a
    completion that gave up after its 2 s budget prints no names); a failing run aborts.

    Runs in ``cwd``, not here: ``python -m`` puts its working directory first on sys.path, and in
    a checkout that would run the checkout whatever PYTHONPATH says.
    """
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # mount-audit exits 1 when it finds problems
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.decode()}")
    return elapsed, expect in proc.stdout.decode()


class _ApiHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        ok = self.headers.get("Authorization") == f"Bearer {TOKEN}"
        ok = ok and self.path.startswith("/apis/storage.k8s.io/v1/storageclasses")
        data = json.dumps(STORAGE_CLASSES if ok else {"kind": "Status", "code": 403}).encode()
        self.send_response(200 if ok else 403)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def fake_api(folder: Path) -> Iterator[Path]:
    """A local HTTPS API server that lists StorageClasses; yields a kubeconfig for it."""
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", "api.key", "-out", "api.crt"),
        ],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "api.crt", folder / "api.key")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ApiHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "bench",
                "cluster": {
                    "server": f"https://127.0.0.1:{server.server_address[1]}",
                    "certificate-authority": str(folder / "api.crt"),
                },
            }
        ],
        "users": [{"name": "bench", "user": {"token": TOKEN}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench"}}],
        "current-context": "bench",
    }
    path = folder / "kubeconfig"
    path.write_text(json.dumps(config))
    try:
        yield path
    finally:
        server.shutdown()
        server.server_close()


def main() -> int:
    archive_name, binary_name = default_names()
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--archive", type=Path, default=REPO / "dist" / archive_name)
    parser.add_argument("--binary", type=Path, default=REPO / "dist" / binary_name)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--no-completion", action="store_true", help="skip the __complete rows")
    parser.add_argument("--baseline-repo", type=Path, help="another checkout, for before/after")
    parser.add_argument(
        "--baseline-archive", type=Path, help="the krew archive of another build, for before/after"
    )
    parser.add_argument("--baseline-binary", type=Path, help="the one-file binary of another build")
    parser.add_argument("--no-python", action="store_true", help="time the built forms only")
    parser.add_argument("--only", action="append", help="only these rows (repeatable)")
    parser.add_argument("--no-rich", action="store_true", help="python -m with plain help only")
    args = parser.parse_args()
    commands = {k: v for k, v in COMMANDS.items() if not (args.no_completion and k in COMPLETION)}
    if args.only:
        commands = {k: v for k, v in commands.items() if k in args.only}
    if shutil.which("openssl") is None:
        print("note: no openssl; skipping the rows that ask a cluster", file=sys.stderr)
        commands = {k: v for k, v in commands.items() if k not in CLUSTER_ROWS}

    env = dict(os.environ)
    env.pop("TYPER_USE_RICH", None)
    env.pop("KUBECTL_STORAGE_COMPLETE_DEBUG", None)
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="kubectl-storage-bench-"))
        if any(k in CLUSTER_ROWS for k in commands):
            env["KUBECONFIG"] = str(stack.enter_context(fake_api(Path(tmp))))
        run(args, commands, env, tmp)
    return 0


def run(
    args: argparse.Namespace, commands: dict[str, list[str]], env: dict[str, str], tmp: str
) -> None:
    """Time every command in every form and print the table."""
    base_env = env
    env = {**base_env, "PYTHONPATH": str(REPO) + os.pathsep + base_env.get("PYTHONPATH", "")}
    plain_env = {**env, "TYPER_USE_RICH": "0"}
    forms: dict[str, tuple[list[str], dict[str, str]]] = {}
    exe = "kubectl-storage.exe" if sys.platform == "win32" else "kubectl-storage"
    for label, archive in (
        ("krew (one folder)", args.archive),
        ("krew (one folder), baseline", args.baseline_archive),
    ):
        if archive is None:
            continue
        if not archive.is_file():
            print(f"note: {archive} not found; skipping {label}", file=sys.stderr)
            continue
        folder = Path(tmp) / label.replace(" ", "_").replace(",", "").strip("()")
        with tarfile.open(archive) as tar:
            tar.extractall(folder, filter="data")
        forms[label] = ([str(folder / exe)], env)
    for label, binary in (("one file", args.binary), ("one file, baseline", args.baseline_binary)):
        if binary is None:
            continue
        if binary.is_file():
            forms[label] = ([str(binary)], env)
        else:
            print(f"note: {binary} not found; skipping {label}", file=sys.stderr)
    python_m = [args.python, "-m", "kubectl_storage"]
    if not args.no_rich and not args.no_python:
        forms["python -m"] = (python_m, env)
    if not args.no_python:
        forms["python -m, plain help"] = (python_m, plain_env)
    if args.baseline_repo and not args.no_python:
        base = {**base_env, "PYTHONPATH": str(args.baseline_repo.resolve())}
        if not args.no_rich:
            forms["python -m, baseline"] = (python_m, base)
        forms["python -m, plain help, baseline"] = (python_m, {**base, "TYPER_USE_RICH": "0"})

    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    times: dict[tuple[str, str], list[float]] = {}
    misses: dict[tuple[str, str], int] = {}  # runs of a cluster row that printed no names
    for command, command_args in commands.items():
        expect = CLUSTER_ROWS.get(command, "")
        for prefix, form_env in forms.values():
            time_once(prefix + command_args, form_env, expect, tmp)  # warm-up: page cache
        for _ in range(args.runs):
            for form, (prefix, form_env) in forms.items():
                elapsed, answered = time_once(prefix + command_args, form_env, expect, tmp)
                times.setdefault((command, form), []).append(elapsed)
                if not answered:
                    misses[(command, form)] = misses.get((command, form), 0) + 1

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    reference = next(
        (f for f in ("python -m", "python -m, plain help", "krew (one folder)") if f in forms),
        next(iter(forms)),
    )
    print(
        f"start-up, {args.runs} runs each, median (min-max) in ms; "
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load {load_before:.1f} before, {load:.1f} after"
    )
    header = (
        f"{'command':<26}{'form':<33}{'median':>8}{'min':>8}{'max':>8}{'  vs ' + reference:>26}"
    )
    print(header)
    print("-" * len(header))
    for command in commands:
        python_median = statistics.median(times[(command, reference)])
        for form in forms:
            samples = times[(command, form)]
            median = statistics.median(samples)
            print(
                f"{command:<26}{form:<33}{median * 1000:>8.0f}{min(samples) * 1000:>8.0f}"
                f"{max(samples) * 1000:>8.0f}{median / python_median:>25.2f}x"
                + (
                    f"  ({misses[(command, form)]} gave no names)"
                    if (command, form) in misses
                    else ""
                )
            )


if __name__ == "__main__":
    sys.exit(main())
