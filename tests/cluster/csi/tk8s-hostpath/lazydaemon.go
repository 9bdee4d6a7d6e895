// The LazyFS medium (class parameter tk8s.io/medium: LazyFS): our own small FUSE file system
// on the model of Jepsen's LazyFS (not its code). `tk8s-hostpath lazyfs` mounts it at a target
// directory over a backing directory (the volume's). Metadata (create, mkdir, unlink, rename,
// link, symlink, chmod/chown, utimes, truncate, readdir) passes straight through to the backing
// directory. File data written is kept in this process's memory, as dirty 4 KiB pages per
// backing inode, and overlays the backing file for reads and the file size, until an fsync or
// fdatasync of that file writes the file's dirty pages to the backing file and fsyncs it. The
// control socket's `clear-cache` drops every dirty page: what was not fsynced is lost, as at a
// power cut. With --fsync=ignore fsync answers success and keeps the data dirty (a cache that
// lies).
//
// The kernel must never serve or keep data on its own: every file is opened with
// FOPEN_DIRECT_IO (no page cache, so nothing the daemon dropped can come back from it), the
// writeback cache is never enabled, FUSE passthrough is never offered (the file handles do not
// implement PassthroughFd), attributes are not cached (the size depends on the dirty pages),
// and copy_file_range is refused (the kernel then copies through read and write).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

const lazyPage = 4096

// lazyFile is the cached state of one backing inode: its dirty pages (each a full page: the
// backing bytes read in on first write, then overwritten) and its logical size.
type lazyFile struct {
	mu    sync.Mutex
	pages map[int64][]byte // page index -> lazyPage bytes
	size  int64            // logical size while dirty (>= backing size unless truncated)
	opens int
	ino   uint64
	fd    int // a dup of the first handle's backing fd, kept while the state lives (syncAll)
}

type lazyFS struct {
	mu          sync.Mutex
	files       map[uint64]*lazyFile // by backing inode number
	orphans     map[*lazyFile]bool   // unlinked while open: still readable through their handles
	ignoreFsync bool
	root        string
}

func (l *lazyFS) get(ino uint64, fd int) (*lazyFile, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.files[ino]
	if f == nil {
		dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		f = &lazyFile{pages: map[int64][]byte{}, ino: ino, fd: dup}
		l.files[ino] = f
	}
	f.opens++
	return f, nil
}

func (l *lazyFS) put(f *lazyFile) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f.opens--
	if f.opens > 0 {
		return
	}
	f.mu.Lock()
	clean := len(f.pages) == 0
	f.mu.Unlock()
	if l.orphans[f] || clean && l.files[f.ino] == f {
		delete(l.orphans, f)
		if l.files[f.ino] == f {
			delete(l.files, f.ino)
		}
		syscall.Close(f.fd)
	}
}

// forget detaches the state of a backing inode that lost its last name, so a new file that
// reuses the inode number starts clean; open handles keep the old state.
func (l *lazyFS) forget(ino uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.files[ino]; f != nil {
		delete(l.files, ino)
		if f.opens > 0 {
			l.orphans[f] = true
		} else {
			syscall.Close(f.fd)
		}
	}
}

// clearCache drops every dirty page and returns what it dropped, one line per file.
func (l *lazyFS) clearCache() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	drop := func(f *lazyFile, orphan bool) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.pages) == 0 {
			return
		}
		name := inoPath(l.root, f.ino)
		if orphan {
			name = "(unlinked)"
		}
		out = append(out, fmt.Sprintf("%s: %d dirty pages (%d bytes)", name, len(f.pages), int64(len(f.pages))*lazyPage))
		f.pages = map[int64][]byte{}
		f.size = 0
	}
	for _, f := range l.files {
		drop(f, false)
	}
	for f := range l.orphans {
		drop(f, true)
	}
	for ino, f := range l.files {
		if f.opens == 0 {
			delete(l.files, ino)
			syscall.Close(f.fd)
		}
	}
	sort.Strings(out)
	return out
}

