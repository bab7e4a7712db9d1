package main

// The pieces every case shares: the openb cluster as Kubernetes objects, the greensched serve
// process, and kube-scheduler (scheduler.New, through newScheduler of the version's file
// k8s-<version>/k8s.go) on a fake clientset with an event recorder that keeps every binding
// and every FailedScheduling message.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedulerscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
)

// The resource and label names greensched serve reads (docs/SERVE.md, "Pod requests" and
// "Nodes").
const (
	gpuMilliResource = v1.ResourceName("alibabacloud.com/gpu-milli")
	gpuCountResource = v1.ResourceName("alibabacloud.com/gpu-count")
	gpuModelKey      = "alibabacloud.com/gpu-card-model"
	gpuIndexKey      = "alibabacloud.com/gpu-index"
	namespace        = "openb"
	schedulerName    = "greensched"
)

type nodeRow struct {
	name      string
	cpuMilli  int64
	memoryMiB int64
	gpus      int64
	model     string
}

type podRow struct {
	name      string
	cpuMilli  int64
	memoryMiB int64
	numGPU    int64
	gpuMilli  int64
	gpuSpec   string
}

func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var header []string
	var rows []map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(strings.TrimSpace(sc.Text()), ",")
		if header == nil {
			header = fields
			continue
		}
		if len(fields) != len(header) {
			return nil, fmt.Errorf("%s: row %d has %d fields, header %d", path, len(rows)+2, len(fields), len(header))
		}
		row := map[string]string{}
		for i, h := range header {
			row[h] = fields[i]
		}
		rows = append(rows, row)
	}
	return rows, sc.Err()
}

func atoi(row map[string]string, key string) (int64, error) {
	v, err := strconv.ParseInt(row[key], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s: %v", key, err)
	}
	return v, nil
}

func readNodes(path string) ([]nodeRow, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var out []nodeRow
	for _, r := range rows {
		n := nodeRow{name: r["sn"], model: r["model"]}
		for key, dst := range map[string]*int64{"cpu_milli": &n.cpuMilli, "memory_mib": &n.memoryMiB, "gpu": &n.gpus} {
			if *dst, err = atoi(r, key); err != nil {
				return nil, fmt.Errorf("%s: node %s: %v", path, n.name, err)
			}
		}
		out = append(out, n)
	}
	return out, nil
}

