// Checks that the deployed listeners are secured and that the manifests agree with each other:
// deploy/extender.yaml, deploy/kube-scheduler.yaml and deploy/kueue/greensched-kueue.yaml
// decode strictly into the Kubernetes v1 types; every ConfigMap, Secret and claim a pod mounts
// is defined in its file or named in the file's header comment (which says how to create it);
// greensched serve and dispatch listen on the pod IP with --tls-cert and --tls-key from a
// mounted Secret and authenticate clients (--client-ca, --auth-token-file), their probes use
// HTTPS; kube-scheduler's extender config (deploy/scheduler-config*.yaml) calls the Service
// over https with tlsConfig files that kube-scheduler's pod mounts; the Kueue controllers call
// the dispatch Service over https with the CA and the same token Secret as the service.
package manifest

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// manifest is a file's objects by kind, and its header comment.
type manifest struct {
	name        string
	header      string
	deployments []appsv1.Deployment
	services    []corev1.Service
	defined     map[string]bool // "ConfigMap/ns/name", "Secret/ns/name", "PersistentVolumeClaim/ns/name"
}

func decodeStrict(t *testing.T, name string, i int, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatalf("%s: document %d: %v", name, i+1, err)
	}
}

func readManifest(t *testing.T, name string) *manifest {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(deployDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	m := &manifest{name: name, defined: map[string]bool{}}
	for _, line := range strings.Split(string(text), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		m.header += line + "\n"
	}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(text), -1) {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s: document %d: %v", name, i+1, err)
		}
		m.defined[meta.Kind+"/"+meta.Metadata.Namespace+"/"+meta.Metadata.Name] = true
		switch meta.Kind {
		case "Deployment":
			var d appsv1.Deployment
			decodeStrict(t, name, i, doc, &d)
			m.deployments = append(m.deployments, d)
		case "Service":
			var s corev1.Service
			decodeStrict(t, name, i, doc, &s)
			m.services = append(m.services, s)
		case "ConfigMap":
			decodeStrict(t, name, i, doc, &corev1.ConfigMap{})
		case "Secret":
			decodeStrict(t, name, i, doc, &corev1.Secret{})
		case "PersistentVolumeClaim":
			decodeStrict(t, name, i, doc, &corev1.PersistentVolumeClaim{})
		case "ServiceAccount":
			decodeStrict(t, name, i, doc, &corev1.ServiceAccount{})
		case "Namespace":
			decodeStrict(t, name, i, doc, &corev1.Namespace{})
		case "ClusterRole":
			decodeStrict(t, name, i, doc, &rbacv1.ClusterRole{})
		case "ClusterRoleBinding":
			decodeStrict(t, name, i, doc, &rbacv1.ClusterRoleBinding{})
		case "Role":
			decodeStrict(t, name, i, doc, &rbacv1.Role{})
		case "RoleBinding":
			decodeStrict(t, name, i, doc, &rbacv1.RoleBinding{})
		default:
			t.Fatalf("%s: document %d: unexpected kind %q", name, i+1, meta.Kind)
		}
	}
	return m
}

func (m *manifest) deployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	for i := range m.deployments {
		if m.deployments[i].Name == name {
			return &m.deployments[i]
		}
	}
	t.Fatalf("%s: no Deployment %s", m.name, name)
	return nil
}

// checkReferences: every ConfigMap, Secret and claim the file's pods mount is defined in the
// file or named in its header comment.
func (m *manifest) checkReferences(t *testing.T) {
	t.Helper()
	for _, d := range m.deployments {
		for _, v := range d.Spec.Template.Spec.Volumes {
			kind, name := "", ""
			switch {
			case v.ConfigMap != nil:
				kind, name = "ConfigMap", v.ConfigMap.Name
			case v.Secret != nil:
				kind, name = "Secret", v.Secret.SecretName
			case v.PersistentVolumeClaim != nil:
				kind, name = "PersistentVolumeClaim", v.PersistentVolumeClaim.ClaimName
			default:
				continue
			}
			if m.defined[kind+"/"+d.Namespace+"/"+name] {
				continue
			}
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).MatchString(m.header) {
				t.Errorf("%s: Deployment %s mounts %s %s, which the file neither defines nor names "+
					"in its header comment", m.name, d.Name, kind, name)
			}
		}
	}
}

