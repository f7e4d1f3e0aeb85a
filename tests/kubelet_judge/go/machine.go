// Copyright: (c) 2026, nodeops.numa_drift contributors
// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The node tree as cadvisor reads the machine (github.com/google/cadvisor/utils/sysinfo
// GetNodesInfo + machine.GetMachineMemoryCapacity): the NUMA node set is the nodeN directories of
// /sys/devices/system/node, a node's memory is its meminfo "Node N MemTotal: X kB" times 1024,
// its hugepages are nr_hugepages per hugepages-<size>kB directory; the machine's memory capacity
// is /proc/meminfo MemTotal times 1024, its hugepages the sum of the nodes' pools.
var (
	nodeDirRe     = regexp.MustCompile(`^node([0-9]+)$`)
	nodeMemRe     = regexp.MustCompile(`(?m)^Node [0-9]+ MemTotal:\s*([0-9]+) kB`)
	procMemRe     = regexp.MustCompile(`(?m)^MemTotal:\s*([0-9]+) kB`)
	hugepageDirRe = regexp.MustCompile(`^hugepages-([0-9]+)kB$`)
)

func readUint(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
}

func matchKB(re *regexp.Regexp, path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	m := re.FindSubmatch(data)
	if m == nil {
		return 0, fmt.Errorf("no MemTotal in %s", path)
	}
	kb, err := strconv.ParseUint(string(m[1]), 10, 64)
	return kb * 1024, err
}

func machineInfoFromTree(tree string) (*machineInfo, error) {
	nodeRoot := filepath.Join(tree, "sys/devices/system/node")
	dirs, err := os.ReadDir(nodeRoot)
	if err != nil {
		return nil, err
	}
	info := &machineInfo{}
	machinePages := map[uint64]uint64{}
	var sum uint64
	for _, dir := range dirs {
		m := nodeDirRe.FindStringSubmatch(dir.Name())
		if m == nil {
			continue
		}
		id, _ := strconv.Atoi(m[1])
		nodeDir := filepath.Join(nodeRoot, dir.Name())
		mem, err := matchKB(nodeMemRe, filepath.Join(nodeDir, "meminfo"))
		if err != nil {
			return nil, err
		}
		node := numaNode{Id: id, Memory: mem}
		pools, err := os.ReadDir(filepath.Join(nodeDir, "hugepages"))
		if err != nil {
			return nil, err
		}
		for _, pool := range pools {
			pm := hugepageDirRe.FindStringSubmatch(pool.Name())
			if pm == nil {
				continue
			}
			size, _ := strconv.ParseUint(pm[1], 10, 64)
			count, err := readUint(filepath.Join(nodeDir, "hugepages", pool.Name(), "nr_hugepages"))
			if err != nil {
				return nil, err
			}
			node.HugePages = append(node.HugePages, hugePagesInfo{PageSize: size, NumPages: count})
			machinePages[size] += count
		}
		sum += mem
		info.Topology = append(info.Topology, node)
	}
	if len(info.Topology) == 0 {
		return nil, fmt.Errorf("no NUMA node directory under %s", nodeRoot)
	}
	sort.Slice(info.Topology, func(i, j int) bool { return info.Topology[i].Id < info.Topology[j].Id })
	info.MemoryCapacity, err = matchKB(procMemRe, filepath.Join(tree, "proc/meminfo"))
	if os.IsNotExist(err) {
		info.MemoryCapacity, err = sum, nil
	}
	if err != nil {
		return nil, err
	}
	sizes := make([]uint64, 0, len(machinePages))
	for size := range machinePages {
		sizes = append(sizes, size)
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i] < sizes[j] })
	for _, size := range sizes {
		info.HugePages = append(info.HugePages, hugePagesInfo{PageSize: size, NumPages: machinePages[size]})
	}
	return info, nil
}