func readPods(path string) ([]podRow, error) {
	rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	var out []podRow
	for _, r := range rows {
		p := podRow{name: r["name"], gpuSpec: r["gpu_spec"]}
		for key, dst := range map[string]*int64{"cpu_milli": &p.cpuMilli, "memory_mib": &p.memoryMiB, "num_gpu": &p.numGPU, "gpu_milli": &p.gpuMilli} {
			if *dst, err = atoi(r, key); err != nil {
				return nil, fmt.Errorf("%s: pod %s: %v", path, p.name, err)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// nodeObject: capacity as a kubelet with a GPU device plugin would advertise it, and the GPU
// model label.
func nodeObject(n nodeRow) *v1.Node {
	res := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(n.cpuMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(n.memoryMiB<<20, resource.BinarySI),
		// openb nodes hold up to a few dozen pods; kubelet's default of 110 would not bind.
		v1.ResourcePods: *resource.NewQuantity(1000, resource.DecimalSI),
	}
	labels := map[string]string{"kubernetes.io/hostname": n.name}
	if n.gpus > 0 {
		res[gpuCountResource] = *resource.NewQuantity(n.gpus, resource.DecimalSI)
		res[gpuMilliResource] = *resource.NewQuantity(n.gpus*1000, resource.DecimalSI)
		labels[gpuModelKey] = n.model
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: labels},
		Status: v1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
}

// podObject: the GPU request as docs/SERVE.md tells users to write it: a share of one GPU as
// alibabacloud.com/gpu-milli, whole GPUs as alibabacloud.com/gpu-count, models as the
// alibabacloud.com/gpu-card-model annotation.
func podObject(p podRow) *v1.Pod {
	req := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(p.cpuMilli, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(p.memoryMiB<<20, resource.BinarySI),
	}
	lim := req.DeepCopy()
	switch {
	case p.numGPU == 1 && p.gpuMilli < 1000:
		lim[gpuMilliResource] = *resource.NewQuantity(p.gpuMilli, resource.DecimalSI)
	case p.numGPU >= 1:
		lim[gpuCountResource] = *resource.NewQuantity(p.numGPU, resource.DecimalSI)
	}
	for k, v := range lim {
		if k != v1.ResourceCPU && k != v1.ResourceMemory {
			req[k] = v // extended resources: requests equal limits
		}
	}
	var annotations map[string]string
	if p.gpuSpec != "" {
		annotations = map[string]string{gpuModelKey: p.gpuSpec}
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: p.name, Namespace: namespace, UID: types.UID("uid-" + p.name),
			Annotations: annotations,
		},
		Spec: v1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []v1.Container{{
				Name: "main", Image: "registry.invalid/openb:1",
				Resources: v1.ResourceRequirements{Requests: req, Limits: lim},
			}},
		},
	}
}

// ---- greensched serve --------------------------------------------------------------------

type serve struct {
	bin, state, nodes string
	port              int
	cmd               *exec.Cmd
	log               *os.File
	done              chan struct{}
	// With certs, serve listens over HTTPS and asks for client certificates (--tls-cert,
	// --tls-key, --client-ca), and client, which the harness's own requests go through,
	// trusts the CA and shows the client certificate.
	certs  *testCerts
	client *http.Client
}

func (s *serve) base() string {
	if s.certs != nil {
		return fmt.Sprintf("https://127.0.0.1:%d", s.port)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", s.port)
}

// post sends a JSON body to one of serve's paths (over TLS when it serves TLS).
func (s *serve) post(path string, body []byte) (*http.Response, error) {
	return s.httpClient().Post(s.base()+path, "application/json", bytes.NewReader(body))
}

func (s *serve) httpClient() *http.Client {
	if s.client != nil {
		return s.client
	}
	return http.DefaultClient
}

// useTLS makes serve listen over HTTPS with mutual TLS, and the harness's requests to it
// carry the client certificate.
func (s *serve) useTLS(certs *testCerts) error {
	client, err := certs.client(true)
	if err != nil {
		return err
	}
	s.certs, s.client = certs, client
	return nil
}

// start runs greensched serve on 127.0.0.1 (the same port after the first start) and waits
// until /healthz answers 200.
func (s *serve) start() error {
	portFile := s.state + ".port"
	os.Remove(portFile)
	args := []string{"serve", "--listen", fmt.Sprintf("127.0.0.1:%d", s.port), "--state", s.state,
		"--port-file", portFile, "--policy", "fgd", "-q"}
	if s.nodes != "" {
		args = append(args, "--nodes", s.nodes)
	}
	if s.certs != nil {
		args = append(args, "--tls-cert", s.certs.serverCert, "--tls-key", s.certs.serverKey,
			"--client-ca", s.certs.caCert)
	}
	if s.log == nil {
		f, err := os.Create(s.state + ".log")
		if err != nil {
			return err
		}
		s.log = f
	}
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %v", s.bin, err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("greensched serve exited at start (log: %s)", s.log.Name())
		default:
		}
		if s.port == 0 {
			if b, err := os.ReadFile(portFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				s.port, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
		}
		if s.port != 0 {
			if resp, err := s.httpClient().Get(s.base() + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return nil
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("greensched serve not healthy after 60 s (log: %s)", s.log.Name())
}

func (s *serve) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.done
	}
}

func (s *serve) stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.kill()
		}
	}
	if s.log != nil {
		s.log.Close()
	}
}

type boundPod struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	Node       string `json:"node"`
	CPUMilli   int64  `json:"cpu_milli"`
	MemoryMiB  int64  `json:"memory_mib"`
	GPUCount   int64  `json:"gpu_count"`
	GPUMilli   int64  `json:"gpu_milli"`
	GPUIndices string `json:"gpu_indices"`
}

// getJSON: GET path (from the root) of serve, as JSON into out.
func (s *serve) getJSON(path string, out interface{}) error {
	url := s.base() + path
	resp, err := s.httpClient().Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	return json.Unmarshal(body, out)
}

func (s *serve) pods() (map[string]boundPod, error) {
	var list []boundPod
	if err := s.getJSON("/pods", &list); err != nil {
		return nil, err
	}
	out := map[string]boundPod{}
	for _, p := range list {
		out[p.Namespace+"/"+p.Name] = p
	}
	return out, nil
}

// metrics: the samples of /metrics, keyed by name{labels} as printed.
func (s *serve) metrics() (map[string]float64, error) {
	resp, err := s.httpClient().Get(s.base() + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		cut := strings.LastIndexByte(line, ' ')
		if cut < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[cut+1:], 64)
		if err == nil {
			out[line[:cut]] = v
		}
	}
	return out, sc.Err()
}

// requestsNotOK: extender requests whose outcome was not "ok", by verb{code,outcome}.
func requestsNotOK(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if strings.HasPrefix(k, "greensched_extender_requests_total{") && !strings.Contains(k, `outcome="ok"`) && v > 0 {
			out[k] = v
		}
	}
	return out
}

