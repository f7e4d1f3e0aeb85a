// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

// The kubelet judge: kubelet's own start-up path up to the memory manager's Start, on a node
// tree. Test-only (tests/kubelet_judge), never shipped. build.py compiles this file with the
// shim of one kubelet release against k8s.io/kubernetes at that release.
//
// Usage: kubelet-judge --tree=ROOT [--written-checkpoint=PATH] [--admit-pods=PODS.json] [kubelet flags...]   (--root-dir, --config, --config-dir,
// --reserved-memory, --memory-manager-policy, --kube-reserved, --system-reserved,
// --eviction-hard, ... : every flag of kubelet's own flag set is accepted.)
//
// Only glue lives here: each step calls kubelet's code in the order of
// cmd/kubelet/app.NewKubeletCommand (flags, config file, drop-ins, flag precedence,
// validation), cmd/kubelet/app.run (reservations), pkg/kubelet/cm.NewContainerManager
// (capacity, NewManager) and containerManagerImpl.Start (memory manager Start, then
// validateNodeAllocatable). Unexported kubelet functions are pulled with go:linkname.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	_ "k8s.io/kubernetes/cmd/kubelet/app" // linked for the go:linkname pulls below
	"k8s.io/kubernetes/cmd/kubelet/app/options"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletconfigvalidation "k8s.io/kubernetes/pkg/kubelet/apis/config/validation"
	"k8s.io/kubernetes/pkg/kubelet/cadvisor"
	_ "k8s.io/kubernetes/pkg/kubelet/cm" // linked for hardEvictionReservation
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"

	_ "unsafe" // go:linkname
)

// release is set at build time (-X main.release=v1.37.2).
var release = "unknown"

// successStage is the stage a judge that started reports ("started" for --manager=cpu).
var successStage = "start"

// cmd/kubelet/app.loadConfigFile: kubelet's --config loader (configfiles.NewFsLoader + defaults).
//
//go:linkname loadConfigFile k8s.io/kubernetes/cmd/kubelet/app.loadConfigFile
func loadConfigFile(ctx context.Context, name string) (*kubeletconfig.KubeletConfiguration, error)

// cmd/kubelet/app.kubeletConfigFlagPrecedence: flags win over the file and the drop-ins.
//
//go:linkname kubeletConfigFlagPrecedence k8s.io/kubernetes/cmd/kubelet/app.kubeletConfigFlagPrecedence
func kubeletConfigFlagPrecedence(kc *kubeletconfig.KubeletConfiguration, args []string) error

// cmd/kubelet/app.parseResourceList: --kube-reserved / --system-reserved to a ResourceList.
//
//go:linkname parseResourceList k8s.io/kubernetes/cmd/kubelet/app.parseResourceList
func parseResourceList(m map[string]string) (v1.ResourceList, error)

// pkg/kubelet/cm.hardEvictionReservation: what the hard eviction thresholds reserve.
//
//go:linkname hardEvictionReservation k8s.io/kubernetes/pkg/kubelet/cm.hardEvictionReservation
func hardEvictionReservation(thresholds []evictionapi.Threshold, capacity v1.ResourceList) v1.ResourceList

// Verdict is the one JSON line the judge prints.
type Verdict struct {
	Release string          `json:"release"`
	Started bool            `json:"started"`
	Error   string          `json:"error,omitempty"`
	Stage   string          `json:"stage"`
	State   json.RawMessage `json:"state"`
}

type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.err.Error() }

func at(stage string, err error) error {
	if err == nil {
		return nil
	}
	return &stageError{stage, err}
}

func main() {
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	state, err := judge(os.Args[1:])
	out := Verdict{Release: release, Started: err == nil, Stage: successStage, State: state}
	if out.State == nil {
		out.State = json.RawMessage("null")
	}
	if err != nil {
		var se *stageError
		if errors.As(err, &se) {
			out.Stage = se.stage
		}
		out.Error = err.Error()
	}
	line, merr := json.Marshal(out)
	if merr != nil {
		fmt.Fprintln(os.Stderr, merr)
		os.Exit(2)
	}
	fmt.Println(string(line))
}

