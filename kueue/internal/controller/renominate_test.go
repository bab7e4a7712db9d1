package controller

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"greensched.io/kueue/internal/dispatchclient"
)

// workers stands in for the worker clusters, each a fake client.
type workers map[string]client.Client

func (w workers) Reader(_ context.Context, cluster string) (client.Reader, error) {
	if c, ok := w[cluster]; ok {
		return c, nil
	}
	return nil, fmt.Errorf("worker %s cannot be reached", cluster)
}

func worker(t *testing.T, objs ...client.Object) client.Client {
	return workerWith(t, interceptor.Funcs{}, objs...)
}

// workerWith is worker, its calls going through `funcs`.
func workerWith(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) client.Client {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

// remoteWorkload is the Workload's copy in a worker, holding quota there or not.
func remoteWorkload(holding bool) *kueue.Workload {
	wl := &kueue.Workload{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "team-a"}}
	if holding {
		wl.Status.Conditions = []metav1.Condition{{Type: kueue.WorkloadQuotaReserved, Status: metav1.ConditionTrue,
			Reason: "QuotaReserved", LastTransitionTime: metav1.Now()}}
	}
	return wl
}

// t0 is when the scene starts; the dispatcher's clock is moved by hand.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type scene struct {
	t    *testing.T
	c    client.Client
	svc  *service
	d    *Dispatcher
	now  time.Time
	recs *record.FakeRecorder
	// after is the later start the renomination waited for (its annotations end with it).
	after time.Time
}

// newScene: the Workload holds quota, its green window is Ready, it was nominated to gb at
// t0 (gb and sg reached by MultiKueue since long before), and the service would now answer sg.
func newScene(t *testing.T, w Workers) *scene {
	s := &scene{t: t, c: setup(t), now: t0, recs: record.NewFakeRecorder(100),
		svc: &service{answer: dispatchclient.Answer{Clusters: []string{"sg"}, Mode: "carbon", Renominated: true}}}
	s.d = &Dispatcher{Client: s.c, Service: s.svc.start(t), Recorder: s.recs, Workers: w,
		WorkerLostAfter: 2 * time.Minute, AdmitTimeout: 5 * time.Minute,
		Now: func() time.Time { return s.now }}
	ctx := context.Background()
	for _, name := range []string{"gb", "sg"} {
		mkc := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: kueue.MultiKueueClusterStatus{Conditions: []metav1.Condition{{Type: kueue.MultiKueueClusterActive,
				Status: metav1.ConditionTrue, Reason: "Active", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}}}
		if err := s.c.Create(ctx, mkc); err != nil {
			t.Fatal(err)
		}
	}
	wl := get(t, s.c)
	wl.Annotations[NominatedAtAnnotation] = stamp(t0)
	if err := s.c.Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	wl = get(t, s.c)
	checkState(wl, "green-window").State = kueue.CheckStateReady
	wl.Status.NominatedClusterNames = []string{"gb"}
	// It reserved quota before the scene's nomination (t0), on the scene's clock.
	apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved).LastTransitionTime =
		metav1.NewTime(t0.Add(-time.Minute))
	if err := s.c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	return s
}

// reconcile runs the dispatcher up to n times (a step a reconcile), at the scene's time.
func (s *scene) reconcile(n int) (ctrl.Result, error) {
	var res ctrl.Result
	var err error
	for i := 0; i < n; i++ {
		res, err = s.d.Reconcile(context.Background(), ctrl.Request{NamespacedName: trainKey})
		if err != nil {
			return res, err
		}
	}
	return res, err
}

func (s *scene) setActive(name string, active bool, since time.Time) {
	var mkc kueue.MultiKueueCluster
	ctx := context.Background()
	if err := s.c.Get(ctx, client.ObjectKey{Name: name}, &mkc); err != nil {
		s.t.Fatal(err)
	}
	st := metav1.ConditionFalse
	if active {
		st = metav1.ConditionTrue
	}
	mkc.Status.Conditions[0].Status, mkc.Status.Conditions[0].LastTransitionTime = st, metav1.NewTime(since)
	if err := s.c.Update(ctx, &mkc); err != nil {
		s.t.Fatal(err)
	}
}

func (s *scene) nominated() []string { return get(s.t, s.c).Status.NominatedClusterNames }

