// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

// The CPU manager judge (--manager=cpu): kubelet's own start-up path up to the CPU manager's
// Start, on a node tree. Glue only, in the order of cmd/kubelet/app.run (getReservedCPUs, the
// reservedSystemCPUs override of kube/system-reserved cpu), pkg/kubelet/cm.NewContainerManager
// (topologymanager.NewManager, cpumanager.NewManager with GetNodeAllocatableReservation) and
// containerManagerImpl.Start (the CPU manager's Start, which runs before the memory manager's).
// The machine is cAdvisor's own machine.GetTopology over a sysfs rooted at the tree.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/utils/cpuset"
)

const cpuStateFile = "cpu_manager_state"

// cpuOutcome is the judge's "state" for --manager=cpu.
type cpuOutcome struct {
	// Online: the CPUs of the topology kubelet discovered (cAdvisor skips offline CPUs).
	Online string `json:"online"`
	// Reserved: the CPUs the static policy reserves on this tree (reservedSystemCPUs, or the
	// ones it picks itself): topology CPUs minus the policy's GetAllocatableCPUs. Empty when
	// the policy is not static or could not be built.
	Reserved string `json:"reserved"`
	// ReservedError: NewStaticPolicy's error when it fails (the reserved CPUs are then unknown).
	ReservedError string `json:"reserved_error,omitempty"`
	// Before / After: the checkpoint before Start and as the state package left it after
	// Start (null when there is no file); Changed: the bytes differ.
	Before  *string `json:"before"`
	After   *string `json:"after"`
	Changed bool    `json:"changed"`
	// Machine: what cAdvisor's topology gave (NUMA node -> core -> threads), for the record.
	Machine json.RawMessage `json:"machine,omitempty"`
}

// rootedSysFs is cAdvisor's real sysfs reader with the paths it does not take from its caller
// moved under the tree: the NUMA node glob, the online CPU list (the reader's cpuPath), and
// the cache directories (<tree>/sys/devices/system/cpu/cpuN/cache: cAdvisor's cacheDir is a
// constant, so GetCaches and GetCacheInfo are cAdvisor's own code over the tree's path; the
// judging host's own caches must never leak into the tree's machine). A tree without cache
// directories is a machine whose caches cannot be read: addCacheInfo's error, which
// GetNodesInfo ignores (no uncore cache: kubelet's Discover uses the socket id).
type rootedSysFs struct {
	sysFs
	tree string
}

func (fs rootedSysFs) GetNodesPaths() ([]string, error) {
	// cadvisor utils/sysfs: filepath.Glob(nodeDir + "node*[0-9]").
	return filepath.Glob(filepath.Join(fs.tree, "sys/devices/system/node") + "/node*[0-9]")
}

func (fs rootedSysFs) cacheDir(id int) string {
	return filepath.Join(fs.tree, "sys/devices/system/cpu", fmt.Sprintf("cpu%d", id), "cache")
}

// GetCaches: cadvisor utils/sysfs realSysFs.GetCaches (os.ReadDir, then each entry's Info).
func (fs rootedSysFs) GetCaches(id int) ([]os.FileInfo, error) {
	dir, err := os.ReadDir(fs.cacheDir(id))
	if err != nil {
		return nil, err
	}
	info := []os.FileInfo{}
	for _, entry := range dir {
		fi, err := entry.Info()
		if err != nil {
			return nil, err
		}
		info = append(info, fi)
	}
	return info, nil
}

// GetCacheInfo: cadvisor utils/sysfs realSysFs.GetCacheInfo, line for line (the same in v0.52.1,
// v0.53.0, v0.56.2 and lib v0.60.5), over the tree's cache directory.
func (fs rootedSysFs) GetCacheInfo(cpu int, name string) (cacheInfo, error) {
	cachePath := filepath.Join(fs.cacheDir(cpu), name)
	var id int
	if runtime.GOARCH != "s390x" {
		out, err := os.ReadFile(path.Join(cachePath, "/id"))
		if err != nil {
			return cacheInfo{}, err
		}
		n, err := fmt.Sscanf(string(out), "%d", &id)
		if err != nil || n != 1 {
			return cacheInfo{}, err
		}
	}
	out, err := os.ReadFile(path.Join(cachePath, "/size"))
	if err != nil {
		return cacheInfo{}, err
	}
	var size uint64
	n, err := fmt.Sscanf(string(out), "%dK", &size)
	if err != nil || n != 1 {
		return cacheInfo{}, err
	}
	size = size * 1024
	out, err = os.ReadFile(path.Join(cachePath, "/level"))
	if err != nil {
		return cacheInfo{}, err
	}
	var level int
	n, err = fmt.Sscanf(string(out), "%d", &level)
	if err != nil || n != 1 {
		return cacheInfo{}, err
	}
	out, err = os.ReadFile(path.Join(cachePath, "/type"))
	if err != nil {
		return cacheInfo{}, err
	}
	cacheType := strings.TrimSpace(string(out))
	cpuCount, err := sharedCPUCount(cachePath)
	if err != nil {
		return cacheInfo{}, err
	}
	return cacheInfo{Id: id, Size: size, Level: level, Type: cacheType, Cpus: cpuCount}, nil
}

