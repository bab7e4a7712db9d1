package controller

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// workerAPI is a worker's API server that refuses every request with `code` (403 or 404),
// counting them.
func workerAPI(t *testing.T, code *atomic.Int32, requests *atomic.Int32) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(code.Load()))
		reason := map[int32]string{403: "Forbidden", 404: "NotFound"}[code.Load()]
		fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d}`, reason, code.Load())
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func kubeconfigFor(url, token string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: w, cluster: {server: %q}}]
users: [{name: w, user: {token: %q}}]
contexts: [{name: w, context: {cluster: w, user: w}}]
current-context: w
`, url, token))
}

// TestKubeconfigWorkersRereadTheSecretOnlyWhenDueOrRefused: a worker's kubeconfig Secret is
// read once per Recheck, not once per read of a copy; a rotated Secret is taken up after
// Recheck, and at once after the worker refuses the old credentials.
func TestKubeconfigWorkersRereadTheSecretOnlyWhenDueOrRefused(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	var code, requests atomic.Int32
	code.Store(404)
	url := workerAPI(t, &code, &requests)
	mkc := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "gb"},
		Spec: kueue.MultiKueueClusterSpec{ClusterSource: kueue.ClusterSource{KubeConfig: &kueue.KubeConfig{
			LocationType: kueue.SecretLocationType, Location: "gb-kubeconfig"}}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "kueue-system", Name: "gb-kubeconfig"},
		Data: map[string][]byte{kueue.MultiKueueConfigSecretKey: kubeconfigFor(url, "first")}}
	var secretReads atomic.Int32
	secrets := fake.NewClientBuilder().WithScheme(scheme).WithObjects(secret).WithInterceptorFuncs(
		interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object,
			opts ...client.GetOption) error {
			secretReads.Add(1)
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	clusters := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mkc).Build()
	now := t0
	w := &KubeconfigWorkers{Clusters: clusters, Secrets: secrets, Namespace: "kueue-system", Scheme: scheme,
		Recheck: 30 * time.Second, now: func() time.Time { return now }}
	ctx := context.Background()
	wl := remoteWorkload(false)
	read := func() error {
		r, err := w.Reader(ctx, "gb")
		if err != nil {
			t.Fatal(err)
		}
		_, err = remoteCopy(ctx, r, wl)
		return err
	}
	first := func() client.Client { return w.clients["gb"].client }

	for range 5 {
		now = now.Add(time.Second)
		if err := read(); err != nil {
			t.Fatalf("a 404 is no copy, not an error: %v", err)
		}
	}
	if got := secretReads.Load(); got != 1 {
		t.Fatalf("5 reads of a copy within 30 s read the Secret %d times, want 1", got)
	}
	if requests.Load() < 5 {
		t.Fatalf("the worker saw %d requests, want 5 or more", requests.Load())
	}
	c1 := first()

	// Due again, same kubeconfig: read, and the client is kept.
	now = now.Add(30 * time.Second)
	_ = read()
	if got := secretReads.Load(); got != 2 || first() != c1 {
		t.Fatalf("after 30 s: %d Secret reads (want 2), same client %v (want true)", got, first() == c1)
	}

	// Rotated: not seen before Recheck while the worker accepts the old one ...
	secret.Data[kueue.MultiKueueConfigSecretKey] = kubeconfigFor(url, "second")
	if err := secrets.Update(ctx, secret); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	_ = read()
	if got := secretReads.Load(); got != 2 || first() != c1 {
		t.Fatalf("1 s after a check: %d Secret reads (want 2), same client %v (want true)", got, first() == c1)
	}
	// ... and at once when it refuses it.
	code.Store(403)
	if err := read(); !apierrors.IsForbidden(err) {
		t.Fatalf("a refused read: %v, want Forbidden", err)
	}
	code.Store(404)
	if err := read(); err != nil {
		t.Fatal(err)
	}
	if got := secretReads.Load(); got != 3 || first() == c1 {
		t.Fatalf("after a refusal: %d Secret reads (want 3), new client %v (want true)", got, first() != c1)
	}

	// A MultiKueueCluster pointing elsewhere is followed at once.
	mkc.Spec.ClusterSource.KubeConfig.Location = "gb-kubeconfig-2"
	if err := clusters.Update(ctx, mkc); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Reader(ctx, "gb"); err == nil || !apierrors.IsNotFound(err) {
		t.Fatalf("a MultiKueueCluster naming a missing Secret: %v, want its NotFound", err)
	}
	if got := secretReads.Load(); got != 4 {
		t.Fatalf("a new location: %d Secret reads, want 4", got)
	}
}