func counter(reason string) float64 {
	var m dto.Metric
	_ = renominations.WithLabelValues(reason).Write(&m)
	return m.GetCounter().GetValue()
}

func (s *scene) events() string {
	var out []string
	for {
		select {
		case e := <-s.recs.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

// checkRenominated: the last request asked again without gb for `reason`, sg is nominated,
// and the annotation, Event and counter say so.
func (s *scene) checkRenominated(reason string, before float64) {
	t := s.t
	if got := s.nominated(); !slices.Equal(got, []string{"sg"}) {
		t.Fatalf("nominated %v after %s, want [sg]", got, reason)
	}
	last := s.svc.requests[len(s.svc.requests)-1]
	if ex, _ := last["exclude"].([]any); len(ex) != 1 || ex[0] != "gb" {
		t.Fatalf("the service was asked with exclude %v, want [gb]", last["exclude"])
	}
	rn, _ := last["renominate"].(map[string]any)
	if rn["reason"] != reason || rn["from"] != "gb" {
		t.Fatalf("the service was asked with renominate %v, want %s from gb", last["renominate"], reason)
	}
	if cl, _ := last["clusters"].([]any); slices.Contains(cl, any("gb")) {
		t.Fatalf("gb offered again: %v", cl)
	}
	wl := get(t, s.c)
	want := fmt.Sprintf("%s from gb at %s to sg", reason, stamp(s.now))
	if !s.after.IsZero() {
		want += " after " + stamp(s.after)
	}
	if got := wl.Annotations[RenominatedAnnotation]; got != want {
		t.Fatalf("%s = %q, want %q", RenominatedAnnotation, got, want)
	}
	if _, ok := wl.Annotations[RenominatingAnnotation]; ok {
		t.Fatalf("%s left behind", RenominatingAnnotation)
	}
	if wl.Annotations[NominatedAtAnnotation] != stamp(s.now) {
		t.Fatalf("the new nomination's time %q", wl.Annotations[NominatedAtAnnotation])
	}
	if got := counter(reason); got != before+1 {
		t.Fatalf("greensched_kueue_renominations_total{reason=%q} = %v, want %v", reason, got, before+1)
	}
	if ev := s.events(); !strings.Contains(ev, "GreenschedRenominated nominated [sg] instead of [gb] ("+reason+")") {
		t.Fatalf("no GreenschedRenominated Event: %s", ev)
	}
}

// A nominated worker that MultiKueue has lost for --worker-lost-after: the Workload, admitted
// nowhere, is nominated again without it; not before.
func TestRenominatesWhenItsWorkerIsLost(t *testing.T) {
	s := newScene(t, nil) // a lost worker cannot be read anyway
	before := counter(ReasonWorkerLost)
	s.setActive("gb", false, t0.Add(time.Minute))
	s.now = t0.Add(2*time.Minute + 59*time.Second)
	res, err := s.reconcile(3)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.nominated(); !slices.Equal(got, []string{"gb"}) || len(s.svc.requests) != 0 {
		t.Fatalf("before the 2 minutes: nominated %v, %d requests", got, len(s.svc.requests))
	}
	if res.RequeueAfter != time.Second {
		t.Fatalf("comes back after %v, want when the 2 minutes are up (1 s)", res.RequeueAfter)
	}
	s.now = t0.Add(3 * time.Minute)
	if _, err := s.reconcile(3); err != nil { // start, revoke, nominate anew
		t.Fatal(err)
	}
	s.checkRenominated(ReasonWorkerLost, before)
	if len(s.svc.requests) != 1 {
		t.Fatalf("%d requests, want one", len(s.svc.requests))
	}
}

// The service sends it elsewhere, but later (its green window there opens in 30 s): the old
// nomination is revoked now and the new one is made at that start, not before; the
// re-nomination is not put off and asked again.
func TestRenominationToALaterStartWaitsForIt(t *testing.T) {
	s := newScene(t, nil)
	before := counter(ReasonWorkerLost)
	ms := int64(29_500)
	s.svc.answer.StartAfterS, s.svc.answer.StartAfterMS = 30, &ms
	s.setActive("gb", false, t0)
	s.now = t0.Add(3 * time.Minute)
	res, err := s.reconcile(3) // start, revoke, wait
	if err != nil {
		t.Fatal(err)
	}
	wl := get(t, s.c)
	want := "worker-lost from gb at " + stamp(s.now) + " to sg after " + stamp(s.now.Add(30*time.Second))
	if got := wl.Annotations[RenominatingAnnotation]; got != want || len(wl.Status.NominatedClusterNames) != 0 {
		t.Fatalf("annotation %q, nominated %v: want %q, nothing", got, wl.Status.NominatedClusterNames, want)
	}
	if res.RequeueAfter != 30*time.Second {
		t.Fatalf("requeue after %v, want 30 s", res.RequeueAfter)
	}
	s.now = s.now.Add(30 * time.Second)
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	s.after = s.now
	s.checkRenominated(ReasonWorkerLost, before)
	if len(s.svc.requests) != 1 {
		t.Fatalf("%d requests, want one", len(s.svc.requests))
	}
}

// No worker admits it within --admit-timeout: nominated again, but only once the old copy is
// gone from gb (never two copies); not before the timeout.
func TestRenominatesAfterTheAdmitTimeout(t *testing.T) {
	gb := worker(t, remoteWorkload(false))
	s := newScene(t, workers{"gb": gb, "sg": worker(t)})
	before := counter(ReasonAdmitTimeout)
	s.now = t0.Add(4 * time.Minute)
	res, err := s.reconcile(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.svc.requests) != 0 || res.RequeueAfter != time.Minute {
		t.Fatalf("before 5 minutes: %d requests, requeue after %v (want 1 min)", len(s.svc.requests), res.RequeueAfter)
	}
	// The timeout is a deadline: requeued at the queue's normal priority, whatever priority
	// the Workload was first reconciled at (a new leader's first list is low).
	if res.Priority == nil || *res.Priority != 0 {
		t.Fatalf("requeued at priority %v, want 0", res.Priority)
	}
	s.now = t0.Add(5 * time.Minute)
	if _, err := s.reconcile(1); err != nil { // start and revoke, in one turn
		t.Fatal(err)
	}
	if got := s.nominated(); len(got) != 0 {
		t.Fatalf("nominated %v after the revoke, want nothing", got)
	}
	// The old copy is still in gb: no new nomination yet, however often it is looked at.
	res, err = s.reconcile(3)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.nominated(); len(got) != 0 || res.RequeueAfter != copyPoll {
		t.Fatalf("nominated %v (requeue %v) while the old copy is still in gb", got, res.RequeueAfter)
	}
	// MultiKueue deletes it: nominated anew.
	if err := gb.Delete(context.Background(), remoteWorkload(false)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	s.checkRenominated(ReasonAdmitTimeout, before)
}

// A copy that holds quota in gb is being admitted there: it is not moved for admit-timeout;

// A Workload that holds quota but is being evicted (Evicted True: Kueue drops the reservation
// only once its Job has stopped) is neither asked about nor nominated.
func TestBeingEvictedIsNotNominated(t *testing.T) {
	s := newScene(t, nil)
	ctx := context.Background()
	wl := get(t, s.c)
	wl.Status.NominatedClusterNames = nil
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted,
		Status: metav1.ConditionTrue, Reason: "AdmissionCheck"})
	if err := s.c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(2); err != nil {
		t.Fatal(err)
	}
	if n := s.nominated(); len(n) != 0 || len(s.svc.requests) != 0 {
		t.Fatalf("nominated %v after %d requests while being evicted", n, len(s.svc.requests))
	}
	// The eviction is over and it holds quota again (Evicted False): nominated.
	wl = get(t, s.c)
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted,
		Status: metav1.ConditionFalse, Reason: "QuotaReserved"})
	if err := s.c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	if n := s.nominated(); !slices.Equal(n, []string{"sg"}) {
		t.Fatalf("nominated %v once the eviction is over, want [sg]", n)
	}
}

