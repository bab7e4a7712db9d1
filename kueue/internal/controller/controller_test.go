package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"greensched.io/kueue/internal/dispatchclient"
)

// service stands in for `greensched dispatch`: it records each request and answers `answer`.
type service struct {
	answer   dispatchclient.Answer
	status   int
	requests []map[string]any
}

func (s *service) start(t *testing.T) *dispatchclient.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("the request is not JSON: %v", err)
		}
		s.requests = append(s.requests, body)
		if s.status != 0 && s.status != http.StatusOK {
			w.WriteHeader(s.status)
			_, _ = w.Write([]byte(`{"error":"no cluster it may go to can be read"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(s.answer)
	}))
	t.Cleanup(srv.Close)
	return dispatchclient.New(srv.URL)
}

// An applied status patch, as the controllers sent it.
type applied struct {
	manager string
	force   bool
	status  map[string]any
}

var applies []applied

// apply stands in for the API server's server-side apply of the status fields the controllers
// own (Kueue's types carry no schema for the fake client's own apply): nominatedClusterNames
// is set; admission check states merge by name and conditions by type, as their list-map
// markers say; everything else stays. As the API server does, a metadata.resourceVersion in
// the apply is a precondition: another one fails the apply with a conflict (409).
func apply(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration,
	opts ...client.SubResourceApplyOption) error {
	var o client.SubResourceApplyOptions
	o.ApplyOpts(opts)
	data, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var cfg struct {
		Kind     string            `json:"kind"`
		Metadata metav1.ObjectMeta `json:"metadata"`
		Status   map[string]any    `json:"status"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return err
	}
	manager := ""
	if o.FieldManager != "" {
		manager = o.FieldManager
	}
	applies = append(applies, applied{manager, o.Force != nil && *o.Force, cfg.Status})
	key := types.NamespacedName{Namespace: cfg.Metadata.Namespace, Name: cfg.Metadata.Name}
	switch cfg.Kind {
	case "Workload":
		var wl kueue.Workload
		if err := c.Get(ctx, key, &wl); err != nil {
			return err
		}
		if rv := cfg.Metadata.ResourceVersion; rv != "" && rv != wl.ResourceVersion {
			return apierrors.NewConflict(kueue.GroupVersion.WithResource("workloads").GroupResource(), key.Name,
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
		}
		var st kueue.WorkloadStatus
		raw, _ := json.Marshal(cfg.Status)
		_ = json.Unmarshal(raw, &st)
		if _, ok := cfg.Status["nominatedClusterNames"]; ok {
			wl.Status.NominatedClusterNames = st.NominatedClusterNames
		}
		for _, s := range st.AdmissionChecks {
			found := false
			for i := range wl.Status.AdmissionChecks {
				if wl.Status.AdmissionChecks[i].Name == s.Name {
					wl.Status.AdmissionChecks[i] = s
					found = true
				}
			}
			if !found {
				wl.Status.AdmissionChecks = append(wl.Status.AdmissionChecks, s)
			}
		}
		return c.Status().Update(ctx, &wl)
	case "AdmissionCheck":
		var ac kueue.AdmissionCheck
		if err := c.Get(ctx, key, &ac); err != nil {
			return err
		}
		var st kueue.AdmissionCheckStatus
		raw, _ := json.Marshal(cfg.Status)
		_ = json.Unmarshal(raw, &st)
		for _, cond := range st.Conditions {
			apimeta.SetStatusCondition(&ac.Status.Conditions, cond)
		}
		return c.Status().Update(ctx, &ac)
	}
	return nil
}

func setup(t *testing.T) client.Client {
	return setupWith(t, interceptor.Funcs{})
}

// setupWith is setup with more interceptors (the status apply stand-in is always there).
func setupWith(t *testing.T, funcs interceptor.Funcs) client.Client {
	funcs.SubResourceApply = apply
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	mk := &kueue.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: "multikueue"},
		Spec: kueue.AdmissionCheckSpec{ControllerName: kueue.MultiKueueControllerName,
			Parameters: &kueue.AdmissionCheckParametersReference{APIGroup: kueue.GroupVersion.Group,
				Kind: "MultiKueueConfig", Name: "workers"}},
	}
	green := &kueue.AdmissionCheck{
		ObjectMeta: metav1.ObjectMeta{Name: "green-window"},
		Spec:       kueue.AdmissionCheckSpec{ControllerName: GreenWindowController},
	}
	cfg := &kueue.MultiKueueConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "workers"},
		Spec:       kueue.MultiKueueConfigSpec{Clusters: []string{"gb", "sg"}},
	}
	// Kueue applies the status under kueue-admission: the reservation and its condition.
	owned := `{"f:status":{"f:admission":{".":{},"f:clusterQueue":{}},"f:conditions":{".":{},` +
		`"k:{\"type\":\"QuotaReserved\"}":{".":{},"f:status":{},"f:type":{}}}}}`
	wl := &kueue.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "team-a",
			Annotations: map[string]string{"greensched.io/slack": "4h"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: KueueAdmissionFieldManager,
				Operation: metav1.ManagedFieldsOperationApply, APIVersion: "kueue.x-k8s.io/v1beta2",
				Subresource: "status", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(owned)}}}},
		Spec: kueue.WorkloadSpec{QueueName: "gpu"},
		Status: kueue.WorkloadStatus{
			Admission: &kueue.Admission{ClusterQueue: "gpu"},
			Conditions: []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue,
				Reason: "QuotaReserved", LastTransitionTime: metav1.Now()},
				{Type: "Evicted", Status: metav1.ConditionFalse, Reason: "None", LastTransitionTime: metav1.Now()}},
			AdmissionChecks: []kueue.AdmissionCheckState{
				{Name: "multikueue", State: kueue.CheckStatePending, LastTransitionTime: metav1.Now()},
				{Name: "green-window", State: kueue.CheckStatePending, LastTransitionTime: metav1.Now()},
			},
		},
	}
	applies = nil
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(mk, green, cfg, wl).
		WithStatusSubresource(&kueue.Workload{}, &kueue.AdmissionCheck{}).
		WithInterceptorFuncs(funcs).WithReturnManagedFields().Build()
}

