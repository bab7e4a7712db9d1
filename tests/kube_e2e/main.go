// greensched-kube-e2e runs Kubernetes' own scheduler (scheduler.New, its HTTPExtender client
// and a fake clientset) against a running `greensched serve`, and checks what the real client
// sees: bindings, FailedScheduling events, errors and retries, crash recovery, throughput, and
// HTTPS with client certificates, and greensched deschedule's evictions.
// Exits 1 when a check fails. main.go and harness.go are shared by every kube-scheduler
// version; what differs between versions is in k8s-<version>/k8s.go. Built for 1.20.5 from
// the vendored Kubernetes tree by kube_e2e.cmake, and for 1.35.4 from Go modules
// (k8s-1.35/go.mod) by kube_e2e_1_35.cmake.
package main

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

type options struct {
	greensched, nodesCSV, podsCSV, config, deployConfig, work   string
	cases                                                       string
	nocachePods, crashPods, crashKills, throughputPods, tlsPods int
	seed                                                        int64
}

// The per-node reasons kube-scheduler may count for an openb pod: greensched's categories
// (serve/filter_message.cpp) and the in-tree NodeResourcesFit's.
var knownReasons = map[string]bool{
	"Insufficient cpu":                         true,
	"Insufficient memory":                      true,
	"Node has no GPU":                          true,
	"GPU model not allowed by the pod":         true,
	"Insufficient GPU share on any single GPU": true,
	"Insufficient fully free GPUs":             true,
	"Insufficient alibabacloud.com/gpu-milli":  true,
	"Insufficient alibabacloud.com/gpu-count":  true,
}

func main() {
	var o options
	flag.StringVar(&o.greensched, "greensched", "", "the greensched binary")
	flag.StringVar(&o.nodesCSV, "nodes", "", "openb node list CSV")
	flag.StringVar(&o.podsCSV, "pods", "", "openb pod list CSV")
	flag.StringVar(&o.config, "config", "", "KubeSchedulerConfiguration ("+configAPIVersion+") the cases run with")
	flag.StringVar(&o.deployConfig, "deploy-config", "", "deploy/'s "+configAPIVersion+" config, checked to decode")
	flag.StringVar(&o.work, "work", "", "scratch directory (state, logs, figures)")
	flag.StringVar(&o.cases, "cases", "full,nocache,crash,bad,throughput,tls,defrag", "cases to run")
	flag.IntVar(&o.nocachePods, "nocache-pods", 300, "pods of the nodeCacheCapable: false case")
	flag.IntVar(&o.crashPods, "crash-pods", 1500, "pods of the crash case")
	flag.IntVar(&o.crashKills, "crash-kills", 6, "SIGKILLs of the crash case")
	flag.IntVar(&o.throughputPods, "throughput-pods", 3000, "pods of the throughput case")
	flag.IntVar(&o.tlsPods, "tls-pods", 300, "pods of the mutual TLS case")
	flag.Int64Var(&o.seed, "seed", 42, "seed of the crash case's kill times")
	flag.Parse()
	if o.greensched == "" || o.nodesCSV == "" || o.podsCSV == "" || o.config == "" || o.work == "" {
		fmt.Fprintln(os.Stderr, "usage: greensched-kube-e2e -greensched BIN -nodes CSV -pods CSV -config YAML -work DIR [-cases ...]")
		os.Exit(2)
	}
	// The fake clientset's watches panic when more than this many events wait unread; pods
	// are created in bursts of thousands.
	watch.DefaultChanSize = 1 << 20
	klogFlags := flag.NewFlagSet("klog", flag.ExitOnError)
	klog.InitFlags(klogFlags)
	os.MkdirAll(o.work, 0o755)
	klogFile, err := os.Create(filepath.Join(o.work, "kube-scheduler.log"))
	if err == nil {
		klogFlags.Set("logtostderr", "false")
		klogFlags.Set("alsologtostderr", "false")
		klogFlags.Set("stderrthreshold", "FATAL")
		klog.SetOutput(klogFile)
	}

	nodes, err := readNodes(o.nodesCSV)
	if err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
	pods, err := readPods(o.podsCSV)
	if err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
	fmt.Printf("kube-scheduler %s, config %s\n", kubeVersion, configAPIVersion)
	failed := false
	if o.deployConfig != "" {
		ck := &checker{name: "deploy-config"}
		if cfg, err := loadConfig(o.deployConfig); err != nil {
			ck.errorf("%v", err)
		} else if len(cfg.Extenders) != 1 || cfg.Extenders[0].BindVerb != "bind" {
			ck.errorf("%s: expected one extender with bindVerb bind", o.deployConfig)
		} else {
			ck.logf("%s decodes as %s (1 extender, %d profile(s))", o.deployConfig, configAPIVersion, len(cfg.Profiles))
		}
		failed = failed || ck.failed
	}
	cases := map[string]func(*options, []nodeRow, []podRow, *checker){
		"full": caseFull, "nocache": caseNoCache, "crash": caseCrash, "bad": caseBad, "throughput": caseThroughput,
		"tls": caseTLS, "defrag": caseDefrag,
	}
	for _, name := range strings.Split(o.cases, ",") {
		run, ok := cases[name]
		if !ok {
			fmt.Println("FAIL unknown case", name)
			os.Exit(2)
		}
		ck := &checker{name: name}
		start := time.Now()
		run(&o, nodes, pods, ck)
		ck.logf("done in %.1f s", time.Since(start).Seconds())
		failed = failed || ck.failed
	}
	if failed {
		fmt.Println("FAILED")
		os.Exit(1)
	}
	fmt.Println("PASSED")
}

func podKeys(objs []*v1.Pod) []string {
	keys := make([]string, len(objs))
	for i, p := range objs {
		keys[i] = p.Namespace + "/" + p.Name
	}
	return keys
}

func podObjects(rows []podRow) []*v1.Pod {
	out := make([]*v1.Pod, len(rows))
	for i, r := range rows {
		out[i] = podObject(r)
	}
	return out
}

func newServe(o *options, name string, withNodes bool) *serve {
	state := filepath.Join(o.work, name+"-state")
	os.RemoveAll(state)
	s := &serve{bin: o.greensched, state: state}
	if withNodes {
		s.nodes = o.nodesCSV
	}
	return s
}

