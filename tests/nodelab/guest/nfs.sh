# NFS scenario: the kernel's nfsd serves five exports (a tmpfs each, with its own fsid, so every
# export is its own filesystem and its own client superblock); the kernel's NFS client mounts
# them, over loopback and addresses on a dummy interface, at kubelet pod-volume paths
# (/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~nfs/<pv>), as kubelet's NFS plugin would.
# After each phase: the project's mount collection, plus evidence (TCP connections by server
# address, /proc/fs/nfsfs). $P/volumes.tsv says which PV each mount stands for and which options
# its PV asked for, so the host can give the audit the same Kubernetes objects a cluster would.
#
# A phase unmounts everything it mounted, so that each phase starts without NFS clients: the first
# mount of a server address (and, for NFSv4.1+, of the server itself, through trunking detection)
# creates the client that later mounts share.
. /lab/lib.sh
. /lab/krb5.sh

modprobe dummy numdummies=0
ip link add nfs0 type dummy
for i in $(seq 1 24); do ip addr add 10.10.0.$i/24 dev nfs0; done
ip link set nfs0 up
for mod in sunrpc nfsd nfs nfsv3 nfsv4; do modprobe $mod; done
mount -t nfsd nfsd /proc/fs/nfsd
mkdir -p /run/rpc_pipefs /var/lib/nfs/rpc_pipefs
mount -t rpc_pipefs sunrpc /run/rpc_pipefs
sed -i 's/^netgroup:.*/netgroup: files/' /etc/nsswitch.conf
: > /etc/exports
for n in 1 2 3 4 5; do
  mkdir -p /srv/nfs/vol$n
  mount -t tmpfs -o size=32m vol$n /srv/nfs/vol$n
  echo "hello from vol$n" > /srv/nfs/vol$n/hello.txt
  opts="rw,sync,no_subtree_check,no_root_squash,fsid=$n"
  echo "/srv/nfs/vol$n 127.0.0.0/8($opts) 10.10.0.0/24($opts)" >> /etc/exports
done
rpcbind -w || rpcbind
nfsdcld || echo "nfsdcld failed"
rpc.idmapd || echo "rpc.idmapd failed"
# A 10 s lease and grace time instead of 90 s; 1 MiB maximum I/O size (the default caps at 256 KiB
# on small guests). The first NFSv4 mount waits out the grace period.
echo 10 > /proc/fs/nfsd/nfsv4leasetime
echo 10 > /proc/fs/nfsd/nfsv4gracetime
echo 1048576 > /proc/fs/nfsd/max_block_size
exportfs -ra
exportfs -v
rpc.mountd > "$O/mountd.log" 2>&1
rpc.statd --no-notify
rpc.nfsd -V 3 -V 4.0 -V 4.1 -V 4.2 8
cat /proc/fs/nfsd/versions
echo

UIDN=0
# nfsmount PV SERVER EXPORT OPTIONS [NODES]: mount SERVER:EXPORT at the kubelet path of PV for
# a new pod UID; OPTIONS ("" for none) is both the PV's mountOptions and mount -o; NODES lists the
# nodes whose pods use the PV read-write (the host builds one pod per node).
nfsmount() {
  UIDN=$((UIDN + 1))
  uid=$(printf '00000000-0000-4000-8000-%012d' "$UIDN")
  mp=$(kubelet_dir "$uid" kubernetes.io~nfs "$1")
  t0=$(now)
  if [ -n "$4" ]; then
    timeout -s KILL 60 mount -t nfs -o "$4" "$2:$3" "$mp"
  else
    timeout -s KILL 60 mount -t nfs "$2:$3" "$mp"
  fi
  rc=$?
  echo "mount $1 rc=$rc took $(awk -v a="$t0" '{printf "%.1f", $1 - a}' /proc/uptime)s" | tee -a "$P/mounts.log"
  cat "$mp/hello.txt"
  # Some I/O, so counters move and every transport of an nconnect client gets used (the kernel
  # connects a transport when an RPC first goes to it, round-robin).
  case ",$4," in
    *,ro,*) dd if="$mp/hello.txt" of=/dev/null bs=4k count=1 2>/dev/null ;;
    # 16 MiB cost 2-5 s under TCG with krb5p; a krb5p mount here has one transport or joins
    # those a sec=sys mount connected.
    *,sec=krb5p,*) dd if=/dev/zero of="$mp/data" bs=1M count=1 conv=fsync 2>/dev/null && rm -f "$mp/data" ;;
    *) dd if=/dev/zero of="$mp/data" bs=1M count=16 conv=fsync 2>/dev/null && rm -f "$mp/data" ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$uid" "$2" "$3" "$mp" "$4" "${5:-nodelab}" >> "$P/volumes.tsv"
}
capture() {
  collect mount
  ss -tnH state established '( dport = :2049 )' > "$P/connections.txt"
  awk '{split($4, a, ":"); n[a[1]]++} END {for (k in n) print k, n[k]}' "$P/connections.txt" | sort > "$P/connection-counts.txt"
  cat "$P/connection-counts.txt"
  { cat /proc/fs/nfsfs/servers; echo; cat /proc/fs/nfsfs/volumes; } > "$P/nfsfs.txt"
  cat "$P/nfsfs.txt"
}
finish() {
  capture
  cut -f5 "$P/volumes.tsv" | while read -r mp; do umount "$mp" || umount -f -l "$mp"; done
  sleep 1
}

