package main

// The carbon forecasts dispatch plans on: greensched's own, from `greensched forecast serve`,
// the chart's forecast container in dispatch's pod (forecast.enabled in chart-values.yaml),
// which dispatch reads for every cluster (dispatch.clusters.<name>.forecastZone). The pod's
// data claim stands for one an operator filled: the shared data (linked) and a carbon model
// trained here on the data before the replay's start (the shipped model saw all of 2023, so
// forecast serve would refuse it: no look-ahead). The checks, so that a dispatch that read the
// fleet file's CSV series instead fails the test: before any Job, every worker's carbon signal
// comes from forecast serve; after the run, every decision in the journal names forecast
// serve as every worker's carbon source, forecast serve answered dispatch's reads while it
// ran, and each zone's forecasts were issued by the learned model.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The route dispatch reads (format carbon-aware-sdk) and forecast serve's count of its answers.
const forecastReadsMetric = `greensched_forecast_requests_total{route="/emissions/forecasts/current",code="200"}`

func (e *env) addForecastZone(zone string) {
	for _, z := range e.forecastZones {
		if z == zone {
			return
		}
	}
	e.forecastZones = append(e.forecastZones, zone)
}

// prepareDataClaim makes the folder the pod's data claim stands for: every entry of the
// shared data linked, and an empty models/ for trainForecastModel.
func (e *env) prepareDataClaim() error {
	e.dataDir = filepath.Join(e.work, "data-claim")
	entries, err := os.ReadDir(e.o.data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(e.dataDir, "models"), 0o755); err != nil {
		return err
	}
	for _, d := range entries {
		if d.Name() == "models" {
			continue
		}
		abs, err := filepath.Abs(filepath.Join(e.o.data, d.Name()))
		if err != nil {
			return err
		}
		if err := os.Symlink(abs, filepath.Join(e.dataDir, d.Name())); err != nil {
			return err
		}
	}
	return nil
}

// trainForecastModel trains models/carbon.ubj in the data claim (chart-values.yaml's
// forecast.model) on the run's zones with data until an hour before the replay's start
// (forecast serve starts just before its clock's origin, at a signal time a little before
// the start).
func (e *env) trainForecastModel() error {
	start, err := time.Parse(time.RFC3339, e.o.signalStart)
	if err != nil {
		return fmt.Errorf("-signal-start: %w", err)
	}
	until := start.Add(-time.Hour)
	t0 := time.Now()
	cmd := exec.Command(e.greensched, "forecast", "train", "--series", "carbon",
		"--zones", strings.Join(e.forecastZones, ","), "--data-dir", e.o.data,
		"--from", until.AddDate(0, 0, -77).Format(time.RFC3339), "--until", until.Format(time.RFC3339),
		"--trees", "30", "--out", filepath.Join(e.dataDir, "models"), "-q")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %w\n%s", cmd.Args, err, out)
	}
	logf("trained the carbon model of %v until %s in %.1f s", e.forecastZones, until.Format(time.RFC3339),
		time.Since(t0).Seconds())
	return nil
}

// addForecast makes the chart's forecast container runnable, on the replayed clock of the run
// (the same start, origin and speed as dispatch's --signal-*), appended to its args.
func (e *env) addForecast(chart *rendering, claims map[string]string) error {
	fc, err := chart.runnableContainer("dispatch", "forecast", e.greensched, filepath.Join(e.work, "forecast-pod"), claims)
	if err != nil {
		return fmt.Errorf("the chart's forecast container (forecast.enabled in chart-values.yaml): %w", err)
	}
	listen, ok := fc.flag("--listen")
	if !ok || !strings.HasPrefix(listen, "127.0.0.1:") {
		return fmt.Errorf("the chart's forecast container listens on %q, expected the pod's loopback", listen)
	}
	if zones, _ := fc.flag("--zones"); zones != strings.Join(sortedCopy(e.forecastZones), ",") {
		return fmt.Errorf("the chart's forecast container serves --zones=%s, the clusters name %v", zones, e.forecastZones)
	}
	e.forecastURL = "http://" + listen
	args, err := fc.argv(nil, "--clock-start="+e.o.signalStart,
		"--clock-origin="+e.origin.UTC().Format(time.RFC3339), fmt.Sprintf("--clock-speed=%g", e.o.speed))
	if err != nil {
		return err
	}
	e.forecast = e.procs.add("greensched-forecast", fc.env, args...)
	return nil
}

func sortedCopy(xs []string) []string {
	out := append([]string(nil), xs...)
	sort.Strings(out)
	return out
}

