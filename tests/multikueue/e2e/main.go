// greensched-multikueue-e2e runs greensched as Kueue MultiKueue's dispatcher on real
// Kubernetes clusters started on this machine from the binaries tests/multikueue/build.sh
// builds (no containers): a manager cluster (kube-apiserver, Kueue with MultiKueue, the
// greensched dispatch service, greensched's Kueue controllers) and worker clusters
// (kube-apiserver, kube-controller-manager, kube-scheduler with greensched's extender, Kueue,
// KWOK nodes of openb's shapes). It submits openb-shaped Jobs to the manager while it kills
// the dispatcher and the service and takes a worker's API server away for a minute, then
// checks that every Job ran exactly once, in the cluster the service chose, deferred ones
// inside their green window, and that the manager saw them finish. Exits 1 when a check
// fails; writes its measurements to <work>/result.json.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

var insecureHTTPS = &http.Client{Timeout: 2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

type options struct {
	bin, greensched, data, work, goBin, moduleRoot, deploySchedulerConfig string
	scenario                                                              string
	workers, nodesPerWorker, jobs                                         int
	submitFor, outage, outageAt                                           time.Duration
	speed                                                                 float64
	signalStart                                                           string
	kills                                                                 int
	unschedulable                                                         bool
	seed                                                                  int64
	maxNominationP99, maxNominationMax, maxWindowLate, maxCopyGone        time.Duration
	keep                                                                  bool
}

// env is the running test: its clusters and processes.
type env struct {
	o         options
	work      string
	hostIP    net.IP
	procs     *procs
	manifests *manifests
	etcdURL   string

	manager *cluster
	workers []*cluster
	all     []*cluster

	greensched            string
	deploySchedulerConfig string
	dispatch, controllers *proc
	dispatchPort          int
	journal               string
	origin                time.Time

	// The faults scenario (faults.go): the service's standbys, the controller's replicas (the
	// first is `controllers`) and their metrics ports, and the blackholed cluster.
	standbys         []*proc
	replicas         []*proc
	replicaMetrics   []int
	blackhole        net.Listener
	blackholeHeld    *heldConns
	dispatchBaseArgs []string
}

func (e *env) faults() bool { return e.o.scenario == "faults" }

func (e *env) bin(name string) string { return filepath.Join(e.o.bin, name) }

// deployFile is a file of the repository's deploy/kueue (next to the scheduler config).
func (e *env) deployFile(name string) string {
	return filepath.Join(filepath.Dir(e.o.deploySchedulerConfig), "kueue", name)
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "folder of the binaries built by tests/multikueue/build.sh")
	flag.StringVar(&o.greensched, "greensched", "", "the greensched binary")
	flag.StringVar(&o.data, "data", "../shared/data", "the shared data folder (openb, carbon)")
	flag.StringVar(&o.work, "work", "", "scratch folder (logs, state, result.json)")
	flag.StringVar(&o.goBin, "go", "go", "the go command (finds Kueue's and KWOK's manifests in the module cache)")
	flag.StringVar(&o.moduleRoot, "module", ".", "tests/multikueue (its go.mod pins the versions)")
	flag.StringVar(&o.deploySchedulerConfig, "scheduler-config", "", "deploy/scheduler-config.yaml")
	flag.StringVar(&o.scenario, "scenario", "main", "main (kills, an outage, deferral) or faults (a worker lost for good, "+
		"one without quota, one where pods cannot be scheduled, a blackholed one, the controller's leader and the "+
		"service's writer killed, evictions racing nominations; see faults.go)")
	flag.IntVar(&o.workers, "workers", 3, "worker clusters (the last one has the outage)")
	flag.IntVar(&o.nodesPerWorker, "nodes", 10, "fake GPU nodes per worker, drawn from openb")
	flag.IntVar(&o.jobs, "jobs", 200, "Jobs submitted to the manager")
	flag.DurationVar(&o.submitFor, "submit-for", 160*time.Second, "the Jobs are submitted evenly over this")
	flag.DurationVar(&o.outage, "outage", time.Minute, "how long the last worker's API server is down")
	flag.DurationVar(&o.outageAt, "outage-at", 45*time.Second, "when the outage starts, after the first Job")
	flag.IntVar(&o.kills, "kills", 3, "SIGKILLs of the dispatcher and of the dispatch service each")
	flag.Float64Var(&o.speed, "speed", 600, "signal seconds per wall second")
	flag.StringVar(&o.signalStart, "signal-start", "2023-04-03T14:00:00Z", "where the carbon replay starts")
	flag.Int64Var(&o.seed, "seed", 42, "seed of the node and pod samples")
	flag.DurationVar(&o.maxNominationP99, "max-nomination-p99", time.Second, "the p99 of submission (or green window) to nomination must not exceed this")
	flag.DurationVar(&o.maxNominationMax, "max-nomination-max", 2*time.Second, "no job's submission (or green window) to nomination may exceed this")
	flag.DurationVar(&o.maxWindowLate, "max-window-late", 1100*time.Millisecond, "no deferred job may be nominated later than this after its green window opens")
	flag.DurationVar(&o.maxCopyGone, "max-copy-gone", 30*time.Second, "faults: a re-nominated Workload must be "+
		"nominated anew within this of the decision (it waits for MultiKueue to delete its old copy)")
	flag.BoolVar(&o.keep, "keep", false, "leave the clusters running until interrupted")
	flag.BoolVar(&o.unschedulable, "unschedulable", false, "faults: add the worker whose pods cannot be scheduled, "+
		"with greensched-kueue's experimental --unschedulable-after (see docs/MULTICLUSTER.md)")
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	if o.scenario != "main" && o.scenario != "faults" {
		fmt.Fprintf(os.Stderr, "-scenario %q: main or faults\n", o.scenario)
		os.Exit(2)
	}
	if o.bin == "" || o.greensched == "" || o.work == "" || o.deploySchedulerConfig == "" {
		fmt.Fprintln(os.Stderr, "usage: greensched-multikueue-e2e -bin DIR -greensched BIN -work DIR -scheduler-config FILE [-data DIR]")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("PASS")
}

func logf(format string, args ...any) {
	fmt.Printf("%s %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func run(o options) error {
	t0 := time.Now()
	if err := os.RemoveAll(o.work); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(o.work, "logs"), 0o755); err != nil {
		return err
	}
	ip, err := hostIP()
	if err != nil {
		return err
	}
	e := &env{o: o, work: o.work, hostIP: ip, procs: &procs{dir: filepath.Join(o.work, "logs")},
		greensched: o.greensched, deploySchedulerConfig: o.deploySchedulerConfig}
	defer func() {
		if o.keep {
			logf("clusters kept running; kubeconfigs under %s; interrupt to stop", o.work)
			select {}
		}
		e.procs.killAll()
	}()
	if e.manifests, err = renderManifests(o.goBin, o.moduleRoot); err != nil {
		return err
	}
	writeFile(filepath.Join(o.work, "kwok-stages.yaml"), e.manifests.kwokStages)

	// The workload and the clusters' nodes.
	rng := rand.New(rand.NewSource(o.seed))
	names := []string{}
	for i := 1; i <= o.workers; i++ {
		names = append(names, fmt.Sprintf("worker%d", i))
	}
	if e.faults() {
		names = faultWorkers(o.unschedulable)
	}
	nodes, err := sampleNodes(filepath.Join(o.data, "openb", "openb_node_list_gpu_node.csv"), names, o.nodesPerWorker, rng)
	if err != nil {
		return err
	}
	fitsEverywhere := func(p podRow) bool {
		for _, w := range names {
			fits := false
			for _, n := range nodes[w] {
				fits = fits || (p.cpuMilli <= n.cpuMilli && p.memMiB <= n.memMiB && p.numGPU <= n.gpus)
			}
			if !fits {
				return false
			}
		}
		return true
	}
	pods, err := samplePods(filepath.Join(o.data, "openb", "openb_pod_list_default.csv"), o.jobs, fitsEverywhere, rng)
	if err != nil {
		return err
	}
	jobs := make([]jobSpec, len(pods))
	for i, p := range pods {
		signalS := min(max(p.runS, 1800), 3*3600)
		jobs[i] = jobSpec{name: fmt.Sprintf("openb-%03d", i), pod: p, ls: latencySensitive(p.qos),
			home: names[rng.Intn(len(names))], dataGB: rng.Intn(5), signalS: signalS,
			wall: time.Duration(float64(signalS) / o.speed * float64(time.Second))}
	}

	// Clusters.
	etcdPort, etcdPeer := freePort(), freePort()
	e.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	etcd := e.procs.add("etcd", nil, e.bin("etcd"), "--name=e2e", "--data-dir="+filepath.Join(o.work, "etcd"),
		"--listen-client-urls="+e.etcdURL, "--advertise-client-urls="+e.etcdURL,
		fmt.Sprintf("--listen-peer-urls=http://127.0.0.1:%d", etcdPeer),
		fmt.Sprintf("--initial-advertise-peer-urls=http://127.0.0.1:%d", etcdPeer),
		fmt.Sprintf("--initial-cluster=e2e=http://127.0.0.1:%d", etcdPeer),
		"--quota-backend-bytes=2147483648", "--unsafe-no-fsync", "--log-level=warn")
	if err := etcd.start(); err != nil {
		return err
	}
	if err := waitFor("etcd /health", 30*time.Second, httpOK(e.etcdURL+"/health")); err != nil {
		return err
	}
	if e.faults() {
		if err := e.startBlackhole(); err != nil {
			return err
		}
	}
	e.manager = newCluster(e, "manager", false, 0)
	e.all = []*cluster{e.manager}
	for i, w := range names {
		c := newCluster(e, w, true, i+1)
		c.nodes = nodes[w]
		e.workers = append(e.workers, c)
		e.all = append(e.all, c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := bringUp(ctx, e); err != nil {
		return err
	}
	if err := e.setUpMultiKueue(ctx); err != nil {
		return err
	}
	if err := e.startGreensched(ctx); err != nil {
		return err
	}
	upS := time.Since(t0).Seconds()
	logf("clusters up in %.1f s: manager + %d workers, %d nodes each", upS, len(e.workers), o.nodesPerWorker)

	obs, err := observe(ctx, e)
	if err != nil {
		return err
	}
	var out any
	if e.faults() {
		res, ferr := e.exerciseFaults(ctx, jobs, obs)
		if res != nil {
			res.UpS, res.TotalS, out = upS, time.Since(t0).Seconds(), res
		}
		err = ferr
	} else {
		res, merr := e.exercise(ctx, jobs, obs)
		if res != nil {
			res.UpS, res.TotalS, out = upS, time.Since(t0).Seconds(), res
		}
		err = merr
	}
	if out != nil {
		data, _ := json.MarshalIndent(out, "", "  ")
		writeFile(filepath.Join(o.work, "result.json"), data)
		fmt.Println(string(data))
	}
	if err != nil {
		return err
	}
	if exited := e.procs.exited(); len(exited) > 0 {
		return fmt.Errorf("processes exited on their own: %v (logs in %s)", exited, e.procs.dir)
	}
	return nil
}

// setUpMultiKueue creates the workers' queues, and on the manager the kubeconfig Secrets,
// MultiKueueClusters, the MultiKueueConfig, the two admission checks and the queues using
// them, as docs/MULTICLUSTER.md and deploy/kueue/kueue-config.yaml describe.
func (e *env) setUpMultiKueue(ctx context.Context) error {
	for _, w := range e.workers {
		if err := w.queues(ctx, nil, e.faults() && w.name == noQuotaWorker); err != nil {
			return err
		}
	}
	var objs []client.Object
	var names []string
	if e.blackhole != nil {
		names = append(names, blackholeCluster)
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": blackholeCluster + "-kubeconfig", "namespace": "kueue-system"},
			"data":     map[string]any{"kubeconfig": b64(e.blackholeKubeconfig())}}},
			fromYAML(fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\nmetadata: {name: %s}\n"+
				"spec: {clusterSource: {kubeConfig: {locationType: Secret, location: %s-kubeconfig}}}\n",
				blackholeCluster, blackholeCluster)))
	}
	for _, w := range e.workers {
		names = append(names, w.name)
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": w.name + "-kubeconfig", "namespace": "kueue-system"},
			"data":     map[string]any{"kubeconfig": b64([]byte(w.pki.kubeconfigT))}}},
			fromYAML(fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueCluster\nmetadata: {name: %s}\n"+
				"spec: {clusterSource: {kubeConfig: {locationType: Secret, location: %s-kubeconfig}}}\n", w.name, w.name)))
	}
	objs = append(objs,
		fromYAML(fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: MultiKueueConfig\nmetadata: {name: workers}\nspec: {clusters: [%s]}\n",
			strings.Join(names, ", "))),
		fromYAML("apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: multikueue}\n"+
			"spec: {controllerName: kueue.x-k8s.io/multikueue, parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: workers}}\n"),
		fromYAML("apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\nmetadata: {name: green-window}\n"+
			"spec: {controllerName: greensched.io/green-window}\n"))
	return apply(ctx, e.manager.client, objs...)
}

