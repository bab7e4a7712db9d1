package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"greensched.io/kueue/internal/dispatchclient"
)

// ResyncAnnotation records, on a Workload nominated to a worker that MultiKueue lost and then
// reached again, the reconnection it was nudged for (see Dispatcher).
const ResyncAnnotation = "greensched.io/resynced-after"

// conflictRetry is how soon a Workload whose status write met a conflict is read and decided
// again.
const conflictRetry = 100 * time.Millisecond

// Dispatcher nominates worker clusters for MultiKueue Workloads (Kueue's multiKueue
// dispatcherName must name it, e.g. greensched.io/dispatcher), and nominates again, among the
// other clusters, a Workload its worker does not take.
//
// # Nominating
//
// When a Workload holds quota in the manager, is nominated nowhere and every admission check
// other than MultiKueue's is Ready, the dispatcher asks the service about the clusters of the
// MultiKueueConfig that MultiKueue reaches, and writes status.nominatedClusterNames (see
// nominationApply), then stamps the time in NominatedAtAnnotation. MultiKueue copies the
// Workload to the nominated workers; once one of them admits its copy, MultiKueue sets
// status.clusterName to it and clears the nomination.
//
// # Nominating again
//
// As Kueue's own incremental dispatcher, which widens the nomination every 5 minutes, the
// dispatcher changes a nomination that is not taken, for one of two reasons (a Workload admitted on a worker that cannot run it is
// put back by that worker, see below):
//
//   - worker-lost: a nominated worker's MultiKueueCluster has not been Active for
//     WorkerLostAfter, and the Workload is not admitted (status.clusterName unset). An admitted
//     Workload whose worker is lost is left to MultiKueue, which keeps it for its own
//     workerLostTimeout (15 minutes) and then puts it back in the queue (check Retry).
//   - admit-timeout: no nominated worker has admitted it (status.clusterName unset, which is
//     what MultiKueue exposes on the manager once a copy is admitted) AdmitTimeout after the
//     nomination (NominatedAtAnnotation), while MultiKueue reaches them: their queues lack
//     quota or are full. The dispatcher reads the copies (Workers): one holding quota there
//     (reserved or admitted) is about to be taken, and is left alone.
//
// Nothing is moved when no other cluster of the MultiKueueConfig could take it.
//
// # Never two copies
//
// A Workload must never run in two workers. MultiKueue deletes a copy in a worker that is no
// longer nominated, but only when it reaches that worker, and it keeps a copy admitted there:
// it makes the first copy that is admitted the Workload's, deleting the others, and Kueue's
// webhook refuses a clusterName that is not nominated. So a nomination is changed in steps,
// each recorded in the Workload (RenominatingAnnotation, "<reason> from <clusters> at <time>"),
// so that a restarted dispatcher, or another replica after a leader change, resumes it:
//
//  0. The service is asked where it goes instead (DispatchAgain: the old clusters excluded,
//     with the reason); while it cannot answer, nothing changes. Its answer is kept in the
//     annotation.
//  1. The old nomination is revoked: nominatedClusterNames is emptied. MultiKueue then
//     deletes the old copies.
//  2. The dispatcher waits until each old copy is gone from its worker (read through
//     Workers). If one holds quota there after all (it was admitted in the meantime), the old
//     nomination is given back ("keep") so that MultiKueue can make it the Workload's: the
//     Workload stays where it is. If one was deactivated there (MultiKueue does that when the
//     manager's Workload was evicted, and then keeps it as long as the Workload holds quota
//     again, never making a new copy), the Workload is put back in the queue (Retry) so that
//     MultiKueue deletes it.
//  3. Only then is the answer nominated (asked anew if its clusters are no longer reached),
//     by the same resourceVersion-guarded apply; RenominatedAnnotation, an Event and the
//     counter greensched_kueue_renominations_total{reason} record it.
//
// A lost worker may not be readable: its copy is taken to be gone when the dispatcher cannot
// read it either, or reads it holding no quota there. What the manager cannot prevent is a
// copy that the lost worker admits while cut off from the manager (a partition, not a dead
// worker): MultiKueue can delete it only once it reaches the worker again. Upstream Kueue has
// the same window when it puts a Workload back in the queue after its workerLostTimeout.
// WorkerLostAfter is that trade: a short outage (MultiKueue reconnects within a minute or
// two) is waited out. Without Workers no copy can be read: admit-timeout is off, and a worker-lost Workload moves without reading its old copy.
//
// # Put back by its worker
//
// A worker whose Kueue evicts an admitted copy (its waitForPodsReady timeout: pods that
// cannot be scheduled there; or the worker lost for MultiKueue's workerLostTimeout) has
// MultiKueue set its check to Retry, and Kueue puts the Workload back in the queue. The
// dispatcher notes each worker a Workload is admitted on (AdmittedOnAnnotation); once the
// Workload is admitted there no more, that worker counts as left, as after a change of
// nomination, and the Workload is nominated anew among the others.
//
// When MultiKueue reaches a lost worker again, the Workloads still nominated to it are nudged
// (ResyncAnnotation) so that MultiKueue resumes its copies at once: Kueue retries a copy that
// failed only with its controller's growing backoff, minutes after a minute-long outage.
type Dispatcher struct {
	Client client.Client
	// Reader reads the Workload with its managedFields (the manager's API reader: the cache
	// may strip them).
	Reader   client.Reader
	Service  *dispatchclient.Client
	Recorder record.EventRecorder
	// Workers reads the worker clusters (nil: none is read).
	Workers Workers
	// WorkerLostAfter, AdmitTimeout: when a nomination is changed (see above); 0 turns that
	// reason off.
	WorkerLostAfter time.Duration
	AdmitTimeout    time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

func (d *Dispatcher) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// Reconcile nominates a Workload, and nominates it again when its worker does not take it.
func (d *Dispatcher) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return onTime(d.reconcile(ctx, req))
}

