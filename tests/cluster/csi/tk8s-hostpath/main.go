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
// Block volumes (volumeMode: Block, a block access type in the capability) are a sparse file
// <id>.img of the volume's capacity beside the directories. NodePublishVolume attaches the file
// to a loop device (one per volume, shared by every publish of it on any node, since all
// nodes' plugins share one state dir and one kernel) and bind-mounts the device node onto the
// kubelet's target file; NodeUnpublishVolume unmounts it and detaches the loop device once no
// mount of it is left. Snapshots of block volumes are sparse copies (<id>.img) of the file, and
// restores and clones copy it back sparsely; an expansion grows the file and the loop device.
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
	Block         bool   `json:"block,omitempty"` // a sparse image file, not a directory
	// Node is set for a node-local volume (class parameter tk8s.io/node-local: "true"): the
	// only node it may be used on, as a local disk's volume.
	Node string `json:"node,omitempty"`
	// Memory is set for a memory-backed volume (class parameter tk8s.io/medium: Memory).
	Memory bool `json:"memory,omitempty"`
	// SnapshotMode is the class parameter tk8s.io/snapshot-mode ("" = atomic; snapmodes.go).
	SnapshotMode string `json:"snapshotMode,omitempty"`
	// LazyFS: published under a LazyFS daemon (tk8s.io/medium: LazyFS, lazymedium.go);
	// IgnoreFsync: its fsync persists nothing (tk8s.io/fsync: ignore).
	LazyFS      bool `json:"lazyfs,omitempty"`
	IgnoreFsync bool `json:"ignoreFsync,omitempty"`
	// Burst: published through the FUSE daemon with a credit bucket (tk8s.io/burst, burst.go).
	Burst string `json:"burst,omitempty"`
}

// A StorageClass parameter that keeps each Filesystem volume in memory: its directory lives
// on the tmpfs at <statedir>/memory (the harness mounts it), and volumes/<id> is a symlink to
// it, so every other call works on it unchanged. For tests that need storage which answers at
// memory speed, as a RAM-disk-backed or write-back-cached class would (fio --compare-local).
const (
	mediumParam  = "tk8s.io/medium"
	mediumMemory = "Memory"
	tmpfsMagic   = 0x01021994 // statfs f_type of tmpfs (linux/magic.h TMPFS_MAGIC)
)

// A StorageClass parameter that makes the class node-local: each volume (and each restore of
// its snapshots, and each clone) is usable on one node only, reported as CSI accessible
// topology, so the PV gets a node affinity the scheduler enforces. For tests of commands that
// must tell node-local storage apart (snapshot check --restore-node); nothing else changes:
// the data still lives in the shared state dir.
//
// A second parameter, tk8s.io/node-local-node: NAME, puts every new volume of the class on that
// node (as one local array would): for tests whose pods must follow their volumes to one node.
const (
	nodeLocalParam     = "tk8s.io/node-local"
	nodeLocalNodeParam = "tk8s.io/node-local-node"
	topologyKey        = "topology.hostpath.tk8s/node"
)

// nodeLocalPlacement decides the node of a new node-local volume: a restore or clone stays on
// its source's node (refused when the request's topology excludes it, as a local disk cannot
// serve another node), a new volume goes to the first preferred (else requisite) node.
func (d *driver) nodeLocalPlacement(req *csi.CreateVolumeRequest) (string, error) {
	source := ""
	if sid := req.GetVolumeContentSource().GetSnapshot().GetSnapshotId(); sid != "" {
		var sm snapMeta
		if err := readJSON(d.snapMeta(sid), &sm); err != nil {
			return "", status.Errorf(codes.NotFound, "snapshot %s not found", sid)
		}
		source = sm.Node
	} else if vid := req.GetVolumeContentSource().GetVolume().GetVolumeId(); vid != "" {
		var vm volumeMeta
		if err := readJSON(d.volMeta(vid), &vm); err != nil {
			return "", status.Errorf(codes.NotFound, "volume %s not found", vid)
		}
		source = vm.Node
	}
	ar := req.GetAccessibilityRequirements()
	if pinned := req.GetParameters()[nodeLocalNodeParam]; pinned != "" && source == "" {
		source = pinned // checked against the request's topology like a source's node
	}
	if source != "" {
		allowed := len(ar.GetRequisite()) == 0
		for _, t := range ar.GetRequisite() {
			if t.GetSegments()[topologyKey] == source {
				allowed = true
			}
		}
		if !allowed {
			return "", status.Errorf(codes.ResourceExhausted, "the source is on node %s and a node-local volume cannot be made elsewhere", source)
		}
		return source, nil
	}
	for _, t := range append(ar.GetPreferred(), ar.GetRequisite()...) {
		if node := t.GetSegments()[topologyKey]; node != "" {
			return node, nil
		}
	}
	return d.nodeID, nil
}

