package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"greensched.io/kueue/internal/dispatchclient"
)

// Dispatcher nominates worker clusters for MultiKueue Workloads (Kueue's multiKueue
// dispatcherName must name it, e.g. greensched.io/dispatcher).
type Dispatcher struct {
	Client client.Client
	// Reader reads the Workload with its managedFields (the manager's API reader: the cache
	// may strip them).
	Reader   client.Reader
	Service  *dispatchclient.Client
	Recorder record.EventRecorder
}

// Reconcile nominates once per Workload: a Workload already nominated or admitted is left
// to Kueue.
func (d *Dispatcher) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var wl kueue.Workload
	if err := d.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if finished(&wl) || !quotaReserved(&wl) || wl.Status.ClusterName != nil ||
		len(wl.Status.NominatedClusterNames) > 0 {
		return ctrl.Result{}, nil
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
	clusters, err := multiKueueClusters(ctx, d.Client, multi)
	if err != nil {
		return ctrl.Result{}, err
	}
	answer, err := d.Service.Dispatch(ctx, &wl, clusters)
	if err != nil {
		logger.Error(err, "dispatch service", "workload", req.NamespacedName)
		return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
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

// SetupWithManager watches Workloads.
func (d *Dispatcher) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("greensched-dispatcher").
		For(&kueue.Workload{}).Complete(d)
}
