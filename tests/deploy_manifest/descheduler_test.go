// Checks the chart's descheduler (descheduler.enabled): a CronJob that runs
// `greensched deschedule` against the extender's Service. TestHelmChart calls
// checkDescheduler on each rendering; TestHelmChartDescheduler renders the cases no values
// file of tests/helm holds: certificates given as PEM values, plain HTTP to the extender, and
// the combinations the chart refuses.
//
// Needs a helm binary: $HELM (tests/helm/build.sh builds it); skipped without it.
package manifest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// deschedulerOn: whether the values file turns the descheduler on (the chart's default is
// off).
func deschedulerOn(t *testing.T, valuesFile string) bool {
	t.Helper()
	if valuesFile == "" {
		return false
	}
	text, err := os.ReadFile(valuesFile)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Descheduler struct {
			Enabled bool `json:"enabled"`
		} `json:"descheduler"`
	}
	if err := yaml.Unmarshal(text, &v); err != nil {
		t.Fatalf("%s: %v", valuesFile, err)
	}
	return v.Descheduler.Enabled
}

// deschedulerRules are the only rights the descheduler has: read a pod again before its
// eviction, and evict it.
var deschedulerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
}

// checkDescheduler: off, nothing of the descheduler is rendered (nil is returned). On, one
// CronJob runs `greensched deschedule` with --json (its log is the record) against the
// extender's Service, over HTTPS with the client certificate and the CA it mounts when
// tlsOn, as non-root with a read-only root filesystem and no capabilities; its
// ServiceAccount is bound to one ClusterRole, of exactly get on pods and create on
// pods/eviction, and to nothing else. Generated certificates chain: the descheduler's to the
// extender's client CA, the extender's to the CA the descheduler trusts.
func checkDescheduler(t *testing.T, r *rendered, on bool) *batchv1.CronJob {
	t.Helper()
	if !on {
		if n := r.components["descheduler"]; n != 0 || len(r.cronJobs) != 0 {
			t.Errorf("the descheduler is off, yet %d objects of it and %d CronJobs are rendered", n, len(r.cronJobs))
		}
		return nil
	}
	if len(r.cronJobs) != 1 {
		t.Fatalf("the descheduler is on: want one CronJob, got %d", len(r.cronJobs))
	}
	var cj batchv1.CronJob
	for _, c := range r.cronJobs {
		cj = c
	}
	if cj.Labels["app.kubernetes.io/component"] != "descheduler" ||
		cj.Spec.JobTemplate.Spec.Template.Labels["app.kubernetes.io/component"] != "descheduler" {
		t.Errorf("CronJob %s: not labelled as the descheduler", cj.Name)
	}
	if cj.Spec.Schedule == "" || cj.Spec.ConcurrencyPolicy != batchv1.ForbidConcurrent {
		t.Errorf("CronJob %s: want a schedule and concurrencyPolicy Forbid, got %q and %q", cj.Name, cj.Spec.Schedule, cj.Spec.ConcurrencyPolicy)
	}
	if b := cj.Spec.JobTemplate.Spec.BackoffLimit; b == nil || *b != 0 {
		t.Errorf("CronJob %s: a failed run must not be retried (backoffLimit 0)", cj.Name)
	}
	spec := cj.Spec.JobTemplate.Spec.Template.Spec
	if spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("CronJob %s: restartPolicy %q, want Never", cj.Name, spec.RestartPolicy)
	}
	if spec.AutomountServiceAccountToken != nil && !*spec.AutomountServiceAccountToken {
		t.Errorf("CronJob %s: the ServiceAccount token is its API access; it must be mounted", cj.Name)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("CronJob %s: want one container, got %d", cj.Name, len(spec.Containers))
	}
	c := spec.Containers[0]
	if !slices.Equal(c.Command, []string{"/usr/local/bin/greensched", "deschedule"}) {
		t.Errorf("CronJob %s: command %v, want greensched deschedule", cj.Name, c.Command)
	}
	sc := c.SecurityContext
	if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
		t.Errorf("CronJob %s: must run as non-root", cj.Name)
	}
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("CronJob %s: want a read-only root filesystem and all capabilities dropped", cj.Name)
	}

	// The extender's Service, over TLS when the extender serves it.
	extender := r.deployment(t, "extender")
	svc := r.serviceOf(t, podsOf(extender))
	tlsOn := !hasArg(extender.Spec.Template.Spec.Containers[0].Args, "--insecure")
	scheme := "http"
	if tlsOn {
		scheme = "https"
	}
	want := fmt.Sprintf("%s://%s.%s.svc:%d", scheme, svc.Name, svc.Namespace, svc.Spec.Ports[0].Port)
	if got := flagValue(c.Args, "--server"); got != want {
		t.Errorf("CronJob %s: --server=%s, want the extender's Service %s", cj.Name, got, want)
	}
	if !hasArg(c.Args, "--budget") || !hasArg(c.Args, "--json") {
		t.Errorf("CronJob %s: want --budget and --json (the log is the record), args %v", cj.Name, c.Args)
	}
	if hasArg(c.Args, "--record") || hasArg(c.Args, "--journal") {
		t.Errorf("CronJob %s: a --record file in the pod is lost with it; args %v", cj.Name, c.Args)
	}
	tlsFlags := []string{"--server-ca", "--client-cert", "--client-key"}
	if tlsOn {
		mounted := secretFiles(spec, 0)
		for _, flag := range tlsFlags {
			if f := flagValue(c.Args, flag); f == "" || !mounted[f] {
				t.Errorf("CronJob %s: %s=%q is not a file it mounts (mounted: %v)", cj.Name, flag, f, mounted)
			}
		}
		checkDeschedulerCertificate(t, r, extender.Spec.Template.Spec, spec, want)
	} else {
		for _, flag := range tlsFlags {
			if hasArg(c.Args, flag) {
				t.Errorf("CronJob %s: %s with an extender on plain HTTP", cj.Name, flag)
			}
		}
	}

	// RBAC: one ClusterRole bound to its ServiceAccount, with exactly its two rules.
	sa := spec.ServiceAccountName
	bindsSA := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == namespace {
				return true
			}
		}
		return false
	}
	var roles []string
	for _, b := range r.clusterBindings {
		if bindsSA(b.Subjects) {
			roles = append(roles, b.RoleRef.Name)
			if b.RoleRef.Kind != "ClusterRole" {
				t.Errorf("ClusterRoleBinding %s: binds a %s", b.Name, b.RoleRef.Kind)
			}
		}
	}
	for _, b := range r.bindings {
		if bindsSA(b.Subjects) {
			t.Errorf("RoleBinding %s/%s gives the descheduler more rights", b.Namespace, b.Name)
		}
	}
	if len(roles) != 1 {
		t.Fatalf("ServiceAccount %s: want one ClusterRoleBinding, got roles %v", sa, roles)
	}
	found := false
	for _, cr := range r.clusterRoles {
		if cr.Name != roles[0] {
			continue
		}
		found = true
		if got, want := ruleText(t, cr.Rules), ruleText(t, slices.Clone(deschedulerRules)); got != want {
			t.Errorf("ClusterRole %s grants:\n%s\nwant exactly:\n%s", cr.Name, got, want)
		}
	}
	if !found {
		t.Errorf("ClusterRole %s (bound to %s) is not rendered", roles[0], sa)
	}
	return &cj
}

