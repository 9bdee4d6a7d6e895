# Kerberos for the NFS scenario's sec=krb5p phases (sourced by nfs.sh, used after nfsd is up).
#
#   krb5_setup ADDR...           an MIT KDC for the realm NODELAB.TEST on this guest (kdb5_util and
#                                kadmin.local, krb5kdc on 127.0.0.1:88), a keytab with the client's
#                                host principal and an nfs principal per server address, the
#                                server's rpc.svcgssd and the client's rpc.gssd; the kernel nfsd's
#                                exports also offer krb5p
#   knfsd_krb5p_probe ADDR EXP   a sec=krb5p mount of the kernel's nfsd, its result kept as evidence
#   ganesha_start PATH...        NFS-Ganesha instead of the kernel's nfsd on port 2049, serving PATH...
#                                with sec=sys and sec=krb5p
#
# Names resolve through /etc/hosts only (no DNS in the guest): the guest is nodelab.nodelab.test
# (rpc.gssd looks for host/<its canonical name> in the keytab for root's machine credentials) and
# server address 10.10.0.N is nfsN.nodelab.test (rpc.gssd asks the KDC for nfs/<the name of the
# address it mounts>). The kernel nfsd's side: Debian's nfs-kernel-server has no gssproxy; its
# rpc-svcgssd.service runs rpc.svcgssd when /etc/krb5.keytab exists and gssproxy does not run,
# which is what runs here (the kernel's legacy upcall, /proc/net/rpc/auth.rpcsec.init). It
# establishes krb5 contexts (sec=krb5 and krb5i mounts work), but on linux-image-6.1.0-55 and -57
# (6.1.192-1, 6.1.192-3) the kernel's nfsd answers every krb5p call GARBAGE_ARGS after a good
# unwrap (6.1.0-54, 6.1.190-1, serves krb5p); so NFS-Ganesha serves the krb5p phases.
REALM=NODELAB.TEST
DOMAIN=nodelab.test

krb5_setup() {
  t0=$(now)
  {
    echo "127.0.0.1 localhost"
    echo "127.0.1.1 nodelab.$DOMAIN nodelab"
    for addr in "$@"; do echo "$addr nfs${addr##*.}.$DOMAIN"; done
  } > /etc/hosts
  cat > /etc/krb5.conf <<EOF
[libdefaults]
	default_realm = $REALM
	dns_lookup_kdc = false
	dns_lookup_realm = false
	dns_canonicalize_hostname = false
	rdns = false
	# rpc.svcgssd and Ganesha accept for nfs@<their hostname>: let them use any nfs/ key.
	ignore_acceptor_hostname = true
[realms]
	$REALM = {
		kdc = 127.0.0.1
		admin_server = 127.0.0.1
	}
[domain_realm]
	.$DOMAIN = $REALM
	$DOMAIN = $REALM
EOF
  cat > /etc/krb5kdc/kdc.conf <<EOF
[kdcdefaults]
	kdc_ports = 88
	kdc_tcp_ports = 88
[realms]
	$REALM = {
		database_name = /var/lib/krb5kdc/principal
		key_stash_file = /etc/krb5kdc/stash
		acl_file = /etc/krb5kdc/kadm5.acl
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:$O/krb5kdc.log
EOF
  : > /etc/krb5kdc/kadm5.acl
  mkdir -p /var/lib/krb5kdc
  kdb5_util create -s -r "$REALM" -P nodelab-master-key
  principals="host/nodelab.$DOMAIN"
  for addr in "$@"; do principals="$principals nfs/nfs${addr##*.}.$DOMAIN"; done
  for p in $principals; do kadmin.local -q "addprinc -randkey $p"; done
  rm -f /etc/krb5.keytab
  kadmin.local -q "ktadd -k /etc/krb5.keytab $principals"
  klist -ke /etc/krb5.keytab
  krb5kdc
  modprobe rpcsec_gss_krb5
  # Foreground with their logs in the share (there is no syslog in the guest).
  rpc.svcgssd -f -v > "$O/rpc.svcgssd.log" 2>&1 &
  rpc.gssd -f -v > "$O/rpc.gssd.log" 2>&1 &
  sed -i 's/(rw,/(sec=sys:krb5p,rw,/g' /etc/exports
  exportfs -ra
  exportfs -v
  # With krb5p, root on the client is the host principal, which the server maps to nobody.
  chmod 1777 /srv/nfs/vol*
  wait_for 10 sh -c 'kinit -k host/nodelab.'"$DOMAIN"' && kdestroy'
  echo "krb5 setup took $(awk -v a="$t0" '{printf "%.1f", $1 - a}' /proc/uptime)s" | tee -a "$O/timings.txt"
}

# knfsd_krb5p_probe ADDR EXPORT: whether the kernel's nfsd serves a sec=krb5p mount (evidence
# only, $O/knfsd-krb5p.txt; nothing depends on it).
knfsd_krb5p_probe() {
  mkdir -p /mnt/probe
  timeout -s KILL 30 mount -t nfs -o vers=4.1,sec=krb5p "$1:$2" /mnt/probe
  rc=$?
  { echo "kernel $(uname -r): mount -o vers=4.1,sec=krb5p $1:$2 rc=$rc"; grep /mnt/probe /proc/mounts; } > "$O/knfsd-krb5p.txt"
  cat "$O/knfsd-krb5p.txt"
  [ $rc -eq 0 ] && umount /mnt/probe
  sleep 1
}

# ganesha_start EXPORT...: the kernel's nfsd stops serving, NFS-Ganesha (FSAL VFS) serves the
# same directories at the same paths on port 2049, NFSv4.1 and 4.2 with sec=sys and sec=krb5p
# (its own RPCSEC_GSS, the keytab's nfs/ keys), no grace period.
ganesha_start() {
  t0=$(now)
  rpc.nfsd 0
  mkdir -p /var/lib/nfs/ganesha /run/ganesha
  {
    cat <<CONF
NFS_CORE_PARAM { Protocols = 4; Enable_NLM = false; Enable_RQUOTA = false; NFS_Port = 2049; }
NFSV4 { Graceless = true; Lease_Lifetime = 10; Minor_Versions = 1, 2; }
NFS_KRB5 { Active_krb5 = true; PrincipalName = nfs; KeytabPath = /etc/krb5.keytab; }
CONF
    n=0
    for path in "$@"; do
      n=$((n + 1))
      echo "EXPORT { Export_Id = $n; Path = $path; Pseudo = $path; Access_Type = RW; Squash = No_Root_Squash; SecType = sys, krb5p; Protocols = 4; FSAL { Name = VFS; } }"
    done
  } > /etc/ganesha/lab.conf
  ganesha.nfsd -f /etc/ganesha/lab.conf -L "$O/ganesha.log" -N NIV_EVENT -p /run/ganesha/ganesha.pid
  wait_for 30 sh -c 'ss -ltnH "( sport = :2049 )" | grep -q LISTEN'
  echo "ganesha start took $(awk -v a="$t0" '{printf "%.1f", $1 - a}' /proc/uptime)s" | tee -a "$O/timings.txt"
}