phase versions
nfsmount nfs-v3 127.0.0.1 /srv/nfs/vol1 vers=3,proto=tcp,hard,timeo=600,retrans=2
nfsmount nfs-v40 10.10.0.1 /srv/nfs/vol2 vers=4.0,hard,timeo=600,retrans=2
nfsmount nfs-v41 10.10.0.2 /srv/nfs/vol3 vers=4.1,hard,timeo=600,retrans=2
nfsmount nfs-v42 10.10.0.3 /srv/nfs/vol4 vers=4.2,hard,timeo=600,retrans=2
nfsmount nfs-unpinned 10.10.0.4 /srv/nfs/vol5 ""
finish

phase nconnect
nfsmount nc-1 10.10.0.5 /srv/nfs/vol1 vers=3,proto=tcp,nconnect=1
nfsmount nc-4 10.10.0.6 /srv/nfs/vol2 vers=4.1,nconnect=4
nfsmount nc-8 10.10.0.7 /srv/nfs/vol3 vers=4.2,nconnect=8
nfsmount nc-16 10.10.0.8 /srv/nfs/vol4 vers=3,proto=tcp,nconnect=16
finish

phase rwsize
nfsmount rw-64k 10.10.0.9 /srv/nfs/vol1 vers=3,proto=tcp,rsize=65536,wsize=65536
nfsmount rw-1m 10.10.0.10 /srv/nfs/vol2 vers=4.1,rsize=1048576,wsize=1048576
nfsmount rw-2m 10.10.0.11 /srv/nfs/vol3 vers=4.2,rsize=2097152,wsize=2097152
nfsmount rw-32k 10.10.0.12 /srv/nfs/vol4 vers=3,proto=tcp,rsize=32768,wsize=32768
finish

phase hard-soft-cache
nfsmount hard 10.10.0.13 /srv/nfs/vol1 vers=4.1,hard,timeo=600,retrans=2
nfsmount soft-rw 10.10.0.14 /srv/nfs/vol2 vers=3,proto=tcp,soft,timeo=100,retrans=3
nfsmount soft-ro 10.10.0.15 /srv/nfs/vol3 vers=3,proto=tcp,soft,ro
nfsmount nocto-actimeo 10.10.0.16 /srv/nfs/vol4 vers=4.2,hard,nocto,actimeo=120 nodelab,nodelab-2
nfsmount actimeo-0 10.10.0.17 /srv/nfs/vol5 vers=3,proto=tcp,hard,actimeo=0
finish

# NFSv4.1: the first mount of 10.10.0.18 has no nconnect, so the second's nconnect=8 is not used;
# 10.10.0.19 is the same server, so trunking detection puts its mount on the existing client.
# NFSv4.2 (its own client): the reverse, the first mount of 10.10.0.20 asks for nconnect=8.
phase inherit-v4
nfsmount v41-first 10.10.0.18 /srv/nfs/vol1 vers=4.1,hard
nfsmount v41-second 10.10.0.18 /srv/nfs/vol2 vers=4.1,hard,nconnect=8
nfsmount v41-other-address 10.10.0.19 /srv/nfs/vol3 vers=4.1,hard,nconnect=4
nfsmount v42-first 10.10.0.20 /srv/nfs/vol4 vers=4.2,hard,nconnect=8
nfsmount v42-second 10.10.0.20 /srv/nfs/vol5 vers=4.2,hard
finish

