package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

const (
	// NominatedAtAnnotation is when the Workload's current nomination was made (RFC 3339): the
	// start of its admit timeout.
	NominatedAtAnnotation = "greensched.io/nominated-at"
	// RenominatingAnnotation holds a change of nomination under way: "<reason> from
	// <cluster>[,<cluster>...] at <RFC 3339>" (see Dispatcher).
	RenominatingAnnotation = "greensched.io/renominating"
	// RenominatedAnnotation records the last change of nomination, as RenominatingAnnotation.
	RenominatedAnnotation = "greensched.io/renominated"
	// LeftAnnotation lists the clusters the Workload was moved away from (comma-separated): it
	// is not offered to them again while another cluster is reached, so that it does not go
	// back and forth between two workers that cannot run it.
	LeftAnnotation = "greensched.io/left-clusters"
	// AdmittedOnAnnotation is the worker the Workload was last admitted on (status.clusterName
	// as the dispatcher saw it). Once Kueue has put it back in the queue (MultiKueue's check
	// in Retry: the worker evicted its copy, e.g. its pods were not ready within the worker
	// Kueue's waitForPodsReady timeout, or the worker was lost), that worker counts as left.
	AdmittedOnAnnotation = "greensched.io/admitted-on"

	// The reasons for a new nomination, as the dispatch service takes them.
	ReasonWorkerLost   = "worker-lost"
	ReasonAdmitTimeout = "admit-timeout"
	// reasonKeep marks an old nomination being given back: its copy was admitted meanwhile.
	reasonKeep = "keep"

	// copyPoll is how often a revoked copy is looked for until MultiKueue has deleted it.
	copyPoll = time.Second
)

// renominations counts the Workloads nominated again, by reason.
var renominations = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "greensched_kueue_renominations_total",
	Help: "Workloads nominated again to other worker clusters, by reason (worker-lost, admit-timeout, unschedulable).",
}, []string{"reason"})

func init() {
	metrics.Registry.MustRegister(renominations)
}

// renomination is a change of nomination under way (RenominatingAnnotation).
// The service's answer, asked when it started, is kept in `to` ("... to <clusters>"), and its
// start when later ("... after <RFC 3339>"): the new nomination waits for it.
type renomination struct {
	reason string
	from   []string
	at     time.Time
	to     []string
	after  time.Time
}

func (r renomination) String() string {
	s := fmt.Sprintf("%s from %s at %s", r.reason, strings.Join(r.from, ","), stamp(r.at))
	if len(r.to) > 0 {
		s += " to " + strings.Join(r.to, ",")
		if !r.after.IsZero() {
			s += " after " + stamp(r.after)
		}
	}
	return s
}

func parseRenomination(s string) (renomination, bool) {
	f := strings.Fields(s)
	if (len(f) != 5 && len(f) != 7 && len(f) != 9) || f[1] != "from" || f[3] != "at" ||
		(len(f) >= 7 && f[5] != "to") || (len(f) == 9 && f[7] != "after") {
		return renomination{}, false
	}
	at, err := time.Parse(time.RFC3339, f[4])
	if err != nil {
		return renomination{}, false
	}
	r := renomination{reason: f[0], from: strings.Split(f[2], ","), at: at}
	if len(f) >= 7 {
		r.to = strings.Split(f[6], ",")
	}
	if len(f) == 9 {
		if r.after, err = time.Parse(time.RFC3339, f[8]); err != nil {
			return renomination{}, false
		}
	}
	return r, true
}

func pendingRenomination(wl *kueue.Workload) (renomination, bool) {
	s, ok := wl.Annotations[RenominatingAnnotation]
	if !ok {
		return renomination{}, false
	}
	return parseRenomination(s)
}

// nominatedAt is when the Workload was nominated: its stamp, unless that is older than its
// quota reservation (a stamp left from before an eviction, when the new nomination's stamp
// could not be written after it), then when it reserved quota, which is earlier.
func nominatedAt(wl *kueue.Workload) time.Time {
	var at time.Time
	for _, c := range wl.Status.Conditions {
		if c.Type == kueue.WorkloadQuotaReserved {
			at = c.LastTransitionTime.Time
		}
	}
	if t, err := time.Parse(time.RFC3339, wl.Annotations[NominatedAtAnnotation]); err == nil && t.After(at) {
		at = t
	}
	return at
}

