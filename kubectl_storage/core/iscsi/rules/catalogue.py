"""Data: the iSCSI/multipath rules (rules.md B.3 with this project's changes) and the documents
they cite (rules.md section 0 keys S.., and H.. for the NetApp host utilities), as one
:class:`~kubectl_storage.core.report.rule_catalogue.RuleCatalogue`."""

from __future__ import annotations

from kubectl_storage.core.report.rule_catalogue import RuleCatalogue, RuleSpec

_SOURCES: dict[str, str] = {
    "S45": "kubernetes pkg/volume/iscsi/iscsi_util.go, pkg/volume/util/device_util_linux.go",
    "S50": "multipath.conf(5), opensvc/multipath-tools multipath/multipath.conf.5.in",
    "S51": "multipathd(8), multipath-tools multipathd/multipathd.8.in",
    "S52": "multipath-tools libmultipath/print.c",
    "S53": "multipath-tools libmultipath/hwtable.c (built-in vendor entries)",
    "S55": "Red Hat DM Multipath guide, 'Multipath Command Output'",
    "S56": "open-iscsi README §6 and §8.1-8.2, and etc/iscsid.conf",
    "S57": "open-iscsi usr/session_info.c, usr/iscsi_sysfs.c",
    "S58": "Linux drivers/scsi/scsi_transport_iscsi.c",
    "S59": "Linux drivers/scsi/scsi_sysfs.c access states; "
    "multipath-tools libmultipath/prioritizers/sysfs.c",
    "S60": "NetApp ONTAP SAN host docs, linux-rhel-multipathing (NetAppDocs/ontap-sanhost)",
    "S61": "NetApp ONTAP SAN host docs, linux-iscsi-configuration (replacement_timeout 5)",
    "S62": "NetApp ONTAP SAN host docs, reuse_hu_recommended_settings",
    "S63": "NetApp Trident 'Prepare the worker node' "
    "(https://docs.netapp.com/us-en/trident/trident-use/worker-node-prep.html)",
    "S64": "NetApp Trident ontap-san-prep ('NetApp recommends using bidirectional CHAP')",
    "S65": "Pure Storage 'Linux Recommended Settings'",
    "S66": "Pure Storage published device stanza (tripleo-deployment-configs pure-temp.yaml)",
    "S67": "Portworx 'Use FlashArray as backend storage' (multipath.conf for Kubernetes)",
    "S68": "HPE CSI driver node conformance (hpe-linux-config.yaml) and example multipath.conf",
    "S75": "multipath-tools libmultipath/discovery.c (0.9.4, 0.14.3): sysfs_set_scsi_tmo() "
    "and sysfs_set_session_tmo() write fast_io_fail_tmo (default 5, defaults.h) into the "
    "recovery_tmo of the iSCSI session of every path of a map (off and 0 cannot be set on "
    "iSCSI); path_offline() reads the SCSI device state (offline: down, blocked: pending)",
    "S76": "multipath-tools libmultipath/propsel.c (0.9.4): each select_*() takes overrides, "
    "then the path's device entry (the user's stanza merged over the built-in one), then "
    "defaults, then the built-in default; select_checker() picks tur for an ALUA device when "
    "detect_checker is yes (the default, multipath.conf(5)) before reading any of them",
    "S77": "multipath -t of Debian bookworm multipath-tools 0.9.4-3+deb12u2 "
    "(tests/fixtures/multipath_config): the NETAPP/LUN built-in entry sets no_path_retry queue, "
    "user_friendly_names no and no path_checker; defaults path_checker tur, detect_checker yes",
    "S78": "Longhorn KB 'Troubleshooting: MountVolume.SetUp failed for volume due to multipathd "
    "on the node' (https://longhorn.io/kb/troubleshooting-volume-with-multipath/; not re-read "
    "here): Longhorn volumes are iSCSI from the node to its own tgt, whose LUNs multipathd must "
    "not take (blacklist); its target IQNs start iqn.2019-10.io.longhorn:",
    "S80": "RFC 7143 section 4.2.7.1 (an iSCSI name identifies one iSCSI node, initiator or "
    "target, and is unique worldwide)",
    "S79": "tkc-online wiki 'Unnecessary multipath devices' "
    "(https://wiki.tkc-online.de/doku.php/public:trouble:multipath): a local disk (DELL PERC) "
    "taken by multipath with one path, fixed by a blacklist entry",
    "H1": "NetApp Linux Host Utilities, sanlun lun show -p "
    "(https://docs.netapp.com/us-en/ontap-sanhost/hu-luhu-sanlun-utility.html): host path state "
    "up/down, path type primary (the node owning the LUN) or secondary (its HA partner)",
}


