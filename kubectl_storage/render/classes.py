"""Table form of the ClassList report."""

from __future__ import annotations

from typing import Any, TextIO

from kubectl_storage.render.tables import write_notes, write_table, yes_no


def write_classes_table(report: dict[str, Any], out: TextIO, wide: bool = False) -> None:
    """StorageClasses, snapshot classes and CSI drivers, then the notes."""
    sc_rows = []
    for sc in report["storageClasses"]:
        name = sc["name"] + (" (default)" if sc["default"] else "")
        row = [
            name,
            sc["provisioner"],
            sc["reclaimPolicy"],
            sc["volumeBindingMode"],
            yes_no(sc["allowVolumeExpansion"]),
            ",".join(sc["snapshotClasses"]) or "-",
        ]
        if wide:
            row.append(",".join(sc["mountOptions"]) or "-")
            row.append(",".join(f"{k}={v}" for k, v in sc["parameters"].items()) or "-")
        sc_rows.append(row)
    headers = ["name", "provisioner", "reclaim", "binding", "expand", "snapshot class"]
    if wide:
        headers += ["mount options", "parameters"]
    write_table(sc_rows, headers, out, title="StorageClasses")

    out.write("\n")
    if report["snapshotApiAvailable"]:
        vsc_rows = [
            [v["name"] + (" (default)" if v["default"] else ""), v["driver"], v["deletionPolicy"]]
            for v in report["volumeSnapshotClasses"]
        ]
        write_table(
            vsc_rows, ["name", "driver", "deletion policy"], out, title="VolumeSnapshotClasses"
        )
    else:
        out.write("VolumeSnapshotClasses\n  (snapshot API not installed)\n")

    out.write("\n")
    drv_rows = [
        [
            d["name"],
            yes_no(d["attachRequired"]),
            d["fsGroupPolicy"],
            ",".join(d["volumeLifecycleModes"]),
        ]
        for d in report["csiDrivers"]
    ]
    write_table(drv_rows, ["name", "attach", "fsGroupPolicy", "modes"], out, title="CSIDrivers")
    write_notes(report["notes"], out)
