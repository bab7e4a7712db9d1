package controller

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// nominationApply builds the status apply of a nomination under the field manager
// kueue-admission. Kueue applies the Workload's status under that same manager, so an apply
// holding only nominatedClusterNames would drop every other status field the manager owns
// (the quota reservation and its QuotaReserved condition among them; a real API server does
// exactly that). The apply therefore re-sends, as they stand, the status fields that
// kueue-admission owns (its managedFields entry of operation Apply on the status
// subresource): top-level fields whole, and of the conditions only the entries it owns.
//
// It carries the live object's metadata.resourceVersion, which the API server takes as a
// precondition of the apply: if Kueue changed the Workload since it was read (evicted it,
// dropping its quota reservation), the apply fails with a conflict (409) instead of restoring
// the reservation it re-sends. The caller reads the Workload again and decides anew.
func nominationApply(live *unstructured.Unstructured, clusters []string) (*unstructured.Unstructured, error) {
	return kueueStatusApply(live, func(owned map[string]any) error {
		names := make([]any, len(clusters))
		for i, c := range clusters {
			names[i] = c
		}
		owned["nominatedClusterNames"] = names
		return nil
	})
}

// checkRetryApply builds the apply, under kueue-admission as nominationApply, that sets the
// admission check `check` to Retry with `message` (as Kueue's own MultiKueue controller does).
func checkRetryApply(live *unstructured.Unstructured, check, message string, at time.Time) (*unstructured.Unstructured, error) {
	return kueueStatusApply(live, func(owned map[string]any) error {
		checks, _ := owned["admissionChecks"].([]any)
		if checks == nil {
			all, _, _ := unstructured.NestedSlice(live.Object, "status", "admissionChecks")
			checks = all
		}
		for _, c := range checks {
			m, _ := c.(map[string]any)
			if m["name"] == check {
				m["state"] = "Retry"
				m["message"] = message
				m["lastTransitionTime"] = at.UTC().Format(time.RFC3339)
				owned["admissionChecks"] = checks
				return nil
			}
		}
		return fmt.Errorf("no admission check %q in the Workload's status", check)
	})
}

// kueueStatusApply is the status apply under kueue-admission of the fields it owns, as they
// stand, changed by `change` (see nominationApply).
func kueueStatusApply(live *unstructured.Unstructured, change func(owned map[string]any) error) (*unstructured.Unstructured, error) {
	status, _, _ := unstructured.NestedMap(live.Object, "status")
	owned := map[string]any{}
	for _, e := range live.GetManagedFields() {
		if e.Manager != KueueAdmissionFieldManager || e.Operation != "Apply" || e.FieldsV1 == nil {
			continue
		}
		if e.Subresource != "" && e.Subresource != "status" {
			continue
		}
		var fields map[string]any
		if err := json.Unmarshal(e.FieldsV1.Raw, &fields); err != nil {
			return nil, fmt.Errorf("managedFields of %s: %w", KueueAdmissionFieldManager, err)
		}
		st, _ := fields["f:status"].(map[string]any)
		for key, sub := range st {
			name, ok := strings.CutPrefix(key, "f:")
			if !ok {
				continue
			}
			value, present := status[name]
			if !present {
				continue
			}
			if name == "conditions" {
				value = ownedConditions(value, sub)
			}
			owned[name] = value
		}
	}
	if err := change(owned); err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "Workload",
		"metadata": map[string]any{"name": live.GetName(), "namespace": live.GetNamespace(),
			"resourceVersion": live.GetResourceVersion()},
		"status": owned,
	}}
	return out, nil
}

// ownedConditions keeps the conditions whose entries (k:{"type":"..."}) the manager owns.
func ownedConditions(conditions any, fields any) any {
	list, _ := conditions.([]any)
	entries, _ := fields.(map[string]any)
	keep := []any{}
	for _, c := range list {
		m, _ := c.(map[string]any)
		t, _ := m["type"].(string)
		key, _ := json.Marshal(map[string]string{"type": t})
		if _, ok := entries["k:"+string(key)]; ok {
			keep = append(keep, c)
		}
	}
	return keep
}