// checkDeschedulerCertificate: where the chart rendered both Secrets (generated or from PEM
// values), the descheduler's certificate is one the extender's client CA accepts for a
// client, and the extender's certificate one the descheduler's CA accepts for the host of
// --server.
func checkDeschedulerCertificate(t *testing.T, r *rendered, extender, desched corev1.PodSpec, server string) {
	t.Helper()
	secretOf := func(spec corev1.PodSpec) (corev1.Secret, bool) {
		for _, v := range spec.Volumes {
			if v.Secret != nil {
				s, ok := r.secrets[v.Secret.SecretName]
				return s, ok
			}
		}
		return corev1.Secret{}, false
	}
	es, ok1 := secretOf(extender)
	ds, ok2 := secretOf(desched)
	if !ok1 || !ok2 {
		return // existing Secrets: nothing to read
	}
	pool := func(pemText []byte) *x509.CertPool {
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(pemText) {
			return nil
		}
		return p
	}
	leaf := func(pemText []byte) *x509.Certificate {
		b, _ := pem.Decode(pemText)
		if b == nil {
			return nil
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil
		}
		return c
	}
	clientCA, serverCA := pool(es.Data["client-ca.crt"]), pool(ds.Data["ca.crt"])
	clientCert, serverCert := leaf(ds.Data["tls.crt"]), leaf(es.Data["tls.crt"])
	if clientCA == nil || serverCA == nil || clientCert == nil || serverCert == nil {
		t.Logf("the certificates are not PEM (placeholder values?): not chained")
		return
	}
	if _, err := clientCert.Verify(x509.VerifyOptions{Roots: clientCA, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("Secret %s: the extender's client CA does not accept the descheduler's certificate: %v", ds.Name, err)
	}
	u, err := url.Parse(server)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serverCert.Verify(x509.VerifyOptions{Roots: serverCA, DNSName: u.Hostname()}); err != nil {
		t.Errorf("Secret %s: the descheduler's CA does not accept the extender's certificate for %s: %v", es.Name, u.Hostname(), err)
	}
}

// helmTemplateSet is `helm template gs` of the chart with --set arguments (--set-file for
// one of the form @key=path); it returns the output, or the error's message.
func helmTemplateSet(t *testing.T, helm string, set ...string) (string, error) {
	t.Helper()
	args := []string{"template", "gs", filepath.Join(repoDir(), "deploy", "helm", "greensched"),
		"--namespace", namespace}
	for _, s := range set {
		if f, ok := strings.CutPrefix(s, "@"); ok {
			args = append(args, "--set-file", f)
		} else {
			args = append(args, "--set", s)
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%v: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

func TestHelmChartDescheduler(t *testing.T) {
	helm := os.Getenv("HELM")
	if helm == "" {
		t.Skip("HELM is not set (tests/helm/build.sh builds helm)")
	}
	t.Run("generated", func(t *testing.T) {
		out, err := helmTemplateSet(t, helm, "descheduler.enabled=true")
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, out)
		checkChart(t, r, existingNames(t, ""), true)
	})
	t.Run("pem-values", func(t *testing.T) {
		// The extender's, kube-scheduler's and the descheduler's certificates as PEM values,
		// from one CA: the chart makes the three Secrets, and the chains hold.
		dir := t.TempDir()
		ca := newCert(t, "test CA", nil, nil)
		host := fmt.Sprintf("gs-greensched-extender.%s.svc", namespace)
		files := map[string][]byte{
			"ca.crt": ca.certPEM,
		}
		for name, c := range map[string]*testCert{
			"extender":    newCert(t, host, []string{host}, ca),
			"scheduler":   newCert(t, "scheduler", nil, ca),
			"descheduler": newCert(t, "descheduler", nil, ca),
		} {
			files[name+".crt"], files[name+".key"] = c.certPEM, c.keyPEM
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		f := func(name string) string { return filepath.Join(dir, name) }
		out, err := helmTemplateSet(t, helm, "descheduler.enabled=true",
			"@extender.tls.cert="+f("extender.crt"), "@extender.tls.key="+f("extender.key"),
			"@extender.tls.clientCA="+f("ca.crt"),
			"@scheduler.tls.cert="+f("scheduler.crt"), "@scheduler.tls.key="+f("scheduler.key"),
			"@scheduler.tls.serverCA="+f("ca.crt"),
			"@descheduler.tls.cert="+f("descheduler.crt"), "@descheduler.tls.key="+f("descheduler.key"),
			"@descheduler.tls.serverCA="+f("ca.crt"))
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, out)
		checkChart(t, r, existingNames(t, ""), true)
		if _, ok := r.secrets["gs-greensched-descheduler-tls"]; !ok {
			t.Errorf("the chart did not make the descheduler's Secret from descheduler.tls")
		}
	})
	t.Run("plain-http", func(t *testing.T) {
		out, err := helmTemplateSet(t, helm, "descheduler.enabled=true",
			"extender.tls.enabled=false", "extender.insecure=true")
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, out)
		checkReferences(t, r, existingNames(t, ""))
		cj := checkDescheduler(t, r, true)
		if v := cj.Spec.JobTemplate.Spec.Template.Spec.Volumes; len(v) != 0 {
			t.Errorf("CronJob %s: volumes %v with an extender on plain HTTP", cj.Name, v)
		}
		if n := r.components["descheduler"]; n != 4+1 { // SA, ClusterRole, binding, CronJob; NetworkPolicy
			t.Errorf("want 5 objects of the descheduler (no Secret), got %d", n)
		}
	})
	for _, c := range []struct {
		name string
		set  []string
		want string
	}{
		{"without-extender", []string{"descheduler.enabled=true", "extender.enabled=false"},
			"descheduler.enabled needs extender.enabled"},
		{"extender-tls-given", []string{"descheduler.enabled=true", "extender.tls.existingSecret=x",
			"scheduler.tls.existingSecret=y"}, "descheduler.tls: the extender's certificate is given"},
		{"descheduler-tls-given", []string{"descheduler.enabled=true", "descheduler.tls.existingSecret=y"},
			"the descheduler's client certificate is given (descheduler.tls)"},
		{"both-sources", []string{"descheduler.enabled=true", "extender.tls.existingSecret=x",
			"scheduler.tls.existingSecret=y", "descheduler.tls.existingSecret=z", "descheduler.tls.cert=c"},
			"descheduler.tls: give either existingSecret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := helmTemplateSet(t, helm, c.set...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("helm template --set %v: want the error %q, got %v", c.set, c.want, err)
			}
		})
	}
}

// testCert is a certificate and its key, PEM.
type testCert struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
	keyPEM  []byte
}

// newCert makes a CA (parent nil) or a leaf for servers and clients that parent signs.
func newCert(t *testing.T, cn string, dnsNames []string, parent *testCert) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dnsNames,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	signer, signerKey := tmpl, key
	if parent == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	} else {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &testCert{cert, key,
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}
}
