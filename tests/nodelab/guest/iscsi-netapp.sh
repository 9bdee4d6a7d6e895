# iSCSI with NetApp's identity: one LIO LUN whose INQUIRY says vendor NETAPP, product
# "LUN C-Mode" (configfs wwn/vendor_id, wwn/product_id), in one TPG with two portals, so that
# multipathd applies its real built-in NETAPP/LUN entry (hwtable.c: no_path_retry queue,
# user_friendly_names no, no path_checker). One phase per /etc/multipath.conf variant; each
# reloads multipathd (reconfigure) and collects, `multipathd show config` included.
. /lab/lib.sh

modprobe dummy numdummies=0
ip link add san0 type dummy
ip addr add 10.20.0.1/24 dev san0
ip addr add 10.20.0.2/24 dev san0
ip link set san0 up
for m in target_core_mod target_core_file iscsi_target_mod scsi_transport_iscsi libiscsi \
         libiscsi_tcp iscsi_tcp sd_mod sg dm-mod dm-multipath dm-service-time dm-round-robin \
         dm-queue-length scsi_dh_alua; do
  modprobe $m || echo "modprobe $m failed"
done
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add > /dev/null 2>&1
udevadm settle -t 30

sec "LIO target as NETAPP LUN C-Mode"
T=/sys/kernel/config/target
IQN=iqn.1992-08.com.netapp:sn.nodelab:vs.1
B=$T/core/fileio_0/netapp1
truncate -s 64M /run/netapp1.img
mkdir -p $B
echo "fd_dev_name=/run/netapp1.img,fd_dev_size=67108864" > $B/control
echo nodelab-netapp1 > $B/wwn/vpd_unit_serial
echo NETAPP > $B/wwn/vendor_id
echo "LUN C-Mode" > $B/wwn/product_id
echo 1 > $B/enable
echo "vendor_id=$(cat $B/wwn/vendor_id) product_id=$(cat $B/wwn/product_id)"
tp=$T/iscsi/$IQN/tpgt_1
mkdir -p $tp/lun/lun_0
ln -s $B $tp/lun/lun_0/netapp1
mkdir $tp/np/10.20.0.1:3260 $tp/np/10.20.0.2:3260
echo 0 > $tp/attrib/authentication
echo 1 > $tp/attrib/generate_node_acls
echo 1 > $tp/attrib/cache_dynamic_acls
echo 0 > $tp/attrib/demo_mode_write_protect
echo 1 > $tp/enable

sec "initiator"
mkdir -p /run/lock/iscsi /etc/multipath
rm -f /etc/multipath.conf
iscsid
sleep 1
iscsiadm -m discovery -t sendtargets -p 10.20.0.1:3260
iscsiadm -m node -T $IQN --login
udevadm settle -t 30
dev() { basename "$(readlink -f /dev/disk/by-path/ip-$1-iscsi-$IQN-lun-0)"; }
wait_for 20 test -b /dev/disk/by-path/ip-10.20.0.2:3260-iscsi-$IQN-lun-0
DA=$(dev 10.20.0.1:3260)
DB=$(dev 10.20.0.2:3260)
echo "paths: $DA $DB; inquiry: $(cat /sys/block/$DA/device/vendor),$(cat /sys/block/$DA/device/model)"
# Debian ships no multipath.conf: find_multipaths strict multipaths only known WWIDs.
multipath -a /dev/$DA
multipathd
wait_for 30 sh -c "ls /sys/block/$DA/holders | grep -q dm && ls /sys/block/$DB/holders | grep -q dm"

# conf_phase NAME [TEXT]: /etc/multipath.conf is TEXT (none when empty), multipathd reloads it
conf_phase() {
  phase "$1"
  if [ -n "$2" ]; then printf '%s\n' "$2" > /etc/multipath.conf; else rm -f /etc/multipath.conf; fi
  multipathd reconfigure
  sleep 2
  wait_for 30 sh -c "ls /sys/block/$DA/holders | grep -q dm && ls /sys/block/$DB/holders | grep -q dm"
  udevadm settle -t 30
  collect iscsi
  evidence multipathd-maps.txt multipathd show maps format '%n %w %d %N %Q %F'
  evidence multipathd-paths.txt multipathd show paths format '%d %m %t %T %P %c'
  evidence multipath.conf cat /etc/multipath.conf
}
conf_phase no-conf
conf_phase defaults-no-path-retry-30 'defaults {
    no_path_retry 30
}'
conf_phase overrides-no-path-retry-30 'overrides {
    no_path_retry 30
}'
conf_phase defaults-user-friendly-names 'defaults {
    user_friendly_names yes
}'
conf_phase overrides-user-friendly-names 'overrides {
    user_friendly_names yes
}'
conf_phase defaults-path-checker-directio 'defaults {
    path_checker directio
}'
conf_phase overrides-path-checker-directio 'overrides {
    path_checker directio
    detect_checker no
}'
