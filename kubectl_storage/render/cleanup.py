"""Table form of the CleanupReport."""

from __future__ import annotations

from typing import TextIO

from kubectl_storage.core.cleanup import CleanupReport, finalizer_hints
from kubectl_storage.render.tables import write_table


def write_cleanup_table(report: CleanupReport, out: TextIO, wide: bool = False) -> None:
    """Leftover objects; after deletion, which are gone and which remain."""
    objects = report.objects
    if not objects:
        out.write("No objects created by kubectl-storage were found.\n")
        return
    headers = ["kind", "namespace", "name", "run id", "command", "created"]
    if report.deleted:
        headers.append("deleted")
    rows = []
    for o in objects:
        row = [o.kind, o.namespace or "-", o.name, o.run_id, o.command, o.to_dict()["created"]]
        if report.deleted:
            row.append("yes" if o.deleted else "NO")
        rows.append(row)
    write_table(rows, headers, out)
    if not report.deleted:
        out.write(f"\n{len(objects)} object(s) found; run again with --yes to delete them.\n")
    elif report.still_present:
        out.write(f"\n{len(report.still_present)} object(s) are still terminating.\n")
        for o in report.still_present:
            where = f" -n {o.namespace}" if o.namespace else ""
            held = finalizer_hints(o)
            out.write(f"  {o.kind} {o.name}{where}: ")
            out.write("held by " + "; ".join(held) + "\n" if held else "no finalizer left.\n")
