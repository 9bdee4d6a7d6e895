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

Pure module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kubectl_storage.core.fio.notes import JOB_ERROR_NOTES, SUSPECT_NOTES, FioNote
from kubectl_storage.core.fio.profile_notes import EtcdVerdict
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME
from kubectl_storage.core.fio.setup import TargetSetup
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
#: Keys of a job that are not metrics.
_JOB_KEYS = ("name", "error", "repeats", "clones", "percentile_merge", "raw")


class FioReportError(ValueError):
    """A document is not a FioReport this version can read."""


def number(value: Any) -> float | None:
    """A JSON value as a float, ``None`` for what is not a number (``null``, NaN, text, bools)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return None if math.isnan(value) else float(value)
    return None


@dataclass(frozen=True)
class MetricDelta:
    """How one metric moved against the baseline.

    Attributes:
        storage_class: class in the current report.
        job: job name.
        metric: metric key.
        baseline: baseline value.
        current: current value, ``None`` when no longer measured.
        change_percent: signed change, ``(current - baseline) / baseline * 100``.
        regression_percent: how much worse, in percent (negative means better).
        regressed: whether ``regression_percent`` exceeds the threshold.
    """

    storage_class: str
    job: str
    metric: str
    baseline: float
    current: float | None
    change_percent: float | None
    regression_percent: float | None
    regressed: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "storage_class": self.storage_class,
            "job": self.job,
            "metric": self.metric,
            "baseline": self.baseline,
            "current": self.current,
            "change_percent": self.change_percent,
            "regression_percent": self.regression_percent,
            "regressed": self.regressed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricDelta:
        """Read a delta back from a saved report."""
        return cls(
            storage_class=str(data.get("storage_class", "")),
            job=str(data.get("job", "")),
            metric=str(data.get("metric", "")),
            baseline=number(data.get("baseline")) or 0.0,
            current=number(data.get("current")),
            change_percent=number(data.get("change_percent")),
            regression_percent=number(data.get("regression_percent")),
            regressed=bool(data.get("regressed")),
        )


VERDICT_PASS = "pass"
VERDICT_REGRESSED = "regressed"
VERDICT_NOTHING_COMPARED = "nothing-compared"


@dataclass(frozen=True)
class BaselineComparison:
    """The outcome of comparing a report with a saved baseline.

    Attributes:
        max_regression_percent: the threshold used.
        deltas: every compared metric, in report order.
        missing: ``"class/job"`` entries in the baseline that the current report lacks.
        setup_differences: per class of the current report, what differs in its setup
            (provisioner, parameters, file system, mount options, node kernel…) from the
            baseline's, when both reports say.
        verdict: ``pass``, ``regressed`` (at least one metric past the threshold, or a job
            that vanished), or ``nothing-compared`` (no job in common).
    """

    max_regression_percent: float
    deltas: tuple[MetricDelta, ...]
    missing: tuple[str, ...]
    verdict: str
    setup_differences: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def regressions(self) -> tuple[MetricDelta, ...]:
        """The deltas past the threshold."""
        return tuple(delta for delta in self.deltas if delta.regressed)

    @property
    def failed(self) -> bool:
        """Whether the comparison should make the command exit 1."""
        return self.verdict != VERDICT_PASS

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "verdict": self.verdict,
            "max_regression_percent": self.max_regression_percent,
            "regressions": len(self.regressions),
            "missing": list(self.missing),
            "deltas": [delta.to_dict() for delta in self.deltas],
            **(
                {"setup_differences": {k: list(v) for k, v in self.setup_differences.items()}}
                if self.setup_differences
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BaselineComparison:
        """Read a comparison back from a saved report."""
        return cls(
            max_regression_percent=number(data.get("max_regression_percent")) or 0.0,
            deltas=tuple(MetricDelta.from_dict(d) for d in data.get("deltas") or ()),
            missing=tuple(str(m) for m in data.get("missing") or ()),
            verdict=str(data.get("verdict", "")),
            setup_differences={
                str(k): tuple(str(line) for line in v)
                for k, v in (data.get("setup_differences") or {}).items()
            },
        )


@dataclass(frozen=True)
class FioJobSummary:
    """One fio job of one class, merged over the repeats.

    Attributes:
        name: the job's name (its ``[section]``).
        error: fio's error number, the first non-zero one of any run.
        repeats: runs that had the job.
        clones: ``numjobs`` clones added up inside each run (1 for a plain job).
        metrics: metric key -> mean over the runs, each followed by ``<key>_stddev``; in the
            order fio's contract lists them.
        percentile_merge: how clones' percentiles were merged (``exact``, ``upper-bound``),
            ``None`` without clones.
        raw: fio's own job dicts, one entry per run.
    """

    name: str
    error: int = 0
    repeats: int = 1
    clones: int = 1
    metrics: Mapping[str, float | None] = field(default_factory=dict)
    percentile_merge: str | None = None
    raw: tuple[Any, ...] = ()

    def value(self, metric: str) -> float | None:
        """The mean of ``metric`` (``read_iops``), ``None`` when not measured."""
        return number(self.metrics.get(metric))

    def stddev(self, metric: str) -> float | None:
        """The spread of ``metric`` over repeats, ``None`` below two runs."""
        return number(self.metrics.get(f"{metric}_stddev"))

    def did(self, direction: str) -> bool:
        """Whether the job did any I/O in ``direction`` (``read``, ``write``)."""
        return bool(self.value(f"{direction}_iops"))

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: name, error, repeats, clones, the metrics, percentile_merge, raw."""
        entry: dict[str, Any] = {
            "name": self.name,
            "error": self.error,
            "repeats": self.repeats,
            "clones": self.clones,
        }
        entry.update(self.metrics)
        entry["percentile_merge"] = self.percentile_merge
        entry["raw"] = list(self.raw)
        return entry

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioJobSummary:
        """Read a job back; every key that is not one of the fixed ones is a metric."""
        merge = data.get("percentile_merge")
        return cls(
            name=str(data.get("name", "")),
            error=int(number(data.get("error")) or 0),
            repeats=int(number(data.get("repeats")) or 1),
            clones=int(number(data.get("clones")) or 1),
            metrics={k: number(v) for k, v in data.items() if k not in _JOB_KEYS},
            percentile_merge=str(merge) if merge else None,
            raw=tuple(data.get("raw") or ()),
        )