func (d *Dispatcher) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := d.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if finished(&wl) {
		return ctrl.Result{}, nil
	}
	if evicting(&wl) {
		return d.releaseLostJob(ctx, &wl)
	}
	if p, ok := pendingRenomination(&wl); ok {
		return d.renominate(ctx, &wl, p)
	}
	if !quotaReserved(&wl) {
		return ctrl.Result{}, nil
	}
	if wl.Status.ClusterName != nil {
		if c := *wl.Status.ClusterName; wl.Annotations[AdmittedOnAnnotation] != c {
			if err := d.annotate(ctx, &wl, map[string]*string{AdmittedOnAnnotation: &c}); err != nil {
				return ctrl.Result{RequeueAfter: conflictRetry}, client.IgnoreNotFound(ignoreConflict(err))
			}
		}
		return ctrl.Result{}, nil
	}
	if len(wl.Status.NominatedClusterNames) > 0 {
		return d.watchNomination(ctx, &wl)
	}
	return d.nominate(ctx, &wl, nil)
}

// multiKueueCheck returns the Workload's MultiKueue AdmissionCheck and whether every other
// check is Ready.
func multiKueueCheck(ctx context.Context, c client.Client, wl *kueue.Workload) (*kueue.AdmissionCheck, bool, error) {
	checks, err := checkObjects(ctx, c, wl)
	if err != nil {
		return nil, false, err
	}
	var multi *kueue.AdmissionCheck
	ready := true
	for _, s := range wl.Status.AdmissionChecks {
		ac := checks[s.Name]
		if ac == nil {
			continue
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			multi = ac
		} else if s.State != kueue.CheckStateReady {
			ready = false // another check (a green window) still holds it
		}
	}
	return multi, ready, nil
}

// nominate asks the service where the Workload goes (again, for `p`) and nominates that.
func (d *Dispatcher) nominate(ctx context.Context, wl *kueue.Workload, p *renomination) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	multi, ready, err := multiKueueCheck(ctx, d.Client, wl)
	if err != nil || multi == nil || !ready {
		return ctrl.Result{}, err
	}
	clusters, err := reachableClusters(ctx, d.Client, multi)
	if err != nil {
		return ctrl.Result{}, err
	}
	var answer *dispatchclient.Answer
	switch {
	case p == nil:
		answer, err = d.Service.Dispatch(ctx, wl, offered(wl, clusters))
	case len(p.to) > 0 && len(without(p.to, clusters)) == 0:
		// Asked when it started, still reached: nominated at its start.
		if wait := p.after.Sub(d.now()); wait > 0 {
			return ctrl.Result{RequeueAfter: wait}, nil
		}
		answer = &dispatchclient.Answer{Clusters: p.to}
	default:
		answer, err = d.askAgain(ctx, wl, multi, clusters, *p)
	}
	if err != nil {
		// Tried again with the controller's backoff (serviceRetry): a restarted service
		// answers within a second.
		return ctrl.Result{}, err
	}
	if p != nil {
		answer.StartAfterS = 0 // it waited for its old copies: it goes now
	}
	if answer.StartAfterS > 0 {
		// A new decision (its first cluster is out of reach) that starts later: nominate then.
		return ctrl.Result{RequeueAfter: untilStart(answer)}, nil
	}
	res, err := d.writeNomination(ctx, wl, answer.Clusters, func(live *kueue.Workload) bool {
		return len(live.Status.NominatedClusterNames) == 0
	})
	if err != nil || res.RequeueAfter > 0 {
		return res, err
	}
	wl.Status.NominatedClusterNames = answer.Clusters
	if p != nil {
		// Recorded (annotation, Event, metric) by finishing the renomination.
		return d.recordRenomination(ctx, wl, *p, false)
	}
	// Stamped once written, so that the stamp's write does not delay the nomination. Should
	// it fail, the nomination's time is taken to be its quota reservation's (nominatedAt).
	if err := d.annotate(ctx, wl, map[string]*string{NominatedAtAnnotation: ptr(stamp(d.now()))}); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if d.Recorder != nil {
		d.Recorder.Eventf(wl, "Normal", "GreenschedNominated", "nominated %v (%s): %s",
			answer.Clusters, answer.Mode, answer.Reason)
	}
	logger.Info("nominated", "workload", client.ObjectKeyFromObject(wl), "clusters", answer.Clusters,
		"reason", answer.Reason)
	return d.watchNomination(ctx, wl)
}

