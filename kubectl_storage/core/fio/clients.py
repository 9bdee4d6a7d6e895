"""fio's client/server mode: one ``fio --client`` run driving ``fio --server`` in many pods.

``fio --client=ADDR1 job1.fio --client=ADDR2 job2.fio …`` sends each job file to the server at
that address, runs them all at once and prints one JSON document. Its ``client_stats`` list has
every client's jobs, each carrying ``hostname`` (the address the client was given), and ends
with one entry named ``All clients``. That last entry adds up every job of every client into a
single one, all stonewall groups together, so for a profile of several jobs it mixes a read job
with a write job; it is not used here.

Instead, the same job of every client is added up the way fio adds up ``numjobs`` clones
(:func:`kubectl_storage.core.fio.clones.merge_clones`): IOPS and bandwidth summed over the
clients, latency percentiles read off the sum of their histograms (exact with
``--output-format=json+``), never averaged. Each client's own jobs are kept too, so the report
can show every client's share, the skew between them, and judge each client's data set on its
own (a data set is per client: N clients on N files hold N times one file's data).

On one shared volume every client needs its own files. fio's ``unique_filename`` (on by
default) prefixes file names with the address a server sees the ``fio --client`` process
connect from, which several servers can share (servers on one node see the same one), so it
does not keep them apart; :func:`client_job_text` puts the client's number in every name
(on the test cluster: ``10.244.0.112.client-1.kubectl-storage-fio.dat``).

Pure module: text in, dataclasses out. Verified against fio 3.33's own output with three
servers (tests/fixtures/fio/SOURCES.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kubectl_storage.core.fio.choices import Spread
from kubectl_storage.core.fio.clones import merge_clones
from kubectl_storage.core.fio.fio_json import json_object_spans, parse_fio_job
from kubectl_storage.core.fio.guards import run_notes
from kubectl_storage.core.fio.job_file import parse_job_file
from kubectl_storage.core.fio.notes import NOTE_CLIENTS_PACKED, FioNote
from kubectl_storage.core.fio.profiles import DEFAULT_TEST_FILENAME
from kubectl_storage.core.fio.results import FioJobResult, FioOutputError, FioResult
from kubectl_storage.core.report.findings import Severity

#: The ``jobname`` of fio's sum over every client and job.
ALL_CLIENTS = "All clients"
#: fio's default server port (``fio --server`` listens on it on every address).
FIO_SERVER_PORT = 8765


@dataclass(frozen=True)
class ClientResult:
    """One client's part of a client/server run.

    Attributes:
        address: the address the client was given (the pod's IP).
        result: that client's jobs, in fio's order.
    """

    address: str
    result: FioResult


@dataclass(frozen=True)
class ClientServerRun:
    """A whole client/server run.

    Attributes:
        clients: each client's result, in the order the clients were given.
        combined: every job added up over the clients (one entry per job, in fio's order);
            its ``surrounding_text`` is what fio printed outside the JSON, for all clients.
    """

    clients: tuple[ClientResult, ...]
    combined: FioResult


@dataclass(frozen=True)
class FioClient:
    """One planned client: the pod that runs ``fio --server``, and where it ran.

    Attributes:
        index: its number in the run (0 is the pod ``fio --client`` runs in).
        pod: the pod's name.
        node: the node it ran on, ``None`` when it was never scheduled.
        address: the pod's IP, ``None`` when it never ran.
        error: why it took no part (the pod did not start), ``None`` when it did.
    """

    index: int
    pod: str
    node: str | None = None
    address: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class ClientRuns:
    """Everything one class's clients did: who they were and each repeat's run.

    Attributes:
        clients: every planned client, running or not, by index.
        runs: one client/server run per repeat, over the clients that ran.
    """

    clients: tuple[FioClient, ...]
    runs: tuple[ClientServerRun, ...]
    spread: Spread | None = None
    #: the nodes the clients' pods could go to (Ready, schedulable, selector and taints),
    #: each with its zone label (``None`` without one); empty when they could not be read
    eligible_nodes: Mapping[str, str | None] = field(default_factory=dict)


def client_notes(runs: ClientRuns) -> list[FioNote]:
    """Every client's own notes, each naming the client and node it came from.

    Each client has its own data set, cache and node, so the guards judge each client's jobs.
    A rule that fires on one job for several clients (each with its own numbers) is kept once,
    the first client's note naming the others it fired on: a problem of one node is then not
    reported as the class's, nor lost behind another client's note of the same rule (a rule's
    severity does not depend on the client).
    """
    by_address = {client.address: client for client in runs.clients if client.address}
    fired: dict[tuple[str, str | None], list[tuple[str, FioNote]]] = {}
    for run in runs.runs:
        for part in run.clients:
            who = _client_label(by_address.get(part.address), part.address)
            for note in run_notes(part.result):
                fired.setdefault((note.id, note.job), []).append((who, note))
    notes = []
    for group in fired.values():
        who, note = group[0]
        others = list(dict.fromkeys(label for label, _ in group if label != who))
        also = f" (also {', '.join(others)})" if others else ""
        notes.append(replace(note, message=f"{who}{also}: {note.message}"))
    return notes


def _client_label(client: FioClient | None, address: str) -> str:
    if client is None:
        return f"the client at {address}"
    if client.node:
        return f"client {client.index} on {client.node}"
    # a saved client/server output (--from-json) knows its clients by address only
    return f"client {client.index} at {address}" if address else f"client {client.index}"


def packing_note(runs: ClientRuns) -> FioNote | None:
    """``fio.clients-packed`` when the running clients sit on fewer nodes (or zones) than the
    eligible ones could give them; ``None`` when they spread as far as they could, or when
    what was eligible is not known.

    ``--spread`` is a preference (``whenUnsatisfiable: ScheduleAnyway``), so pods that must
    follow their volumes (a node-local class: each PV's node affinity), or that do not fit
    elsewhere, land together and the run goes on. Its numbers are then true, but of fewer
    nodes than asked: the aggregate says nothing about the storage seen from several nodes.
    """
    running = [c for c in runs.clients if c.error is None and c.node]
    if runs.spread is None or len(running) < 2 or not runs.eligible_nodes:
        return None
    if runs.spread is Spread.NODES:
        unit = "node"
        used = sorted({str(c.node) for c in running})
        possible = len(runs.eligible_nodes)
    else:
        unit = "zone"
        zone_of = runs.eligible_nodes
        used = sorted({zone for c in running if (zone := zone_of.get(str(c.node)))})
        possible = len({zone for zone in zone_of.values() if zone})
    possible = min(possible, len(running))
    if len(used) >= possible:
        return None
    return FioNote(
        NOTE_CLIENTS_PACKED,
        Severity.WARN,
        f"the {len(running)} clients ran on {len(used)} {unit}{'s' if len(used) != 1 else ''} "
        f"({', '.join(used) or '?'}) though {possible} {unit}s could take them: --spread "
        f"{runs.spread} is a preference, and something kept them together (their volumes' node "
        "affinity, as a node-local class has; or their resources), so the sum is of "
        f"{len(used)} {unit}{'s' if len(used) != 1 else ''}, not {possible}",
        "check where the volumes may be used (kubectl get pv NAME -o "
        "jsonpath='{.spec.nodeAffinity}'): a class whose volumes are pinned to one node cannot "
        "spread its clients; or free resources on the other nodes",
    )


def own_file_problem(job_text: str) -> str | None:
    """Why the job cannot give each client of one shared volume its own files, or None.

    :func:`client_job_text` names each client's files; a job file that names them itself
    (``filename=``, ``filename_format=``) would have every client write the same file.
    """
    parsed = parse_job_file(job_text)
    sections = [("[global]", parsed.global_options)] + [
        (f"[{job.name}]", job.options) for job in parsed.jobs
    ]
    for where, options in sections:
        for key in ("filename", "filename_format"):
            if key in options:
                return f"{where} sets {key}={options[key]}, so every client would use that file"
    return None


def client_job_text(job_text: str, index: int, *, directory: str) -> str:
    """The job file of client ``index`` on a shared volume: its own files in ``directory``.

    The built-in profiles' one test file is renamed per client, and every other file fio lays
    out gets the client in its name (``filename_format``). The lines go first, in a
    ``[global]`` of their own, so the job file's own ``[global]`` still applies after them; a
    job file that sets ``directory=`` keeps it.
    """
    renamed = job_text.replace(
        f"filename={DEFAULT_TEST_FILENAME}", f"filename=client-{index}.{DEFAULT_TEST_FILENAME}"
    )
    prefix = (
        f"; kubectl-storage --clients: client {index} writes only its own files\n"
        "[global]\n"
        f"directory={directory}\n"
        f"filename_format=client-{index}.$jobname.$jobnum.$filenum\n"
    )
    return prefix + renamed


def client_arguments(clients: Sequence[tuple[str, str]]) -> list[str]:
    """``--client=ADDR JOBFILE`` pairs for ``fio``, one per ``(address, job file)``."""
    arguments: list[str] = []
    for address, job_file in clients:
        arguments += [f"--client={address},{FIO_SERVER_PORT}", job_file]
    return arguments


def parse_client_output(text: str, addresses: Sequence[str]) -> ClientServerRun:
    """Parse the stdout of one ``fio --client`` run.

    Args:
        text: fio's stdout: per-client text lines (``<host> …``) and the JSON document.
        addresses: the clients' addresses in the order they were given; a client that
            reported nothing still gets an entry, with no jobs.

    Returns:
        Each client's result and their sum.

    Raises:
        FioOutputError: when the output holds no client/server JSON document.
    """
    document, outside = _client_document(text)
    entries = document.get("client_stats")
    if not isinstance(entries, list):
        raise FioOutputError("fio client output has no 'client_stats' list")
    version = str(document.get("fio version", "unknown"))
    global_options = {str(k): str(v) for k, v in (document.get("global options") or {}).items()}
    by_address: dict[str, list[FioJobResult]] = {address: [] for address in addresses}
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or entry.get("jobname") == ALL_CLIENTS:
            continue
        address = str(entry.get("hostname", ""))
        by_address.setdefault(address, []).append(parse_fio_job(entry, index=index))
    clients = tuple(
        ClientResult(
            address,
            FioResult(
                fio_version=version,
                jobs=tuple(jobs),
                disk_util=(),
                global_options=global_options,
                raw={"client_stats": [job.raw for job in jobs]},
            ),
        )
        for address, jobs in by_address.items()
    )
    combined = FioResult(
        fio_version=version,
        jobs=combine_clients([client.result for client in clients]),
        disk_util=(),
        global_options=global_options,
        raw=document,
        surrounding_text=outside,
    )
    return ClientServerRun(clients, combined)


def combine_clients(results: Sequence[FioResult]) -> tuple[FioJobResult, ...]:
    """Each job added up over the clients that ran it, in the order of first appearance.

    Jobs are matched by name and stonewall group; a job only one client ran passes through.
    """
    order: list[tuple[str, int]] = []
    members: dict[tuple[str, int], list[FioJobResult]] = {}
    for result in results:
        for job in result.jobs:
            key = (job.name, job.group_id)
            if key not in members:
                members[key] = []
                order.append(key)
            members[key].append(job)
    return tuple(
        members[key][0] if len(members[key]) == 1 else merge_clones(members[key]) for key in order
    )


def job_iops(job: FioJobResult) -> float:
    """All the I/Os per second of a job, reads and writes (and fio's unified ``mixed``)."""
    if job.mixed is not None and job.mixed.iops:
        return job.mixed.iops
    return job.read.iops + job.write.iops + job.trim.iops


def skew_percent(values: Sequence[float]) -> float | None:
    """How far apart the clients are: (largest - smallest) / mean, in percent.

    ``None`` below two values or when they are all zero.
    """
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean <= 0:
        return None
    return (max(values) - min(values)) / mean * 100


def _client_document(text: str) -> tuple[Mapping[str, Any], str]:
    for value, start, end in json_object_spans(text, lambda value: "client_stats" in value):
        return value, (text[:start] + text[end:]).strip()
    snippet = text.strip()[:200]
    raise FioOutputError(
        "no fio client/server JSON report found in the output"
        + (f"; output starts with: {snippet!r}" if snippet else "; the output is empty")
    )