var trainKey = types.NamespacedName{Namespace: "team-a", Name: "train"}

func get(t *testing.T, c client.Client) *kueue.Workload {
	var wl kueue.Workload
	if err := c.Get(context.Background(), trainKey, &wl); err != nil {
		t.Fatal(err)
	}
	return &wl
}

func checkState(wl *kueue.Workload, name string) *kueue.AdmissionCheckState {
	for i := range wl.Status.AdmissionChecks {
		if string(wl.Status.AdmissionChecks[i].Name) == name {
			return &wl.Status.AdmissionChecks[i]
		}
	}
	return nil
}

// The dispatcher waits for the green window; once it is Ready it nominates the service's
// choice among the MultiKueueConfig's clusters, once, on the live Workload (one read), and then
// stamps it with its time: the stamp's write does not delay the nomination.
func TestDispatcherNominatesAfterTheGreenWindow(t *testing.T) {
	liveReads := 0
	stampedAfter := false
	c := setupWith(t, interceptor.Funcs{Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey,
		obj client.Object, opts ...client.GetOption) error {
		if _, live := obj.(*unstructured.Unstructured); live {
			liveReads++
		}
		return cl.Get(ctx, key, obj, opts...)
	}, Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch,
		opts ...client.PatchOption) error {
		if body, _ := patch.Data(obj); strings.Contains(string(body), NominatedAtAnnotation) {
			var wl kueue.Workload
			if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), &wl); err != nil {
				return err
			}
			stampedAfter = len(wl.Status.NominatedClusterNames) > 0
		}
		return cl.Patch(ctx, obj, patch, opts...)
	}})
	svc := &service{answer: dispatchclient.Answer{Clusters: []string{"gb"}, Mode: "carbon",
		Reason: "moves to gb: 142 g expected", EarliestStart: "2026-01-01T00:00:00Z"}}
	client := svc.start(t)
	d := &Dispatcher{Client: c, Service: client}
	g := &GreenWindow{Client: c, Service: client}
	ctx := context.Background()
	req := ctrl.Request{NamespacedName: trainKey}

	if _, err := d.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if n := get(t, c).Status.NominatedClusterNames; len(n) != 0 || len(svc.requests) != 0 {
		t.Fatalf("nominated %v (%d requests) before the green window was Ready", n, len(svc.requests))
	}
	if _, err := g.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	wl := get(t, c)
	if s := checkState(wl, "green-window"); s == nil || s.State != kueue.CheckStateReady ||
		!strings.Contains(s.Message, "moves to gb") {
		t.Fatalf("green-window check: %+v", s)
	}
	if _, err := d.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	wl = get(t, c)
	if got := wl.Status.NominatedClusterNames; len(got) != 1 || got[0] != "gb" {
		t.Fatalf("nominatedClusterNames %v, want [gb] (%d requests; status %+v)", got, len(svc.requests), wl.Status)
	}
	if _, err := time.Parse(time.RFC3339, wl.Annotations[NominatedAtAnnotation]); err != nil || liveReads != 1 {
		t.Fatalf("nominated-at %q, %d reads of the live Workload (want a stamp and one)",
			wl.Annotations[NominatedAtAnnotation], liveReads)
	}
	if !stampedAfter {
		t.Fatal("stamped before the nomination was written")
	}
	a := applies[len(applies)-1]
	if a.manager != KueueAdmissionFieldManager || !a.force {
		t.Fatalf("nominatedClusterNames applied by %q (force %v), want %q", a.manager, a.force,
			KueueAdmissionFieldManager)
	}
	// The apply re-sends what kueue-admission owns (else the API server drops the quota
	// reservation): the admission and the QuotaReserved condition, not the Evicted one.
	if adm, _ := a.status["admission"].(map[string]any); adm["clusterQueue"] != "gpu" {
		t.Fatalf("the nomination apply dropped status.admission: %v", a.status)
	}
	conds, _ := a.status["conditions"].([]any)
	if len(conds) != 1 || conds[0].(map[string]any)["type"] != kueue.WorkloadQuotaReserved {
		t.Fatalf("the nomination apply carries conditions %v, want only QuotaReserved", conds)
	}
	if a := applies[0]; a.manager != GreenWindowFieldManager {
		t.Fatalf("the green-window state applied by %q", a.manager)
	} else if checks, _ := a.status["admissionChecks"].([]any); len(checks) != 1 {
		t.Fatalf("the green-window apply carries %d check states, want only its own", len(checks))
	}
	last := svc.requests[len(svc.requests)-1]
	if clusters, _ := last["clusters"].([]any); len(clusters) != 2 || clusters[0] != "gb" || clusters[1] != "sg" {
		t.Fatalf("the service was asked about clusters %v, want the MultiKueueConfig's [gb sg]", last["clusters"])
	}
	workload, _ := last["workload"].(map[string]any)
	metadata, _ := workload["metadata"].(map[string]any)
	if metadata["name"] != "train" || metadata["namespace"] != "team-a" {
		t.Fatalf("the service got workload metadata %v", metadata)
	}
	// Nominated: asked no more.
	asked := len(svc.requests)
	if _, err := d.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if len(svc.requests) != asked {
		t.Fatalf("asked the service again after nominating")
	}
}

