"""Table form of the CleanupReport."""

from __future__ import annotations

from typing import Any, TextIO

from kubectl_storage.core.cleanup import Leftover, finalizer_hints
from kubectl_storage.render.tables import write_table


def write_cleanup_table(report: dict[str, Any], out: TextIO, wide: bool = False) -> None:
    """Leftover objects; after deletion, which are gone and which remain."""
    objects = report["objects"]
    if not objects:
        out.write("No objects created by kubectl-storage were found.\n")
        return
    headers = ["kind", "namespace", "name", "run id", "command", "created"]
    if report["deleted"]:
        headers.append("deleted")
    rows = []
    for o in objects:
        row = [o["kind"], o["namespace"] or "-", o["name"], o["runId"], o["command"], o["created"]]
        if report["deleted"]:
            row.append("yes" if o["deleted"] else "NO")
        rows.append(row)
    write_table(rows, headers, out)
    if not report["deleted"]:
        out.write(f"\n{len(objects)} object(s) found; run again with --yes to delete them.\n")
    elif report["stillPresent"]:
        out.write(f"\n{len(report['stillPresent'])} object(s) are still terminating.\n")
        for o in report["stillPresent"]:
            where = f" -n {o['namespace']}" if o["namespace"] else ""
            held = finalizer_hints(
                Leftover(
                    kind=o["kind"],
                    namespace=o["namespace"],
                    name=o["name"],
                    run_id=o["runId"],
                    command=o["command"],
                    created=None,
                    finalizers=tuple(o.get("finalizers") or ()),
                )
            )
            out.write(f"  {o['kind']} {o['name']}{where}: ")
            out.write("held by " + "; ".join(held) + "\n" if held else "no finalizer left.\n")
