package manifest

// The chart's forecast component: `greensched forecast serve` as a second container of
// dispatch's pod, on the pod's loopback, reading the zones' series from dispatch's data
// folder, and dispatch's config pointing the clusters that name a forecastZone at it.

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// forecastContainer is dispatch's container named forecast, or nil.
func forecastContainer(t *testing.T, r *rendered) *corev1.Container {
	t.Helper()
	d := r.deployment(t, "dispatch")
	for i, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "forecast" {
			return &d.Spec.Template.Spec.Containers[i]
		}
	}
	return nil
}

// dispatchClusters is the clusters object of dispatch's rendered config.
func dispatchClusters(t *testing.T, r *rendered) map[string]map[string]any {
	t.Helper()
	var config struct {
		Clusters map[string]map[string]any `json:"clusters"`
	}
	text := r.configMaps["gs-greensched-dispatch"].Data["dispatch.json"]
	if err := json.Unmarshal([]byte(text), &config); err != nil {
		t.Fatalf("dispatch.json: %v\n%s", err, text)
	}
	return config.Clusters
}

func TestHelmChartForecast(t *testing.T) {
	helm := os.Getenv("HELM")
	if helm == "" {
		t.Skip("HELM is not set (tests/helm/build.sh builds helm)")
	}
	t.Run("off", func(t *testing.T) {
		out, err := helmTemplateSet(t, helm)
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, out)
		if n := len(r.deployment(t, "dispatch").Spec.Template.Spec.Containers); n != 1 {
			t.Errorf("forecast is off by default, yet dispatch's pod has %d containers", n)
		}
	})
	t.Run("on", func(t *testing.T) {
		out, err := helmTemplateSet(t, helm, "forecast.enabled=true",
			"dispatch.clusters.gb.forecastZone=GB", "dispatch.clusters.de-lu.forecastZone=DE-LU",
			"dispatch.clusters.us.carbonForecast.url=http://sdk:8080/emissions/forecasts/current?location=westus")
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, out)
		checkChart(t, r, existingNames(t, ""), false)
		c := forecastContainer(t, r)
		if c == nil {
			t.Fatal("forecast.enabled: dispatch's pod has no forecast container")
		}
		if !slices.Equal(c.Command, []string{"/usr/local/bin/greensched", "forecast", "serve"}) {
			t.Errorf("forecast: command %v, want greensched forecast serve", c.Command)
		}
		for flag, want := range map[string]string{
			"--listen": "127.0.0.1:8095", "--zones": "DE-LU,GB", "--data-dir": "/data",
			"--model": "/usr/local/share/greensched/models/forecast/carbon.ubj",
		} {
			if got := flagValue(c.Args, flag); got != want {
				t.Errorf("forecast: %s=%q, want %q (args %v)", flag, got, want, c.Args)
			}
		}
		for _, flag := range []string{"--insecure", "--tls-cert", "--auth-token-file"} {
			if hasArg(c.Args, flag) {
				t.Errorf("forecast listens on loopback, yet has %s: %v", flag, c.Args)
			}
		}
		if len(c.Ports) != 0 {
			t.Errorf("forecast exposes ports %v; it is for dispatch, in its pod, only", c.Ports)
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].Name != "data" || c.VolumeMounts[0].MountPath != "/data" ||
			!c.VolumeMounts[0].ReadOnly {
			t.Errorf("forecast: want only the data folder at /data, read-only; got %v", c.VolumeMounts)
		}
		sc := c.SecurityContext
		if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("forecast: want a read-only root filesystem and no privilege escalation, got %+v", sc)
		}
		clusters := dispatchClusters(t, r)
		for name, zone := range map[string]string{"gb": "GB", "de-lu": "DE-LU"} {
			f, _ := clusters[name]["carbon_forecast"].(map[string]any)
			want := "http://127.0.0.1:8095/emissions/forecasts/current?location=" + zone
			if f["url"] != want || f["format"] != "carbon-aware-sdk" {
				t.Errorf("dispatch's clusters.%s.carbon_forecast = %v, want url %s, format carbon-aware-sdk", name, f, want)
			}
		}
		if f, _ := clusters["us"]["carbon_forecast"].(map[string]any); !strings.HasPrefix(f["url"].(string), "http://sdk:8080/") {
			t.Errorf("a cluster's own carbonForecast is kept beside forecastZone's: %v", f)
		}
	})
	t.Run("model-in-data-and-port", func(t *testing.T) {
		out, err := helmTemplateSet(t, helm, "forecast.enabled=true", "forecast.model=models/mine.ubj",
			"forecast.port=9000", "dispatch.clusters.gb.forecastZone=GB")
		if err != nil {
			t.Fatal(err)
		}
		r := decode(t, out)
		c := forecastContainer(t, r)
		if c == nil || flagValue(c.Args, "--model") != "/data/models/mine.ubj" || flagValue(c.Args, "--listen") != "127.0.0.1:9000" {
			t.Fatalf("forecast: want --model under /data and --listen on port 9000, got %v", c)
		}
		for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
			// The kubelet cannot reach a loopback listener: the probes ask from inside.
			if p == nil || p.Exec == nil || len(p.Exec.Command) != 3 ||
				!strings.Contains(p.Exec.Command[2], "/dev/tcp/127.0.0.1/9000 ") ||
				!strings.Contains(p.Exec.Command[2], "GET /healthz") {
				t.Errorf("forecast: want exec probes of GET /healthz on 127.0.0.1:9000, got %+v", p)
			}
		}
		f, _ := dispatchClusters(t, r)["gb"]["carbon_forecast"].(map[string]any)
		if f["url"] != "http://127.0.0.1:9000/emissions/forecasts/current?location=GB" {
			t.Errorf("dispatch reads %v, not forecast's port", f)
		}
	})
	for _, c := range []struct {
		name string
		set  []string
		want string
	}{
		{"zone-without-forecast", []string{"dispatch.clusters.gb.forecastZone=GB"},
			"dispatch.clusters.gb.forecastZone needs forecast.enabled"},
		{"zone-and-url", []string{"forecast.enabled=true", "dispatch.clusters.gb.forecastZone=GB",
			"dispatch.clusters.gb.carbonForecast.url=http://sdk/x"}, "give carbonForecast or forecastZone, not both"},
		{"without-dispatch", []string{"forecast.enabled=true", "dispatch.enabled=false"},
			"forecast.enabled needs dispatch.enabled"},
		{"without-data", []string{"forecast.enabled=true", "dispatch.data.create=false"},
			"forecast.enabled needs dispatch's data folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := helmTemplateSet(t, helm, c.set...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("helm template --set %v: want the error %q, got %v", c.set, c.want, err)
			}
		})
	}
}