func topologyOf(node string) []*csi.Topology {
	if node == "" {
		return nil
	}
	return []*csi.Topology{{Segments: map[string]string{topologyKey: node}}}
}

type snapMeta struct {
	ID           string `json:"id"`
	SourceVolume string `json:"sourceVolume"`
	CreatedUnix  int64  `json:"createdUnix"`
	SizeBytes    int64  `json:"sizeBytes"`
	Block        bool   `json:"block,omitempty"` // a sparse copy of a block volume's image
	Node         string `json:"node,omitempty"`  // the source's node, for a node-local volume
	CreatedNanos int64  `json:"createdNanos,omitempty"`
	Mode         string `json:"mode,omitempty"`    // the source's snapshot mode (snapmodes.go)
	Format       string `json:"format,omitempty"`  // where and how the data is kept (snapmodes.go)
	Copying      bool   `json:"copying,omitempty"` // a ready-early copy still running
}

// diskGID owns block device nodes on Debian, Ubuntu, RHEL and Alpine (udev's rule for loop
// devices: root:disk 0660). This host has no udev, so the driver sets it on the loop devices it
// attaches: pods that join the group (supplementalGroups) can open their raw device non-root.
const diskGID = 6

type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	name, nodeID, stateDir string
	mu                     sync.Mutex
}

func (d *driver) volDir(id string) string  { return filepath.Join(d.stateDir, "volumes", id) }
func (d *driver) volMeta(id string) string { return filepath.Join(d.stateDir, "volumes", id+".json") }
func (d *driver) memDir(id string) string  { return filepath.Join(d.stateDir, "memory", id) }
func (d *driver) volImg(id string) string  { return filepath.Join(d.stateDir, "volumes", id+".img") }
func (d *driver) snapImg(id string) string { return filepath.Join(d.stateDir, "snapshots", id+".img") }
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
	}, {
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{
			Type: csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS}},
	}}}, nil
}

func (d *driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{}, nil
}

// ---- controller ----

// accessBlock says whether the capabilities ask for a block volume (true) or a mounted
// filesystem (false); a request mixing both access types is refused.
func accessBlock(caps []*csi.VolumeCapability) (bool, error) {
	if len(caps) == 0 {
		return false, status.Error(codes.InvalidArgument, "volume capabilities missing")
	}
	block, mount := false, false
	for _, c := range caps {
		switch {
		case c.GetBlock() != nil:
			block = true
		case c.GetMount() != nil:
			mount = true
		default:
			return false, status.Error(codes.InvalidArgument, "volume capability without access type")
		}
	}
	if block && mount {
		return false, status.Error(codes.InvalidArgument, "a volume is either block or mount, not both")
	}
	return block, nil
}

func modeName(block bool) string {
	if block {
		return "Block"
	}
	return "Filesystem"
}

// copySparse copies a block volume's image keeping its holes (unwritten ranges stay unallocated).
func copySparse(src, dst string) error {
	return run("cp", "--sparse=always", src, dst)
}

