"""``--until-steady``: the fio options that end each timed job of a built-in profile as soon as
fio finds it steady, and which profiles they apply to.

fio's ``steadystate=<criterion>:<limit>`` with ``ss_dur`` and ``ss_ramp`` (fio(1), "Steady
state"; :mod:`kubectl_storage.core.fio.steady_state`) stops a job when its rate held still over
the last ``ss_dur`` seconds; ``runtime`` is then the most it may run. The choice here:

* ``iops_slope``: the least-squares slope of the per-second IOPS, fio's own example in its
  HOWTO (``iops_slope:0.1%``). A slope asks "is the rate still moving", not "is every second
  alike": a device with a steady mean but per-second jitter (a network volume) is steady by
  the slope and would never be by ``iops:N%``, which bounds every second's distance from the
  mean (the first capture for this feature, a 4k tmpfs read on a loaded machine, had seconds
  56.7% away from its mean for 30 s). Each built-in job has one block size, so its bandwidth
  is its IOPS times the block size and ``bw_slope`` would say the same.
* limit ``1%`` of the mean per second over ``ss_dur=10s``: the fitted line then moves by less
  than about 10% of the mean across the window, the size of drift this project treats as
  noise elsewhere (``--max-regression`` defaults to 10%).
* ``ss_ramp=5s``: after the profile's own ``ramp_time``, five more seconds before the window
  starts filling (fio-3.33's timings show the ramp counting from the end of ``ramp_time``), so
  a burst at the start (a cache filling, burst credits) is not the first window.
* the maximum ``runtime`` is :data:`DEFAULT_MAX_RUNTIME_S` (120 s) unless ``--runtime`` says
  otherwise; it has to leave room for ``ss_ramp`` + ``ss_dur`` and fio's one-second check.

A job fio found steady ends after about ``ss_ramp + ss_dur + 1`` = 16 s of measurement; one
that never settles runs to the maximum and gets the ``fio.not-steady`` note.

Pure module.
"""

from __future__ import annotations

STEADY_CRITERION = "iops_slope"
STEADY_LIMIT = "1%"
STEADY_DURATION_S = 10
STEADY_RAMP_S = 5
#: The most each job may run with ``--until-steady`` and no ``--runtime``.
DEFAULT_MAX_RUNTIME_S = 120
#: Profiles ``--until-steady`` does not apply to, and why.
NOT_STEADY_PROFILES: dict[str, str] = {
    "kubestr": "the kubestr profile reproduces kubestr's run exactly (15 s, four jobs at once) "
    "so that its numbers compare with kubestr's; stopping its jobs early would break that",
    "etcd": "the etcd profile's job is not timed: it ends after writing its 22 MiB, as etcd's "
    "disk check does, so there is no runtime to cut short",
}


def steady_options() -> tuple[tuple[str, str], ...]:
    """The options a timed job gets: ``steadystate``, ``ss_dur``, ``ss_ramp``."""
    return (
        ("steadystate", f"{STEADY_CRITERION}:{STEADY_LIMIT}"),
        ("ss_dur", f"{STEADY_DURATION_S}s"),
        ("ss_ramp", f"{STEADY_RAMP_S}s"),
    )


def shortest_max_runtime_s() -> int:
    """The smallest ``--runtime`` that leaves fio a full window: ss_ramp + ss_dur + 1."""
    return STEADY_RAMP_S + STEADY_DURATION_S + 1