// An old copy that MultiKueue deactivated in its worker (the manager's Workload was evicted) is
// kept by MultiKueue, never deleted, while the Workload holds quota: the dispatcher puts the
// Workload back in the queue (Retry), so that MultiKueue deletes it, rather than wait forever.
func TestDeactivatedOldCopyIsClearedByARequeue(t *testing.T) {
	stale := remoteWorkload(false)
	stale.Spec.Active = ptr(false)
	gb := worker(t, stale)
	s := newScene(t, workers{"gb": gb, "sg": worker(t)})
	s.now = t0.Add(5 * time.Minute)
	if _, err := s.reconcile(3); err != nil { // start, revoke, Retry
		t.Fatal(err)
	}
	wl := get(t, s.c)
	if st := checkState(wl, "multikueue"); st.State != kueue.CheckStateRetry || !strings.Contains(st.Message, "deactivated") {
		t.Fatalf("MultiKueue check %+v, want Retry for the deactivated copy in gb", st)
	}
	// Under Kueue's manager, re-sending what it owns: an apply without them would drop the
	// reservation.
	a := applies[len(applies)-1]
	if a.manager != KueueAdmissionFieldManager || a.status["admission"] == nil ||
		!strings.Contains(fmt.Sprint(a.status["conditions"]), "QuotaReserved") {
		t.Fatalf("the Retry applied by %q with %v: want kueue-admission re-sending admission and QuotaReserved",
			a.manager, a.status)
	}
	if len(wl.Status.NominatedClusterNames) != 0 {
		t.Fatalf("nominated %v while the deactivated copy is in gb", wl.Status.NominatedClusterNames)
	}
}