// allocatedBytes is the disk space a sparse file really uses.
func allocatedBytes(path string) int64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Blocks * 512
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
	block, err := accessBlock(req.GetVolumeCapabilities())
	if err != nil {
		return nil, err
	}
	capacity := req.GetCapacityRange().GetRequiredBytes()
	if capacity == 0 {
		capacity = 1 << 30
	}
	if limit := req.GetCapacityRange().GetLimitBytes(); limit > 0 && capacity > limit {
		return nil, status.Errorf(codes.OutOfRange, "required %d bytes is above the limit of %d", capacity, limit)
	}
	src := req.GetVolumeContentSource()
	d.mu.Lock()
	defer d.mu.Unlock()

	var meta volumeMeta
	if err := readJSON(d.volMeta(id), &meta); err == nil {
		if meta.Block != block {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with volume mode %s", id, modeName(meta.Block))
		}
		if meta.CapacityBytes < capacity {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with smaller capacity", id)
		}
		return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: meta.CapacityBytes, ContentSource: src, AccessibleTopology: topologyOf(meta.Node)}}, nil
	}
	mode, err := checkParams(req.GetParameters())
	if err != nil {
		return nil, err
	}
	meta = volumeMeta{ID: id, CapacityBytes: capacity, Block: block, SnapshotMode: mode}
	if err := d.mediumParams(req.GetParameters(), block, &meta); err != nil {
		return nil, err
	}
	if err := burstParams(req.GetParameters(), block, &meta); err != nil {
		return nil, err
	}
	if req.GetParameters()[nodeLocalParam] == "true" {
		node, err := d.nodeLocalPlacement(req)
		if err != nil {
			return nil, err
		}
		meta.Node = node
	}
	if block {
		if err := d.createBlock(&meta, src); err != nil {
			return nil, err
		}
	} else if err := d.createDir(&meta, src); err != nil {
		return nil, err
	}
	if err := writeJSON(d.volMeta(id), &meta); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	log.Printf("created %s volume %s (%d bytes, snapshot=%q volume=%q node=%q)", modeName(block), id, capacity, meta.SourceSnap, meta.SourceVol, meta.Node)
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{VolumeId: id, CapacityBytes: capacity, ContentSource: src, AccessibleTopology: topologyOf(meta.Node)}}, nil
}

// createDir makes a Filesystem volume's directory, empty or from a snapshot or volume.
func (d *driver) createDir(meta *volumeMeta, src *csi.VolumeContentSource) error {
	id := meta.ID
	dir := d.volDir(id)
	// a source of the other volume mode cannot be unpacked into a directory
	if sid := src.GetSnapshot().GetSnapshotId(); sid != "" {
		var sm snapMeta
		if readJSON(d.snapMeta(sid), &sm) == nil && sm.Block {
			return status.Errorf(codes.InvalidArgument, "snapshot %s is of a Block volume; restore it with volumeMode: Block", sid)
		}
	}
	if vid := src.GetVolume().GetVolumeId(); vid != "" {
		var vm volumeMeta
		if readJSON(d.volMeta(vid), &vm) == nil && vm.Block {
			return status.Errorf(codes.InvalidArgument, "volume %s is a Block volume; clone it with volumeMode: Block", vid)
		}
	}
	_ = removeTree(dir)
	if meta.Memory {
		mem := d.memDir(id)
		_ = os.RemoveAll(mem)
		if err := os.MkdirAll(mem, 0o777); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		if err := os.Symlink(mem, dir); err != nil {
			return status.Error(codes.Internal, err.Error())
		}
	}
	// An empty volume is a new subvolume; a restore or a clone a writable btrfs snapshot of its
	// source where it is one (snapmodes.go).
	var err error
	switch {
	case src.GetSnapshot() != nil:
		var sm snapMeta
		if sm, err = d.restoreSource(src.GetSnapshot().GetSnapshotId()); err != nil {
			_ = removeTree(dir)
			return err
		}
		err = d.fillFromSnapshot(dir, &sm, meta.Memory)
		meta.SourceSnap = src.GetSnapshot().GetSnapshotId()
	case src.GetVolume() != nil:
		vid := src.GetVolume().GetVolumeId()
		var vm volumeMeta
		if readJSON(d.volMeta(vid), &vm) != nil {
			_ = removeTree(dir)
			return status.Errorf(codes.NotFound, "source volume %s not found", vid)
		}
		err = d.fillFromVolume(dir, &vm, meta.Memory)
		meta.SourceVol = vid
	default:
		err = d.ensureDir(dir, meta.Memory)
	}
	if err != nil {
		_ = removeTree(dir)
		return status.Error(codes.Internal, err.Error())
	}
	// World-writable like local-path's "mkdir -m 0777": non-root pods without fsGroup can write.
	_ = os.Chmod(dir, 0o777)
	return nil
}

