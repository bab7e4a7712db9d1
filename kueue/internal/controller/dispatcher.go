package controller

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// Dispatcher nominates worker clusters for MultiKueue Workloads (Kueue's multiKueue
// dispatcherName must name it, e.g. greensched.io/dispatcher).
//
// A nomination is never changed: MultiKueue may already have copied the Workload to the
// nominated worker without the manager knowing yet (its worker clients are slow), and moving
// it would leave two copies. A Workload nominated to a worker that MultiKueue loses waits for
// it, as Kueue's own admitted Workloads do. When MultiKueue reaches the worker again, the
// Workload is nudged (ResyncAnnotation) so that MultiKueue resumes its copy at once: Kueue
// retries a copy that failed only with its controller's growing backoff, minutes after a
// minute-long outage.
type Dispatcher struct {
	Client client.Client
	// Reader reads the Workload with its managedFields (the manager's API reader: the cache
	// may strip them).
	Reader   client.Reader
	Service  *dispatchclient.Client
	Recorder record.EventRecorder
}

// Reconcile nominates a Workload once; a Workload a worker has admitted is left to Kueue.
func (d *Dispatcher) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var wl kueue.Workload
	if err := d.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if finished(&wl) || !quotaReserved(&wl) || wl.Status.ClusterName != nil {
		return ctrl.Result{}, nil
	}
	if len(wl.Status.NominatedClusterNames) > 0 {
		return ctrl.Result{}, d.resync(ctx, &wl)
	}
	checks, err := checkObjects(ctx, d.Client, &wl)
	if err != nil {
		return ctrl.Result{}, err
	}
	var multi *kueue.AdmissionCheck
	for _, s := range wl.Status.AdmissionChecks {
		ac := checks[s.Name]
		if ac == nil {
			continue
		}
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			multi = ac
		} else if s.State != kueue.CheckStateReady {
			return ctrl.Result{}, nil // another check (a green window) still holds it
		}
	}
	if multi == nil {
		return ctrl.Result{}, nil
	}
	clusters, err := reachableClusters(ctx, d.Client, multi)
	if err != nil {
		return ctrl.Result{}, err
	}
	answer, err := d.Service.Dispatch(ctx, &wl, clusters)
	if err != nil {
		// Tried again with the controller's backoff (serviceRetry): a restarted service
		// answers within a second.
		return ctrl.Result{}, err
	}
	if answer.StartAfterS > 0 {
		// A new decision (its first cluster is out of reach) that starts later: nominate then.
		return ctrl.Result{RequeueAfter: time.Duration(answer.StartAfterS) * time.Second}, nil
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(kueue.GroupVersion.WithKind("Workload"))
	reader := d.Reader
	if reader == nil {
		reader = d.Client
	}
	if err := reader.Get(ctx, req.NamespacedName, live); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	apply, err := nominationApply(live, answer.Clusters)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := d.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(apply),
		client.FieldOwner(KueueAdmissionFieldManager), client.ForceOwnership); err != nil {
		return ctrl.Result{}, err
	}
	if d.Recorder != nil {
		d.Recorder.Eventf(&wl, "Normal", "GreenschedNominated", "nominated %v (%s): %s",
			answer.Clusters, answer.Mode, answer.Reason)
	}
	logger.Info("nominated", "workload", req.NamespacedName, "clusters", answer.Clusters,
		"reason", answer.Reason)
	return ctrl.Result{}, nil
}

// resync nudges a nominated, not yet admitted Workload once after MultiKueue reaches its
// nominated clusters again (their Active condition turned true after the Workload reserved
// quota), by recording that reconnection in ResyncAnnotation: the update makes MultiKueue
// reconcile it now.
func (d *Dispatcher) resync(ctx context.Context, wl *kueue.Workload) error {
	reach, err := clusterReach(ctx, d.Client, wl.Status.NominatedClusterNames)
	if err != nil {
		return err
	}
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
	stamp := back.UTC().Format(time.RFC3339)
	if !back.After(reserved.Time) || wl.Annotations[ResyncAnnotation] == stamp {
		return nil
	}
	patch := client.MergeFrom(wl.DeepCopy())
	if wl.Annotations == nil {
		wl.Annotations = map[string]string{}
	}
	wl.Annotations[ResyncAnnotation] = stamp
	if err := d.Client.Patch(ctx, wl, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	if d.Recorder != nil {
		d.Recorder.Eventf(wl, "Normal", "GreenschedResync",
			"MultiKueue reaches %v again (since %s): resuming the copy", wl.Status.NominatedClusterNames, stamp)
	}
	return nil
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
		for _, name := range wl.Status.NominatedClusterNames {
			if name == obj.GetName() {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(wl)})
				break
			}
		}
	}
	return out
}

// SetupWithManager watches Workloads, and MultiKueueClusters for the Workloads nominated to
// them.
func (d *Dispatcher) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("greensched-dispatcher").
		For(&kueue.Workload{}).
		Watches(&kueue.MultiKueueCluster{}, handler.EnqueueRequestsFromMapFunc(d.waitingOn)).
		WithOptions(controller.Options{RateLimiter: serviceRetry()}).Complete(d)
}
