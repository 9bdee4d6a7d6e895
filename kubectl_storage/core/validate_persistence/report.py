"""The PersistenceReport: each phase's outcome, the server's durability settings, the fsync probe
and, for the emptyDir control, what a control can and cannot judge; and the verdict of the
whole check (:attr:`PersistenceReport.outcome`). Standard library only."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.verdict import Outcome, Verdict, judge
from kubectl_storage.core.validate_persistence.durability import DurabilitySettings
from kubectl_storage.core.validate_persistence.external import SERVER_RESTARTED, Stall
from kubectl_storage.core.validate_persistence.mysql import VolumeType
from kubectl_storage.core.validate_persistence.probe import FsyncProbe
from kubectl_storage.core.validate_persistence.rows import DATABASE, TABLE, TableComparison
from kubectl_storage.core.validate_persistence.writer import CommitAccounting

#: The phases that judge what the writer acknowledged, and what each proved; a crash of
#: mysqld keeps the node's page cache, so nothing here says anything about a power loss.
TESTED_BY = {
    "restart": "graceful restart",
    "crash": "process kill (node page cache kept)",
    "reschedule": "graceful move to another node",
    "node-drain": "eviction to another node",
    "external": "external disruption (what was done is not known to the tool)",
    "node-crash": "node crash (sysrq b: the node's page cache lost)",
}
POWER_LOSS_NOT_TESTED = "power loss not tested"
#: When ``node-crash`` passed: the node lost its memory as at a power cut; the storage behind
#: it (an array's cache, a cloud disk) kept its power.
NODE_CRASH_TESTED = "the node's power loss tested (node crash); the storage's own not"
#: When ``external`` passed and the database restarted during it: what was done is the user's
#: word, so a power loss is named only as what it may have been.
EXTERNAL_RESTART_TESTED = (
    "an external disruption restarted the database (a power loss only if that is what was done)"
)


#: How many ids a report lists per category (the counts are always complete).
LISTED_IDS = 20


@dataclass(frozen=True)
class PhaseResult:
    """One phase: the seed, or a disruption followed by reading everything back.

    ``verdict`` is pass (every row and acknowledged commit back), fail (lost, or the data
    cannot follow the pod, or MySQL does not start again), inconclusive (MySQL did not answer
    within --timeout: nothing could be read, which is no proof of loss) or skipped.
    """

    phase: str  # "seed" or a Disruption value
    verdict: Verdict
    time_to_ready_s: float | None = None
    comparison: TableComparison | None = None
    commits: CommitAccounting | None = None
    writer_attempts: int | None = None
    node_before: str | None = None
    node_after: str | None = None
    note: str = ""
    #: Moves: seconds from the delete or eviction until the pod ran on another node.
    time_to_running_s: float | None = None
    #: Moves: what the scheduler, the attach/detach controller and the kubelet said.
    volume_events: tuple[str, ...] = ()
    #: Moves: the volume is pinned to the pod's node, so the data cannot follow the pod.
    cannot_follow: bool = False
    #: Moves: whether the volume's CSI driver attaches volumes (CSIDriver attachRequired);
    #: None when unknown or not a CSI volume.
    attach_required: bool | None = None
    #: External (and crash, where measured): the longest gap between acknowledged commits.
    stall: Stall | None = None
    #: UTC time the phase started (ISO 8601), to place the stall in time.
    started_at: str | None = None
    #: External: what showed that a disruption happened (empty: nothing was observed).
    observed: tuple[str, ...] | None = None

    @property
    def no_disruption(self) -> bool:
        """External: inconclusive because nothing happened to the database before --timeout."""
        return self.verdict is Verdict.INCONCLUSIVE and self.observed == ()

    @property
    def lost_data(self) -> bool:
        """Failed because rows were lost or did not come back (not only because the data
        could not follow the pod to another node)."""
        if self.verdict is not Verdict.FAIL:
            return False
        intact = self.comparison is not None and self.comparison.intact
        return not (self.cannot_follow and intact)

    def _stall_started_utc(self) -> str | None:
        """When the stall started, in UTC (the phase's start plus the stall's offset)."""
        if self.stall is None or self.started_at is None:
            return None
        at = datetime.datetime.fromisoformat(self.started_at)
        return (at + datetime.timedelta(seconds=self.stall.started_at_s)).isoformat(
            timespec="seconds"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (stable key order)."""
        out: dict[str, Any] = {"phase": self.phase, "verdict": self.verdict.value}
        out["time_to_ready_s"] = (
            round(self.time_to_ready_s, 1) if self.time_to_ready_s is not None else None
        )
        c = self.comparison
        out["rows_expected"] = c.rows_expected if c else None
        out["rows_found"] = c.rows_found if c else None
        out["checksum_match"] = c.checksum_match if c else None
        if c:
            out["checksum_expected"] = c.checksum_expected
            out["checksum_found"] = c.checksum_found
            out["rows_missing"] = len(c.missing_ids)
            out["rows_changed"] = len(c.changed_ids)
            out["rows_unexpected"] = len(c.unexpected_ids)
            out["missing_ids"] = list(c.missing_ids[:LISTED_IDS])
            out["changed_ids"] = list(c.changed_ids[:LISTED_IDS])
            out["unexpected_ids"] = list(c.unexpected_ids[:LISTED_IDS])
            out["table_missing"] = c.table_missing
        if self.commits is not None:
            k = self.commits
            out["commits"] = {
                "attempted": self.writer_attempts,
                "acknowledged": k.acknowledged,
                "acknowledged_present": k.acknowledged_present,
                "acknowledged_lost": len(k.lost_ids),
                "lost_ids": list(k.lost_ids[:LISTED_IDS]),
                "in_flight": k.in_flight_seq is not None,
                "in_flight_present": k.in_flight_present,
            }
        out["node_before"] = self.node_before
        out["node_after"] = self.node_after
        out["note"] = self.note
        out["time_to_running_s"] = (
            round(self.time_to_running_s, 1) if self.time_to_running_s is not None else None
        )
        out["volume_events"] = list(self.volume_events)
        out["data_cannot_follow"] = self.cannot_follow
        out["attach_required"] = self.attach_required
        out["started_at"] = self.started_at
        out["stall"] = self.stall.to_dict(self._stall_started_utc()) if self.stall else None
        out["disruption_observed"] = list(self.observed) if self.observed is not None else None
        return out