// ---- certificates for mutual TLS -----------------------------------------------------------

// testCerts: PEM files made at test time, as docs/SERVE.md's openssl commands make them: a CA,
// serve's certificate for 127.0.0.1 and localhost, a client certificate that CA signed
// (kube-scheduler's and the harness's), and a client certificate of another CA, which serve
// must refuse.
type testCerts struct {
	caCert, serverCert, serverKey, clientCert, clientKey string
	otherClientCert, otherClientKey                      string
}

type certKey struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// issue makes a P-256 key and a certificate for it from tmpl, signed by parent (self-signed
// when parent is nil), and writes both as PEM to dir/name.crt and dir/name.key.
func issue(dir, name string, tmpl *x509.Certificate, parent *certKey) (*certKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	signer, signerCert := key, tmpl
	if parent != nil {
		signer, signerCert = parent.key, parent.cert
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("certificate %s: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".key"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return &certKey{cert: cert, key: key}, nil
}

func makeCerts(dir string) (*testCerts, error) {
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	caTmpl := func(cn string) *x509.Certificate {
		return &x509.Certificate{
			Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		}
	}
	clientTmpl := func(cn string) *x509.Certificate {
		return &x509.Certificate{
			Subject: pkix.Name{CommonName: cn}, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
	}
	ca, err := issue(dir, "ca", caTmpl("greensched test CA"), nil)
	if err != nil {
		return nil, err
	}
	if _, err := issue(dir, "extender", &x509.Certificate{
		Subject: pkix.Name{CommonName: "greensched-extender"}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}, ca); err != nil {
		return nil, err
	}
	if _, err := issue(dir, "scheduler", clientTmpl("greensched-scheduler"), ca); err != nil {
		return nil, err
	}
	other, err := issue(dir, "other-ca", caTmpl("another CA"), nil)
	if err != nil {
		return nil, err
	}
	if _, err := issue(dir, "other-client", clientTmpl("greensched-scheduler"), other); err != nil {
		return nil, err
	}
	f := func(name string) string { return filepath.Join(dir, name) }
	return &testCerts{
		caCert: f("ca.crt"), serverCert: f("extender.crt"), serverKey: f("extender.key"),
		clientCert: f("scheduler.crt"), clientKey: f("scheduler.key"),
		otherClientCert: f("other-client.crt"), otherClientKey: f("other-client.key"),
	}, nil
}

// client: an HTTPS client that verifies serve's certificate against the CA and shows the
// client certificate (withCert), or none.
func (t *testCerts) client(withCert bool) (*http.Client, error) {
	if !withCert {
		return t.clientWith(nil)
	}
	pair, err := tls.LoadX509KeyPair(t.clientCert, t.clientKey)
	if err != nil {
		return nil, err
	}
	return t.clientWith(&pair)
}

// clientWith: an HTTPS client that verifies serve's certificate against the CA and shows cert
// (when not nil) whichever CAs serve names in its certificate request, as client-go does (Go's
// own choice would send no certificate that none of them signed).
func (t *testCerts) clientWith(cert *tls.Certificate) (*http.Client, error) {
	caPEM, err := os.ReadFile(t.caCert)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("%s: no certificate", t.caCert)
	}
	config := &tls.Config{RootCAs: roots}
	if cert != nil {
		config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	return &http.Client{
		Timeout:   10 * time.Second,
		Transport: &http.Transport{TLSClientConfig: config, MaxIdleConnsPerHost: 8},
	}, nil
}

// ---- kube-scheduler ----------------------------------------------------------------------

type podRecord struct {
	node       string // from the Scheduled event: the bind verb succeeded
	scheduled  int    // Scheduled events (a pod must be bound at most once)
	gpuIndex   string // alibabacloud.com/gpu-index read from the extender when it was bound
	lastFail   string // last FailedScheduling message
	failIsFit  bool   // that failure was "no node fits" (not an error)
	failures   int
	errorFails int
}

// recorder is kube-scheduler's event sink: it keeps what each pod went through, and plays the
// part of the API server's binding for pods the extender bound: it sets spec.nodeName and the
// GPU index annotation (read from GET /pods/<ns>/<name>, as docs/SERVE.md tells controllers
// to), so the scheduler's cache confirms the pod.
type recorder struct {
	mu          sync.Mutex
	pods        map[string]*podRecord
	unconfirmed int // Scheduled pods not yet written back to the API server
	changed     chan struct{}
	binds       chan *v1.Pod
}

func newRecorder() *recorder {
	return &recorder{pods: map[string]*podRecord{}, changed: make(chan struct{}, 1), binds: make(chan *v1.Pod, 1<<16)}
}

func (r *recorder) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...interface{}) {
	pod, ok := regarding.(*v1.Pod)
	if !ok {
		return
	}
	msg := note
	if len(args) > 0 {
		msg = fmt.Sprintf(note, args...)
	}
	key := pod.Namespace + "/" + pod.Name
	r.mu.Lock()
	rec := r.pods[key]
	if rec == nil {
		rec = &podRecord{}
		r.pods[key] = rec
	}
	switch reason {
	case "Scheduled":
		rec.scheduled++
		rec.node = pod.Spec.NodeName
		r.unconfirmed++
		r.binds <- pod.DeepCopy()
	case "FailedScheduling":
		rec.failures++
		rec.lastFail = msg
		rec.failIsFit = strings.HasPrefix(msg, "0/")
		if !rec.failIsFit {
			rec.errorFails++
		}
	}
	r.mu.Unlock()
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() map[string]podRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]podRecord, len(r.pods))
	for k, v := range r.pods {
		out[k] = *v
	}
	return out
}