// startRenomination asks the service where the Workload goes instead of `from` and records
// that it leaves `from` for `reason` (with the answer), if another cluster could take it and
// no copy in `from` holds quota. It returns what it recorded (nil if nothing), which
// Dispatcher.renominate carries on, and whether the Workload changed since it was read (then
// it is decided again). While the service cannot answer, nothing changes (an error: tried
// again).
func (d *Dispatcher) startRenomination(ctx context.Context, wl *kueue.Workload, reason string,
	from []string) (*renomination, bool, error) {
	logger := log.FromContext(ctx).WithValues("workload", client.ObjectKeyFromObject(wl), "reason", reason,
		"from", from)
	multi, _, err := multiKueueCheck(ctx, d.Client, wl)
	if err != nil || multi == nil {
		return nil, false, err
	}
	all, err := multiKueueClusters(ctx, d.Client, multi)
	if err != nil {
		return nil, false, err
	}
	if len(without(all, from)) == 0 {
		logger.V(1).Info("no other cluster to nominate")
		return nil, false, nil
	}
	for _, c := range from {
		state, err := d.copyIn(ctx, c, wl)
		if err != nil && reason == ReasonAdmitTimeout {
			// Its removal could not be seen either.
			logger.Info("cannot read the copy in its worker: not moving it", "cluster", c, "error", err.Error())
			return nil, false, nil
		}
		if err == nil && state == copyHolding {
			logger.V(1).Info("its copy holds quota in its worker: not moving it", "cluster", c)
			return nil, false, nil // being admitted there: MultiKueue makes it the Workload's
		}
	}
	r := renomination{reason: reason, from: from, at: d.now()}
	clusters, err := reachableClusters(ctx, d.Client, multi)
	if err != nil {
		return nil, false, err
	}
	answer, err := d.askAgain(ctx, wl, multi, clusters, r)
	if err != nil {
		return nil, false, err
	}
	r.to = answer.Clusters
	if wait := untilStart(answer); wait > 0 {
		// Elsewhere, later: the old copies go now, the new nomination waits for its start
		// (to the second above, as the annotation keeps it).
		r.after = r.at.Add(wait).Truncate(time.Second).Add(time.Second)
	}
	if err := d.annotateIf(ctx, wl, map[string]*string{RenominatingAnnotation: ptr(r.String())}, true); err != nil {
		if apierrors.IsConflict(err) {
			logger.V(1).Info("the Workload changed since it was read: deciding again")
			return nil, true, nil
		}
		return nil, false, client.IgnoreNotFound(err)
	}
	if d.Recorder != nil {
		d.Recorder.Eventf(wl, "Normal", "GreenschedRenominating", "%s: moving it from %v to %v", reason, from, r.to)
	}
	logger.Info("moving a Workload to another cluster")
	// As the annotation holds it (what a later reconcile, or another replica, goes on from).
	recorded, ok := parseRenomination(r.String())
	if !ok {
		return nil, true, nil // read back from the annotation by the next reconcile
	}
	return &recorded, false, nil
}

// copyIn reads what the worker `cluster` holds of the Workload.
func (d *Dispatcher) copyIn(ctx context.Context, cluster string, wl *kueue.Workload) (copyState, error) {
	if d.Workers == nil {
		return copyAbsent, fmt.Errorf("worker clusters are not read")
	}
	r, err := d.Workers.Reader(ctx, cluster)
	if err != nil {
		return copyAbsent, err
	}
	return remoteCopy(ctx, r, wl)
}

