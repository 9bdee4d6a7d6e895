"""The FioReport, typed: what `kubectl storage fio` returns, renders, saves and reads back.

Its JSON form is the contract people keep and diff (``-o json > baseline.json``), so
:meth:`FioReport.to_dict` fixes the key order and :meth:`FioReport.from_dict` reads a saved
report back, also one written by an earlier version (missing fields take their defaults)::

    {"apiVersion": ..., "kind": "FioReport", "profile": ..., <context>..., "fio_version": ...,
     "repeats": N, "latency_measured": true, "notes": [<note>, ...],
     "results": [{"storage_class": "fast", "confidence": "trusted", "notes": [<note>, ...],
                  "etcd": {...},  # etcd profile only
                  "jobs": [<job>, ...]}, ...],
     "baseline": {...}}  # with --baseline only

A job carries the mean of every metric over the repeats (``read_iops``, ``write_clat_p99_us``,
``sync_lat_p99_us``, ...) each followed by ``<metric>_stddev``; :class:`FioJobSummary` keeps
them as one ordered mapping so that a metric fio adds later passes through untouched.

The parts a class result is made of live beside this module: the job summary
(:mod:`kubectl_storage.core.fio.report_jobs`), the baseline section
(:mod:`kubectl_storage.core.fio.report_baseline`) and what ``--clients`` and ``--compare-local``
add (:mod:`kubectl_storage.core.fio.report_extra_runs`).

Pure module.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubectl_storage.core.fio.notes import JOB_ERROR_NOTES, SUSPECT_NOTES, FioNote
from kubectl_storage.core.fio.profile_notes import EtcdVerdict
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME
from kubectl_storage.core.fio.report_baseline import BaselineComparison
from kubectl_storage.core.fio.report_extra_runs import FioClientSummary, LocalDiskResult
from kubectl_storage.core.fio.report_jobs import FioJobSummary, number
from kubectl_storage.core.fio.setup import TargetSetup
from kubectl_storage.core.fio.timeline import JobTimeline
from kubectl_storage.core.report.envelope import API_VERSION, ENVELOPE_KEYS, report_envelope
from kubectl_storage.core.report.verdict import Outcome, judge

REPORT_KIND = "FioReport"

#: Top-level keys of the JSON form that are not run context.
_REPORT_KEYS = ENVELOPE_KEYS | frozenset(
    {
        "profile",
        "fio_version",
        "repeats",
        "latency_measured",
        "notes",
        "results",
        "baseline",
    }
)


class FioReportError(ValueError):
    """A document is not a FioReport this version can read."""


@dataclass(frozen=True)
class FioClassResult:
    """What one StorageClass (or the given PVC) produced.

    Attributes:
        storage_class: the class, or the file's name for an offline report.
        confidence: ``trusted``, ``suspect: <reasons>`` and/or ``not checked: <guards>``
            (the guards' summary, :func:`~kubectl_storage.core.fio.notes.confidence`).
        notes: the guards' notes on this class's runs.
        etcd: etcd's fdatasync verdict, with the etcd profile only.
        jobs: its jobs, in the order of the job file; with ``--clients``, each job added up
            over the clients (IOPS and bandwidth summed, percentiles from the summed
            histograms).
        clients: with ``--clients``, every client, also those that took no part.
        client_skew_percent: with ``--clients``, per job: (largest - smallest client IOPS)
            / mean, ``None`` below two clients.
        setup: what the numbers were measured on (class, provisioner, mount, nodes).
        local_disk: with ``--compare-local``, the same jobs on the node's own disk.
        timeline: each job's IOPS per second in the first run, when fio logged them.
    """

    storage_class: str
    confidence: str = ""
    notes: tuple[FioNote, ...] = ()
    etcd: EtcdVerdict | None = None
    jobs: tuple[FioJobSummary, ...] = ()
    clients: tuple[FioClientSummary, ...] = ()
    client_skew_percent: Mapping[str, float | None] = field(default_factory=dict)
    setup: TargetSetup | None = None
    local_disk: LocalDiskResult | None = None
    timeline: tuple[JobTimeline, ...] = ()

    @property
    def failed_clients(self) -> tuple[FioClientSummary, ...]:
        """Clients that took no part in the run."""
        return tuple(client for client in self.clients if client.error)

    @property
    def failed_jobs(self) -> tuple[str, ...]:
        """Names of the jobs fio reported an error for, the Block prefill's included (it is
        not a reported job, but a failed prefill is a failed run: only its note says it)."""
        failed = [job.name for job in self.jobs if job.error]
        if any(n.job == PREFILL_JOB_NAME and n.id in JOB_ERROR_NOTES for n in self.notes):
            failed.append(PREFILL_JOB_NAME)
        return tuple(failed)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order (``etcd`` only when judged)."""
        entry: dict[str, Any] = {
            "storage_class": self.storage_class,
            "confidence": self.confidence,
            "notes": [note.to_dict() for note in self.notes],
        }
        if self.etcd is not None:
            entry["etcd"] = self.etcd.to_dict()
        entry["jobs"] = [job.to_dict() for job in self.jobs]
        if self.setup is not None:
            entry["setup"] = self.setup.to_dict()
        if self.clients:
            entry["clients"] = [client.to_dict() for client in self.clients]
            entry["client_skew_percent"] = dict(self.client_skew_percent)
        if self.local_disk is not None:
            entry["local_disk"] = self.local_disk.to_dict()
        if self.timeline:
            entry["timeline"] = [one.to_dict() for one in self.timeline]
        return entry

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioClassResult:
        """Read one class's result back."""
        etcd = data.get("etcd")
        skew = data.get("client_skew_percent")
        setup = data.get("setup")
        local = data.get("local_disk")
        return cls(
            storage_class=str(data.get("storage_class", "")),
            confidence=str(data.get("confidence") or ""),
            notes=tuple(FioNote.from_dict(note) for note in data.get("notes") or ()),
            etcd=EtcdVerdict.from_dict(etcd) if isinstance(etcd, Mapping) else None,
            jobs=tuple(FioJobSummary.from_dict(job) for job in data.get("jobs") or ()),
            clients=tuple(FioClientSummary.from_dict(c) for c in data.get("clients") or ()),
            client_skew_percent={str(k): number(v) for k, v in skew.items()}
            if isinstance(skew, Mapping)
            else {},
            setup=TargetSetup.from_dict(setup) if isinstance(setup, Mapping) else None,
            local_disk=LocalDiskResult.from_dict(local) if isinstance(local, Mapping) else None,
            timeline=tuple(
                JobTimeline.from_dict(one)
                for one in data.get("timeline") or ()
                if isinstance(one, Mapping)
            ),
        )