// syncAll writes back every dirty page, fsync: ignore or not: a clean shutdown (unmount at
// NodeUnpublishVolume) loses nothing, as an unmount writes back a page cache. Only
// clear-cache loses data.
func (l *lazyFS) syncAll() (files int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	all := []*lazyFile{}
	for _, f := range l.files {
		all = append(all, f)
	}
	for f := range l.orphans {
		all = append(all, f)
	}
	for _, f := range all {
		f.mu.Lock()
		dirty := len(f.pages) > 0
		f.mu.Unlock()
		if !dirty {
			continue
		}
		files++
		fd := f.fd
		if mode, e := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); e == nil && mode&syscall.O_ACCMODE == syscall.O_RDONLY {
			if fd, e = syscall.Open(fmt.Sprintf("/proc/self/fd/%d", f.fd), syscall.O_WRONLY|syscall.O_CLOEXEC, 0); e != nil {
				err = e
				continue
			}
			defer syscall.Close(fd)
		}
		if e := f.sync(fd); e != nil {
			err = e
		}
	}
	return files, err
}

// inoPath finds a name of a backing inode, for the clear-cache report only.
func inoPath(root string, ino uint64) string {
	found := fmt.Sprintf("inode %d", ino)
	_ = filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Ino == ino && fi.Mode().IsRegular() {
				found, _ = filepath.Rel(root, p)
				return filepath.SkipAll
			}
		}
		return nil
	})
	return found
}

// backingSize is the size of the backing file.
func backingSize(fd int) (int64, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

// sizeLocked is the logical size (f.mu held).
func (f *lazyFile) sizeLocked(backing int64) int64 {
	if len(f.pages) == 0 {
		return backing
	}
	return f.size
}

func (f *lazyFile) write(fd int, data []byte, off int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	bsize, err := backingSize(fd)
	if err != nil {
		return err
	}
	if len(f.pages) == 0 {
		f.size = bsize
	}
	for done := 0; done < len(data); {
		pos := off + int64(done)
		idx, in := pos/lazyPage, pos%lazyPage
		p := f.pages[idx]
		if p == nil {
			p = make([]byte, lazyPage)
			if idx*lazyPage < f.size { // the page's current bytes: backing below the logical size
				n, _ := syscall.Pread(fd, p, idx*lazyPage)
				if lim := f.size - idx*lazyPage; int64(n) > lim {
					clear(p[lim:])
				}
			}
			f.pages[idx] = p
		}
		done += copy(p[in:], data[done:])
	}
	if end := off + int64(len(data)); end > f.size {
		f.size = end
	}
	return nil
}

func (f *lazyFile) read(fd int, dest []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	bsize, err := backingSize(fd)
	if err != nil {
		return 0, err
	}
	size := f.sizeLocked(bsize)
	if off >= size {
		return 0, nil
	}
	if int64(len(dest)) > size-off {
		dest = dest[:size-off]
	}
	n := 0
	if off < bsize {
		n, err = syscall.Pread(fd, dest, off)
		if err != nil {
			return 0, err
		}
	}
	clear(dest[n:]) // beyond the backing file: zeros unless a dirty page says otherwise
	for done := 0; done < len(dest); {
		pos := off + int64(done)
		idx, in := pos/lazyPage, pos%lazyPage
		chunk := min(int64(len(dest)-done), lazyPage-in)
		if p := f.pages[idx]; p != nil {
			copy(dest[done:done+int(chunk)], p[in:in+chunk])
		}
		done += int(chunk)
	}
	return len(dest), nil
}

// truncate passes through at once (as metadata does) and trims the dirty pages.
func (f *lazyFile) truncate(path string, size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := syscall.Truncate(path, size); err != nil {
		return err
	}
	for idx, p := range f.pages {
		if idx*lazyPage >= size {
			delete(f.pages, idx)
		} else if end := (idx + 1) * lazyPage; end > size {
			clear(p[size-idx*lazyPage:])
		}
	}
	f.size = size
	return nil
}

// sync writes the dirty pages to the backing file and fsyncs it.
func (f *lazyFile) sync(fd int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pages) > 0 {
		idxs := make([]int64, 0, len(f.pages))
		for idx := range f.pages {
			idxs = append(idxs, idx)
		}
		sort.Slice(idxs, func(i, j int) bool { return idxs[i] < idxs[j] })
		for _, idx := range idxs {
			n := min(int64(lazyPage), f.size-idx*lazyPage)
			if n <= 0 {
				continue
			}
			if _, err := syscall.Pwrite(fd, f.pages[idx][:n], idx*lazyPage); err != nil {
				return err
			}
		}
		if bsize, err := backingSize(fd); err == nil && bsize < f.size {
			if err := syscall.Ftruncate(fd, f.size); err != nil {
				return err
			}
		}
		f.pages = map[int64][]byte{}
	}
	return syscall.Fsync(fd)
}

