"""Statistics over fio results: merging repeats, and building the FioReport from parsed runs.

:func:`build_fio_report` turns parsed runs into the typed
:class:`~kubectl_storage.core.fio.report.FioReport`; the comparisons work on that type, so a
report read back from a saved JSON file (:meth:`FioReport.from_dict`) is as good as a fresh one.

A job's metrics start as :func:`kubectl_storage.core.fio.results.job_contract` output; after
:func:`merge_repeats` each metric holds the mean over the repeats and is followed by
``<metric>_stddev`` (sample standard deviation, ``None`` below two samples).

Repeats are separate fio runs (``--repeat N``). The ``numjobs`` clones of one job inside one run
are not repeats: :func:`build_fio_report` first adds them up into one job
(:mod:`kubectl_storage.core.fio.clones`), and only then averages over runs.

Comparisons between classes (:mod:`kubectl_storage.core.fio.class_comparison`) and against a
baseline (:mod:`kubectl_storage.core.fio.baseline`) are separate modules.

Pure module.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.fio.clients import (
    ClientRuns,
    client_notes,
    job_iops,
    packing_note,
    skew_percent,
)
from kubectl_storage.core.fio.clones import combine_clones
from kubectl_storage.core.fio.env_errors import text_notes
from kubectl_storage.core.fio.guards import measured_jobs, run_notes
from kubectl_storage.core.fio.local_disk import LocalDiskRun, local_disk_notes, probe_medians
from kubectl_storage.core.fio.notes import CACHE_NOTES, FioNote, confidence, dedupe
from kubectl_storage.core.fio.profile_notes import etcd_note, etcd_verdict, kubestr_mode_note
from kubectl_storage.core.fio.profiles import ETCD_JOB_NAME
from kubectl_storage.core.fio.report import FioClassResult, FioReport
from kubectl_storage.core.fio.report_extra_runs import (
    FioClientJob,
    FioClientSummary,
    LatencyProbe,
    LocalDiskResult,
)
from kubectl_storage.core.fio.report_jobs import FioJobSummary
from kubectl_storage.core.fio.results import (
    CONTRACT_DIRECTIONS,
    DIRECTION_METRICS,
    PERCENTILES_UPPER_BOUND,
    SYNC_METRICS,
    FioJobResult,
    FioResult,
    job_contract,
)
from kubectl_storage.core.fio.setup import TargetSetup
from kubectl_storage.core.fio.steady_state import merge_steady_dicts
from kubectl_storage.core.fio.timeline import JobTimeline, burst_notes, job_timelines

#: Metric keys averaged over repeats: every numeric per-direction and sync value.
_AVERAGED_METRICS: tuple[str, ...] = tuple(
    f"{direction}_{metric}" for direction in CONTRACT_DIRECTIONS for metric in DIRECTION_METRICS
) + tuple(f"sync_{metric}" for metric in SYNC_METRICS)


@dataclass(frozen=True)
class MetricStats:
    """Mean and spread of one metric over repeated runs.

    Attributes:
        mean: arithmetic mean of the samples, ``None`` when there are none.
        stddev: sample standard deviation (n - 1), ``None`` below two samples.
        samples: number of runs that produced a value.
    """

    mean: float | None
    stddev: float | None
    samples: int


def metric_stats(values: Iterable[float | None]) -> MetricStats:
    """Mean and sample standard deviation, skipping runs that produced no value.

    Args:
        values: one value per run; ``None`` where the run did not measure it.

    Returns:
        The statistics.
    """
    present = [float(value) for value in values if value is not None]
    if not present:
        return MetricStats(mean=None, stddev=None, samples=0)
    stddev = statistics.stdev(present) if len(present) > 1 else None
    return MetricStats(mean=statistics.fmean(present), stddev=stddev, samples=len(present))


def merge_repeats(runs: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Combine the job dicts of N repeated runs into one job dict per job.

    Jobs are matched by ``name`` and kept in the order of the first run that has them; when a
    run holds several jobs of one name (sections in different stonewall groups), the k-th of
    each run are matched, never averaged together. Each metric becomes the mean over the runs,
    followed by ``<metric>_stddev``. ``error`` is the first non-zero error of any run,
    ``repeats`` the number of runs that had the job, ``clones`` the number of ``numjobs``
    clones added up inside each run (1 for a plain job), ``percentile_merge`` how the clones'
    percentiles were merged (``exact``, ``upper-bound`` if any run could only bound them, or
    ``None``), and ``raw`` the list of fio's job dicts, one per run (for clones, each entry is
    the list of the clones' dicts), then ``steady_state`` (:func:`merge_steady_dicts`).

    Args:
        runs: for each run, its job dicts (:func:`job_contract` output).

    Returns:
        Merged job dicts with stable key order.
    """
    order: list[tuple[str, int]] = []
    by_key: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for run in runs:
        seen: dict[str, int] = {}
        for job in run:
            name = str(job["name"])
            key = (name, seen.get(name, 0))
            seen[name] = key[1] + 1
            if key not in by_key:
                order.append(key)
                by_key[key] = []
            by_key[key].append(job)
    merged: list[dict[str, Any]] = []
    for key in order:
        jobs = by_key[key]
        errors = [int(job.get("error", 0)) for job in jobs]
        methods = [job.get("percentile_merge") for job in jobs if job.get("percentile_merge")]
        entry: dict[str, Any] = {
            "name": key[0],
            "error": next((error for error in errors if error), 0),
            "repeats": len(jobs),
            "clones": max(int(job.get("clones", 1)) for job in jobs),
        }
        for metric in _AVERAGED_METRICS:
            stats = metric_stats(job.get(metric) for job in jobs)
            entry[metric] = stats.mean
            entry[f"{metric}_stddev"] = stats.stddev
        entry["percentile_merge"] = (
            PERCENTILES_UPPER_BOUND
            if PERCENTILES_UPPER_BOUND in methods
            else (methods[0] if methods else None)
        )
        entry["raw"] = [job.get("raw") for job in jobs]
        entry["steady_state"] = merge_steady_dicts([job.get("steady_state") for job in jobs])
        merged.append(entry)
    return merged