// createBlock makes a Block volume's sparse image of meta.CapacityBytes: empty (a hole), or a
// sparse copy of a block snapshot or block volume, grown to the capacity. A source larger than
// the capacity is refused (CSI: OUT_OF_RANGE), as a real disk cannot be restored smaller.
func (d *driver) createBlock(meta *volumeMeta, src *csi.VolumeContentSource) error {
	id := meta.ID
	img := d.volImg(id)
	tmp := img + ".tmp"
	_ = os.Remove(tmp)
	var from string
	var fromSize int64
	reflink := false
	switch {
	case src.GetSnapshot() != nil:
		sid := src.GetSnapshot().GetSnapshotId()
		var sm snapMeta
		if readJSON(d.snapMeta(sid), &sm) != nil {
			return status.Errorf(codes.NotFound, "snapshot %s not found", sid)
		}
		if !sm.Block {
			return status.Errorf(codes.InvalidArgument, "snapshot %s is of a Filesystem volume; restore it with volumeMode: Filesystem", sid)
		}
		sm, err := d.restoreSource(sid)
		if err != nil {
			return err
		}
		from, reflink = d.blockSnapshotImage(&sm)
		fromSize, meta.SourceSnap = sm.SizeBytes, sid
	case src.GetVolume() != nil:
		vid := src.GetVolume().GetVolumeId()
		var vm volumeMeta
		if readJSON(d.volMeta(vid), &vm) != nil {
			return status.Errorf(codes.NotFound, "source volume %s not found", vid)
		}
		if !vm.Block {
			return status.Errorf(codes.InvalidArgument, "volume %s is a Filesystem volume; clone it with volumeMode: Filesystem", vid)
		}
		from, fromSize, meta.SourceVol, reflink = d.volImg(vid), vm.CapacityBytes, vid, true
	}
	if from != "" {
		if fromSize > meta.CapacityBytes {
			return status.Errorf(codes.OutOfRange, "the source holds %d bytes, more than the %d asked for", fromSize, meta.CapacityBytes)
		}
		if err := d.copyImage(from, tmp, reflink); err != nil {
			_ = os.Remove(tmp)
			return status.Error(codes.Internal, err.Error())
		}
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY, 0o600)
	if err == nil {
		err = f.Truncate(meta.CapacityBytes)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, img)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}

func (d *driver) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if !validID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid volume id %q", id)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.lazyStillPublished(id); err != nil {
		return nil, err
	}
	if err := removeTree(d.volDir(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	// a memory volume's directory (volDir was its symlink)
	if err := os.RemoveAll(d.memDir(id)); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if _, err := os.Stat(d.volImg(id)); err == nil {
		// a loop device left on the image (a node that died without unpublishing) goes first
		unlock, err := d.lockLoops()
		if err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		for _, dev := range loopsOf(d.volImg(id)) {
			if err := detachLoop(dev); err != nil {
				unlock()
				return nil, status.Errorf(codes.FailedPrecondition, "volume %s is still attached: %v", id, err)
			}
		}
		unlock()
		if err := os.Remove(d.volImg(id)); err != nil && !os.IsNotExist(err) {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	_ = os.Remove(d.volMeta(id))
	log.Printf("deleted volume %s", id)
	return &csi.DeleteVolumeResponse{}, nil
}

// ControllerExpandVolume records the new size. Directories have no size of their own (like
// upstream hostpath, capacity is not enforced), so no node-side expansion is needed. A block
// volume's image grows to the new size, and so do the loop devices attached to it.
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
		if m.Block {
			if err := os.Truncate(d.volImg(id), want); err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
			unlock, err := d.lockLoops()
			if err != nil {
				return nil, status.Error(codes.Internal, err.Error())
			}
			for _, dev := range loopsOf(d.volImg(id)) {
				if err := run("losetup", "--set-capacity", dev); err != nil {
					log.Printf("expand %s: %v", id, err)
				}
			}
			unlock()
		}
		m.CapacityBytes = want
		if err := writeJSON(d.volMeta(id), &m); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		log.Printf("expanded volume %s to %d bytes", id, want)
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: m.CapacityBytes, NodeExpansionRequired: false}, nil
}

func (d *driver) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	var m volumeMeta
	if readJSON(d.volMeta(req.GetVolumeId()), &m) != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", req.GetVolumeId())
	}
	block, err := accessBlock(req.GetVolumeCapabilities())
	if err != nil {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
	}
	if block != m.Block {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: "volume " + m.ID + " is a " + modeName(m.Block) + " volume"}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters()}}, nil
}

