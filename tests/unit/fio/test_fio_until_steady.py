"""``--until-steady``: fio's steady-state options rendered into the built-in profiles."""

from __future__ import annotations

import subprocess

import pytest

from kubectl_storage.core.fio.job_sizes import FioJobError
from kubectl_storage.core.fio.profile_render import PREFILL_JOB_NAME, render_profile
from kubectl_storage.core.fio.profiles import PROFILES
from kubectl_storage.core.fio.until_steady import DEFAULT_MAX_RUNTIME_S, steady_options

STEADY_LINES = "steadystate=iops_slope:1%\nss_dur=10s\nss_ramp=5s\n"


def _sections(text: str) -> dict[str, str]:
    sections: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("["):
            name = line.strip("[]")
            sections[name] = ""
        elif name:
            sections[name] += line + "\n"
    return sections


@pytest.mark.parametrize("profile", ["default", "quick", "database"])
def test_every_timed_job_gets_the_options_and_the_maximum_runtime(profile: str) -> None:
    sections = _sections(render_profile(profile, until_steady=True))

    jobs = [name for name in sections if name != "global"]
    assert jobs == [job.name for job in PROFILES[profile].jobs]
    assert all(STEADY_LINES in sections[name] for name in jobs)
    assert f"runtime={DEFAULT_MAX_RUNTIME_S}\n" in sections["global"]
    assert "steadystate" not in sections["global"]


@pytest.mark.parametrize("profile", list(PROFILES))
def test_off_by_default_so_no_profile_changes(profile: str) -> None:
    assert render_profile(profile) == render_profile(profile, until_steady=False)
    assert "steadystate" not in render_profile(profile)
    assert "ss_dur" not in render_profile(profile)


def test_runtime_is_the_maximum() -> None:
    text = render_profile("quick", until_steady=True, runtime_s=60)
    assert "runtime=60\n" in text
    assert text.count("steadystate=") == 2


def test_runtime_shorter_than_the_window_is_refused() -> None:
    with pytest.raises(FioJobError, match="no full steady-state window"):
        render_profile("quick", until_steady=True, runtime_s=10)
    assert "runtime=16" in render_profile("quick", until_steady=True, runtime_s=16)


@pytest.mark.parametrize("profile", ["kubestr", "etcd"])
def test_profiles_it_does_not_apply_to_are_refused(profile: str) -> None:
    with pytest.raises(FioJobError, match=f"does not apply to the {profile} profile"):
        render_profile(profile, until_steady=True)


def test_the_block_prefill_is_never_stopped_early() -> None:
    text = render_profile(
        "quick", until_steady=True, directory=None, filename="/dev/x", prefill=True
    )
    sections = _sections(text)
    assert "steadystate" not in sections[PREFILL_JOB_NAME]
    assert STEADY_LINES in sections["read_iops"]


def test_options_are_the_documented_ones() -> None:
    assert steady_options() == (
        ("steadystate", "iops_slope:1%"),
        ("ss_dur", "10s"),
        ("ss_ramp", "5s"),
    )


@pytest.mark.parametrize("profile", ["default", "quick", "database"])
def test_fio_parses_the_rendered_job_file(profile: str, tmp_path, fio: str) -> None:
    job = tmp_path / "job.fio"
    job.write_text(render_profile(profile, until_steady=True, directory=str(tmp_path)))

    proc = subprocess.run(
        [fio, "--parse-only", str(job)], capture_output=True, text=True, check=False
    )

    assert proc.returncode == 0, proc.stderr
