"""Data: the NFS rule catalogue (rules.md A.1, with this project's changes), a
:class:`~kubectl_storage.core.report.rule_catalogue.RuleCatalogue` that looks rules up, cites
their sources in findings and lists them as JSON."""

from __future__ import annotations

from kubectl_storage.core.report.rule_catalogue import RuleCatalogue, RuleSpec

# Short references for rules.md section 0 keys (S..) and for the sources this module adds (K..
# kernel, E.. EFS, G.. Google, T.. Trident); a finding's ``source`` joins the ones it cites.
_SOURCES: dict[str, str] = {
    "S1": "nfs(5) https://man7.org/linux/man-pages/man5/nfs.5.html",
    "S2": "Linux fs/nfs/super.c nfs_show_mount_options(), nfs_show_options()",
    "S3": "Linux net/sunrpc/stats.c rpc_clnt_show_stats()",
    "S6": "Linux fs/nfs/Kconfig NFS_DISABLE_UDP_SUPPORT",
    "S7": "RHEL 9 Managing file systems, ch. 3 Mounting NFS shares",
    "S8": "mount(8) https://man7.org/linux/man-pages/man8/mount.8.html",
    "S10": "AWS EFS Recommended NFS mount options "
    "https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-nfs-mount-settings.html",
    "S11": "AWS EFS mount helper settings "
    "https://docs.aws.amazon.com/efs/latest/ug/mount-helper-setting.html",
    "S12": "AWS EFS Using NFS to mount https://docs.aws.amazon.com/efs/latest/ug/mounting-fs-old.html",
    "S13": "aws/efs-utils src/efs_utils_common/mount_options.py, mount_utils.py (TLS mounts use "
    "127.0.0.1 and port=<tlsport>), constants.py NON_NFS_OPTIONS",
    "S15": "Azure NetApp Files Linux NFS mount options best practices "
    "(azure-netapp-files/performance-linux-mount-options.md)",
    "S16": "ANF nconnect + krb5 performance warning (includes/kerberos-nconnect-performance.md)",
    "S17": "ANF Linux concurrency best practices (performance-linux-concurrency-session-slots.md)",
    "S18": "ANF Create an NFS volume / mount volumes (ports 111/635/2049/4045/4046)",
    "S19": "Azure Policy: ANF volumes should not use NFSv3 protocol type",
    "S20": "ANF Understand file locking https://learn.microsoft.com/azure/azure-netapp-files/"
    "understand-file-locks",
    "S22": "Azure Files Mount NFS file share on Linux (storage-files-how-to-mount-nfs-shares.md; "
    "mount options: actimeo 30-60, nconnect 4, noresvport recommended for kernels before 5.18)",
    "S23": "Azure Files Improve NFS performance (nfs-performance.md)",
    "S24": "Azure Files NFS large directories (nfs-large-directories.md)",
    "S25": "AKS mountOptions settings in Azure Files "
    "https://learn.microsoft.com/troubleshoot/azure/azure-kubernetes/storage/"
    "mountoptions-settings-azure-files",
    "S26": "Google Filestore supported protocols "
    "https://cloud.google.com/filestore/docs/about-supported-protocols",
    "S27": "Google Filestore test performance (nconnect 2 or 7 by tier) "
    "https://cloud.google.com/filestore/docs/testing-performance",
    "S28": "Google Filestore mount latency https://cloud.google.com/filestore/docs/mount-latency",
    "S29": "NetApp ONTAP Learn about nconnect "
    "https://docs.netapp.com/us-en/ontap/nfs-admin/nconnect-concept.html",
    "S30": "NetApp ONTAP Considerations for stateless protocols (hard vs soft)",
    "S32": "NetApp KB maximum number of trunked connections for NFS in ONTAP 9",
    "S40": "Kubernetes Persistent Volumes, Mount Options",
    "S41": "Kubernetes Storage Classes, Mount options "
    "https://kubernetes.io/docs/concepts/storage/storage-classes/#mount-options",
    "S42": "kubernetes-csi/csi-driver-nfs pkg/nfs/nodeserver.go",
    "S43": "NetAppDocs/trident ontap-nas-examples.adoc",
    "K1": "Linux fs/nfs/client.c nfs_match_client(): mounts share one nfs_client (and its "
    "nconnect) when address and port, NFS version, minor version, transport and xprtsec policy "
    "match; the security flavour is not compared",
    "K2": "Linux fs/nfs/fs_context.c nfs_fs_parameters (sloppy, lookupcache=all|none|pos|"
    "positive, write=lazy|eager|wait; trunkdiscovery on newer kernels) with S2, which prints "
    "lookupcache=pos and omits the defaults lookupcache=all and write=lazy",
    "K3": "Linux commits 7e134205f629 'NFSv4 introduce max_connect mount options' (v5.15) and "
    "'NFSv4.1 test and add 4.1 trunking transport' (nfs-for-5.17); NetAppDocs/ontap "
    "nfs-trunking/client-mount-task.adoc (max_connect on each trunked mount)",
    "K4": "Linux fs/nfs/nfs4proc.c nfs4_init_uniform_client_string and "
    "Documentation/filesystems/nfs/client-identifier.rst (the client-owner string is the node "
    "name and /sys/fs/nfs/net/nfs_client/identifier or nfs.nfs4_unique_id; clients with one "
    "string are one client to the server)",
    "K5": "RFC 8881 section 2.10.5 (server trunking) and Linux fs/nfs/nfs4client.c "
    "nfs4_discover_server_trunking (a mount of another address of a known server shares its "
    "client)",
    "E1": "kubernetes-sigs/aws-efs-csi-driver pkg/driver/node.go (encryptInTransit defaults to "
    "true and adds tls)",
    "G1": "kubernetes-sigs/gcp-filestore-csi-driver pkg/csi_driver/controller.go (StorageClass "
    "parameter tier)",
    "T1": "NetAppDocs/trident trident-reference/objects.adoc (StorageClass attribute backendType)",
}