type cluster struct {
	client   *fake.Clientset
	rec      *recorder
	cancel   context.CancelFunc
	ctx      context.Context
	nodes    []nodeRow
	srv      *serve
	binderWG sync.WaitGroup
	nudges   int
}

func loadConfig(path string) (*schedulerapi.KubeSchedulerConfiguration, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, gvk, err := schedulerscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	cfg, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("%s: a %v, not a KubeSchedulerConfiguration", path, gvk)
	}
	if v := gvk.GroupVersion().String(); v != configAPIVersion {
		return nil, fmt.Errorf("%s: %s, not the %s kube-scheduler %s reads", path, v, configAPIVersion, kubeVersion)
	}
	return cfg, nil
}

// startCluster: the nodes in a fake API server and kube-scheduler built from the config's
// profiles and extenders, with the extender's URL pointed at extenderURL (srv itself, or a
// proxy in front of it).
func startCluster(cfgPath string, nodeCacheCapable bool, nodes []nodeRow, srv *serve, extenderURL string) (*cluster, error) {
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return nil, err
	}
	if len(cfg.Extenders) != 1 {
		return nil, fmt.Errorf("%s: expected one extender, found %d", cfgPath, len(cfg.Extenders))
	}
	cfg.Extenders[0].URLPrefix = extenderURL + "/"
	cfg.Extenders[0].NodeCacheCapable = nodeCacheCapable

	ctx, cancel := context.WithCancel(context.Background())
	c := &cluster{client: fake.NewSimpleClientset(), rec: newRecorder(), ctx: ctx, cancel: cancel, nodes: nodes, srv: srv}
	// The fake clientset replays nothing to a new watch, and WaitForCacheSync returns after
	// the informers' list, before their watch: a pod created in between would never reach
	// the scheduler. So this waits until the scheduler's pod watch is registered.
	podWatch := make(chan struct{})
	var podWatchOnce sync.Once
	c.client.PrependWatchReactor("pods", func(action clienttesting.Action) (bool, watch.Interface, error) {
		w, err := c.client.Tracker().Watch(action.GetResource(), action.GetNamespace())
		if err != nil {
			return false, nil, err
		}
		podWatchOnce.Do(func() { close(podWatch) })
		return true, w, nil
	})
	for _, n := range nodes {
		if _, err := c.client.CoreV1().Nodes().Create(ctx, nodeObject(n), metav1.CreateOptions{}); err != nil {
			cancel()
			return nil, err
		}
	}
	factory := scheduler.NewInformerFactory(c.client, 0)
	sched, err := newScheduler(ctx, c.client, factory, c.rec, cfg)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("scheduler.New: %v", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	select {
	case <-podWatch:
	case <-time.After(30 * time.Second):
		cancel()
		return nil, fmt.Errorf("the scheduler's pod watch did not start within 30 s")
	}
	for i := 0; i < 4; i++ {
		c.binderWG.Add(1)
		go c.confirmBindings()
	}
	go sched.Run(ctx)
	return c, nil
}