def build_fio_report(
    class_runs: Mapping[str, Sequence[FioResult]],
    *,
    profile: str,
    context: Mapping[str, Any] | None = None,
    stderr: Mapping[str, str] | None = None,
    client_runs: Mapping[str, ClientRuns] | None = None,
    setups: Mapping[str, TargetSetup] | None = None,
    local_disks: Mapping[str, LocalDiskRun] | None = None,
    logs: Mapping[str, Mapping[str, str]] | None = None,
) -> FioReport:
    """Assemble a FioReport from parsed runs, one list of repeats per StorageClass.

    Per class: ``numjobs`` clones are added up inside each run, the guards of
    :mod:`kubectl_storage.core.fio.guards` give its ``notes`` and ``confidence``, and with the
    ``etcd`` profile its ``etcd`` verdict; then the repeats are merged.

    Args:
        class_runs: StorageClass name -> its runs (one :class:`FioResult` per repeat), in the
            order the classes should be shown.
        profile: profile name, or ``"custom"`` for a user's job file.
        context: where the numbers come from (sizes, namespace, node, job file text).
        stderr: StorageClass name -> what fio wrote on stderr, read for environment errors
            (ENOSPC, EROFS, libaio EAGAIN) that fio's JSON only gives as a number.
        client_runs: for a ``--clients`` run, StorageClass name -> its clients and their
            runs. ``class_runs`` then holds each run's sum over the clients; the guards judge
            every client's own jobs (each client has its own data set and cache).
        setups: StorageClass name -> what its numbers were measured on.
        local_disks: with ``--compare-local``, StorageClass name -> the same jobs on the
            node's own disk; the class's jobs are compared with them.
        logs: StorageClass name -> the first run's per-second IOPS logs (file name -> text),
            for the classes whose pod wrote them; the burst guard reads them
            (:mod:`kubectl_storage.core.fio.timeline`).

    Returns:
        The report.
    """
    versions = sorted({run.fio_version for runs in class_runs.values() for run in runs})
    counted = {  # a Block volume's prefill is not a measurement: its note says what it did
        storage_class: [measured_jobs(combine_clones(run)) for run in runs]
        for storage_class, runs in class_runs.items()
    }
    return FioReport(
        profile=profile,
        context=dict(context or {}),
        fio_version=versions[0] if len(versions) == 1 else tuple(versions),
        repeats=max((len(runs) for runs in class_runs.values()), default=0),
        latency_measured=any(
            _measured_latency(job) for runs in counted.values() for jobs in runs for job in jobs
        ),
        notes=(kubestr_mode_note(),) if profile == "kubestr" else (),
        results=tuple(
            _class_result(
                storage_class,
                runs,
                counted[storage_class],
                profile=profile,
                stderr=(stderr or {}).get(storage_class, ""),
                clients=(client_runs or {}).get(storage_class),
                setup=(setups or {}).get(storage_class),
                local_run=(local_disks or {}).get(storage_class),
                logs=(logs or {}).get(storage_class),
            )
            for storage_class, runs in class_runs.items()
        ),
    )