// lazyNode is a loopback node whose files go through the cache.
type lazyNode struct {
	fs.LoopbackNode
	l *lazyFS
}

var (
	_ = (fs.NodeOpener)((*lazyNode)(nil))
	_ = (fs.NodeCreater)((*lazyNode)(nil))
	_ = (fs.NodeGetattrer)((*lazyNode)(nil))
	_ = (fs.NodeSetattrer)((*lazyNode)(nil))
	_ = (fs.NodeUnlinker)((*lazyNode)(nil))
	_ = (fs.NodeRenamer)((*lazyNode)(nil))
	_ = (fs.NodeFsyncer)((*lazyNode)(nil))
	_ = (fs.NodeCopyFileRanger)((*lazyNode)(nil))
)

func (n *lazyNode) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(n.Root()))
}

// openBacking opens the backing file read-write when it can (fsync of a read-only handle
// still writes the file's dirty pages, as on Linux), without O_DIRECT, O_APPEND (the kernel
// gives append offsets itself) or O_TRUNC (done through the cache).
func openBacking(path string, flags uint32, mode uint32, create bool) (int, error) {
	fl := int(flags) &^ (syscall.O_DIRECT | syscall.O_APPEND | syscall.O_TRUNC | syscall.O_ACCMODE | fuse.FMODE_EXEC)
	if create {
		fl |= syscall.O_CREAT
	}
	fd, err := syscall.Open(path, fl|syscall.O_RDWR|syscall.O_CLOEXEC, mode)
	if err == syscall.EACCES || err == syscall.EROFS || err == syscall.ETXTBSY {
		fd, err = syscall.Open(path, fl|int(flags)&syscall.O_ACCMODE|syscall.O_CLOEXEC, mode)
	}
	return fd, err
}

func (n *lazyNode) newHandle(fd int, flags uint32) (*lazyHandle, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	lf, err := n.l.get(st.Ino, fd)
	if err != nil {
		return nil, err
	}
	h := &lazyHandle{fd: fd, f: lf, l: n.l, dsync: flags&syscall.O_DSYNC != 0} // O_SYNC includes O_DSYNC
	if flags&syscall.O_TRUNC != 0 {
		if err := h.f.truncate(fmt.Sprintf("/proc/self/fd/%d", fd), 0); err != nil {
			h.Release(context.Background())
			return nil, err
		}
	}
	return h, nil
}

func (n *lazyNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fd, err := openBacking(n.backingPath(), flags, 0, false)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	h, err := n.newHandle(fd, flags)
	if err != nil {
		syscall.Close(fd)
		return nil, 0, fs.ToErrno(err)
	}
	return h, fuse.FOPEN_DIRECT_IO, 0
}

func (n *lazyNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	p := filepath.Join(n.backingPath(), name)
	fd, err := openBacking(p, flags, mode, true)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	if caller, ok := fuse.FromContext(ctx); ok { // as the loopback does: the file is the caller's
		_ = syscall.Fchown(fd, int(caller.Uid), int(caller.Gid))
	}
	ch, errno := n.LoopbackNode.Lookup(ctx, name, out) // the inode as a lookup makes it
	if errno != 0 {
		syscall.Close(fd)
		return nil, nil, 0, errno
	}
	h, err := n.newHandle(fd, flags)
	if err != nil {
		syscall.Close(fd)
		return nil, nil, 0, fs.ToErrno(err)
	}
	return ch, h, fuse.FOPEN_DIRECT_IO, 0
}

// fixSize puts the logical size into attributes read from the backing file.
func (n *lazyNode) fixSize(out *fuse.Attr) {
	if out.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return
	}
	n.l.mu.Lock()
	f := n.l.files[out.Ino]
	n.l.mu.Unlock()
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pages) > 0 {
		out.Size = uint64(f.size)
		out.Blocks = (out.Size + 511) / 512
	}
}

func (n *lazyNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*lazyHandle); ok {
		var st syscall.Stat_t
		if err := syscall.Fstat(h.fd, &st); err != nil {
			return fs.ToErrno(err)
		}
		out.FromStat(&st)
	} else if errno := n.LoopbackNode.Getattr(ctx, nil, out); errno != 0 {
		return errno
	}
	n.fixSize(&out.Attr)
	return 0
}