@dataclass(frozen=True)
class FioClientJob:
    """One job as one client ran it (``--clients``), mean over the repeats.

    Attributes:
        name: the job's name.
        iops: reads and writes per second of this client.
        bw_kib_s: reads and writes in KiB/s.
        share_percent: this client's part of all clients' IOPS for the job.
        error: fio's error number for this client's job.
    """

    name: str
    iops: float | None
    bw_kib_s: float | None
    share_percent: float | None
    error: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "name": self.name,
            "iops": self.iops,
            "bw_kib_s": self.bw_kib_s,
            "share_percent": self.share_percent,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioClientJob:
        """Read one back from a saved report."""
        return cls(
            name=str(data.get("name", "")),
            iops=number(data.get("iops")),
            bw_kib_s=number(data.get("bw_kib_s")),
            share_percent=number(data.get("share_percent")),
            error=int(number(data.get("error")) or 0),
        )


@dataclass(frozen=True)
class FioClientSummary:
    """One client of a ``--clients`` run: its pod, node and jobs.

    Attributes:
        index: its number (0 runs ``fio --client``).
        pod: its pod.
        node: the node it ran on, ``None`` when never scheduled.
        address: its pod IP, ``None`` when it never ran.
        error: why it took no part, ``None`` when it did.
        jobs: its jobs, in the job file's order.
    """

    index: int
    pod: str
    node: str | None
    address: str | None
    error: str | None
    jobs: tuple[FioClientJob, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "index": self.index,
            "pod": self.pod,
            "node": self.node,
            "address": self.address,
            "error": self.error,
            "jobs": [job.to_dict() for job in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FioClientSummary:
        """Read one back from a saved report."""
        node, address, error = data.get("node"), data.get("address"), data.get("error")
        return cls(
            index=int(number(data.get("index")) or 0),
            pod=str(data.get("pod", "")),
            node=str(node) if node else None,
            address=str(address) if address else None,
            error=str(error) if error else None,
            jobs=tuple(FioClientJob.from_dict(job) for job in data.get("jobs") or ()),
        )


@dataclass(frozen=True)
class LatencyProbe:
    """``--compare-local``'s latency probe: 4k I/O at queue depth 1 on each side.

    Each tuple holds the median completion latency (µs) of one round, in the order the rounds
    ran; the sides' rounds were interleaved (disk, volume, disk, ...).
    """

    volume_read_us: tuple[float, ...] = ()
    volume_write_us: tuple[float, ...] = ()
    disk_read_us: tuple[float, ...] = ()
    disk_write_us: tuple[float, ...] = ()

    def medians(self, side: str, direction: str) -> tuple[float, ...]:
        """The rounds' medians of ``side`` (``volume`` or ``disk``) in ``direction``."""
        value: tuple[float, ...] = getattr(self, f"{side}_{direction}_us")
        return value

    def to_dict(self) -> dict[str, Any]:
        """JSON shape: per side, per direction, the rounds' medians."""
        return {
            side: {
                f"{direction}_p50_us": list(self.medians(side, direction))
                for direction in ("read", "write")
            }
            for side in ("volume", "disk")
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LatencyProbe:
        """Read one back from a saved report."""

        def rounds(side: str, direction: str) -> tuple[float, ...]:
            values = (data.get(side) or {}).get(f"{direction}_p50_us") or ()
            return tuple(float(v) for v in values)

        return cls(
            rounds("volume", "read"),
            rounds("volume", "write"),
            rounds("disk", "read"),
            rounds("disk", "write"),
        )


@dataclass(frozen=True)
class LocalDiskResult:
    """The same jobs on the node's own disk (``--compare-local``), beside the volume's.

    Attributes:
        node: the node the benchmark pod ran on.
        fs_type: the emptyDir's file system as the pod saw it (``ext4``, ``xfs``).
        source: the device it is on (``/dev/nvme0n1p1``).
        jobs: the jobs there, one run; empty when they did not run.
        skipped: why there is no comparison, ``None`` when there is one.
        probe: the latency probe on both sides, which decides the comparison.
    """

    node: str | None = None
    fs_type: str | None = None
    source: str | None = None
    jobs: tuple[FioJobSummary, ...] = ()
    skipped: str | None = None
    probe: LatencyProbe | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON shape with fixed key order."""
        return {
            "node": self.node,
            "fs_type": self.fs_type,
            "source": self.source,
            "skipped": self.skipped,
            "latency_probe": self.probe.to_dict() if self.probe is not None else None,
            "jobs": [job.to_dict() for job in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LocalDiskResult:
        """Read one back from a saved report."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value else None

        probe = data.get("latency_probe")
        return cls(
            node=text("node"),
            fs_type=text("fs_type"),
            source=text("source"),
            jobs=tuple(FioJobSummary.from_dict(job) for job in data.get("jobs") or ()),
            skipped=text("skipped"),
            probe=LatencyProbe.from_dict(probe) if isinstance(probe, Mapping) else None,
        )


@dataclass(frozen=True)
class FioClassResult:
    """What one StorageClass (or the given PVC) produced.

    Attributes:
        storage_class: the class, or the file's name for an offline report.
        confidence: ``trusted`` or ``suspect: <reasons>`` (the guards' summary).
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