// renominate carries a change of nomination on by one step (see Dispatcher): revoke the old
// nomination, wait for the old copies to be gone, nominate anew, record it.
func (d *Dispatcher) renominate(ctx context.Context, wl *kueue.Workload, p renomination) (ctrl.Result, error) {
	logger := log.FromContext(ctx).WithValues("workload", client.ObjectKeyFromObject(wl), "reason", p.reason,
		"from", p.from)
	nominated := wl.Status.NominatedClusterNames
	if p.reason == reasonKeep {
		if !quotaReserved(wl) || wl.Status.ClusterName != nil || len(nominated) > 0 {
			return ctrl.Result{}, d.endRenomination(ctx, wl, nil, false)
		}
		return d.writeNomination(ctx, wl, p.from, func(live *kueue.Workload) bool {
			return len(live.Status.NominatedClusterNames) == 0
		})
	}
	if finished(wl) || !quotaReserved(wl) {
		// Evicted: MultiKueue deletes its copies; it is nominated anew once it holds quota
		// again.
		return ctrl.Result{}, nil
	}
	if wl.Status.ClusterName != nil {
		// Admitted before the revoke took effect: it stays where it is.
		if d.Recorder != nil {
			d.Recorder.Eventf(wl, "Normal", "GreenschedKept", "admitted on %s before it was moved (%s): kept there",
				*wl.Status.ClusterName, p.reason)
		}
		return ctrl.Result{}, d.endRenomination(ctx, wl, nil, false)
	}
	if len(nominated) > 0 && slices.ContainsFunc(nominated, func(c string) bool { return slices.Contains(p.from, c) }) {
		// 1. Revoke: MultiKueue deletes the copies of the clusters no longer nominated.
		res, err := d.writeNomination(ctx, wl, []string{}, func(live *kueue.Workload) bool {
			return slices.Equal(live.Status.NominatedClusterNames, nominated)
		})
		if err != nil || res.RequeueAfter > 0 {
			return res, err
		}
		return ctrl.Result{RequeueAfter: copyPoll}, nil
	}
	if len(nominated) > 0 {
		// 3. Nominated anew (by a reconcile that stopped before recording it, or this one's
		// record is not yet in the cache): record it, on the Workload as read.
		return d.recordRenomination(ctx, wl, p, true)
	}
	// 2. Each old copy must be gone before a new one can be made.
	reach, err := clusterReach(ctx, d.Client, p.from)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, c := range p.from {
		lost := !reach[c].active && (p.reason == ReasonWorkerLost ||
			(d.WorkerLostAfter > 0 && d.now().Sub(reach[c].since) >= d.WorkerLostAfter))
		state, err := d.copyIn(ctx, c, wl)
		switch {
		case err != nil && lost:
			continue // a lost worker: see Dispatcher
		case err != nil:
			logger.Info("cannot read the old copy yet", "cluster", c, "error", err.Error())
			return ctrl.Result{RequeueAfter: 10 * copyPoll}, nil
		case state == copyDeactivated:
			// MultiKueue deletes it only while the Workload holds no quota: back to the queue
			// until it is gone.
			return d.requeueFromWorker(ctx, wl, fmt.Sprintf("its copy on %q was deactivated there and is kept while it holds quota here", c))
		case state == copyHolding:
			// Admitted there meanwhile: give the old nomination back so that MultiKueue makes
			// that copy the Workload's.
			keep := renomination{reason: reasonKeep, from: []string{c}, at: d.now()}
			if err := d.annotate(ctx, wl, map[string]*string{RenominatingAnnotation: ptr(keep.String())}); err != nil {
				return ctrl.Result{RequeueAfter: conflictRetry}, client.IgnoreNotFound(ignoreConflict(err))
			}
			if d.Recorder != nil {
				d.Recorder.Eventf(wl, "Normal", "GreenschedKept", "its copy holds quota on %s after all (%s): kept there",
					c, p.reason)
			}
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		case state == copyWaiting && !lost:
			return ctrl.Result{RequeueAfter: copyPoll}, nil // MultiKueue is deleting it
		}
	}
	return d.nominate(ctx, wl, &p)
}