// sharedCPUCount: cadvisor utils/sysfs getCPUCount (the bits of shared_cpu_map).
func sharedCPUCount(cache string) (int, error) {
	out, err := os.ReadFile(path.Join(cache, "/shared_cpu_map"))
	if err != nil {
		return 0, err
	}
	count := 0
	for _, mask := range strings.Split(string(out), ",") {
		m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("failed to parse cpu map %q: %v", string(out), err)
		}
		count += bits.OnesCount64(m)
	}
	return count, nil
}

func newRootedSysFs(tree string) (sysFs, error) {
	real := newRealSysFs()
	field := reflect.ValueOf(real).Elem().FieldByName("cpuPath")
	if !field.IsValid() || field.Kind() != reflect.String {
		return nil, fmt.Errorf("cadvisor's realSysFs has no cpuPath string field")
	}
	reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem().SetString(filepath.Join(tree, "sys/devices/system/cpu"))
	return rootedSysFs{sysFs: real, tree: tree}, nil
}

// cpuMachineInfo builds the MachineInfo fields the CPU and topology managers read, as
// cadvisor's machine.Info does: Topology and NumCores from machine.GetTopology, NumSockets the
// number of distinct physical package ids (cadvisor counts /proc/cpuinfo's "physical id"s).
func cpuMachineInfo(tree string) (*machineInfo, error) {
	// The glob of the tree's paths must not meet a "cpu<N>" before the CPU directory (cadvisor
	// reads a CPU's id with the first match of cpu([0-9]+) in its path): judge through a link.
	link, err := os.MkdirTemp("", "judge-root-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(link)
	abs, err := filepath.Abs(tree)
	if err != nil {
		return nil, err
	}
	root := filepath.Join(link, "root")
	if err := os.Symlink(abs, root); err != nil {
		return nil, err
	}
	fs, err := newRootedSysFs(root)
	if err != nil {
		return nil, err
	}
	paths, err := fs.GetNodesPaths()
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		// cadvisor then reads the CPU topology from /sys/devices/system/cpu, a fixed path.
		return nil, fmt.Errorf("no NUMA node directory under the tree: the judge reads the machine through them")
	}
	nodes, cores, err := getTopology(fs)
	if err != nil {
		return nil, err
	}
	sockets := map[int]bool{}
	for _, node := range nodes {
		for _, core := range node.Cores {
			sockets[core.SocketID] = true
		}
	}
	return &machineInfo{Topology: nodes, NumCores: cores, NumSockets: len(sockets)}, nil
}