// checkMetrics: no extender request answered other than ok (kube-scheduler drops prioritize
// errors, so they are visible only here).
func checkMetrics(ck *checker, s *serve) map[string]float64 {
	m, err := s.metrics()
	if err != nil {
		ck.errorf("GET /metrics: %v", err)
		return nil
	}
	bad := requestsNotOK(m)
	if len(bad) > 0 {
		ck.errorf("extender requests not ok: %v", bad)
	} else {
		ck.logf("/metrics: filter %.0f, prioritize %.0f, bind %.0f requests, all ok",
			m[`greensched_extender_requests_total{verb="filter",code="200",outcome="ok"}`],
			m[`greensched_extender_requests_total{verb="prioritize",code="200",outcome="ok"}`],
			m[`greensched_extender_requests_total{verb="bind",code="200",outcome="ok"}`])
	}
	return m
}

// simulateAllocation runs `greensched simulate --policy fgd` on the same nodes and pods and
// returns its final cluster GPU allocation (percent of capacity), the mean over three seeds.
// A tune below the list's own GPU demand adds no pods: each seed places exactly the listed
// pods, in a shuffled order.
func simulateAllocation(o *options, ck *checker, pods string) (float64, bool) {
	out := filepath.Join(o.work, "simulate")
	cmd := exec.Command(o.greensched, "simulate", "--policy", "fgd", "--nodes", o.nodesCSV, "--pods", pods,
		"--seeds", "42-44", "--tune", "0.5", "--out", out, "-q")
	text, err := cmd.CombinedOutput()
	if err != nil {
		ck.errorf("greensched simulate: %v\n%s", err, text)
		return 0, false
	}
	rows, err := readCSV(filepath.Join(out, "summary.csv"))
	if err != nil || len(rows) == 0 {
		ck.errorf("simulate summary: %v", err)
		return 0, false
	}
	sum := 0.0
	for _, row := range rows {
		v, err := strconv.ParseFloat(row["final_alloc_gpu_pct"], 64)
		if err != nil {
			ck.errorf("simulate summary: final_alloc_gpu_pct: %v (columns %v)", err, row)
			return 0, false
		}
		sum += v
	}
	return sum / float64(len(rows)), true
}

// checkUnschedulableEvents: the FailedScheduling text of unschedulable pods reads as a few
// counted categories, every node counted.
func checkUnschedulableEvents(ck *checker, c *cluster, keys []string, nodes int) (string, string) {
	snap := c.rec.snapshot()
	maxKinds, checked := 0, 0
	example, examplePod := "", ""
	for _, k := range keys {
		r := snap[k]
		if r.scheduled > 0 || !r.failIsFit {
			continue
		}
		reasons, total, ok := reasonsOf(r.lastFail)
		if !ok {
			ck.errorf("%s: FailedScheduling message not in kube-scheduler's form: %q", k, r.lastFail)
			continue
		}
		checked++
		sum := 0
		for reason, n := range reasons {
			sum += n
			if !knownReasons[reason] {
				ck.errorf("%s: unexpected per-node reason %q in %q", k, reason, r.lastFail)
			}
		}
		if total != nodes || sum < nodes {
			ck.errorf("%s: %q counts %d of %d nodes", k, r.lastFail, sum, nodes)
		}
		if pre, ok := preemptionOf(r.lastFail); ok {
			preSum := 0
			for _, n := range pre {
				preSum += n
			}
			if preSum != nodes {
				ck.errorf("%s: the preemption part of %q counts %d of %d nodes", k, r.lastFail, preSum, nodes)
			}
		}
		if len(reasons) > maxKinds {
			maxKinds = len(reasons)
			example, examplePod = r.lastFail, k
		}
	}
	if checked > 0 {
		ck.logf("%d unschedulable pods: at most %d distinct reasons per event, e.g. %s: %q", checked, maxKinds, examplePod, example)
	}
	return example, examplePod
}

func runExplain(o *options, ck *checker, s *serve, pod string) {
	if pod == "" {
		return
	}
	out, err := exec.Command(o.greensched, "explain", "--record", filepath.Join(s.state, "decisions.jsonl"), "--pod", pod).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "could not be placed") {
		ck.errorf("greensched explain --pod %s: %v\n%s", pod, err, out)
		return
	}
	ck.logf("greensched explain --record %s/decisions.jsonl --pod %s:\n%s", filepath.Base(s.state), pod, strings.TrimSpace(string(out)))
}

// ---- the whole default pod list, nodeCacheCapable: true ----------------------------------

func caseFull(o *options, nodes []nodeRow, pods []podRow, ck *checker) {
	simAlloc, simOK := simulateAllocation(o, ck, o.podsCSV)
	srv := newServe(o, "full", true)
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	c, err := startCluster(o.config, true, nodes, srv, srv.base())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()
	objs := podObjects(pods)
	keys := podKeys(objs)
	start := time.Now()
	// One at a time in list order, so kube-scheduler's queue sees the order simulate does.
	if err := c.createPods(objs); err != nil {
		ck.errorf("creating pods: %v", err)
		return
	}
	if !c.settle(keys, 6*time.Minute) {
		ck.errorf("pods still unresolved after 6 min")
	}
	elapsed := time.Since(start)
	bound, unsched := checkPlacements(ck, c, keys)
	if bound+unsched != len(keys) {
		ck.errorf("%d pods neither bound nor unschedulable", len(keys)-bound-unsched)
	}
	errs := 0
	for _, r := range c.rec.snapshot() {
		errs += r.errorFails
	}
	if errs > 0 {
		ck.errorf("%d scheduling attempts ended in an error", errs)
	}
	checkMetrics(ck, srv)
	alloc, err := allocation(c)
	if err != nil {
		ck.errorf("%v", err)
	}
	ck.logf("%d pods: %d bound, %d unschedulable, %d errors, GPU allocation %.2f %% in %.1f s (%.1f pods/s)",
		len(keys), bound, unsched, errs, alloc, elapsed.Seconds(), float64(len(keys))/elapsed.Seconds())
	if simOK {
		ck.logf("greensched simulate --policy fgd on the same pods: %.2f %% (difference %.2f points; %s)", simAlloc, alloc-simAlloc, tieBreak)
		if alloc > simAlloc+1.5 || alloc < simAlloc-allocationMaxLoss {
			ck.errorf("allocation %.2f %% is outside [-%.1f, +1.5] points of simulate's %.2f %%", alloc, allocationMaxLoss, simAlloc)
		}
	}
	_, pod := checkUnschedulableEvents(ck, c, keys, len(nodes))
	runExplain(o, ck, srv, pod)
}

