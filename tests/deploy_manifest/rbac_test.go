// Checks that the two ways greensched-kueue is shipped grant it the same rights: the Roles,
// ClusterRoles and bindings of deploy/kueue/greensched-kueue.yaml are those the Helm chart
// renders for its kueue component with the default values (as release "greensched", whose
// object names are the manifest's): the same objects, rules (as sets), role references and
// subjects. The multikueue end-to-end test runs with the chart's, so this keeps the plain
// manifest from drifting.
//
// Needs a helm binary: $HELM (tests/helm/build.sh builds it); skipped without it.
package manifest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// grants are the RBAC objects of a file or rendering, by "Kind namespace/name", each as the
// comparable text of its rules (sorted) or of its roleRef and subjects.
type grants map[string]string

func ruleText(t *testing.T, rules []rbacv1.PolicyRule) string {
	t.Helper()
	var out []string
	for _, r := range rules {
		for _, l := range [][]string{r.APIGroups, r.Resources, r.ResourceNames, r.Verbs, r.NonResourceURLs} {
			slices.Sort(l)
		}
		out = append(out, toJSON(t, r))
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// rbacOf collects the RBAC objects of a multi-document YAML text; with component set, only
// those labelled app.kubernetes.io/component=<component>.
func rbacOf(t *testing.T, where, text, component string) grants {
	t.Helper()
	g := grants{}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(text, -1) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string            `json:"name"`
				Namespace string            `json:"namespace"`
				Labels    map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("%s: document %d: %v", where, i+1, err)
		}
		if component != "" && head.Metadata.Labels["app.kubernetes.io/component"] != component {
			continue
		}
		key := head.Kind + " " + head.Metadata.Namespace + "/" + head.Metadata.Name
		b := []byte(doc)
		switch head.Kind {
		case "ClusterRole":
			g[key] = ruleText(t, strict[rbacv1.ClusterRole](t, where, b).Rules)
		case "Role":
			g[key] = ruleText(t, strict[rbacv1.Role](t, where, b).Rules)
		case "ClusterRoleBinding":
			rb := strict[rbacv1.ClusterRoleBinding](t, where, b)
			g[key] = toJSON(t, rb.RoleRef) + toJSON(t, rb.Subjects)
		case "RoleBinding":
			rb := strict[rbacv1.RoleBinding](t, where, b)
			g[key] = toJSON(t, rb.RoleRef) + toJSON(t, rb.Subjects)
		}
	}
	return g
}

func TestHelmChartRBACMatchesKueueManifest(t *testing.T) {
	helm := os.Getenv("HELM")
	if helm == "" {
		t.Skip("HELM is not set (tests/helm/build.sh builds helm)")
	}
	chart := rbacOf(t, "the chart", helmTemplate(t, helm, "greensched", ""), "kueue")
	file := filepath.Join(repoDir(), "deploy", "kueue", "greensched-kueue.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	manifest := rbacOf(t, file, string(text), "")
	if len(chart) == 0 {
		t.Fatal("the chart renders no RBAC object of component kueue")
	}
	for key, c := range chart {
		m, ok := manifest[key]
		switch {
		case !ok:
			t.Errorf("the chart renders %s, %s has none", key, file)
		case m != c:
			t.Errorf("%s differs:\nchart:\n%s\n%s:\n%s", key, c, file, m)
		}
	}
	for key := range manifest {
		if _, ok := chart[key]; !ok {
			t.Errorf("%s has %s, the chart renders none", file, key)
		}
	}
}
