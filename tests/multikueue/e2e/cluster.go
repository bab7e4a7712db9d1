package main

// The test's clusters, started from the built binaries on this machine: one etcd (a key prefix
// per cluster), and per cluster a kube-apiserver and Kueue; a worker also runs
// kube-controller-manager (the Job controller, node lifecycle, garbage collection),
// greensched's extender (`greensched serve`) and its kube-scheduler as the chart
// deploy/helm/greensched installs them (chart.go, with tests/multikueue/worker-chart-values.yaml),
// and KWOK for its fake GPU nodes' and pods' lifecycle.
// Kueue's webhooks are reached through the API server's aggregator routing: the webhook
// Service has no selector, and an EndpointSlice points it at this host's address.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/yaml"
)

type cluster struct {
	name   string
	worker bool
	dir    string
	pki    *clusterPKI
	server string

	apiPort, webhookPort, kueueHealthPort, kueueMetricsPort int
	kcmPort, schedPort, kwokPort, extenderPort              int
	serviceCIDR, podCIDR                                    string

	apiserver, kueue, kcm, scheduler, kwok, extender *proc

	cfg    *rest.Config
	client client.Client
	nodes  []nodeRow
}

// add adds the cluster's process `part` (named <cluster>-<part>). A worker's processes run
// with the niceness -worker-nice: on one machine the workers' control planes, which in a
// fleet run on machines of their own, would otherwise take CPU from the manager's (its API
// server, Kueue, greensched), whose latency the test measures.
func (c *cluster) add(e *env, part string, vars []string, args ...string) *proc {
	p := e.procs.add(c.name+"-"+part, vars, args...)
	if c.worker {
		p.nice = e.o.workerNice
	}
	return p
}

var scheme = runtime.NewScheme()

func init() {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		panic(err)
	}
}

// freePort returns a TCP port that is free on every interface now, was not handed out before in
// this run, and lies below the kernel's ephemeral range. Asking the kernel for port 0 is not
// enough: the port is free again once the probe closes, so a later call (or an outgoing
// connection's source port) can get the same one before the process it was meant for binds it,
// and that process then fails, or a health check reaches the wrong one.
func freePort() int {
	ports.Lock()
	defer ports.Unlock()
	if ports.used == nil {
		ports.used = map[int]bool{}
		ports.rng = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))
	}
	low := 10000
	high := ephemeralLow()
	if high-low < 1000 {
		low, high = 1024, max(high, 2048)
	}
	for range 10000 {
		p := low + ports.rng.IntN(high-low)
		if ports.used[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			continue
		}
		l.Close()
		ports.used[p] = true
		return p
	}
	panic(fmt.Sprintf("no free TCP port in %d-%d", low, high))
}

var ports struct {
	sync.Mutex
	used map[int]bool
	rng  *rand.Rand
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768 where unreadable).
func ephemeralLow() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(data)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil {
				return v
			}
		}
	}
	return 32768
}

// hostIP is this machine's first non-loopback IPv4 address: EndpointSlices may not point at
// 127.0.0.0/8.
func hostIP() (net.IP, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.To4(), nil
		}
	}
	return nil, fmt.Errorf("no non-loopback IPv4 address (Kueue's webhooks are routed to one)")
}

