package main

// The test's workload, drawn (seeded) from the openb trace: each worker's fake GPU nodes are a
// sample of openb's node list, and each Job is one openb GPU pod: its CPU, memory, GPU share
// (alibabacloud.com/gpu-milli per GPU and alibabacloud.com/gpu-count, as container resources
// so that Kueue counts them) and QoS class (LS and Guaranteed are latency-sensitive). Its run
// time is openb's, clamped to 30 min - 3 h and compressed as the signal clock is; KWOK
// completes the pod after it. greensched's annotations go on the pod template, which Kueue
// copies into the Workload.

import (
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

type nodeRow struct {
	name     string
	cpuMilli int64
	memMiB   int64
	gpus     int64
	model    string
}

type podRow struct {
	name     string
	cpuMilli int64
	memMiB   int64
	numGPU   int64
	gpuMilli int64
	qos      string
	runS     int64 // openb's creation to deletion
}

// readCSV returns the rows of an openb CSV as maps by column name; errors name file and line.
func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var rows []map[string]string
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		m := make(map[string]string, len(header))
		for i, h := range header {
			m[h] = rec[i]
		}
		m["_line"] = strconv.Itoa(line)
		rows = append(rows, m)
	}
}

func ints(path string, row map[string]string, keys ...string) ([]int64, error) {
	out := make([]int64, len(keys))
	for i, k := range keys {
		v, err := strconv.ParseInt(row[k], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%s: column %s: %q is not an integer", path, row["_line"], k, row[k])
		}
		out[i] = v
	}
	return out, nil
}

// sampleNodes draws `n` GPU nodes per worker from openb's node list; each worker gets two of
// openb's 8-GPU nodes, so that every openb pod fits somewhere.
func sampleNodes(path string, workers []string, n int, rng *rand.Rand) (map[string][]nodeRow, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var all, big []nodeRow
	for _, r := range rows {
		v, err := ints(path, r, "cpu_milli", "memory_mib", "gpu")
		if err != nil {
			return nil, err
		}
		if v[2] == 0 {
			continue
		}
		row := nodeRow{name: r["sn"], cpuMilli: v[0], memMiB: v[1], gpus: v[2], model: r["model"]}
		all = append(all, row)
		if row.gpus == 8 && row.cpuMilli >= 96000 {
			big = append(big, row)
		}
	}
	if len(all) < n*len(workers) || len(big) < 2*len(workers) {
		return nil, fmt.Errorf("%s: too few GPU nodes for %d workers x %d", path, len(workers), n)
	}
	out := map[string][]nodeRow{}
	used := map[string]bool{}
	take := func(w string, row nodeRow) {
		used[row.name] = true
		row.name = w + "-" + row.name
		out[w] = append(out[w], row)
	}
	for _, w := range workers {
		for len(out[w]) < 2 {
			if b := big[rng.Intn(len(big))]; !used[b.name] {
				take(w, b)
			}
		}
		for len(out[w]) < n {
			if a := all[rng.Intn(len(all))]; !used[a.name] {
				take(w, a)
			}
		}
		sort.Slice(out[w], func(i, j int) bool { return out[w][i].name < out[w][j].name })
	}
	return out, nil
}

// samplePods draws `n` GPU pods of openb's pod list that fit a node of every worker.
func samplePods(path string, n int, fits func(podRow) bool, rng *rand.Rand) ([]podRow, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var all []podRow
	for _, r := range rows {
		v, err := ints(path, r, "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time", "deletion_time")
		if err != nil {
			return nil, err
		}
		p := podRow{name: r["name"], cpuMilli: v[0], memMiB: v[1], numGPU: v[2], gpuMilli: v[3],
			qos: r["qos"], runS: v[5] - v[4]}
		if p.numGPU > 0 && p.gpuMilli > 0 && fits(p) {
			all = append(all, p)
		}
	}
	if len(all) < n {
		return nil, fmt.Errorf("%s: only %d GPU pods fit the sampled nodes", path, len(all))
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:n], nil
}

