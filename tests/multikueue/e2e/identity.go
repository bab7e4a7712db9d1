package main

// The identities greensched runs under, as shipped: greensched-kueue on the manager, and the
// extender and its kube-scheduler on each worker, with the ServiceAccounts, ClusterRoles,
// Roles and bindings the chart deploy/helm/greensched renders (chart.go, cluster.go); and the
// dispatch service reading each worker with the ServiceAccount of
// deploy/kueue/worker-reader.yaml (the chart does not install dispatch there). Their tokens
// come from the TokenRequest API, so a rule missing from what is shipped fails the test.

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// manifestObjects reads the objects of the given kinds from a multi-document YAML file.
func manifestObjects(path string, kinds ...string) ([]client.Object, error) {
	objs, err := readObjects(path)
	if err != nil {
		return nil, err
	}
	var out []client.Object
	for _, o := range objs {
		for _, k := range kinds {
			if o.GetKind() == k {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// identityKinds are the kinds of an identity's objects.
var identityKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}

// serviceAccountToken applies an identity's objects to the cluster and returns a token of its
// ServiceAccount namespace/name.
func serviceAccountToken(ctx context.Context, c *cluster, objs []client.Object, namespace, name string) (string, error) {
	if err := apply(ctx, c.client, objs...); err != nil {
		return "", err
	}
	cs, err := kubernetes.NewForConfig(c.cfg)
	if err != nil {
		return "", err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](6 * 3600)}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("%s: token of %s/%s: %w", c.name, namespace, name, err)
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
