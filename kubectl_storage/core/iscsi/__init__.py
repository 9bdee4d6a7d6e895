"""`kubectl storage iscsi`: iscsiadm sessions, multipath maps and configuration, sanlun, and
the iSCSI / multipath rule catalogue."""