func (d *driver) snapshotOf(m *snapMeta) *csi.Snapshot {
	return &csi.Snapshot{SnapshotId: m.ID, SourceVolumeId: m.SourceVolume, SizeBytes: m.SizeBytes,
		CreationTime: timestamppb.New(time.Unix(m.CreatedUnix, m.CreatedNanos%1e9)), ReadyToUse: true}
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
	// How the snapshot is cut is the source volume's snapshot mode (snapmodes.go); creationTime
	// is when the cut starts. Like upstream hostpath (and block-based drivers), the restore size
	// is the source volume's capacity, not the bytes in use.
	var src volumeMeta
	if err := readJSON(d.volMeta(vid), &src); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	sm, err := d.takeSnapshot(id, &src)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &csi.CreateSnapshotResponse{Snapshot: d.snapshotOf(sm)}, nil
}

func (d *driver) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	id := req.GetSnapshotId()
	if !validID.MatchString(id) {
		return nil, status.Errorf(codes.InvalidArgument, "invalid snapshot id %q", id)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.removeSnapshotData(id); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
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
	// Every node reports its own topology segment; only node-local volumes are constrained by it.
	return &csi.NodeGetInfoResponse{NodeId: d.nodeID, AccessibleTopology: &csi.Topology{Segments: map[string]string{topologyKey: d.nodeID}}}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{
			Type: csi.NodeServiceCapability_RPC_GET_VOLUME_STATS}},
	}}}, nil
}

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	root, point, fstype string
}

func mounts() []mountEntry {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mountEntry
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		e := mountEntry{root: unescape(fields[3]), point: unescape(fields[4])}
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) {
				e.fstype = fields[i+1]
				break
			}
		}
		out = append(out, e)
	}
	return out
}

// isMountPoint reports whether path is a mount point in our mount namespace.
func isMountPoint(path string) bool {
	for _, m := range mounts() {
		if m.point == path {
			return true
		}
	}
	return false
}

// deviceMounts counts the bind mounts of a /dev node anywhere in the mount table (a publish of
// the device, or the kubelet's own bind mount of it in its global map path).
func deviceMounts(dev string) int {
	n := 0
	for _, m := range mounts() {
		if m.fstype == "devtmpfs" && m.root == "/"+filepath.Base(dev) {
			n++
		}
	}
	return n
}

func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// loopsOf lists the loop devices whose backing file is img (from sysfs, as the kubelet reads
// them).
func loopsOf(img string) []string {
	var out []string
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		backing := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(b)), "(deleted)"))
		if backing == img {
			out = append(out, "/dev/"+filepath.Base(filepath.Dir(filepath.Dir(f))))
		}
	}
	return out
}

// detachLoop detaches a loop device. A device still open somewhere is detached by the kernel
// at its last close (losetup -d sets autoclear then).
func detachLoop(dev string) error {
	if err := run("losetup", "--detach", dev); err != nil {
		if _, serr := os.Stat("/sys/block/" + filepath.Base(dev) + "/loop"); serr != nil {
			return nil // already gone
		}
		return err
	}
	log.Printf("detached %s", dev)
	return nil
}

