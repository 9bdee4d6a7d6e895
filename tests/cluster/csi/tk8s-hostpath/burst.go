// The burst-credit class parameter, tk8s.io/burst: "iops=N,credits-seconds=S". A volume of such
// a class behaves like a cloud disk that sells a rate it keeps only while a credit bucket lasts
// (AWS gp2's I/O credits, Azure's credit-based bursting): reads and writes run at full speed
// while the bucket holds credit, then at most N per second.
//
// The bucket holds S credit-seconds and starts full. Every second in which the volume serves
// reads or writes spends one (the gap between two I/Os shorter than a second counts as busy);
// every idle second (a gap of a second or more) earns one back, up to S. With the bucket empty,
// each read and write waits for its turn in a pace of N per second. Real buckets count I/Os
// above a baseline rather than busy seconds; time is what a test can rely on.
//
// The volume is published through the driver's FUSE daemon (lazydaemon.go's process, with
// --burst): a plain passthrough to the volume's directory, nothing kept in its memory, so fsync
// and a power-off behave as on the plain class. Files are opened with FOPEN_DIRECT_IO, so the
// node's page cache never answers a read for the volume and every I/O meets the bucket. The
// backing files are opened without O_DIRECT (FUSE's buffers are not aligned for it): data
// reaches the node's disk through its page cache, as on the plain class.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

const burstParam = "tk8s.io/burst"

// burstSpec is a parsed tk8s.io/burst value.
type burstSpec struct {
	IOPS          int
	CreditSeconds int
}

func (b burstSpec) String() string {
	return fmt.Sprintf("iops=%d,credits-seconds=%d", b.IOPS, b.CreditSeconds)
}

// parseBurst reads "iops=N,credits-seconds=S" (spaces allowed, both keys required, both > 0).
func parseBurst(value string) (burstSpec, error) {
	var spec burstSpec
	seen := map[string]bool{}
	for _, part := range strings.Split(value, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		key, val = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(val)
		n, err := strconv.Atoi(val)
		if !ok || err != nil || n <= 0 {
			return spec, fmt.Errorf("%q is not key=positive integer", strings.TrimSpace(part))
		}
		switch key {
		case "iops":
			spec.IOPS = n
		case "credits-seconds":
			spec.CreditSeconds = n
		default:
			return spec, fmt.Errorf("unknown key %q (known: iops, credits-seconds)", key)
		}
		seen[key] = true
	}
	if !seen["iops"] || !seen["credits-seconds"] {
		return spec, fmt.Errorf("%q needs both iops=N and credits-seconds=S", value)
	}
	return spec, nil
}

// burstParams applies tk8s.io/burst to a new volume's meta: a Filesystem volume with no other
// medium (the daemon is a passthrough to the volume's directory).
func burstParams(params map[string]string, block bool, meta *volumeMeta) error {
	value, ok := params[burstParam]
	if !ok {
		return nil
	}
	spec, err := parseBurst(value)
	switch {
	case err != nil:
		return status.Errorf(codes.InvalidArgument, "%s: %v", burstParam, err)
	case block || meta.Memory || meta.LazyFS:
		return status.Errorf(codes.InvalidArgument, "%s is for Filesystem volumes without %s", burstParam, mediumParam)
	}
	meta.Burst = spec.String()
	return nil
}

// burstBucket is one published volume's credit bucket and pace.
type burstBucket struct {
	mu       sync.Mutex
	interval time.Duration // 1/IOPS
	capacity float64       // credits-seconds
	credits  float64
	last     time.Time // the previous I/O
	next     time.Time // the earliest start of the next paced I/O
	spentAt  time.Time // when the bucket last ran dry (for the log)
}

func newBurstBucket(spec burstSpec) *burstBucket {
	return &burstBucket{
		interval: time.Second / time.Duration(spec.IOPS),
		capacity: float64(spec.CreditSeconds),
		credits:  float64(spec.CreditSeconds),
	}
}

// wait spends the time since the previous I/O (or earns the idle time back) and, with the
// bucket empty, waits for this I/O's turn in the pace.
func (b *burstBucket) wait() {
	b.mu.Lock()
	now := time.Now()
	if !b.last.IsZero() {
		if gap := now.Sub(b.last).Seconds(); gap < 1 {
			b.credits -= gap
		} else {
			b.credits += gap
		}
		b.credits = min(max(b.credits, 0), b.capacity)
	}
	b.last = now
	if b.credits > 0 {
		b.mu.Unlock()
		return
	}
	if b.spentAt.IsZero() || now.Sub(b.spentAt) > time.Minute {
		b.spentAt = now
		fmt.Fprintf(os.Stderr, "burst: credits spent at %s; pacing to one I/O every %s\n", now.Format(time.RFC3339Nano), b.interval)
	}
	if b.next.Before(now) {
		b.next = now
	}
	at := b.next
	b.next = b.next.Add(b.interval)
	b.mu.Unlock()
	time.Sleep(time.Until(at))
}

// burstNode is the loopback node whose files meet the bucket.
type burstNode struct {
	fs.LoopbackNode
	bucket *burstBucket
}

var (
	_ = (fs.NodeOpener)((*burstNode)(nil))
	_ = (fs.NodeCreater)((*burstNode)(nil))
)

func (n *burstNode) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

func (n *burstNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fl := int(flags) &^ (syscall.O_DIRECT | syscall.O_APPEND | fuse.FMODE_EXEC)
	fd, err := syscall.Open(n.backingPath(), fl|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	return n.handle(fd), fuse.FOPEN_DIRECT_IO, 0
}

func (n *burstNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	fl := int(flags) &^ (syscall.O_DIRECT | syscall.O_APPEND)
	fd, err := syscall.Open(filepath.Join(n.backingPath(), name), fl|syscall.O_CREAT|syscall.O_CLOEXEC, mode)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	if caller, ok := fuse.FromContext(ctx); ok { // as the loopback does: the file is the caller's
		_ = syscall.Fchown(fd, int(caller.Uid), int(caller.Gid))
	}
	ch, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno != 0 {
		syscall.Close(fd)
		return nil, nil, 0, errno
	}
	return ch, n.handle(fd), fuse.FOPEN_DIRECT_IO, 0
}

func (n *burstNode) handle(fd int) *burstHandle {
	return &burstHandle{LoopbackFile: fs.NewLoopbackFileFromOS(os.NewFile(uintptr(fd), n.backingPath())), bucket: n.bucket}
}

// burstHandle is the loopback file with reads and writes paced by the bucket.
type burstHandle struct {
	*fs.LoopbackFile
	bucket *burstBucket
}

func (h *burstHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.bucket.wait()
	return h.LoopbackFile.Read(ctx, dest, off)
}

func (h *burstHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.bucket.wait()
	return h.LoopbackFile.Write(ctx, data, off)
}

// burstRoot is the daemon's root for --burst: loopback nodes that share one bucket.
func burstRoot(backing string, st *syscall.Stat_t, spec burstSpec) (*fs.LoopbackRoot, fs.InodeEmbedder) {
	bucket := newBurstBucket(spec)
	root := &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}
	root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
		return &burstNode{LoopbackNode: fs.LoopbackNode{RootData: r}, bucket: bucket}
	}
	node := root.NewNode(root, nil, "", st)
	root.RootNode = node
	return root, node
}
