// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

// The CPU judge's API shim for k8s.io/kubernetes v1.37: the topology manager takes a logger too; cadvisor's packages live under github.com/google/cadvisor/lib.
package main

import (
	"context"
	_ "unsafe" // go:linkname

	"github.com/google/cadvisor/lib/machine"
	"github.com/google/cadvisor/lib/utils/sysfs"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/cpumanager/topology"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/config"
	"k8s.io/utils/cpuset"
)

// cadvisor's sysfs reader and topology, as kubelet's cadvisor builds MachineInfo.Topology.
type sysFs = sysfs.SysFs

// cadvisor's sysfs.CacheInfo (what the judge's GetCacheInfo over the tree returns).
type cacheInfo = sysfs.CacheInfo

func newRealSysFs() sysFs { return sysfs.NewRealSysFs() }

func getTopology(fs sysFs) ([]numaNode, int, error) { return machine.GetTopology(fs) }

// cmd/kubelet/app.getReservedCPUs: reservedSystemCPUs must be a subset of the online CPUs.
//
//go:linkname linkedGetReservedCPUs k8s.io/kubernetes/cmd/kubelet/app.getReservedCPUs
func linkedGetReservedCPUs(logger klog.Logger, info *machineInfo, cpus string) (cpuset.CPUSet, error)

func getReservedCPUs(logger klog.Logger, info *machineInfo, cpus string) (cpuset.CPUSet, error) {
	return linkedGetReservedCPUs(logger, info, cpus)
}

// pkg/kubelet/cm.NewContainerManager's topology manager.
func newTopologyManager(logger klog.Logger, info *machineInfo, kc *kubeletconfig.KubeletConfiguration) (topologymanager.Manager, error) {
	return topologymanager.NewManager(logger, info.Topology, kc.TopologyManagerPolicy, kc.TopologyManagerScope, kc.TopologyManagerPolicyOptions)
}

// pkg/kubelet/cm.NewContainerManager's CPU manager (the state directory is the scratch copy).
func newCPUManager(logger klog.Logger, kc *kubeletconfig.KubeletConfiguration, info *machineInfo, specific cpuset.CPUSet, reservation v1.ResourceList, dir string, store topologymanager.Store) (cpumanager.Manager, error) {
	return cpumanager.NewManager(logger, kc.CPUManagerPolicy, kc.CPUManagerPolicyOptions, kc.CPUManagerReconcilePeriod.Duration, info, specific, reservation, dir, store)
}

// containerManagerImpl.Start's cpuManager.Start: no pod status provider, no runtime, no container.
func startCPUManager(ctx context.Context, mgr cpumanager.Manager, activePods cpumanager.ActivePodsFunc, ready config.SourcesReady) error {
	return mgr.Start(ctx, activePods, ready, nil, nil, containermap.NewContainerMap())
}

func discover(logger klog.Logger, info *machineInfo) (*topology.CPUTopology, error) {
	return topology.Discover(logger, info)
}

func newStaticPolicy(logger klog.Logger, topo *topology.CPUTopology, num int, specific cpuset.CPUSet, store topologymanager.Store, options map[string]string) (cpumanager.Policy, error) {
	return cpumanager.NewStaticPolicy(logger, topo, num, specific, store, options)
}