// waitFor polls `ok` every 200 ms until it holds or `timeout` passes.
func waitFor(what string, timeout time.Duration, ok func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		done, err := ok()
		if done {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("%s: not after %s: %w", what, timeout, last)
			}
			return fmt.Errorf("%s: not after %s", what, timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var insecureHTTP = &http.Client{Timeout: 2 * time.Second}

// httpOK checks that GET url answers 200 (https without verifying the server's certificate).
func httpOK(url string) func() (bool, error) {
	return func() (bool, error) {
		cl := insecureHTTP
		if strings.HasPrefix(url, "https:") {
			cl = insecureHTTPS
		}
		res, err := cl.Get(url)
		if err != nil {
			return false, err
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, fmt.Errorf("GET %s: HTTP %d", url, res.StatusCode)
	}
}

func newCluster(e *env, name string, worker bool, index int) *cluster {
	c := &cluster{name: name, worker: worker, dir: filepath.Join(e.work, name),
		apiPort: freePort(), webhookPort: freePort(), kueueHealthPort: freePort(),
		kueueMetricsPort: freePort(), kcmPort: freePort(), schedPort: freePort(),
		kwokPort: freePort(), extenderPort: freePort(),
		serviceCIDR: fmt.Sprintf("10.%d.0.0/16", 96+index), podCIDR: fmt.Sprintf("10.%d.0.1/16", 110+index)}
	c.server = fmt.Sprintf("https://127.0.0.1:%d", c.apiPort)
	c.pki = makePKI(filepath.Join(c.dir, "pki"), name, c.server, e.hostIP)
	p := c.pki
	c.apiserver = c.add(e, "apiserver", nil, e.bin("kube-apiserver"),
		"--etcd-servers="+e.etcdURL, "--etcd-prefix=/registry-"+name,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", c.apiPort),
		"--advertise-address="+e.hostIP.String(),
		"--tls-cert-file="+p.certFile, "--tls-private-key-file="+p.keyFile, "--client-ca-file="+p.caFile,
		"--token-auth-file="+p.tokensCSV,
		"--service-account-key-file="+p.saPub, "--service-account-signing-key-file="+p.saKey,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range="+c.serviceCIDR, "--authorization-mode=Node,RBAC",
		"--enable-aggregator-routing=true", "--profiling=false", "--v=1")
	return c
}

func (c *cluster) connect() error {
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(c.pki.kubeconfigT))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.Timeout = 10 * time.Second
	cl, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	c.cfg, c.client = cfg, cl
	return nil
}

func (c *cluster) ready() (bool, error) {
	body, err := c.raw("/readyz")
	return err == nil && strings.TrimSpace(body) == "ok", err
}

// raw GETs an API path.
func (c *cluster) raw(path string) (string, error) {
	cfg := rest.CopyConfig(c.cfg)
	cfg.Timeout = 2 * time.Second
	rc, err := rest.UnversionedRESTClientFor(&rest.Config{Host: cfg.Host, TLSClientConfig: cfg.TLSClientConfig,
		BearerToken: cfg.BearerToken, Timeout: cfg.Timeout,
		ContentConfig: rest.ContentConfig{NegotiatedSerializer: clientgoscheme.Codecs.WithoutConversion()}})
	if err != nil {
		return "", err
	}
	out, err := rc.Get().AbsPath(path).DoRaw(context.Background())
	return string(out), err
}

// installKueueObjects puts Kueue's CRDs, webhook objects, webhook certificate Secret and the
// EndpointSlice routing its webhook Service to this host.
func (c *cluster) installKueueObjects(ctx context.Context, e *env) error {
	var objs []client.Object
	for _, o := range e.manifests.kueueCRDs {
		objs = append(objs, o)
	}
	if err := apply(ctx, c.client, objs...); err != nil {
		return err
	}
	objs = nil
	for _, o := range e.manifests.kueueWebhook {
		objs = append(objs, o)
	}
	if err := apply(ctx, c.client, objs...); err != nil {
		return err
	}
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "kueue-webhook-server-cert", "namespace": "kueue-system"},
		"data": map[string]any{
			"ca.crt": b64(c.pki.kueueCA.certPEM), "ca.key": b64(c.pki.kueueCA.keyPEM),
			"tls.crt": b64(c.pki.kueueTLS.certPEM), "tls.key": b64(c.pki.kueueTLS.keyPEM)}}}
	slice := fromYAML(fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kueue-webhook-service-host
  namespace: kueue-system
  labels: {kubernetes.io/service-name: kueue-webhook-service, endpointslice.kubernetes.io/managed-by: greensched-e2e}
addressType: IPv4
ports: [{name: "", port: %d, protocol: TCP}]
endpoints: [{addresses: ["%s"], conditions: {ready: true}}]
`, c.webhookPort, e.hostIP))
	if err := apply(ctx, c.client, secret, slice); err != nil {
		return err
	}
	return waitFor(c.name+": Kueue's CRDs established", 90*time.Second, func() (bool, error) {
		for _, crd := range e.manifests.kueueCRDs {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("apiextensions.k8s.io/v1")
			u.SetKind("CustomResourceDefinition")
			if err := c.client.Get(ctx, client.ObjectKey{Name: crd.GetName()}, u); err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			established := false
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					established = true
				}
			}
			if !established {
				return false, fmt.Errorf("%s not established", crd.GetName())
			}
		}
		return true, nil
	})
}

// startWorkerProcesses starts the controller manager, greensched's extender and kube-scheduler
// as the chart installs them (startChartComponents), and KWOK, and creates the fake nodes.
func (c *cluster) startWorkerProcesses(ctx context.Context, e *env) error {
	k := c.pki.kubeconfig
	c.kcm = c.add(e, "kcm", nil, e.bin("kube-controller-manager"), "--kubeconfig="+k,
		"--authentication-kubeconfig="+k, "--authorization-kubeconfig="+k,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", c.kcmPort), "--leader-elect=false",
		"--controllers=job-controller,node-lifecycle-controller,serviceaccount-controller,"+
			"garbage-collector-controller,namespace-controller,pod-garbage-collector-controller,"+
			"ttl-after-finished-controller,root-ca-certificate-publisher-controller",
		"--root-ca-file="+c.pki.caFile, "--use-service-account-credentials=false", "--v=1")
	extenderHealth, err := c.startChartComponents(ctx, e)
	if err != nil {
		return err
	}
	stages := filepath.Join(e.work, "kwok-stages.yaml")
	c.kwok = c.add(e, "kwok", nil, e.bin("kwok"), "--kubeconfig="+k, "--config="+stages,
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr="+c.podCIDR, "--node-ip="+e.hostIP.String(), "--node-lease-duration-seconds=40",
		fmt.Sprintf("--server-address=127.0.0.1:%d", c.kwokPort))
	for _, p := range []*proc{c.kcm, c.extender, c.scheduler, c.kwok} {
		if err := p.start(); err != nil {
			return err
		}
	}
	for _, n := range c.nodes {
		if err := apply(ctx, c.client, nodeObject(n)); err != nil {
			return err
		}
	}
	checks := []struct {
		what string
		ok   func() (bool, error)
	}{
		{"kube-controller-manager healthz", httpsOK(fmt.Sprintf("https://127.0.0.1:%d/healthz", c.kcmPort))},
		{"kube-scheduler healthz", httpsOK(fmt.Sprintf("https://127.0.0.1:%d/healthz", c.schedPort))},
		{"extender healthz", httpOK(extenderHealth)},
		{"nodes Ready and untainted", func() (bool, error) { return c.nodesReady(ctx) }},
	}
	for _, check := range checks {
		if err := waitFor(c.name+": "+check.what, 90*time.Second, check.ok); err != nil {
			return err
		}
	}
	return nil
}

// renderWorkerChart renders the chart (chart.go) for this worker: the test's worker values
// (extender and scheduler on, dispatch and greensched-kueue off) and the worker's own, its node
// list as extender.nodes.json and, where the scenario stops its API server for longer than a
// lease (apiOutage), no leader election for kube-scheduler: it exits when it cannot renew its
// Lease, and nothing here restarts it as the kubelet would.
func (c *cluster) renderWorkerChart(e *env) (*rendering, error) {
	nodes, err := nodeListJSON(c.nodes)
	if err != nil {
		return nil, err
	}
	values := map[string]any{"extender": map[string]any{"nodes": map[string]any{"json": string(nodes)}}}
	if e.apiOutage(c) {
		values["scheduler"] = map[string]any{"leaderElection": map[string]any{"enabled": false}}
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(c.dir, "chart-values-worker.yaml")
	writeFile(file, data)
	return renderChart(e.o.helm, e.o.chart, chartRelease, chartNamespace, e.o.workerChartValues, file)
}

// startChartComponents makes the worker's extender (`greensched serve`) and its kube-scheduler
// as the chart renders them: their ServiceAccounts and RBAC applied as rendered, each process
// with its ServiceAccount's token (what its pod's in-cluster credentials would be), the
// rendered command, args, env and mounted files. Only where and how it is reached changes: the
// extender listens on 127.0.0.1 and a free port and reaches the API server with --kube-api,
// --kube-token-file and --kube-ca-file (in a pod: the mounted ServiceAccount); kube-scheduler's
// config calls the extender there (TLS as rendered: its serverName is the Service's, which the
// extender's certificate is valid for) and names the token's kubeconfig as clientConnection;
// its delegated authentication and authorization use the same kubeconfig, and it serves on
// 127.0.0.1 and a free port. Returns the extender's health URL.
func (c *cluster) startChartComponents(ctx context.Context, e *env) (string, error) {
	chart, err := c.renderWorkerChart(e)
	if err != nil {
		return "", err
	}
	rbac := append([]client.Object{fromYAML("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + chartNamespace + "}\n")},
		chart.component("extender", identityKinds...)...)
	rbac = append(rbac, chart.component("scheduler", identityKinds...)...)
	if err := apply(ctx, c.client, rbac...); err != nil {
		return "", fmt.Errorf("%s: %w", c.name, err)
	}

	extender, err := chart.runnable("extender", e.greensched, filepath.Join(c.dir, "extender-pod"), nil)
	if err != nil {
		return "", err
	}
	token, err := serviceAccountToken(ctx, c, nil, chartNamespace, extender.serviceAccount)
	if err != nil {
		return "", err
	}
	tokenFile := filepath.Join(c.dir, extender.serviceAccount+".token")
	writeFile(tokenFile, []byte(token))
	scheme := "http"
	if _, tls := extender.flag("--tls-cert"); tls {
		scheme = "https"
	}
	args, err := extender.argv(map[string]string{"--listen": fmt.Sprintf("127.0.0.1:%d", c.extenderPort)},
		"--kube-api="+c.server, "--kube-token-file="+tokenFile, "--kube-ca-file="+c.pki.caFile)
	if err != nil {
		return "", err
	}
	c.extender = c.add(e, "extender", extender.env, args...)

	scheduler, err := chart.runnable("scheduler", e.bin("kube-scheduler"), filepath.Join(c.dir, "scheduler-pod"), nil)
	if err != nil {
		return "", err
	}
	if scheduler.replicas != 1 {
		return "", fmt.Errorf("the chart runs %d kube-scheduler replicas; the test runs one per worker", scheduler.replicas)
	}
	token, err = serviceAccountToken(ctx, c, nil, chartNamespace, scheduler.serviceAccount)
	if err != nil {
		return "", err
	}
	kubeconfig, err := kubeconfigWithToken(c, token, scheduler.serviceAccount+".kubeconfig")
	if err != nil {
		return "", err
	}
	config, ok := scheduler.flag("--config")
	if !ok {
		return "", fmt.Errorf("the chart's kube-scheduler has no --config")
	}
	if err := localSchedulerConfig(config, kubeconfig, fmt.Sprintf("127.0.0.1:%d", c.extenderPort)); err != nil {
		return "", err
	}
	args, err = scheduler.argv(nil, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", c.schedPort))
	if err != nil {
		return "", err
	}
	c.scheduler = c.add(e, "scheduler", scheduler.env, args...)
	return fmt.Sprintf("%s://127.0.0.1:%d/healthz", scheme, c.extenderPort), nil
}

// localSchedulerConfig rewrites the rendered KubeSchedulerConfiguration (its mounted paths
// already rewritten) in place: the extender is called at `extenderHost` (scheme and path as
// rendered) and the API server is reached with `kubeconfig` (in a pod: the in-cluster
// config). Everything else, TLS, leader election, profiles and the extender's settings, is as
// rendered.
func localSchedulerConfig(path, kubeconfig, extenderHost string) error {
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := yaml.Unmarshal(text, &m); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	exts, _ := m["extenders"].([]any)
	if len(exts) != 1 {
		return fmt.Errorf("the chart's scheduler config has %d extenders, expected 1", len(exts))
	}
	ext, _ := exts[0].(map[string]any)
	prefix, _ := ext["urlPrefix"].(string)
	u, err := url.Parse(prefix)
	if err != nil || u.Host == "" {
		return fmt.Errorf("the chart's scheduler config: urlPrefix %q: not a URL (%v)", prefix, err)
	}
	u.Host = extenderHost
	ext["urlPrefix"] = u.String()
	conn, _ := m["clientConnection"].(map[string]any)
	if conn == nil {
		conn = map[string]any{}
	}
	conn["kubeconfig"] = kubeconfig
	m["clientConnection"] = conn
	out, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	writeFile(path, out)
	return nil
}

func httpsOK(url string) func() (bool, error) {
	return func() (bool, error) {
		res, err := insecureHTTPS.Get(url)
		if err != nil {
			return false, err
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK, fmt.Errorf("GET %s: HTTP %d", url, res.StatusCode)
	}
}

func (c *cluster) nodesReady(ctx context.Context) (bool, error) {
	var list corev1.NodeList
	if err := c.client.List(ctx, &list); err != nil {
		return false, err
	}
	ready := 0
	for _, n := range list.Items {
		ok := len(n.Spec.Taints) == 0
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
				ok = false
			}
		}
		if ok && len(n.Status.Conditions) > 0 {
			ready++
		}
	}
	return ready == len(c.nodes), fmt.Errorf("%d of %d nodes ready", ready, len(c.nodes))
}

// startKueue writes the cluster's Kueue configuration (its controllers' concurrency as in
// Kueue's released manifests) and starts it. The manager's is merged with the Configuration of
// deploy/kueue/kueue-config.yaml, which hands the choice of worker clusters to greensched's
// dispatcher.
func (c *cluster) startKueue(e *env) error {
	config := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:%d"}
metrics: {bindAddress: "127.0.0.1:%d"}
webhook: {port: %d, certDir: %s}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: true, webhookServiceName: kueue-webhook-service, webhookSecretName: kueue-webhook-server-cert}
clientConnection: {qps: 100, burst: 200}
controller:
  groupKindConcurrency: {Job.batch: 5, Pod: 5, Workload.kueue.x-k8s.io: 5, LocalQueue.kueue.x-k8s.io: 1, Cohort.kueue.x-k8s.io: 1, ClusterQueue.kueue.x-k8s.io: 1, ResourceFlavor.kueue.x-k8s.io: 1}
integrations: {frameworks: ["batch/job"]}
featureGates: {VisibilityOnDemand: false}
`, c.kueueHealthPort, c.kueueMetricsPort, c.webhookPort, c.pki.kueueCertDir)
	text := []byte(config)
	if c.worker {
		// Each worker evicts a copy whose pods are not ready in time; the faults scenario,
		// whose unsched worker cannot run any, waits less than the file's timeout.
		var override map[string]any
		if e.faults() {
			override = map[string]any{"waitForPodsReady": map[string]any{"timeout": faultPodsReadyTimeout.String()}}
		}
		merged, err := mergedConfiguration(config, e.workerKueueConfig, override)
		if err != nil {
			return err
		}
		text = merged
	} else {
		// MultiKueue's garbage collection and origin; the faults scenario, whose worker is lost
		// for good, waits less than Kueue's default workerLostTimeout (15m) for the Workloads
		// admitted there, whatever the file says.
		config += "multiKueue: {gcInterval: 30s, origin: multikueue}\n"
		var override map[string]any
		if e.faults() {
			override = map[string]any{"multiKueue": map[string]any{"workerLostTimeout": faultWorkerLostTimeout.String()}}
		}
		merged, err := e.kueueConfig.managerConfiguration(config, override)
		if err != nil {
			return err
		}
		text = merged
	}
	file := filepath.Join(c.dir, "kueue-config.yaml")
	writeFile(file, text)
	c.kueue = c.add(e, "kueue", []string{"KUBECONFIG=" + c.pki.kubeconfig}, e.bin("kueue"),
		"--config="+file, "--zap-log-level=2")
	return nil
}

