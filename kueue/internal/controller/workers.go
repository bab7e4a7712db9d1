package controller

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Workers reads worker clusters. The dispatcher only reads them: a Workload's copy there (to
// know that an old copy is gone, or holds quota, before a new nomination).
type Workers interface {
	Reader(ctx context.Context, cluster string) (client.Reader, error)
}

// KubeconfigWorkers reaches each worker as MultiKueue does: with the kubeconfig its
// MultiKueueCluster names (a Secret, key "kubeconfig", in Kueue's namespace, or a file path).
// Those credentials are MultiKueue's and may write; this type hands out only a client.Reader.
//
// A worker's client is kept and used for Recheck before its kubeconfig is read again (a
// rotated one is taken up within that), and at once after the worker refuses it (401, 403):
// during a re-nomination the dispatcher reads a copy each second, and reading the Secret with
// each of those doubled the manager API server's requests.
type KubeconfigWorkers struct {
	// Clusters reads MultiKueueClusters (the manager's cached client: the dispatcher watches
	// them).
	Clusters client.Reader
	// Secrets reads the kubeconfig Secrets (an uncached reader: a cache would list and watch
	// every Secret, and the role grants get only).
	Secrets client.Reader
	// Namespace holds MultiKueue's kubeconfig Secrets (Kueue's namespace, kueue-system).
	Namespace string
	Scheme    *runtime.Scheme
	// Timeout bounds one request to a worker (default 5 s).
	Timeout time.Duration
	// Recheck is how long a worker's kubeconfig is trusted before it is read again (default
	// 30 s).
	Recheck time.Duration
	// now is the clock (time.Now when nil).
	now func() time.Time

	mu      sync.Mutex
	clients map[string]*workerClient
}

type workerClient struct {
	source     string // where the kubeconfig came from: "<type>:<location>"
	kubeconfig []byte
	checked    time.Time
	client     client.Client
}

// Reader returns a reader of the worker `cluster`, made anew when its kubeconfig changes.
func (w *KubeconfigWorkers) Reader(ctx context.Context, cluster string) (client.Reader, error) {
	var mkc kueue.MultiKueueCluster
	if err := w.Clusters.Get(ctx, types.NamespacedName{Name: cluster}, &mkc); err != nil {
		return nil, fmt.Errorf("MultiKueueCluster %s: %w", cluster, err)
	}
	kc := mkc.Spec.ClusterSource.KubeConfig
	if kc == nil {
		return nil, fmt.Errorf("MultiKueueCluster %s: no kubeConfig (a ClusterProfile is not read)", cluster)
	}
	source := string(kc.LocationType) + ":" + kc.Location
	now := time.Now
	if w.now != nil {
		now = w.now
	}
	recheck := w.Recheck
	if recheck <= 0 {
		recheck = 30 * time.Second
	}
	w.mu.Lock()
	if c, ok := w.clients[cluster]; ok && c.source == source && now().Sub(c.checked) < recheck {
		w.mu.Unlock()
		return w.guarded(cluster, c), nil
	}
	w.mu.Unlock()
	var data []byte
	switch kc.LocationType {
	case kueue.PathLocationType:
		b, err := os.ReadFile(kc.Location)
		if err != nil {
			return nil, fmt.Errorf("MultiKueueCluster %s: %w", cluster, err)
		}
		data = b
	default:
		var s corev1.Secret
		if err := w.Secrets.Get(ctx, types.NamespacedName{Namespace: w.Namespace, Name: kc.Location}, &s); err != nil {
			return nil, fmt.Errorf("MultiKueueCluster %s: kubeconfig Secret %s/%s: %w", cluster, w.Namespace,
				kc.Location, err)
		}
		data = s.Data[kueue.MultiKueueConfigSecretKey]
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.clients[cluster]; ok && c.source == source && bytes.Equal(c.kubeconfig, data) {
		c.checked = now()
		return w.guarded(cluster, c), nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("MultiKueueCluster %s: kubeconfig: %w", cluster, err)
	}
	cfg.Timeout = w.Timeout
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	cfg.QPS, cfg.Burst = 20, 40
	cl, err := client.New(cfg, client.Options{Scheme: w.Scheme})
	if err != nil {
		return nil, fmt.Errorf("MultiKueueCluster %s: %w", cluster, err)
	}
	if w.clients == nil {
		w.clients = map[string]*workerClient{}
	}
	c := &workerClient{source: source, kubeconfig: data, checked: now(), client: cl}
	w.clients[cluster] = c
	return w.guarded(cluster, c), nil
}

// guarded is c's reader, which forgets c when the worker refuses its credentials, so that the
// next Reader reads the kubeconfig again.
func (w *KubeconfigWorkers) guarded(cluster string, c *workerClient) client.Reader {
	return refusalReader{Reader: c.client, forget: func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.clients[cluster] == c {
			delete(w.clients, cluster)
		}
	}}
}

type refusalReader struct {
	client.Reader
	forget func()
}

func (r refusalReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return r.seen(r.Reader.Get(ctx, key, obj, opts...))
}

func (r refusalReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.seen(r.Reader.List(ctx, list, opts...))
}

func (r refusalReader) seen(err error) error {
	if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
		r.forget()
	}
	return err
}

// copyState is what a worker holds of a Workload: no copy, a copy waiting there, a copy
// holding quota there (reserved or admitted: MultiKueue makes that worker the Workload's), or a
// copy deactivated there (MultiKueue does that to a copy when the manager's Workload was
// evicted; it then keeps the copy, without deleting it, for as long as the manager's Workload
// holds quota).
type copyState int

const (
	copyAbsent copyState = iota
	copyWaiting
	copyHolding
	copyDeactivated
)

// remoteCopy reads the Workload's copy in a worker (MultiKueue gives it the same namespace and
// name).
func remoteCopy(ctx context.Context, r client.Reader, wl *kueue.Workload) (copyState, error) {
	var remote kueue.Workload
	if err := r.Get(ctx, client.ObjectKeyFromObject(wl), &remote); err != nil {
		if client.IgnoreNotFound(err) == nil {
			return copyAbsent, nil
		}
		return copyAbsent, err
	}
	if apimeta.IsStatusConditionTrue(remote.Status.Conditions, kueue.WorkloadQuotaReserved) ||
		apimeta.IsStatusConditionTrue(remote.Status.Conditions, kueue.WorkloadAdmitted) {
		return copyHolding, nil
	}
	if remote.Spec.Active != nil && !*remote.Spec.Active {
		return copyDeactivated, nil
	}
	return copyWaiting, nil
}
