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

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

func quotaReserved(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadQuotaReserved)
}

func finished(wl *kueue.Workload) bool {
	return apimeta.IsStatusConditionTrue(wl.Status.Conditions, kueue.WorkloadFinished)
}