def evaluate_phase(
    phase: str,
    comparison: TableComparison,
    *,
    time_to_ready_s: float | None,
    commits: CommitAccounting | None = None,
    writer_attempts: int | None = None,
    node_before: str | None = None,
    node_after: str | None = None,
    note: str = "",
    time_to_running_s: float | None = None,
    volume_events: tuple[str, ...] = (),
    attach_required: bool | None = None,
    stall: Stall | None = None,
    started_at: str | None = None,
    observed: tuple[str, ...] | None = None,
) -> PhaseResult:
    """A phase passes when every expected row and every acknowledged commit came back intact;
    an ``external`` phase in which nothing was observed (``observed == ()``) is inconclusive
    unless something was lost (a loss is a loss, whatever caused it)."""
    ok = comparison.intact and (commits is None or commits.ok)
    if not ok:
        loss = describe_loss(comparison, commits)
        note = f"{loss}; {note}" if note else loss
    verdict = Verdict.PASS if ok else Verdict.FAIL
    if ok and observed == ():
        verdict = Verdict.INCONCLUSIVE
        nothing = "no disruption observed before --timeout: nothing was proven"
        note = f"{nothing}; {note}" if note else nothing
    return PhaseResult(
        phase=phase,
        verdict=verdict,
        time_to_ready_s=time_to_ready_s,
        comparison=comparison,
        commits=commits,
        writer_attempts=writer_attempts,
        node_before=node_before,
        node_after=node_after,
        note=note,
        time_to_running_s=time_to_running_s,
        volume_events=volume_events,
        attach_required=attach_required,
        stall=stall,
        started_at=started_at,
        observed=observed,
    )


