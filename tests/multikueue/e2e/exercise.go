package main

// The run and its checks. Jobs are submitted to the manager at an even pace while the
// dispatcher (greensched-kueue) and the dispatch service are SIGKILLed and restarted, and the
// last worker's API server is stopped for a while; then every Job must finish, having run
// exactly once, in the worker the service chose for it, a deferred one inside its green window.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// decision is one line of the dispatch service's journal.
type decision struct {
	workload      string
	uid           string
	wall          time.Time
	cluster       string
	startAfterS   int64
	earliestStart time.Time
	mode          string
}

func readJournal(path string) ([]decision, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []decision
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var r struct {
			Pod     string `json:"pod"`
			Service struct {
				UID   string `json:"uid"`
				WallS int64  `json:"wall_s"`
				Reply struct {
					Clusters      []string `json:"clusters"`
					StartAfterS   int64    `json:"start_after_s"`
					EarliestStart string   `json:"earliest_start"`
					Mode          string   `json:"mode"`
				} `json:"reply"`
			} `json:"service"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if len(r.Service.Reply.Clusters) != 1 {
			return nil, fmt.Errorf("%s:%d: the answer names %d clusters", path, line, len(r.Service.Reply.Clusters))
		}
		es, err := time.Parse(time.RFC3339, r.Service.Reply.EarliestStart)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: earliest_start: %w", path, line, err)
		}
		name := r.Pod[strings.LastIndex(r.Pod, "/")+1:]
		out = append(out, decision{workload: name, uid: r.Service.UID, wall: time.Unix(r.Service.WallS, 0),
			cluster: r.Service.Reply.Clusters[0], startAfterS: r.Service.Reply.StartAfterS, earliestStart: es,
			mode: r.Service.Reply.Mode})
	}
	return out, sc.Err()
}

type fault struct {
	What    string  `json:"what"`
	AtS     float64 `json:"at_s"`
	BackInS float64 `json:"back_in_s"`
}

type result struct {
	Jobs             int     `json:"jobs"`
	LatencySensitive int     `json:"latency_sensitive"`
	Workers          int     `json:"workers"`
	NodesPerWorker   int     `json:"nodes_per_worker"`
	SignalSpeed      float64 `json:"signal_speed"`
	UpS              float64 `json:"bring_up_s"`
	SubmitS          float64 `json:"submit_s"`
	AllFinishedS     float64 `json:"all_finished_after_first_submit_s"`
	TotalS           float64 `json:"total_s"`
	SubmittedPerS    float64 `json:"submitted_per_s"`
	NominatedPerS    float64 `json:"nominated_per_s"`
	NominationP50S   float64 `json:"nomination_p50_s"`
	NominationP99S   float64 `json:"nomination_p99_s"`
	NominationMaxS   float64 `json:"nomination_max_s"`
	// MultiKueue's part: from the nomination to the pod running in the worker (jobs not
	// caught by the outage).
	NominatedToRunningP50S float64 `json:"nominated_to_running_p50_s"`
	NominatedToRunningP99S float64 `json:"nominated_to_running_p99_s"`
	Decisions              int     `json:"decisions"`
	ByCluster              any     `json:"jobs_by_cluster"`
	Deferred               int     `json:"deferred"`
	DeferredLateS          float64 `json:"deferred_nominated_after_window_open_max_s"`
	DeferredInOutage       int     `json:"deferred_delayed_by_the_outage"`
	DuringOutage           any     `json:"decisions_during_outage_by_cluster"`
	AfterOutage            any     `json:"decisions_after_outage_by_cluster"`
	CapacityOnly           int     `json:"capacity_only_decisions"`
	Faults                 []fault `json:"faults"`
	Lost                   int     `json:"lost"`
	RunTwice               int     `json:"run_more_than_once"`
	SlowestNominations     any     `json:"slowest_nominations"`
	// The deferred jobs nominated last after their window opened: when greensched's check
	// turned Ready and when it nominated, both from the window.
	SlowestReleases      any       `json:"slowest_window_releases"`
	Problems             []string  `json:"problems"`
	ProblemsLeftOut      int       `json:"problems_left_out"`
	NominationLatenciesS []float64 `json:"-"`
}

func (e *env) exercise(ctx context.Context, jobs []jobSpec, obs *observer) (*result, error) {
	o := e.o
	res := &result{Jobs: len(jobs), Workers: len(e.workers), NodesPerWorker: o.nodesPerWorker, SignalSpeed: o.speed}
	for _, j := range jobs {
		if j.ls {
			res.LatencySensitive++
		}
	}
	start := time.Now()
	since := func(t time.Time) float64 { return t.Sub(start).Seconds() }

	// Faults, on their own schedule.
	var faultsMu sync.Mutex
	down := e.downWorker()
	var outageFrom, restartAt, outageTo time.Time
	var wg sync.WaitGroup
	restart := func(what string, p *proc, health string) {
		at := time.Now()
		p.kill()
		back := time.Now()
		if err := p.start(); err != nil {
			logf("restarting %s: %v", what, err)
			return
		}
		if err := waitFor(what+" back", 60*time.Second, httpOK(health)); err != nil {
			logf("%v", err)
		}
		back = time.Now()
		faultsMu.Lock()
		res.Faults = append(res.Faults, fault{What: "SIGKILL " + what, AtS: since(at), BackInS: back.Sub(at).Seconds()})
		faultsMu.Unlock()
		logf("SIGKILL %s at %.1f s, serving again after %.2f s", what, since(at), back.Sub(at).Seconds())
	}
	controllerHealth := ""
	for i, a := range e.controllers.args {
		if strings.HasPrefix(a, "--health-probe-bind-address=") {
			controllerHealth = "http://" + strings.TrimPrefix(e.controllers.args[i], "--health-probe-bind-address=") + "/healthz"
		}
	}
	serviceHealth := e.dispatchURL + "/healthz"
	wg.Add(1)
	go func() {
		defer wg.Done()
		var events []event
		for k := 0; k < o.kills; k++ {
			events = append(events,
				event{time.Duration(10+20*k) * time.Second, func() { restart("dispatcher", e.controllers, controllerHealth) }},
				event{time.Duration(20+20*k) * time.Second, func() { restart("dispatch service", e.dispatch, serviceHealth) }})
		}
		if o.outage > 0 {
			stopped := make(chan struct{})
			events = append(events, event{o.outageAt, func() {
				faultsMu.Lock()
				outageFrom = time.Now()
				faultsMu.Unlock()
				go func() { // SIGTERM; it may take its time to go (the other faults go on)
					down.apiserver.stop()
					logf("%s's API server asked to stop at %.1f s, gone %.1f s later", down.name, since(outageFrom),
						time.Since(outageFrom).Seconds())
					close(stopped)
				}()
			}}, event{o.outageAt + o.outage, func() {
				<-stopped
				faultsMu.Lock()
				restartAt = time.Now()
				faultsMu.Unlock()
				if err := down.apiserver.start(); err != nil {
					logf("restarting %s's API server: %v", down.name, err)
				}
				_ = waitFor(down.name+" back", 60*time.Second, down.ready)
				faultsMu.Lock()
				outageTo = time.Now()
				res.Faults = append(res.Faults, fault{What: down.name + " API server down", AtS: since(outageFrom),
					BackInS: outageTo.Sub(outageFrom).Seconds()})
				faultsMu.Unlock()
				logf("%s's API server back at %.1f s", down.name, since(outageTo))
			}})
		}
		runEvents(ctx, start, events)
	}()

	// Submissions, evenly spread.
	submitted, err := e.submit(ctx, jobs, start)
	if err != nil {
		return res, err
	}
	res.SubmitS = since(time.Now())
	res.SubmittedPerS = float64(len(jobs)) / res.SubmitS
	wg.Wait()

	// Every Job must finish in the manager.
	deadline := 240 * time.Second
	err = obs.waitAllDone(submitted, deadline)
	res.AllFinishedS = since(time.Now())
	logf("all finished %.1f s after the first submission", res.AllFinishedS)
	// Let the last pod and Workload updates arrive.
	time.Sleep(2 * time.Second)

	decisions, jerr := readJournal(e.journal)
	if jerr != nil {
		return res, jerr
	}
	res.Decisions = len(decisions)
	e.check(res, jobs, submitted, obs, decisions, outageFrom, restartAt, outageTo, down.name, start)
	if err != nil {
		res.Problems = append([]string{err.Error()}, res.Problems...)
	}
	if len(res.Problems) > 0 {
		const show = 40
		if len(res.Problems) > show {
			res.ProblemsLeftOut = len(res.Problems) - show
			res.Problems = res.Problems[:show]
		}
		return res, fmt.Errorf("%d problems (result.json lists them; logs in %s)", len(res.Problems)+res.ProblemsLeftOut, e.procs.dir)
	}
	return res, nil
}

func (e *env) check(res *result, jobs []jobSpec, submitted map[string]time.Time, obs *observer,
	decisions []decision, outageFrom, restartAt, outageTo time.Time, downName string, start time.Time) {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	problem := func(format string, args ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, args...)) }
	byJob, podsOf := obs.byJob()
	decisionsOf := map[string][]decision{}
	for _, d := range decisions {
		decisionsOf[d.workload] = append(decisionsOf[d.workload], d)
	}
	byCluster := map[string]int{}
	window := time.Duration(3600/e.o.speed*float64(time.Second)) + 3*time.Second
	var firstNomination, lastNomination time.Time
	var toRun []float64
	type slowJob struct {
		Job        string  `json:"job"`
		NominateS  float64 `json:"nomination_s"`
		EligibleAt float64 `json:"eligible_at_s"`
	}
	var slow []slowJob
	type release struct {
		Job        string  `json:"job"`
		WindowAtS  float64 `json:"window_open_at_s"`
		ReadyS     float64 `json:"check_ready_after_s"`
		NominatedS float64 `json:"nominated_after_s"`
	}
	var releases []release
	since := func(t time.Time) float64 { return t.Sub(start).Seconds() }
	for name, reason := range obs.jobFailed {
		problem("job %s failed in the manager: %s", name, reason)
	}
	for _, j := range jobs {
		w := byJob[j.name]
		if w == nil {
			problem("job %s: no Workload seen in the manager", j.name)
			res.Lost++
			continue
		}
		if _, ok := obs.jobDone[j.name]; !ok {
			problem("job %s: not Complete in the manager", j.name)
			res.Lost++
		}
		if w.finishedAt.IsZero() {
			problem("job %s: Workload %s not Finished", j.name, w.name)
		}
		var ran []*podSeen
		workers := map[string]bool{}
		for _, p := range podsOf[j.name] {
			if !p.runningAt.IsZero() {
				ran = append(ran, p)
				workers[p.worker] = true
			}
		}
		if len(ran) == 0 {
			problem("job %s: no pod of it was seen running in any worker", j.name)
			continue
		}
		if len(ran) > 1 || len(workers) > 1 {
			where := []string{}
			for _, p := range ran {
				where = append(where, p.worker+"/"+p.name)
			}
			problem("job %s ran %d times: %v", j.name, len(ran), where)
			res.RunTwice++
		}
		pod := ran[0]
		byCluster[pod.worker]++
		if w.cluster != pod.worker {
			problem("job %s: ran in %s but the manager's Workload says %q", j.name, pod.worker, w.cluster)
		}
		// The answers standing when it was first and last nominated.
		standing := func(at time.Time) *decision {
			var d *decision
			for i := range decisionsOf[w.name] {
				if c := decisionsOf[w.name][i]; c.uid == w.uid && !c.wall.After(at.Add(time.Second)) {
					d = &decisionsOf[w.name][i]
				}
			}
			return d
		}
		d, first := standing(w.lastAt), standing(w.nominatedAt)
		if d == nil || first == nil {
			problem("job %s: no decision of the service in its journal before its nomination", j.name)
			continue
		}
		if len(w.nominated) != 1 || w.nominated[0] != first.cluster {
			problem("job %s: nominated %v, the service answered %s", j.name, w.nominated, first.cluster)
		}
		if w.nominations > 1 {
			problem("job %s: its nomination changed to %v", j.name, w.lastNominated)
		}
		if pod.worker != d.cluster {
			problem("job %s: ran in %s, the service answered %s", j.name, pod.worker, d.cluster)
		}
		if d.mode != "carbon" {
			res.CapacityOnly++
		}
		from := submitted[j.name]
		if first.startAfterS > 0 {
			res.Deferred++
			if !w.pendingSeen {
				problem("job %s: deferred %d s but its green-window check was never seen Pending", j.name, first.startAfterS)
			}
			if w.readyAt.Before(first.earliestStart.Add(-time.Second)) {
				problem("job %s: green window Ready at %s, before its start %s", j.name, w.readyAt.Format(time.RFC3339Nano), first.earliestStart)
			}
			if pod.runningAt.Before(first.earliestStart.Add(-time.Second)) {
				problem("job %s: started at %s, before its green window opened at %s", j.name,
					pod.runningAt.Format(time.RFC3339Nano), first.earliestStart.Format(time.RFC3339))
			}
			// greensched's part ends when it nominates the worker; MultiKueue's copy to the
			// worker and the worker's start follow (measured below, for every job).
			late := w.nominatedAt.Sub(first.earliestStart)
			releases = append(releases, release{j.name, since(first.earliestStart),
				w.readyAt.Sub(first.earliestStart).Seconds(), late.Seconds()})
			res.DeferredLateS = max(res.DeferredLateS, late.Seconds())
			// Measured from the window, not from when greensched marks the check Ready. A
			// window the outage keeps closed (its worker was away) is allowed an hour of signal.
			inOutage := first.cluster == downName && !outageFrom.IsZero() &&
				first.earliestStart.Before(outageTo) && pod.runningAt.After(outageFrom)
			allowed := e.o.maxWindowLate
			if inOutage {
				allowed = window
			}
			if w.nominatedAt.Before(first.earliestStart.Add(-time.Second)) || late > allowed {
				problem("job %s: nominated %.2f s after its green window opened (at most %s)",
					j.name, late.Seconds(), allowed)
			}
			if inOutage {
				res.DeferredInOutage++
			}
			if !w.readyAt.IsZero() {
				from = w.readyAt
			}
		}
		if w.nominatedAt.IsZero() {
			problem("job %s: its nomination was not seen", j.name)
			continue
		}
		res.NominationLatenciesS = append(res.NominationLatenciesS, w.nominatedAt.Sub(from).Seconds())
		slow = append(slow, slowJob{j.name, w.nominatedAt.Sub(from).Seconds(), since(from)})
		if w.nominations == 1 && !(d.cluster == downName && pod.runningAt.After(outageFrom) && w.nominatedAt.Before(outageTo)) {
			toRun = append(toRun, pod.runningAt.Sub(w.nominatedAt).Seconds())
		}
		if firstNomination.IsZero() || w.nominatedAt.Before(firstNomination) {
			firstNomination = w.nominatedAt
		}
		if w.nominatedAt.After(lastNomination) {
			lastNomination = w.nominatedAt
		}
	}
	res.ByCluster = byCluster
	sort.Slice(slow, func(a, b int) bool { return slow[a].NominateS > slow[b].NominateS })
	res.SlowestNominations = slow[:min(5, len(slow))]
	sort.Slice(releases, func(a, b int) bool { return releases[a].NominatedS > releases[b].NominatedS })
	res.SlowestReleases = releases[:min(5, len(releases))]
	res.NominatedToRunningP50S = percentile(toRun, 0.5)
	res.NominatedToRunningP99S = percentile(toRun, 0.99)
	if len(res.NominationLatenciesS) > 0 {
		res.NominationP50S = percentile(res.NominationLatenciesS, 0.50)
		res.NominationP99S = percentile(res.NominationLatenciesS, 0.99)
		res.NominationMaxS = percentile(res.NominationLatenciesS, 1)
		res.NominatedPerS = float64(len(res.NominationLatenciesS)) / lastNomination.Sub(start).Seconds()
	}
	// Over every job: the slowest included.
	if res.NominationP99S > e.o.maxNominationP99.Seconds() {
		problem("nomination p99 %.3f s exceeds %s", res.NominationP99S, e.o.maxNominationP99)
	}
	if res.NominationMaxS > e.o.maxNominationMax.Seconds() {
		problem("nomination max %.3f s exceeds %s", res.NominationMaxS, e.o.maxNominationMax)
	}
	if res.Lost > 0 || res.RunTwice > 0 {
		problem("%d jobs lost, %d run more than once", res.Lost, res.RunTwice)
	}
	if res.Deferred == 0 {
		problem("no job was deferred: the green window was not exercised")
	}
	// The outage: while the worker was away (after the service's next read of it), no decision
	// sent work there; after it came back, it got work again.
	if !outageFrom.IsZero() {
		during, after := map[string]int{}, map[string]int{}
		for _, d := range decisions {
			if d.wall.After(outageFrom.Add(3*time.Second)) && d.wall.Before(restartAt) {
				during[d.cluster]++
			}
			if d.wall.After(outageTo.Add(3 * time.Second)) {
				after[d.cluster]++
			}
		}
		res.DuringOutage, res.AfterOutage = during, after
		if during[downName] > 0 {
			problem("%d decisions sent work to %s while its API server was down", during[downName], downName)
		}
		if len(during) == 0 {
			problem("no decision was made while %s was down: the outage was not exercised", downName)
		}
		if after[downName] == 0 {
			problem("no work went to %s after it came back", downName)
		}
		// Deferred jobs whose worker was away when their window opened: each ran once, in
		// that worker, after its window (checked per job above); at least one must exist for
		// the outage to have tested them.
		if res.Deferred > 0 && res.DeferredInOutage == 0 {
			problem("no deferred job's window opened while %s was down: deferral across an outage was not exercised", downName)
		}
	}
	kills := map[string]int{}
	for _, f := range res.Faults {
		kills[f.What]++
	}
	if kills["SIGKILL dispatcher"] < e.o.kills || kills["SIGKILL dispatch service"] < e.o.kills {
		problem("faults injected: %v, expected %d kills of each", kills, e.o.kills)
	}
}

// submit creates the Jobs in the manager, evenly spread over -submit-for from `start`, and
// returns when each was submitted.
func (e *env) submit(ctx context.Context, jobs []jobSpec, start time.Time) (map[string]time.Time, error) {
	submitted := map[string]time.Time{}
	interval := e.o.submitFor / time.Duration(len(jobs))
	for i, j := range jobs {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		job := j.object(localQueue)
		var err error
		for try := 0; try < 20; try++ {
			if err = e.manager.client.Create(ctx, job); err == nil || ignoreExists(err) == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil && ignoreExists(err) != nil {
			return submitted, fmt.Errorf("submitting %s: %w", j.name, err)
		}
		submitted[j.name] = time.Now()
		if (i+1)%40 == 0 {
			logf("%d jobs submitted", i+1)
		}
	}
	return submitted, nil
}

// waitAllDone waits until every submitted Job is Complete in the manager (or one failed).
func (o *observer) waitAllDone(submitted map[string]time.Time, deadline time.Duration) error {
	return waitFor("every Job Complete in the manager", deadline, func() (bool, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.jobFailed) > 0 {
			return true, nil
		}
		done := 0
		for name := range submitted {
			if _, ok := o.jobDone[name]; ok {
				done++
			}
		}
		return done == len(submitted), fmt.Errorf("%d of %d complete", done, len(submitted))
	})
}

// event is a fault injected `at` after the first submission.
type event struct {
	at time.Duration
	do func()
}

// runEvents does the events in time order, each at its time from `start`, until ctx ends.
func runEvents(ctx context.Context, start time.Time, events []event) {
	sort.Slice(events, func(i, j int) bool { return events[i].at < events[j].at })
	for _, ev := range events {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(start.Add(ev.at))):
		}
		ev.do()
	}
}