// and neither is a Workload admitted on gb (status.clusterName).
func TestAdmittedIsNotRenominatedForAdmitTimeout(t *testing.T) {
	s := newScene(t, workers{"gb": worker(t, remoteWorkload(true)), "sg": worker(t)})
	s.now = t0.Add(time.Hour)
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	if got := s.nominated(); !slices.Equal(got, []string{"gb"}) || len(s.svc.requests) != 0 {
		t.Fatalf("a copy holding quota in gb: nominated %v, %d requests", got, len(s.svc.requests))
	}
	wl := get(t, s.c)
	gb := "gb"
	wl.Status.ClusterName, wl.Status.NominatedClusterNames = &gb, nil
	if err := s.c.Status().Update(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	s.d.Workers = workers{"gb": worker(t, remoteWorkload(false)), "sg": worker(t)}
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	wl = get(t, s.c)
	if len(wl.Status.NominatedClusterNames) != 0 || len(s.svc.requests) != 0 ||
		wl.Annotations[RenominatingAnnotation] != "" {
		t.Fatalf("admitted on gb: nominated %v, %d requests, annotations %v", wl.Status.NominatedClusterNames,
			len(s.svc.requests), wl.Annotations)
	}
}

// Admitted on gb while its re-nomination was being decided (after its copy there was read):
// the decision is written only on the Workload it was made for (its resourceVersion), so the
// admission wins and nothing moves.
func TestARenominationDecidedOnAStaleReadIsDropped(t *testing.T) {
	var s *scene
	admit := func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object,
		opts ...client.GetOption) error {
		if wl := get(t, s.c); wl.Status.ClusterName == nil {
			gb := "gb"
			wl.Status.ClusterName = &gb
			if err := s.c.Status().Update(ctx, wl); err != nil {
				return err
			}
		}
		return cl.Get(ctx, key, obj, opts...)
	}
	s = newScene(t, workers{"gb": workerWith(t, interceptor.Funcs{Get: admit}, remoteWorkload(false)),
		"sg": worker(t)})
	s.now = t0.Add(5 * time.Minute)
	res, err := s.reconcile(1)
	if err != nil {
		t.Fatal(err)
	}
	wl := get(t, s.c)
	if len(s.svc.requests) != 1 || wl.Annotations[RenominatingAnnotation] != "" || res.RequeueAfter != conflictRetry {
		t.Fatalf("decided on a stale read: %d requests (want 1), renominating %q (want none), requeue after %v (want %v)",
			len(s.svc.requests), wl.Annotations[RenominatingAnnotation], res.RequeueAfter, conflictRetry)
	}
	if _, err := s.reconcile(2); err != nil {
		t.Fatal(err)
	}
	if wl = get(t, s.c); !slices.Equal(wl.Status.NominatedClusterNames, []string{"gb"}) ||
		wl.Annotations[RenominatingAnnotation] != "" || len(s.svc.requests) != 1 {
		t.Fatalf("admitted on gb: nominated %v, renominating %q, %d requests", wl.Status.NominatedClusterNames,
			wl.Annotations[RenominatingAnnotation], len(s.svc.requests))
	}
}

