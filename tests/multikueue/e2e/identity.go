package main

// The identities greensched runs under, as deploy/kueue ships them: greensched-kueue on the
// manager with the ServiceAccount and ClusterRole of deploy/kueue/greensched-kueue.yaml, and
// the dispatch service reading each worker with the ServiceAccount of
// deploy/kueue/worker-reader.yaml. Their tokens come from the TokenRequest API, so a rule
// missing from the manifests fails the test.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// manifestObjects reads the objects of the given kinds from a multi-document YAML file.
func manifestObjects(path string, kinds ...string) ([]client.Object, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var out []client.Object
	for i, doc := range strings.Split(string(text), "\n---") {
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if strings.TrimSpace(string(data)) == "null" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if want[u.GetKind()] {
			out = append(out, u)
		}
	}
	return out, nil
}

// serviceAccountToken applies the identity objects of `manifest` to the cluster and returns a
// token of its ServiceAccount `name` in greensched-system.
func serviceAccountToken(ctx context.Context, c *cluster, manifest, name string) (string, error) {
	objs, err := manifestObjects(manifest, "Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
		"Role", "RoleBinding")
	if err != nil {
		return "", err
	}
	if err := apply(ctx, c.client, objs...); err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts("greensched-system").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](6 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: token of %s: %w", c.name, name, err)
	}
	return tr.Status.Token, nil
}

// kubeconfigWithToken writes a kubeconfig of the cluster for `token`.
func kubeconfigWithToken(c *cluster, token, file string) (string, error) {
	text := strings.Replace(c.pki.kubeconfigT, "token: "+c.pki.token, "token: "+token, 1)
	if text == c.pki.kubeconfigT {
		return "", fmt.Errorf("%s: the admin kubeconfig has no token to replace", c.name)
	}
	path := filepath.Join(c.dir, file)
	writeFile(path, []byte(text))
	return path, nil
}
