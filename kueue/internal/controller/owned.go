package controller

import (
	"encoding/json"
	"fmt"
	"strings"

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
			if !ok || name == "nominatedClusterNames" {
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
	names := make([]any, len(clusters))
	for i, c := range clusters {
		names[i] = c
	}
	owned["nominatedClusterNames"] = names
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