// judgeCPU runs the CPU manager's construction and Start on a scratch copy of
// <root-dir>/cpu_manager_state. Stages: config (kubelet refuses its configuration), machine
// (the tree cannot be read), construct (cmd/kubelet/app.run or NewContainerManager fails:
// getReservedCPUs, reservations, topology manager, NewManager), restore (Start: the state
// package refuses the file) and validate (Start: the policy's validateState refuses it).
func judgeCPU(ctx context.Context, logger klog.Logger, args []string) (json.RawMessage, error) {
	successStage = "started"
	var outcome cpuOutcome
	result := func() json.RawMessage {
		data, _ := json.Marshal(outcome)
		return data
	}
	opts, rest := splitArgs(args)
	kc, flags, err := loadConfiguration(ctx, rest)
	if err != nil {
		return nil, at("config", stageOf(err))
	}
	kc.FailCgroupV1 = false
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return nil, at("config", fmt.Errorf("failed to validate kubelet configuration, error: %w", err))
	}
	info, err := cpuMachineInfo(opts.tree)
	if err != nil {
		return nil, at("machine", err)
	}
	if data, err := json.Marshal(info.Topology); err == nil {
		outcome.Machine = data
	}

	// cmd/kubelet/app.run: getReservedCPUs, then reservedSystemCPUs overrides the cpu of
	// kube-reserved and system-reserved.
	reservedSystemCPUs, err := getReservedCPUs(logger, info, kc.ReservedSystemCPUs)
	if err != nil {
		return result(), at("construct", err)
	}
	if reservedSystemCPUs.Size() > 0 {
		if kc.KubeReserved != nil {
			delete(kc.KubeReserved, "cpu")
		}
		if kc.SystemReserved == nil {
			kc.SystemReserved = map[string]string{}
		}
		kc.SystemReserved["cpu"] = strconv.Itoa(reservedSystemCPUs.Size())
	}
	kubeReserved, err := parseResourceList(kc.KubeReserved)
	if err != nil {
		return result(), at("construct", fmt.Errorf("--kube-reserved value failed to parse: %w", err))
	}
	systemReserved, err := parseResourceList(kc.SystemReserved)
	if err != nil {
		return result(), at("construct", fmt.Errorf("--system-reserved value failed to parse: %w", err))
	}
	// pkg/kubelet/cm: GetNodeAllocatableReservation over cadvisor's capacity (the hard eviction
	// thresholds reserve memory and storage only, never cpu).
	capacity := cadvisor.CapacityFromMachineInfo(info)
	reservation := nodeAllocatableReservation(capacity, systemReserved, kubeReserved, nil)

	// NewContainerManager: the topology manager, then the CPU manager. Kubelet returns the
	// topology manager's error as it is (container_manager_linux.go: "return nil, err").
	store, err := newTopologyManager(logger, info, kc)
	if err != nil {
		return result(), at("construct", err)
	}
	topo, err := discover(logger, info)
	if err == nil {
		outcome.Online = topo.CPUDetails.CPUs().String()
	}
	scratch, err := scratchStateDir(flags.RootDirectory, cpuStateFile)
	if err != nil {
		return result(), at("machine", err)
	}
	defer os.RemoveAll(scratch)
	if data, err := os.ReadFile(filepath.Join(scratch, cpuStateFile)); err == nil {
		text := string(data)
		outcome.Before = &text
	}
	mgr, err := newCPUManager(logger, kc, info, reservedSystemCPUs, reservation, scratch, store)
	if err != nil {
		return result(), at("construct", err)
	}
	if kc.CPUManagerPolicy == "static" && topo != nil {
		outcome.Reserved, outcome.ReservedError = staticReserved(logger, topo, reservation, reservedSystemCPUs, kc, info)
	}
	// containerManagerImpl.Start: the CPU manager's Start, with no active pod and sources never
	// ready (its reconcile loop then does nothing), on the scratch copy.
	startErr := startCPUManager(ctx, mgr, func() []*v1.Pod { return nil }, &cpuSourcesReady{})
	if data, err := os.ReadFile(filepath.Join(scratch, cpuStateFile)); err == nil {
		text := string(data)
		outcome.After = &text
	}
	outcome.Changed = !samePointee(outcome.Before, outcome.After)
	if startErr != nil {
		stage := "validate"
		if strings.HasPrefix(startErr.Error(), "could not restore state from checkpoint") {
			stage = "restore"
		}
		// containerManagerImpl.Start's wrapping; the scratch copy's path is said as the tree's.
		text := strings.ReplaceAll(startErr.Error(), scratch, flags.RootDirectory)
		return result(), at(stage, fmt.Errorf("start cpu manager error: %s", text))
	}
	return result(), nil
}

// staticReserved: the CPUs the static policy reserves, as the notes' recipe says: the
// topology's CPUs minus NewStaticPolicy's GetAllocatableCPUs (which ignores its state).
func staticReserved(logger klog.Logger, topo *topology.CPUTopology, reservation v1.ResourceList, specific cpuset.CPUSet, kc *kubeletconfig.KubeletConfiguration, info *machineInfo) (string, string) {
	quantity, ok := reservation[v1.ResourceCPU]
	if !ok || quantity.IsZero() {
		return "", "no cpu reservation"
	}
	// cpumanager.NewManager: numReservedCPUs = ceil(kube+system reserved cpu).
	num := int((quantity.MilliValue() + 999) / 1000)
	store, err := newTopologyManager(logger, info, kc)
	if err != nil {
		return "", err.Error()
	}
	policy, err := newStaticPolicy(logger, topo, num, specific, store, kc.CPUManagerPolicyOptions)
	if err != nil {
		return "", err.Error()
	}
	return topo.CPUDetails.CPUs().Difference(policy.GetAllocatableCPUs(nil)).String(), ""
}

func samePointee(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// stageOf unwraps a stageError (loadConfiguration tags its own errors).
func stageOf(err error) error {
	if se, ok := err.(*stageError); ok {
		return se.err
	}
	return err
}

// cpuSourcesReady: sources never ready, so the CPU manager's reconcile loop (started by Start
// for the static policy) neither removes stale state nor touches a container.
type cpuSourcesReady struct{}

func (s *cpuSourcesReady) AddSource(string) {}
func (s *cpuSourcesReady) AllReady() bool   { return false }