def describe_loss(comparison: TableComparison, commits: CommitAccounting | None) -> str:
    """What went wrong, in words ('' when nothing did)."""
    parts = []
    if comparison.table_missing:
        parts.append(f"table {DATABASE}.{TABLE} is gone")
    if comparison.missing_ids:
        parts.append(
            f"{len(comparison.missing_ids):,} of {comparison.rows_expected:,} rows missing"
        )
    if comparison.changed_ids:
        parts.append(f"{len(comparison.changed_ids):,} rows changed")
    if comparison.unexpected_ids:
        parts.append(f"{len(comparison.unexpected_ids):,} rows nobody committed")
    if commits is not None and commits.lost_ids:
        parts.append(f"{len(commits.lost_ids)} of {commits.acknowledged} acknowledged commits lost")
    if not parts and not comparison.checksum_match:
        parts.append("checksum differs")
    return "; ".join(parts)


@dataclass(frozen=True)
class DurabilityCheck:
    """The server's durability settings as read after it started, and whether the user accepted
    a configuration that does not make a commit durable (``--allow-non-durable-config``)."""

    settings: DurabilitySettings
    allowed_non_durable: bool = False
    #: What the server was started with (``--server-arg``), for the reader of the report.
    server_args: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Not durable (a reason, not merely unknown), and not accepted on purpose: the
        disruptions do not run."""
        return bool(self.settings.reasons) and not self.allowed_non_durable

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (stable key order)."""
        return {
            "variables": self.settings.values(),
            "durable": self.settings.durable,
            "reasons": list(self.settings.reasons),
            "notes": list(self.settings.notes),
            "allowed_non_durable": self.allowed_non_durable,
            "server_args": list(self.server_args),
            "state": self.settings.state,
            "unknown": list(self.settings.unknown),
            "innodb_redo_log_enabled": self.settings.innodb_redo_log_enabled,
            "table_engine": self.settings.table_engine,
        }


