// Checks deploy/sweep-indexed-job.yaml and deploy/sweep-merge-job.yaml: each document decodes
// strictly (an unknown or misspelt field is an error) into the Kubernetes v1 types; the sweep
// is an Indexed Job whose completions, parallelism and --shard count agree and whose shards
// write to their own /results/shard-$(JOB_COMPLETION_INDEX) on a shared claim; the merge Job
// names every shard once.
package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func deployDir() string {
	if d := os.Getenv("DEPLOY_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "deploy")
}

// documents decodes every YAML document of the file strictly, by kind.
func documents(t *testing.T, name string) (jobs []batchv1.Job, claims []corev1.PersistentVolumeClaim) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(deployDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(text), -1) {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%s: document %d: %v", name, i+1, err)
		}
		switch meta.Kind {
		case "Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(doc), &j); err != nil {
				t.Fatalf("%s: document %d: %v", name, i+1, err)
			}
			jobs = append(jobs, j)
		case "PersistentVolumeClaim":
			var c corev1.PersistentVolumeClaim
			if err := yaml.UnmarshalStrict([]byte(doc), &c); err != nil {
				t.Fatalf("%s: document %d: %v", name, i+1, err)
			}
			claims = append(claims, c)
		default:
			t.Fatalf("%s: document %d: unexpected kind %q", name, i+1, meta.Kind)
		}
	}
	return jobs, claims
}

func argValue(args []string, flag string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

func claimOf(t *testing.T, spec corev1.PodSpec, mount string) string {
	t.Helper()
	c := spec.Containers[0]
	for _, m := range c.VolumeMounts {
		if m.MountPath != mount {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.PersistentVolumeClaim != nil {
				return v.PersistentVolumeClaim.ClaimName
			}
		}
	}
	t.Fatalf("container %s mounts no claim at %s", c.Name, mount)
	return ""
}

func TestSweepAndMerge(t *testing.T) {
	jobs, claims := documents(t, "sweep-indexed-job.yaml")
	if len(jobs) != 1 || len(claims) != 1 {
		t.Fatalf("want one Job and one PersistentVolumeClaim, got %d and %d", len(jobs), len(claims))
	}
	job := jobs[0]
	if job.Spec.CompletionMode == nil || *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		t.Fatalf("completionMode is not Indexed")
	}
	if job.Spec.Completions == nil || job.Spec.Parallelism == nil {
		t.Fatalf("completions and parallelism must be set")
	}
	n := int(*job.Spec.Completions)
	if int(*job.Spec.Parallelism) > n || *job.Spec.Parallelism < 1 {
		t.Fatalf("parallelism %d must be in [1, completions %d]", *job.Spec.Parallelism, n)
	}
	spec := job.Spec.Template.Spec
	if len(spec.Containers) != 1 || spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("want one container and restartPolicy Never")
	}
	c := spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "simulate" {
		t.Fatalf("args must start with simulate, got %v", c.Args)
	}
	if shard, _ := argValue(c.Args, "--shard"); shard != fmt.Sprintf("$(JOB_COMPLETION_INDEX)/%d", n) {
		t.Fatalf("--shard is %q, want $(JOB_COMPLETION_INDEX)/%d (completions)", shard, n)
	}
	out, _ := argValue(c.Args, "--out")
	if out != "/results/shard-$(JOB_COMPLETION_INDEX)" {
		t.Fatalf("--out is %q, want /results/shard-$(JOB_COMPLETION_INDEX)", out)
	}
	declared := false
	for _, e := range c.Env {
		if e.Name == "JOB_COMPLETION_INDEX" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			declared = true
		}
	}
	if !declared {
		t.Fatalf("JOB_COMPLETION_INDEX is not declared from the completion-index annotation")
	}
	claim := claimOf(t, spec, "/results")
	if claim != claims[0].Name {
		t.Fatalf("the shards mount claim %q, the file defines %q", claim, claims[0].Name)
	}

	merges, _ := documents(t, "sweep-merge-job.yaml")
	if len(merges) != 1 {
		t.Fatalf("want one merge Job, got %d", len(merges))
	}
	m := merges[0].Spec.Template.Spec
	if claimOf(t, m, "/results") != claim {
		t.Fatalf("the merge Job mounts another claim than the shards")
	}
	args := m.Containers[0].Args
	if len(args) == 0 || args[0] != "merge" {
		t.Fatalf("the merge Job's args must start with merge, got %v", args)
	}
	var dirs []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			dirs = append(dirs, a)
		}
	}
	if len(dirs) != n {
		t.Fatalf("the merge Job names %d shard folders, the sweep has %d", len(dirs), n)
	}
	for i, d := range dirs {
		if want := fmt.Sprintf("/results/shard-%d", i); d != want {
			t.Fatalf("merge folder %d is %q, want %q", i, d, want)
		}
	}
}