// confirmBindings writes each bound pod back to the API server, as the binding subresource
// would: spec.nodeName and the GPU index annotation.
// schedulePods creates the first n pods (all of them when there are fewer) with create and waits
// up to timeout for each to be bound or unschedulable; it returns their keys and how long that
// took, and false when they could not be created (the failure is reported).
func (c *cluster) schedulePods(ck *checker, pods []podRow, n int, timeout time.Duration,
	create func([]*v1.Pod) error) ([]string, time.Duration, bool) {
	if n > len(pods) {
		n = len(pods)
	}
	objs := podObjects(pods[:n])
	keys := podKeys(objs)
	start := time.Now()
	if err := create(objs); err != nil {
		ck.errorf("creating pods: %v", err)
		return keys, 0, false
	}
	if !c.settle(keys, timeout) {
		ck.errorf("pods still unresolved after %s", timeout)
	}
	return keys, time.Since(start), true
}

func (c *cluster) confirmBindings() {
	defer c.binderWG.Done()
	for {
		select {
		case <-c.ctx.Done():
			return
		case pod := <-c.rec.binds:
			key := pod.Namespace + "/" + pod.Name
			var bp boundPod
			// Retried while the extender restarts; a pod it does not hold shows as missing.
			for deadline := time.Now().Add(10 * time.Second); ; {
				err := c.srv.getJSON(fmt.Sprintf("/pods/%s/%s", pod.Namespace, pod.Name), &bp)
				if err == nil || c.ctx.Err() != nil {
					break
				}
				if time.Now().After(deadline) {
					bp.GPUIndices = "<missing: " + err.Error() + ">"
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			c.rec.mu.Lock()
			c.rec.pods[key].gpuIndex = bp.GPUIndices
			c.rec.unconfirmed--
			c.rec.mu.Unlock()
			live, err := c.client.CoreV1().Pods(pod.Namespace).Get(c.ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				continue
			}
			live.Spec.NodeName = pod.Spec.NodeName
			if bp.GPUIndices != "" {
				if live.Annotations == nil {
					live.Annotations = map[string]string{}
				}
				live.Annotations[gpuIndexKey] = bp.GPUIndices
			}
			c.client.CoreV1().Pods(pod.Namespace).Update(c.ctx, live, metav1.UpdateOptions{})
			select {
			case c.rec.changed <- struct{}{}:
			default:
			}
		}
	}
}

// nudge changes a node label: a cluster event, on which kube-scheduler moves the pods that
// failed back to its active queue now rather than after its 60 s unschedulable timeout.
func (c *cluster) nudge() {
	c.nudges++
	n, err := c.client.CoreV1().Nodes().Get(c.ctx, c.nodes[0].name, metav1.GetOptions{})
	if err != nil {
		return
	}
	n.Labels["greensched.test/nudge"] = strconv.Itoa(c.nudges)
	c.client.CoreV1().Nodes().Update(c.ctx, n, metav1.UpdateOptions{})
}

func (c *cluster) createPods(pods []*v1.Pod) error {
	for _, p := range pods {
		if _, err := c.client.CoreV1().Pods(p.Namespace).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// createParallel creates the pods in batches of `batch`, each batch from parallel goroutines.
func (c *cluster) createParallel(pods []*v1.Pod, batch, workers int) error {
	for start := 0; start < len(pods); start += batch {
		end := start + batch
		if end > len(pods) {
			end = len(pods)
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := start + w; i < end; i += workers {
					if _, err := c.client.CoreV1().Pods(namespace).Create(c.ctx, pods[i], metav1.CreateOptions{}); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return err
		}
	}
	return nil
}

// settle waits until every pod is bound or last failed with "no node fits", retrying (by a
// nudge) pods whose last attempt ended in an error. Returns false on timeout.
func (c *cluster) settle(keys []string, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	lastNudge := time.Now()
	for time.Now().Before(deadline) {
		snap := c.rec.snapshot()
		c.rec.mu.Lock()
		open, erred := c.rec.unconfirmed, 0
		c.rec.mu.Unlock()
		for _, k := range keys {
			r, ok := snap[k]
			switch {
			case !ok:
				open++
			case r.scheduled > 0:
			case r.failIsFit:
			default:
				open++
				if r.errorFails > 0 {
					erred++
				}
			}
		}
		if open == 0 {
			return true
		}
		if erred > 0 && time.Since(lastNudge) > 500*time.Millisecond {
			c.nudge()
			lastNudge = time.Now()
		}
		select {
		case <-c.rec.changed:
		case <-time.After(100 * time.Millisecond):
		}
	}
	return false
}

func (c *cluster) stop() {
	c.cancel()
	c.binderWG.Wait()
}

// ---- checks ------------------------------------------------------------------------------

type checker struct {
	name   string
	failed bool
}

func (ck *checker) errorf(format string, args ...interface{}) {
	ck.failed = true
	fmt.Printf("FAIL [%s] %s\n", ck.name, fmt.Sprintf(format, args...))
}

func (ck *checker) logf(format string, args ...interface{}) {
	fmt.Printf("[%s] %s\n", ck.name, fmt.Sprintf(format, args...))
}

func parseIndices(s string) []int {
	if s == "" {
		return nil
	}
	var out []int
	for _, part := range strings.Split(s, "-") {
		v, err := strconv.Atoi(part)
		if err != nil {
			return append(out, -1)
		}
		out = append(out, v)
	}
	return out
}

// checkPlacements: the extender's bound pods equal the scheduler's bindings pod for pod
// (node and GPUs), every pod was bound at most once, and no node or GPU is overcommitted.
func checkPlacements(ck *checker, c *cluster, keys []string) (bound, unschedulable int) {
	state, err := c.srv.pods()
	if err != nil {
		ck.errorf("GET /pods: %v", err)
		return
	}
	snap := c.rec.snapshot()
	mismatches := 0
	for _, k := range keys {
		r := snap[k]
		if r.scheduled > 1 {
			ck.errorf("%s was bound %d times", k, r.scheduled)
		}
		p, held := state[k]
		switch {
		case r.scheduled > 0 && !held:
			mismatches++
			if mismatches <= 5 {
				ck.errorf("%s bound by the scheduler to %s, absent from the extender's state (acknowledged bind lost)", k, r.node)
			}
		case r.scheduled == 0 && held:
			mismatches++
			if mismatches <= 5 {
				ck.errorf("%s held by the extender on %s, never bound by the scheduler", k, p.Node)
			}
		case held && (p.Node != r.node || p.GPUIndices != r.gpuIndex):
			mismatches++
			if mismatches <= 5 {
				ck.errorf("%s: scheduler %s GPUs %q, extender %s GPUs %q", k, r.node, r.gpuIndex, p.Node, p.GPUIndices)
			}
		}
		if r.scheduled > 0 {
			bound++
		} else if r.failIsFit {
			unschedulable++
		}
	}
	if extra := len(state) - bound; mismatches == 0 && extra != 0 {
		ck.errorf("the extender holds %d pods, the scheduler bound %d", len(state), bound)
	}
	if mismatches > 0 {
		ck.errorf("%d pods differ between the scheduler's bindings and the extender's state", mismatches)
	}
	// Overcommit, recomputed from the pods.
	capacity := map[string]nodeRow{}
	for _, n := range c.nodes {
		capacity[n.name] = n
	}
	type use struct {
		cpu, mem int64
		gpu      map[int]int64
	}
	used := map[string]*use{}
	for k, p := range state {
		u := used[p.Node]
		if u == nil {
			u = &use{gpu: map[int]int64{}}
			used[p.Node] = u
		}
		u.cpu += p.CPUMilli
		u.mem += p.MemoryMiB
		idx := parseIndices(p.GPUIndices)
		want := int(p.GPUCount)
		if len(idx) != want {
			ck.errorf("%s asks for %d GPUs, holds %q", k, want, p.GPUIndices)
		}
		for _, i := range idx {
			if p.GPUMilli < 1000 {
				u.gpu[i] += p.GPUMilli
			} else {
				u.gpu[i] += 1000
			}
		}
	}
	over := 0
	for node, u := range used {
		n, ok := capacity[node]
		if !ok {
			ck.errorf("pods on unknown node %s", node)
			continue
		}
		if u.cpu > n.cpuMilli || u.mem > n.memoryMiB {
			over++
			ck.errorf("node %s overcommitted: cpu %d/%d milli, memory %d/%d MiB", node, u.cpu, n.cpuMilli, u.mem, n.memoryMiB)
		}
		for i, m := range u.gpu {
			if i < 0 || int64(i) >= n.gpus || m > 1000 {
				over++
				ck.errorf("node %s GPU %d overcommitted: %d milli (node has %d GPUs)", node, i, m, n.gpus)
			}
		}
	}
	if over == 0 {
		ck.logf("no node, CPU or GPU overcommitted (%d pods on %d nodes)", len(state), len(used))
	}
	return
}

// allocation: cluster GPU allocation in percent, from the extender's pods.
func allocation(c *cluster) (float64, error) {
	state, err := c.srv.pods()
	if err != nil {
		return 0, err
	}
	var used, total int64
	for _, n := range c.nodes {
		total += n.gpus * 1000
	}
	for _, p := range state {
		if p.GPUMilli < 1000 {
			used += p.GPUMilli * p.GPUCount
		} else {
			used += 1000 * p.GPUCount
		}
	}
	return 100 * float64(used) / float64(total), nil
}

// reasonsOf splits "0/1213 nodes are available: 846 Insufficient cpu, 3 Foo." into
// {reason: count}. Later kube-schedulers (1.35 among them) append the messages of their
// PostFilter plugins; that part is left out (splitPostFilter).
func reasonsOf(msg string) (map[string]int, int, bool) {
	var total int
	msg, _ = splitPostFilter(msg)
	head := strings.SplitN(msg, " nodes are available: ", 2)
	if len(head) != 2 || !strings.HasPrefix(head[0], "0/") {
		return nil, 0, false
	}
	total, _ = strconv.Atoi(strings.TrimPrefix(head[0], "0/"))
	out := map[string]int{}
	for _, part := range strings.Split(strings.TrimSuffix(head[1], "."), ", ") {
		sp := strings.SplitN(part, " ", 2)
		n, err := strconv.Atoi(sp[0])
		if len(sp) != 2 || err != nil {
			return nil, total, false
		}
		out[sp[1]] += n
	}
	return out, total, true
}

// splitPostFilter cuts a FailedScheduling message into the filter part, "0/4 nodes are
// available: 4 GPU model not allowed by the pod.", and what later kube-schedulers append after
// it from their PostFilter plugins (1.35: "no new claims to deallocate, preemption: 0/4 nodes
// are available: 4 Preemption is not helpful for scheduling."; 1.20: nothing). No reason holds
// ". ", so the filter part ends at the first.
func splitPostFilter(msg string) (filter, postFilter string) {
	if i := strings.Index(msg, ". "); i >= 0 {
		return msg[:i+1], msg[i+2:]
	}
	return msg, ""
}

// preemptionOf: the counted reasons of the "preemption: 0/N nodes are available: ..." part of a
// FailedScheduling message; false when there is none (1.20).
func preemptionOf(msg string) (map[string]int, bool) {
	_, post := splitPostFilter(msg)
	i := strings.Index(post, "preemption: ")
	if i < 0 {
		return nil, false
	}
	reasons, _, ok := reasonsOf(post[i+len("preemption: "):])
	return reasons, ok
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func writeFile(dir, name, text string) {
	os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
}

// ---- the API server's side of an eviction, for greensched deschedule ----------------------

// disruptionBudget: a PodDisruptionBudget with minAvailable over the pods its selector matches.
type disruptionBudget struct {
	name         string
	selector     map[string]string
	minAvailable int
}

// kubeAPI answers what greensched deschedule asks of the API server, from the fake clientset:
// discovery (GET /api/v1, with pods/eviction in policy/v1beta1 as 1.20 serves it), GET of a
// pod, and the Eviction API (POST .../pods/<name>/eviction). An eviction that would leave a
// disruption budget's matching pods (bound, not being deleted: the disruption controller's
// healthy count) below its minAvailable is refused with 429 and the API server's message.
// Otherwise the pod is released in serve (as serve's --kube-watch does on a deletion), deleted,
// and recreated under a new name, unscheduled and with a new UID, as its ReplicaSet would.
type kubeAPI struct {
	c        *cluster
	srv      *serve
	token    string
	budgets  []disruptionBudget
	url      string
	server   *http.Server
	mu       sync.Mutex
	evicted  []string          // namespace/name of the pods evicted, in order
	refused  []string          // namespace/name of the pods whose eviction was refused
	replaced map[string]string // evicted pod -> its replacement (namespace/name)
}

func startKubeAPI(c *cluster, srv *serve, token string, budgets []disruptionBudget) (*kubeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &kubeAPI{c: c, srv: srv, token: token, budgets: budgets, replaced: map[string]string{},
		url: "http://" + ln.Addr().String()}
	a.server = &http.Server{Handler: a}
	go a.server.Serve(ln)
	return a, nil
}

func (a *kubeAPI) stop() { a.server.Close() }

func writeStatus(w http.ResponseWriter, code int, reason, message string, causes []map[string]string) {
	body := map[string]interface{}{"kind": "Status", "apiVersion": "v1", "metadata": map[string]interface{}{},
		"status": "Failure", "reason": reason, "message": message, "code": code}
	if code < 300 {
		body["status"] = "Success"
	}
	if len(causes) > 0 {
		body["details"] = map[string]interface{}{"causes": causes}
	}
	writeJSON(w, code, body)
}

func writeJSON(w http.ResponseWriter, code int, body interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(body)
}

func (a *kubeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+a.token {
		writeStatus(w, 401, "Unauthorized", "Unauthorized", nil)
		return
	}
	if r.Method == "GET" && r.URL.Path == "/api/v1" {
		writeJSON(w, 200, map[string]interface{}{"kind": "APIResourceList", "groupVersion": "v1",
			"resources": []map[string]interface{}{
				{"name": "pods", "namespaced": true, "kind": "Pod", "verbs": []string{"get", "list", "delete"}},
				{"name": "pods/eviction", "namespaced": true, "group": "policy", "version": "v1beta1",
					"kind": "Eviction", "verbs": []string{"create"}},
			}})
		return
	}
	// /api/v1/namespaces/<ns>/pods/<name>[/eviction]
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if len(parts) < 6 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" {
		writeStatus(w, 404, "NotFound", "the server could not find the requested resource", nil)
		return
	}
	ns, name := parts[3], parts[5]
	switch {
	case r.Method == "GET" && len(parts) == 6:
		pod, err := a.c.client.CoreV1().Pods(ns).Get(a.c.ctx, name, metav1.GetOptions{})
		if err != nil {
			writeStatus(w, 404, "NotFound", fmt.Sprintf("pods %q not found", name), nil)
			return
		}
		writeJSON(w, 200, pod)
	case r.Method == "POST" && len(parts) == 7 && parts[6] == "eviction":
		a.evict(w, r, ns, name)
	default:
		writeStatus(w, 405, "MethodNotAllowed", r.Method+" "+r.URL.Path, nil)
	}
}

func (a *kubeAPI) evict(w http.ResponseWriter, r *http.Request, ns, name string) {
	var ev struct {
		APIVersion    string `json:"apiVersion"`
		Kind          string `json:"kind"`
		DeleteOptions *struct {
			Preconditions *struct {
				UID *string `json:"uid"`
			} `json:"preconditions"`
		} `json:"deleteOptions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&ev); err != nil || ev.Kind != "Eviction" || ev.APIVersion != "policy/v1beta1" {
		writeStatus(w, 400, "BadRequest", fmt.Sprintf("not a policy/v1beta1 Eviction (%v)", err), nil)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := ns + "/" + name
	pods := a.c.client.CoreV1().Pods(ns)
	live, err := pods.Get(a.c.ctx, name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, 404, "NotFound", fmt.Sprintf("pods %q not found", name), nil)
		return
	}
	if ev.DeleteOptions != nil && ev.DeleteOptions.Preconditions != nil && ev.DeleteOptions.Preconditions.UID != nil &&
		*ev.DeleteOptions.Preconditions.UID != string(live.UID) {
		writeStatus(w, 409, "Conflict", fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s",
			*ev.DeleteOptions.Preconditions.UID, live.UID), nil)
		return
	}
	for _, b := range a.budgets {
		if !labelsMatch(b.selector, live.Labels) {
			continue
		}
		list, err := pods.List(a.c.ctx, metav1.ListOptions{})
		if err != nil {
			writeStatus(w, 500, "InternalError", err.Error(), nil)
			return
		}
		healthy := 0
		for _, p := range list.Items {
			if labelsMatch(b.selector, p.Labels) && p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
				healthy++
			}
		}
		if healthy-1 < b.minAvailable {
			a.refused = append(a.refused, key)
			writeStatus(w, 429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption budget.",
				[]map[string]string{{"reason": "DisruptionBudget",
					"message": fmt.Sprintf("The disruption budget %s needs %d healthy pods and has %d currently", b.name, b.minAvailable, healthy)}})
			return
		}
	}
	// serve's room first, so that the scheduler, woken by the deletion, finds it free.
	release, _ := json.Marshal(map[string]string{"PodName": name, "PodNamespace": ns, "PodUID": string(live.UID)})
	if resp, err := a.srv.post("/release", release); err == nil {
		resp.Body.Close()
	}
	if err := pods.Delete(a.c.ctx, name, metav1.DeleteOptions{}); err != nil {
		writeStatus(w, 500, "InternalError", err.Error(), nil)
		return
	}
	a.evicted = append(a.evicted, key)
	rep := live.DeepCopy()
	rep.Name = fmt.Sprintf("%s-r%d", name, len(a.evicted))
	rep.UID = types.UID("uid-" + rep.Name)
	rep.ResourceVersion = ""
	rep.Spec.NodeName = ""
	delete(rep.Annotations, gpuIndexKey)
	rep.Status = v1.PodStatus{}
	if _, err := pods.Create(a.c.ctx, rep, metav1.CreateOptions{}); err != nil {
		writeStatus(w, 500, "InternalError", "recreating: "+err.Error(), nil)
		return
	}
	a.replaced[key] = ns + "/" + rep.Name
	writeStatus(w, 201, "", "", nil)
}

func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}