func (c *cluster) kueueReady(ctx context.Context) error {
	if err := waitFor(c.name+": Kueue readyz", 120*time.Second,
		httpOK(fmt.Sprintf("http://127.0.0.1:%d/readyz", c.kueueHealthPort))); err != nil {
		return err
	}
	return waitFor(c.name+": Kueue's webhook CA injected", 60*time.Second, func() (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("admissionregistration.k8s.io/v1")
		u.SetKind("MutatingWebhookConfiguration")
		if err := c.client.Get(ctx, client.ObjectKey{Name: "kueue-mutating-webhook-configuration"}, u); err != nil {
			return false, err
		}
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		if len(hooks) == 0 {
			return false, nil
		}
		ca, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
		return ca != "", nil
	})
}

// gpuResourceGroups are the quotas of the test's ClusterQueues: large, since capacity binds in
// the workers' scheduler, not in Kueue; with noGPUQuota there is no GPU quota at all, so no
// GPU Workload is ever admitted there.
func gpuResourceGroups(noGPUQuota bool) []any {
	gpuMilli, gpuCount := "100000000", "1000000"
	if noGPUQuota {
		gpuMilli, gpuCount = "0", "0"
	}
	return []any{map[string]any{
		"coveredResources": []any{"cpu", "memory", "alibabacloud.com/gpu-milli", "alibabacloud.com/gpu-count"},
		"flavors": []any{map[string]any{"name": "default", "resources": []any{
			map[string]any{"name": "cpu", "nominalQuota": "100000"},
			map[string]any{"name": "memory", "nominalQuota": "1000Ti"},
			map[string]any{"name": "alibabacloud.com/gpu-milli", "nominalQuota": gpuMilli},
			map[string]any{"name": "alibabacloud.com/gpu-count", "nominalQuota": gpuCount},
		}}},
	}}
}

