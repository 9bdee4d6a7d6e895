"""The verdict model (core/report/verdict.py) and the one place it becomes the exit code
(cli/finish.py), with each rule of issue 28 on the report it concerns.

The persistence cases are built from the same recorded pieces as
tests/unit/persistence/test_persistence_checks.py (rows the writer generated, MariaDB's real SHOW
VARIABLES output, fio's real output of the etcd probe on ext4 and on a tmpfs under
tests/fixtures/fio).
"""

from __future__ import annotations

import dataclasses

import pytest

from kubectl_storage.cli.finish import exit_code, finish
from kubectl_storage.core.cleanup import CleanupReport, Leftover
from kubectl_storage.core.report.envelope import report_envelope
from kubectl_storage.core.report.findings import FailOn, Finding, Severity
from kubectl_storage.core.report.verdict import (
    PASSED,
    Outcome,
    Verdict,
    findings_outcome,
    judge,
)
from kubectl_storage.core.validate_persistence.mysql import VolumeType
from kubectl_storage.core.validate_persistence.probe import parse_probe
from kubectl_storage.core.validate_persistence.report import (
    ControlScope,
    DurabilityCheck,
    PhaseResult,
)
from kubectl_storage.errors import FindingsError
from kubectl_storage.exit_codes import ExitCode
from kubectl_storage.render.validate_persistence import verdict_line
from tests.unit.persistence.test_persistence_checks import (
    FIXTURES,
    _fio,
    _phases,
    _report,
    _settings,
)
from tests.unit.snapshot.test_snapshot import changed, check_report, sums

# --------------------------------------------------------------------------------------------
# The exit code: one table


@pytest.mark.parametrize(
    ("verdict", "fail_on", "code"),
    [
        (Verdict.PASS, FailOn.ERROR, ExitCode.OK),
        (Verdict.SKIPPED, FailOn.ERROR, ExitCode.OK),
        (Verdict.WARN, FailOn.ERROR, ExitCode.OK),
        (Verdict.WARN, FailOn.WARN, ExitCode.FINDINGS),
        (Verdict.PASS, FailOn.WARN, ExitCode.OK),
        (Verdict.INCONCLUSIVE, FailOn.ERROR, ExitCode.FINDINGS),
        (Verdict.FAIL, FailOn.ERROR, ExitCode.FINDINGS),
        (Verdict.FAIL, FailOn.WARN, ExitCode.FINDINGS),
    ],
)
def test_the_exit_code_of_each_verdict(verdict: Verdict, fail_on: FailOn, code: ExitCode) -> None:
    assert exit_code(verdict, fail_on) is code
    if code is ExitCode.OK:
        finish(Outcome(verdict, ("r",)), fail_on=fail_on)  # returns
    else:
        with pytest.raises(FindingsError, match=f"^{verdict.value}: r$") as raised:
            finish(Outcome(verdict, ("r",)), fail_on=fail_on)
        assert raised.value.exit_code is ExitCode.FINDINGS


def test_judge_takes_the_worst_reason() -> None:
    assert judge() == PASSED
    assert judge(warn=["w", "w"], inconclusive=["i"]) == Outcome(Verdict.INCONCLUSIVE, ("i",))
    assert judge(fail=["f"], warn=["w"]) == Outcome(Verdict.FAIL, ("f",))


def test_every_report_carries_its_verdict_after_its_kind() -> None:
    document = report_envelope("X", Outcome(Verdict.WARN, ("fio.dataset-small",)), {"a": 1})
    assert list(document) == ["apiVersion", "kind", "verdict", "reasons", "a"]
    assert document["reasons"] == ["fio.dataset-small"]


# --------------------------------------------------------------------------------------------
# validate-persistence


def test_a_run_that_tested_nothing_is_inconclusive() -> None:
    seed, _ = _phases()
    report = _report(phases=(seed, PhaseResult("reschedule", Verdict.SKIPPED, note="one node")))
    assert report.outcome == Outcome(Verdict.INCONCLUSIVE, ("nothing-tested",))
    assert exit_code(report.outcome.verdict) is ExitCode.FINDINGS
    assert verdict_line(report) == (
        "INCONCLUSIVE: no disruption could run on StorageClass fast, so nothing was tested"
    )