def _class_result(
    storage_class: str,
    runs: Sequence[FioResult],
    counted: Sequence[Sequence[FioJobResult]],
    *,
    profile: str,
    stderr: str,
    clients: ClientRuns | None = None,
    setup: TargetSetup | None = None,
    local_run: LocalDiskRun | None = None,
    logs: Mapping[str, str] | None = None,
) -> FioClassResult:
    notes: list[FioNote] = []
    timeline: tuple[JobTimeline, ...] = ()
    if logs is not None and runs:
        timeline, unmatched = job_timelines(logs, runs[0])
        notes.extend(burst_notes(timeline, unmatched, counted[0]))
    if clients is None:
        for run, jobs in zip(runs, counted, strict=True):
            notes.extend(run_notes(run, jobs, fio_text=stderr))
    else:
        notes.extend(client_notes(clients))
        for client_run in clients.runs:
            notes.extend(text_notes(client_run.combined.surrounding_text))
        packed = packing_note(clients)
        if packed is not None:
            notes.append(packed)
    notes.extend(text_notes(stderr))
    merged = merge_repeats([[job_contract(job) for job in jobs] for jobs in counted])
    job_summaries = tuple(FioJobSummary.from_dict(job) for job in merged)
    local = _local_disk(local_run) if local_run is not None else None
    if local is not None:
        notes.extend(local_disk_notes(job_summaries, local))
    etcd = None
    if profile == "etcd":
        cached = [note for note in notes if note.id in CACHE_NOTES]
        etcd = etcd_verdict(
            [job for jobs in counted for job in jobs if job.name == ETCD_JOB_NAME],
            cache_notes=cached,
        )
        notes.append(etcd_note(etcd, cached))
    kept = dedupe(notes)
    summaries = _client_summaries(clients) if clients is not None else ()
    return FioClassResult(
        storage_class=storage_class,
        confidence=confidence(kept),
        notes=tuple(kept),
        etcd=etcd,
        jobs=job_summaries,
        clients=summaries,
        client_skew_percent=_client_skew(summaries),
        setup=setup,
        local_disk=local,
        timeline=timeline,
    )


def _local_disk(run: LocalDiskRun) -> LocalDiskResult:
    """The run on the node's disk, its jobs summarised like the volume's (one run)."""
    jobs: tuple[FioJobSummary, ...] = ()
    if run.result is not None:
        counted = measured_jobs(combine_clones(run.result))
        merged = merge_repeats([[job_contract(job) for job in counted]])
        jobs = tuple(FioJobSummary.from_dict(job) for job in merged)
    volume = run.volume
    probe = None
    if run.disk_probes or run.volume_probes:
        probe = LatencyProbe(
            probe_medians(run.volume_probes, "read"),
            probe_medians(run.volume_probes, "write"),
            probe_medians(run.disk_probes, "read"),
            probe_medians(run.disk_probes, "write"),
        )
    return LocalDiskResult(
        node=run.node,
        fs_type=volume.fs_type if volume else None,
        source=volume.source if volume else None,
        jobs=jobs,
        skipped=run.skipped,
        probe=probe,
    )


def _client_summaries(clients: ClientRuns) -> tuple[FioClientSummary, ...]:
    """Each client's jobs, mean over the repeats, with its share of the job's IOPS."""
    # address -> job name -> [(iops, bw, error) per repeat]
    seen: dict[str, dict[str, list[tuple[float, float, int]]]] = {}
    job_order: list[str] = []
    for run in clients.runs:
        for part in run.clients:
            for job in measured_jobs(combine_clones(part.result)):
                if job.name not in job_order:
                    job_order.append(job.name)
                bw = job.read.bw_kib_s + job.write.bw_kib_s + job.trim.bw_kib_s
                if job.mixed is not None and job.mixed.bw_kib_s:
                    bw = job.mixed.bw_kib_s
                per_job = seen.setdefault(part.address, {}).setdefault(job.name, [])
                per_job.append((job_iops(job), bw, job.error))
    means: dict[str, dict[str, tuple[float, float, int]]] = {
        address: {
            name: (
                statistics.fmean(v[0] for v in values),
                statistics.fmean(v[1] for v in values),
                next((v[2] for v in values if v[2]), 0),
            )
            for name, values in jobs.items()
        }
        for address, jobs in seen.items()
    }
    totals = {
        name: sum(jobs[name][0] for jobs in means.values() if name in jobs) for name in job_order
    }
    summaries = []
    for client in clients.clients:
        jobs = means.get(client.address or "", {})
        summaries.append(
            FioClientSummary(
                index=client.index,
                pod=client.pod,
                node=client.node,
                address=client.address,
                error=client.error
                or (None if jobs or client.address is None else "fio reported no jobs"),
                jobs=tuple(
                    FioClientJob(
                        name=name,
                        iops=jobs[name][0],
                        bw_kib_s=jobs[name][1],
                        share_percent=jobs[name][0] / totals[name] * 100 if totals[name] else None,
                        error=jobs[name][2],
                    )
                    for name in job_order
                    if name in jobs
                ),
            )
        )
    return tuple(summaries)


def _client_skew(summaries: Sequence[FioClientSummary]) -> dict[str, float | None]:
    names: list[str] = []
    for summary in summaries:
        names.extend(job.name for job in summary.jobs if job.name not in names)
    return {
        name: skew_percent(
            [job.iops or 0.0 for summary in summaries for job in summary.jobs if job.name == name]
        )
        for name in names
    }


def _measured_latency(job: FioJobResult) -> bool:
    directions = [job.read, job.write, job.trim] + ([job.mixed] if job.mixed is not None else [])
    if any(d.clat_mean_us is not None or d.lat_mean_us is not None for d in directions):
        return True
    return job.sync is not None and job.sync.lat_mean_us is not None