// A later start keeps the check Pending with the reason, and comes back for it.
func TestGreenWindowWaitsForItsStart(t *testing.T) {
	c := setup(t)
	svc := &service{answer: dispatchclient.Answer{Clusters: []string{"gb"}, StartAfterS: 7200,
		EarliestStart: "2026-01-01T02:00:00Z", Reason: "deferred 7200 s"}}
	g := &GreenWindow{Client: c, Service: svc.start(t), MaxWait: time.Hour}
	res, err := g.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != time.Hour {
		t.Fatalf("requeue after %v, want the 1 h cap", res.RequeueAfter)
	}
	s := checkState(get(t, c), "green-window")
	if s == nil || s.State != kueue.CheckStatePending ||
		!strings.Contains(s.Message, "waiting for its green window at 2026-01-01T02:00:00Z") {
		t.Fatalf("green-window check: %+v", s)
	}
	// The window opens: Ready.
	svc.answer.StartAfterS = 0
	if _, err := g.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey}); err != nil {
		t.Fatal(err)
	}
	if s := checkState(get(t, c), "green-window"); s.State != kueue.CheckStateReady {
		t.Fatalf("green-window check %s after the window opened", s.State)
	}
}

// A window that opens within the second is waited for to the millisecond the service gives
// (start_after_ms), not the whole seconds of start_after_s; a service without it is waited
// for start_after_s.
func TestGreenWindowWaitsToTheMillisecond(t *testing.T) {
	c := setup(t)
	ms := int64(1100)
	svc := &service{answer: dispatchclient.Answer{Clusters: []string{"gb"}, StartAfterS: 2, StartAfterMS: &ms,
		EarliestStart: "2026-01-01T02:00:00Z", Reason: "deferred"}}
	g := &GreenWindow{Client: c, Service: svc.start(t), MaxWait: time.Hour}
	res, err := g.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey})
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 1100*time.Millisecond {
		t.Fatalf("requeue after %v, want 1.1 s", res.RequeueAfter)
	}
	svc.answer.StartAfterMS = nil
	if res, err = g.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey}); err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != 2*time.Second {
		t.Fatalf("requeue after %v without start_after_ms, want start_after_s (2 s)", res.RequeueAfter)
	}
	zero := int64(0)
	svc.answer.StartAfterMS = &zero // the service's clock a little ahead: asked again soon
	if res, err = g.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey}); err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter != minWait {
		t.Fatalf("requeue after %v, want %v", res.RequeueAfter, minWait)
	}
}