def test_a_phase_that_timed_out_is_unavailable_not_lost() -> None:
    seed, _ = _phases()
    timed_out = PhaseResult(
        "reschedule",
        Verdict.INCONCLUSIVE,
        note="unavailable within --timeout: MySQL in pod p did not answer within 300s",
    )
    report = _report(phases=(seed, timed_out))
    assert report.outcome == Outcome(Verdict.INCONCLUSIVE, ("unavailable:reschedule",))
    assert report.failed_phases == []
    assert not timed_out.lost_data
    line = verdict_line(report)
    assert line.startswith("INCONCLUSIVE: MySQL did not answer within --timeout after reschedule")
    assert "lost" not in line


def test_the_control_must_show_the_loss() -> None:
    seed, kept = _phases(VolumeType.EMPTY_DIR)
    restart = dataclasses.replace(kept, phase="restart")  # every row came back: no loss
    control = ControlScope(("restart",), ())
    report = _report(
        volume_type=VolumeType.EMPTY_DIR, phases=(seed, restart), control=control, durability=None
    )
    assert report.outcome == Outcome(Verdict.INCONCLUSIVE, ("control-invalid:restart",))
    assert verdict_line(report) == (
        "INCONCLUSIVE: the emptyDir control kept its data in restart: the check cannot be "
        "trusted to see a loss"
    )
    nothing = _report(
        volume_type=VolumeType.EMPTY_DIR,
        phases=(seed, PhaseResult("crash", Verdict.SKIPPED, note="a control cannot judge it")),
        durability=None,
    )
    assert nothing.outcome == Outcome(Verdict.INCONCLUSIVE, ("nothing-tested",))


def test_a_server_accepted_as_non_durable_never_passes() -> None:
    check = DurabilityCheck(_settings("2"), allowed_non_durable=True)
    report = _report(durability=check)
    assert report.disruptions_passed == ["reschedule"]  # the disruption itself kept the data
    assert report.outcome == Outcome(Verdict.FAIL, ("durability",))
    assert exit_code(report.outcome.verdict) is ExitCode.FINDINGS


def test_a_probe_that_acknowledges_at_memory_speed_undercuts_the_pass() -> None:
    ext4 = _report(fsync_probe=parse_probe(_fio("fio-3.33-etcd-profile-ext4.json")))
    assert ext4.outcome == PASSED
    tmpfs = _report(fsync_probe=parse_probe(_fio("fio-3.33-etcd-profile-tmpfs.json")))
    assert tmpfs.fsync_probe is not None
    assert tmpfs.fsync_probe.acknowledges_too_fast
    assert tmpfs.outcome == Outcome(Verdict.WARN, ("fsync-probe",))
    line = verdict_line(tmpfs)
    assert line.startswith("WARN: committed data survived reschedule on StorageClass fast, but ")
    assert "but the fsync probe found the volume memory-backed: fdatasync returns in 0.09" in line
    assert "a power loss loses what was acknowledged" in line
    assert line.endswith("tested: graceful move to another node; power loss not tested")


def _probe_capture(name: str) -> str:
    return (FIXTURES / "probe" / name).read_text()


def test_the_probes_three_classes_in_the_verdict() -> None:
    # Real probe output (validate-persistence's two fio jobs) on three media.
    tmpfs = _report(fsync_probe=parse_probe(_probe_capture("tmpfs.json")))
    assert tmpfs.outcome == Outcome(Verdict.WARN, ("fsync-probe",))
    assert "but the fsync probe found the volume memory-backed: direct writes complete in " in (
        verdict_line(tmpfs)
    )
    # A device that needs no flush is not memory and not a warning: the pass names it.
    through = _report(fsync_probe=parse_probe(_probe_capture("loop-write-through.json")))
    assert through.outcome == PASSED
    assert verdict_line(through).endswith(
        "; power loss not tested; fsync probe: acknowledged without a flush (unverified)"
    )
    back = _report(fsync_probe=parse_probe(_probe_capture("loop-write-back.json")))
    assert back.outcome == PASSED
    assert verdict_line(back).endswith("; power loss not tested")