// A copy admitted in gb after the revoke: the old nomination is given back, nothing else is
// nominated.
func TestAdmittedMeanwhileIsKept(t *testing.T) {
	gb := worker(t, remoteWorkload(false))
	s := newScene(t, workers{"gb": gb, "sg": worker(t)})
	s.now = t0.Add(5 * time.Minute)
	if _, err := s.reconcile(2); err != nil { // start, revoke
		t.Fatal(err)
	}
	copy := remoteWorkload(false)
	if err := gb.Get(context.Background(), trainKey, copy); err != nil {
		t.Fatal(err)
	}
	copy.Status.Conditions = remoteWorkload(true).Status.Conditions
	if err := gb.Update(context.Background(), copy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	wl := get(t, s.c)
	if !slices.Equal(wl.Status.NominatedClusterNames, []string{"gb"}) || wl.Annotations[RenominatingAnnotation] != "" ||
		wl.Annotations[RenominatedAnnotation] != "" {
		t.Fatalf("admitted in gb meanwhile: nominated %v, annotations %v", wl.Status.NominatedClusterNames, wl.Annotations)
	}
}

// A worker that put the Workload back in the queue (its Kueue evicted the admitted copy, e.g.
// pods not ready within its waitForPodsReady timeout; MultiKueue's check Retry; Kueue requeues
// it) is left: the Workload is nominated among the others, and to it again only when no other
// is reached.
func TestAWorkerThatPutItBackIsLeft(t *testing.T) {
	ctx := context.Background()
	s := newScene(t, nil)
	wl := get(t, s.c)
	name := "gb"
	wl.Status.ClusterName, wl.Status.NominatedClusterNames = &name, nil
	if err := s.c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s.c).Annotations[AdmittedOnAnnotation]; got != "gb" {
		t.Fatalf("%s = %q, want gb", AdmittedOnAnnotation, got)
	}
	requeued := func() {
		t.Helper()
		wl := get(t, s.c)
		wl.Status.ClusterName, wl.Status.NominatedClusterNames = nil, nil
		checkState(wl, "multikueue").State = kueue.CheckStatePending
		if err := s.c.Status().Update(ctx, wl); err != nil {
			t.Fatal(err)
		}
	}
	requeued()
	asked := len(s.svc.requests)
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	if len(s.svc.requests) != asked+1 {
		t.Fatalf("the service was asked %d times, want once", len(s.svc.requests)-asked)
	}
	if cl, _ := s.svc.requests[asked]["clusters"].([]any); !slices.Equal(cl, []any{"sg"}) {
		t.Fatalf("offered %v after gb put it back, want [sg]", cl)
	}
	if got := s.nominated(); !slices.Equal(got, []string{"sg"}) {
		t.Fatalf("nominated %v, want [sg]", got)
	}
	// Put back by sg too, with sg no longer reached: gb is all there is.
	wl = get(t, s.c)
	name = "sg"
	wl.Status.ClusterName, wl.Status.NominatedClusterNames = &name, nil
	if err := s.c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	requeued()
	s.setActive("sg", false, s.now)
	s.svc.answer.Clusters = []string{"gb"}
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	if cl, _ := s.svc.requests[len(s.svc.requests)-1]["clusters"].([]any); !slices.Equal(cl, []any{"gb"}) {
		t.Fatalf("offered %v with only gb reached, want [gb]", cl)
	}
}