// flag returns the value of `--flag=value` or `--flag value` in args.
func flag(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
		if a == name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// secretFile: `path` lies in a volume of `spec` mounted from a Secret; returns the Secret.
func secretFile(t *testing.T, where string, spec corev1.PodSpec, c corev1.Container, path string) string {
	t.Helper()
	for _, mount := range c.VolumeMounts {
		if !strings.HasPrefix(path, strings.TrimSuffix(mount.MountPath, "/")+"/") || mount.SubPath != "" {
			continue
		}
		if strings.Contains(strings.TrimPrefix(path, mount.MountPath+"/"), "/") {
			continue // deeper: another mount holds it
		}
		for _, v := range spec.Volumes {
			if v.Name == mount.Name && v.Secret != nil {
				return v.Secret.SecretName
			}
		}
	}
	t.Errorf("%s: %s is not a file of a Secret mounted (without subPath) in container %s", where, path, c.Name)
	return ""
}

// listensOnPodIP: --listen is $(POD_IP):PORT with POD_IP from status.podIP; returns PORT.
func listensOnPodIP(t *testing.T, where string, c corev1.Container) int {
	t.Helper()
	listen, _ := flag(c.Args, "--listen")
	port, ok := strings.CutPrefix(listen, "$(POD_IP):")
	if !ok {
		t.Fatalf("%s: --listen is %q, want $(POD_IP):PORT", where, listen)
	}
	fromPodIP := false
	for _, e := range c.Env {
		if e.Name == "POD_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "status.podIP" {
			fromPodIP = true
		}
	}
	if !fromPodIP {
		t.Errorf("%s: POD_IP is not declared from status.podIP", where)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("%s: --listen port %q", where, port)
	}
	return n
}

// httpsProbes: every httpGet probe asks /healthz over HTTPS on a port the container declares.
func httpsProbes(t *testing.T, where string, c corev1.Container, port int) {
	t.Helper()
	probes := 0
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil {
			continue
		}
		probes++
		if p.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.HTTPGet.Path != "/healthz" {
			t.Errorf("%s: probe %s %s, want HTTPS /healthz", where, p.HTTPGet.Scheme, p.HTTPGet.Path)
		}
		found := false
		for _, cp := range c.Ports {
			if (cp.Name == p.HTTPGet.Port.StrVal || int(cp.ContainerPort) == p.HTTPGet.Port.IntValue()) &&
				int(cp.ContainerPort) == port {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: the probe's port %s is not the --listen port %d", where, p.HTTPGet.Port.String(), port)
		}
	}
	if probes == 0 {
		t.Errorf("%s: no HTTPS probe", where)
	}
}

// serviceURL: u is https://NAME.NAMESPACE.svc[.cluster.local]:PORT/ of a Service in m whose
// port targets `containerPort`.
func serviceURL(t *testing.T, where, u string, m *manifest, containerPort int, ports []corev1.ContainerPort) {
	t.Helper()
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "https" {
		t.Fatalf("%s: %q is not an https URL", where, u)
	}
	parts := strings.SplitN(parsed.Hostname(), ".", 3)
	if len(parts) < 2 {
		t.Fatalf("%s: %s does not name a Service as NAME.NAMESPACE", where, u)
	}
	for _, s := range m.services {
		if s.Name != parts[0] || s.Namespace != parts[1] {
			continue
		}
		for _, sp := range s.Spec.Ports {
			if strconv.Itoa(int(sp.Port)) != parsed.Port() {
				continue
			}
			for _, cp := range ports {
				if (cp.Name == sp.TargetPort.StrVal || int(cp.ContainerPort) == sp.TargetPort.IntValue()) &&
					int(cp.ContainerPort) == containerPort {
					return
				}
			}
		}
	}
	t.Errorf("%s: %s is no port of a Service of %s that reaches the --listen port %d", where, u, m.name, containerPort)
}