func (e *env) startForecast() error {
	if err := e.forecast.start(); err != nil {
		return err
	}
	if err := waitFor("forecast serve /healthz", 30*time.Second, httpOK(e.forecastURL+"/healthz")); err != nil {
		return err
	}
	reads, _, err := e.forecastReads()
	if err != nil {
		return err
	}
	e.forecastReadsBefore = reads
	return nil
}

// forecastReads is forecast serve's count of forecasts answered, and its /metrics.
func (e *env) forecastReads() (float64, string, error) {
	r, err := insecureHTTP.Get(e.forecastURL + "/metrics")
	if err != nil {
		return 0, "", err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, "", err
	}
	if r.StatusCode != 200 {
		return 0, "", fmt.Errorf("GET %s/metrics: HTTP %d", e.forecastURL, r.StatusCode)
	}
	var n float64
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, forecastReadsMetric+" "); ok {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, "", fmt.Errorf("forecast serve's /metrics: %q: %w", line, err)
			}
			n += x
		}
	}
	return n, string(body), nil
}

// waitForServedCarbon waits until dispatch's /v1/clusters gives every worker a carbon signal
// now from forecast serve.
func (e *env) waitForServedCarbon() error {
	return waitFor("every worker's carbon signal from forecast serve", 30*time.Second, func() (bool, error) {
		r, err := e.dispatchGet("/v1/clusters")
		if err != nil {
			return false, err
		}
		defer r.Body.Close()
		var body struct {
			Clusters []struct {
				Name         string   `json:"name"`
				CarbonSource string   `json:"carbon_source"`
				CarbonNow    *float64 `json:"carbon_now"`
				CarbonError  string   `json:"carbon_error"`
			} `json:"clusters"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			return false, fmt.Errorf("/v1/clusters: %w", err)
		}
		seen := map[string]bool{}
		for _, c := range body.Clusters {
			seen[c.Name] = true
			if !e.isWorker(c.Name) {
				continue
			}
			if !strings.HasPrefix(c.CarbonSource, e.forecastURL+"/") {
				return false, fmt.Errorf("%s: carbon from %s, not forecast serve (%s)", c.Name, c.CarbonSource, e.forecastURL)
			}
			if c.CarbonNow == nil {
				return false, fmt.Errorf("%s: no carbon signal yet: %s", c.Name, c.CarbonError)
			}
		}
		for _, w := range e.workers {
			if !seen[w.name] {
				return false, fmt.Errorf("/v1/clusters lists no %s", w.name)
			}
		}
		return true, nil
	})
}

func (e *env) isWorker(name string) bool {
	for _, w := range e.workers {
		if w.name == name {
			return true
		}
	}
	return false
}

// checkServedForecasts checks, after the run, that every decision named forecast serve as
// every worker's carbon source, that forecast serve answered dispatch's reads while the Jobs
// ran, and that each zone's forecasts came from the learned model.
func (e *env) checkServedForecasts() error {
	f, err := os.Open(e.journal)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	decisions := 0
	for line := 1; sc.Scan(); line++ {
		var r struct {
			Service struct {
				CarbonSources map[string]string `json:"carbon_sources"`
			} `json:"service"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s:%d: %w", e.journal, line, err)
		}
		for _, w := range e.workers {
			if src := r.Service.CarbonSources[w.name]; !strings.HasPrefix(src, e.forecastURL+"/") {
				return fmt.Errorf("%s:%d: %s's carbon source is %q, not forecast serve (%s)", e.journal, line, w.name,
					src, e.forecastURL)
			}
		}
		decisions++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if decisions == 0 {
		return fmt.Errorf("%s: no decision", e.journal)
	}
	reads, metrics, err := e.forecastReads()
	if err != nil {
		return err
	}
	if reads < e.forecastReadsBefore+float64(len(e.workers)) {
		return fmt.Errorf("forecast serve answered %g forecasts before dispatch started and %g after the run: "+
			"dispatch did not read its forecasts", e.forecastReadsBefore, reads)
	}
	for _, z := range e.forecastZones {
		if !strings.Contains(metrics, fmt.Sprintf(`greensched_forecast_issued_total{zone="%s",method="learned"} `, z)) {
			return fmt.Errorf("forecast serve issued no learned forecast of %s:\n%s", z, metrics)
		}
	}
	logf("forecast serve: %d decisions planned on its forecasts of %v; %g forecasts answered (%g before dispatch started)",
		decisions, e.forecastZones, reads, e.forecastReadsBefore)
	return nil
}