func (n *lazyNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		var st syscall.Stat_t
		if err := syscall.Stat(n.backingPath(), &st); err != nil {
			return fs.ToErrno(err)
		}
		n.l.mu.Lock()
		f := n.l.files[st.Ino]
		n.l.mu.Unlock()
		var err error
		if f != nil {
			err = f.truncate(n.backingPath(), int64(size))
		} else {
			err = syscall.Truncate(n.backingPath(), int64(size))
		}
		if err != nil {
			return fs.ToErrno(err)
		}
		in.Valid &^= fuse.FATTR_SIZE
	}
	if errno := n.LoopbackNode.Setattr(ctx, nil, in, out); errno != 0 {
		return errno
	}
	n.fixSize(&out.Attr)
	return 0
}

// lastLink returns the inode of a regular file with one link left, else 0.
func lastLink(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1 {
		return st.Ino
	}
	return 0
}

func (n *lazyNode) Unlink(ctx context.Context, name string) syscall.Errno {
	ino := lastLink(filepath.Join(n.backingPath(), name))
	errno := n.LoopbackNode.Unlink(ctx, name)
	if errno == 0 && ino != 0 {
		n.l.forget(ino)
	}
	return errno
}

func (n *lazyNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	var ino uint64
	if np, ok := newParent.(*lazyNode); ok && flags&unix.RENAME_EXCHANGE == 0 {
		ino = lastLink(filepath.Join(np.backingPath(), newName))
	}
	errno := n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
	if errno == 0 && ino != 0 {
		n.l.forget(ino)
	}
	return errno
}

// Fsync of a directory (metadata passed through already) fsyncs the backing directory; a
// file's goes to its handle.
func (n *lazyNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if h, ok := fh.(*lazyHandle); ok {
		return h.Fsync(ctx, flags)
	}
	fd, err := syscall.Open(n.backingPath(), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fs.ToErrno(err)
	}
	defer syscall.Close(fd)
	if n.l.ignoreFsync {
		return 0
	}
	return fs.ToErrno(syscall.Fsync(fd))
}

func (n *lazyNode) CopyFileRange(context.Context, fs.FileHandle, uint64, *fs.Inode, fs.FileHandle, uint64, uint64, uint64) (uint32, syscall.Errno) {
	return 0, syscall.EOPNOTSUPP
}

// lazyHandle is an open file: a backing fd plus the inode's cached state.
type lazyHandle struct {
	mu sync.Mutex
	fd int
	f  *lazyFile
	l  *lazyFS
	// Opened O_DSYNC or O_SYNC: each write is durable when it returns. With FOPEN_DIRECT_IO
	// the kernel leaves that to us (it sends no FSYNC after such a write).
	dsync bool
}

var (
	_ = (fs.FileReader)((*lazyHandle)(nil))
	_ = (fs.FileWriter)((*lazyHandle)(nil))
	_ = (fs.FileFsyncer)((*lazyHandle)(nil))
	_ = (fs.FileFlusher)((*lazyHandle)(nil))
	_ = (fs.FileReleaser)((*lazyHandle)(nil))
)

func (h *lazyHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := h.f.read(h.fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *lazyHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	if err := h.f.write(h.fd, data, off); err != nil {
		return 0, fs.ToErrno(err)
	}
	if h.dsync {
		if errno := h.Fsync(ctx, 0); errno != 0 {
			return 0, errno
		}
	}
	return uint32(len(data)), 0
}

func (h *lazyHandle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	if h.l.ignoreFsync {
		return 0
	}
	fd := h.fd
	if mode, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && mode&syscall.O_ACCMODE == syscall.O_RDONLY {
		wfd, err := syscall.Open(fmt.Sprintf("/proc/self/fd/%d", fd), syscall.O_WRONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fs.ToErrno(err)
		}
		defer syscall.Close(wfd)
		fd = wfd
	}
	return fs.ToErrno(h.f.sync(fd))
}

// Flush (close) keeps the data dirty, as a page cache does.
func (h *lazyHandle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *lazyHandle) Release(ctx context.Context) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		syscall.Close(h.fd)
		h.fd = -1
		h.l.put(h.f)
	}
	return 0
}

