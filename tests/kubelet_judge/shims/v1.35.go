// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

// The kubelet judge's API shim for k8s.io/kubernetes v1.35: NewManager takes a logger,
// mergeKubeletConfigurations returns an error only, NewFakeManager takes no logger.
package main

import (
	"context"
	_ "unsafe" // go:linkname

	cadvisorapi "github.com/google/cadvisor/info/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
)

type machineInfo = cadvisorapi.MachineInfo
type numaNode = cadvisorapi.Node
type hugePagesInfo = cadvisorapi.HugePagesInfo

//go:linkname mergeKubeletConfigurations k8s.io/kubernetes/cmd/kubelet/app.mergeKubeletConfigurations
func mergeKubeletConfigurations(kc *kubeletconfig.KubeletConfiguration, dir string) error

func mergeDropins(kc *kubeletconfig.KubeletConfiguration, dir string) error {
	return mergeKubeletConfigurations(kc, dir)
}

func newManager(_ context.Context, logger klog.Logger, policy string, info *machineInfo, reservation v1.ResourceList, reserved []kubeletconfig.MemoryReservation, dir string) (memorymanager.Manager, error) {
	return memorymanager.NewManager(logger, policy, info, reservation, reserved, dir, topologymanager.NewFakeManager())
}

// allocate: Allocate takes the pod and the container only.
func allocate(_ context.Context, _ klog.Logger, mgr memorymanager.Manager, pod *v1.Pod, container *v1.Container) error {
	return mgr.Allocate(pod, container)
}
