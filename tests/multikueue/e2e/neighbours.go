package main

// What else the machine runs while a scenario measures latency: compilers and linkers started
// by something other than the test (a build beside it takes CPU, cache and, on a machine whose
// cores are hyperthreads, half of a core from the clusters). Sampled every 2 s and reported at
// the end, so that a slow run says whether it had the machine to itself.

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// buildTools are the command names of compilers and linkers (/proc/<pid>/comm).
var buildTools = map[string]bool{"cc1plus": true, "cc1": true, "clang": true, "clang++": true, "ld": true,
	"ld.gold": true, "ld.lld": true, "collect2": true, "ninja": true, "compile": true, "link": true}

type neighbours struct {
	mu            sync.Mutex
	samples, busy int
	most          int
	seen          map[string]bool
}

// watchNeighbours samples the machine's processes until ctx ends.
func watchNeighbours(ctx context.Context) *neighbours {
	n := &neighbours{seen: map[string]bool{}}
	go func() {
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			n.sample()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return n
}

func (n *neighbours) sample() {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	count := 0
	var names []string
	for _, f := range comms {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if name := strings.TrimSpace(string(b)); buildTools[name] {
			count++
			names = append(names, name)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.samples++
	if count > 0 {
		n.busy++
	}
	n.most = max(n.most, count)
	for _, name := range names {
		n.seen[name] = true
	}
}

// report says how often a build ran beside the test.
func (n *neighbours) report() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.busy == 0 {
		logf("no compiler or linker ran beside the test (%d samples)", n.samples)
		return
	}
	var names []string
	for name := range n.seen {
		names = append(names, name)
	}
	sort.Strings(names)
	logf("compilers or linkers ran beside the test in %d of %d samples (at most %d at once: %s): "+
		"its latencies were measured on a shared machine", n.busy, n.samples, n.most, strings.Join(names, ", "))
}
