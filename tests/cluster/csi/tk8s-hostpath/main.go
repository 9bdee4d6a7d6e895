// tk8s-hostpath is a small single-node CSI driver for the kubectl-storage test cluster.
//
// It stands in for kubernetes-csi/csi-driver-host-path, which the Go module proxy reachable
// here refuses to serve ("403 This module version is not available" for every version).
// It follows the same model: a volume is a directory under --statedir, a snapshot is a
// tar.gz of that directory, a restore (or clone) unpacks (copies) into a new directory, and
// NodePublishVolume bind-mounts the directory onto the kubelet's target path, and an expansion
// only records the new size. It runs as a host process, so the bind mounts happen in the host
// mount namespace.
//
// Volume and snapshot IDs are the names the sidecars pass (pvc-<uid>, snapshot-<uid>), which
// makes every call idempotent without extra bookkeeping.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

const version = "0.1.0"

var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,250}$`)

type volumeMeta struct {
	ID            string `json:"id"`
	CapacityBytes int64  `json:"capacityBytes"`
	SourceSnap    string `json:"sourceSnapshot,omitempty"`
	SourceVol     string `json:"sourceVolume,omitempty"`
}

type snapMeta struct {
	ID           string `json:"id"`
	SourceVolume string `json:"sourceVolume"`
	CreatedUnix  int64  `json:"createdUnix"`
	SizeBytes    int64  `json:"sizeBytes"`
}

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	name, nodeID, stateDir string
	mu                     sync.Mutex
}

func (d *driver) volDir(id string) string  { return filepath.Join(d.stateDir, "volumes", id) }
func (d *driver) volMeta(id string) string { return filepath.Join(d.stateDir, "volumes", id+".json") }
func (d *driver) snapTar(id string) string {
	return filepath.Join(d.stateDir, "snapshots", id+".tar.gz")
}
func (d *driver) snapMeta(id string) string {
	return filepath.Join(d.stateDir, "snapshots", id+".json")
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// tarLive archives a volume that may be written while it is read. GNU tar exits 1 when a file
// changed as it was read ("Some files differ"): the snapshot of a live volume is crash
// consistent at best, and each file holds what tar read of it.
func tarLive(archive, dir string) error {
	out, err := exec.Command("tar", "--warning=no-file-changed", "-czf", archive, "-C", dir, ".").CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tar -czf %s -C %s: %v: %s", archive, dir, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func dirUsage(path string) (bytes, inodes int64) {
	_ = filepath.WalkDir(path, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		inodes++
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			bytes += info.Size()
		}
		return nil
	})
	return
}

// ---- identity ----

func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.name, VendorVersion: version}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{
			Type: csi.PluginCapability_Service_CONTROLLER_SERVICE}},
	}, {
		Type: &csi.PluginCapability_VolumeExpansion_{VolumeExpansion: &csi.PluginCapability_VolumeExpansion{
			Type: csi.PluginCapability_VolumeExpansion_ONLINE}},
	}}}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// ---- controller ----

func checkCaps(caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "volume capabilities missing")
	}
	for _, c := range caps {
		if c.GetBlock() != nil {
			return status.Error(codes.InvalidArgument, "block volumes are not supported")
		}
	}
	return nil
}

func (d *driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, t := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{
			Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (d *driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	id := req.GetName()
	if !validID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid volume name %q", id)
	}
	if err := checkCaps(req.GetVolumeCapabilities()); err != nil {
		return nil, err
	}
	capacity := req.GetCapacityRange().GetRequiredBytes()
	if capacity == 0 {
		capacity = 1 << 30
	}
	src := req.GetVolumeContentSource()
	d.mu.Lock()
	defer d.mu.Unlock()

	var meta volumeMeta
	if err := readJSON(d.volMeta(id), &meta); err == nil {
		if meta.CapacityBytes < capacity {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with smaller capacity", id)
		}
		return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: meta.CapacityBytes, ContentSource: src}}, nil
	}
	meta = volumeMeta{ID: id, CapacityBytes: capacity}
	dir := d.volDir(id)
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// World-writable like local-path's "mkdir -m 0777": non-root pods without fsGroup can write.
	_ = os.Chmod(dir, 0o777)
	switch {
	case src.GetSnapshot() != nil:
		sid := src.GetSnapshot().GetSnapshotId()
		if _, err := os.Stat(d.snapTar(sid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, status.Errorf(codes.NotFound, "snapshot %s not found", sid)
		}
		if err := run("tar", "-xzf", d.snapTar(sid), "-C", dir); err != nil {
			_ = os.RemoveAll(dir)
			return nil, status.Error(codes.Internal, err.Error())
		}
		meta.SourceSnap = sid
	case src.GetVolume() != nil:
		vid := src.GetVolume().GetVolumeId()
		if _, err := os.Stat(d.volMeta(vid)); err != nil {
			_ = os.RemoveAll(dir)
			return nil, status.Errorf(codes.NotFound, "source volume %s not found", vid)
		}
		if err := run("cp", "-a", d.volDir(vid)+"/.", dir+"/"); err != nil {
			_ = os.RemoveAll(dir)
			return nil, status.Error(codes.Internal, err.Error())
		}
		meta.SourceVol = vid
	}
	if err := writeJSON(d.volMeta(id), &meta); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("created volume %s (%d bytes, snapshot=%q volume=%q)", id, capacity, meta.SourceSnap, meta.SourceVol)
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: capacity, ContentSource: src}}, nil
}

func (d *driver) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if !validID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid volume id %q", id)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.RemoveAll(d.volDir(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	_ = os.Remove(d.volMeta(id))
	log.Printf("deleted volume %s", id)
	return &csi.DeleteVolumeResponse{}, nil
}

// ControllerExpandVolume records the new size. Directories have no size of their own (like
// upstream hostpath, capacity is not enforced), so no node-side expansion is needed.
func (d *driver) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	if !validID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid volume id %q", id)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var m volumeMeta
	if err := readJSON(d.volMeta(id), &m); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", id)
	}
	if want := req.GetCapacityRange().GetRequiredBytes(); want > m.CapacityBytes {
		m.CapacityBytes = want
		if err := writeJSON(d.volMeta(id), &m); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		log.Printf("expanded volume %s to %d bytes", id, want)
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: m.CapacityBytes, NodeExpansionRequired: false}, nil
}

func (d *driver) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if _, err := os.Stat(d.volMeta(req.GetVolumeId())); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", req.GetVolumeId())
	}
	if err := checkCaps(req.GetVolumeCapabilities()); err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters()}}, nil
}

func (d *driver) snapshotOf(m *snapMeta) *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: m.ID, SourceVolumeId: m.SourceVolume, SizeBytes: m.SizeBytes,
		CreationTime: timestamppb.New(time.Unix(m.CreatedUnix, 0)), ReadyToUse: true}
}

func (d *driver) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	id, vid := req.GetName(), req.GetSourceVolumeId()
	if !validID.MatchString(id) || !validID.MatchString(vid) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid snapshot name %q or source volume %q", id, vid)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var m snapMeta
	if err := readJSON(d.snapMeta(id), &m); err == nil {
		if m.SourceVolume != vid {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %s exists for volume %s", id, m.SourceVolume)
		}
		return &csi.CreateSnapshotResponse{Snapshot: d.snapshotOf(&m)}, nil
	}
	if _, err := os.Stat(d.volMeta(vid)); err != nil {
		return nil, status.Errorf(codes.NotFound, "source volume %s not found", vid)
	}
	if err := os.MkdirAll(filepath.Join(d.stateDir, "snapshots"), 0o700); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// The point in time is when the copy starts: whatever was on disk then is in the tar, and
	// CSI's creation_time must say that moment, not when the copy finished (an append-only
	// file is read up to its size at that moment, so later appends are not in it).
	taken := time.Now()
	tmp := d.snapTar(id) + ".tmp"
	if err := tarLive(tmp, d.volDir(vid)); err != nil {
		_ = os.Remove(tmp)
		return nil, status.Error(codes.Internal, err.Error())
	}
	if err := os.Rename(tmp, d.snapTar(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// Like upstream hostpath (and block-based drivers), the restore size is the source volume's
	// capacity, not the bytes in use.
	var src volumeMeta
	if err := readJSON(d.volMeta(vid), &src); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	size := src.CapacityBytes
	m = snapMeta{ID: id, SourceVolume: vid, CreatedUnix: taken.Unix(), SizeBytes: size}
	if err := writeJSON(d.snapMeta(id), &m); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("created snapshot %s of %s (%d bytes)", id, vid, size)
	return &csi.CreateSnapshotResponse{Snapshot: d.snapshotOf(&m)}, nil
}

func (d *driver) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if !validID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid snapshot id %q", id)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_ = os.Remove(d.snapTar(id))
	_ = os.Remove(d.snapMeta(id))
	log.Printf("deleted snapshot %s", id)
	return &csi.DeleteSnapshotResponse{}, nil
}

func (d *driver) ListSnapshots(ctx context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	files, _ := filepath.Glob(filepath.Join(d.stateDir, "snapshots", "*.json"))
	var entries []*csi.ListSnapshotsResponse_Entry
	for _, f := range files {
		var m snapMeta
		if readJSON(f, &m) != nil {
			continue
		}
		if req.GetSnapshotId() != "" && req.GetSnapshotId() != m.ID {
			continue
		}
		if req.GetSourceVolumeId() != "" && req.GetSourceVolumeId() != m.SourceVolume {
			continue
		}
		entries = append(entries, &csi.ListSnapshotsResponse_Entry{Snapshot: d.snapshotOf(&m)})
	}
	return &csi.ListSnapshotsResponse{Entries: entries}, nil
}

// ---- node ----

func (d *driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.nodeID}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{
			Type: csi.NodeServiceCapability_RPC_GET_VOLUME_STATS}},
	}}}, nil
}

// isMountPoint reports whether path is a mount point in our mount namespace.
func isMountPoint(path string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && unescape(fields[4]) == path {
			return true
		}
	}
	return false
}

func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

func (d *driver) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if !validID.MatchString(id) || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id and target path are required")
	}
	if req.GetVolumeCapability().GetBlock() != nil {
		return nil, status.Error(codes.InvalidArgument, "block volumes are not supported")
	}
	src := d.volDir(id)
	if _, err := os.Stat(src); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", id)
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if isMountPoint(target) {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := syscall.Mount(src, target, "", syscall.MS_BIND, ""); err != nil {
		return nil, status.Errorf(codes.Internal, "bind mount %s on %s: %v", src, target, err)
	}
	if req.GetReadonly() {
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			_ = syscall.Unmount(target, 0)
			return nil, status.Errorf(codes.Internal, "remount read-only %s: %v", target, err)
		}
	}
	log.Printf("published volume %s at %s (ro=%v)", id, target, req.GetReadonly())
	return &csi.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	target := req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	for isMountPoint(target) {
		if err := syscall.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("unpublished volume %s from %s", req.GetVolumeId(), target)
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

func (d *driver) NodeGetVolumeStats(ctx context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	id := req.GetVolumeId()
	var m volumeMeta
	if !validID.MatchString(id) || readJSON(d.volMeta(id), &m) != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", id)
	}
	if _, err := os.Stat(req.GetVolumePath()); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume path %s: %v", req.GetVolumePath(), err)
	}
	used, inodes := dirUsage(d.volDir(id))
	avail := m.CapacityBytes - used
	if avail < 0 {
		avail = 0
	}
	var st syscall.Statfs_t
	var inodesFree int64
	if syscall.Statfs(d.volDir(id), &st) == nil {
		inodesFree = int64(st.Ffree)
	}
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: m.CapacityBytes, Used: used, Available: avail},
		{Unit: csi.VolumeUsage_INODES, Total: inodes + inodesFree, Used: inodes, Available: inodesFree},
	}}, nil
}

func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		log.Printf("%s failed: %v", info.FullMethod, err)
	}
	return resp, err
}

func main() {
	endpoint := flag.String("endpoint", "unix:///var/lib/kubelet/plugins/csi-hostpath/csi.sock", "CSI endpoint")
	name := flag.String("drivername", "hostpath.csi.k8s.io", "CSI driver name")
	nodeID := flag.String("nodeid", "", "node id")
	stateDir := flag.String("statedir", "/var/lib/csi-hostpath-data", "where volumes and snapshots live")
	flag.Parse()
	if *nodeID == "" {
		*nodeID, _ = os.Hostname()
	}
	for _, sub := range []string{"volumes", "snapshots"} {
		if err := os.MkdirAll(filepath.Join(*stateDir, sub), 0o711); err != nil {
			log.Fatal(err)
		}
	}
	sock := strings.TrimPrefix(*endpoint, "unix://")
	if err := os.MkdirAll(filepath.Dir(sock), 0o750); err != nil {
		log.Fatal(err)
	}
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatalf("listen %s: %v", sock, err)
	}
	d := &driver{name: *name, nodeID: *nodeID, stateDir: *stateDir}
	srv := grpc.NewServer(grpc.UnaryInterceptor(logCalls))
	csi.RegisterIdentityServer(srv, d)
	csi.RegisterControllerServer(srv, d)
	csi.RegisterNodeServer(srv, d)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		srv.Stop()
		_ = os.Remove(sock)
		os.Exit(0)
	}()
	log.Printf("%s %s serving on %s (node %s, state %s)", *name, version, sock, *nodeID, *stateDir)
	if err := srv.Serve(l); err != nil {
		log.Fatal(err)
	}
}