// startGreensched starts the dispatch service and greensched's Kueue controllers on the
// manager, and waits for the manager's ClusterQueue (it needs both checks active). In the
// faults scenario the service has a standby on the same journal and address, and the
// controllers run as two replicas electing a leader.
func (e *env) startGreensched(ctx context.Context) error {
	sites := []map[string]any{}
	clusters := map[string]any{}
	carbon := []string{"DE-LU", "GB", "CA-ON", "US-CAL-CISO"}
	site := func(name, nodesCSV, zone string) map[string]any {
		pue := 1.2
		if p, ok := faultPUE[name]; ok && e.faults() {
			pue = p
		}
		return map[string]any{"name": name, "nodes": nodesCSV,
			"carbon": map[string]any{"path": fmt.Sprintf("carbon/emaps2023/%s_2023_hourly.csv", zone),
				"format": "emaps", "column": "direct"},
			"pue": pue, "network": map[string]any{"bandwidth_gbps": 10, "energy_kwh_per_gb": 0.006, "latency_s": 1},
			"policy": "fgd"}
	}
	for i, w := range e.workers {
		csv := filepath.Join(w.dir, "nodes.csv")
		if err := writeNodeCSV(csv, w.nodes); err != nil {
			return err
		}
		zone := carbon[i%len(carbon)]
		if e.faults() {
			zone = faultCarbon[w.name]
		}
		sites = append(sites, site(w.name, csv, zone))
		token, err := serviceAccountToken(ctx, w, e.deployFile("worker-reader.yaml"), "greensched-reader")
		if err != nil {
			return err
		}
		tokenFile := filepath.Join(w.dir, "greensched-reader.token")
		writeFile(tokenFile, []byte(token))
		clusters[w.name] = map[string]any{"api": map[string]any{"server": w.server,
			"token_file": tokenFile, "ca_file": w.pki.caFile}}
	}
	if e.blackhole != nil {
		// The cleanest site of all, were it ever read.
		dir := filepath.Join(e.work, blackholeCluster)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		csv := filepath.Join(dir, "nodes.csv")
		if err := writeNodeCSV(csv, e.workers[0].nodes); err != nil {
			return err
		}
		sites = append(sites, site(blackholeCluster, csv, faultCarbon[blackholeCluster]))
		clusters[blackholeCluster] = map[string]any{"api": map[string]any{
			"server": "https://" + e.blackhole.Addr().String(), "token_file": e.workers[0].pki.tokenFile,
			"ca_file": e.workers[0].pki.caFile}}
	}
	config, _ := json.MarshalIndent(map[string]any{
		"fleet": map[string]any{"start": e.o.signalStart, "sites": sites}, "clusters": clusters}, "", "  ")
	configFile := filepath.Join(e.work, "dispatch-config.json")
	writeFile(configFile, config)
	e.journal = filepath.Join(e.work, "dispatch.jsonl")
	e.dispatchPort = freePort()
	e.origin = time.Now().Truncate(time.Second).Add(time.Second)
	e.dispatchBaseArgs = []string{e.greensched, "dispatch", "--config=" + configFile,
		"--data-dir=" + e.o.data, fmt.Sprintf("--listen=127.0.0.1:%d", e.dispatchPort), "--journal=" + e.journal,
		"--signal-start=" + e.o.signalStart, "--signal-origin=" + e.origin.UTC().Format(time.RFC3339),
		fmt.Sprintf("--signal-speed=%g", e.o.speed), "--refresh=1", "--commit=30", "--seeds=42"}
	e.dispatch = e.procs.add("greensched-dispatch", nil, e.dispatchBaseArgs...)
	token, err := serviceAccountToken(ctx, e.manager, e.deployFile("greensched-kueue.yaml"), "greensched-kueue")
	if err != nil {
		return err
	}
	kubeconfig, err := kubeconfigWithToken(e.manager, token, "greensched-kueue.kubeconfig")
	if err != nil {
		return err
	}
	controllerArgs := func(metrics string) []string {
		args := []string{e.bin("greensched-kueue"), fmt.Sprintf("--dispatch-url=http://127.0.0.1:%d", e.dispatchPort),
			"--metrics-bind-address=" + metrics, fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", freePort()),
			"--max-wait=2s"}
		if !e.faults() {
			// One process, SIGKILLed and restarted: with leader election the new one would
			// wait for the killed one's Lease to run out before dispatching again.
			return append(args, "--leader-elect=false")
		}
		args = append(args, faultControllerArgs...)
		if e.o.unschedulable {
			args = append(args, "--unschedulable-after="+faultUnschedulableAfter.String())
		}
		return args
	}
	env := []string{"KUBECONFIG=" + kubeconfig}
	if !e.faults() {
		e.controllers = e.procs.add("greensched-kueue", env, controllerArgs("0")...)
		e.replicas = []*proc{e.controllers}
	} else {
		for i := range 2 {
			port := freePort()
			p := e.procs.add(fmt.Sprintf("greensched-kueue-%d", i+1), env,
				controllerArgs(fmt.Sprintf("127.0.0.1:%d", port))...)
			e.replicas, e.replicaMetrics = append(e.replicas, p), append(e.replicaMetrics, port)
		}
		e.controllers = e.replicas[0]
		e.standbys = []*proc{e.procs.add("greensched-dispatch-standby", nil,
			append(append([]string(nil), e.dispatchBaseArgs...), "--standby")...)}
	}
	if err := e.dispatch.start(); err != nil {
		return err
	}
	if err := waitFor("dispatch service /healthz", 30*time.Second,
		httpOK(fmt.Sprintf("http://127.0.0.1:%d/healthz", e.dispatchPort))); err != nil {
		return err
	}
	for _, p := range append(e.standbys, e.replicas...) {
		if err := p.start(); err != nil {
			return err
		}
	}
	return e.manager.queues(ctx, []string{"green-window", "multikueue"}, false)
}

func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