// askAgain asks the service anew where the Workload, leaving p.from, goes among the reached
// `clusters` (or all of the config's) other than p.from.
func (d *Dispatcher) askAgain(ctx context.Context, wl *kueue.Workload, multi *kueue.AdmissionCheck,
	clusters []string, p renomination) (*dispatchclient.Answer, error) {
	candidates := without(clusters, p.from)
	if len(candidates) == 0 {
		// No other cluster is reached now: the service says what it can read.
		all, err := multiKueueClusters(ctx, d.Client, multi)
		if err != nil {
			return nil, err
		}
		candidates = without(all, p.from)
	}
	// Nor back to a cluster it left before, while another remains.
	candidates = offered(wl, candidates)
	answer, err := d.Service.DispatchAgain(ctx, wl, candidates, p.from, p.from[0], p.reason)
	if err == nil && len(without(answer.Clusters, p.from)) != len(answer.Clusters) {
		err = fmt.Errorf("dispatch service: asked to exclude %v, it answered %v", p.from, answer.Clusters)
	}
	return answer, err
}

// readLive reads the Workload from the API server with its managedFields (nil when it is gone).
func (d *Dispatcher) readLive(ctx context.Context, wl *kueue.Workload) (*unstructured.Unstructured, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(kueue.GroupVersion.WithKind("Workload"))
	reader := d.Reader
	if reader == nil {
		reader = d.Client
	}
	if err := reader.Get(ctx, client.ObjectKeyFromObject(wl), live); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return live, nil
}

