"""The steady-state guard on real fio-3.33 output (tests/fixtures/fio/SOURCES.md, issue 23 item 2).

The captures ran on a tmpfs, so the cache guards fire on them as well; the tests look at the
steady-state notes and at what they alone do to the confidence line.
"""

from __future__ import annotations

from pathlib import Path

from kubectl_storage.core.fio.fio_json import parse_fio_output
from kubectl_storage.core.fio.guards import run_notes
from kubectl_storage.core.fio.notes import (
    CONFIDENCE_TRUSTED,
    NOTE_NOT_STEADY,
    NOTE_STEADY,
    SUSPECT_NOTES,
    confidence,
)
from kubectl_storage.core.fio.stats import build_fio_report
from kubectl_storage.core.fio.steady_notes import steady_notes
from kubectl_storage.core.report.findings import Severity

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fio"
ATTAINED = "fio-3.33-steadystate-iops-attained-tmpfs.json"
NOT_ATTAINED = "fio-3.33-steadystate-iops-not-attained-tmpfs-json+.json"
SLOPE = "fio-3.33-steadystate-iops-slope-attained-tmpfs-json+.json"


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_not_attained_is_suspect_with_the_numbers() -> None:
    job = parse_fio_output(load(NOT_ATTAINED)).job("tight-read")

    notes = steady_notes(job)

    assert [note.id for note in notes] == [NOTE_NOT_STEADY]
    assert notes[0].severity is Severity.WARN
    assert NOTE_NOT_STEADY in SUSPECT_NOTES
    assert "not attained in 12.0 s" in notes[0].message
    assert "iops:0.0001% over 5 s after 2 s" in notes[0].message
    assert "0.03% of the mean" in notes[0].message
    assert confidence(notes) == "suspect: tight-read: not steady"


def test_attained_is_info_and_leaves_trusted_alone() -> None:
    job = parse_fio_output(load(ATTAINED)).job("steady-read")

    notes = steady_notes(job)

    assert [note.id for note in notes] == [NOTE_STEADY]
    assert notes[0].severity is Severity.INFO
    assert NOTE_STEADY not in SUSPECT_NOTES
    assert "steady: attained in 7.9 s" in notes[0].message
    assert confidence(notes) == CONFIDENCE_TRUSTED


def test_slope_message_names_the_slope() -> None:
    notes = steady_notes(parse_fio_output(load(SLOPE)).job("slope-read"))

    assert "attained in 5.0 s" in notes[0].message
    assert "the IOPS slope 0.05% of the mean" in notes[0].message


def test_run_notes_and_the_class_confidence() -> None:
    attained = run_notes(parse_fio_output(load(ATTAINED)))
    missed = run_notes(parse_fio_output(load(NOT_ATTAINED)))

    assert NOTE_STEADY in [note.id for note in attained]
    assert NOTE_NOT_STEADY not in [note.id for note in attained]
    assert NOTE_NOT_STEADY in [note.id for note in missed]
    report = build_fio_report(
        {"tmpfs": [parse_fio_output(load(NOT_ATTAINED))]}, profile="custom"
    ).to_dict()
    assert "tight-read: not steady" in report["results"][0]["confidence"]


def test_a_job_that_did_not_ask_gets_no_steady_note() -> None:
    # The quick profile as committed, on ext4 (trusted before and after this guard).
    result = parse_fio_output(load("fio-3.33-quick-profile-ext4.json"))

    notes = run_notes(result)

    assert all(steady_notes(job) == [] for job in result.jobs)
    assert not {NOTE_STEADY, NOTE_NOT_STEADY} & {note.id for note in notes}
    assert confidence(notes) == CONFIDENCE_TRUSTED


def test_quick_profile_until_steady_on_ext4_is_trusted_and_says_how_long() -> None:
    # The quick profile rendered with until_steady=True, run on ext4 (runtime=120, the maximum).
    result = parse_fio_output(load("fio-3.33-quick-profile-until-steady-ext4-json+.json"))

    notes = run_notes(result)

    assert [(note.id, note.job) for note in notes] == [
        (NOTE_STEADY, "read_iops"),
        (NOTE_STEADY, "write_iops"),
    ]
    assert "attained in 18.0 s" in notes[0].message
    assert "attained in 19.0 s" in notes[1].message
    assert confidence(notes) == CONFIDENCE_TRUSTED
