"""The steady-state guard: a job that asked fio for steady state and did not attain it.

fio's ``steadystate=`` stops a job as soon as its IOPS or bandwidth held still over the last
``ss_dur`` seconds (:mod:`kubectl_storage.core.fio.steady_state`). A job that ran to its
``runtime`` without fio finding it steady measured a rate that was still moving: warming up,
draining a burst allowance, throttled, or just noisy beyond the limit asked for. Its mean is
then the average of a trend, not the storage's speed, so the note is suspect
(``fio.not-steady``). A job that attained steady state gets an info note saying in how long
(``fio.steady``), so a reader sees it next to the numbers. A job that did not ask gets neither:
the built-in profiles without ``--until-steady`` are judged as before.

Pure module.
"""

from __future__ import annotations

from kubectl_storage.core.fio.notes import NOTE_NOT_STEADY, NOTE_STEADY, FioNote
from kubectl_storage.core.fio.results import FioJobResult
from kubectl_storage.core.fio.steady_state import FioSteadyState
from kubectl_storage.core.report.findings import Severity

_MEASURED = {
    "iops": "the largest distance of one second's IOPS from the mean",
    "bw": "the largest distance of one second's bandwidth from the mean",
    "iops_slope": "the IOPS slope",
    "bw_slope": "the bandwidth slope",
}


def steady_notes(job: FioJobResult) -> list[FioNote]:
    """``fio.not-steady`` (warn, suspect) or ``fio.steady`` (info) for a job that asked fio
    for steady state; nothing for one that did not, or that failed (its error says more)."""
    state = job.steady_state
    if state is None or job.error:
        return []
    if state.attained:
        return [
            FioNote(
                NOTE_STEADY,
                Severity.INFO,
                f"job {job.name}: steady: attained in {_seconds(state)} ({_asked(state)}; "
                f"measured {_value(state)}), and fio stopped it there",
                "",
                job.name,
            )
        ]
    return [
        FioNote(
            NOTE_NOT_STEADY,
            Severity.WARN,
            f"job {job.name}: steady: not attained in {_seconds(state)} ({_asked(state)}; "
            f"the last window measured {_value(state)}): its numbers average a rate that was "
            "still changing",
            "run it longer (with --until-steady, --runtime is the maximum), or read the "
            "per-second values in the job's raw steadystate.data; a rate that never settles "
            "(burst credits running out, throttling, garbage collection) is a finding in itself",
            job.name,
            f"{job.name}: not steady",
        )
    ]


def _asked(state: FioSteadyState) -> str:
    ramp = "" if not state.ramp_s else f" after {state.ramp_s:g} s"
    return f"{state.request} over {state.duration_s} s{ramp}"


def _seconds(state: FioSteadyState) -> str:
    return f"{state.runtime_ms / 1000:.1f} s"


def _value(state: FioSteadyState) -> str:
    what = _MEASURED.get(state.criterion, state.criterion)
    if state.value is None:
        return f"{what}: not reported"
    unit = "% of the mean" if state.limit_percent else ""
    return f"{what} {state.value:.3g}{unit}"
