// Checks what the Helm chart deploy/helm/greensched renders, with its default values and with
// each values file of tests/helm (values-*.yaml): every object decodes strictly (an unknown or
// misspelt field is an error) into its Kubernetes type, and the scheduler config into
// kube-scheduler's; every ServiceAccount, Secret (and the keys a pod takes from it),
// ConfigMap and PersistentVolumeClaim a pod or binding refers to is rendered, or named in the
// values as an existing one (a key named existing*), and the chart renders none of those;
// dispatch serves TLS with the bearer token; greensched-kueue runs 2 replicas with leader
// election; NetworkPolicies admit only the components' clients; no role reaches Secrets
// beyond get; the scheduler calls the extender's Service over TLS with files it mounts; the
// descheduler CronJob, where the values turn it on, calls that Service with a client
// certificate it mounts and may only get pods and evict them (and nothing of it is rendered
// where it is off).
//
// Needs a helm binary: $HELM (tests/helm/build.sh builds it); skipped without it.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

const namespace = "greensched-system"

func repoDir() string {
	if d := os.Getenv("REPO_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..")
}

// rendered is one `helm template` output, decoded.
type rendered struct {
	serviceAccounts map[string]corev1.ServiceAccount
	secrets         map[string]corev1.Secret
	configMaps      map[string]corev1.ConfigMap
	claims          map[string]corev1.PersistentVolumeClaim
	services        map[string]corev1.Service
	deployments     map[string]appsv1.Deployment
	cronJobs        map[string]batchv1.CronJob
	// components counts the objects by their app.kubernetes.io/component label.
	components      map[string]int
	policies        []networkingv1.NetworkPolicy
	roles           []rbacv1.Role
	clusterRoles    []rbacv1.ClusterRole
	bindings        []rbacv1.RoleBinding
	clusterBindings []rbacv1.ClusterRoleBinding
}

func strict[T any](t *testing.T, where string, doc []byte) T {
	t.Helper()
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	return v
}

