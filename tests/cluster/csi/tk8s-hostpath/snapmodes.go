// Snapshot modes (class parameter tk8s.io/snapshot-mode) and the btrfs volume filesystem.
//
// The harness mounts a btrfs at <statedir>/volumes. Each Filesystem volume is a subvolume there,
// each Block volume an image file in it. How a snapshot is cut depends on the source volume's
// class:
//
//   - atomic (the default): one instant. A Filesystem volume gets a read-only btrfs snapshot
//     (volumes/.snapshots/<id>), a Block volume a reflink of its image
//     (volumes/.snapshots/<id>.img, FICLONE: the whole file at once). A restore or a clone is a
//     writable btrfs snapshot (or a reflink) of its source: again one instant. A memory volume
//     (tk8s.io/medium: Memory, on a tmpfs) is tar'ed as before: it is not on the btrfs.
//   - copy: the volume is copied while it stays in use, as tar/rsync-based drivers do: file by
//     file with copyFilePause after each regular file (Block: front to back in copyChunk
//     pieces with copyChunkPause after each), into snapshots/<id>/ (Block: snapshots/<id>.img)
//     on the root filesystem. creationTime is when the copy started.
//   - ready-early: the copy of `copy`, but CreateSnapshot answers readyToUse=true at once and the
//     copy goes on in the background; a restore waits until it is done.
//   - stale: cut like atomic, but a restore gets the source volume's previous snapshot (the one
//     cut before it; the one asked for when there is none): a wrong handle or a broken chain.
//
// A snapshot of a frozen volume filesystem (snapshot check --freeze) cannot be a btrfs
// snapshot: creating one waits for the thaw. Nothing can change while it is frozen, so the
// driver then tars it to the root filesystem instead, which is the same single instant.
package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const (
	snapshotModeParam = "tk8s.io/snapshot-mode"
	modeAtomic        = "atomic"
	modeCopy          = "copy"
	modeReadyEarly    = "ready-early"
	modeStale         = "stale"

	// The fixed pauses of the copy modes (documented in tests/cluster/README.md): long enough
	// that a writer lands writes between two files (or two distant ranges of a device).
	copyFilePause  = 1 * time.Second
	copyChunk      = 4 << 20
	copyChunkPause = 20 * time.Millisecond

	btrfsMagic = 0x9123683E // statfs f_type of btrfs (linux/magic.h BTRFS_SUPER_MAGIC)
	subvolIno  = 256        // the root directory of every btrfs subvolume
)

// copiesRunning holds the IDs of the ready-early copies this process runs in the background.
var copiesRunning sync.Map

// Snapshot formats (snapMeta.Format); "" is a snapshot of an older driver (tar or sparse image
// in snapshots/).
const (
	fmtSubvol  = "subvol"  // volumes/.snapshots/<id>, a read-only btrfs snapshot
	fmtReflink = "reflink" // volumes/.snapshots/<id>.img, a reflink of a Block image
	fmtTar     = "tar"     // snapshots/<id>.tar.gz
	fmtDir     = "dir"     // snapshots/<id>/, a file-by-file copy
	fmtImg     = "img"     // snapshots/<id>.img, a copy of a Block image
)

// The tk8s.io/ parameters the driver knows; any other tk8s.io/ key is refused, so a typo fails
// the test that made the class instead of giving an honest volume silently.
var knownParams = map[string]bool{
	mediumParam:        true,
	fsyncParam:         true,
	snapshotModeParam:  true,
	nodeLocalParam:     true,
	nodeLocalNodeParam: true,
	burstParam:         true,
}

// checkParams refuses unknown tk8s.io/ keys and snapshot modes, and returns the volume's
// snapshot mode ("" for the default, atomic).
func checkParams(params map[string]string) (string, error) {
	var unknown []string
	for k := range params {
		if strings.HasPrefix(k, "tk8s.io/") && !knownParams[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", status.Errorf(codes.InvalidArgument, "unknown class parameter(s) %s (known: %s, %s, %s, %s, %s, %s)",
			strings.Join(unknown, ", "), mediumParam, fsyncParam, snapshotModeParam, nodeLocalParam, nodeLocalNodeParam, burstParam)
	}
	v, ok := params[snapshotModeParam]
	if !ok {
		return "", nil
	}
	switch mode := strings.ToLower(v); mode {
	case modeAtomic, modeCopy, modeReadyEarly, modeStale:
		return mode, nil
	case "lazy":
		return "", status.Errorf(codes.InvalidArgument, "%s: %q is planned, not implemented", snapshotModeParam, v)
	default:
		return "", status.Errorf(codes.InvalidArgument, "%s: %q is none of %s, %s, %s, %s",
			snapshotModeParam, v, modeAtomic, modeCopy, modeReadyEarly, modeStale)
	}
}