// A Workload is not offered again to a cluster it left before while another is reached: moved
// from gb to sg, then from sg, it goes to jp, not back to gb; with only gb left, to gb.
func TestRenominationDoesNotGoBackToAClusterItLeft(t *testing.T) {
	s := newScene(t, nil)
	ctx := context.Background()
	mkc := &kueue.MultiKueueCluster{ObjectMeta: metav1.ObjectMeta{Name: "jp"},
		Status: kueue.MultiKueueClusterStatus{Conditions: []metav1.Condition{{Type: kueue.MultiKueueClusterActive,
			Status: metav1.ConditionTrue, Reason: "Active", LastTransitionTime: metav1.NewTime(t0.Add(-time.Hour))}}}}
	if err := s.c.Create(ctx, mkc); err != nil {
		t.Fatal(err)
	}
	var config kueue.MultiKueueConfig
	if err := s.c.Get(ctx, client.ObjectKey{Name: "workers"}, &config); err != nil {
		t.Fatal(err)
	}
	config.Spec.Clusters = append(config.Spec.Clusters, "jp")
	if err := s.c.Update(ctx, &config); err != nil {
		t.Fatal(err)
	}
	s.setActive("gb", false, t0)
	s.now = t0.Add(3 * time.Minute)
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	if got := s.nominated(); !slices.Equal(got, []string{"sg"}) {
		t.Fatalf("nominated %v, want sg", got)
	}
	// sg is lost too; gb is back.
	s.setActive("gb", true, s.now)
	s.setActive("sg", false, s.now)
	s.now = s.now.Add(3 * time.Minute)
	s.svc.answer.Clusters = []string{"jp"}
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	last := s.svc.requests[len(s.svc.requests)-1]
	if cl, _ := last["clusters"].([]any); !slices.Equal(cl, []any{"jp"}) {
		t.Fatalf("offered %v leaving sg, want [jp] (gb was left before)", last["clusters"])
	}
	wl := get(t, s.c)
	if got := wl.Status.NominatedClusterNames; !slices.Equal(got, []string{"jp"}) || wl.Annotations[LeftAnnotation] != "gb,sg" {
		t.Fatalf("nominated %v, %s %q: want [jp], gb,sg", got, LeftAnnotation, wl.Annotations[LeftAnnotation])
	}
	// jp lost as well: gb, left before, is the only one reached, and is offered.
	s.setActive("sg", true, s.now)
	s.setActive("jp", false, s.now)
	s.setActive("sg", false, s.now)
	s.now = s.now.Add(3 * time.Minute)
	s.svc.answer.Clusters = []string{"gb"}
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	last = s.svc.requests[len(s.svc.requests)-1]
	if cl, _ := last["clusters"].([]any); !slices.Equal(cl, []any{"gb"}) {
		t.Fatalf("offered %v with only gb reached, want [gb]", last["clusters"])
	}
	if got := s.nominated(); !slices.Equal(got, []string{"gb"}) {
		t.Fatalf("nominated %v, want gb", got)
	}
}

// While the service cannot answer, the nomination stays as it is and the Workload is tried
// again (an error: the controller's backoff).
func TestRenominationWithTheServiceDownChangesNothing(t *testing.T) {
	s := newScene(t, nil)
	s.svc.status = http.StatusServiceUnavailable
	s.setActive("gb", false, t0)
	s.now = t0.Add(time.Hour)
	if _, err := s.reconcile(1); err == nil {
		t.Fatal("no error with the service down: the Workload would not be tried again")
	}
	wl := get(t, s.c)
	if !slices.Equal(wl.Status.NominatedClusterNames, []string{"gb"}) || wl.Annotations[RenominatingAnnotation] != "" {
		t.Fatalf("with the service down: nominated %v, annotations %v", wl.Status.NominatedClusterNames, wl.Annotations)
	}
	if len(s.svc.requests) != 1 {
		t.Fatalf("%d requests, want 1", len(s.svc.requests))
	}
	// It answers again: moved.
	s.svc.status = 0
	if _, err := s.reconcile(3); err != nil {
		t.Fatal(err)
	}
	if got := s.nominated(); !slices.Equal(got, []string{"sg"}) {
		t.Fatalf("nominated %v once the service answers", got)
	}
}

