// Package controller holds greensched's two Kueue controllers, thin by design: every
// decision comes from the dispatch service (dispatchclient), and all state lives in the API
// objects (and the service's journal), so a restart loses nothing.
//
//   - Dispatcher: MultiKueue's external dispatcher. When a Workload of a MultiKueue
//     ClusterQueue holds quota in the manager cluster and every other admission check is
//     Ready, it sets status.nominatedClusterNames (field manager kueue-admission, as Kueue
//     requires) to the service's choice among the MultiKueueConfig's clusters.
//   - GreenWindow: the admission check greensched.io/green-window. It keeps a best-effort
//     Workload's check Pending until the start the service chose (with the reason in the
//     check's message), then sets it Ready; and marks its AdmissionCheck objects Active.
package controller

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

const (
	// GreenWindowController is the controllerName of greensched's admission check.
	GreenWindowController = "greensched.io/green-window"
	// KueueAdmissionFieldManager is the field manager Kueue requires for nominatedClusterNames.
	KueueAdmissionFieldManager = "kueue-admission"
	// GreenWindowFieldManager owns the green-window check's state on Workloads.
	GreenWindowFieldManager = "greensched-green-window"
)

// checkObjects returns, for each admission check listed in the Workload's status, its
// AdmissionCheck object (missing ones are left out).
func checkObjects(ctx context.Context, c client.Client, wl *kueue.Workload) (map[kueue.AdmissionCheckReference]*kueue.AdmissionCheck, error) {
	out := map[kueue.AdmissionCheckReference]*kueue.AdmissionCheck{}
	for _, s := range wl.Status.AdmissionChecks {
		var ac kueue.AdmissionCheck
		if err := c.Get(ctx, types.NamespacedName{Name: string(s.Name)}, &ac); err != nil {
			if client.IgnoreNotFound(err) == nil {
				continue
			}
			return nil, err
		}
		out[s.Name] = &ac
	}
	return out, nil
}

// multiKueueClusters reads the clusters of a MultiKueue admission check's MultiKueueConfig.
func multiKueueClusters(ctx context.Context, c client.Client, ac *kueue.AdmissionCheck) ([]string, error) {
	p := ac.Spec.Parameters
	if p == nil || p.Kind != "MultiKueueConfig" {
		return nil, fmt.Errorf("admission check %s: no MultiKueueConfig parameters", ac.Name)
	}
	var cfg kueue.MultiKueueConfig
	if err := c.Get(ctx, types.NamespacedName{Name: p.Name}, &cfg); err != nil {
		return nil, fmt.Errorf("admission check %s: MultiKueueConfig %s: %w", ac.Name, p.Name, err)
	}
	return cfg.Spec.Clusters, nil
}

// quotaReserved: the Workload holds quota and is not being evicted. Kueue marks an eviction
// (Evicted True) before it drops the reservation, which it does only once the Job has stopped;
// for a MultiKueue Job that can take long (its status comes from a worker). A Workload nominated
// meanwhile has its new copy deactivated by MultiKueue at once, and MultiKueue then keeps that
// copy, making no other, for as long as the Workload holds quota.
func quotaReserved(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved) &&
		!apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadEvicted)
}

func finished(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}

// onTime gives a timed requeue (a window's start, a nomination's timeout, a poll) the
// queue's normal priority. controller-runtime's queue hands out ready items by priority, and a
// requeue keeps the priority of the reconcile that asked for it unless told otherwise; the
// Workloads a new leader finds in its first list are reconciled at low priority, so their
// deadlines kept it and, while events kept the queue busy, fell due seconds late.
func onTime(res reconcile.Result, err error) (reconcile.Result, error) {
	if res.RequeueAfter > 0 && res.Priority == nil {
		res.Priority = ptr(0)
	}
	return res, err
}

// serviceRetry is how a Workload is tried again while the dispatch service cannot answer (or
// an apply fails): from 50 ms, doubling, to at most 10 s. A restarted service answers within
// a second, so a short outage delays a nomination by about that much.
func serviceRetry() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
		50*time.Millisecond, 10*time.Second)
}

// reachableClusters is the clusters of a MultiKueue admission check's config that MultiKueue
// reaches now (all of them when it reaches none: the service then says what it can read).
// Both controllers ask the service about these, so that they ask the same question.
func reachableClusters(ctx context.Context, c client.Client, ac *kueue.AdmissionCheck) ([]string, error) {
	clusters, err := multiKueueClusters(ctx, c, ac)
	if err != nil {
		return nil, err
	}
	reached, err := clusterReach(ctx, c, clusters)
	if err != nil {
		return nil, err
	}
	var active []string
	for _, name := range clusters {
		if reached[name].active {
			active = append(active, name)
		}
	}
	if len(active) == 0 {
		return clusters, nil
	}
	return active, nil
}

// reach is whether MultiKueue reaches a worker cluster (its MultiKueueCluster is Active),
// and since when that has been so.
type reach struct {
	active bool
	since  time.Time
}

// clusterReach reads, for each of `names`, whether MultiKueue reaches it (a missing
// MultiKueueCluster: not, since ever).
func clusterReach(ctx context.Context, c client.Client, names []string) (map[string]reach, error) {
	out := map[string]reach{}
	for _, name := range names {
		var mkc kueue.MultiKueueCluster
		if err := c.Get(ctx, types.NamespacedName{Name: name}, &mkc); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			out[name] = reach{}
			continue
		}
		cond := apimeta.FindStatusCondition(mkc.Status.Conditions, kueue.MultiKueueClusterActive)
		if cond == nil {
			out[name] = reach{since: mkc.CreationTimestamp.Time}
			continue
		}
		out[name] = reach{active: cond.Status == metav1.ConditionTrue, since: cond.LastTransitionTime.Time}
	}
	return out, nil
}