func TestExtenderListensWithTLSAndClientCertificates(t *testing.T) {
	ext := readManifest(t, "extender.yaml")
	ext.checkReferences(t)
	d := ext.deployment(t, "greensched-extender")
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	where := "extender.yaml: greensched-extender"
	port := listensOnPodIP(t, where, c)
	for _, f := range []string{"--tls-cert", "--tls-key", "--client-ca"} {
		path, ok := flag(c.Args, f)
		if !ok {
			t.Fatalf("%s: no %s", where, f)
		}
		secretFile(t, where, spec, c, path)
	}
	if containsArg(c.Args, "--insecure") {
		t.Errorf("%s: --insecure", where)
	}
	httpsProbes(t, where, c, port)

	sched := readManifest(t, "kube-scheduler.yaml")
	sched.checkReferences(t)
	sd := sched.deployment(t, "greensched-scheduler")
	sc := sd.Spec.Template.Spec.Containers[0]
	for _, config := range []string{"scheduler-config.yaml", "scheduler-config-v1beta1.yaml"} {
		text, err := os.ReadFile(filepath.Join(deployDir(), config))
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Extenders []struct {
				URLPrefix   string            `json:"urlPrefix"`
				EnableHTTPS bool              `json:"enableHTTPS"`
				TLSConfig   map[string]string `json:"tlsConfig"`
			} `json:"extenders"`
		}
		if err := yaml.Unmarshal(text, &cfg); err != nil {
			t.Fatalf("%s: %v", config, err)
		}
		if len(cfg.Extenders) != 1 {
			t.Fatalf("%s: want one extender", config)
		}
		e := cfg.Extenders[0]
		if !e.EnableHTTPS {
			t.Errorf("%s: enableHTTPS is false", config)
		}
		serviceURL(t, config, e.URLPrefix, ext, port, c.Ports)
		if e.TLSConfig["insecure"] != "" {
			t.Errorf("%s: tlsConfig.insecure is set", config)
		}
		for _, key := range []string{"caFile", "certFile", "keyFile"} {
			if e.TLSConfig[key] == "" {
				t.Errorf("%s: tlsConfig has no %s (the extender asks for a client certificate)", config, key)
				continue
			}
			secretFile(t, config+" in kube-scheduler.yaml", sd.Spec.Template.Spec, sc, e.TLSConfig[key])
		}
	}
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a || strings.HasPrefix(x, a+"=") {
			return true
		}
	}
	return false
}

func TestDispatchServiceAndControllersUseTLSAndAToken(t *testing.T) {
	m := readManifest(t, filepath.Join("kueue", "greensched-kueue.yaml"))
	m.checkReferences(t)
	d := m.deployment(t, "greensched-dispatch")
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	where := "greensched-kueue.yaml: greensched-dispatch"
	if len(c.Command) < 2 || c.Command[1] != "dispatch" {
		t.Fatalf("%s: command %v is not greensched dispatch", where, c.Command)
	}
	port := listensOnPodIP(t, where, c)
	secrets := map[string]string{}
	for _, f := range []string{"--tls-cert", "--tls-key", "--auth-token-file"} {
		path, ok := flag(c.Args, f)
		if !ok {
			t.Fatalf("%s: no %s", where, f)
		}
		secrets[f] = secretFile(t, where, spec, c, path)
	}
	if containsArg(c.Args, "--insecure") {
		t.Errorf("%s: --insecure", where)
	}
	httpsProbes(t, where, c, port)

	k := m.deployment(t, "greensched-kueue")
	kspec := k.Spec.Template.Spec
	kc := kspec.Containers[0]
	kwhere := "greensched-kueue.yaml: greensched-kueue"
	u, _ := flag(kc.Args, "--dispatch-url")
	serviceURL(t, kwhere, u, m, port, c.Ports)
	tokenPath, ok := flag(kc.Args, "--dispatch-token-file")
	if !ok {
		t.Fatalf("%s: no --dispatch-token-file", kwhere)
	}
	if got := secretFile(t, kwhere, kspec, kc, tokenPath); got != secrets["--auth-token-file"] {
		t.Errorf("%s: the token comes from Secret %q, the service's from %q", kwhere, got, secrets["--auth-token-file"])
	}
	if filepath.Base(tokenPath) != filepath.Base(mustFlag(t, c.Args, "--auth-token-file")) {
		t.Errorf("%s: token file %s, the service reads %s (another key of the Secret)", kwhere,
			tokenPath, mustFlag(t, c.Args, "--auth-token-file"))
	}
	caPath, ok := flag(kc.Args, "--dispatch-ca-file")
	if !ok {
		t.Fatalf("%s: no --dispatch-ca-file (the service's certificate would go unverified "+
			"or be checked against the system's CAs)", kwhere)
	}
	if got := secretFile(t, kwhere, kspec, kc, caPath); got == secrets["--tls-key"] {
		t.Errorf("%s: the CA comes from the Secret that holds the service's private key (%s)", kwhere, got)
	}
}

func mustFlag(t *testing.T, args []string, name string) string {
	t.Helper()
	v, ok := flag(args, name)
	if !ok {
		t.Fatalf("no %s in %v", name, args)
	}
	return v
}
