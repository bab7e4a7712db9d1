package main

// deploy/kueue/kueue-config.yaml, as the manager is set up from it (and
// deploy/kueue/worker-kueue-config.yaml, merged into each worker's Kueue Configuration the
// same way): its Kueue Configuration
// is merged into the test's (the test's keys are what a binary-run Kueue needs: ports,
// certificates, no leader election; the file's win, but for a scenario's own timeout), its AdmissionChecks are created as they
// are, and its MultiKueueConfig and ClusterQueue with the test's clusters and quotas
// substituted (the file names example clusters and nvidia.com/gpu; the test's workers and
// openb's resources differ). A kind the test does not know how to install fails the test.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

type kueueConfigFile struct {
	path              string
	configuration     map[string]any
	admissionChecks   []*unstructured.Unstructured
	multiKueueConfigs []*unstructured.Unstructured
	clusterQueue      *unstructured.Unstructured
}

func readKueueConfig(path string) (*kueueConfigFile, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	f := &kueueConfigFile{path: path}
	for _, o := range objs {
		switch o.GetKind() {
		case "Configuration":
			if f.configuration != nil {
				return nil, fmt.Errorf("%s: more than one Configuration", path)
			}
			f.configuration = o.Object
		case "AdmissionCheck":
			f.admissionChecks = append(f.admissionChecks, o)
		case "MultiKueueConfig":
			f.multiKueueConfigs = append(f.multiKueueConfigs, o)
		case "ClusterQueue":
			if f.clusterQueue != nil {
				return nil, fmt.Errorf("%s: more than one ClusterQueue", path)
			}
			f.clusterQueue = o
		default:
			return nil, fmt.Errorf("%s: %s %s: a kind the test does not install", path, o.GetKind(), o.GetName())
		}
	}
	if f.configuration == nil || f.clusterQueue == nil || len(f.admissionChecks) == 0 || len(f.multiKueueConfigs) == 0 {
		return nil, fmt.Errorf("%s: expected a Configuration, AdmissionChecks, a MultiKueueConfig and a ClusterQueue", path)
	}
	return f, nil
}

// mergeInto merges src into dst: maps key by key, anything else replaced by src's.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeInto(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// readWorkerKueueConfig reads deploy/kueue/worker-kueue-config.yaml: one Configuration, merged
// into each worker's Kueue.
func readWorkerKueueConfig(path string) (map[string]any, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].GetKind() != "Configuration" {
		return nil, fmt.Errorf("%s: expected one Kueue Configuration and nothing else", path)
	}
	return objs[0].Object, nil
}

// managerConfiguration is the test's Kueue Configuration text (YAML) with the file's merged in,
// and then the scenario's `override`.
func (f *kueueConfigFile) managerConfiguration(base string, override map[string]any) ([]byte, error) {
	return mergedConfiguration(base, f.configuration, override)
}

// mergedConfiguration is the Kueue Configuration text `base` (YAML) with `shipped` (a
// Configuration of deploy/kueue) merged in, and then `override`.
func mergedConfiguration(base string, shipped map[string]any, override map[string]any) ([]byte, error) {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(base), &m); err != nil {
		return nil, fmt.Errorf("the test's Kueue configuration: %w", err)
	}
	// A deep copy, so that the shipped maps are never the merged one's.
	data, err := yaml.Marshal(shipped)
	if err != nil {
		return nil, err
	}
	var copied map[string]any
	if err := yaml.Unmarshal(data, &copied); err != nil {
		return nil, err
	}
	mergeInto(m, copied)
	mergeInto(m, override)
	return yaml.Marshal(m)
}

// managerObjects are the file's AdmissionChecks, and its MultiKueueConfigs listing `clusters`.
func (f *kueueConfigFile) managerObjects(clusters []string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, ac := range f.admissionChecks {
		out = append(out, ac.DeepCopy())
	}
	list := make([]any, len(clusters))
	for i, c := range clusters {
		list[i] = c
	}
	for _, mc := range f.multiKueueConfigs {
		mc = mc.DeepCopy()
		_ = unstructured.SetNestedSlice(mc.Object, list, "spec", "clusters")
		out = append(out, mc)
	}
	return out
}

// managerClusterQueue is the file's ClusterQueue with the test's resource groups.
func (f *kueueConfigFile) managerClusterQueue() (*unstructured.Unstructured, error) {
	cq := f.clusterQueue.DeepCopy()
	if err := unstructured.SetNestedSlice(cq.Object, gpuResourceGroups(false), "spec", "resourceGroups"); err != nil {
		return nil, fmt.Errorf("%s: ClusterQueue %s: %w", f.path, cq.GetName(), err)
	}
	return cq, nil
}
