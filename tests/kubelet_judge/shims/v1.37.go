// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

// The kubelet judge's API shim for k8s.io/kubernetes v1.37: NewManager takes a logger,
// mergeKubeletConfigurations also returns the skipped drop-in files, NewFakeManager takes a logger,
// cadvisor's types live in github.com/google/cadvisor/lib/model, Allocate takes a context and an operation.
package main

import (
	"context"
	_ "unsafe" // go:linkname

	cadvisorapi "github.com/google/cadvisor/lib/model"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	"k8s.io/kubernetes/pkg/kubelet/cm/memorymanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

type machineInfo = cadvisorapi.MachineInfo
type numaNode = cadvisorapi.Node
type hugePagesInfo = cadvisorapi.HugePagesInfo

//go:linkname mergeKubeletConfigurations k8s.io/kubernetes/cmd/kubelet/app.mergeKubeletConfigurations
func mergeKubeletConfigurations(kc *kubeletconfig.KubeletConfiguration, dir string) ([]string, error)

func mergeDropins(kc *kubeletconfig.KubeletConfiguration, dir string) error {
	_, err := mergeKubeletConfigurations(kc, dir)
	return err
}

func newManager(_ context.Context, logger klog.Logger, policy string, info *machineInfo, reservation v1.ResourceList, reserved []kubeletconfig.MemoryReservation, dir string) (memorymanager.Manager, error) {
	return memorymanager.NewManager(logger, policy, info, reservation, reserved, dir, topologymanager.NewFakeManager(logger))
}

// allocate: Allocate takes a context and the operation (a pod being added at admission).
func allocate(ctx context.Context, logger klog.Logger, mgr memorymanager.Manager, pod *v1.Pod, container *v1.Container) error {
	return mgr.Allocate(klog.NewContext(ctx, logger), pod, container, lifecycle.AddOperation)
}
