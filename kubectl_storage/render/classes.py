"""Table form of the ClassList report."""

from __future__ import annotations

from typing import TextIO

from kubectl_storage.core.classes import ClassList
from kubectl_storage.render.tables import write_notes, write_table, yes_no


def write_classes_table(report: ClassList, out: TextIO, wide: bool = False) -> None:
    """StorageClasses, snapshot classes and CSI drivers, then the notes."""
    sc_rows = []
    for sc in report.storage_classes:
        row = [
            sc.name + (" (default)" if sc.is_default else ""),
            sc.provisioner,
            sc.reclaim_policy,
            sc.volume_binding_mode,
            yes_no(sc.allow_volume_expansion),
            ",".join(sc.snapshot_classes) or "-",
        ]
        if wide:
            row.append(",".join(sc.mount_options) or "-")
            row.append(",".join(f"{k}={v}" for k, v in sc.parameters.items()) or "-")
        sc_rows.append(row)
    headers = ["name", "provisioner", "reclaim", "binding", "expand", "snapshot class"]
    if wide:
        headers += ["mount options", "parameters"]
    write_table(sc_rows, headers, out, title="StorageClasses")

    out.write("\n")
    if report.snapshot_api_available:
        vsc_rows = [
            [v.name + (" (default)" if v.is_default else ""), v.driver, v.deletion_policy]
            for v in report.snapshot_classes
        ]
        write_table(
            vsc_rows, ["name", "driver", "deletion policy"], out, title="VolumeSnapshotClasses"
        )
    else:
        out.write("VolumeSnapshotClasses\n  (snapshot API not installed)\n")

    out.write("\n")
    drv_rows = [
        [d.name, yes_no(d.attach_required), d.fs_group_policy, ",".join(d.lifecycle_modes)]
        for d in report.csi_drivers
    ]
    write_table(drv_rows, ["name", "attach", "fsGroupPolicy", "modes"], out, title="CSIDrivers")
    write_notes([note.to_dict() for note in report.notes], out)
