#!/bin/sh
# PID 1 of the node lab guest. Runs /lab/<name>.sh for each name in the kernel argument
# lab=a,b (or /out/<name>.sh when the host put one in the share); each writes under /out/<name>/ (virtio-9p, the host's run directory); then powers off.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mount -o remount,rw /
mkdir -p /run/lock /out
hostname nodelab
ip link set lo up
for m in 9pnet 9pnet_virtio netfs fscache 9p; do modprobe $m; done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out || echo "nodelab: 9p /out mount failed"
LAB=""
for x in $(cat /proc/cmdline); do case $x in lab=*) LAB=$(echo "${x#lab=}" | tr , ' ');; esac; done
echo "=== guest up $(uname -r) uptime=$(cut -d' ' -f1 /proc/uptime)s memtotal_kb=$(awk '/MemTotal/{print $2}' /proc/meminfo) scenarios=$LAB" | tee /out/boot.txt
for s in $LAB; do
  t0=$(cut -d' ' -f1 /proc/uptime)
  mkdir -p /out/$s
  script=/lab/$s.sh
  [ -f /out/$s.sh ] && script=/out/$s.sh  # a script put in the share wins (trying things out)
  SCENARIO=$s sh -x $script > /out/$s.log 2>&1
  rc=$?
  t1=$(cut -d' ' -f1 /proc/uptime)
  echo "=== scenario $s done rc=$rc start=${t0}s end=${t1}s" | tee -a /out/boot.txt
done
dmesg > /out/dmesg.txt
sync
umount /out
sync
echo "=== nodelab done"
poweroff -f