// ---- nodeCacheCapable: false -------------------------------------------------------------

func caseNoCache(o *options, nodes []nodeRow, pods []podRow, ck *checker) {
	// No --nodes: the extender learns the nodes from the Node objects of the first request.
	srv := newServe(o, "nocache", false)
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	c, err := startCluster(o.config, false, nodes, srv, srv.base())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()
	keys, elapsed, ok := c.schedulePods(ck, pods, o.nocachePods, 4*time.Minute, c.createPods)
	if !ok {
		return
	}
	n := len(keys)
	bound, unsched := checkPlacements(ck, c, keys)
	m := checkMetrics(ck, srv)
	ck.logf("%d pods: %d bound, %d unschedulable in %.1f s (%.2f pods/s)", n, bound, unsched, elapsed.Seconds(), float64(n)/elapsed.Seconds())

	// Where the time goes: the extender's own time per verb (parse included), against the
	// client's JSON encoding of the same request and decoding of the filter reply.
	if m != nil {
		for _, verb := range []string{"filter", "prioritize", "bind"} {
			sum := m[fmt.Sprintf(`greensched_extender_decision_seconds_sum{verb="%s"}`, verb)]
			cnt := m[fmt.Sprintf(`greensched_extender_decision_seconds_count{verb="%s"}`, verb)]
			if cnt > 0 {
				ck.logf("extender %s: %.0f requests, %.1f ms each, %.1f s in all", verb, cnt, 1000*sum/cnt, sum)
			}
		}
	}
	items := make([]v1.Node, len(nodes))
	for i, nd := range nodes {
		items[i] = *nodeObject(nd)
	}
	args := extenderv1.ExtenderArgs{Pod: podObject(pods[0]), Nodes: &v1.NodeList{Items: items}}
	const reps = 5
	t0 := time.Now()
	var body []byte
	for i := 0; i < reps; i++ {
		body, _ = json.Marshal(&args)
	}
	encode := time.Since(t0) / reps
	reply, _ := json.Marshal(&extenderv1.ExtenderFilterResult{Nodes: &v1.NodeList{Items: items}})
	t0 = time.Now()
	for i := 0; i < reps; i++ {
		var r extenderv1.ExtenderFilterResult
		json.NewDecoder(bytes.NewReader(reply)).Decode(&r)
	}
	decode := time.Since(t0) / reps
	ck.logf("client side per request with %d Node objects: encoding %.1f ms (%.1f MB), decoding a filter reply passing all nodes %.1f ms",
		len(items), float64(encode.Microseconds())/1000, float64(len(body))/1e6, float64(decode.Microseconds())/1000)
	ck.logf("per pod: %.0f ms wall", 1000*elapsed.Seconds()/float64(n))
}

// ---- crash: SIGKILL greensched serve while the scheduler runs ----------------------------

func caseCrash(o *options, nodes []nodeRow, pods []podRow, ck *checker) {
	srv := newServe(o, "crash", true)
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	c, err := startCluster(o.config, true, nodes, srv, srv.base())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()
	n := o.crashPods
	if n > len(pods) {
		n = len(pods)
	}
	objs := podObjects(pods[:n])
	keys := podKeys(objs)
	rng := rand.New(rand.NewSource(o.seed))
	start := time.Now()
	created := make(chan error, 1)
	go func() { created <- c.createParallel(objs, 100, 4) }()
	kills, restartFails := 0, 0
	var down time.Duration
	for kills < o.crashKills {
		time.Sleep(time.Duration(300+rng.Intn(900)) * time.Millisecond)
		srv.kill()
		kills++
		t := time.Now()
		if err := srv.start(); err != nil {
			restartFails++
			ck.errorf("restart %d: %v", kills, err)
			return
		}
		down += time.Since(t)
	}
	if err := <-created; err != nil {
		ck.errorf("creating pods: %v", err)
	}
	if !c.settle(keys, 3*time.Minute) {
		ck.errorf("pods still unresolved 3 min after the last restart")
	}
	errs := 0
	for _, r := range c.rec.snapshot() {
		errs += r.errorFails
	}
	bound, unsched := checkPlacements(ck, c, keys)
	ck.logf("%d SIGKILLs and restarts on the same --state (down %.2f s each on average); %d pods: %d bound, %d unschedulable; %d attempts failed with an error and were retried (%d queue nudges), in %.1f s",
		kills, down.Seconds()/float64(kills), n, bound, unsched, errs, c.nudges, time.Since(start).Seconds())
	if errs == 0 {
		ck.errorf("no attempt failed: the kills did not hit the scheduler")
	}
	// The final state survives one more kill exactly.
	srv.kill()
	if err := srv.start(); err != nil {
		ck.errorf("final restart: %v", err)
		return
	}
	before := ck.failed
	checkPlacements(ck, c, keys)
	if !before && !ck.failed {
		ck.logf("after a further SIGKILL and restart the state still equals the scheduler's bindings")
	}
}

// ---- bad and slow behaviour, on a small cluster, through a meddling proxy ----------------

// proxy sits between kube-scheduler and greensched serve. It counts the verbs per pod and
// lets a case change a request on its way (a bind to an unknown node, a state change between
// prioritize and bind, a reply later than the client's timeout).
type proxy struct {
	upstream string
	mu       sync.Mutex
	calls    map[string]int // "verb pod" -> calls
	hook     func(verb, pod string, body []byte, n int) []byte
	listener net.Listener
}