func latencySensitive(qos string) bool { return qos == "LS" || qos == "Guaranteed" }

func nodeObject(n nodeRow) *unstructured.Unstructured {
	gpus := strconv.FormatInt(n.gpus, 10)
	res := map[string]any{"cpu": fmt.Sprintf("%dm", n.cpuMilli), "memory": fmt.Sprintf("%dMi", n.memMiB),
		"pods": "110", "nvidia.com/gpu": gpus, "alibabacloud.com/gpu-count": gpus}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.name,
			"annotations": map[string]any{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			"labels": map[string]any{"type": "kwok", "kubernetes.io/hostname": n.name,
				"alibabacloud.com/gpu-card-model": n.model}},
		"status": map[string]any{"allocatable": res, "capacity": res},
	}}
}

// nodeListJSON is the nodes as a v1.NodeList, for `greensched serve --nodes-json` (the chart's
// extender.nodes.json).
func nodeListJSON(nodes []nodeRow) ([]byte, error) {
	var items []any
	for _, n := range nodes {
		items = append(items, nodeObject(n).Object)
	}
	return json.Marshal(map[string]any{"apiVersion": "v1", "kind": "NodeList", "items": items})
}

// writeNodeCSV writes the nodes in openb's node-list format (the dispatch service's fleet).
func writeNodeCSV(path string, nodes []nodeRow) error {
	text := "sn,cpu_milli,memory_mib,gpu,model\n"
	for _, n := range nodes {
		text += fmt.Sprintf("%s,%d,%d,%d,%s\n", n.name, n.cpuMilli, n.memMiB, n.gpus, n.model)
	}
	return os.WriteFile(path, []byte(text), 0o644)
}

// jobSpec is one test Job: an openb pod, its annotations, and its run time.
type jobSpec struct {
	name    string
	pod     podRow
	ls      bool
	home    string
	dataGB  int
	signalS int64         // run time on the signal clock
	wall    time.Duration // run time on the wall clock
}

func (j jobSpec) object(queue string) *batchv1.Job {
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(j.pod.cpuMilli, resource.DecimalSI),
		corev1.ResourceMemory: q(fmt.Sprintf("%dMi", j.pod.memMiB)),
		corev1.ResourceName("alibabacloud.com/gpu-milli"): q(strconv.FormatInt(j.pod.gpuMilli, 10)),
		corev1.ResourceName("alibabacloud.com/gpu-count"): q(strconv.FormatInt(j.pod.numGPU, 10)),
	}
	qos := "BE"
	if j.ls {
		qos = "LS"
	}
	run := j.wall.Milliseconds()
	annotations := map[string]string{
		"greensched.io/qos":      qos,
		"greensched.io/duration": strconv.FormatInt(j.signalS, 10),
		"greensched.io/data-gb":  strconv.Itoa(j.dataGB),
		"greensched.io/home":     j.home,
		"openb.pod":              j.pod.name,
		// KWOK: created and ready at once, complete after the run time.
		"pod-create.stage.kwok.x-k8s.io/delay":          "0s",
		"pod-create.stage.kwok.x-k8s.io/jitter-delay":   "0s",
		"pod-ready.stage.kwok.x-k8s.io/delay":           "0s",
		"pod-ready.stage.kwok.x-k8s.io/jitter-delay":    "0s",
		"pod-complete.stage.kwok.x-k8s.io/delay":        fmt.Sprintf("%dms", run),
		"pod-complete.stage.kwok.x-k8s.io/jitter-delay": fmt.Sprintf("%dms", run+100),
	}
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: j.name, Namespace: "default",
			Labels: map[string]string{"kueue.x-k8s.io/queue-name": queue}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1),
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
				Spec: corev1.PodSpec{
					SchedulerName: "greensched", RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "task", Image: "registry.invalid/openb-task",
						Resources: corev1.ResourceRequirements{Requests: res, Limits: res}}},
				},
			},
		},
	}
}