// With the service down nothing changes and the Workload is tried again (an error: the
// controller's backoff, serviceRetry, starts at 50 ms).
func TestServiceDownChangesNothing(t *testing.T) {
	c := setup(t)
	svc := &service{status: http.StatusServiceUnavailable}
	g := &GreenWindow{Client: c, Service: svc.start(t)}
	if _, err := g.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey}); err == nil {
		t.Fatal("no error with the service down: the Workload would not be tried again")
	}
	if r := serviceRetry(); r.When(ctrl.Request{}) != 50*time.Millisecond ||
		r.When(ctrl.Request{}) != 100*time.Millisecond {
		t.Fatal("serviceRetry does not start at 50 ms, doubling")
	}
	if s := checkState(get(t, c), "green-window"); s.State != kueue.CheckStatePending {
		t.Fatalf("green-window check %s with the service down", s.State)
	}
}

func TestActiveChecksMarksOursActive(t *testing.T) {
	c := setup(t)
	a := &ActiveChecks{Client: c}
	for _, name := range []string{"green-window", "multikueue"} {
		if _, err := a.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	var ours, theirs kueue.AdmissionCheck
	_ = c.Get(context.Background(), types.NamespacedName{Name: "green-window"}, &ours)
	_ = c.Get(context.Background(), types.NamespacedName{Name: "multikueue"}, &theirs)
	if !apimeta.IsStatusConditionTrue(ours.Status.Conditions, kueue.AdmissionCheckActive) {
		t.Fatalf("green-window not Active: %+v", ours.Status.Conditions)
	}
	if len(theirs.Status.Conditions) != 0 {
		t.Fatalf("touched MultiKueue's check: %+v", theirs.Status.Conditions)
	}
}

// A nominated Workload is never moved; when MultiKueue reaches its worker again after losing
// it, the Workload is nudged once (ResyncAnnotation) so that MultiKueue resumes the copy.
func TestDispatcherResyncsOnceWhenItsWorkerReturns(t *testing.T) {
	c := setup(t)
	ctx := context.Background()
	svc := &service{answer: dispatchclient.Answer{Clusters: []string{"sg"}}}
	d := &Dispatcher{Client: c, Service: svc.start(t)}
	wl := get(t, c)
	wl.Status.NominatedClusterNames = []string{"gb"}
	if err := c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	gb := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "gb"},
		Status: kueue.MultiKueueClusterStatus{Conditions: []metav1.Condition{{
			Type: kueue.MultiKueueClusterActive, Status: metav1.ConditionFalse, Reason: "ClientConnectionFailed",
			LastTransitionTime: metav1.NewTime(time.Now().Add(30 * time.Second))}}}}
	if err := c.Create(ctx, gb); err != nil {
		t.Fatal(err)
	}
	req := ctrl.Request{NamespacedName: trainKey}
	if _, err := d.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c); got.Annotations[ResyncAnnotation] != "" || len(svc.requests) != 0 ||
		got.Status.NominatedClusterNames[0] != "gb" {
		t.Fatalf("while gb is away: annotations %v, %d requests, nominated %v", got.Annotations,
			len(svc.requests), got.Status.NominatedClusterNames)
	}
	back := time.Now().Add(time.Minute).UTC().Truncate(time.Second)
	gb.Status.Conditions[0].Status, gb.Status.Conditions[0].Reason = metav1.ConditionTrue, "Active"
	gb.Status.Conditions[0].LastTransitionTime = metav1.NewTime(back)
	if err := c.Update(ctx, gb); err != nil {
		t.Fatal(err)
	}
	if reqs := d.waitingOn(ctx, gb); len(reqs) != 1 || reqs[0].NamespacedName != trainKey {
		t.Fatalf("a change of gb enqueues %v, want the Workload nominated there", reqs)
	}
	for i := 0; i < 2; i++ {
		if _, err := d.Reconcile(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	got := get(t, c)
	if got.Annotations[ResyncAnnotation] != back.Format(time.RFC3339) || len(svc.requests) != 0 ||
		got.Status.NominatedClusterNames[0] != "gb" {
		t.Fatalf("after gb is back: annotations %v, %d requests, nominated %v", got.Annotations,
			len(svc.requests), got.Status.NominatedClusterNames)
	}
}

// An answer that starts later (a new decision: the first cluster went out of reach) is
// nominated then, not now.
func TestDispatcherWaitsForALaterStart(t *testing.T) {
	c := setup(t)
	ctx := context.Background()
	svc := &service{answer: dispatchclient.Answer{Clusters: []string{"gb"}, Mode: "carbon"}}
	client := svc.start(t)
	req := ctrl.Request{NamespacedName: trainKey}
	if _, err := (&GreenWindow{Client: c, Service: client}).Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	svc.answer = dispatchclient.Answer{Clusters: []string{"sg"}, Mode: "carbon", StartAfterS: 30}
	res, err := (&Dispatcher{Client: c, Service: client}).Reconcile(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if n := get(t, c).Status.NominatedClusterNames; len(n) != 0 || res.RequeueAfter != 30*time.Second {
		t.Fatalf("nominated %v, requeue after %s: want nothing now and a requeue after 30 s", n, res.RequeueAfter)
	}
}
