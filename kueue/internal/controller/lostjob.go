package controller

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// evicting: Kueue is evicting the Workload (Evicted True) and it still holds quota.
func evicting(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
		apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

// releaseLostJob completes the eviction of a Workload whose Job ran on a worker that is gone.
//
// Kueue drops an evicted Workload's quota reservation only once its Job has no active pod. The
// manager's copy of a MultiKueue Job runs no pod: its status is what MultiKueue last read from
// the worker. When that worker is lost for good while the Job runs there (MultiKueue then
// evicts the Workload after its workerLostTimeout), nothing updates that status again, and the
// eviction never completes: the Workload holds its quota and never runs again. So once the
// Workload has been evicting for WorkerLostAfter, its batch/v1 Job is suspended, and no worker
// MultiKueue reaches holds a copy of it (a reached worker's copy is stopped by MultiKueue, which
// then copies its status back), the dispatcher zeroes the Job's active and ready counts.
func (d *Dispatcher) releaseLostJob(ctx context.Context, wl *kueue.Workload) (ctrl.Result, error) {
	cond := apimeta.FindStatusCondition(wl.Status.Conditions, kueue.WorkloadEvicted)
	if d.WorkerLostAfter <= 0 || cond == nil {
		return ctrl.Result{}, nil
	}
	if left := cond.LastTransitionTime.Add(d.WorkerLostAfter).Sub(d.now()); left > 0 {
		return ctrl.Result{RequeueAfter: left}, nil
	}
	owner := metav1.GetControllerOf(wl)
	if owner == nil || owner.Kind != "Job" || owner.APIVersion != batchv1.SchemeGroupVersion.String() {
		return ctrl.Result{}, nil
	}
	reader := d.Reader
	if reader == nil {
		reader = d.Client
	}
	var job batchv1.Job
	if err := reader.Get(ctx, client.ObjectKey{Namespace: wl.Namespace, Name: owner.Name}, &job); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	poll := pollEvery(d.WorkerLostAfter)
	if job.UID != owner.UID || job.Spec.Suspend == nil || !*job.Spec.Suspend {
		return ctrl.Result{RequeueAfter: poll}, nil // Kueue stops it first
	}
	if job.Status.Active == 0 && (job.Status.Ready == nil || *job.Status.Ready == 0) {
		return ctrl.Result{RequeueAfter: poll}, nil // Kueue drops the reservation
	}
	multi, _, err := multiKueueCheck(ctx, d.Client, wl)
	if err != nil || multi == nil {
		return ctrl.Result{}, err
	}
	reached, err := reachableClusters(ctx, d.Client, multi)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, c := range reached {
		state, err := d.copyIn(ctx, c, wl)
		if err != nil || state != copyAbsent {
			return ctrl.Result{RequeueAfter: poll}, nil // MultiKueue stops it and syncs the Job
		}
	}
	patch := client.MergeFromWithOptions(job.DeepCopy(), client.MergeFromWithOptimisticLock{})
	stale := job.Status.Active
	job.Status.Active, job.Status.Ready = 0, ptr(int32(0))
	if err := d.Client.Status().Patch(ctx, &job, patch); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	message := fmt.Sprintf("evicted %s ago, its Job still showed %d active pod(s) from a worker no longer reached: "+
		"cleared, so that Kueue can queue it again", d.now().Sub(cond.LastTransitionTime.Time).Truncate(time.Second), stale)
	if d.Recorder != nil {
		d.Recorder.Event(wl, "Normal", "GreenschedReleased", message)
	}
	log.FromContext(ctx).Info("released a Job stranded on a lost worker", "workload", client.ObjectKeyFromObject(wl),
		"job", job.Name, "activeWas", stale)
	return ctrl.Result{}, nil
}