func (d *driver) snapSubvol(id string) string {
	return filepath.Join(d.stateDir, "volumes", ".snapshots", id)
}
func (d *driver) snapReflink(id string) string { return d.snapSubvol(id) + ".img" }
func (d *driver) snapDir(id string) string {
	return filepath.Join(d.stateDir, "snapshots", id)
}

// onBtrfs reports whether the volume filesystem is a btrfs (the harness mounts one).
func (d *driver) onBtrfs() bool {
	var st syscall.Statfs_t
	return syscall.Statfs(filepath.Join(d.stateDir, "volumes"), &st) == nil && uint32(st.Type) == btrfsMagic
}

// isSubvol reports whether path (not followed) is the root of a btrfs subvolume.
func isSubvol(path string) bool {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return false
	}
	var fs syscall.Statfs_t
	return st.Ino == subvolIno && syscall.Statfs(path, &fs) == nil && uint32(fs.Type) == btrfsMagic
}

// makeVolDir creates an empty Filesystem volume: a subvolume on btrfs, else a directory.
func (d *driver) makeVolDir(dir string) error {
	if d.onBtrfs() {
		return run("btrfs", "-q", "subvolume", "create", dir)
	}
	return os.MkdirAll(dir, 0o777)
}

// removeTree deletes a volume's or snapshot's directory: a subvolume (read-only ones too) with
// `btrfs subvolume delete`, anything else with RemoveAll.
func removeTree(path string) error {
	if isSubvol(path) {
		return run("btrfs", "-q", "subvolume", "delete", path)
	}
	return os.RemoveAll(path)
}

// frozen reports whether the filesystem of path is frozen (FIFREEZE answers EBUSY then). When it
// is not, the probe froze it for an instant and thaws it at once.
func frozen(path string) bool {
	const fiFreeze, fiThaw = 0xC0045877, 0xC0045878
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var arg int
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fiFreeze, uintptr(unsafe.Pointer(&arg)))
	if e == syscall.EBUSY {
		return true
	}
	if e == 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fiThaw, uintptr(unsafe.Pointer(&arg)))
	}
	return false
}

// cutAtomic cuts one instant of the volume into the snapshot and returns the format.
func (d *driver) cutAtomic(id string, src *volumeMeta) (string, error) {
	volumes := filepath.Join(d.stateDir, "volumes")
	switch {
	case src.Memory:
		return fmtTar, tarLive(d.snapTar(id), d.volDir(src.ID))
	case !d.onBtrfs():
		return "", fmt.Errorf("%s is not a btrfs: run tests/cluster/down and up to make it one", volumes)
	case frozen(volumes):
		// nothing changes while frozen, and a btrfs snapshot would wait for the thaw
		log.Printf("snapshot %s: the volume filesystem is frozen; copying it to the root filesystem", id)
		if src.Block {
			return fmtImg, copySparse(d.volImg(src.ID), d.snapImg(id))
		}
		return fmtTar, tarLive(d.snapTar(id), d.volDir(src.ID))
	}
	if err := os.MkdirAll(filepath.Join(volumes, ".snapshots"), 0o700); err != nil {
		return "", err
	}
	if src.Block {
		return fmtReflink, run("cp", "--reflink=always", d.volImg(src.ID), d.snapReflink(id))
	}
	if !isSubvol(d.volDir(src.ID)) {
		return "", fmt.Errorf("volume %s is not a btrfs subvolume (made before the volume filesystem was btrfs)", src.ID)
	}
	return fmtSubvol, run("btrfs", "-q", "subvolume", "snapshot", "-r", d.volDir(src.ID), d.snapSubvol(id))
}

// cutCopy copies the live volume slowly (see the pauses above) and returns the format.
func (d *driver) cutCopy(id string, src *volumeMeta) (string, error) {
	if src.Block {
		return fmtImg, copyImageSlow(d.volImg(src.ID), d.snapImg(id))
	}
	return fmtDir, copyTreeSlow(d.volDir(src.ID), d.snapDir(id))
}

