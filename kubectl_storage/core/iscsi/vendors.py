"""Storage array profiles for the multipath and iSCSI rules, as data (rules.md B.4).

One :class:`ArrayVendor` entry per array family, matched on the SCSI vendor/product a multipath
map reports. Every value a vendor-scoped rule compares with lives here, with the source keys
(rules.md section 0, resolved by :data:`kubectl_storage.core.iscsi.rules.catalogue.ISCSI_RULES`)
that back it; a new array profile is a table entry plus tests.

Pure: data and lookups, no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from kubectl_storage.core.iscsi.iscsid_conf import CMDS_MAX, LOGIN_TIMEOUT, QUEUE_DEPTH


@dataclass(frozen=True)
class ArrayVendor:
    """One array family's guidance; ``None``/empty means "no guidance" (the rule stays quiet).

    Attributes:
        key: short id (``netapp``, ``pure``...).
        name: the product name, for messages.
        vendor: the SCSI vendor id a map shows (compared upper-case, blanks trimmed).
        product_prefix: the start of the SCSI product id, if the vendor id alone is not enough.
        no_path_retry_allowed: MP030, configured ``no_path_retry`` values that match the guidance.
        no_path_retry_wanted: MP030, the value to recommend.
        live_queueing: MP030 on a live map, the multipathd JSON ``queueing`` the guidance gives
            (``on`` for ``queue``, ``off`` for ``0``/``fail``).
        max_paths: MP013, the most paths one LUN should have.
        user_friendly_names_no: MP004, the vendor requires ``user_friendly_names no``.
        path_checker: MP022, the checker the vendor uses.
        detect_prio_no: MP023, the vendor requires ``detect_prio no``.
        iscsid_minimums: ISCSI016, iscsid.conf keys and their lowest values.
        iscsid_startup_manual: ISCSI016, ``node.startup`` must be ``manual``.
        replacement_timeout: ISCSI004, the vendor's ``node.session.timeo.replacement_timeout``.
        sources: source keys per field name.
    """

    key: str
    name: str
    vendor: str
    product_prefix: str | None = None
    no_path_retry_allowed: frozenset[str] = frozenset()
    no_path_retry_wanted: str | None = None
    live_queueing: str | None = None
    max_paths: int | None = None
    user_friendly_names_no: bool = False
    path_checker: str | None = None
    detect_prio_no: bool = False
    iscsid_minimums: tuple[tuple[str, int], ...] = ()
    iscsid_startup_manual: bool = False
    replacement_timeout: int | None = None
    sources: Mapping[str, str] = field(default_factory=dict)

    def matches(self, vendor: str, product: str) -> bool:
        """Whether a map's SCSI vendor/product belong to this array family."""
        if vendor.strip().upper() != self.vendor:
            return False
        return self.product_prefix is None or product.strip().upper().startswith(
            self.product_prefix
        )

    def source(self, name: str) -> str:
        """The source keys backing one field (empty when the table gives none)."""
        return self.sources.get(name, "")


NETAPP = ArrayVendor(
    key="netapp",
    name="NetApp ONTAP",
    vendor="NETAPP",
    product_prefix="LUN",
    no_path_retry_allowed=frozenset({"queue"}),
    no_path_retry_wanted="queue",
    live_queueing="on",
    max_paths=4,
    user_friendly_names_no=True,
    path_checker="tur",
    replacement_timeout=5,
    sources={
        "no_path_retry": "S60 S50",
        "max_paths": "S60",
        "user_friendly_names_no": "S53 S60",
        "path_checker": "S60 S50",
        "replacement_timeout": "S61",
    },
)

PURE = ArrayVendor(
    key="pure",
    name="Pure FlashArray",
    vendor="PURE",
    no_path_retry_allowed=frozenset({"0", "fail"}),
    no_path_retry_wanted="0",
    live_queueing="off",
    user_friendly_names_no=True,
    path_checker="tur",
    detect_prio_no=True,
    sources={
        "no_path_retry": "S66 S67 S50",
        "user_friendly_names_no": "S67 S53",
        "path_checker": "S66 S50",
        "detect_prio_no": "S65 S53",
    },
)

POWERSTORE = ArrayVendor(
    key="powerstore",
    name="Dell PowerStore",
    vendor="DELLEMC",
    product_prefix="POWERSTORE",
    no_path_retry_allowed=frozenset({"3"}),
    no_path_retry_wanted="3",
    sources={"no_path_retry": "S53 S50"},
)

NIMBLE = ArrayVendor(
    key="nimble",
    name="HPE Nimble",
    vendor="NIMBLE",
    no_path_retry_allowed=frozenset({"30"}),
    no_path_retry_wanted="30",
    iscsid_minimums=(
        (QUEUE_DEPTH, 256),
        (CMDS_MAX, 512),
        (LOGIN_TIMEOUT, 15),
    ),
    iscsid_startup_manual=True,
    replacement_timeout=10,
    sources={
        "no_path_retry": "S68 S50",
        "iscsid_minimums": "S68 S56",
        "replacement_timeout": "S68",
    },
)

#: Every array profile, in the order they are tried.
ARRAYS: tuple[ArrayVendor, ...] = (NETAPP, PURE, POWERSTORE, NIMBLE)


def array_for(vendor: str, product: str) -> ArrayVendor | None:
    """The array profile a map's SCSI vendor/product belong to, if any."""
    for entry in ARRAYS:
        if entry.matches(vendor, product):
            return entry
    return None


#: SCSI vendor ids of disks that are local or virtual, never a SAN LUN reached over several paths:
#: ATA (SATA disks behind libata), QEMU (``QEMU HARDDISK`` of virtio-scsi / emulated controllers),
#: VIRTIO / ``0x1af4`` (virtio's PCI vendor, which udev shows for virtio-blk). Multipathing them
#: is a missing blacklist entry (multipath.conf(5) blacklist; find_multipaths, S50).
LOCAL_DISK_VENDORS = frozenset({"ATA", "QEMU", "VIRTIO", "0X1AF4"})

#: Target IQN prefixes of iSCSI that stays on the node by design: Longhorn's engine frontend logs
#: in to its own tgt on the node (S78).
LOCAL_TARGET_IQN_PREFIXES = ("iqn.2019-10.io.longhorn:",)


def is_local_disk(vendor: str, product: str) -> bool:
    """A local or virtual disk, judged by its SCSI vendor. tgt's ``IET,VIRTUAL-DISK`` is not
    one by itself: a tgt server can be a SAN target with several portals (the two-path IET map of
    tests/fixtures/multipath/insights_rhel6_v4_ll.txt); Longhorn's local tgt is recognised by its
    sessions' IQN instead (:func:`is_local_target`)."""
    del product  # the vendor id decides; kept for the (vendor, product) calling convention
    return vendor.strip().upper() in LOCAL_DISK_VENDORS


def is_local_target(target: str) -> bool:
    """iSCSI to the node's own target by design (a Longhorn IQN). A loopback portal alone is not
    taken as local: the node lab reaches one LIO target through 127.0.0.1 and another address as
    two paths of a SAN."""
    return target.lower().startswith(LOCAL_TARGET_IQN_PREFIXES)
