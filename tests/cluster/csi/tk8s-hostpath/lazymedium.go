// The driver's side of the medium parameters: tk8s.io/medium (Memory, LazyFS) and
// tk8s.io/fsync (ignore), checked in CreateVolume, and the LazyFS daemon (lazydaemon.go) started on
// NodePublishVolume and stopped on NodeUnpublishVolume.
//
// Each LazyFS publish has a record directory <statedir>/lazyfs/<node>/<key>/ (key: a hash of
// the target path) holding mount.json (volume, target, node, pid), the control socket
// control.sock and the daemon's log daemon.log. The harness's `power-off NODE` clears the
// cache of every record of that node; `down` stops every daemon it finds there.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	mediumLazyFS = "LazyFS"
	fsyncParam   = "tk8s.io/fsync"
	fsyncIgnore  = "ignore"
)

// mediumParams applies tk8s.io/medium and tk8s.io/fsync to a new volume's meta (values match
// case-insensitively); a value or combination that models nothing is InvalidArgument.
func (d *driver) mediumParams(params map[string]string, block bool, meta *volumeMeta) error {
	medium, fsync := params[mediumParam], params[fsyncParam]
	switch {
	case medium == "":
	case strings.EqualFold(medium, mediumMemory) && !block:
		var fs syscall.Statfs_t
		if err := syscall.Statfs(filepath.Join(d.stateDir, "memory"), &fs); err != nil || fs.Type != tmpfsMagic {
			return status.Errorf(codes.FailedPrecondition, "%s is not a tmpfs: memory volumes need one", filepath.Join(d.stateDir, "memory"))
		}
		meta.Memory = true
	case strings.EqualFold(medium, mediumLazyFS) && !block:
		meta.LazyFS = true
	default:
		return status.Errorf(codes.InvalidArgument, "%s: %q is not a medium of this driver: only %q or %q, for Filesystem volumes (this is a %s volume)",
			mediumParam, medium, mediumMemory, mediumLazyFS, modeName(block))
	}
	switch {
	case fsync == "":
	case !strings.EqualFold(fsync, fsyncIgnore):
		return status.Errorf(codes.InvalidArgument, "%s: %q is not a value: only %q", fsyncParam, fsync, fsyncIgnore)
	case !meta.LazyFS:
		return status.Errorf(codes.InvalidArgument, "%s: %q needs %s: %s (elsewhere nothing could lose the data)", fsyncParam, fsync, mediumParam, mediumLazyFS)
	default:
		meta.IgnoreFsync = true
	}
	return nil
}

type lazyRecord struct {
	Volume string `json:"volume"`
	Target string `json:"target"`
	Node   string `json:"node"`
	PID    int    `json:"pid"`
	Fsync  string `json:"fsync"`
	Burst  string `json:"burst,omitempty"`
}

func (d *driver) lazyDir(target string) string {
	h := sha256.Sum256([]byte(target))
	return filepath.Join(d.stateDir, "lazyfs", d.nodeID, hex.EncodeToString(h[:8]))
}

// publishLazy starts a LazyFS daemon (its own session: it outlives a restart of the plugin)
// mounting the volume's directory at target, and waits for the mount.
func (d *driver) publishLazy(m *volumeMeta, src, target string, readonly bool) (*csi.NodePublishVolumeResponse, error) {
	dir := d.lazyDir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	logf, err := os.OpenFile(filepath.Join(dir, "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	defer logf.Close()
	args := []string{"lazyfs", "--backing", src, "--mount", target, "--control", filepath.Join(dir, "control.sock")}
	fsync := "honest"
	if m.IgnoreFsync {
		args, fsync = append(args, "--fsync=ignore"), fsyncIgnore
	}
	if m.Burst != "" {
		args = append(args, "--burst", m.Burst)
	}
	if readonly {
		args = append(args, "--ro")
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, status.Errorf(codes.Internal, "start the LazyFS daemon: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	rec := lazyRecord{Volume: m.ID, Target: target, Node: d.nodeID, PID: cmd.Process.Pid, Fsync: fsync, Burst: m.Burst}
	if err := writeJSON(filepath.Join(dir, "mount.json"), &rec); err != nil {
		_ = cmd.Process.Kill()
		return nil, status.Error(codes.Internal, err.Error())
	}
	for deadline := time.Now().Add(15 * time.Second); !isMountPoint(target); {
		select {
		case err := <-exited:
			_ = os.RemoveAll(dir)
			return nil, status.Errorf(codes.Internal, "the LazyFS daemon exited before mounting %s (%v); see %s", target, err, logf.Name())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = os.RemoveAll(dir)
			return nil, status.Errorf(codes.Internal, "the LazyFS daemon did not mount %s in 15s; see %s", target, logf.Name())
		}
	}
	log.Printf("published LazyFS volume %s at %s (daemon pid %d, fsync %s, burst %q, ro=%v)", m.ID, target, rec.PID, fsync, m.Burst, readonly)
	return &csi.NodePublishVolumeResponse{}, nil
}

// unpublishLazy stops the daemon of target, if there is one: SIGTERM unmounts (unsynced data
// is dropped, as when a page cache's machine stops); a daemon that does not exit in 10s is
// killed and its mount detached.
func (d *driver) unpublishLazy(target string) error {
	dir := d.lazyDir(target)
	var rec lazyRecord
	if readJSON(filepath.Join(dir, "mount.json"), &rec) != nil {
		return nil
	}
	if rec.PID > 0 && lazyDaemonAlive(rec.PID) {
		_ = syscall.Kill(rec.PID, syscall.SIGTERM)
		deadline := time.Now().Add(10 * time.Second)
		for lazyDaemonAlive(rec.PID) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if lazyDaemonAlive(rec.PID) {
			_ = syscall.Kill(rec.PID, syscall.SIGKILL)
		}
	}
	for isMountPoint(target) {
		if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("unmount %s: %v", target, err)
		}
	}
	log.Printf("stopped the LazyFS daemon of %s (pid %d, volume %s)", target, rec.PID, rec.Volume)
	return os.RemoveAll(dir)
}

// lazyStillPublished refuses to delete a volume that a live LazyFS daemon still serves on any
// node (the pod object can be gone before the kubelet's NodeUnpublishVolume): its daemon
// resolves names under the volume's directory, so deleting it would make the mount answer
// ENOENT for its own root, and the kubelet could then not clean its subPath mounts and never
// unpublish. The provisioner retries DeleteVolume until the unpublish is done.
func (d *driver) lazyStillPublished(id string) error {
	recs, _ := filepath.Glob(filepath.Join(d.stateDir, "lazyfs", "*", "*", "mount.json"))
	for _, f := range recs {
		var rec lazyRecord
		if readJSON(f, &rec) == nil && rec.Volume == id && lazyDaemonAlive(rec.PID) {
			return status.Errorf(codes.FailedPrecondition, "volume %s is still published under LazyFS on node %s (daemon pid %d); retry after NodeUnpublishVolume", id, rec.Node, rec.PID)
		}
	}
	return nil
}

// lazyDaemonAlive: pid is a live (not zombie) LazyFS daemon of this binary.
func lazyDaemonAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(b) == 0 {
		return false
	}
	args := strings.Split(string(b), "\x00")
	return len(args) > 1 && args[1] == "lazyfs"
}