// Kueue evicts the Workload (drops its quota reservation) between the dispatcher's read of the
// live Workload (a first nomination takes it from its nominated-at patch's reply) and its
// status apply: the apply, which carries the read resourceVersion, fails with a conflict and
// the reservation is not restored.
func TestNominationApplyConflictsWithAnEviction(t *testing.T) {
	evicted := false
	evict := func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object) error {
		if _, live := obj.(*unstructured.Unstructured); !live || evicted {
			return nil
		}
		// The dispatcher has the live Workload; Kueue evicts it now.
		evicted = true
		var wl kueue.Workload
		if err := cl.Get(ctx, key, &wl); err != nil {
			return err
		}
		apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadQuotaReserved,
			Status: metav1.ConditionFalse, Reason: "Pending"})
		apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: "Evicted",
			Status: metav1.ConditionTrue, Reason: "Preempted"})
		wl.Status.Admission = nil
		return cl.Status().Update(ctx, &wl)
	}
	var c client.Client
	c = setupWith(t, interceptor.Funcs{Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey,
		obj client.Object, opts ...client.GetOption) error {
		if err := cl.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		return evict(ctx, cl, key, obj)
	}, Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch,
		opts ...client.PatchOption) error {
		if err := cl.Patch(ctx, obj, patch, opts...); err != nil {
			return err
		}
		return evict(ctx, cl, client.ObjectKeyFromObject(obj), obj)
	}})
	ctx := context.Background()
	wl := get(t, c)
	checkState(wl, "green-window").State = kueue.CheckStateReady
	if err := c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	svc := &service{answer: dispatchclient.Answer{Clusters: []string{"gb"}}}
	d := &Dispatcher{Client: c, Service: svc.start(t)}
	res, err := d.Reconcile(ctx, ctrl.Request{NamespacedName: trainKey})
	if err != nil {
		t.Fatal(err)
	}
	if !evicted {
		t.Fatal("the eviction was not staged")
	}
	a := applies[len(applies)-1]
	if a.manager != KueueAdmissionFieldManager {
		t.Fatalf("last apply by %q", a.manager)
	}
	// The apply was refused with a conflict (the stand-in, as the API server, checks the
	// resourceVersion), and the Workload comes back soon to decide again.
	if res.RequeueAfter != conflictRetry {
		t.Fatalf("requeue after %v, want %v", res.RequeueAfter, conflictRetry)
	}
	got := get(t, c)
	if quotaReserved(got) || got.Status.Admission != nil || len(got.Status.NominatedClusterNames) != 0 {
		t.Fatalf("the evicted Workload got back quota %v / admission %v / nomination %v", quotaReserved(got),
			got.Status.Admission, got.Status.NominatedClusterNames)
	}
	// Decided again: no quota, nothing to do.
	if _, err := d.Reconcile(ctx, ctrl.Request{NamespacedName: trainKey}); err != nil {
		t.Fatal(err)
	}
	if n := get(t, c).Status.NominatedClusterNames; len(n) != 0 {
		t.Fatalf("nominated %v after the eviction", n)
	}
	// The stand-in refuses a stale resourceVersion with 409 on its own.
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(kueue.GroupVersion.WithKind("Workload"))
	if err := c.Get(ctx, trainKey, live); err != nil {
		t.Fatal(err)
	}
	live.SetResourceVersion("1")
	stale, _ := nominationApply(live, []string{"gb"})
	err = c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(stale), client.FieldOwner(KueueAdmissionFieldManager))
	if !apierrors.IsConflict(err) {
		t.Fatalf("a stale apply: %v, want a conflict", err)
	}
}

// A Workload Kueue evicts after its worker was lost while its Job ran there: the Job keeps the
// active pod MultiKueue last read from that worker, so Kueue never drops the reservation. After
// --worker-lost-after, with no copy in a worker MultiKueue reaches, the dispatcher clears the
// Job's active and ready counts; not before, and not while a reached worker holds a copy.
func TestJobStrandedOnALostWorkerIsReleased(t *testing.T) {
	ctx := context.Background()
	sgCopy := remoteWorkload(false)
	sg := worker(t, sgCopy)
	s := newScene(t, workers{"gb": worker(t), "sg": sg})
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "train-job", Namespace: "team-a", UID: "u1"},
		Spec:   batchv1.JobSpec{Suspend: ptr(true)},
		Status: batchv1.JobStatus{Active: 1, Ready: ptr(int32(1))}}
	if err := s.c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	wl := get(t, s.c)
	wl.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "train-job",
		UID: "u1", Controller: ptr(true)}}
	if err := s.c.Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	wl = get(t, s.c)
	wl.Status.NominatedClusterNames = nil
	apimeta.SetStatusCondition(&wl.Status.Conditions, metav1.Condition{Type: kueue.WorkloadEvicted,
		Status: metav1.ConditionTrue, Reason: "AdmissionCheck", LastTransitionTime: metav1.NewTime(t0)})
	if err := s.c.Status().Update(ctx, wl); err != nil {
		t.Fatal(err)
	}
	active := func() int32 {
		var j batchv1.Job
		if err := s.c.Get(ctx, client.ObjectKeyFromObject(job), &j); err != nil {
			t.Fatal(err)
		}
		return j.Status.Active
	}
	s.now = t0.Add(time.Minute)
	res, err := s.reconcile(1)
	if err != nil {
		t.Fatal(err)
	}
	if active() != 1 || res.RequeueAfter != time.Minute {
		t.Fatalf("after 1 of 2 minutes: active %d, requeue after %v", active(), res.RequeueAfter)
	}
	// sg, reached, still holds a copy: MultiKueue stops it and copies its status back.
	s.now = t0.Add(2 * time.Minute)
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	if active() != 1 {
		t.Fatal("cleared while a reached worker holds a copy")
	}
	if err := sg.Delete(ctx, sgCopy); err != nil {
		t.Fatal(err)
	}
	if _, err := s.reconcile(1); err != nil {
		t.Fatal(err)
	}
	if active() != 0 || len(s.svc.requests) != 0 || len(s.nominated()) != 0 {
		t.Fatalf("active %d, %d requests, nominated %v: want the Job released and nothing nominated",
			active(), len(s.svc.requests), s.nominated())
	}
	if ev := s.events(); !strings.Contains(ev, "GreenschedReleased") {
		t.Fatalf("no GreenschedReleased Event: %s", ev)
	}
}

