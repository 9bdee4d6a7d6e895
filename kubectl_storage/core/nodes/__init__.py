"""Facts read on a node, shared by mount-audit and iscsi: the collection script run in the
debug pod, mount tables (mountinfo, /proc/mounts, nfsstat -m) and kubelet paths mapped to pods,
PVCs and PVs."""