// helmTemplate is `helm template RELEASE deploy/helm/greensched` in the namespace, with the
// values file if given.
func helmTemplate(t *testing.T, helm, release, valuesFile string) string {
	t.Helper()
	args := []string{"template", release, filepath.Join(repoDir(), "deploy", "helm", "greensched"),
		"--namespace", namespace}
	if valuesFile != "" {
		args = append(args, "-f", valuesFile)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

func render(t *testing.T, helm string, valuesFile string) *rendered {
	t.Helper()
	return decode(t, helmTemplate(t, helm, "gs", valuesFile))
}

// decode splits a rendering into its objects, each decoded strictly.
func decode(t *testing.T, out string) *rendered {
	t.Helper()
	r := &rendered{
		serviceAccounts: map[string]corev1.ServiceAccount{},
		secrets:         map[string]corev1.Secret{},
		configMaps:      map[string]corev1.ConfigMap{},
		claims:          map[string]corev1.PersistentVolumeClaim{},
		services:        map[string]corev1.Service{},
		deployments:     map[string]appsv1.Deployment{},
		cronJobs:        map[string]batchv1.CronJob{},
		components:      map[string]int{},
	}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(out, -1) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string            `json:"name"`
				Namespace string            `json:"namespace"`
				Labels    map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
		if head.Kind == "" {
			if strings.TrimSpace(regexp.MustCompile(`(?m)^#.*$`).ReplaceAllString(doc, "")) != "" {
				t.Fatalf("document %d has no kind:\n%s", i+1, doc)
			}
			continue
		}
		where := fmt.Sprintf("document %d (%s %s)", i+1, head.Kind, head.Metadata.Name)
		r.components[head.Metadata.Labels["app.kubernetes.io/component"]]++
		b := []byte(doc)
		switch head.Kind {
		case "ServiceAccount":
			r.serviceAccounts[head.Metadata.Name] = strict[corev1.ServiceAccount](t, where, b)
		case "Secret":
			r.secrets[head.Metadata.Name] = strict[corev1.Secret](t, where, b)
		case "ConfigMap":
			r.configMaps[head.Metadata.Name] = strict[corev1.ConfigMap](t, where, b)
		case "PersistentVolumeClaim":
			r.claims[head.Metadata.Name] = strict[corev1.PersistentVolumeClaim](t, where, b)
		case "Service":
			r.services[head.Metadata.Name] = strict[corev1.Service](t, where, b)
		case "Deployment":
			r.deployments[head.Metadata.Name] = strict[appsv1.Deployment](t, where, b)
		case "CronJob":
			r.cronJobs[head.Metadata.Name] = strict[batchv1.CronJob](t, where, b)
		case "NetworkPolicy":
			r.policies = append(r.policies, strict[networkingv1.NetworkPolicy](t, where, b))
		case "Role":
			r.roles = append(r.roles, strict[rbacv1.Role](t, where, b))
		case "ClusterRole":
			r.clusterRoles = append(r.clusterRoles, strict[rbacv1.ClusterRole](t, where, b))
		case "RoleBinding":
			r.bindings = append(r.bindings, strict[rbacv1.RoleBinding](t, where, b))
		case "ClusterRoleBinding":
			r.clusterBindings = append(r.clusterBindings, strict[rbacv1.ClusterRoleBinding](t, where, b))
		default:
			t.Fatalf("%s: a kind this test does not know; add it", where)
		}
		cluster := head.Kind == "ClusterRole" || head.Kind == "ClusterRoleBinding"
		if !cluster && head.Metadata.Namespace == "" {
			t.Fatalf("%s: no namespace", where)
		}
	}
	return r
}

// existingNames collects the values of keys named existing* (existingSecret, existingClaim,
// existingConfigMap) in the chart's values.yaml merged with the values file: the objects the
// user says exist.
func existingNames(t *testing.T, valuesFile string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && strings.HasPrefix(k, "existing") && s != "" {
					names[s] = true
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, f := range []string{filepath.Join(repoDir(), "deploy", "helm", "greensched", "values.yaml"), valuesFile} {
		if f == "" {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.Unmarshal(text, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		walk(v)
	}
	return names
}

func hasArg(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

func flagValue(args []string, flag string) string {
	v, _ := argValue(args, flag)
	return v
}

// deployment finds the Deployment of a component (app.kubernetes.io/component).
func (r *rendered) deployment(t *testing.T, component string) *appsv1.Deployment {
	t.Helper()
	for _, d := range r.deployments {
		if d.Spec.Template.Labels["app.kubernetes.io/component"] == component {
			return &d
		}
	}
	t.Fatalf("no Deployment of component %s", component)
	return nil
}

func matches(selector map[string]string, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return len(selector) > 0
}

// checkReferences: what the pods and bindings refer to is rendered or existing.
func checkReferences(t *testing.T, r *rendered, existing map[string]bool) {
	t.Helper()
	for name := range existing {
		_, secret := r.secrets[name]
		_, cm := r.configMaps[name]
		_, claim := r.claims[name]
		if secret || cm || claim {
			t.Errorf("%s is given as existing in the values, but the chart renders it too", name)
		}
	}
	for name, d := range r.deployments {
		if !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
			t.Errorf("Deployment %s: its selector does not match its pods", name)
		}
		checkPod(t, r, existing, "Deployment "+name, d.Spec.Template.Spec, true)
	}
	for name, c := range r.cronJobs {
		checkPod(t, r, existing, "CronJob "+name, c.Spec.JobTemplate.Spec.Template.Spec, false)
	}
	for _, b := range r.bindings {
		for _, s := range b.Subjects {
			if _, ok := r.serviceAccounts[s.Name]; s.Kind == "ServiceAccount" && !ok {
				t.Errorf("RoleBinding %s: ServiceAccount %s is not rendered", b.Name, s.Name)
			}
		}
	}
	for _, b := range r.clusterBindings {
		for _, s := range b.Subjects {
			if _, ok := r.serviceAccounts[s.Name]; s.Kind == "ServiceAccount" && !ok {
				t.Errorf("ClusterRoleBinding %s: ServiceAccount %s is not rendered", b.Name, s.Name)
			}
		}
	}
}

// checkPod: a pod's ServiceAccount, Secrets (and their keys), ConfigMaps and claims are
// rendered or existing, its mounts name its volumes, its containers do not escalate
// privileges and, for a long-running pod (probes), have readiness and liveness probes.
func checkPod(t *testing.T, r *rendered, existing map[string]bool, name string, spec corev1.PodSpec, probes bool) {
	t.Helper()
	if _, ok := r.serviceAccounts[spec.ServiceAccountName]; !ok {
		t.Errorf("%s: ServiceAccount %q is not rendered", name, spec.ServiceAccountName)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
		switch {
		case v.Secret != nil:
			s, ok := r.secrets[v.Secret.SecretName]
			if !ok && !existing[v.Secret.SecretName] {
				t.Errorf("%s: Secret %q is neither rendered nor given as existing", name, v.Secret.SecretName)
			}
			for _, item := range v.Secret.Items {
				_, inData := s.Data[item.Key]
				_, inString := s.StringData[item.Key]
				if ok && !inData && !inString {
					t.Errorf("%s: Secret %s has no key %q", name, v.Secret.SecretName, item.Key)
				}
			}
		case v.ConfigMap != nil:
			if _, ok := r.configMaps[v.ConfigMap.Name]; !ok && !existing[v.ConfigMap.Name] {
				t.Errorf("%s: ConfigMap %q is neither rendered nor given as existing", name, v.ConfigMap.Name)
			}
		case v.PersistentVolumeClaim != nil:
			if _, ok := r.claims[v.PersistentVolumeClaim.ClaimName]; !ok && !existing[v.PersistentVolumeClaim.ClaimName] {
				t.Errorf("%s: PersistentVolumeClaim %q is neither rendered nor given as existing", name, v.PersistentVolumeClaim.ClaimName)
			}
		default:
			t.Errorf("%s: volume %s of a kind this test does not check", name, v.Name)
		}
	}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if _, ok := volumes[m.Name]; !ok {
				t.Errorf("%s: container %s mounts %s, no such volume", name, c.Name, m.Name)
			}
		}
		if probes && (c.ReadinessProbe == nil || c.LivenessProbe == nil) {
			t.Errorf("%s: container %s needs readiness and liveness probes", name, c.Name)
		}
		if c.SecurityContext == nil || c.SecurityContext.AllowPrivilegeEscalation == nil ||
			*c.SecurityContext.AllowPrivilegeEscalation {
			t.Errorf("%s: container %s must not allow privilege escalation", name, c.Name)
		}
	}
}

// checkRBAC: no ClusterRole touches Secrets or ConfigMaps; a Role reaches Secrets only to get
// them; nothing asks for everything.
func checkRBAC(t *testing.T, r *rendered) {
	t.Helper()
	check := func(kind, name string, rules []rbacv1.PolicyRule, cluster bool) {
		for _, rule := range rules {
			for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
				if slices.Contains(list, "*") {
					t.Errorf("%s %s: a wildcard in %v", kind, name, rule)
				}
			}
			for _, res := range rule.Resources {
				if res != "secrets" && res != "configmaps" {
					continue
				}
				if cluster {
					t.Errorf("%s %s: %s across the cluster", kind, name, res)
				} else if !slices.Equal(rule.Verbs, []string{"get"}) {
					t.Errorf("%s %s: %s with %v (get only)", kind, name, res, rule.Verbs)
				}
			}
		}
	}
	for _, c := range r.clusterRoles {
		check("ClusterRole", c.Name, c.Rules, true)
	}
	for _, c := range r.roles {
		check("Role", c.Name, c.Rules, false)
	}
}

// pods are the pods of a Deployment or CronJob: its name and its pod template's labels.
type pods struct {
	name   string
	labels map[string]string
}

func podsOf(d *appsv1.Deployment) pods { return pods{d.Name, d.Spec.Template.Labels} }

func jobPodsOf(c *batchv1.CronJob) pods {
	return pods{c.Name, c.Spec.JobTemplate.Spec.Template.Labels}
}

// checkNetworkPolicy: a policy selects the component's pods and admits only the given ones.
func checkNetworkPolicy(t *testing.T, r *rendered, target pods, from ...pods) {
	t.Helper()
	labels := target.labels
	for _, p := range r.policies {
		if !matches(p.Spec.PodSelector.MatchLabels, labels) {
			continue
		}
		var peers []map[string]string
		for _, rule := range p.Spec.Ingress {
			for _, peer := range rule.From {
				if peer.PodSelector == nil {
					t.Errorf("NetworkPolicy %s: a peer without a pod selector: %+v", p.Name, peer)
					continue
				}
				if peer.NamespaceSelector == nil {
					peers = append(peers, peer.PodSelector.MatchLabels)
				}
			}
		}
		for _, f := range from {
			found := false
			for _, sel := range peers {
				found = found || matches(sel, f.labels)
			}
			if !found {
				t.Errorf("NetworkPolicy %s does not admit %s", p.Name, f.name)
			}
		}
		if len(peers) != len(from) {
			t.Errorf("NetworkPolicy %s admits %d pod selectors of this namespace, want %d", p.Name, len(peers), len(from))
		}
		return
	}
	t.Errorf("no NetworkPolicy selects the pods of %s", target.name)
}

// serviceOf finds the Service that selects the pods.
func (r *rendered) serviceOf(t *testing.T, p pods) *corev1.Service {
	t.Helper()
	for _, s := range r.services {
		if matches(s.Spec.Selector, p.labels) {
			return &s
		}
	}
	t.Fatalf("no Service selects the pods of %s", p.name)
	return nil
}

// secretFiles are the paths of the Secret files the pod's container i mounts.
func secretFiles(spec corev1.PodSpec, i int) map[string]bool {
	mounted := map[string]bool{}
	for _, m := range spec.Containers[i].VolumeMounts {
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil {
				for _, item := range v.Secret.Items {
					mounted[filepath.Join(m.MountPath, item.Path)] = true
				}
			}
		}
	}
	return mounted
}