// judgeOptions are the judge's own flags; the rest of the command line is kubelet's.
type judgeOptions struct {
	tree string // --tree=ROOT: the node tree
	// --written-checkpoint=PATH: where to copy the checkpoint kubelet's own state package holds
	// after Start (on a tree with no checkpoint, the file this release writes for the machine).
	written string
	// --admit-pods=FILE: a JSON list of v1.Pod objects admitted after Start, one after the other,
	// as kubelet's topology manager admits a pod under its "none" policy (scope.admitPolicyNone:
	// each init container, then each container, through the hint providers' Allocate).
	admit string
	// --manager=cpu: judge the CPU manager's start (cpu.go) instead of the memory manager's.
	manager string
}

// splitArgs takes the judge's own flags (--tree=ROOT, --written-checkpoint=PATH) out of the command line.
func splitArgs(all []string) (judgeOptions, []string) {
	var opts judgeOptions
	own := map[string]*string{"--tree": &opts.tree, "--written-checkpoint": &opts.written, "--admit-pods": &opts.admit, "--manager": &opts.manager}
	var rest []string
	for i := 0; i < len(all); i++ {
		name, value, hasValue := strings.Cut(all[i], "=")
		target, ok := own[name]
		switch {
		case ok && hasValue:
			*target = value
		case ok && i+1 < len(all):
			*target = all[i+1]
			i++
		default:
			rest = append(rest, all[i])
		}
	}
	return opts, rest
}

func judge(all []string) (json.RawMessage, error) {
	ctx := context.Background()
	logger := klog.Background()
	opts, args := splitArgs(all)
	tree := opts.tree
	if tree == "" {
		return nil, at("usage", fmt.Errorf("--tree=ROOT is required"))
	}
	switch opts.manager {
	case "", "memory":
	case "cpu":
		return judgeCPU(ctx, logger, all)
	default:
		return nil, at("usage", fmt.Errorf("--manager=%s: memory or cpu", opts.manager))
	}

	kc, flags, err := loadConfiguration(ctx, args)
	if err != nil {
		return nil, err
	}
	// The cgroup v1 check looks at the host running the judge, not at the tree.
	kc.FailCgroupV1 = false
	// cmd/kubelet/app.NewKubeletCommand: "We always validate the local configuration".
	if err := kubeletconfigvalidation.ValidateKubeletConfiguration(kc, utilfeature.DefaultFeatureGate); err != nil {
		return nil, at("validate", fmt.Errorf("failed to validate kubelet configuration, error: %w", err))
	}

	// cmd/kubelet/app.run: the reservations of the NodeConfig.
	kubeReserved, err := parseResourceList(kc.KubeReserved)
	if err != nil {
		return nil, at("reserved", fmt.Errorf("--kube-reserved value failed to parse: %w", err))
	}
	systemReserved, err := parseResourceList(kc.SystemReserved)
	if err != nil {
		return nil, at("reserved", fmt.Errorf("--system-reserved value failed to parse: %w", err))
	}
	var thresholds []evictionapi.Threshold
	if !flags.ExperimentalNodeAllocatableIgnoreEvictionThreshold {
		thresholds, err = eviction.ParseThresholdConfig([]string{}, kc.EvictionHard, nil, nil, nil)
		if err != nil {
			return nil, at("reserved", err)
		}
	}

	info, err := machineInfoFromTree(tree)
	if err != nil {
		return nil, at("machine", err)
	}
	// pkg/kubelet/cm.NewContainerManager: capacity = cadvisor.CapacityFromMachineInfo.
	capacity := cadvisor.CapacityFromMachineInfo(info)
	// The judge reads no CPUs: the memory manager uses memory and hugepages only, and a cpu
	// entry of 0 cores would make validateNodeAllocatable refuse any cpu reservation.
	delete(capacity, v1.ResourceCPU)
	reservation := nodeAllocatableReservation(capacity, systemReserved, kubeReserved, thresholds)

	scratch, err := scratchStateDir(flags.RootDirectory, "memory_manager_state")
	if err != nil {
		return nil, at("machine", err)
	}
	defer os.RemoveAll(scratch)

	mgr, err := newManager(ctx, logger, kc.MemoryManagerPolicy, info, reservation, kc.ReservedMemory, scratch)
	if err != nil {
		return nil, at("new_manager", err)
	}
	pods, err := readPods(opts.admit)
	if err != nil {
		return nil, at("usage", err)
	}
	// pkg/kubelet/cm.containerManagerImpl.Start, with fakes as memory_manager_test.go uses. The
	// active pods are the pods to admit: kubelet adds a pod to its pod manager before admitting it,
	// and the memory manager drops the state of pods that are not active (removeStaleState).
	if err := mgr.Start(ctx, func() []*v1.Pod { return pods }, &sourcesReady{}, podStatusProvider{}, runtimeService{}, containermap.NewContainerMap()); err != nil {
		return nil, at("start", fmt.Errorf("start memory manager error: %w", err))
	}
	if err := admitPods(ctx, logger, mgr, pods); err != nil {
		return nil, at("admit", err)
	}
	state, err := heldState(mgr)
	if err != nil {
		return nil, at("start", err)
	}
	if opts.written != "" {
		data, err := os.ReadFile(filepath.Join(scratch, "memory_manager_state"))
		if err == nil {
			err = os.WriteFile(opts.written, data, 0o600)
		}
		if err != nil {
			return state, at("start", fmt.Errorf("--written-checkpoint: %w", err))
		}
	}
	// containerManagerImpl.Start then refuses a reservation larger than the capacity.
	if err := validateNodeAllocatable(capacity, reservation); err != nil {
		return state, at("allocatable", err)
	}
	return state, nil
}