# NFSv3, both ways.
phase inherit-v3
nfsmount v3-first 10.10.0.21 /srv/nfs/vol1 vers=3,proto=tcp,hard
nfsmount v3-second 10.10.0.21 /srv/nfs/vol2 vers=3,proto=tcp,hard,nconnect=8
nfsmount v3-rev-first 10.10.0.22 /srv/nfs/vol3 vers=3,proto=tcp,hard,nconnect=4
nfsmount v3-rev-second 10.10.0.22 /srv/nfs/vol4 vers=3,proto=tcp,hard
finish

# One NFS client for sec=sys and sec=krb5p: the kernel's client identity is the server address
# and port, version and minor version and transport, not the security flavour. The kernel's nfsd
# of this kernel answers every krb5p call GARBAGE_ARGS (knfsd_krb5p_probe keeps the evidence), so
# these phases are served by NFS-Ganesha, on the same addresses and port, from the same
# directories; the client is the kernel's, as everywhere else. 10.10.0.23: the sec=sys mount comes
# first with nconnect=4, the sec=krb5p mount of the same server asks for nconnect=2 and runs the
# first one's 4 transports. 10.10.0.24 (the quiet case): sec=krb5p first, then sec=sys, neither
# asks for nconnect, so they agree.
krb5_setup 10.10.0.23 10.10.0.24
knfsd_krb5p_probe 10.10.0.23 /srv/nfs/vol5
ganesha_start /srv/nfs/vol1 /srv/nfs/vol2 /srv/nfs/vol3 /srv/nfs/vol4

phase krb5-inherit
nfsmount krb5-sys-first 10.10.0.23 /srv/nfs/vol1 vers=4.1,hard,sec=sys,nconnect=4
nfsmount krb5p-second 10.10.0.23 /srv/nfs/vol2 vers=4.1,hard,sec=krb5p,nconnect=2
finish

phase krb5-quiet
nfsmount krb5p-first 10.10.0.24 /srv/nfs/vol3 vers=4.2,hard,sec=krb5p
nfsmount krb5-sys-second 10.10.0.24 /srv/nfs/vol4 vers=4.2,hard,sec=sys
finish

# A hard mount whose server stops answering (iptables DROP both ways on 10.10.0.25:2049, served
# by NFS-Ganesha like the phases above): the client logs "not responding, still trying", a
# writer blocks in the kernel (the hung-task detector's timeout lowered to 10 s), and the mount
# stays. Captured without unmounting (an unmount would wait for the server too); then the server
# answers again, the client logs "OK" and the writer finishes (issue 22 item 4).
ip addr add 10.10.0.25/24 dev nfs0
sysctl -w kernel.hung_task_timeout_secs=10
phase server-stops
nfsmount stalled 10.10.0.25 /srv/nfs/vol1 vers=4.1,hard,timeo=20,retrans=2
STALLED=$(cut -f5 "$P/volumes.tsv")
# The writer opens its file while the server answers (an open, or an append, would wait for the
# server killably, which the hung-task detector does not report); its sync then waits for the
# write-back uninterruptibly, which it does.
sh -c "exec 3>'$STALLED/stalled.txt'; while [ ! -e /run/write-now ]; do sleep 0.2; done; echo stalled >&3; sync" &
WRITER=$!
sleep 2
iptables -I INPUT -p tcp -d 10.10.0.25 --dport 2049 -j DROP
iptables -I INPUT -p tcp -s 10.10.0.25 --sport 2049 -j DROP
touch /run/write-now
wait_for 180 sh -c "dmesg | grep -q 'server 10.10.0.25 not responding'"
wait_for 120 sh -c "dmesg | grep -q 'blocked for more than'"
capture
STOPPED=$P
phase server-back
cp "$STOPPED/volumes.tsv" "$P/"
iptables -D INPUT -p tcp -d 10.10.0.25 --dport 2049 -j DROP
iptables -D INPUT -p tcp -s 10.10.0.25 --sport 2049 -j DROP
wait_for 180 sh -c "dmesg | grep -q 'server 10.10.0.25 OK'"
wait $WRITER
echo "writer rc=$?"
finish

sec "dmesg (nfs)"
dmesg | grep -iE 'nfs|rpc' | tail -30