func podOf(verb string, body []byte) string {
	if verb == "bind" {
		var b extenderv1.ExtenderBindingArgs
		json.Unmarshal(body, &b)
		return b.PodName
	}
	var a struct {
		Pod struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
	}
	json.Unmarshal(body, &a)
	return a.Pod.Metadata.Name
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	verb := strings.TrimPrefix(r.URL.Path, "/")
	pod := podOf(verb, body)
	p.mu.Lock()
	p.calls[verb+" "+pod]++
	n := p.calls[verb+" "+pod]
	hook := p.hook
	p.mu.Unlock()
	if hook != nil {
		body = hook(verb, pod, body, n)
	}
	resp, err := http.Post(p.upstream+r.URL.Path, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *proxy) count(verb, pod string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[verb+" "+pod]
}

func caseBad(o *options, _ []nodeRow, _ []podRow, ck *checker) {
	// Four nodes: three small T4 nodes and one 8-GPU V100 node.
	nodes := []nodeRow{
		{name: "t4-a", cpuMilli: 32000, memoryMiB: 131072, gpus: 2, model: "T4"},
		{name: "t4-b", cpuMilli: 32000, memoryMiB: 131072, gpus: 2, model: "T4"},
		{name: "t4-c", cpuMilli: 32000, memoryMiB: 131072, gpus: 2, model: "T4"},
		{name: "v100-a", cpuMilli: 96000, memoryMiB: 393216, gpus: 8, model: "V100M32"},
	}
	var csv strings.Builder
	csv.WriteString("sn,cpu_milli,memory_mib,gpu,model\n")
	for _, n := range nodes {
		fmt.Fprintf(&csv, "%s,%d,%d,%d,%s\n", n.name, n.cpuMilli, n.memoryMiB, n.gpus, n.model)
	}
	nodesCSV := filepath.Join(o.work, "bad-nodes.csv")
	writeFile(o.work, "bad-nodes.csv", csv.String())
	srv := newServe(o, "bad", false)
	srv.nodes = nodesCSV
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	px := &proxy{upstream: srv.base(), calls: map[string]int{}, listener: ln}
	hs := &http.Server{Handler: px}
	go hs.Serve(ln)
	defer hs.Close()
	c, err := startCluster(o.config, true, nodes, srv, "http://"+ln.Addr().String())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()

	pod := func(name string, cpu, gpus, milli int64, model string) *v1.Pod {
		return podObject(podRow{name: name, cpuMilli: cpu, memoryMiB: 1024, numGPU: gpus, gpuMilli: milli, gpuSpec: model})
	}
	wait := func(keys ...string) {
		if !c.settle(keys, 60*time.Second) {
			ck.errorf("%v unresolved after 60 s", keys)
		}
	}
	failOf := func(name string) podRecord { return c.rec.snapshot()[namespace+"/"+name] }

	// 1. No node can host it: an unschedulable event with counted categories only.
	c.createPods([]*v1.Pod{pod("no-such-model", 1000, 1, 500, "A100")})
	wait(namespace + "/no-such-model")
	if r := failOf("no-such-model"); r.scheduled > 0 || !r.failIsFit {
		ck.errorf("no-such-model: expected unschedulable, got %+v", r)
	} else if reasons, total, ok := reasonsOf(r.lastFail); !ok || total != 4 || reasons["GPU model not allowed by the pod"] != 4 {
		ck.errorf("no-such-model: FailedScheduling %q", r.lastFail)
	} else if pre, ok := preemptionOf(r.lastFail); ok && pre["Preemption is not helpful for scheduling"] != 4 {
		// A kube-scheduler that reports preemption must have read FailedAndUnresolvableNodes:
		// no node is worth preempting for.
		ck.errorf("no-such-model: preemption part of %q: expected 4 nodes where it is not helpful", r.lastFail)
	} else {
		ck.logf("unschedulable pod: FailedScheduling %q", r.lastFail)
	}

	// 2. Only one node fits: kube-scheduler skips prioritize and binds.
	c.createPods([]*v1.Pod{pod("eight-gpus", 8000, 8, 1000, "")})
	wait(namespace + "/eight-gpus")
	if r := failOf("eight-gpus"); r.node != "v100-a" {
		ck.errorf("eight-gpus: bound to %q, expected v100-a", r.node)
	} else {
		ck.logf("pod fitting one node: filter %d, prioritize %d, bind %d calls (%s skips prioritize)",
			px.count("filter", "eight-gpus"), px.count("prioritize", "eight-gpus"), px.count("bind", "eight-gpus"), kubeVersion)
	}

	// 3. A bind naming a node the extender does not know: an error the scheduler reports,
	// then a retry that binds.
	px.mu.Lock()
	px.hook = func(verb, name string, body []byte, n int) []byte {
		if verb == "bind" && name == "ghost-bind" && n == 1 {
			var b map[string]interface{}
			json.Unmarshal(body, &b)
			b["Node"] = "no-such-node"
			out, _ := json.Marshal(b)
			return out
		}
		return body
	}
	px.mu.Unlock()
	c.createPods([]*v1.Pod{pod("ghost-bind", 1000, 1, 300, "")})
	wait(namespace + "/ghost-bind")
	if r := failOf("ghost-bind"); r.scheduled != 1 || r.errorFails == 0 || !strings.Contains(r.lastFail, "unknown node") {
		ck.errorf("ghost-bind: expected one reported error naming the unknown node, then a bind; got %+v", r)
	} else {
		ck.logf("bind to an unknown node: the scheduler reported %q and the retry bound it to %s", r.lastFail, r.node)
	}

	// 4. Another client tries to take the node's last whole GPUs between late-bind's prioritize
	// and its bind: the room prioritize holds for late-bind (as kube-scheduler's assume cache
	// holds it) refuses the squatter's bind, and late-bind binds there at its first attempt.
	var squatNode, squatError string
	px.mu.Lock()
	px.hook = func(verb, name string, body []byte, n int) []byte {
		if verb == "bind" && name == "late-bind" && n == 1 {
			var b extenderv1.ExtenderBindingArgs
			json.Unmarshal(body, &b)
			squatNode = b.Node
			squat := pod("squatter", 1000, 2, 1000, "")
			fa, _ := json.Marshal(extenderv1.ExtenderArgs{Pod: squat, NodeNames: &[]string{b.Node}})
			if r, err := srv.post("/filter", fa); err == nil {
				r.Body.Close()
			}
			ba, _ := json.Marshal(extenderv1.ExtenderBindingArgs{PodName: "squatter", PodNamespace: namespace, PodUID: squat.UID, Node: b.Node})
			if r, err := srv.post("/bind", ba); err == nil {
				var res extenderv1.ExtenderBindingResult
				json.NewDecoder(r.Body).Decode(&res)
				r.Body.Close()
				squatError = res.Error
			} else {
				squatError = err.Error()
			}
		}
		return body
	}
	px.mu.Unlock()
	c.createPods([]*v1.Pod{pod("late-bind", 1000, 2, 1000, "")})
	wait(namespace + "/late-bind")
	if r := failOf("late-bind"); r.scheduled != 1 || r.errorFails != 0 || r.node != squatNode {
		ck.errorf("late-bind: expected a bind on %s at the first attempt (its room held since prioritize); got %+v", squatNode, r)
	} else if !strings.Contains(squatError, "cannot bind pod "+namespace+"/squatter") {
		ck.errorf("squatter: expected its bind to %s refused (late-bind's room is held), got %q", squatNode, squatError)
	} else {
		ck.logf("a squatter between prioritize and bind was refused (%q); late-bind bound to %s at once", squatError, squatNode)
	}

	// 5. A filter reply later than the client's httpTimeout: an error, then a retry.
	px.mu.Lock()
	px.hook = func(verb, name string, body []byte, n int) []byte {
		if verb == "filter" && name == "slow-filter" && n == 1 {
			time.Sleep(3 * time.Second)
		}
		if verb == "prioritize" && name == "slow-prioritize" && n == 1 {
			time.Sleep(3 * time.Second)
		}
		return body
	}
	px.mu.Unlock()
	c.createPods([]*v1.Pod{pod("slow-filter", 1000, 1, 200, "")})
	wait(namespace + "/slow-filter")
	if r := failOf("slow-filter"); r.scheduled != 1 || r.errorFails == 0 {
		ck.errorf("slow-filter: expected a timeout error, then a bind; got %+v", r)
	} else {
		ck.logf("slow filter: the scheduler reported %q and the retry bound it to %s", r.lastFail, r.node)
	}
	// A slow prioritize is an error kube-scheduler ignores: the pod binds on the first attempt.
	c.createPods([]*v1.Pod{pod("slow-prioritize", 1000, 1, 200, "")})
	wait(namespace + "/slow-prioritize")
	if r := failOf("slow-prioritize"); r.scheduled != 1 || r.errorFails != 0 {
		ck.errorf("slow-prioritize: expected a bind with no reported error; got %+v", r)
	} else {
		ck.logf("slow prioritize: no error reported, bound to %s on the first attempt (%s ignores prioritize errors)", r.node, kubeVersion)
	}

	keys := []string{}
	for _, name := range []string{"no-such-model", "eight-gpus", "ghost-bind", "late-bind", "slow-filter", "slow-prioritize"} {
		keys = append(keys, namespace+"/"+name)
	}
	// The squatter's bind was refused: it holds nothing.
	state, _ := srv.pods()
	if sq, ok := state[namespace+"/squatter"]; ok {
		ck.errorf("squatter: expected no allocation, state %+v", sq)
	}
	snap := c.rec.snapshot()
	for _, k := range keys {
		r := snap[k]
		p, held := state[k]
		if (r.scheduled > 0) != held || (held && (p.Node != r.node || p.GPUIndices != r.gpuIndex)) {
			ck.errorf("%s: scheduler %+v, extender %+v", k, r, p)
		}
	}
}

// ---- throughput: pods created in parallel batches ----------------------------------------

func caseThroughput(o *options, nodes []nodeRow, pods []podRow, ck *checker) {
	srv := newServe(o, "throughput", true)
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	c, err := startCluster(o.config, true, nodes, srv, srv.base())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()
	keys, elapsed, ok := c.schedulePods(ck, pods, o.throughputPods, 4*time.Minute, func(objs []*v1.Pod) error { return c.createParallel(objs, 500, 8) })
	if !ok {
		return
	}
	n := len(keys)
	bound, unsched := checkPlacements(ck, c, keys)
	m := checkMetrics(ck, srv)
	rate := float64(n) / elapsed.Seconds()
	ck.logf("%d pods (%d bound, %d unschedulable) in %.2f s: %.1f pods/s end to end", n, bound, unsched, elapsed.Seconds(), rate)
	if m != nil {
		var parts []string
		for _, verb := range []string{"filter", "prioritize", "bind"} {
			sum := m[fmt.Sprintf(`greensched_extender_decision_seconds_sum{verb="%s"}`, verb)]
			cnt := m[fmt.Sprintf(`greensched_extender_decision_seconds_count{verb="%s"}`, verb)]
			if cnt > 0 {
				parts = append(parts, fmt.Sprintf("%s %.0f x %.2f ms", verb, cnt, 1000*sum/cnt))
			}
		}
		sort.Strings(parts)
		ck.logf("extender time: %s", strings.Join(parts, ", "))
	}
	writeFile(o.work, "throughput.txt", fmt.Sprintf("%.1f\n", rate))
}

// ---- mutual TLS: kube-scheduler's enableHTTPS and tlsConfig, serve's --client-ca ----------

// tlsSchedulerConfig writes the -config with its extender stanza as an operator writes it for
// serve with --tls-cert, --tls-key and --client-ca: enableHTTPS: true, and a tlsConfig with
// the CA that verifies serve's certificate and kube-scheduler's client certificate.
func tlsSchedulerConfig(o *options, certs *testCerts) (string, error) {
	data, err := os.ReadFile(o.config)
	if err != nil {
		return "", err
	}
	const plain = "    enableHTTPS: false\n"
	if strings.Count(string(data), plain) != 1 {
		return "", fmt.Errorf("%s: expected one line %q in its extender", o.config, strings.TrimSpace(plain))
	}
	stanza := fmt.Sprintf("    enableHTTPS: true\n    tlsConfig:\n      caFile: %q\n      certFile: %q\n      keyFile: %q\n      insecure: false\n",
		certs.caCert, certs.clientCert, certs.clientKey)
	path := filepath.Join(o.work, "tls", "scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), plain, stanza, 1)), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// attempt: the status of one request, or the error that ended it (a refused handshake).
func attempt(client *http.Client, method, url string) (int, error) {
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func outcome(status int, err error) string {
	if err != nil {
		return "refused: " + err.Error()
	}
	return fmt.Sprintf("answered %d", status)
}

func caseTLS(o *options, nodes []nodeRow, pods []podRow, ck *checker) {
	certs, err := makeCerts(filepath.Join(o.work, "tls"))
	if err != nil {
		ck.errorf("making certificates: %v", err)
		return
	}
	cfgPath, err := tlsSchedulerConfig(o, certs)
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	// The TLS settings must survive the config's decoding (and the version's conversion).
	if cfg, err := loadConfig(cfgPath); err != nil {
		ck.errorf("%v", err)
		return
	} else if e := cfg.Extenders[0]; !e.EnableHTTPS || e.TLSConfig == nil || e.TLSConfig.Insecure ||
		e.TLSConfig.CAFile != certs.caCert || e.TLSConfig.CertFile != certs.clientCert || e.TLSConfig.KeyFile != certs.clientKey {
		ck.errorf("%s: enableHTTPS %v, tlsConfig %+v after decoding", cfgPath, e.EnableHTTPS, e.TLSConfig)
		return
	}
	srv := newServe(o, "tls", true)
	if err := srv.useTLS(certs); err != nil {
		ck.errorf("%v", err)
		return
	}
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	c, err := startCluster(cfgPath, true, nodes, srv, srv.base())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()
	keys, elapsed, ok := c.schedulePods(ck, pods, o.tlsPods, 2*time.Minute, c.createPods)
	if !ok {
		return
	}
	n := len(keys)
	bound, unsched := checkPlacements(ck, c, keys)
	errs := 0
	lastErr := ""
	snap := c.rec.snapshot()
	for _, k := range keys {
		if r := snap[k]; r.errorFails > 0 {
			errs += r.errorFails
			lastErr = r.lastFail
		}
	}
	if errs > 0 {
		ck.errorf("%d scheduling attempts ended in an error, e.g. %q", errs, lastErr)
	}
	if bound == 0 {
		ck.errorf("no pod bound")
	}
	m := checkMetrics(ck, srv)
	if m != nil && m[`greensched_extender_requests_total{verb="bind",code="200",outcome="ok"}`] != float64(bound) {
		ck.errorf("%d pods bound, but serve counts %.0f binds", bound,
			m[`greensched_extender_requests_total{verb="bind",code="200",outcome="ok"}`])
	}
	ck.logf("over HTTPS with client certificates (enableHTTPS: true, tlsConfig caFile/certFile/keyFile; serve --tls-cert --tls-key --client-ca): %d pods, %d bound, %d unschedulable, %d errors in %.1f s (%.1f pods/s)",
		n, bound, unsched, errs, elapsed.Seconds(), float64(n)/elapsed.Seconds())

	// Without a client certificate: /healthz answers, every other path gets 401 (the handshake
	// asks for a certificate but does not require one; docs/SERVE.md).
	noCert, err := certs.client(false)
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	if status, err := attempt(noCert, "GET", srv.base()+"/healthz"); err != nil || status != 200 {
		ck.errorf("GET /healthz without a client certificate: %s, expected 200", outcome(status, err))
	} else {
		ck.logf("GET /healthz without a client certificate: %s", outcome(status, err))
	}
	for _, r := range [][2]string{{"GET", "/pods"}, {"GET", "/metrics"}, {"POST", "/filter"}, {"POST", "/bind"}} {
		status, err := attempt(noCert, r[0], srv.base()+r[1])
		if err != nil || status != 401 {
			ck.errorf("%s %s without a client certificate: %s, expected 401", r[0], r[1], outcome(status, err))
		} else {
			ck.logf("%s %s without a client certificate: %s", r[0], r[1], outcome(status, err))
		}
	}
	// A client certificate another CA signed ends the handshake; plain HTTP gets no answer.
	if pair, err := tls.LoadX509KeyPair(certs.otherClientCert, certs.otherClientKey); err != nil {
		ck.errorf("%v", err)
	} else if other, err := certs.clientWith(&pair); err != nil {
		ck.errorf("%v", err)
	} else if status, err := attempt(other, "GET", srv.base()+"/pods"); err == nil {
		ck.errorf("GET /pods with a client certificate of another CA: %s, expected a refused handshake", outcome(status, err))
	} else {
		ck.logf("GET /pods with a client certificate of another CA: %s", outcome(status, err))
	}
	plainURL := strings.Replace(srv.base(), "https://", "http://", 1) + "/pods"
	if status, err := attempt(&http.Client{Timeout: 10 * time.Second}, "GET", plainURL); err == nil && status == 200 {
		ck.errorf("GET %s over plain HTTP: %s", plainURL, outcome(status, err))
	} else {
		ck.logf("GET /pods over plain HTTP: %s", outcome(status, err))
	}
}

// ---- defragmentation: greensched deschedule carries out serve's plan --------------------

// defragReply is what the case reads of GET /v1/defrag and of deschedule --json.
type defragMove struct {
	Pod  string `json:"pod"`
	From string `json:"from"`
	To   string `json:"to"`
}

type defragReply struct {
	MovesPlanned int `json:"moves_planned"`
	Plans        []struct {
		Pod   string       `json:"pod"`
		Node  string       `json:"node"`
		Moves []defragMove `json:"moves"`
	} `json:"plans"`
}

type descheduleOutput struct {
	Plans    []defragReply `json:"plans"`
	Attempts []struct {
		Pod        string `json:"pod"`
		From       string `json:"from"`
		To         string `json:"to"`
		Outcome    string `json:"outcome"`
		HTTPStatus int    `json:"http_status"`
		Message    string `json:"message"`
	} `json:"attempts"`
	Evicted int    `json:"evicted"`
	Refused int    `json:"refused"`
	Failure string `json:"failure"`
}

// caseDefrag: three nodes of two GPUs filled by twelve half-GPU pods, two per GPU, of which
// one per GPU then leaves: every GPU is half used and a whole-GPU pod stays pending. The pods
// are annotated greensched.io/movable except two; the pod serve's plan moves first is then
// covered by a disruption budget (minAvailable 1 of 1). greensched deschedule --budget 2 must
// get that eviction refused (429) and leave the pod, ask for a plan without it, evict within
// the budget; the evicted pod's replacement is placed by kube-scheduler through the extender
// and the pending pod then binds.
func caseDefrag(o *options, _ []nodeRow, _ []podRow, ck *checker) {
	nodes := []nodeRow{
		{name: "defrag-a", cpuMilli: 32000, memoryMiB: 131072, gpus: 2, model: "V100M32"},
		{name: "defrag-b", cpuMilli: 32000, memoryMiB: 131072, gpus: 2, model: "V100M32"},
		{name: "defrag-c", cpuMilli: 32000, memoryMiB: 131072, gpus: 2, model: "V100M32"},
	}
	var csv strings.Builder
	csv.WriteString("sn,cpu_milli,memory_mib,gpu,model\n")
	for _, n := range nodes {
		fmt.Fprintf(&csv, "%s,%d,%d,%d,%s\n", n.name, n.cpuMilli, n.memoryMiB, n.gpus, n.model)
	}
	writeFile(o.work, "defrag-nodes.csv", csv.String())
	srv := newServe(o, "defrag", false)
	srv.nodes = filepath.Join(o.work, "defrag-nodes.csv")
	if err := srv.start(); err != nil {
		ck.errorf("%v", err)
		return
	}
	defer srv.stop()
	c, err := startCluster(o.config, true, nodes, srv, srv.base())
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer c.stop()
	const token = "defrag-kube-token"
	tokenFile := filepath.Join(o.work, "defrag-kube-token")
	writeFile(o.work, "defrag-kube-token", token+"\n")
	const budgetLabel = "greensched.test/budget"
	api, err := startKubeAPI(c, srv, token, []disruptionBudget{
		{name: "keep", selector: map[string]string{budgetLabel: "keep"}, minAvailable: 1}})
	if err != nil {
		ck.errorf("%v", err)
		return
	}
	defer api.stop()
	start := time.Now()

	// 1. Twelve half-GPU pods fill the six GPUs (6000 milli): two per GPU, wherever FGD puts them.
	fixed := map[string]bool{"defrag-s01": true, "defrag-s02": true}
	var shares []*v1.Pod
	for i := 1; i <= 12; i++ {
		p := podObject(podRow{name: fmt.Sprintf("defrag-s%02d", i), cpuMilli: 1000, memoryMiB: 1024, numGPU: 1, gpuMilli: 500})
		p.Labels = map[string]string{"app": "defrag"}
		if !fixed[p.Name] {
			p.Annotations = map[string]string{"greensched.io/movable": "true"}
		}
		shares = append(shares, p)
	}
	shareKeys := podKeys(shares)
	if err := c.createPods(shares); err != nil {
		ck.errorf("creating pods: %v", err)
		return
	}
	if !c.settle(shareKeys, 60*time.Second) {
		ck.errorf("the half-GPU pods are unresolved after 60 s")
		return
	}
	state, err := srv.pods()
	if err != nil {
		ck.errorf("GET /pods: %v", err)
		return
	}
	// 2. One pod leaves each GPU: a not-movable one stays where there is one.
	byGPU := map[string][]string{}
	for _, k := range shareKeys {
		p, ok := state[k]
		if !ok {
			ck.errorf("%s is not bound", k)
			return
		}
		byGPU[p.Node+"/"+p.GPUIndices] = append(byGPU[p.Node+"/"+p.GPUIndices], k)
	}
	if len(byGPU) != 6 {
		ck.errorf("expected the pods on 6 GPUs, two each: %v", byGPU)
		return
	}
	var survivors []string
	for gpu, keys := range byGPU {
		if len(keys) != 2 {
			ck.errorf("GPU %s holds %v", gpu, keys)
			return
		}
		stay, leave := keys[0], keys[1]
		if fixed[strings.TrimPrefix(leave, namespace+"/")] {
			stay, leave = leave, stay
		}
		survivors = append(survivors, stay)
		name := strings.TrimPrefix(leave, namespace+"/")
		body, _ := json.Marshal(map[string]string{"PodName": name, "PodNamespace": namespace, "PodUID": "uid-" + name})
		if resp, err := srv.post("/release", body); err == nil {
			resp.Body.Close()
		}
		c.client.CoreV1().Pods(namespace).Delete(c.ctx, name, metav1.DeleteOptions{})
	}
	sort.Strings(survivors)

	// 3. A whole-GPU pod waits: 3000 milli are free, none of it a whole GPU.
	whole := podObject(podRow{name: "defrag-whole", cpuMilli: 2000, memoryMiB: 2048, numGPU: 1, gpuMilli: 1000})
	wholeKey := namespace + "/" + whole.Name
	if err := c.createPods([]*v1.Pod{whole}); err != nil {
		ck.errorf("%v", err)
		return
	}
	if !c.settle([]string{wholeKey}, 30*time.Second) || c.rec.snapshot()[wholeKey].scheduled > 0 {
		ck.errorf("%s: expected unschedulable, got %+v", wholeKey, c.rec.snapshot()[wholeKey])
		return
	}
	var stuck []string
	for _, k := range survivors {
		if fixed[strings.TrimPrefix(k, namespace+"/")] {
			stuck = append(stuck, k)
		}
	}
	ck.logf("fragmented: %d half-GPU pods left, one per GPU, %v not annotated movable; %s pending: %q", len(survivors),
		stuck, wholeKey, c.rec.snapshot()[wholeKey].lastFail)

	// 4. The pod serve would move first gets the disruption budget.
	var plan defragReply
	if err := srv.getJSON("/v1/defrag?budget=2", &plan); err != nil || len(plan.Plans) != 1 || len(plan.Plans[0].Moves) == 0 {
		ck.errorf("GET /v1/defrag?budget=2: %v %+v", err, plan)
		return
	}
	guarded := plan.Plans[0].Moves[0].Pod
	gname := strings.TrimPrefix(guarded, namespace+"/")
	if fixed[gname] {
		ck.errorf("the plan moves %s, which is not annotated movable", guarded)
	}
	if live, err := c.client.CoreV1().Pods(namespace).Get(c.ctx, gname, metav1.GetOptions{}); err != nil {
		ck.errorf("%v", err)
		return
	} else {
		live.Labels[budgetLabel] = "keep"
		c.client.CoreV1().Pods(namespace).Update(c.ctx, live, metav1.UpdateOptions{})
	}
	ck.logf("serve's plan: %s on %s after moving %s %s -> %s; a disruption budget (minAvailable 1) now covers %s",
		plan.Plans[0].Pod, plan.Plans[0].Node, guarded, plan.Plans[0].Moves[0].From, plan.Plans[0].Moves[0].To, guarded)

	// 5. greensched deschedule --budget 2.
	const budget = 2
	record := filepath.Join(o.work, "defrag-evictions.jsonl")
	os.Remove(record)
	cmd := exec.Command(o.greensched, "deschedule", "--server", srv.base(), "--budget", strconv.Itoa(budget),
		"--kube-api", api.url, "--kube-token-file", tokenFile, "--record", record, "--timeout", "10s", "--json")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	out, err := cmd.Output()
	took := time.Since(t0)
	var ds descheduleOutput
	if err != nil || json.Unmarshal(out, &ds) != nil {
		ck.errorf("greensched deschedule: %v\n%s\n%s", err, out, stderr.String())
		return
	}
	api.mu.Lock()
	evicted, refused := append([]string(nil), api.evicted...), append([]string(nil), api.refused...)
	replaced := map[string]string{}
	for k, v := range api.replaced {
		replaced[k] = v
	}
	api.mu.Unlock()
	ck.logf("greensched deschedule --budget %d in %.2f s: %d plans, %d evicted %v, %d refused %v", budget,
		took.Seconds(), len(ds.Plans), ds.Evicted, evicted, ds.Refused, refused)
	for _, a := range ds.Attempts {
		ck.logf("  %s %s: %s -> %s (HTTP %d) %s", a.Outcome, a.Pod, a.From, a.To, a.HTTPStatus, a.Message)
	}
	if ds.Failure != "" {
		ck.errorf("deschedule stopped: %s", ds.Failure)
	}
	// No disruption budget violated: the guarded pod was refused, never evicted, and still runs.
	if len(refused) != 1 || refused[0] != guarded || ds.Refused != 1 {
		ck.errorf("expected exactly %s refused, got %v (deschedule counted %d)", guarded, refused, ds.Refused)
	}
	for _, k := range evicted {
		if k == guarded || fixed[strings.TrimPrefix(k, namespace+"/")] {
			ck.errorf("%s was evicted", k)
		}
	}
	if p, err := c.client.CoreV1().Pods(namespace).Get(c.ctx, gname, metav1.GetOptions{}); err != nil || p.Spec.NodeName == "" {
		ck.errorf("%s no longer runs: %v", guarded, err)
	}
	// Within the budget and the plan: at most the moves of the plan carried out.
	planned := 0
	if n := len(ds.Plans); n > 0 {
		planned = ds.Plans[n-1].MovesPlanned
	}
	if len(evicted) == 0 || len(evicted) > budget || len(evicted) != ds.Evicted || len(evicted) > planned {
		ck.errorf("%d evictions (deschedule says %d), budget %d, the last plan %d moves", len(evicted), ds.Evicted, budget, planned)
	}
	// The record: a line per attempt.
	if data, err := os.ReadFile(record); err != nil {
		ck.errorf("--record: %v", err)
	} else if lines := strings.Count(string(data), "\n"); lines != len(ds.Attempts) {
		ck.errorf("--record holds %d lines for %d attempts:\n%s", lines, len(ds.Attempts), data)
	}

	// 6. The replacements are placed through the extender, then the pending pod binds.
	wait := []string{wholeKey}
	for _, k := range evicted {
		if r, ok := replaced[k]; ok {
			wait = append(wait, r)
		} else {
			ck.errorf("%s was not recreated", k)
		}
	}
	bound := func() bool {
		snap := c.rec.snapshot()
		c.rec.mu.Lock()
		open := c.rec.unconfirmed
		c.rec.mu.Unlock()
		for _, k := range wait {
			if snap[k].scheduled == 0 {
				return false
			}
		}
		return open == 0
	}
	deadline := time.Now().Add(60 * time.Second)
	lastNudge := time.Now()
	for !bound() && time.Now().Before(deadline) {
		// A node event moves the pending pod to the active queue at once (kube-scheduler would
		// otherwise retry it after its backoff or its one-minute flush).
		if time.Since(lastNudge) > 2*time.Second {
			c.nudge()
			lastNudge = time.Now()
		}
		select {
		case <-c.rec.changed:
		case <-time.After(200 * time.Millisecond):
		}
	}
	snap := c.rec.snapshot()
	if snap[wholeKey].scheduled != 1 {
		ck.errorf("%s still pending %.0f s after deschedule: %+v", wholeKey, time.Since(t0).Seconds(), snap[wholeKey])
	} else {
		ck.logf("%s bound to %s %.2f s after deschedule started, after %d eviction(s)", wholeKey, snap[wholeKey].node,
			time.Since(t0).Seconds(), len(evicted))
	}
	for _, k := range wait[1:] {
		if snap[k].scheduled != 1 {
			ck.errorf("%s (a replacement) is not bound: %+v", k, snap[k])
		} else {
			ck.logf("%s replaces an evicted pod, bound to %s GPU %s", k, snap[k].node, snap[k].gpuIndex)
		}
	}
	// No pod lost, nothing overcommitted: the extender holds exactly the survivors still
	// running, the replacements and the pending pod, as the scheduler bound them.
	live := []string{wholeKey}
	gone := map[string]bool{}
	for _, k := range evicted {
		gone[k] = true
	}
	for _, k := range survivors {
		if !gone[k] {
			live = append(live, k)
		}
	}
	live = append(live, wait[1:]...)
	checkPlacements(ck, c, live)
	ck.logf("%d pods running, as many as before the evictions plus the pending pod (%.2f s in all)", len(live),
		time.Since(start).Seconds())
	if len(live) != len(survivors)+1 {
		ck.errorf("%d pods running, expected %d", len(live), len(survivors)+1)
	}
}
