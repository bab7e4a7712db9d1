package main

// greensched on the manager as the chart deploy/helm/greensched installs it: `helm template`
// renders the chart with tests/multikueue/chart-values.yaml and a values file of the run (the
// fleet, the workers' API servers and reader tokens, dispatch's certificate, the scenario's
// replicas and timeouts). The RBAC objects of a component are applied as rendered, and each
// Deployment's container runs here as processes with the command, args and env the chart
// renders. What its pod would mount is written to files: Secrets and ConfigMaps as rendered,
// claims as folders. Only what must differ on one machine is rewritten, and only where the
// caller says so: paths under the pod's mounts (in the command and args, and in the mounted
// JSON and YAML files) become those files' paths here; listen and service addresses (pod IPs,
// Service names, fixed ports) become 127.0.0.1 and free ports (argv's `set`); the image's
// entrypoint becomes the binary built here. Every other arg is passed as rendered, so a bad
// flag in the chart fails the test. The chart is rendered this way for the manager (main.go)
// and for each worker (cluster.go).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// rendering is one `helm template` output.
type rendering struct {
	namespace string
	objs      []*unstructured.Unstructured
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

// readObjects reads the objects of a multi-document YAML file (decodeObjects).
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return decodeObjects(path, text)
}

// decodeObjects reads the objects of a multi-document YAML text (comment-only documents are
// skipped).
func decodeObjects(where string, text []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range documentSeparator.Split(string(text), -1) {
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", where, i+1, err)
		}
		if s := strings.TrimSpace(string(data)); s == "null" || s == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", where, i+1, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// renderChart runs `helm template RELEASE CHART --namespace NAMESPACE -f VALUES...`.
func renderChart(helm, chart, release, namespace string, values ...string) (*rendering, error) {
	args := []string{"template", release, chart, "--namespace", namespace}
	for _, v := range values {
		args = append(args, "-f", v)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(helm, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", helm, strings.Join(args, " "), err, stderr.String())
	}
	objs, err := decodeObjects("helm template "+chart, out)
	if err != nil {
		return nil, err
	}
	return &rendering{namespace: namespace, objs: objs}, nil
}

func (r *rendering) get(kind, name string) *unstructured.Unstructured {
	for _, o := range r.objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// component returns the rendered objects of the given kinds labelled as the component's
// (app.kubernetes.io/component).
func (r *rendering) component(component string, kinds ...string) []client.Object {
	var out []client.Object
	for _, o := range r.objs {
		for _, k := range kinds {
			if o.GetKind() == k && o.GetLabels()["app.kubernetes.io/component"] == component {
				out = append(out, o)
			}
		}
	}
	return out
}

// deployment is the component's only Deployment.
func (r *rendering) deployment(component string) (*appsv1.Deployment, error) {
	var found []*appsv1.Deployment
	for _, o := range r.objs {
		if o.GetKind() != "Deployment" || o.GetLabels()["app.kubernetes.io/component"] != component {
			continue
		}
		data, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		d := &appsv1.Deployment{}
		if err := json.Unmarshal(data, d); err != nil {
			return nil, fmt.Errorf("Deployment %s: %w", o.GetName(), err)
		}
		found = append(found, d)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("the chart renders %d Deployments of component %s, expected 1", len(found), component)
	}
	return found[0], nil
}

// container is a rendered Deployment's container, runnable here.
type container struct {
	deployment     string
	replicas       int
	serviceAccount string
	command        []string // the binary built here, then the rendered command's other words
	args           []string // $(VAR) expanded, paths under the mounts rewritten (so is command)
	env            []string
	mounts         []mount // longest path first
}

type mount struct{ path, dir string }

// local is where a path in the pod lies here, if it is under one of its mounts.
func (c *container) local(p string) (string, bool) {
	for _, m := range c.mounts {
		if p == m.path {
			return m.dir, true
		}
		if strings.HasPrefix(p, m.path+"/") {
			return filepath.Join(m.dir, strings.TrimPrefix(p, m.path+"/")), true
		}
	}
	return p, false
}

// rewriteArg rewrites a path under the mounts, alone or as the value of --flag=PATH.
func (c *container) rewriteArg(a string) string {
	if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") {
		if p, ok := c.local(value); ok {
			return name + "=" + p
		}
		return a
	}
	p, _ := c.local(a)
	return p
}

// rewriteFile rewrites the strings of a mounted JSON or YAML document that are paths under
// the mounts (other files are left as they are).
func (c *container) rewriteFile(name string, data []byte) ([]byte, error) {
	switch filepath.Ext(name) {
	case ".json":
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return json.MarshalIndent(c.rewriteValue(v), "", "  ")
	case ".yaml", ".yml":
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return yaml.Marshal(c.rewriteValue(v))
	}
	return data, nil
}

// rewriteValue rewrites the strings of a decoded document that are paths under the mounts.
func (c *container) rewriteValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = c.rewriteValue(e)
		}
	case []any:
		for i, e := range x {
			x[i] = c.rewriteValue(e)
		}
	case string:
		p, _ := c.local(x)
		return p
	}
	return v
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(NAME) as Kubernetes does in command, args and env values (a name not
// defined is left as it is).
func expand(s string, vars map[string]string) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := vars[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

// runnable makes the only container of the component's Deployment runnable here, with
// `binary` for the image's entrypoint (the first word of its command, or the whole command
// where the chart gives none). Its mounts are written under dir: a claim is the folder
// `claims` names for it, else a new one under dir.
func (r *rendering) runnable(component, binary, dir string, claims map[string]string) (*container, error) {
	return r.runnableContainer(component, "", binary, dir, claims)
}

// runnableContainer is runnable for the container `name` of the component's Deployment ("":
// its only one; a pod of several containers shares its volumes, so a claim's folder is the
// same for each).
func (r *rendering) runnableContainer(component, name, binary, dir string, claims map[string]string) (*container, error) {
	d, err := r.deployment(component)
	if err != nil {
		return nil, err
	}
	spec := d.Spec.Template.Spec
	if len(spec.InitContainers) != 0 || (name == "" && len(spec.Containers) != 1) {
		return nil, fmt.Errorf("Deployment %s: %d containers and %d init containers, expected one container",
			d.Name, len(spec.Containers), len(spec.InitContainers))
	}
	ct := spec.Containers[0]
	if name != "" {
		found := false
		for _, x := range spec.Containers {
			if x.Name == name {
				ct, found = x, true
			}
		}
		if !found {
			return nil, fmt.Errorf("Deployment %s has no container %s", d.Name, name)
		}
	}
	c := &container{deployment: d.Name, replicas: 1, serviceAccount: spec.ServiceAccountName}
	if d.Spec.Replicas != nil {
		c.replicas = int(*d.Spec.Replicas)
	}

	// The mounts, then their files (a mounted JSON file may name paths under other mounts).
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	type content struct {
		dir   string
		files map[string][]byte
	}
	var contents []content
	for _, vm := range ct.VolumeMounts {
		v, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("Deployment %s: volume %s is mounted but not defined", d.Name, vm.Name)
		}
		vdir := filepath.Join(dir, "volumes", vm.Name)
		switch {
		case v.Secret != nil:
			files, err := r.volumeFiles("Secret", v.Secret.SecretName, v.Secret.Items)
			if err != nil {
				return nil, fmt.Errorf("Deployment %s: volume %s: %w", d.Name, vm.Name, err)
			}
			contents = append(contents, content{vdir, files})
		case v.ConfigMap != nil:
			files, err := r.volumeFiles("ConfigMap", v.ConfigMap.Name, v.ConfigMap.Items)
			if err != nil {
				return nil, fmt.Errorf("Deployment %s: volume %s: %w", d.Name, vm.Name, err)
			}
			contents = append(contents, content{vdir, files})
		case v.PersistentVolumeClaim != nil:
			if c := claims[v.PersistentVolumeClaim.ClaimName]; c != "" {
				vdir = c
			} else {
				vdir = filepath.Join(dir, "claims", v.PersistentVolumeClaim.ClaimName)
			}
		case v.EmptyDir != nil:
		default:
			return nil, fmt.Errorf("Deployment %s: volume %s: a kind of volume the test does not provide", d.Name, vm.Name)
		}
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return nil, err
		}
		c.mounts = append(c.mounts, mount{path: strings.TrimSuffix(vm.MountPath, "/"),
			dir: filepath.Join(vdir, vm.SubPath)})
	}
	sort.SliceStable(c.mounts, func(i, j int) bool { return len(c.mounts[i].path) > len(c.mounts[j].path) })
	for _, cf := range contents {
		for name, data := range cf.files {
			if data, err = c.rewriteFile(name, data); err != nil {
				return nil, fmt.Errorf("Deployment %s: %s: %w", d.Name, name, err)
			}
			path := filepath.Join(cf.dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, err
			}
			writeFile(path, data)
		}
	}

	// The env, as the kubelet sets it: literal values ($(VAR) of earlier ones expanded), and the
	// pod's fields it can know here.
	vars := map[string]string{}
	for _, ev := range ct.Env {
		value := expand(ev.Value, vars)
		if ev.ValueFrom != nil {
			f := ev.ValueFrom.FieldRef
			switch {
			case f != nil && f.FieldPath == "metadata.namespace":
				value = d.Namespace
			case f != nil && f.FieldPath == "status.podIP":
				value = "127.0.0.1"
			default:
				return nil, fmt.Errorf("Deployment %s: env %s: a source the test does not provide", d.Name, ev.Name)
			}
		}
		vars[ev.Name] = value
		c.env = append(c.env, ev.Name+"="+value)
	}
	if len(ct.EnvFrom) > 0 {
		return nil, fmt.Errorf("Deployment %s: envFrom, which the test does not provide", d.Name)
	}
	c.command = []string{binary}
	if len(ct.Command) > 0 {
		for _, w := range ct.Command[1:] {
			c.command = append(c.command, c.rewriteArg(expand(w, vars)))
		}
	}
	for _, a := range ct.Args {
		c.args = append(c.args, c.rewriteArg(expand(a, vars)))
	}
	return c, nil
}