// writeNomination applies nominatedClusterNames (see nominationApply) to the live Workload,
// read now, if it still holds quota, is admitted nowhere and `still` holds for it. Its
// resourceVersion guards the write: on a conflict (Kueue changed it since) the Workload is
// decided again shortly, from a fresh read (a RequeueAfter).
func (d *Dispatcher) writeNomination(ctx context.Context, wl *kueue.Workload, clusters []string,
	still func(*kueue.Workload) bool) (ctrl.Result, error) {
	live, err := d.readLive(ctx, wl)
	if err != nil || live == nil {
		return ctrl.Result{}, err
	}
	var typed kueue.Workload
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &typed); err != nil {
		return ctrl.Result{}, err
	}
	if finished(&typed) || !quotaReserved(&typed) || typed.Status.ClusterName != nil || !still(&typed) {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil // changed since: decide again
	}
	apply, err := nominationApply(live, clusters)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := d.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(apply),
		client.FieldOwner(KueueAdmissionFieldManager), client.ForceOwnership); err != nil {
		if apierrors.IsConflict(err) {
			log.FromContext(ctx).Info("the Workload changed while nominating it: deciding again",
				"workload", client.ObjectKeyFromObject(wl))
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	return ctrl.Result{}, nil
}

// watchNomination changes a nomination that is not taken (worker-lost, admit-timeout), and
// otherwise comes back when one of those falls due.
func (d *Dispatcher) watchNomination(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	nominated := wl.Status.NominatedClusterNames
	reach, err := clusterReach(ctx, d.Client, nominated)
	if err != nil {
		return ctrl.Result{}, err
	}
	now := d.now()
	var next time.Duration
	due := func(at time.Time) bool {
		if left := at.Sub(now); left > 0 {
			if next == 0 || left < next {
				next = left
			}
			return false
		}
		return true
	}
	lost, away := false, false
	for _, name := range nominated {
		if r := reach[name]; !r.active {
			away = true
			if d.WorkerLostAfter > 0 && due(r.since.Add(d.WorkerLostAfter)) {
				lost = true
			}
		}
	}
	reason := ""
	switch {
	case lost:
		reason = ReasonWorkerLost
	case !away && d.AdmitTimeout > 0 && d.Workers != nil && due(nominatedAt(wl).Add(d.AdmitTimeout)):
		reason = ReasonAdmitTimeout
	}
	if reason != "" {
		kv := []any{"workload", client.ObjectKeyFromObject(wl), "reason", reason}
		if reason == ReasonAdmitTimeout {
			at := nominatedAt(wl)
			kv = append(kv, "nominatedAt", at, "late", now.Sub(at.Add(d.AdmitTimeout)))
		}
		log.FromContext(ctx).V(1).Info("a nomination's timeout fell due", kv...)
		p, changed, err := d.startRenomination(ctx, wl, reason, nominated)
		switch {
		case err != nil || changed:
			return ctrl.Result{RequeueAfter: conflictRetry}, err
		case p != nil:
			// Carried on now (the revoke), not after another turn in a queue that may be long.
			return d.renominate(ctx, wl, *p)
		}
		next = pollEvery(d.AdmitTimeout)
	}
	if !away {
		if err := d.resync(ctx, wl, reach); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// pollEvery is how often a Workload is looked at while waiting `after` for a reason: a fifth
// of it, from 5 s to a minute.
func pollEvery(after time.Duration) time.Duration {
	return min(max(after/5, 5*time.Second), time.Minute)
}

// resync nudges a nominated, not yet admitted Workload once after MultiKueue reaches its
// nominated clusters again (their Active condition turned true after the Workload reserved
// quota), by recording that reconnection in ResyncAnnotation: the update makes MultiKueue
// reconcile it now.
func (d *Dispatcher) resync(ctx context.Context, wl *kueue.Workload, reach map[string]reach) error {
	reserved := metav1.Time{}
	for _, c := range wl.Status.Conditions {
		if c.Type == kueue.WorkloadQuotaReserved {
			reserved = c.LastTransitionTime
		}
	}
	var back time.Time
	for _, name := range wl.Status.NominatedClusterNames {
		r := reach[name]
		if !r.active {
			return nil // still away: the MultiKueueCluster watch brings it back here
		}
		if r.since.After(back) {
			back = r.since
		}
	}
	at := stamp(back)
	if !back.After(reserved.Time) || wl.Annotations[ResyncAnnotation] == at {
		return nil
	}
	if err := d.annotate(ctx, wl, map[string]*string{ResyncAnnotation: &at}); err != nil {
		return client.IgnoreNotFound(err)
	}
	if d.Recorder != nil {
		d.Recorder.Eventf(wl, "Normal", "GreenschedResync",
			"MultiKueue reaches %v again (since %s): resuming the copy", wl.Status.NominatedClusterNames, at)
	}
	return nil
}

// annotate sets (or, for nil, removes) annotations of the Workload by a merge patch.
func (d *Dispatcher) annotate(ctx context.Context, wl *kueue.Workload, set map[string]*string) error {
	return d.annotateIf(ctx, wl, set, false)
}

// annotateIf is annotate; with `locked`, the patch holds only if the Workload is unchanged
// since it was read (its resourceVersion), else it fails with a conflict. wl becomes the
// Workload as the API server answered the patch.
func (d *Dispatcher) annotateIf(ctx context.Context, wl *kueue.Workload, set map[string]*string, locked bool) error {
	annotations := map[string]any{}
	for k, v := range set {
		if v == nil {
			annotations[k] = nil
		} else {
			annotations[k] = *v
		}
	}
	meta := map[string]any{"annotations": annotations}
	if locked {
		meta["resourceVersion"] = wl.ResourceVersion
	}
	body, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	return d.Client.Patch(ctx, wl, client.RawPatch(types.MergePatchType, body))
}

// waitingOn lists the Workloads nominated to a MultiKueueCluster and admitted nowhere yet.
func (d *Dispatcher) waitingOn(ctx context.Context, obj client.Object) []reconcile.Request {
	var list kueue.WorkloadList
	if err := d.Client.List(ctx, &list); err != nil {
		log.FromContext(ctx).Error(err, "listing Workloads for a MultiKueueCluster change")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		wl := &list.Items[i]
		if wl.Status.ClusterName != nil {
			continue
		}
		if slices.Contains(wl.Status.NominatedClusterNames, obj.GetName()) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(wl)})
		}
	}
	return out
}

// SetupWithManager watches Workloads, and MultiKueueClusters for the Workloads nominated to
// them. Workloads are reconciled four at a time: a worker that answers slowly holds up only
// its own Workloads' reads.
func (d *Dispatcher) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("greensched-dispatcher").
		For(&kueue.Workload{}).
		Watches(&kueue.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(d.waitingOn)).
		WithOptions(controller.Options{RateLimiter: serviceRetry(), MaxConcurrentReconciles: 4}).Complete(d)
}

func ptr[T any](v T) *T { return &v }

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func without(list, drop []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}