// loadConfiguration follows cmd/kubelet/app.NewKubeletCommand's RunE up to validation. Kubelet's
// config defaulting panics on some values (v1.34/v1.35 SetDefaults_KubeletConfiguration on a
// feature gate they do not know): kubelet exits there, a refusal of its configuration.
func loadConfiguration(ctx context.Context, args []string) (kc *kubeletconfig.KubeletConfiguration, flags *options.KubeletFlags, err error) {
	defer func() {
		if r := recover(); r != nil {
			kc, flags, err = nil, nil, at("config", fmt.Errorf("kubelet panics: %v", r))
		}
	}()
	return loadConfigurationSteps(ctx, args)
}

func loadConfigurationSteps(ctx context.Context, args []string) (*kubeletconfig.KubeletConfiguration, *options.KubeletFlags, error) {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	fs.SetOutput(io.Discard)
	flags := options.NewKubeletFlags()
	kc, err := options.NewKubeletConfiguration()
	if err != nil {
		return nil, nil, at("config", err)
	}
	flags.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kc)
	options.AddGlobalFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, nil, at("config", fmt.Errorf("failed to parse kubelet flag: %w", err))
	}
	if len(fs.Args()) > 0 {
		return nil, nil, at("config", fmt.Errorf("unknown command %+s", fs.Args()[0]))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
		return nil, nil, at("config", fmt.Errorf("failed to set feature gates from initial flags-based config: %w", err))
	}
	if err := options.ValidateKubeletFlags(flags); err != nil {
		return nil, nil, at("config", fmt.Errorf("failed to validate kubelet flags: %w", err))
	}
	if len(flags.KubeletConfigFile) > 0 {
		kc, err = loadConfigFile(ctx, flags.KubeletConfigFile)
		if err != nil {
			return nil, nil, at("config", fmt.Errorf("failed to load kubelet config file, path: %s, error: %w", flags.KubeletConfigFile, err))
		}
	}
	if len(flags.KubeletDropinConfigDirectory) > 0 {
		if err := mergeDropins(kc, flags.KubeletDropinConfigDirectory); err != nil {
			return nil, nil, at("config", fmt.Errorf("failed to merge kubelet configs: %w", err))
		}
	}
	if len(flags.KubeletConfigFile) > 0 || len(flags.KubeletDropinConfigDirectory) > 0 {
		if err := kubeletConfigFlagPrecedence(kc, args); err != nil {
			return nil, nil, at("config", fmt.Errorf("failed to precedence kubeletConfigFlag: %w", err))
		}
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(kc.FeatureGates); err != nil {
			return nil, nil, at("config", fmt.Errorf("failed to set feature gates from initial flags-based config: %w", err))
		}
	}
	return kc, flags, nil
}

