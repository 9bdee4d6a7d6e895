# Probe: what a kubelet in this guest would cost (tests/nodelab/README.md, "A kubelet in the
# guest?"). Boot time and memory; with /out/kubelet (lab.py run probe --put .../kubelet): how long
# the static Go binary takes to load and start under TCG. Nothing here joins a cluster.
. /lab/lib.sh
{
  echo "uptime_at_probe=$(now)"
  free -m
  echo "cpus=$(nproc)"
} > "$O/system.txt"
if [ -f /out/kubelet ]; then
  t0=$(now)
  cp /out/kubelet /run/kubelet
  echo "copy_from_9p_s=$(awk -v a="$t0" '{printf "%.2f", $1 - a}' /proc/uptime) size=$(stat -c %s /run/kubelet)" >> "$O/system.txt"
  for i in 1 2 3; do
    t0=$(now)
    /run/kubelet --version >> "$O/kubelet-version.txt" 2>&1
    echo "kubelet_version_run_${i}_s=$(awk -v a="$t0" '{printf "%.2f", $1 - a}' /proc/uptime)" >> "$O/system.txt"
  done
  # Start it as a node would (no container runtime here): time to its first log line and to the
  # point where it gives up on the missing runtime; peak RSS from /proc while it runs.
  mkdir -p /var/lib/kubelet
  t0=$(now)
  /run/kubelet --v=2 --fail-swap-on=false --container-runtime-endpoint=unix:///run/no-runtime.sock \
    --cgroups-per-qos=false --enforce-node-allocatable= > "$O/kubelet.log" 2>&1 &
  pid=$!
  peak=0
  i=0
  while kill -0 $pid 2>/dev/null && [ $i -lt 120 ]; do
    rss=$(awk '/VmRSS/{print $2}' /proc/$pid/status 2>/dev/null)
    [ -n "$rss" ] && [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 0.25
    i=$((i + 1))
  done
  kill $pid 2>/dev/null
  echo "kubelet_ran_s=$(awk -v a="$t0" '{printf "%.2f", $1 - a}' /proc/uptime) kubelet_peak_rss_kb=$peak" >> "$O/system.txt"
  free -m >> "$O/system.txt"
fi
if [ -f /out/containerd ]; then
  # containerd (the host's Debian build: same bookworm libraries): time until its socket answers.
  cp /out/containerd /run/containerd-bin
  mkdir -p /run/ctd /var/lib/ctd
  t0=$(now)
  /run/containerd-bin --root /var/lib/ctd --state /run/ctd --address /run/ctd/ctd.sock > "$O/containerd.log" 2>&1 &
  cpid=$!
  wait_for 60 test -S /run/ctd/ctd.sock
  echo "containerd_socket_s=$(awk -v a="$t0" '{printf "%.2f", $1 - a}' /proc/uptime) containerd_rss_kb=$(awk '/VmRSS/{print $2}' /proc/$cpid/status)" >> "$O/system.txt"
  kill $cpid
fi
cat "$O/system.txt"
