"""Snapshots without a cluster: the list model, class and size choices, the check's plan and
verdicts, the report and its rendering, manifests, listings, and safe extraction for cp.

The object shapes below are those the local test cluster returns (csi-hostpath-sc with
hostpath.csi.k8s.io, snapshot-controller v8): restoreSize is a plain byte count there.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kubectl_storage.core.k8s.labels import run_labels
from kubectl_storage.core.k8s.manifests import PodIdentity
from kubectl_storage.core.k8s.pod_defaults import TOOLBOX_IMAGE
from kubectl_storage.core.snapshot import check_plan as snap
from kubectl_storage.core.snapshot.check_plan import (
    ADDED,
    APPENDED,
    CHECK_FILES,
    DELETED,
    MODIFIED_IN_PLACE,
    FileStatus,
    check_size_problem,
    compare_restore,
    parse_checksums,
    plan_problems,
)
from kubectl_storage.core.snapshot.check_report import SnapshotCheckReport, StepTiming
from kubectl_storage.core.snapshot.class_choice import (
    SnapshotChoiceError,
    check_snapshot_class,
    choose_restore_class,
    choose_restore_size,
    choose_snapshot_class,
)
from kubectl_storage.core.snapshot.copy import SnapshotCopy
from kubectl_storage.core.snapshot.listing import (
    build_listing_report,
    listing_command,
    parse_listing,
)
from kubectl_storage.core.snapshot.paths import parse_snapshot_ref, snapshot_path
from kubectl_storage.core.snapshot.snapshot_list import (
    SnapshotList,
    build_snapshot_list,
    format_age,
    snapshot_settled,
)
from kubectl_storage.errors import NotFoundError, UsageError
from kubectl_storage.operations import snapshot as ops
from kubectl_storage.operations.preflight import ClusterFacts, require_snapshot_api
from kubectl_storage.operations.snapshot import copy as snapshot_copy
from kubectl_storage.render.snapshot import (
    write_check_table,
    write_copy_table,
    write_listing_table,
    write_snapshot_list_table,
)
from tests.unit.classes.test_classes import make_snapshot_class, make_storage_class
from tests.unit.k8s.test_k8s_manifests import restricted_violations

NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
DRIVER = "hostpath.csi.k8s.io"


def make_snapshot(
    name: str = "data-snap",
    namespace: str = "db",
    *,
    pvc: str | None = "data",
    content: str | None = None,
    snapshot_class: str | None = "csi-hostpath-snapclass",
    ready: bool | None = True,
    restore_size: str | None = "17842333",
    bound: str | None = "snapcontent-1",
    created: str = "2026-11-29T11:55:00Z",
    error: str | None = None,
) -> dict[str, Any]:
    source = {"persistentVolumeClaimName": pvc} if pvc else {"volumeSnapshotContentName": content}
    spec: dict[str, Any] = {"source": source}
    if snapshot_class:
        spec["volumeSnapshotClassName"] = snapshot_class
    status: dict[str, Any] = {"creationTime": created}
    if ready is not None:
        status["readyToUse"] = ready
    if restore_size:
        status["restoreSize"] = restore_size
    if bound:
        status["boundVolumeSnapshotContentName"] = bound
    if error:
        status["error"] = {"message": error, "time": created}
    return {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshot",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
        "spec": spec,
        "status": status,
    }


def make_content(
    name: str = "snapcontent-1",
    driver: str = DRIVER,
    snapshot_class: str | None = "csi-hostpath-snapclass",
    **status: Any,
) -> dict:
    spec: dict[str, Any] = {
        "driver": driver,
        "deletionPolicy": "Delete",
        "source": {"volumeHandle": "pvc-1"},
    }
    if snapshot_class:
        spec["volumeSnapshotClassName"] = snapshot_class
    return {
        "metadata": {"name": name},
        "spec": spec,
        "status": {"readyToUse": True, "snapshotHandle": f"snapshot-{name}", **status},
    }


def make_pvc(
    name: str = "data", namespace: str = "db", storage_class: str = "csi-hostpath-sc"
) -> dict:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"storageClassName": storage_class, "resources": {"requests": {"storage": "5Gi"}}},
        "status": {"phase": "Bound", "capacity": {"storage": "5Gi"}},
    }


def sample_list(namespace: str | None = "db") -> SnapshotList:
    snapshots = [
        make_snapshot(),
        make_snapshot("orphan-snap", pvc="deleted-pvc", bound="snapcontent-2", restore_size=None),
        make_snapshot(
            "imported",
            pvc=None,
            content="imported-content",
            snapshot_class=None,
            bound="imported-content",
            restore_size=None,
            created="2026-11-20T08:00:00Z",
        ),
        make_snapshot(
            "broken",
            ready=False,
            restore_size=None,
            bound=None,
            error="Failed to create snapshot: source volume pvc-9 not found",
            created="2026-11-29T11:59:30Z",
        ),
    ]
    if namespace is None:
        snapshots.append(make_snapshot("web-snap", "web", pvc="html", bound="snapcontent-3"))
    contents = [
        make_content(),
        make_content("snapcontent-2", restoreSize=1073741824),
        make_content("imported-content", driver="ebs.csi.aws.com", snapshot_class=None),
        make_content("snapcontent-3"),
    ]
    pvcs = [make_pvc(), make_pvc("html", "web")]
    return build_snapshot_list(
        snapshots,
        contents,
        [make_snapshot_class("csi-hostpath-snapclass")],
        now=NOW,
        namespace=namespace,
        pvcs=pvcs,
    )


# -- the list ---------------------------------------------------------------------------------


def test_list_fields_per_snapshot() -> None:
    report = sample_list().to_dict()
    assert (report["apiVersion"], report["kind"]) == ("kubectl-storage/v1alpha1", "SnapshotList")
    by_name = {s["name"]: s for s in report["snapshots"]}
    assert list(by_name) == ["broken", "data-snap", "imported", "orphan-snap"]  # sorted
    data = by_name["data-snap"]
    assert data["sourcePvc"] == "data"
    assert data["sourcePvcPresent"] is True
    assert data["driver"] == DRIVER
    assert data["readyToUse"] is True
    assert data["restoreSize"] == "17842333"
    assert data["restoreSizeBytes"] == 17842333
    assert data["boundContent"] == "snapcontent-1"
    assert data["snapshotHandle"] == "snapshot-snapcontent-1"
    assert data["ageSeconds"] == 300
    orphan = by_name["orphan-snap"]
    assert orphan["sourcePvcPresent"] is False
    assert orphan["restoreSize"] == "1073741824"  # from the content when the snapshot has none
    imported = by_name["imported"]
    assert imported["sourcePvc"] is None
    assert imported["sourceContent"] == "imported-content"
    assert imported["driver"] == "ebs.csi.aws.com"
    assert imported["snapshotClass"] is None
    broken = by_name["broken"]
    assert broken["readyToUse"] is False
    assert broken["driver"] == DRIVER  # from the class: no content bound yet
    assert "source volume pvc-9 not found" in broken["error"]


def test_list_without_pvc_access_leaves_presence_unknown() -> None:
    report = build_snapshot_list([make_snapshot()], [], [], now=NOW, namespace="db").to_dict()
    entry = report["snapshots"][0]
    assert entry["sourcePvcPresent"] is None
    assert entry["driver"] is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (5, "5s"),
        (119, "119s"),
        (300, "5m"),
        (330, "5m30s"),
        (3000, "50m"),
        (4 * 3600 + 120, "4h2m"),
        (20 * 3600, "20h"),
        (3 * 86400 + 3600, "3d1h"),
        (30 * 86400, "30d"),
    ],
)
def test_format_age_like_kubectl(seconds: int | None, text: str) -> None:
    assert format_age(seconds) == text


def test_list_table_golden(golden) -> None:
    out = io.StringIO()
    write_snapshot_list_table(sample_list(), out)
    golden("snapshot-list.txt", out.getvalue())


def test_list_table_all_namespaces_wide_golden(golden) -> None:
    out = io.StringIO()
    write_snapshot_list_table(sample_list(None), out, wide=True)
    golden("snapshot-list-all-wide.txt", out.getvalue())


def test_empty_list_says_where() -> None:
    out = io.StringIO()
    empty = build_snapshot_list([], [], [], now=NOW, namespace="db")
    write_snapshot_list_table(empty, out)
    assert out.getvalue() == "No VolumeSnapshots found in namespace db.\n"


# -- snapshot class ---------------------------------------------------------------------------


def test_snapshot_class_from_the_provisioner() -> None:
    sc = make_storage_class("fast", DRIVER)
    classes = [make_snapshot_class("other", "ebs.csi.aws.com"), make_snapshot_class("hp", DRIVER)]
    assert choose_snapshot_class(sc, classes) == "hp"


def test_default_snapshot_class_wins_among_several() -> None:
    sc = make_storage_class("fast", DRIVER)
    classes = [
        make_snapshot_class("a", DRIVER),
        make_snapshot_class("b", DRIVER, default=True),
        make_snapshot_class("c", DRIVER),
    ]
    assert choose_snapshot_class(sc, classes) == "b"


@pytest.mark.parametrize(
    ("defaults", "said"), [((False, False), "none is"), ((True, True), "2 are")]
)
def test_several_snapshot_classes_without_one_default(
    defaults: tuple[bool, bool], said: str
) -> None:
    sc = make_storage_class("fast", DRIVER)
    classes = [
        make_snapshot_class("a", DRIVER, default=defaults[0]),
        make_snapshot_class("b", DRIVER, default=defaults[1]),
    ]
    with pytest.raises(SnapshotChoiceError) as err:
        choose_snapshot_class(sc, classes)
    assert said in err.value.message
    assert "--snapshot-class" in err.value.hint


def test_class_without_snapshot_class() -> None:
    sc = make_storage_class("local-path", "rancher.io/local-path")
    with pytest.raises(SnapshotChoiceError) as err:
        choose_snapshot_class(sc, [make_snapshot_class("hp", DRIVER)])
    assert "StorageClass local-path cannot be snapshotted" in err.value.message
    assert "rancher.io/local-path" in err.value.message
    assert f"hp ({DRIVER})" in err.value.hint


def test_given_snapshot_class_must_exist_and_match() -> None:
    sc = make_storage_class("fast", DRIVER)
    classes = [make_snapshot_class("hp", DRIVER), make_snapshot_class("ebs", "ebs.csi.aws.com")]
    check_snapshot_class("hp", sc, classes)
    with pytest.raises(SnapshotChoiceError, match='"nope" does not exist'):
        check_snapshot_class("nope", sc, classes)
    with pytest.raises(SnapshotChoiceError, match=r"is for driver ebs\.csi\.aws\.com"):
        check_snapshot_class("ebs", sc, classes)


# -- restore class and size -------------------------------------------------------------------

CLASSES = [
    make_storage_class("csi-hostpath-sc", DRIVER, default=True),
    make_storage_class("local-path", "rancher.io/local-path"),
]


def test_restore_class_of_the_source_pvc() -> None:
    choice = choose_restore_class(
        snapshot_name="s", driver=DRIVER, source_pvc=make_pvc(), storage_classes=CLASSES
    )
    assert choice.name == "csi-hostpath-sc"
    assert "source PVC data" in choice.reason


def test_restore_class_from_the_driver_when_the_pvc_is_gone() -> None:
    choice = choose_restore_class(
        snapshot_name="s", driver=DRIVER, source_pvc=None, storage_classes=CLASSES
    )
    assert choice.name == "csi-hostpath-sc"
    assert "only StorageClass of driver" in choice.reason


def test_restore_class_ignores_a_source_pvc_of_another_driver() -> None:
    moved = make_pvc(storage_class="local-path")  # recreated under the same name elsewhere
    choice = choose_restore_class(
        snapshot_name="s", driver=DRIVER, source_pvc=moved, storage_classes=CLASSES
    )
    assert choice.name == "csi-hostpath-sc"


def test_restore_class_default_among_several_of_the_driver() -> None:
    classes = [
        make_storage_class("hp-a", DRIVER),
        make_storage_class("hp-b", DRIVER, default=True),
    ]
    choice = choose_restore_class(
        snapshot_name="s", driver=DRIVER, source_pvc=None, storage_classes=classes
    )
    assert choice.name == "hp-b"


def test_restore_class_ambiguous_or_unknown_needs_the_flag() -> None:
    classes = [make_storage_class("hp-a", DRIVER), make_storage_class("hp-b", DRIVER)]
    with pytest.raises(SnapshotChoiceError) as err:
        choose_restore_class(
            snapshot_name="s", driver=DRIVER, source_pvc=None, storage_classes=classes
        )
    assert "hp-a, hp-b" in err.value.message
    assert "--storage-class" in err.value.hint
    with pytest.raises(SnapshotChoiceError, match="no StorageClass provisions with driver"):
        choose_restore_class(
            snapshot_name="s", driver="x.csi", source_pvc=None, storage_classes=classes
        )
    with pytest.raises(SnapshotChoiceError) as err:
        choose_restore_class(snapshot_name="s", driver=None, source_pvc=None, storage_classes=[])
    assert "--storage-class" in err.value.hint


def test_given_restore_class_must_exist_and_fit_the_driver() -> None:
    choice = choose_restore_class(
        snapshot_name="s",
        driver=DRIVER,
        source_pvc=None,
        storage_classes=CLASSES,
        given="csi-hostpath-sc",
    )
    assert choice.reason == "given with --storage-class"
    with pytest.raises(SnapshotChoiceError, match="StorageClass nope does not exist"):
        choose_restore_class(
            snapshot_name="s", driver=DRIVER, source_pvc=None, storage_classes=CLASSES, given="nope"
        )
    with pytest.raises(SnapshotChoiceError) as err:
        choose_restore_class(
            snapshot_name="s",
            driver=DRIVER,
            source_pvc=None,
            storage_classes=CLASSES,
            given="local-path",
        )
    assert "classes of hostpath.csi.k8s.io: csi-hostpath-sc" in err.value.hint


def test_restore_size_order() -> None:
    with_size = make_snapshot(restore_size="2Gi")
    assert choose_restore_size(snapshot=with_size, content=None, source_pvc=None) == (
        "2Gi",
        "the snapshot's restoreSize",
    )
    bare = make_snapshot(restore_size=None)
    content = make_content(restoreSize=4096)
    assert choose_restore_size(snapshot=bare, content=content, source_pvc=None)[0] == "4096"
    size, reason = choose_restore_size(snapshot=bare, content=None, source_pvc=make_pvc())
    assert (size, reason) == ("5Gi", "the capacity of source PVC data")
    assert choose_restore_size(snapshot=with_size, content=None, source_pvc=None, given="3Gi") == (
        "3Gi",
        "given with --size",
    )


def test_restore_size_refusals() -> None:
    with pytest.raises(SnapshotChoiceError) as err:
        choose_restore_size(
            snapshot=make_snapshot(restore_size=None), content=None, source_pvc=None
        )
    assert "--size" in err.value.hint
    with pytest.raises(SnapshotChoiceError, match="smaller than snapshot data-snap's restoreSize"):
        choose_restore_size(
            snapshot=make_snapshot(restore_size="17842333"),
            content=None,
            source_pvc=None,
            given="10Mi",
        )
    with pytest.raises(SnapshotChoiceError, match="has no unit"):
        choose_restore_size(snapshot=make_snapshot(), content=None, source_pvc=None, given="5")


# -- paths and listings -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "in_pod"),
    [
        ("", "/snapshot"),
        ("/", "/snapshot"),
        ("var/log", "/snapshot/var/log"),
        ("/var/log/", "/snapshot/var/log"),
        ("a/../b", "/snapshot/b"),
    ],
)
def test_paths_are_inside_the_snapshot(given: str, in_pod: str) -> None:
    assert snapshot_path(given) == in_pod


@pytest.mark.parametrize("escape", ["..", "../etc", "a/../../etc"])
def test_paths_cannot_leave_the_snapshot(escape: str) -> None:
    with pytest.raises(ValueError, match="outside the snapshot"):
        snapshot_path(escape)


def test_snapshot_refs() -> None:
    assert parse_snapshot_ref("snap:/etc/app.conf") == ("snap", "/etc/app.conf")
    assert parse_snapshot_ref("snap:") == ("snap", "")
    assert parse_snapshot_ref("snap:a:b") == ("snap", "a:b")
    for bad in ("snap", ":/etc"):
        with pytest.raises(ValueError, match="SNAPSHOT:PATH"):
            parse_snapshot_ref(bad)


#: find -printf output as the toolbox pod prints it (fields NUL-terminated).
LISTING_TEXT = "\0".join(
    [
        "d", "2755", "4096", "1795980837.0", "toolbox", "toolbox", "", "etc",
        "f", "640", "6", "1795980837.5", "toolbox", "toolbox", "", "etc/app.conf",
        "l", "777", "11", "1795980837.0", "toolbox", "toolbox", "/etc/passwd", "abs-link",
        "f", "755", "300000", "1795980837.0", "1001", "toolbox", "", "big.bin",
    ]
) + "\0"  # fmt: skip


def test_listing_parsed_and_rendered(golden) -> None:
    entries = parse_listing(LISTING_TEXT)
    assert [e.path for e in entries] == ["abs-link", "big.bin", "etc", "etc/app.conf"]
    assert entries[2].mode_text == "drwxr-sr-x"
    assert entries[0].link_target == "/etc/passwd"
    report = build_listing_report("data-snap", "", entries, recursive=True)
    document = report.to_dict()
    assert document["kind"] == "SnapshotListing"
    assert document["path"] == "/"
    assert document["entries"][3] == {
        "path": "etc/app.conf",
        "type": "file",
        "mode": "0640",
        "sizeBytes": 6,
        "modified": "2026-11-29T19:33:57Z",
        "user": "toolbox",
        "group": "toolbox",
        "linkTarget": None,
    }
    out = io.StringIO()
    write_listing_table(report, out)
    golden("snapshot-listing.txt", out.getvalue())


def test_listing_command_runs_here(tmp_path: Path) -> None:
    """The script the pod runs, run by the local shell and find (GNU findutils)."""
    if shutil.which("find") is None:
        pytest.skip("no find here")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.txt").write_text("hi")
    (tmp_path / "top").write_text("x")
    command = listing_command(str(tmp_path), recursive=True)
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert [e.path for e in parse_listing(out)] == ["d", "d/f.txt", "top"]
    one = listing_command(str(tmp_path / "top"), recursive=False)
    out = subprocess.run(one, capture_output=True, text=True, check=True).stdout
    assert [(e.path, e.size_bytes) for e in parse_listing(out)] == [("top", 1)]
    missing = subprocess.run(
        listing_command(str(tmp_path / "nope"), recursive=False), capture_output=True
    )
    assert missing.returncode == 3


# -- the check --------------------------------------------------------------------------------


def test_size_must_hold_the_files() -> None:
    assert check_size_problem(1024**3) is None
    problem = check_size_problem(10 * 1024**2)
    assert problem is not None
    assert "at least 64Mi" in problem


def sums(*drop: str) -> dict[str, str]:
    """Checksums of the known files at snapshot time (fake but distinct), without ``drop``."""
    base = {f.path: f"{i:064x}" for i, f in enumerate(CHECK_FILES, start=1) if f.path not in drop}
    base["empty.bin"] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    return base


def changed(at_snapshot: dict[str, str]) -> dict[str, str]:
    after = dict(at_snapshot)
    after[MODIFIED_IN_PLACE] = "a" * 64
    after[APPENDED] = "b" * 64
    del after[DELETED]
    after[ADDED.path] = "c" * 64
    return after


def test_clean_restore_passes() -> None:
    at = sums()
    verdicts = compare_restore(at, changed(at), dict(at))
    assert {v.status for v in verdicts} == {FileStatus.OK, FileStatus.ABSENT}
    absent = [v.path for v in verdicts if v.status is FileStatus.ABSENT]
    assert absent == [ADDED.path]
    assert plan_problems(at, changed(at)) == []


def test_restore_with_later_content_missing_and_extra_files_fails() -> None:
    at = sums()
    after = changed(at)
    restored = dict(at)
    restored[MODIFIED_IN_PLACE] = after[MODIFIED_IN_PLACE]  # the snapshot saw the later write
    del restored["tiny.txt"]
    restored[ADDED.path] = after[ADDED.path]
    restored["dir/nested/large-16m.bin"] = "d" * 64
    restored["stray"] = "e" * 64
    by_path = {v.path: v for v in compare_restore(at, after, restored)}
    assert by_path[MODIFIED_IN_PLACE].status is FileStatus.LATER_CONTENT
    assert by_path["tiny.txt"].status is FileStatus.MISSING
    assert by_path[ADDED.path].status is FileStatus.LATER_FILE
    assert by_path["dir/nested/large-16m.bin"].status is FileStatus.DIFFERS
    assert by_path["stray"].status is FileStatus.UNEXPECTED
    assert by_path[DELETED].status is FileStatus.OK  # deleted later, still in the snapshot
    assert by_path[MODIFIED_IN_PLACE].problem == (
        "medium-1m.bin holds the content written after the snapshot"
    )


def test_a_change_that_did_not_happen_voids_the_check() -> None:
    at = sums()
    problems = plan_problems(at, dict(at))
    assert f"the change after the snapshot did not modify {MODIFIED_IN_PLACE}" in problems
    assert f"the change after the snapshot did not delete {DELETED}" in problems
    assert f"the change after the snapshot did not add {ADDED.path}" in problems
    assert plan_problems(sums("tiny.txt"), changed(sums())) == [
        "the writer pod did not write tiny.txt"
    ]


def test_checksums_parsed() -> None:
    text = (
        f"{'a' * 64}  ./empty.bin\n"
        f"{'B' * 64}  ./dir/nested/large-16m.bin\n"
        f"\\{'c' * 64}  ./odd\\nname\n"
        "sha256sum: ./unreadable: Permission denied\n"
    )
    assert parse_checksums(text) == {
        "empty.bin": "a" * 64,
        "dir/nested/large-16m.bin": "b" * 64,
        "odd\nname": "c" * 64,
    }


def test_scripts_run_here_and_a_copy_taken_before_the_change_passes(tmp_path: Path) -> None:
    """write → copy (the "snapshot") → change → compare, with the local shell and coreutils."""
    for tool in ("sha256sum", "dd", "head", "xargs"):
        if shutil.which(tool) is None:
            pytest.skip(f"no {tool} here")
    source, copy = tmp_path / "source", tmp_path / "copy"
    source.mkdir()

    def run(script: str) -> str:
        return subprocess.run(
            ["sh", "-c", script], capture_output=True, text=True, check=True
        ).stdout

    at = parse_checksums(run(snap.write_script(str(source))))
    assert set(at) == {f.path for f in CHECK_FILES}
    assert (source / "dir/nested/large-16m.bin").stat().st_size == 16 * 1024 * 1024
    shutil.copytree(source, copy)
    after = parse_checksums(run(snap.change_script(str(source))))
    assert plan_problems(at, after) == []
    restored = parse_checksums(run(snap.checksum_script(str(copy))))
    assert [v.problem for v in compare_restore(at, after, restored) if v.problem] == []
    later = parse_checksums(run(snap.checksum_script(str(source))))
    problems = [v.problem for v in compare_restore(at, after, later) if v.problem]
    assert len(problems) == 4  # modified, appended, deleted (missing), added


def check_report(restored: dict[str, str] | None = None) -> SnapshotCheckReport:
    at = sums()
    after = changed(at)
    return SnapshotCheckReport(
        storage_class="csi-hostpath-sc",
        snapshot_class="csi-hostpath-snapclass",
        driver=DRIVER,
        namespace="default",
        size="1Gi",
        snapshot="ks-snapshot-check-abcd1234",
        restore_size="17842333",
        restore_storage_class="csi-hostpath-sc",
        run_id="abcd1234",
        steps=(
            StepTiming("provision source volume", 1.42),
            StepTiming("write known files", 1.4),
            StepTiming("take snapshot", 1.03),
            StepTiming("change source", 0.4),
            StepTiming("restore snapshot", 2.3),
            StepTiming("verify restore", 0.3),
        ),
        files=compare_restore(at, after, dict(at) if restored is None else restored),
        changes=tuple(snap.describe_change()),
    )


def test_report_contract() -> None:
    report = check_report().to_dict()
    assert list(report)[:4] == ["apiVersion", "kind", "verdict", "reasons"]
    assert report["kind"] == "SnapshotCheckReport"
    assert (report["verdict"], report["reasons"]) == ("pass", [])
    assert report["totalSeconds"] == 6.85
    assert report["steps"][0] == {"name": "provision source volume", "seconds": 1.42}
    assert report["problems"] == []
    files = {f["path"]: f for f in report["files"]}
    assert files[MODIFIED_IN_PLACE]["changedAfterSnapshot"] is True
    assert files["tiny.txt"]["changedAfterSnapshot"] is False
    assert files[ADDED.path]["status"] == "absent"


def test_check_table_pass_golden(golden) -> None:
    out = io.StringIO()
    write_check_table(check_report(), out)
    golden("snapshot-check-pass.txt", out.getvalue())


def test_check_table_fail_wide_golden(golden) -> None:
    at = sums()
    restored = dict(changed(at))  # a "snapshot" that followed the source
    report = check_report(restored)
    assert report.outcome.verdict.value == "fail"
    assert len(report.problems) == 4
    out = io.StringIO()
    write_check_table(report, out, wide=True)
    golden("snapshot-check-fail-wide.txt", out.getvalue())


def test_copy_line() -> None:
    out = io.StringIO()
    report = SnapshotCopy(
        snapshot="s",
        namespace="team-a",
        path="/logs",
        destination="logs",
        files=2,
        directories=1,
        bytes=300006,
        skipped=("logs/abs (link to /etc/passwd, outside the copy)",),
        run_id="r1",
    )
    write_copy_table(report, out)
    assert out.getvalue() == (
        "copied 2 files, 1 directory (293Ki) from s:/logs to logs; skipped 1: "
        "logs/abs (link to /etc/passwd, outside the copy)\n"
    )
    assert report.to_dict() == {
        "apiVersion": "kubectl-storage/v1alpha1",
        "kind": "SnapshotCopy",
        "verdict": "pass",
        "reasons": [],
        "snapshot": "s",
        "namespace": "team-a",
        "path": "/logs",
        "destination": "logs",
        "files": 2,
        "directories": 1,
        "bytes": 300006,
        "skipped": ["logs/abs (link to /etc/passwd, outside the copy)"],
        "runId": "r1",
    }


# -- manifests --------------------------------------------------------------------------------


def test_check_manifests() -> None:
    objects = ops.check_manifests(
        "bench",
        "fast",
        "fast-snaps",
        "2Gi",
        ops.PodSettings(image=TOOLBOX_IMAGE),
        PodIdentity(),
        run_id="r1",
        restore_size="2Gi",
    )
    docs = objects.all()
    for doc in docs:
        assert doc["metadata"]["labels"] == run_labels("r1", "snapshot-check")
    assert [d["kind"] for d in docs] == [
        "PersistentVolumeClaim",
        "Pod",
        "VolumeSnapshot",
        "VolumeSnapshot",
        "PersistentVolumeClaim",
        "Pod",
    ]
    # The earlier snapshot is of the same source; the restore is of the later one.
    assert objects.earlier_snapshot["metadata"]["name"] == "ks-snapshot-check-r1-earlier"
    assert objects.earlier_snapshot["spec"] == objects.snapshot["spec"]
    assert objects.snapshot == {
        "apiVersion": "snapshot.storage.k8s.io/v1",
        "kind": "VolumeSnapshot",
        "metadata": {
            "name": "ks-snapshot-check-r1",
            "namespace": "bench",
            "labels": run_labels("r1", "snapshot-check"),
        },
        "spec": {
            "volumeSnapshotClassName": "fast-snaps",
            "source": {"persistentVolumeClaimName": "ks-snapshot-check-r1-source"},
        },
    }
    assert objects.restore_pvc["spec"]["dataSource"] == {
        "apiGroup": "snapshot.storage.k8s.io",
        "kind": "VolumeSnapshot",
        "name": "ks-snapshot-check-r1",
    }
    reader = objects.reader_pod["spec"]
    assert reader["volumes"][1]["persistentVolumeClaim"] == {
        "claimName": "ks-snapshot-check-r1-restore",
        "readOnly": True,
    }
    assert reader["containers"][0]["volumeMounts"][1]["readOnly"] is True
    for pod in (objects.writer_pod, objects.reader_pod):
        assert restricted_violations(pod) == []


def test_restore_objects_for_a_live_pvc() -> None:
    source = ops.SnapshotSource(
        namespace="db", pvc="data", snapshot_class="hp", storage_class="fast", size=None
    )
    plan = ops.plan_restore(
        None,
        source,
        ops.PodSettings(image="img:1"),
        "snapshot-browse",
        facts=ClusterFacts.offline("db"),
        run_id="r2",
    )
    docs = plan.manifests()
    assert all(d["metadata"]["labels"] == run_labels("r2", "snapshot-browse") for d in docs)
    assert [d["kind"] for d in docs] == ["VolumeSnapshot", "PersistentVolumeClaim", "Pod"]
    assert docs[0]["spec"]["source"] == {"persistentVolumeClaimName": "data"}
    assert docs[1]["spec"]["resources"]["requests"]["storage"] == "RESTORESIZE"
    assert docs[1]["spec"]["dataSource"]["name"] == docs[0]["metadata"]["name"]
    assert restricted_violations(docs[2]) == []
    with_size = plan.objects(size="5Gi")
    assert with_size.pvc["spec"]["resources"]["requests"]["storage"] == "5Gi"


def test_offline_plan_needs_class_and_size() -> None:
    pods = ops.PodSettings(image="img:1")
    facts = ClusterFacts.offline("db")
    with pytest.raises(UsageError, match="cannot tell the restore class"):
        ops.plan_restore(
            None,
            ops.SnapshotSource("db", snapshot="s"),
            pods,
            "snapshot-cp",
            facts=facts,
            run_id="r",
        )
    with pytest.raises(UsageError, match="cannot tell the restore size"):
        ops.plan_restore(
            None,
            ops.SnapshotSource("db", snapshot="s", storage_class="x"),
            pods,
            "snapshot-cp",
            facts=facts,
            run_id="r",
        )


# -- the snapshot API missing (a shared test cluster cannot drop its CRDs) ---------------------


class _NoSnapshotApi:
    """Answers discovery as a cluster without the snapshot CRDs does: 404."""

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        raise NotFoundError("the server could not find the requested resource")


def test_missing_snapshot_api_says_how_to_install() -> None:
    with pytest.raises(NotFoundError) as err:
        require_snapshot_api(_NoSnapshotApi())  # type: ignore[arg-type]
    assert "VolumeSnapshot API (snapshot.storage.k8s.io/v1) is not installed" in err.value.message
    assert "external-snapshotter" in err.value.hint
    assert "client/config/crd" in err.value.hint


# -- cp: extraction ---------------------------------------------------------------------------


def _tar(entries: list[tuple[tarfile.TarInfo, bytes | None]]) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for info, data in entries:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def _info(
    name: str, kind: bytes = tarfile.REGTYPE, mode: int = 0o644, **kw: Any
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.mtime = 1795980837
    info.uid = 4242
    for key, value in kw.items():
        setattr(info, key, value)
    return info


def test_extraction_keeps_bytes_modes_and_mtimes(tmp_path: Path) -> None:
    data = bytes(range(256)) * 10
    script = _info("logs/run.sh", mode=0o4750, size=3)
    archive = _tar(
        [
            (_info("logs", tarfile.DIRTYPE, 0o2750), None),
            (_info("logs/data.bin", mode=0o600, size=len(data)), data),
            (script, b"#!\n"),
            (_info("logs/rel", tarfile.SYMTYPE, 0o777, linkname="data.bin"), None),
            (_info("logs/abs", tarfile.SYMTYPE, 0o777, linkname="/etc/passwd"), None),
            (_info("logs/fifo", tarfile.FIFOTYPE), None),
        ]
    )
    stats = snapshot_copy._CopyStats()
    target = tmp_path / "copy"
    snapshot_copy._extract_and_place(archive, target, root=False, force=False, stats=stats)
    assert (target / "data.bin").read_bytes() == data
    assert (target / "data.bin").stat().st_mode & 0o7777 == 0o600
    assert (target / "run.sh").stat().st_mode & 0o7777 == 0o750  # set-uid dropped
    assert target.stat().st_mode & 0o777 == 0o750
    assert int((target / "data.bin").stat().st_mtime) == 1795980837
    assert (target / "rel").readlink() == Path("data.bin")
    assert not (target / "abs").is_symlink()
    assert (stats.files, stats.directories, stats.bytes) == (2, 1, len(data) + 3)
    assert [s.split(" ")[0] for s in stats.skipped] == ["logs/abs", "logs/fifo"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ks-cp-")]


def test_extraction_refuses_escapes_and_writes_nothing(tmp_path: Path) -> None:
    archive = _tar([(_info("../evil", size=1), b"x")])
    with pytest.raises(Exception, match="unsafe entry"):
        snapshot_copy._extract_and_place(
            archive, tmp_path / "t", root=False, force=False, stats=snapshot_copy._CopyStats()
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_force_replaces_a_file_and_merges_a_directory(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("old")
    snapshot_copy._extract_and_place(
        _tar([(_info("f", size=3), b"new")]),
        target,
        root=False,
        force=True,
        stats=snapshot_copy._CopyStats(),
    )
    assert target.read_text() == "new"
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "keep").write_text("mine")
    (folder / "x").write_text("old")
    archive = _tar([(_info("d", tarfile.DIRTYPE, 0o755), None), (_info("d/x", size=1), b"1")])
    snapshot_copy._extract_and_place(
        archive, folder, root=False, force=True, stats=snapshot_copy._CopyStats()
    )
    assert (folder / "x").read_text() == "1"
    assert (folder / "keep").read_text() == "mine"
    with pytest.raises(UsageError, match="appeared meanwhile"):
        snapshot_copy._extract_and_place(
            _tar([(_info("f", size=1), b"z")]),
            target,
            root=False,
            force=False,
            stats=snapshot_copy._CopyStats(),
        )


def test_copy_destination_rules(tmp_path: Path) -> None:
    pods = ops.PodSettings(image="img:1")

    def request(path: str, dest: Path, force: bool = False) -> ops.CopyRequest:
        return ops.CopyRequest(
            ops.SnapshotSource("db", snapshot="snap"), path, str(dest), pods, force
        )

    assert ops.copy_destination(request("/etc/app.conf", tmp_path)) == tmp_path / "app.conf"
    assert ops.copy_destination(request("/", tmp_path)) == tmp_path / "snap"
    assert ops.copy_destination(request("x", tmp_path / "new")) == tmp_path / "new"
    (tmp_path / "app.conf").write_text("")
    with pytest.raises(UsageError, match="exists; not overwriting"):
        ops.copy_destination(request("/etc/app.conf", tmp_path))
    assert ops.copy_destination(request("/etc/app.conf", tmp_path, force=True))
    with pytest.raises(UsageError, match="does not exist"):
        ops.copy_destination(request("x", tmp_path / "no" / "x"))
    with pytest.raises(UsageError, match="outside the snapshot"):
        ops.copy_destination(request("../x", tmp_path))


def test_a_ctrl_c_the_client_turned_into_an_api_error_is_still_a_ctrl_c() -> None:
    from kubectl_storage.errors import ClusterError
    from kubectl_storage.kube.podstream import interrupted

    def exec_connect() -> None:
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt as exc:  # as kubernetes.stream.ws_client.websocket_call does
                raise RuntimeError(f"(0)\nReason: {exc}")  # noqa: B904 - as the client does
        except RuntimeError as exc:  # as podexec maps it
            raise ClusterError("(0)") from exc

    with pytest.raises(ClusterError) as err:
        exec_connect()
    assert interrupted(err.value)
    assert not interrupted(ClusterError("refused"))


def test_snapshot_settled_only_when_ready_failed_or_already_deleting() -> None:
    # Right after creation the controller has not written a status yet: still being cut.
    fresh = make_snapshot(ready=None, restore_size=None, bound=None)
    del fresh["status"]
    assert not snapshot_settled(fresh)
    assert not snapshot_settled(make_snapshot(ready=False))  # bound, sidecar still working
    assert snapshot_settled(make_snapshot(ready=True))
    assert snapshot_settled(make_snapshot(ready=False, error="driver refused"))
    deleting = make_snapshot(ready=False)
    deleting["metadata"]["deletionTimestamp"] = "2026-11-29T12:00:00Z"
    assert snapshot_settled(deleting)