// serveControl answers the control socket: one command per connection, `clear-cache` (as
// LazyFS's `lazyfs::clear-cache`; that spelling is accepted too) or `dirty`.
func (l *lazyFS) serveControl(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			line, _ := bufio.NewReader(c).ReadString('\n')
			switch strings.TrimPrefix(strings.TrimSpace(line), "lazyfs::") {
			case "clear-cache":
				dropped := l.clearCache()
				log.Printf("clear-cache: dropped %d files", len(dropped))
				fmt.Fprintf(c, "dropped %d files\n", len(dropped))
				for _, d := range dropped {
					fmt.Fprintln(c, d)
				}
			case "dirty":
				l.mu.Lock()
				n := 0
				for _, f := range l.files {
					f.mu.Lock()
					n += len(f.pages)
					f.mu.Unlock()
				}
				l.mu.Unlock()
				fmt.Fprintf(c, "%d dirty pages\n", n)
			default:
				fmt.Fprintf(c, "unknown command %q\n", strings.TrimSpace(line))
			}
		}()
	}
}

// lazyfsMain: tk8s-hostpath lazyfs --backing DIR --mount DIR --control SOCK [--fsync=ignore] [--ro]
func lazyfsMain(args []string) int {
	fl := flag.NewFlagSet("lazyfs", flag.ExitOnError)
	backing := fl.String("backing", "", "the directory the data lives in")
	mnt := fl.String("mount", "", "where to mount")
	ctl := fl.String("control", "", "the control socket to create")
	fsync := fl.String("fsync", "", `"ignore": fsync answers success and persists nothing`)
	ro := fl.Bool("ro", false, "mount read-only")
	burst := fl.String("burst", "", `"iops=N,credits-seconds=S": a passthrough with a credit bucket (burst.go), nothing cached`)
	_ = fl.Parse(args)
	if *backing == "" || *mnt == "" || *ctl == "" {
		log.Print("lazyfs: --backing, --mount and --control are required")
		return 2
	}
	l := &lazyFS{files: map[uint64]*lazyFile{}, orphans: map[*lazyFile]bool{}, ignoreFsync: strings.EqualFold(*fsync, "ignore"), root: *backing}
	var st syscall.Stat_t
	if err := syscall.Stat(*backing, &st); err != nil {
		log.Printf("lazyfs: %v", err)
		return 1
	}
	var rootNode fs.InodeEmbedder
	if *burst != "" {
		spec, err := parseBurst(*burst)
		if err != nil {
			log.Printf("lazyfs: --burst: %v", err)
			return 2
		}
		_, rootNode = burstRoot(*backing, &st, spec) // l stays empty: clear-cache drops nothing
	} else {
		root := &fs.LoopbackRoot{Path: *backing, Dev: uint64(st.Dev)}
		root.NewNode = func(r *fs.LoopbackRoot, _ *fs.Inode, _ string, _ *syscall.Stat_t) fs.InodeEmbedder {
			return &lazyNode{LoopbackNode: fs.LoopbackNode{RootData: r}, l: l}
		}
		rootNode = root.NewNode(root, nil, "", &st)
		root.RootNode = rootNode
	}
	zero, entry := time.Duration(0), time.Second
	opts := []string{"default_permissions"}
	if *ro {
		opts = append(opts, "ro")
	}
	_ = os.Remove(*ctl)
	ln, err := net.Listen("unix", *ctl)
	if err != nil {
		log.Printf("lazyfs: control socket: %v", err)
		return 1
	}
	server, err := fs.Mount(*mnt, rootNode, &fs.Options{
		AttrTimeout:     &zero,
		EntryTimeout:    &entry,
		NegativeTimeout: &zero,
		MountOptions: fuse.MountOptions{
			AllowOther:        true,
			DirectMountStrict: true,
			FsName:            *backing,
			Name:              "tk8s-lazyfs",
			Options:           opts,
			DisableXAttrs:     false,
		},
	})
	if err != nil {
		log.Printf("lazyfs: mount %s: %v", *mnt, err)
		return 1
	}
	go l.serveControl(ln)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		s := <-sig
		n, err := l.syncAll()
		log.Printf("lazyfs: %v: wrote back %d dirty files (error: %v); unmounting %s", s, n, err, *mnt)
		if err := server.Unmount(); err != nil {
			log.Printf("lazyfs: unmount: %v; detaching", err)
			_ = syscall.Unmount(*mnt, syscall.MNT_DETACH)
		}
	}()
	log.Printf("lazyfs: serving %s over %s (fsync %s, burst %q, control %s)", *mnt, *backing, map[bool]string{true: "ignored", false: "honest"}[l.ignoreFsync], *burst, *ctl)
	server.Wait()
	_ = ln.Close()
	_ = os.Remove(*ctl)
	log.Printf("lazyfs: %s unmounted", *mnt)
	return 0
}