def test_unreported_durability_settings_are_unknown_and_undercut_the_pass() -> None:
    # The same MariaDB settings without innodb_doublewrite (a server or proxy that does not
    # report it): nothing fails, nothing is known to be durable either.
    settings = _settings()
    unknown = dataclasses.replace(
        settings, innodb_doublewrite=None, durable=False, unknown=("innodb_doublewrite",)
    )
    report = _report(durability=DurabilityCheck(unknown))
    assert report.outcome == Outcome(Verdict.WARN, ("durability-unknown",))
    assert report.to_dict()["durability"]["state"] == "unknown"
    assert report.to_dict()["durability"]["durable"] is False
    assert verdict_line(report) == (
        "WARN: committed data survived reschedule on StorageClass fast, but the server did not "
        "report innodb_doublewrite, so its durability is unknown, not durable; tested: graceful "
        "move to another node; power loss not tested"
    )
    # The disruptions still run (only a reason stops them) ...
    assert not DurabilityCheck(unknown).failed
    # ... and the quiet case: everything reported and durable is a plain pass.
    assert _report().outcome == PASSED
    assert _report().to_dict()["durability"]["state"] == "durable"


def test_allow_non_durable_config_never_passes_even_when_the_setting_is_unreported() -> None:
    # No innodb_flush_log_at_trx_commit at all: not durable, and --allow-non-durable-config
    # only lets the disruptions run.
    from kubectl_storage.core.validate_persistence.durability import judge_durability

    settings = judge_durability({"table_engine": "InnoDB"})
    allowed = _report(durability=DurabilityCheck(settings, allowed_non_durable=True))
    assert allowed.outcome.verdict is Verdict.FAIL
    assert "durability" in allowed.outcome.reasons
    assert not DurabilityCheck(settings, allowed_non_durable=True).failed  # disruptions ran
    assert DurabilityCheck(settings).failed


def test_a_pass_says_what_it_did_not_test() -> None:
    assert verdict_line(_report()).endswith(
        "; tested: graceful move to another node; power loss not tested"
    )


# --------------------------------------------------------------------------------------------
# The other reports


def test_snapshot_check_outcome() -> None:
    assert check_report().outcome == PASSED
    void = dataclasses.replace(check_report(), setup_problems=("the writer wrote nothing",))
    assert void.outcome == Outcome(Verdict.INCONCLUSIVE, ("setup",))
    # a "snapshot" that followed the source: the changed files fail it, whatever else happened
    followed = check_report(dict(changed(sums())))
    assert followed.outcome.verdict is Verdict.FAIL
    assert followed.outcome.reasons
    assert all(reason.startswith("file:") for reason in followed.outcome.reasons)
    both = dataclasses.replace(followed, setup_problems=("the writer wrote nothing",))
    assert both.outcome == followed.outcome


def test_node_audits_fail_on_errors_and_warn_on_warnings() -> None:
    error = Finding("MP010", Severity.ERROR, "a failed path", "fix it")
    warn = Finding("NFS050", Severity.WARN, "noac", "drop it")
    info = Finding("MP003", Severity.INFO, "find_multipaths", "")
    assert findings_outcome([info]) == PASSED
    assert findings_outcome([info, warn]) == Outcome(Verdict.WARN, ("NFS050",))
    assert findings_outcome([warn, error]) == Outcome(Verdict.FAIL, ("MP010",))
    # a node that could not be inspected is not covered by the verdict, and it says so
    assert findings_outcome([], ["node-b"]) == Outcome(Verdict.WARN, ("not-inspected:node-b",))


def test_cleanup_fails_while_leftovers_remain() -> None:
    left = Leftover("Pod", "ns", "p", "run1", "fio", None)
    assert CleanupReport((), deleted=False).outcome == PASSED
    assert CleanupReport((left,), deleted=False).outcome == Outcome(Verdict.FAIL, ("leftovers",))
    assert CleanupReport((left,), deleted=True).outcome == PASSED
    gone_wrong = CleanupReport((left,), deleted=True, still_present=(left,))
    assert gone_wrong.outcome == Outcome(Verdict.FAIL, ("still-present",))
