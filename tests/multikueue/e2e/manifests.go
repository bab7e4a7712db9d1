package main

// The objects a binary-run Kueue and KWOK need, rendered at run time from the pinned modules'
// own kustomizations (nothing of theirs is copied into the repository): Kueue's CRDs (with the
// conversion-webhook patches its cert rotator expects), Namespace, webhook Service (its pod
// selector removed: an EndpointSlice points it at the host) and webhook configurations; and
// KWOK's node and pod lifecycle Stages.

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// moduleDir is where the Go module cache holds `module` (at go.mod's version).
func moduleDir(goBin, moduleRoot, module string) (string, error) {
	cmd := exec.Command(goBin, "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = moduleRoot
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("go list -m %s: not downloaded (go mod download)", module)
	}
	return dir, nil
}

func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range res.Resources() {
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

type manifests struct {
	kueueCRDs    []*unstructured.Unstructured
	kueueWebhook []*unstructured.Unstructured // Namespace, Service, webhook configurations
	kwokStages   []byte                       // KWOK --config
}

func renderManifests(goBin, moduleRoot string) (*manifests, error) {
	kq, err := moduleDir(goBin, moduleRoot, "sigs.k8s.io/kueue")
	if err != nil {
		return nil, err
	}
	kw, err := moduleDir(goBin, filepath.Join(moduleRoot, "kwok"), "sigs.k8s.io/kwok")
	if err != nil {
		return nil, err
	}
	all, err := kustomize(filepath.Join(kq, "config", "default"))
	if err != nil {
		return nil, err
	}
	m := &manifests{}
	for _, o := range all {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			if err := serveStorageVersionOnly(o); err != nil {
				return nil, err
			}
			m.kueueCRDs = append(m.kueueCRDs, o)
		case "Namespace", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			m.kueueWebhook = append(m.kueueWebhook, o)
		case "Service":
			if o.GetName() == "kueue-webhook-service" {
				unstructured.RemoveNestedField(o.Object, "spec", "selector")
				m.kueueWebhook = append(m.kueueWebhook, o)
			}
		}
	}
	if len(m.kueueCRDs) == 0 || len(m.kueueWebhook) < 3 {
		return nil, fmt.Errorf("kueue's config/default gave %d CRDs and %d webhook objects",
			len(m.kueueCRDs), len(m.kueueWebhook))
	}
	var stages bytes.Buffer
	for _, s := range []string{"node/fast", "node/heartbeat-with-lease", "pod/general"} {
		objs, err := kustomize(filepath.Join(kw, "kustomize", "stage", s))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				return nil, err
			}
			stages.WriteString("---\n")
			stages.Write(y)
		}
	}
	m.kwokStages = stages.Bytes()
	return m, nil
}

// serveStorageVersionOnly stops the CRD serving its versions other than the storage version
// (Kueue 0.17 serves v1beta1 beside v1beta2, and stores and uses v1beta2). The API server
// keeps a watch cache for each served version of a custom resource and fills it by converting
// every stored object that changes, through Kueue's conversion webhook; with v1beta1 served,
// that was one webhook call for each write of a Workload, ClusterQueue or LocalQueue, though
// no client reads v1beta1.
func serveStorageVersionOnly(crd *unstructured.Unstructured) error {
	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
	}
	stored := 0
	for i, item := range versions {
		v, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("CRD %s: spec.versions[%d] is not an object", crd.GetName(), i)
		}
		if s, _ := v["storage"].(bool); s {
			stored++
		} else {
			v["served"] = false
		}
	}
	if stored != 1 {
		return fmt.Errorf("CRD %s: %d storage versions", crd.GetName(), stored)
	}
	return unstructured.SetNestedSlice(crd.Object, versions, "spec", "versions")
}

// apply server-side applies `objs` with the test's field manager. A call that the API server
// could not deliver to Kueue's webhook (its listener not yet reachable from the API server,
// though Kueue reports ready) is retried for up to webhookRetry; any other error is final.
func apply(ctx context.Context, c client.Client, objs ...client.Object) error {
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			return fmt.Errorf("apply: %T is not unstructured", o)
		}
		u = u.DeepCopy()
		u.SetManagedFields(nil)
		u.SetResourceVersion("")
		deadline := time.Now().Add(webhookRetry)
		for {
			err := c.Patch(ctx, u.DeepCopy(), client.Apply, client.FieldOwner("greensched-e2e"),
				client.ForceOwnership)
			if err == nil {
				break
			}
			if !webhookUnreachable(err) || time.Now().After(deadline) {
				return fmt.Errorf("apply %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	return nil
}

const webhookRetry = 60 * time.Second

// webhookUnreachable: the API server failed to call an admission webhook at the transport level.
func webhookUnreachable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "failed calling webhook") &&
		(strings.Contains(msg, "connection refused") || strings.Contains(msg, "no route to host") ||
			strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "EOF"))
}

// fromYAML reads one object.
func fromYAML(text string) *unstructured.Unstructured {
	data, err := yaml.YAMLToJSON([]byte(text))
	u := &unstructured.Unstructured{}
	if err == nil {
		err = u.UnmarshalJSON(data)
	}
	if err != nil {
		panic(fmt.Sprintf("bad YAML in the test: %v\n%s", err, text))
	}
	return u
}
