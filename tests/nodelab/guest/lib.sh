# Helpers the scenario scripts source. A scenario is a list of phases; each phase sets up a real
# configuration, then collects with the project's own collection script exactly as a node
# inspection pod would, and leaves evidence files next to it. Everything lands in $O/<phase>/.
#
#   phase NAME            start a phase (creates $P, appends NAME to $O/phases.txt)
#   collect mount|iscsi   run /lab/collect-<kind>.sh like the debug pod: in a private mount
#                         namespace with the root rbind-mounted at /host (the pod's hostPath),
#                         reading /proc/1/* of PID 1 (this guest's init, its mount namespace)
#   evidence NAME CMD...  CMD's output (and stderr) into $P/NAME
#   kubelet_dir UID PLUGIN VOLUME   a kubelet pod-volume directory (created), printed
O=/out/$SCENARIO
mkdir -p "$O"
: > "$O/phases.txt"
now() { cut -d' ' -f1 /proc/uptime; }
sec() { echo; echo "##### $* (t=$(now))"; }
phase() {
  PHASE=$1
  P=$O/$1
  mkdir -p "$P"
  echo "$1" >> "$O/phases.txt"
  sec "phase $1"
}
collect() {
  t0=$(now)
  [ -f "$O/collect-$1.sh" ] || cp "/lab/collect-$1.sh" "$O/"  # the script as run, for the host to compare
  unshare -m sh -c "mount --rbind / /host && exec sh /lab/collect-$1.sh" > "$P/collect-$1.txt" 2> "$P/collect-$1.err"
  echo "collect $1 rc=$? took $(awk -v a="$t0" '{printf "%.1f", $1 - a}' /proc/uptime)s" | tee -a "$O/timings.txt"
}
evidence() {
  name=$1
  shift
  "$@" > "$P/$name" 2>&1
}
kubelet_dir() {
  d=/var/lib/kubelet/pods/$1/volumes/$2/$3
  mkdir -p "$d"
  echo "$d"
}
# wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds; 1 when the time runs out.
wait_for() {
  limit=$1
  shift
  end=$(awk -v a="$(now)" -v l="$limit" 'BEGIN{print a + l}')
  while ! "$@" >/dev/null 2>&1; do
    if awk -v n="$(now)" -v e="$end" 'BEGIN{exit !(n > e)}'; then
      echo "wait_for: timed out after ${limit}s: $*"
      return 1
    fi
    sleep 0.5
  done
  echo "wait_for: ok at t=$(now): $*"
}
