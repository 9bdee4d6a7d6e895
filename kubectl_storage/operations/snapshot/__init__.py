"""`kubectl storage snapshot list|check|browse|cp`, one module per subcommand.

* listing: VolumeSnapshots with their content, class, driver, readiness and size.
* check: known files → snapshot → change the source → restore → compare checksums
  (check_plan: the request and the objects; check: the run).
* browse / copy: restore (restore.py) into a temporary read-only PVC, then a shell, a listing,
  or tar out.

Every input and the cluster are checked before anything is created; everything created goes
through the run scope, so it is deleted on success, failure, timeout, Ctrl-C and SIGTERM.
"""

from kubectl_storage.operations.snapshot.browse import (
    SNAPSHOT_BROWSE_COMMAND,
    BrowseMode,
    BrowsePlan,
    BrowseRequest,
    BrowseResult,
    validate_browse,
)
from kubectl_storage.operations.snapshot.check import SNAPSHOT_CHECK_COMMAND
from kubectl_storage.operations.snapshot.check_plan import (
    CheckManifests,
    CheckPlan,
    CheckRequest,
    check_manifests,
    validate_check,
)
from kubectl_storage.operations.snapshot.common import PodSettings, SnapshotSource
from kubectl_storage.operations.snapshot.copy import (
    SNAPSHOT_COPY_COMMAND,
    CopyPlan,
    CopyRequest,
    copy_destination,
    validate_copy,
)
from kubectl_storage.operations.snapshot.listing import list_snapshots
from kubectl_storage.operations.snapshot.restore import RestorePlan, plan_restore

__all__ = [
    "SNAPSHOT_BROWSE_COMMAND",
    "SNAPSHOT_CHECK_COMMAND",
    "SNAPSHOT_COPY_COMMAND",
    "BrowseMode",
    "BrowsePlan",
    "BrowseRequest",
    "BrowseResult",
    "CheckManifests",
    "CheckPlan",
    "CheckRequest",
    "CopyPlan",
    "CopyRequest",
    "PodSettings",
    "RestorePlan",
    "SnapshotSource",
    "check_manifests",
    "copy_destination",
    "list_snapshots",
    "plan_restore",
    "validate_browse",
    "validate_check",
    "validate_copy",
]