#: The NFS rule catalogue (rules.md A.1, with this project's changes): what each rule checks and
#: the documents it rests on. Vendor-scoped rules also cite the vendor table's source keys.
NFS_RULES = RuleCatalogue(
    _SOURCES,
    (
        RuleSpec("NFS001", "error", "NFSv2 mount", "S7 S1"),
        RuleSpec("NFS002", "warn", "NFSv4.0 mount (no sessions)", "S1 S29 S12 S18 S22"),
        RuleSpec(
            "NFS003",
            "info (warn on ANF)",
            "NFSv3 mount (NLM/NSM side-band locking)",
            "S1 S20 S19 S26",
        ),
        RuleSpec("NFS004", "info", "no nfsvers/vers requested", "S1 S7 S22"),
        RuleSpec("NFS010", "error", "soft/softerr on a read-write mount", "S1 S30 S10 S11 S15"),
        RuleSpec("NFS011", "warn", "soft/softerr on a read-only mount", "S30 S1"),
        RuleSpec("NFS012", "warn", "soft mount with timeo below the vendor minimum", "S10"),
        RuleSpec("NFS013", "warn", "timeo below 150 over TCP", "S1 S10"),
        RuleSpec("NFS014", "info", "timeo/retrans differ from the vendor helper", "S10 S11 S13"),
        RuleSpec("NFS020", "warn", "rsize/wsize below the vendor value", "S10 S11 S22"),
        RuleSpec("NFS021", "warn", "rsize/wsize above the vendor limit", "S15"),
        RuleSpec("NFS022", "info", "requested rsize/wsize differ from the negotiated", "S1 S2"),
        RuleSpec("NFS023", "info", "explicit rsize/wsize below 64 KiB over TCP", "S1 S15"),
        RuleSpec("NFS030", "error", "nconnect above 16 requested", "S1 S29 S40"),
        RuleSpec(
            "NFS031",
            "warn",
            "nconnect inconsistent within one NFS client (server identity)",
            "S15 S23 S2 S3 K1",
        ),
        RuleSpec(
            "NFS032",
            "warn/info",
            "nconnect against the vendor's range",
            "S12 S23 S25 S15 S27 G1",
        ),
        RuleSpec("NFS033", "warn", "nconnect with sec=krb5*", "S16 K1"),
        RuleSpec("NFS034", "warn", "nconnect on NFSv4.0", "S29"),
        RuleSpec("NFS035", "info", "nconnect requested on a kernel before 5.3", "S23 S15"),
        RuleSpec(
            "NFS036",
            "info",
            "ONTAP NFSv4.1+ without max_connect=16 (kernel 5.18 or later)",
            "S32 S1 K3",
        ),
        RuleSpec("NFS037", "info", "NFSv4.1+ mount trunked into another address's client", "K5 K1"),
        RuleSpec(
            "NFS040", "warn", "no noresvport where the vendor asks for it", "S10 S11 S13 S22 S25"
        ),
        RuleSpec("NFS041", "info", "noresvport against a generic server", "S1 S10"),
        RuleSpec(
            "NFS050",
            "warn (info on a PV mounted rw by several nodes)",
            "attribute cache disabled (noac, actimeo=0)",
            "S1 S10",
        ),
        RuleSpec("NFS051", "warn/info", "nocto", "S1 S15"),
        RuleSpec("NFS052", "warn/info", "attribute cache timers above 60 s", "S1 S15"),
        RuleSpec(
            "NFS053",
            "info",
            "attribute cache timeout set below the vendor minimum",
            "S22 S24 S25",
        ),
        RuleSpec("NFS054", "info", "lookupcache=none or pos", "S1 S2"),
        RuleSpec("NFS055", "warn", "nosharecache", "S1"),
        RuleSpec("NFS060", "warn/error", "NFSv3 with nolock/local_lock", "S1 S18 S20"),
        RuleSpec("NFS070", "info", "sync", "S1 S2"),
        RuleSpec("NFS080", "error", "NFS over UDP", "S1 S6"),
        RuleSpec("NFS081", "info", "NFSv3 without tcp where mountd has no UDP", "S28 S1"),
        RuleSpec("NFS090", "info", "intr/nointr requested", "S1"),
        RuleSpec("NFS091", "info", "atime options requested", "S1"),
        RuleSpec("NFS092", "error", "bg requested", "S1"),
        RuleSpec("NFS093", "info", "fstab-only options requested", "S8 S10"),
        RuleSpec(
            "NFS100",
            "info",
            "sec=sys without an encrypting tunnel",
            "S1 S19 S26 S10 S13 S22 E1",
        ),
        RuleSpec("NFS101", "info", "RPC-with-TLS in use", "S1 S2"),
        RuleSpec("NFS110", "info", "128 KiB read-ahead on a cloud file service", "S23 S12"),
        RuleSpec("NFS111", "info", "RPC slots above what the server accepts", "S17"),
        RuleSpec(
            "NFS120", "error", "one NFSv4 client identity on several nodes (one server)", "K4"
        ),
        RuleSpec(
            "NFSK8S001",
            "warn",
            "requested options not in effect",
            "S40 S1 S15 S2 S8 K2 S13",
        ),
        RuleSpec("NFSK8S002", "info", "StorageClass mountOptions differ from the PV's", "S41"),
        RuleSpec("NFSK8S003", "info", "NFS PV without mountOptions", "S42 S43 S1"),
        RuleSpec("NFSK8S004", "info", "FailedMount events with option errors", "S40"),
        RuleSpec("NFSK8S005", "info", "legacy mount-options annotation", "S40"),
    ),
)