// volumeFiles are the files of a Secret or ConfigMap volume: its items, or every key.
func (r *rendering) volumeFiles(kind, name string, items []corev1.KeyToPath) (map[string][]byte, error) {
	o := r.get(kind, name)
	if o == nil {
		return nil, fmt.Errorf("%s %s is not rendered", kind, name)
	}
	keys := map[string][]byte{}
	data, _, _ := unstructured.NestedStringMap(o.Object, "data")
	for k, v := range data {
		if kind == "Secret" {
			b, err := base64.StdEncoding.DecodeString(v)
			if err != nil {
				return nil, fmt.Errorf("%s %s: key %s: %w", kind, name, k, err)
			}
			keys[k] = b
		} else {
			keys[k] = []byte(v)
		}
	}
	stringData, _, _ := unstructured.NestedStringMap(o.Object, "stringData")
	for k, v := range stringData {
		keys[k] = []byte(v)
	}
	if len(items) == 0 {
		return keys, nil
	}
	files := map[string][]byte{}
	for _, it := range items {
		v, ok := keys[it.Key]
		if !ok {
			return nil, fmt.Errorf("%s %s has no key %s", kind, name, it.Key)
		}
		files[it.Path] = v
	}
	return files, nil
}

// flag is the value of --name=VALUE among the container's command and args (after the
// rewrites).
func (c *container) flag(name string) (string, bool) {
	for _, a := range append(append([]string(nil), c.command[1:]...), c.args...) {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// argv is the container's command line with the flags of `set` given new values (each must be
// among the rendered command's words or args, as --name=VALUE) and `extra` appended.
func (c *container) argv(set map[string]string, extra ...string) ([]string, error) {
	out := []string{c.command[0]}
	done := map[string]bool{}
	for _, a := range append(append([]string(nil), c.command[1:]...), c.args...) {
		if name, _, ok := strings.Cut(a, "="); ok {
			if v, ok := set[name]; ok {
				a, done[name] = name+"="+v, true
			}
		}
		out = append(out, a)
	}
	for name := range set {
		if !done[name] {
			return nil, fmt.Errorf("Deployment %s: the chart renders no %s=VALUE (args %v)", c.deployment, name, c.args)
		}
	}
	return append(out, extra...), nil
}