// lockLoops serialises loop attach/detach decisions across the plugins of every node, which
// are separate processes sharing the state dir.
func (d *driver) lockLoops() (func(), error) {
	f, err := os.OpenFile(filepath.Join(d.stateDir, "loop.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// attachLoop returns the volume's loop device, attaching the image first when no device is
// attached to it (one loop device per volume, whichever node publishes it). Direct I/O on the
// backing file keeps the host's page cache out of a benchmark's numbers, as with a real disk.
func (d *driver) attachLoop(id string) (string, error) {
	img := d.volImg(id)
	if devs := loopsOf(img); len(devs) > 0 {
		return devs[0], nil
	}
	out, err := exec.Command("losetup", "--find", "--show", "--direct-io=on", img).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("losetup --find --show --direct-io=on %s: %v: %s", img, err, strings.TrimSpace(string(out)))
	}
	dev := strings.TrimSpace(string(out))
	// udev's rule for block devices, which this host lacks: root:disk 0660.
	if err := os.Chown(dev, 0, diskGID); err != nil {
		_ = detachLoop(dev)
		return "", err
	}
	if err := os.Chmod(dev, 0o660); err != nil {
		_ = detachLoop(dev)
		return "", err
	}
	log.Printf("attached %s to %s", img, dev)
	return dev, nil
}

// releaseLoops detaches the volume's loop devices that no mount refers to any more.
func (d *driver) releaseLoops(id string) error {
	for _, dev := range loopsOf(d.volImg(id)) {
		if deviceMounts(dev) > 0 {
			continue // published elsewhere (another pod or node)
		}
		if err := detachLoop(dev); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if !validID.MatchString(id) || target == "" {
		return nil, status.Error(codes.InvalidArgument, "volume id and target path are required")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume capability is required")
	}
	block, err := accessBlock([]*csi.VolumeCapability{req.GetVolumeCapability()})
	if err != nil {
		return nil, err
	}
	var m volumeMeta
	if readJSON(d.volMeta(id), &m) != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s not found", id)
	}
	if block != m.Block {
		return nil, status.Errorf(codes.InvalidArgument, "volume %s is a %s volume, not %s", id, modeName(m.Block), modeName(block))
	}
	if block {
		return d.publishBlock(id, target, req.GetReadonly())
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
	if m.LazyFS || m.Burst != "" {
		return d.publishLazy(&m, src, target, req.GetReadonly())
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

// publishBlock places the volume's device at target (CSI: "the SP SHALL place the block device
// at target_path"; the CO made its parent directory): a file bind-mounted with the loop
// device node.
func (d *driver) publishBlock(id, target string, readonly bool) (*csi.NodePublishVolumeResponse, error) {
	if _, err := os.Stat(d.volImg(id)); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %s has no image: %v", id, err)
	}
	unlock, err := d.lockLoops()
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	defer unlock()
	if isMountPoint(target) {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o660)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "create target file %s: %v", target, err)
	}
	f.Close()
	dev, err := d.attachLoop(id)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	fail := func(format string, args ...any) (*csi.NodePublishVolumeResponse, error) {
		_ = d.releaseLoops(id)
		return nil, status.Errorf(codes.Internal, format, args...)
	}
	if err := syscall.Mount(dev, target, "", syscall.MS_BIND, ""); err != nil {
		return fail("bind mount %s on %s: %v", dev, target, err)
	}
	if readonly {
		if err := syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
			_ = syscall.Unmount(target, 0)
			return fail("remount read-only %s: %v", target, err)
		}
	}
	log.Printf("published block volume %s (%s) at %s (ro=%v)", id, dev, target, readonly)
	return &csi.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if target == "" {
		return nil, status.Error(codes.InvalidArgument, "target path is required")
	}
	var m volumeMeta
	block := validID.MatchString(id) && readJSON(d.volMeta(id), &m) == nil && m.Block
	unlock := func() {}
	if block {
		var err error
		if unlock, err = d.lockLoops(); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	defer unlock()
	if err := d.unpublishLazy(target); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	for isMountPoint(target) {
		if err := syscall.Unmount(target, 0); err != nil {
			return nil, status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if block {
		// the last unpublish of the volume on any node detaches its loop device
		if err := d.releaseLoops(id); err != nil {
			return nil, status.Errorf(codes.Internal, "detach the loop device of %s: %v", id, err)
		}
	}
	log.Printf("unpublished volume %s from %s", id, target)
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
	if m.Block {
		// a raw device has a size and no inodes; "used" is what the sparse image allocated
		used := allocatedBytes(d.volImg(id))
		avail := m.CapacityBytes - used
		if avail < 0 {
			avail = 0
		}
		return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
			{Unit: csi.VolumeUsage_BYTES, Total: m.CapacityBytes, Used: used, Available: avail},
		}}, nil
	}
	used, inodes := dirUsage(d.volDir(id))
	avail := m.CapacityBytes - used
	if avail < 0 {
		avail = 0
	}
	usage := []*csi.VolumeUsage{{Unit: csi.VolumeUsage_BYTES, Total: m.CapacityBytes, Used: used, Available: avail}}
	// btrfs allocates inodes as it goes and reports no inode counts (f_files 0): no inode
	// usage then, rather than "0 free" (a tmpfs, a memory volume's, has a limit).
	var st syscall.Statfs_t
	if syscall.Statfs(d.volDir(id), &st) == nil && st.Files > 0 {
		free := int64(st.Ffree)
		usage = append(usage, &csi.VolumeUsage{Unit: csi.VolumeUsage_INODES, Total: inodes + free, Used: inodes, Available: free})
	}
	return &csi.NodeGetVolumeStatsResponse{Usage: usage}, nil
}

func logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		log.Printf("%s failed: %v", info.FullMethod, err)
	}
	return resp, err
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "lazyfs" { // the LazyFS daemon (lazydaemon.go), its own process
		os.Exit(lazyfsMain(os.Args[2:]))
	}
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