// workerClusterQueue is a worker's ClusterQueue (no admission checks).
func workerClusterQueue(noGPUQuota bool) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
		"metadata": map[string]any{"name": "gpu"},
		"spec":     map[string]any{"namespaceSelector": map[string]any{}, "resourceGroups": gpuResourceGroups(noGPUQuota)}}}
}

// localQueue is the LocalQueue the Jobs name, on the manager and on every worker (MultiKueue
// copies a Workload into the same namespace and queue).
const localQueue = "gpu"

// queues creates the ResourceFlavor, the ClusterQueue `cq` and the LocalQueue using it, and
// waits for the ClusterQueue to be active.
func (c *cluster) queues(ctx context.Context, cq *unstructured.Unstructured) error {
	objs := []client.Object{
		fromYAML("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: default}\n"),
		cq,
		fromYAML(fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: %s, namespace: default}\nspec: {clusterQueue: %s}\n",
			localQueue, cq.GetName())),
	}
	if err := apply(ctx, c.client, objs...); err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	return waitFor(c.name+": ClusterQueue active", 60*time.Second, func() (bool, error) {
		var got kueue.ClusterQueue
		if err := c.client.Get(ctx, client.ObjectKey{Name: cq.GetName()}, &got); err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == kueue.ClusterQueueActive && cond.Status == "True" {
				return true, nil
			}
		}
		return false, fmt.Errorf("ClusterQueue %s not active: %v", cq.GetName(), got.Status.Conditions)
	})
}

// bringUp starts every cluster, in parallel where the order allows.
func bringUp(ctx context.Context, e *env) error {
	for _, c := range e.all {
		if err := c.apiserver.start(); err != nil {
			return err
		}
	}
	parallel := func(f func(c *cluster) error) error {
		var wg sync.WaitGroup
		errs := make([]error, len(e.all))
		for i, c := range e.all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = f(c)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := parallel(func(c *cluster) error {
		if err := c.connect(); err != nil {
			return err
		}
		if err := waitFor(c.name+": apiserver /readyz", 120*time.Second, c.ready); err != nil {
			return err
		}
		return c.installKueueObjects(ctx, e)
	}); err != nil {
		return err
	}
	if err := parallel(func(c *cluster) error {
		if c.worker {
			if err := c.startWorkerProcesses(ctx, e); err != nil {
				return err
			}
		}
		if err := c.startKueue(e); err != nil {
			return err
		}
		if err := c.kueue.start(); err != nil {
			return err
		}
		return c.kueueReady(ctx)
	}); err != nil {
		return err
	}
	return nil
}

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