// copyTreeSlow copies src to dst file by file in lexical order, pausing after each regular
// file, while src may be written. Each file holds what was read of it at its turn.
func copyTreeSlow(src, dst string) error {
	root, err := filepath.EvalSymlinks(src) // a memory volume's directory is a symlink
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	_ = os.RemoveAll(tmp)
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while we copied
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		to := filepath.Join(tmp, rel)
		info, err := e.Info()
		if err != nil {
			return nil
		}
		st, _ := info.Sys().(*syscall.Stat_t)
		switch {
		case e.IsDir():
			if err := os.MkdirAll(to, 0o700); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return nil
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(path, to); err != nil {
				return err
			}
			time.Sleep(copyFilePause)
		default:
			return nil // devices, fifos, sockets: not in a volume copy
		}
		if st != nil {
			_ = os.Lchown(to, int(st.Uid), int(st.Gid))
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			_ = os.Chmod(to, info.Mode().Perm()|info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
		}
		return nil
	})
	if err != nil {
		_ = os.RemoveAll(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyImageSlow copies a Block image front to back in copyChunk pieces, pausing after each;
// all-zero pieces stay holes.
func copyImageSlow(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	fail := func(err error) error { out.Close(); _ = os.Remove(tmp); return err }
	if err := out.Truncate(info.Size()); err != nil {
		return fail(err)
	}
	buf := make([]byte, copyChunk)
	for off := int64(0); off < info.Size(); off += copyChunk {
		n, err := in.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			return fail(err)
		}
		if !allZero(buf[:n]) {
			if _, err := out.WriteAt(buf[:n], off); err != nil {
				return fail(err)
			}
		}
		time.Sleep(copyChunkPause)
	}
	if err := out.Close(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// restoreSource is the snapshot a restore of sid really gets: sid itself, or for a stale-mode
// snapshot the previous snapshot of the same volume (sid when there is none). It waits for a
// ready-early copy that is still running (letting go of d.mu, which the caller holds, while it
// waits: the copy takes it to record its end), and makes the copy again when the process that
// ran it is gone (a driver restart).
func (d *driver) restoreSource(sid string) (snapMeta, error) {
	var sm snapMeta
	if err := readJSON(d.snapMeta(sid), &sm); err != nil {
		return sm, status.Errorf(codes.NotFound, "snapshot %s not found", sid)
	}
	if sm.Mode == modeStale {
		files, _ := filepath.Glob(filepath.Join(d.stateDir, "snapshots", "*.json"))
		var prev snapMeta
		for _, f := range files {
			var m snapMeta
			if readJSON(f, &m) != nil || m.SourceVolume != sm.SourceVolume || m.ID == sm.ID {
				continue
			}
			if m.CreatedNanos < sm.CreatedNanos && m.CreatedNanos > prev.CreatedNanos {
				prev = m
			}
		}
		if prev.ID != "" {
			log.Printf("stale mode: restoring snapshot %s instead of %s", prev.ID, sid)
			sm = prev
		}
	}
	for deadline := time.Now().Add(10 * time.Minute); sm.Copying; {
		if _, running := copiesRunning.Load(sm.ID); !running {
			return sm, d.finishOrphanCopy(&sm)
		}
		if time.Now().After(deadline) {
			return sm, status.Errorf(codes.Unavailable, "snapshot %s is still being copied", sm.ID)
		}
		d.mu.Unlock()
		time.Sleep(200 * time.Millisecond)
		d.mu.Lock()
		if err := readJSON(d.snapMeta(sm.ID), &sm); err != nil {
			return sm, status.Errorf(codes.NotFound, "snapshot %s not found", sm.ID)
		}
	}
	return sm, nil
}

// finishOrphanCopy ends a ready-early copy whose process is gone: when its data was completed
// (renamed into place) it is recorded as done, else the copy is made again now.
func (d *driver) finishOrphanCopy(sm *snapMeta) error {
	final := d.snapDir(sm.ID)
	if sm.Block {
		final = d.snapImg(sm.ID)
	}
	if _, err := os.Stat(final); err != nil {
		var src volumeMeta
		if err := readJSON(d.volMeta(sm.SourceVolume), &src); err != nil {
			return status.Errorf(codes.Internal, "snapshot %s: its copy was cut short and its source volume is gone", sm.ID)
		}
		log.Printf("ready-early snapshot %s: its copy was cut short (driver restart); copying again", sm.ID)
		if _, err := d.cutCopy(sm.ID, &src); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
	}
	sm.Copying = false
	if err := writeJSON(d.snapMeta(sm.ID), sm); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

// fillDir fills a new Filesystem volume's directory dir (empty, or not yet made when it is to
// be a btrfs snapshot) from a snapshot. mem: dir is a memory volume's (already made).
func (d *driver) fillFromSnapshot(dir string, sm *snapMeta, mem bool) error {
	switch sm.Format {
	case fmtSubvol:
		if mem {
			return run("cp", "-a", d.snapSubvol(sm.ID)+"/.", dir+"/")
		}
		return run("btrfs", "-q", "subvolume", "snapshot", d.snapSubvol(sm.ID), dir)
	case fmtDir:
		if err := d.ensureDir(dir, mem); err != nil {
			return err
		}
		return run("cp", "-a", d.snapDir(sm.ID)+"/.", dir+"/")
	default: // fmtTar, and snapshots of the older driver
		if err := d.ensureDir(dir, mem); err != nil {
			return err
		}
		return run("tar", "-xzf", d.snapTar(sm.ID), "-C", dir)
	}
}

// fillFromVolume fills a new Filesystem volume's directory from a source volume (a clone).
func (d *driver) fillFromVolume(dir string, src *volumeMeta, mem bool) error {
	if !mem && !src.Memory && isSubvol(d.volDir(src.ID)) {
		return run("btrfs", "-q", "subvolume", "snapshot", d.volDir(src.ID), dir)
	}
	if err := d.ensureDir(dir, mem); err != nil {
		return err
	}
	return run("cp", "-a", d.volDir(src.ID)+"/.", dir+"/")
}

func (d *driver) ensureDir(dir string, mem bool) error {
	if mem {
		return nil
	}
	return d.makeVolDir(dir)
}

// blockSnapshotImage is where a Block snapshot's image is, and whether a reflink can copy it.
func (d *driver) blockSnapshotImage(sm *snapMeta) (string, bool) {
	if sm.Format == fmtReflink {
		return d.snapReflink(sm.ID), true
	}
	return d.snapImg(sm.ID), false
}

// copyImage copies a Block image for a restore or clone: a reflink (one instant, no data
// copied) when both are on the btrfs, else a sparse copy.
func (d *driver) copyImage(src, dst string, reflink bool) error {
	if reflink && d.onBtrfs() {
		return run("cp", "--reflink=always", src, dst)
	}
	return copySparse(src, dst)
}

// removeSnapshotData deletes every form a snapshot's data can have.
func (d *driver) removeSnapshotData(id string) error {
	if err := removeTree(d.snapSubvol(id)); err != nil {
		return err
	}
	for _, p := range []string{d.snapReflink(id), d.snapTar(id), d.snapImg(id)} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return os.RemoveAll(d.snapDir(id))
}

// takeSnapshot cuts snapshot id of the source volume src in the volume's snapshot mode and
// records it. The point in time (creationTime) is when the cut starts.
func (d *driver) takeSnapshot(id string, src *volumeMeta) (*snapMeta, error) {
	mode := src.SnapshotMode
	if mode == "" {
		mode = modeAtomic
	}
	taken := time.Now()
	m := &snapMeta{ID: id, SourceVolume: src.ID, CreatedUnix: taken.Unix(), CreatedNanos: taken.UnixNano(),
		SizeBytes: src.CapacityBytes, Block: src.Block, Node: src.Node, Mode: mode}
	var err error
	switch mode {
	case modeCopy:
		m.Format, err = d.cutCopy(id, src)
	case modeReadyEarly:
		m.Format, m.Copying = fmtDir, true
		if src.Block {
			m.Format = fmtImg
		}
		if err := writeJSON(d.snapMeta(id), m); err != nil {
			return nil, err
		}
		done := *m
		copiesRunning.Store(id, true)
		go func() {
			defer copiesRunning.Delete(id)
			_, err := d.cutCopy(id, src)
			d.mu.Lock()
			defer d.mu.Unlock()
			if _, serr := os.Stat(d.snapMeta(id)); serr != nil {
				_ = d.removeSnapshotData(id) // deleted while it was copied
				return
			}
			if err != nil {
				log.Printf("ready-early snapshot %s: the copy failed: %v", id, err)
			}
			done.Copying = false
			if err := writeJSON(d.snapMeta(id), &done); err != nil {
				log.Printf("ready-early snapshot %s: %v", id, err)
			}
			log.Printf("ready-early snapshot %s: copy done after %s", id, time.Since(taken).Round(time.Millisecond))
		}()
		return m, nil
	default: // atomic, stale
		m.Format, err = d.cutAtomic(id, src)
	}
	if err != nil {
		_ = d.removeSnapshotData(id)
		return nil, err
	}
	if err := writeJSON(d.snapMeta(id), m); err != nil {
		return nil, err
	}
	log.Printf("snapshot %s of volume %s: mode %s, %s, cut in %s", id, src.ID, mode, m.Format, time.Since(taken).Round(time.Millisecond))
	return m, nil
}
