"""--dry-run prints what the live run creates (issue 13): on the real test cluster, the objects a
run made (kept with --keep, found by its run-id label) match the --dry-run plan of the same
command line: kinds, names up to the run id, namespace, labels and images."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from tests.conftest import run_cli
from tests.e2e.conftest import HOSTPATH_CLASS

CLASS = HOSTPATH_CLASS
SNAPSHOT_CLASS = "csi-hostpath-snapclass"
RUN_ID = "kubectl-storage/run-id"
# Objects a controller makes for us (the StatefulSet's pod and claim) are not in a plan.
KINDS = "pods,persistentvolumeclaims,configmaps,secrets,statefulsets.apps,volumesnapshots"


def _shape(doc: dict, run_id: str) -> tuple:
    """What must agree between a planned and a created object, with the run id masked."""
    meta = doc["metadata"]
    labels = {k: v.replace(run_id, "RUN") for k, v in (meta.get("labels") or {}).items()}
    spec = doc.get("spec") or {}
    pod_spec = (spec.get("template") or {}).get("spec") or spec
    images = tuple(sorted(c["image"] for c in pod_spec.get("containers") or []))
    return (
        doc["kind"],
        meta["name"].replace(run_id, "RUN"),
        meta.get("namespace"),
        tuple(sorted(labels.items())),
        images,
    )


def _planned(args: list[str]) -> set[tuple]:
    result = run_cli(*args, "--dry-run")
    assert result.exit_code == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    (run_id,) = {d["metadata"]["labels"][RUN_ID] for d in docs}
    return {_shape(d, run_id) for d in docs}


def _created(cluster, namespace: str, run_id: str) -> set[tuple]:
    items = cluster.get_json(KINDS, "-n", namespace, "-l", f"{RUN_ID}={run_id}")["items"]
    # A StatefulSet's pod has an owner; its claim has none but is named after the template.
    ours = [
        i
        for i in items
        if not i["metadata"].get("ownerReferences")
        and not i["metadata"]["name"].startswith("data-")
    ]
    return {_shape(i, run_id) for i in ours}


def _cleanup(namespace: str, run_id: str) -> None:
    result = run_cli("cleanup", "--run-id", run_id, "--yes", "-n", namespace)
    assert result.exit_code == 0, result.stderr


CASES = {
    "fio": (
        ["fio", "-s", CLASS, "-z", "1Gi", "--profile", "quick", "--runtime", "1"],
        lambda report: report["run_id"],
    ),
    "fio --clients": (
        ["fio", "-s", CLASS, "-z", "1Gi", "--profile", "quick", "--runtime", "1", "--clients", "2"],
        lambda report: report["run_id"],
    ),
    "snapshot check": (
        ["snapshot", "check", "-s", CLASS, "--snapshot-class", SNAPSHOT_CLASS],
        lambda report: report["runId"],
    ),
    "validate-persistence": (
        ["validate-persistence", "-s", CLASS, "--rows", "50", "--disruptions", "restart"],
        lambda report: report["run_id"],
    ),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_dry_run_plan_is_what_the_run_creates(cluster, namespace, command: str) -> None:
    args, run_id_of = CASES[command]
    args = [*args, "-n", namespace]
    if command == "validate-persistence":
        args += ["--image", cluster.mariadb_image]
    planned = _planned(args)
    result = run_cli(*args, "--keep", "-o", "json", timeout=600)
    assert result.exit_code == 0, result.stderr
    run_id = run_id_of(json.loads(result.stdout))
    assert re.fullmatch(r"[a-z0-9]{8}", run_id)
    try:
        # (The snapshot check's restore asks for the snapshot's restoreSize, known once it is
        # cut; sizes are not part of the shape compared.)
        assert _created(cluster, namespace, run_id) == planned
    finally:
        _cleanup(namespace, run_id)