@dataclass(frozen=True)
class FioReport:
    """Everything one `kubectl storage fio` run (or one offline file) measured.

    Attributes:
        profile: the profile's name, ``custom`` for a user's job file, ``from-file`` offline.
        context: where the numbers come from (size, namespace, node, job file, source), in
            the order shown; kept as given, so new context fields need no change here.
        fio_version: fio's version, or the list of versions when runs disagree.
        repeats: the largest number of runs of any class.
        latency_measured: whether any job measured latency (off under ``gtod_reduce``).
        notes: notes on the whole run (the kubestr profile's caveat).
        results: one entry per class, in the order asked for.
        baseline: the comparison with a saved report (``--baseline``).
    """

    profile: str
    context: Mapping[str, Any] = field(default_factory=dict)
    fio_version: str | tuple[str, ...] = ""
    repeats: int = 0
    latency_measured: bool = False
    notes: tuple[FioNote, ...] = ()
    results: tuple[FioClassResult, ...] = ()
    baseline: BaselineComparison | None = None

    def jobs(self) -> Iterator[tuple[str, FioJobSummary]]:
        """``(storage_class, job)`` for every job, in report order."""
        for result in self.results:
            for job in result.jobs:
                yield result.storage_class, job

    @property
    def failed_jobs(self) -> tuple[str, ...]:
        """``class/job`` for every job fio reported an error for."""
        return tuple(
            f"{result.storage_class}/{name}"
            for result in self.results
            for name in result.failed_jobs
        )

    @property
    def failed_clients(self) -> tuple[str, ...]:
        """``class/pod (reason)`` for every client that took no part."""
        return tuple(
            f"{result.storage_class}/{client.pod} ({client.error})"
            for result in self.results
            for client in result.failed_clients
        )

    @property
    def outcome(self) -> Outcome:
        """fail: fio reported an error (``job-error:<class>/<job>``), a client took no part
        (``client:<class>/<pod>``), etcd's fdatasync p99 is over its limit (``etcd:<class>``),
        or the baseline comparison did not pass (``baseline``); inconclusive: the etcd profile
        measured no fdatasync (``etcd-unknown:<class>``); warn: a guard found the numbers
        suspect (its id, such as ``fio.dataset-small``)."""
        fail = [f"job-error:{name}" for name in self.failed_jobs]
        fail += [
            f"client:{result.storage_class}/{client.pod}"
            for result in self.results
            for client in result.failed_clients
        ]
        etcd = [(r.storage_class, r.etcd.verdict) for r in self.results if r.etcd is not None]
        fail += [f"etcd:{name}" for name, verdict in etcd if verdict == "fail"]
        if self.baseline is not None and self.baseline.failed:
            fail.append("baseline")
        return judge(
            fail=fail,
            inconclusive=[f"etcd-unknown:{name}" for name, verdict in etcd if verdict == "unknown"],
            warn=[
                note.id
                for result in self.results
                for note in result.notes
                if note.id in SUSPECT_NOTES
            ],
        )

    def with_baseline(self, comparison: BaselineComparison) -> FioReport:
        """This report with a baseline comparison attached."""
        return replace(self, baseline=comparison)

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: envelope, profile, context, then the measurements."""
        body: dict[str, Any] = {"profile": self.profile}
        body.update(self.context)
        body["fio_version"] = (
            list(self.fio_version) if isinstance(self.fio_version, tuple) else self.fio_version
        )
        body["repeats"] = self.repeats
        body["latency_measured"] = self.latency_measured
        body["notes"] = [note.to_dict() for note in self.notes]
        body["results"] = [result.to_dict() for result in self.results]
        if self.baseline is not None:
            body["baseline"] = self.baseline.to_dict()
        return report_envelope(REPORT_KIND, self.outcome, body)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioReport:
        """Read a saved report back.

        Raises:
            FioReportError: when ``data`` is not a FioReport of this API version.
        """
        if data.get("kind") != REPORT_KIND:
            raise FioReportError(
                f"it is not a {REPORT_KIND} (kind: {data.get('kind')!r}); save one with "
                "`kubectl storage fio -o json > baseline.json`"
            )
        if data.get("apiVersion") != API_VERSION:
            raise FioReportError(
                f"it has apiVersion {data.get('apiVersion')!r}; this version reads {API_VERSION}"
            )
        version = data.get("fio_version")
        baseline = data.get("baseline")
        return cls(
            profile=str(data.get("profile", "")),
            context={k: v for k, v in data.items() if k not in _REPORT_KEYS},
            fio_version=tuple(str(v) for v in version)
            if isinstance(version, list)
            else str(version or ""),
            repeats=int(number(data.get("repeats")) or 0),
            latency_measured=bool(data.get("latency_measured")),
            notes=tuple(FioNote.from_dict(note) for note in data.get("notes") or ()),
            results=tuple(FioClassResult.from_dict(r) for r in data.get("results") or ()),
            baseline=BaselineComparison.from_dict(baseline)
            if isinstance(baseline, Mapping)
            else None,
        )