// The admit timeout counts from the nomination's stamp, or from the quota reservation when
// the stamp is older (left from before an eviction: the new one could not be written).
func TestAdmitTimeoutCountsFromTheLaterOfStampAndReservation(t *testing.T) {
	s := newScene(t, workers{"gb": worker(t, remoteWorkload(false)), "sg": worker(t)})
	wl := get(t, s.c)
	apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadQuotaReserved).LastTransitionTime =
		metav1.NewTime(t0.Add(2 * time.Minute))
	if err := s.c.Status().Update(context.Background(), wl); err != nil {
		t.Fatal(err)
	}
	s.now = t0.Add(5 * time.Minute)
	res, err := s.reconcile(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.svc.requests) != 0 || res.RequeueAfter != 2*time.Minute {
		t.Fatalf("3 minutes after its new reservation: %d requests, requeue after %v (want 2 min)",
			len(s.svc.requests), res.RequeueAfter)
	}
}

// A reconcile on a stale read that still shows the change under way after it was recorded
// (the record not yet in the cache) does not record it again: once counted, with its time.
func TestARecordedRenominationIsNotRecordedAgainFromAStaleRead(t *testing.T) {
	gb := worker(t, remoteWorkload(false))
	s := newScene(t, workers{"gb": gb, "sg": worker(t)})
	s.now = t0.Add(5 * time.Minute)
	if _, err := s.reconcile(1); err != nil { // start and revoke
		t.Fatal(err)
	}
	if err := gb.Delete(context.Background(), remoteWorkload(false)); err != nil {
		t.Fatal(err)
	}
	before := counter(ReasonAdmitTimeout)
	if _, err := s.reconcile(1); err != nil { // nominated anew and recorded
		t.Fatal(err)
	}
	recorded := get(t, s.c)
	if counter(ReasonAdmitTimeout) != before+1 || recorded.Annotations[RenominatingAnnotation] != "" {
		t.Fatalf("not recorded: counter %v (was %v), renominating %q", counter(ReasonAdmitTimeout), before,
			recorded.Annotations[RenominatingAnnotation])
	}
	p := renomination{reason: ReasonAdmitTimeout, from: []string{"gb"}, at: t0.Add(5 * time.Minute)}
	stale := recorded.DeepCopy()
	stale.Annotations[RenominatingAnnotation] = p.String()
	stale.ResourceVersion = "1"
	s.now = s.now.Add(time.Second)
	res, err := s.d.renominate(context.Background(), stale, p)
	if err != nil {
		t.Fatal(err)
	}
	after := get(t, s.c)
	if counter(ReasonAdmitTimeout) != before+1 || res.RequeueAfter != conflictRetry ||
		after.Annotations[NominatedAtAnnotation] != recorded.Annotations[NominatedAtAnnotation] {
		t.Fatalf("recorded again from a stale read: counter %v (want %v), requeue %v, nominated-at %q (was %q)",
			counter(ReasonAdmitTimeout), before+1, res.RequeueAfter, after.Annotations[NominatedAtAnnotation],
			recorded.Annotations[NominatedAtAnnotation])
	}
}