// nodeAllocatableReservation mirrors pkg/kubelet/cm.containerManagerImpl.GetNodeAllocatableReservation
// (a method of an unexported struct, so it cannot be called): per capacity resource, the sum of
// system-reserved, kube-reserved and the hard eviction reservation, zero sums left out.
func nodeAllocatableReservation(capacity, systemReserved, kubeReserved v1.ResourceList, thresholds []evictionapi.Threshold) v1.ResourceList {
	evictionReservation := hardEvictionReservation(thresholds, capacity)
	result := make(v1.ResourceList)
	for k := range capacity {
		value := resource.NewQuantity(0, resource.DecimalSI)
		if systemReserved != nil {
			value.Add(systemReserved[k])
		}
		if kubeReserved != nil {
			value.Add(kubeReserved[k])
		}
		if evictionReservation != nil {
			value.Add(evictionReservation[k])
		}
		if !value.IsZero() {
			result[k] = *value
		}
	}
	return result
}

// validateNodeAllocatable mirrors pkg/kubelet/cm.containerManagerImpl.validateNodeAllocatable.
func validateNodeAllocatable(capacity, nar v1.ResourceList) error {
	var errs []string
	for k, v := range nar {
		value := capacity[k].DeepCopy()
		value.Sub(v)
		if value.Sign() < 0 {
			errs = append(errs, fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v. Expected capacity >= reservation.", k, v, capacity[k]))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid Node Allocatable configuration. %s", strings.Join(errs, " "))
	}
	return nil
}

// scratchStateDir copies <root-dir>/<name> (when it exists) into a new temporary directory:
// Start writes a checkpoint when there is none, and the tree must stay untouched.
func scratchStateDir(rootDir, name string) (string, error) {
	scratch, err := os.MkdirTemp("", "kubelet-judge-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(rootDir, name)
	data, err := os.ReadFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return scratch, nil
	}
	if err != nil {
		os.RemoveAll(scratch)
		return "", err
	}
	if err := os.WriteFile(filepath.Join(scratch, name), data, 0o600); err != nil {
		os.RemoveAll(scratch)
		return "", err
	}
	return scratch, nil
}

// readPods reads the --admit-pods file (no file: no pod).
func readPods(path string) ([]*v1.Pod, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--admit-pods: %w", err)
	}
	var pods []*v1.Pod
	if err := json.Unmarshal(data, &pods); err != nil {
		return nil, fmt.Errorf("--admit-pods %s: %w", path, err)
	}
	return pods, nil
}

// admitPods follows pkg/kubelet/cm/topologymanager's scope.admitPolicyNone for each pod in turn:
// the memory manager's Allocate for each init container, then each container (the state package
// writes the checkpoint on each assignment).
func admitPods(ctx context.Context, logger klog.Logger, mgr memorymanager.Manager, pods []*v1.Pod) error {
	for _, pod := range pods {
		for _, container := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			if err := allocate(ctx, logger, mgr, pod, &container); err != nil {
				return fmt.Errorf("pod %s container %s: %w", pod.UID, container.Name, err)
			}
		}
	}
	return nil
}

// heldState is the state the memory manager holds after Start, in the checkpoint's JSON shape.
func heldState(mgr memorymanager.Manager) (json.RawMessage, error) {
	reader := mgr.State()
	held := map[string]interface{}{
		"machineState": reader.GetMachineState(),
		"entries":      reader.GetMemoryAssignments(),
	}
	return json.Marshal(held)
}

// Fakes as pkg/kubelet/cm/memorymanager/memory_manager_test.go uses them.
type sourcesReady struct{}

func (s *sourcesReady) AddSource(string) {}
func (s *sourcesReady) AllReady() bool   { return true }

type podStatusProvider struct{}

func (podStatusProvider) GetPodStatus(types.UID) (v1.PodStatus, bool) { return v1.PodStatus{}, false }

type runtimeService struct{}

func (runtimeService) UpdateContainerResources(context.Context, string, *runtimeapi.ContainerResources) error {
	return nil
}
