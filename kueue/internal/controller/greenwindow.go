package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	kueueac "sigs.k8s.io/kueue/client-go/applyconfiguration/kueue/v1beta2"

	"greensched.io/kueue/internal/dispatchclient"
)

// GreenWindow is the admission check controller of greensched.io/green-window.
type GreenWindow struct {
	Client   client.Client
	Service  *dispatchclient.Client
	Recorder record.EventRecorder
	// MaxWait bounds one requeue, so that a long window is re-asked now and then (the service
	// gives the same answer while it stands).
	MaxWait time.Duration
}

// Reconcile sets the Workload's green-window check Pending until its start, then Ready.
func (g *GreenWindow) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	return onTime(g.reconcile(ctx, req))
}

func (g *GreenWindow) reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var wl kueue.Workload
	if err := g.Client.Get(ctx, req.NamespacedName, &wl); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if finished(&wl) || !quotaReserved(&wl) {
		return ctrl.Result{}, nil
	}
	checks, err := checkObjects(ctx, g.Client, &wl)
	if err != nil {
		return ctrl.Result{}, err
	}
	var ours *kueue.AdmissionCheckState
	var multi *kueue.AdmissionCheck
	for i := range wl.Status.AdmissionChecks {
		s := &wl.Status.AdmissionChecks[i]
		ac := checks[s.Name]
		if ac == nil {
			continue
		}
		switch ac.Spec.ControllerName {
		case GreenWindowController:
			ours = s
		case kueue.MultiKueueControllerName:
			multi = ac
		}
	}
	if ours == nil || ours.State == kueue.CheckStateReady || ours.State == kueue.CheckStateRejected {
		return ctrl.Result{}, nil
	}
	var clusters []string
	if multi != nil {
		if clusters, err = reachableClusters(ctx, g.Client, multi); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(clusters) > 0 {
		clusters = offered(&wl, clusters) // as the dispatcher will ask
	}
	answer, err := g.Service.Dispatch(ctx, &wl, clusters)
	if err != nil {
		// Tried again with the controller's backoff (serviceRetry): a restarted service
		// answers within a second.
		return ctrl.Result{}, err
	}
	state := kueue.CheckStateReady
	message := fmt.Sprintf("green window open: %s", answer.Reason)
	wait := untilStart(answer)
	if wait > 0 {
		state = kueue.CheckStatePending
		message = fmt.Sprintf("waiting for its green window at %s on %v: %s", answer.EarliestStart,
			answer.Clusters, answer.Reason)
	}
	if len(message) > 1024 {
		message = message[:1024]
	}
	if state != ours.State || message != ours.Message {
		apply := kueueac.Workload(wl.Name, wl.Namespace).WithStatus(kueueac.WorkloadStatus().
			WithAdmissionChecks(kueueac.AdmissionCheckState().WithName(ours.Name).WithState(state).
				WithMessage(message).WithLastTransitionTime(metav1.Now())))
		if err := g.Client.Status().Apply(ctx, apply, client.FieldOwner(GreenWindowFieldManager),
			client.ForceOwnership); err != nil {
			return ctrl.Result{}, err
		}
		if g.Recorder != nil {
			g.Recorder.Event(&wl, "Normal", "GreenWindow", message)
		}
	}
	if wait > 0 {
		if g.MaxWait > 0 && wait > g.MaxWait {
			wait = g.MaxWait
		}
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	return ctrl.Result{}, nil
}

// untilStart is how long the Workload waits: the answer's start_after_ms, counted by the
// service to the millisecond (start_after_s counts whole seconds from its truncated clock, so
// waiting it out would release the Workload up to a second late). Zero once it may start.
func untilStart(answer *dispatchclient.Answer) time.Duration {
	if answer.StartAfterS <= 0 {
		return 0
	}
	if answer.StartAfterMS != nil {
		return max(time.Duration(*answer.StartAfterMS)*time.Millisecond, minWait)
	}
	return time.Duration(answer.StartAfterS) * time.Second
}

// minWait is the shortest wait for a window about to open: asked again soon, not in a loop.
const minWait = 20 * time.Millisecond

// SetupWithManager watches Workloads. Four at a time, as the dispatcher: a window that opens
// is not kept waiting behind other Workloads' service calls and writes.
func (g *GreenWindow) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("greensched-green-window").
		For(&kueue.Workload{}).WithOptions(controller.Options{RateLimiter: serviceRetry(),
		MaxConcurrentReconciles: 4}).Complete(g)
}

// ActiveChecks marks greensched's AdmissionCheck objects Active (Kueue keeps a ClusterQueue
// that uses an inactive check from admitting).
type ActiveChecks struct {
	Client client.Client
}

// Reconcile sets the Active condition of an AdmissionCheck whose controller is ours.
func (a *ActiveChecks) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ac kueue.AdmissionCheck
	if err := a.Client.Get(ctx, req.NamespacedName, &ac); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ac.Spec.ControllerName != GreenWindowController {
		return ctrl.Result{}, nil
	}
	for _, c := range ac.Status.Conditions {
		if c.Type == kueue.AdmissionCheckActive && c.Status == metav1.ConditionTrue {
			return ctrl.Result{}, nil
		}
	}
	apply := kueueac.AdmissionCheck(ac.Name).WithStatus(kueueac.AdmissionCheckStatus().
		WithConditions(metav1ac.Condition().WithType(kueue.AdmissionCheckActive).
			WithStatus(metav1.ConditionTrue).WithReason("Active").
			WithMessage("greensched's green-window controller is running").
			WithLastTransitionTime(metav1.Now()).WithObservedGeneration(ac.Generation)))
	return ctrl.Result{}, a.Client.Status().Apply(ctx, apply, client.FieldOwner(GreenWindowFieldManager),
		client.ForceOwnership)
}

// SetupWithManager watches AdmissionChecks.
func (a *ActiveChecks) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("greensched-active-checks").
		For(&kueue.AdmissionCheck{}).Complete(a)
}
