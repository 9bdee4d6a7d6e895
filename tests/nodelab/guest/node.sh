# The guest as a node of the host's test cluster (tests/nodelab/node.py puts this script, the
# kubelet's files and node.env in the share). Storage first: the kernel's nfsd exports one tmpfs
# (10.10.0.1:/srv/nfs/vol1) and LIO one 64 MiB LUN through two portals (10.20.0.1 and 10.20.0.2),
# with iscsid and multipathd running, so the kubelet's in-tree nfs and iscsi plugins mount them
# for a pod as on any node. Then containerd (cgroup v2, overlayfs, CNI bridge) and the kubelet,
# which registers with the API server at the tap's host end. Runs until the host
# creates /out/stop. Self-contained (no lib.sh): it comes through the share, not from the image.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
O=/out/node
mkdir -p "$O"
now() { cut -d' ' -f1 /proc/uptime; }
mark() { echo "$1 t=$(now)" | tee -a "$O/timings.txt"; }
wait_for() { # wait_for SECONDS CMD...: poll CMD every 0.5 s; 1 when the time runs out
  end=$(awk -v a="$(now)" -v l="$1" 'BEGIN{print a + l}')
  shift
  while ! "$@" > /dev/null 2>&1; do
    if awk -v n="$(now)" -v e="$end" 'BEGIN{exit !(n > e)}'; then echo "wait_for: timed out: $*"; return 1; fi
    sleep 0.5
  done
}
. /out/node.env  # NODE_NAME NODE_IP NODE_LABEL NODE_TAINT KUBELET_PORT PAUSE_IMAGE
mark start
cat /proc/sys/kernel/random/uuid | tr -d - > /etc/machine-id
( while :; do echo "t=$(now) $(awk '/MemTotal|MemAvailable/{printf "%s %s ", $1, $2}' /proc/meminfo)" >> "$O/memory.txt"; sleep 5; done ) &

# Modules, udev (iSCSI disks and dm maps need it), the network.
for m in dummy overlay bridge veth br_netfilter virtio_net sunrpc nfsd nfs nfsv3 nfsv4 \
         target_core_mod target_core_file iscsi_target_mod scsi_transport_iscsi libiscsi \
         libiscsi_tcp iscsi_tcp sd_mod sg dm-mod dm-multipath dm-service-time dm-round-robin \
         scsi_dh_alua; do
  modprobe $m || echo "modprobe $m failed"