// checkSchedulerConfig: the scheduler config decodes strictly as
// kubescheduler.config.k8s.io/v1 and calls the extender's Service over TLS.
func checkSchedulerConfig(t *testing.T, r *rendered) {
	t.Helper()
	sched := r.deployment(t, "scheduler")
	extender := r.deployment(t, "extender")
	var cm corev1.ConfigMap
	for _, v := range sched.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			cm = r.configMaps[v.ConfigMap.Name]
		}
	}
	text, ok := cm.Data["scheduler-config.yaml"]
	if !ok {
		t.Fatalf("the scheduler mounts no ConfigMap with scheduler-config.yaml")
	}
	config := strict[schedv1.KubeSchedulerConfiguration](t, "scheduler-config.yaml", []byte(text))
	if len(config.Extenders) != 1 {
		t.Fatalf("scheduler-config.yaml: want one extender, got %d", len(config.Extenders))
	}
	e := config.Extenders[0]
	svc := r.serviceOf(t, podsOf(extender))
	want := fmt.Sprintf("https://%s.%s.svc:%d/", svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)
	if e.URLPrefix != want || !e.EnableHTTPS || e.TLSConfig == nil {
		t.Fatalf("scheduler-config.yaml: extender %s (https %v), want %s over TLS", e.URLPrefix, e.EnableHTTPS, want)
	}
	if e.Ignorable {
		t.Errorf("scheduler-config.yaml: the extender must not be ignorable")
	}
	args := extender.Spec.Template.Spec.Containers[0].Args
	for _, flag := range []string{"--tls-cert", "--tls-key", "--client-ca"} {
		if !hasArg(args, flag) {
			t.Errorf("the extender's args lack %s: %v", flag, args)
		}
	}
	// The client files kube-scheduler reads are mounted.
	mounted := secretFiles(sched.Spec.Template.Spec, 0)
	for _, f := range []string{e.TLSConfig.CertFile, e.TLSConfig.KeyFile, e.TLSConfig.CAFile} {
		if !mounted[f] {
			t.Errorf("scheduler-config.yaml names %s, which the scheduler does not mount", f)
		}
	}
	// The same profile and extender settings as deploy/scheduler-config.yaml (which the
	// kube-scheduler end-to-end tests run), but for where and how the extender is reached.
	text2, err := os.ReadFile(filepath.Join(repoDir(), "deploy", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plain := strict[schedv1.KubeSchedulerConfiguration](t, "deploy/scheduler-config.yaml", text2)
	if len(plain.Extenders) != 1 {
		t.Fatalf("deploy/scheduler-config.yaml: want one extender")
	}
	p := plain.Extenders[0]
	p.URLPrefix, p.EnableHTTPS, p.TLSConfig, p.NodeCacheCapable = e.URLPrefix, e.EnableHTTPS, e.TLSConfig, e.NodeCacheCapable
	if got, want := toJSON(t, e), toJSON(t, p); got != want {
		t.Errorf("the chart's extender stanza differs from deploy/scheduler-config.yaml's:\n%s\n%s", got, want)
	}
	if got, want := toJSON(t, config.Profiles), toJSON(t, plain.Profiles); got != want {
		t.Errorf("the chart's profiles differ from deploy/scheduler-config.yaml's:\n%s\n%s", got, want)
	}
	if e.TLSConfig.ServerName != strings.TrimSuffix(strings.TrimPrefix(want, "https://"), fmt.Sprintf(":%d/", svc.Spec.Ports[0].Port)) {
		t.Errorf("scheduler-config.yaml: serverName %s is not the Service's name", e.TLSConfig.ServerName)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkChart(t *testing.T, r *rendered, existing map[string]bool, deschedulerOn bool) {
	checkReferences(t, r, existing)
	checkRBAC(t, r)

	dispatch := r.deployment(t, "dispatch")
	kueue := r.deployment(t, "kueue")
	extender := r.deployment(t, "extender")
	scheduler := r.deployment(t, "scheduler")
	for _, d := range []*appsv1.Deployment{dispatch, extender} {
		if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
			t.Errorf("Deployment %s: one journal writer: 1 replica and Recreate", d.Name)
		}
	}
	args := dispatch.Spec.Template.Spec.Containers[0].Args
	for _, flag := range []string{"--tls-cert", "--tls-key", "--auth-token-file", "--record", "--config"} {
		if !hasArg(args, flag) {
			t.Errorf("dispatch's args lack %s: %v", flag, args)
		}
	}
	if hasArg(args, "--insecure") {
		t.Errorf("dispatch runs with --insecure")
	}
	if kueue.Spec.Replicas == nil || *kueue.Spec.Replicas != 2 {
		t.Errorf("greensched-kueue: want 2 replicas")
	}
	kargs := kueue.Spec.Template.Spec.Containers[0].Args
	if flagValue(kargs, "--leader-elect") != "true" {
		t.Errorf("greensched-kueue: want --leader-elect=true, args %v", kargs)
	}
	if !strings.HasPrefix(flagValue(kargs, "--dispatch-url"), "https://") ||
		!hasArg(kargs, "--dispatch-token-file") || !hasArg(kargs, "--dispatch-ca-file") {
		t.Errorf("greensched-kueue: want https, the token and the CA for dispatch, args %v", kargs)
	}
	for _, flag := range []string{"--worker-lost-after", "--admit-timeout"} {
		if !hasArg(kargs, flag) {
			t.Errorf("greensched-kueue's args lack %s", flag)
		}
	}
	// The token both sides read is the same Secret's.
	secretOf := func(d *appsv1.Deployment, mount string) string {
		c := d.Spec.Template.Spec.Containers[0]
		for _, m := range c.VolumeMounts {
			if strings.HasPrefix(mount, m.MountPath+"/") {
				for _, v := range d.Spec.Template.Spec.Volumes {
					if v.Name == m.Name && v.Secret != nil {
						return v.Secret.SecretName
					}
				}
			}
		}
		t.Errorf("Deployment %s: nothing mounted for %s", d.Name, mount)
		return ""
	}
	if a, b := secretOf(dispatch, flagValue(args, "--auth-token-file")), secretOf(kueue, flagValue(kargs, "--dispatch-token-file")); a != b {
		t.Errorf("dispatch reads the token of Secret %s, greensched-kueue of %s", a, b)
	}
	checkNetworkPolicy(t, r, podsOf(dispatch), podsOf(kueue))
	extenderClients := []pods{podsOf(scheduler)}
	if desched := checkDescheduler(t, r, deschedulerOn); desched != nil {
		extenderClients = append(extenderClients, jobPodsOf(desched))
		checkNetworkPolicy(t, r, jobPodsOf(desched))
	}
	checkNetworkPolicy(t, r, podsOf(extender), extenderClients...)
	checkSchedulerConfig(t, r)
	// dispatch's config files are JSON.
	for _, v := range dispatch.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		for name, text := range r.configMaps[v.ConfigMap.Name].Data {
			var x map[string]any
			if err := json.Unmarshal([]byte(text), &x); err != nil {
				t.Errorf("dispatch's %s: %v", name, err)
			}
		}
	}
}

func TestHelmChart(t *testing.T) {
	helm := os.Getenv("HELM")
	if helm == "" {
		t.Skip("HELM is not set (tests/helm/build.sh builds helm)")
	}
	files, err := filepath.Glob(filepath.Join(repoDir(), "tests", "helm", "values-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	for _, f := range append([]string{""}, files...) {
		name := "default"
		if f != "" {
			name = strings.TrimSuffix(filepath.Base(f), ".yaml")
		}
		t.Run(name, func(t *testing.T) {
			r := render(t, helm, f)
			checkChart(t, r, existingNames(t, f), deschedulerOn(t, f))
		})
	}
}