#: The iSCSI / multipath rule catalogue (rules.md B.3 with this project's changes).
ISCSI_RULES = RuleCatalogue(
    _SOURCES,
    (
        RuleSpec(
            "MP000",
            "error",
            "iSCSI to a SAN in use, multipathd not installed or not running",
            "S63 S78",
        ),
        RuleSpec(
            "MP001",
            "error",
            "/etc/multipath.conf missing and multipathd not running",
            "S62 S60 S51",
        ),
        RuleSpec("MP002", "info", "overrides hide built-in vendor entries", "S62 S50 S55 S76"),
        RuleSpec(
            "MP003",
            "warn (Trident) / info",
            "find_multipaths lets a single-path LUN stay a bare sdX (yes, on, strict, smart)",
            "S63 S50 S55 S67",
        ),
        RuleSpec(
            "MP004",
            "info",
            "user_friendly_names yes where the vendor needs no",
            "S67 S53 S60 S76 S77",
        ),
        RuleSpec(
            "MP010", "error", "failed, faulty or offline path (map or sanlun)", "S51 S52 S55 H1"
        ),
        RuleSpec("MP011", "error", "no usable path (map or sanlun)", "S51 S52 H1"),
        RuleSpec("MP012", "warn", "fewer than two paths", "S60 S56 S63"),
        RuleSpec(
            "MP017",
            "warn",
            "local or virtual disk (ATA, QEMU, virtio) multipathed",
            "S50 S79",
        ),
        RuleSpec("MP013", "warn", "more paths than the vendor supports", "S60"),
        RuleSpec("MP014", "info", "transient checker state", "S51"),
        RuleSpec("MP015", "error", "every path ALUA standby", "S51 S59"),
        RuleSpec(
            "MP016",
            "warn",
            "ONTAP LUN with no primary path up: I/O through the HA partner (sanlun)",
            "H1 S60",
        ),
        RuleSpec(
            "MP020",
            "warn",
            "one path group mixing ALUA priorities or primary and secondary paths",
            "S50 S60 S53 S66 S68 S59 H1",
        ),
        RuleSpec(
            "MP021",
            "warn (info with failback immediate)",
            "I/O on a lower-priority group while a higher one is usable",
            "S50 S60 S53 S66 S68 H1",
        ),
        RuleSpec("MP022", "info", "path_checker not the vendor's", "S50 S60 S66 S68 S76 S77"),
        RuleSpec("MP023", "info", "detect_prio on for Pure FlashArray", "S65 S53"),
        RuleSpec(
            "MP030",
            "warn",
            "no_path_retry / queueing against vendor guidance",
            "S50 S60 S53 S66 S67 S68 S76 S77",
        ),
        RuleSpec(
            "MP031",
            "warn",
            "unbounded queueing with queue_without_daemon yes (unset means no)",
            "S50",
        ),
        RuleSpec("MP032", "info", "deprecated features queue_if_no_path", "S50"),
        RuleSpec("ISCSI001", "error", "session not logged in", "S58 S57 S63"),
        RuleSpec("ISCSI002", "warn", "iscsid re-establishing the session", "S57 S56"),
        RuleSpec("ISCSI003", "error", "connection failed or down (sysfs)", "S58"),
        RuleSpec(
            "ISCSI004",
            "warn",
            "replacement_timeout above 15 s on a multipathed session, or in iscsid.conf where "
            "multipathd will not override it",
            "S56 S61 S68 S58 S75",
        ),
        RuleSpec("ISCSI005", "info", "short replacement_timeout without multipath", "S56"),
        RuleSpec("ISCSI006", "warn", "NOP-Out pings off with multipathed sessions", "S56 S68"),
        RuleSpec("ISCSI007", "warn/info", "no CHAP or one-way CHAP", "S64 S56 S58"),
        RuleSpec("ISCSI008", "error/warn", "iSCSI disk used without multipath", "S45 S51 S63"),
        RuleSpec("ISCSI009", "warn", "more sessions than node.session.nr_sessions", "S56 S68 S57"),
        RuleSpec("ISCSI010", "warn", "one portal while the node DB lists several", "S56 S60"),
        RuleSpec("ISCSI011", "error", "InitiatorName shared by nodes", "S63"),
        RuleSpec("ISCSI012", "warn", "node.session.scan not manual on a Trident node", "S63"),
        RuleSpec("ISCSI013", "error", "SCSI device not running", "S57 S52"),
        RuleSpec(
            "ISCSI014",
            "info",
            "iscsid.conf replacement_timeout differs from sessions without a multipath map",
            "S56 S58 S75",
        ),
        RuleSpec("ISCSI015", "warn", "iSCSI in use, iscsid not running", "S63"),
        RuleSpec("ISCSI016", "info", "iscsid.conf below the HPE CSI values", "S68 S56"),
        RuleSpec("ISCSI017", "warn", "iscsid could not be asked: connection state Unknown", "S57"),
        RuleSpec("ISCSI018", "warn", "InitiatorName equal to a target's IQN", "S80"),
    ),
)
