#!/bin/busybox sh
# /init of the node lab's initramfs: load what reaches the ext4 root on virtio-blk, switch to it.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk \
         crc16 mbcache jbd2 crc32c_generic ext4; do
  insmod /lib/modules/$m.ko || echo "nodelab initramfs: insmod $m failed"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
mount -t ext4 -o rw /dev/vda /newroot || { echo "nodelab initramfs: root mount failed"; ls /dev; poweroff -f; }
umount /proc /sys /dev
exec switch_root /newroot /lab-init.sh