// requeueFromWorker puts a Workload whose old copy in a worker was deactivated there back in
// the queue, as MultiKueue does when a worker evicts it: its MultiKueue check goes to Retry,
// so Kueue evicts it (clearing the nomination) and MultiKueue, which deletes copies only while
// the Workload holds no quota, deletes the copy. Kueue reserves quota again at once, so the
// copy may outlive the eviction; it is put back again until the copy is gone (renominate).
func (d *Dispatcher) requeueFromWorker(ctx context.Context, wl *kueue.Workload, why string) (ctrl.Result, error) {
	multi, _, err := multiKueueCheck(ctx, d.Client, wl)
	if err != nil || multi == nil {
		return ctrl.Result{}, err
	}
	for _, s := range wl.Status.AdmissionChecks {
		if s.Name != kueue.AdmissionCheckReference(multi.Name) {
			continue
		}
		if s.State == kueue.CheckStateRetry {
			return ctrl.Result{RequeueAfter: copyPoll}, nil // Kueue evicts it
		}
		message := fmt.Sprintf("greensched: %s: back to the queue, to be nominated elsewhere", why)
		// As Kueue's own MultiKueue controller writes its check: under Kueue's field manager,
		// re-sending the fields it owns (see nominationApply), so that Kueue's eviction, which
		// applies the check back to Pending under it, owns what it changes (under another
		// manager the check would stay Retry, and the Workload would never be admitted again).
		live, err := d.readLive(ctx, wl)
		if err != nil || live == nil {
			return ctrl.Result{}, err
		}
		if live.GetResourceVersion() != wl.ResourceVersion {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil // changed since: decide again
		}
		apply, err := checkRetryApply(live, string(s.Name), message, d.now())
		if err != nil {
			return ctrl.Result{}, err
		}
		if err := d.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(apply),
			client.FieldOwner(KueueAdmissionFieldManager), client.ForceOwnership); err != nil {
			if apierrors.IsConflict(err) {
				return ctrl.Result{RequeueAfter: conflictRetry}, nil
			}
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if d.Recorder != nil {
			d.Recorder.Event(wl, "Normal", "GreenschedRequeued", message)
		}
		return ctrl.Result{RequeueAfter: copyPoll}, nil
	}
	return ctrl.Result{}, nil
}

// recordRenomination ends a change of nomination that took effect: RenominatedAnnotation, the
// nomination's time, an Event and the counter. `locked`: only on the Workload as read (its
// resourceVersion), for a record made from a read that may be stale: the cache can still show
// the change under way after this dispatcher recorded it, and recording it again would count
// it twice and move its admit timeout's start.
func (d *Dispatcher) recordRenomination(ctx context.Context, wl *kueue.Workload, p renomination,
	locked bool) (ctrl.Result, error) {
	done := renomination{reason: p.reason, from: p.from, at: d.now(), to: wl.Status.NominatedClusterNames,
		after: p.after}
	left := strings.Join(union(leftClusters(wl), p.from), ",")
	if err := d.endRenomination(ctx, wl, map[string]*string{RenominatedAnnotation: ptr(done.String()),
		NominatedAtAnnotation: ptr(stamp(done.at)), LeftAnnotation: &left}, locked); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	renominations.WithLabelValues(p.reason).Inc()
	if d.Recorder != nil {
		d.Recorder.Eventf(wl, "Normal", "GreenschedRenominated", "nominated %v instead of %v (%s)",
			wl.Status.NominatedClusterNames, p.from, p.reason)
	}
	log.FromContext(ctx).Info("nominated again", "workload", client.ObjectKeyFromObject(wl), "reason", p.reason,
		"from", p.from, "clusters", wl.Status.NominatedClusterNames)
	return d.watchNomination(ctx, wl)
}

// endRenomination removes RenominatingAnnotation (and sets `set`); `locked` as annotateIf.
func (d *Dispatcher) endRenomination(ctx context.Context, wl *kueue.Workload, set map[string]*string,
	locked bool) error {
	if set == nil {
		set = map[string]*string{}
	}
	set[RenominatingAnnotation] = nil
	return d.annotateIf(ctx, wl, set, locked)
}

// leftClusters is LeftAnnotation's list, and AdmittedOnAnnotation's worker when the Workload
// is admitted there no more.
func leftClusters(wl *kueue.Workload) []string {
	var out []string
	for _, c := range strings.Split(wl.Annotations[LeftAnnotation], ",") {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if c := wl.Annotations[AdmittedOnAnnotation]; c != "" && wl.Status.ClusterName == nil && !slices.Contains(out, c) {
		out = append(out, c)
	}
	return out
}

// offered is `clusters` without those the Workload left, unless that leaves none.
func offered(wl *kueue.Workload, clusters []string) []string {
	if rest := without(clusters, leftClusters(wl)); len(rest) > 0 {
		return rest
	}
	return clusters
}

func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}
