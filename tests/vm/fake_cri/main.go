// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

// The container runtime of the molecule guests' real kubelet: kubelet's own fake remote runtime
// (k8s.io/cri-client/pkg/fake, the CRI server kubelet's tests use) served on a unix socket.
// It accepts every sandbox, container and image call and runs nothing, so a real kubelet admits
// Guaranteed static pods (the memory manager's Allocate writes their assignments into its
// checkpoint) in a guest without containerd. Glue only: no kubelet or CRI rule is written here.
//
//	fake-cri [unix:///run/numa-drift-fake-cri.sock]
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-client/pkg/fake"
)

const defaultEndpoint = "unix:///run/numa-drift-fake-cri.sock"

func main() {
	endpoint := defaultEndpoint
	if len(os.Args) > 1 {
		endpoint = os.Args[1]
	}
	runtime := fake.NewFakeRemoteRuntime()
	// kubelet takes its cgroup driver from the runtime (RuntimeConfig) where the runtime says one;
	// the guests' KubeletConfiguration says systemd, as kubeadm's does.
	runtime.RuntimeService.FakeLinuxConfiguration = &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD}
	if err := runtime.Start(endpoint); err != nil {
		fmt.Fprintf(os.Stderr, "fake-cri: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "fake-cri: serving kubelet's fake remote runtime on %s\n", endpoint)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
	runtime.Stop()
}