done
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add > /dev/null 2>&1
udevadm settle -t 30
NIC=$(for d in /sys/class/net/*; do [ -e "$d/device" ] && basename "$d"; done | head -1)
ip addr add "$NODE_IP/30" dev "$NIC"  # the tap's guest end; no default route: only the host
ip link set "$NIC" up
ip link add nfs0 type dummy
ip addr add 10.10.0.1/24 dev nfs0
ip link set nfs0 up
ip link add san0 type dummy
ip addr add 10.20.0.1/24 dev san0
ip addr add 10.20.0.2/24 dev san0
ip link set san0 up
ip -br addr
mark network

# NFS server: one export, its own tmpfs; 10 s lease/grace, 1 MiB maximum I/O size.
mount -t nfsd nfsd /proc/fs/nfsd
mkdir -p /run/rpc_pipefs /var/lib/nfs/rpc_pipefs
mount -t rpc_pipefs sunrpc /run/rpc_pipefs
sed -i 's/^netgroup:.*/netgroup: files/' /etc/nsswitch.conf
mkdir -p /srv/nfs/vol1
mount -t tmpfs -o size=32m vol1 /srv/nfs/vol1
echo "hello from the node lab's nfsd" > /srv/nfs/vol1/hello.txt
chmod 0777 /srv/nfs/vol1
echo "/srv/nfs/vol1 10.10.0.0/24(rw,sync,no_subtree_check,no_root_squash,fsid=1)" > /etc/exports
rpcbind -w || rpcbind
nfsdcld || echo "nfsdcld failed"
rpc.idmapd || echo "rpc.idmapd failed"
echo 10 > /proc/fs/nfsd/nfsv4leasetime
echo 10 > /proc/fs/nfsd/nfsv4gracetime
echo 1048576 > /proc/fs/nfsd/max_block_size
exportfs -ra
rpc.mountd > "$O/mountd.log" 2>&1
rpc.statd --no-notify
rpc.nfsd -V 3 -V 4.0 -V 4.1 -V 4.2 8
mark nfsd

# iSCSI target: LIO through configfs, one TPG with two portals, demo-mode ACLs, no CHAP.
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
T=/sys/kernel/config/target
IQN=iqn.2003-01.org.nodelab:node-lun
truncate -s 64M /run/lun1.img
mkdir -p $T/core/fileio_0/lun1
echo "fd_dev_name=/run/lun1.img,fd_dev_size=67108864" > $T/core/fileio_0/lun1/control
echo nodelab-node-lun1 > $T/core/fileio_0/lun1/wwn/vpd_unit_serial
echo 1 > $T/core/fileio_0/lun1/enable
tp=$T/iscsi/$IQN/tpgt_1
mkdir -p $tp/lun/lun_0
ln -s $T/core/fileio_0/lun1 $tp/lun/lun_0/lun1
mkdir $tp/np/10.20.0.1:3260 $tp/np/10.20.0.2:3260
echo 0 > $tp/attrib/authentication
echo 1 > $tp/attrib/generate_node_acls
echo 1 > $tp/attrib/cache_dynamic_acls
echo 0 > $tp/attrib/demo_mode_write_protect
echo 1 > $tp/enable
# The initiator side as a node runs it: iscsid and multipathd up, the kubelet logs in.
mkdir -p /run/lock/iscsi /etc/multipath
cat > /etc/multipath.conf <<'EOF'
defaults {
    user_friendly_names yes
    find_multipaths yes
    polling_interval 2
}
blacklist {
    devnode "^vd[a-z]"
}
EOF
iscsid
multipathd
mark iscsi

# The container runtime: cgroup v2, containerd with the CRI plugin, a CNI bridge for pods.
mount -t cgroup2 none /sys/fs/cgroup
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do echo "+$c" > /sys/fs/cgroup/cgroup.subtree_control || echo "controller $c not enabled"; done
mount --make-rshared /
mkdir -p /etc/containerd /etc/cni/net.d /var/lib/kubelet /etc/kubernetes
cat > /etc/containerd/config.toml <<EOF
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
EOF
cat > /etc/cni/net.d/10-nodelab.conflist <<'EOF'
{"cniVersion": "1.0.0", "name": "nodelab", "plugins": [{"type": "bridge", "bridge": "nlab-cni0",
 "isGateway": true, "isDefaultGateway": false, "ipMasq": false, "hairpinMode": true,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.245.0.0/24"}]]}}]}
EOF
containerd > "$O/containerd.log" 2>&1 &
wait_for 60 ctr version
mark containerd
ctr -n k8s.io images ls -q | tee "$O/images.txt"

cp /out/kubelet.yaml /out/kubelet.kubeconfig /out/ca.crt /etc/kubernetes/
kubelet --config=/etc/kubernetes/kubelet.yaml --kubeconfig=/etc/kubernetes/kubelet.kubeconfig \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --node-labels="$NODE_LABEL" \
  --register-with-taints="$NODE_TAINT" --root-dir=/var/lib/kubelet --v=2 > "$O/kubelet.log" 2>&1 &
KUBELET=$!
mark kubelet-started
wait_for 120 grep -q "Successfully registered node" "$O/kubelet.log"
mark kubelet-registered

while [ ! -e /out/stop ]; do
  kill -0 $KUBELET 2> /dev/null || { mark kubelet-exited; break; }
  sleep 0.5
done
mark stopping
free -m > "$O/free.txt"
ps -eo rss,comm --sort=-rss | head -15 > "$O/rss.txt"
kill $KUBELET
sleep 1
dmesg > "$O/dmesg.txt"
