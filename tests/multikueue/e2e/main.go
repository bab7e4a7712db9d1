// greensched-multikueue-e2e runs greensched as Kueue MultiKueue's dispatcher on real
// Kubernetes clusters started on this machine from the binaries tests/multikueue/build.sh
// builds (no containers): a manager cluster (kube-apiserver, Kueue with MultiKueue, the
// greensched dispatch service, greensched's Kueue controllers) and worker clusters
// (kube-apiserver, kube-controller-manager, kube-scheduler with greensched's extender, Kueue,
// KWOK nodes of openb's shapes); greensched's parts are installed from its Helm chart. It
// submits openb-shaped Jobs to the manager while it kills the dispatcher and the service and
// takes a worker's API server away for a minute, then checks that every Job ran exactly once,
// in the cluster the service chose, deferred ones inside their green window, and that the
// manager saw them finish. Exits 1 when a check fails; writes its measurements to
// <work>/result.json.
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
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"
)

var insecureHTTPS = &http.Client{Timeout: 2 * time.Second,
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

type options struct {
	bin, greensched, data, work, goBin, moduleRoot, deploy, deploySchedulerConfig string
	helm, chart, chartValues, workerChartValues, kueueConfig, workerKueueConfig   string
	scenario                                                                      string
	workers, nodesPerWorker, jobs, workerNice                                     int
	submitFor, outage, outageAt                                                   time.Duration
	speed                                                                         float64
	signalStart                                                                   string
	kills                                                                         int
	seed                                                                          int64
	maxNominationP99, maxNominationMax, maxWindowLate, maxCopyGone                time.Duration
	keep                                                                          bool
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
	kueueConfig           *kueueConfigFile
	workerKueueConfig     map[string]any
	dispatch, controllers *proc
	// forecast serve (the chart's forecast container, beside dispatch): its URL, the zones it
	// serves, the data folder the pod's claim stands for (the shared data and the model trained
	// for the run), and its requests answered before dispatch started (forecast.go).
	forecast            *proc
	forecastURL         string
	forecastZones       []string
	dataDir             string
	forecastReadsBefore float64
	// The service's URL (https with the chart's TLS) and the bearer token the chart made for it.
	dispatchURL, dispatchToken string
	journal                    string
	origin                     time.Time

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

// served says whether dispatch plans on forecast serve's carbon forecasts (forecast.go): in
// the main scenario. The faults scenario's dispatch reads the fleet file's series: its six
// clusters already fill the 2 cores, and its workers' own 20 s pod-ready timeout is under test.
func (e *env) served() bool { return !e.faults() }

func (e *env) bin(name string) string { return filepath.Join(e.o.bin, name) }

// deployFile is a file of the repository's deploy/kueue.
func (e *env) deployFile(name string) string {
	return filepath.Join(e.o.deploy, "kueue", name)
}

// downWorker is the worker whose API server the main scenario stops for -outage: the last.
func (e *env) downWorker() *cluster { return e.workers[len(e.workers)-1] }

// apiOutage says whether the scenario stops the worker's API server while its processes run
// (the faults scenario's lost worker is killed whole).
func (e *env) apiOutage(c *cluster) bool {
	return !e.faults() && e.o.outage > 0 && c == e.downWorker()
}

// dispatchGet is a GET of the service's path with its bearer token.
func (e *env) dispatchGet(path string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, e.dispatchURL+path, nil)
	if err != nil {
		return nil, err
	}
	if e.dispatchToken != "" {
		req.Header.Set("Authorization", "Bearer "+e.dispatchToken)
	}
	return insecureHTTPS.Do(req)
}

func main() {
	var o options
	flag.StringVar(&o.bin, "bin", "", "folder of the binaries built by tests/multikueue/build.sh")
	flag.StringVar(&o.greensched, "greensched", "", "the greensched binary")
	flag.StringVar(&o.data, "data", "../shared/data", "the shared data folder (openb, carbon)")
	flag.StringVar(&o.work, "work", "", "scratch folder (logs, state, result.json)")
	flag.StringVar(&o.goBin, "go", "go", "the go command (finds Kueue's and KWOK's manifests in the module cache)")
	flag.StringVar(&o.moduleRoot, "module", ".", "tests/multikueue (its go.mod pins the versions)")
	flag.StringVar(&o.deploy, "deploy", "", "the repository's deploy folder (the chart, deploy/kueue)")
	flag.StringVar(&o.deploySchedulerConfig, "scheduler-config", "", "deploy/scheduler-config.yaml: its folder is -deploy, when that is not given")
	flag.StringVar(&o.helm, "helm", "", "the helm binary (tests/helm/build.sh builds it); renders the chart greensched is installed from")
	flag.StringVar(&o.chart, "chart", "", "the chart deploy/helm/greensched (default: helm/greensched in -deploy)")
	flag.StringVar(&o.chartValues, "values", "", "the test's values of the chart on the manager (default: chart-values.yaml in -module)")
	flag.StringVar(&o.workerChartValues, "worker-values", "", "the test's values of the chart on the workers (default: worker-chart-values.yaml in -module)")
	flag.StringVar(&o.kueueConfig, "kueue-config", "", "deploy/kueue/kueue-config.yaml (default: in -deploy)")
	flag.StringVar(&o.workerKueueConfig, "worker-kueue-config", "", "deploy/kueue/worker-kueue-config.yaml (default: in -deploy)")
	flag.StringVar(&o.scenario, "scenario", "main", "main (kills, an outage, deferral) or faults (a worker lost for good, "+
		"one without quota, one where pods cannot be scheduled, a blackholed one, the controller's leader and the "+
		"service's writer killed, evictions racing nominations; see faults.go)")
	flag.IntVar(&o.workers, "workers", 3, "worker clusters (the last one has the outage)")
	flag.IntVar(&o.workerNice, "worker-nice", 10, "niceness of the worker clusters' processes (0: as the manager's); "+
		"on one machine it keeps them from slowing the manager, as machines of their own would")
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
	flag.Parse()
	ctrllog.SetLogger(logr.Discard())
	if o.scenario != "main" && o.scenario != "faults" {
		fmt.Fprintf(os.Stderr, "-scenario %q: main or faults\n", o.scenario)
		os.Exit(2)
	}
	if o.deploy == "" && o.deploySchedulerConfig != "" {
		o.deploy = filepath.Dir(o.deploySchedulerConfig)
	}
	if o.bin == "" || o.greensched == "" || o.work == "" || o.deploy == "" || o.helm == "" {
		fmt.Fprintln(os.Stderr, "usage: greensched-multikueue-e2e -bin DIR -greensched BIN -work DIR -deploy DIR -helm BIN [-data DIR]")
		os.Exit(2)
	}
	deploy := o.deploy
	if o.chart == "" {
		o.chart = filepath.Join(deploy, "helm", "greensched")
	}
	if o.kueueConfig == "" {
		o.kueueConfig = filepath.Join(deploy, "kueue", "kueue-config.yaml")
	}
	if o.workerKueueConfig == "" {
		o.workerKueueConfig = filepath.Join(deploy, "kueue", "worker-kueue-config.yaml")
	}
	if o.chartValues == "" {
		o.chartValues = filepath.Join(o.moduleRoot, "chart-values.yaml")
	}
	if o.workerChartValues == "" {
		o.workerChartValues = filepath.Join(o.moduleRoot, "worker-chart-values.yaml")
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
		greensched: o.greensched}
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
	if e.kueueConfig, err = readKueueConfig(o.kueueConfig); err != nil {
		return err
	}
	if e.workerKueueConfig, err = readWorkerKueueConfig(o.workerKueueConfig); err != nil {
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
		names = faultWorkers()
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
	nctx, stopWatching := context.WithCancel(ctx)
	beside := watchNeighbours(nctx)
	defer func() { stopWatching(); beside.report() }()
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
	if e.served() {
		if err := e.checkServedForecasts(); err != nil {
			return err
		}
	}
	if exited := e.procs.exited(); len(exited) > 0 {
		return fmt.Errorf("processes exited on their own: %v (logs in %s)", exited, e.procs.dir)
	}
	return nil
}

// setUpMultiKueue creates the workers' queues, and on the manager the kubeconfig Secrets and
// MultiKueueClusters, then the admission checks and the MultiKueueConfig of
// deploy/kueue/kueue-config.yaml (listing the test's clusters), as docs/MULTICLUSTER.md
// describes. The manager's ClusterQueue comes once greensched runs (startGreensched).
func (e *env) setUpMultiKueue(ctx context.Context) error {
	for _, w := range e.workers {
		if err := w.queues(ctx, workerClusterQueue(e.faults() && w.name == noQuotaWorker)); err != nil {
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
	for _, o := range e.kueueConfig.managerObjects(names) {
		objs = append(objs, o)
	}
	return apply(ctx, e.manager.client, objs...)
}

// The release and namespace the chart is rendered for, as docs/RUNBOOK.md installs it.
const (
	chartRelease   = "greensched"
	chartNamespace = "greensched-system"
)

// startGreensched renders the chart (chart.go) for this run, starts its dispatch service and
// greensched's Kueue controllers on the manager, and creates the manager's ClusterQueue of
// deploy/kueue/kueue-config.yaml, waiting for it to be active (it needs both checks active).
// In the faults scenario the service has a standby on the same journal and address, and the
// controllers run as the chart's two replicas electing a leader.
func (e *env) startGreensched(ctx context.Context) error {
	chart, err := e.renderChartForRun(ctx)
	if err != nil {
		return err
	}
	// The service: its args as rendered, but for the address it listens on (the chart's is the
	// pod's, on a fixed port) and the replayed clock of the run (--signal-*), appended.
	dep, err := chart.deployment("dispatch")
	if err != nil {
		return err
	}
	if err := e.prepareDataClaim(); err != nil {
		return err
	}
	if e.served() {
		if err := e.trainForecastModel(); err != nil {
			return err
		}
	}
	claims := map[string]string{}
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--data-dir="); ok {
			// The claim mounted as the data folder: the shared data and the run's model.
			claims[claimMountedAt(dep, v)] = e.dataDir
		}
	}
	dispatch, err := chart.runnableContainer("dispatch", "dispatch", e.greensched, filepath.Join(e.work, "dispatch-pod"), claims)
	if err != nil {
		return err
	}
	if dispatch.replicas != 1 {
		return fmt.Errorf("the chart runs %d dispatch replicas; the test expects one writer of the journal", dispatch.replicas)
	}
	var ok bool
	if e.journal, ok = dispatch.flag("--record"); !ok {
		return fmt.Errorf("the chart's dispatch has no --record, which the test reads")
	}
	scheme := "http"
	if _, tls := dispatch.flag("--tls-cert"); tls {
		scheme = "https"
	}
	if file, ok := dispatch.flag("--auth-token-file"); ok {
		token, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		e.dispatchToken = strings.TrimSpace(string(token))
	}
	port := freePort()
	e.dispatchURL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, port)
	e.origin = time.Now().Truncate(time.Second).Add(time.Second)
	e.dispatchBaseArgs, err = dispatch.argv(map[string]string{"--listen": fmt.Sprintf("127.0.0.1:%d", port)},
		"--signal-start="+e.o.signalStart, "--signal-origin="+e.origin.UTC().Format(time.RFC3339),
		fmt.Sprintf("--signal-speed=%g", e.o.speed))
	if err != nil {
		return err
	}
	e.dispatch = e.procs.add("greensched-dispatch", dispatch.env, e.dispatchBaseArgs...)
	if e.served() {
		if err := e.addForecast(chart, claims); err != nil {
			return err
		}
	}

	// The controllers: their ServiceAccount and RBAC as rendered, its token in a kubeconfig
	// (what the pod's in-cluster config would be). Their args as rendered, but for the
	// service's address (the chart's is its Service's name) and the addresses they listen on
	// (each replica its own ports); the faults scenario appends a short lease, for which the
	// chart has no value.
	controllers, err := chart.runnable("kueue", e.bin("greensched-kueue"), filepath.Join(e.work, "kueue-pod"), nil)
	if err != nil {
		return err
	}
	if want := map[bool]int{false: 1, true: 2}[e.faults()]; controllers.replicas != want {
		return fmt.Errorf("the chart runs %d greensched-kueue replicas; the %s scenario needs %d", controllers.replicas,
			e.o.scenario, want)
	}
	rbac := append([]client.Object{fromYAML("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + chartNamespace + "}\n")},
		chart.component("kueue", identityKinds...)...)
	token, err := serviceAccountToken(ctx, e.manager, rbac, chartNamespace, controllers.serviceAccount)
	if err != nil {
		return err
	}
	kubeconfig, err := kubeconfigWithToken(e.manager, token, "greensched-kueue.kubeconfig")
	if err != nil {
		return err
	}
	serviceURL, ok := controllers.flag("--dispatch-url")
	if !ok {
		return fmt.Errorf("the chart's greensched-kueue has no --dispatch-url")
	}
	u, err := url.Parse(serviceURL)
	if err != nil {
		return fmt.Errorf("the chart's --dispatch-url: %w", err)
	}
	u.Host = fmt.Sprintf("127.0.0.1:%d", port)
	var extra []string
	if e.faults() {
		extra = faultLeaseArgs
	}
	env := append(append([]string(nil), controllers.env...), "KUBECONFIG="+kubeconfig)
	for i := range controllers.replicas {
		metrics := freePort()
		args, err := controllers.argv(map[string]string{"--dispatch-url": u.String(),
			"--metrics-bind-address":      fmt.Sprintf("127.0.0.1:%d", metrics),
			"--health-probe-bind-address": fmt.Sprintf("127.0.0.1:%d", freePort())}, extra...)
		if err != nil {
			return err
		}
		name := "greensched-kueue"
		if controllers.replicas > 1 {
			name = fmt.Sprintf("greensched-kueue-%d", i+1)
		}
		e.replicas = append(e.replicas, e.procs.add(name, env, args...))
		e.replicaMetrics = append(e.replicaMetrics, metrics)
	}
	e.controllers = e.replicas[0]
	if e.faults() {
		e.standbys = []*proc{e.procs.add("greensched-dispatch-standby", dispatch.env,
			append(append([]string(nil), e.dispatchBaseArgs...), "--standby")...)}
	}
	if e.served() {
		if err := e.startForecast(); err != nil {
			return err
		}
	}
	if err := e.dispatch.start(); err != nil {
		return err
	}
	if err := waitFor("dispatch service /healthz", 30*time.Second, httpOK(e.dispatchURL+"/healthz")); err != nil {
		return err
	}
	if e.served() {
		if err := e.waitForServedCarbon(); err != nil {
			return err
		}
	}
	for _, p := range append(e.standbys, e.replicas...) {
		if err := p.start(); err != nil {
			return err
		}
	}
	cq, err := e.kueueConfig.managerClusterQueue()
	if err != nil {
		return err
	}
	return e.manager.queues(ctx, cq)
}

// renderChartForRun renders the chart with the test's values and the run's: the fleet and the
// clusters as a user gives them (dispatch.fleet, and dispatch.clusters with each worker's
// reader token and CA), dispatch's certificate, and the scenario's controllers.
func (e *env) renderChartForRun(ctx context.Context) (*rendering, error) {
	sites := []any{}
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
			return nil, err
		}
		zone := carbon[i%len(carbon)]
		if e.faults() {
			zone = faultCarbon[w.name]
		}
		sites = append(sites, site(w.name, csv, zone))
		reader, err := manifestObjects(e.deployFile("worker-reader.yaml"), identityKinds...)
		if err != nil {
			return nil, err
		}
		token, err := serviceAccountToken(ctx, w, reader, "greensched-system", "greensched-reader")
		if err != nil {
			return nil, err
		}
		ca, err := os.ReadFile(w.pki.caFile)
		if err != nil {
			return nil, err
		}
		cluster := map[string]any{"server": w.server, "token": token, "ca": string(ca)}
		if e.served() {
			cluster["forecastZone"] = zone
			e.addForecastZone(zone)
		}
		clusters[w.name] = cluster
	}
	if e.blackhole != nil {
		// The cleanest site of all, were it ever read.
		dir := filepath.Join(e.work, blackholeCluster)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		csv := filepath.Join(dir, "nodes.csv")
		if err := writeNodeCSV(csv, e.workers[0].nodes); err != nil {
			return nil, err
		}
		sites = append(sites, site(blackholeCluster, csv, faultCarbon[blackholeCluster]))
		ca, err := os.ReadFile(e.workers[0].pki.caFile)
		if err != nil {
			return nil, err
		}
		// Only the faults scenario has it, and its dispatch reads the series (see served).
		clusters[blackholeCluster] = map[string]any{"server": "https://" + e.blackhole.Addr().String(),
			"token": e.workers[0].pki.token, "ca": string(ca)}
	}
	// dispatch's certificate, valid for the address the test reaches it at.
	ca := newCA("greensched-dispatch-ca", true)
	cert := serving(ca, "greensched-dispatch", true, []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")})
	kueueValues := map[string]any{"replicas": 1, "leaderElect": false}
	if e.faults() {
		kueueValues = map[string]any{"replicas": 2, "leaderElect": true,
			"workerLostAfter": faultWorkerLostAfter.String(), "admitTimeout": faultAdmitTimeout.String()}
	}
	values, err := yaml.Marshal(map[string]any{
		"dispatch": map[string]any{
			"fleet":    map[string]any{"start": e.o.signalStart, "sites": sites},
			"clusters": clusters,
			"tls":      map[string]any{"cert": string(cert.certPEM), "key": string(cert.keyPEM), "ca": string(ca.certPEM)},
		},
		"kueue":    kueueValues,
		"forecast": map[string]any{"enabled": e.served(), "port": freePort()},
	})
	if err != nil {
		return nil, err
	}
	runValues := filepath.Join(e.work, "chart-values-run.yaml")
	writeFile(runValues, values)
	return renderChart(e.o.helm, e.o.chart, chartRelease, chartNamespace, e.o.chartValues, runValues)
}

// claimMountedAt is the claim of the volume mounted at path (or above it) in the Deployment's
// first container, or "".
func claimMountedAt(d *appsv1.Deployment, path string) string {
	spec := d.Spec.Template.Spec
	best, claim := -1, ""
	for _, m := range spec.Containers[0].VolumeMounts {
		if (path == m.MountPath || strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/")) && len(m.MountPath) > best {
			for _, v := range spec.Volumes {
				if v.Name == m.Name && v.PersistentVolumeClaim != nil {
					best, claim = len(m.MountPath), v.PersistentVolumeClaim.ClaimName
				}
			}
		}
	}
	return claim
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