@dataclass(frozen=True)
class ControlScope:
    """For the emptyDir control: which disruptions it judges and which it cannot."""

    #: Disruptions the control ran: each must show the loss of a pod-local volume.
    judged: tuple[str, ...]
    #: (disruption, why a control cannot judge it).
    cannot_judge: tuple[tuple[str, str], ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (stable key order)."""
        return {
            "judged": list(self.judged),
            "cannot_judge": [{"disruption": d, "reason": r} for d, r in self.cannot_judge],
        }


@dataclass(frozen=True)
class PersistenceReport:
    """The whole check: what ran where, and each phase."""

    storage_class: str | None
    volume_type: VolumeType
    size: str | None
    namespace: str
    image: str
    rows: int
    run_id: str
    phases: tuple[PhaseResult, ...]
    durability: DurabilityCheck | None = None
    fsync_probe: FsyncProbe | None = None
    control: ControlScope | None = None

    @property
    def outcome(self) -> Outcome:
        """The check's verdict and its reasons (phase names, ``durability``, ...).

        - fail: a phase lost data (the phase's name), its data cannot follow the pod
          (``cannot-follow:<phase>``), or the server is not configured to make a commit durable
          (``durability``; an unreported innodb_flush_log_at_trx_commit counts), also when that
          was accepted with --allow-non-durable-config: the flag only lets the disruptions run;
        - inconclusive: a phase did not answer within --timeout (``unavailable:<phase>``), an
          ``external`` phase saw no disruption before --timeout (``no-disruption:<phase>``), or
          no disruption ran (``nothing-tested``);
        - warn: it held, but the fsync probe found the volume memory-backed (``fsync-probe``:
          the writes themselves complete at memory speed, core.flush), or a durability setting
          that matters was not reported (``durability-unknown``);
        - for the emptyDir control (:meth:`_control_outcome`) what counts is that it lost data.
        """
        if self.volume_type is VolumeType.EMPTY_DIR:
            return self._control_outcome()
        fail = [p.phase for p in self.phases if p.lost_data]
        fail += [f"cannot-follow:{p.phase}" for p in self.phases if p.cannot_follow]
        if self.durability is not None and self.durability.settings.reasons:
            fail.append("durability")
        inconclusive = [
            f"no-disruption:{p.phase}" if p.no_disruption else f"unavailable:{p.phase}"
            for p in self.phases
            if p.verdict is Verdict.INCONCLUSIVE
        ]
        ran = [p for p in self.phases if p.phase != "seed" and p.verdict is not Verdict.SKIPPED]
        if not ran:
            inconclusive.append("nothing-tested")
        warn = (
            ["fsync-probe"] if self.fsync_probe and self.fsync_probe.acknowledges_too_fast else []
        )
        if self.durability is not None and self.durability.settings.state == "unknown":
            warn.append("durability-unknown")
        return judge(fail=fail, inconclusive=inconclusive, warn=warn)

    def warning_texts(self) -> list[str]:
        """The warn reasons of :attr:`outcome` in words, in its order (empty unless warn)."""
        outcome = self.outcome
        if outcome.verdict is not Verdict.WARN:
            return []
        texts = []
        for reason in outcome.reasons:
            flush = self.fsync_probe.flush if self.fsync_probe else None
            if reason == "fsync-probe" and flush is not None:
                texts.append(f"the fsync probe found the volume {flush.explanation()}")
            elif reason == "durability-unknown" and self.durability is not None:
                names = ", ".join(self.durability.settings.unknown)
                texts.append(
                    f"the server did not report {names}, so its durability is unknown, not durable"
                )
            else:
                texts.append(reason)
        return texts

    def _control_outcome(self) -> Outcome:
        """The emptyDir control exists to lose data: it passes when every disruption it can
        judge lost it, and is inconclusive (``control-invalid:<phase>``) when one kept it, since
        then the check itself cannot be trusted to see a loss."""
        judged = [p for p in self.phases if p.phase != "seed" and p.verdict is not Verdict.SKIPPED]
        kept = [f"control-invalid:{p.phase}" for p in judged if p.verdict is Verdict.PASS]
        unavailable = [
            f"unavailable:{p.phase}" for p in judged if p.verdict is Verdict.INCONCLUSIVE
        ]
        nothing = [] if judged else ["nothing-tested"]
        return judge(inconclusive=kept + unavailable + nothing)

    @property
    def disruptions_passed(self) -> list[str]:
        """The disruptions after which every row and acknowledged commit came back."""
        return [p.phase for p in self.phases if p.phase != "seed" and p.verdict is Verdict.PASS]

    @property
    def tested(self) -> str:
        """What the passed disruptions proved, and what none of them can."""
        proved = [TESTED_BY.get(name, name) for name in self.disruptions_passed]
        restarted = any(
            p.phase == "external"
            and p.verdict is Verdict.PASS
            and SERVER_RESTARTED in (p.observed or ())
            for p in self.phases
        )
        crashed = "node-crash" in self.disruptions_passed
        tail = (
            NODE_CRASH_TESTED
            if crashed
            else EXTERNAL_RESTART_TESTED
            if restarted
            else POWER_LOSS_NOT_TESTED
        )
        return f"tested: {', '.join(proved) or 'nothing'}; {tail}"

    @property
    def failed_phases(self) -> list[str]:
        """Names of the phases that lost data or did not come back."""
        return [p.phase for p in self.phases if p.lost_data]

    @property
    def unavailable_phases(self) -> list[str]:
        """Names of the phases after which MySQL did not answer within --timeout."""
        return [
            p.phase
            for p in self.phases
            if p.verdict is Verdict.INCONCLUSIVE and not p.no_disruption
        ]

    @property
    def no_disruption_phases(self) -> list[str]:
        """Names of the ``external`` phases in which no disruption was observed."""
        return [p.phase for p in self.phases if p.no_disruption]

    @property
    def cannot_follow(self) -> list[str]:
        """Names of the moves whose data could not follow the pod to another node."""
        return [p.phase for p in self.phases if p.cannot_follow]

    def to_dict(self) -> dict[str, Any]:
        """The PersistenceReport document (new sections after the existing keys)."""
        return report_envelope(
            "PersistenceReport",
            self.outcome,
            {
                "storage_class": self.storage_class,
                "volume_type": self.volume_type.value,
                "size": self.size,
                "namespace": self.namespace,
                "image": self.image,
                "rows": self.rows,
                "run_id": self.run_id,
                "phases": [p.to_dict() for p in self.phases],
                "durability": self.durability.to_dict() if self.durability else None,
                "fsync_probe": self.fsync_probe.to_dict() if self.fsync_probe else None,
                "control": self.control.to_dict() if self.control else None,
                # What the passed disruptions proved and what not, as the PASS line says it.
                "tested": self.tested,
            },
        )
