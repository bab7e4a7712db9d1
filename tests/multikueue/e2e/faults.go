package main

// The faults scenario (-scenario faults): the failures a live fleet meets, all in one run.
//
//   - lost: a worker lost for good. Its Kueue stops first (the copies MultiKueue makes there
//     are never admitted), then the whole cluster. Workloads nominated there and not admitted
//     are nominated again (worker-lost) after --worker-lost-after; those admitted there go back
//     to the queue after Kueue's workerLostTimeout and are nominated anew.
//   - noquota: a worker whose queue has no GPU quota: nominated Workloads are never admitted and
//     are nominated again (admit-timeout).
//   - unsched: a worker whose nodes are tainted NoSchedule (the service does not see taints):
//     admitted Workloads' pods stay unschedulable; the worker's Kueue evicts them after its
//     waitForPodsReady timeout (deploy/kueue/worker-kueue-config.yaml), MultiKueue puts them
//     back in the manager's queue, and greensched nominates them elsewhere (the worker that
//     put them back counts as left).
//   - blackhole: a cluster whose API server accepts connections and never answers, in the
//     service's configuration and MultiKueue's: decisions must not wait on it.
//   - The service's writer is SIGKILLed: its standby on the same journal takes over.
//   - The controllers' leader is SIGKILLed: the other replica takes over.
//   - Evictions racing nominations: some Workloads are deactivated the moment their
//     green-window check turns Ready (when the dispatcher is nominating them), and activated
//     again; a stale write must never restore their reservation.
//
// Then every Job must complete exactly once, never running in two workers at once, and every
// change of nomination must come within its timeout plus 10 s.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

const (
	lostWorker       = "lost"
	noQuotaWorker    = "noquota"
	unschedWorker    = "unsched"
	blackholeCluster = "blackhole"

	// The controllers' timeouts in this scenario (the defaults are minutes).
	faultWorkerLostAfter = 10 * time.Second
	// Longer than lost's time without Kueue (16-26 s), so that what is nominated there then
	// is moved for worker-lost.
	faultAdmitTimeout = 20 * time.Second
	// The workers' waitForPodsReady timeout in this scenario (the file's is 10m).
	faultPodsReadyTimeout = 20 * time.Second
	// Kueue's own (manager): how long MultiKueue keeps a Workload admitted on a lost worker.
	faultWorkerLostTimeout = 30 * time.Second
	// A Workload put back by unsched is nominated elsewhere within faultPodsReadyTimeout plus
	// faultWorkerLostAfter plus this: MultiKueue sees the eviction (it took up to 15 s) and
	// sets its check to Retry; Kueue evicts the Workload in the manager, where its Job keeps
	// the active count last copied from the worker until greensched-kueue zeroes it
	// (--worker-lost-after after the eviction, once no worker holds a copy); Kueue requeues
	// it, the green window is checked again, and greensched nominates it.
	putBackSlack = 30 * time.Second
	// A change of nomination comes within its timeout plus this.
	renominationSlack = 10 * time.Second
	// A standby (service or controller) serves within this of its writer's or leader's kill.
	maxTakeover = 15 * time.Second
	// A new leader of the controllers first reconciles every Workload (measured: the jobs
	// eligible in the 2 s after it led were nominated in 2.2-2.8 s, those from 4 s after in
	// about 1 s): a job eligible in the takeover or this long after it waited for it, and its
	// nomination is held to maxTakeover rather than to the nomination percentiles.
	takeoverCatchUp = 5 * time.Second
	leaseName       = "greensched-kueue.greensched.io"
)

// faultLeaseArgs: the chart's two replicas elect a leader with a short lease (appended to the
// rendered args: the chart has no value for the lease; the re-nomination timeouts above are
// given to it as values).
var faultLeaseArgs = []string{"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s",
	"--leader-elect-retry-period=1s"}

// The bad workers sit on the cleanest grids, so that the service sends them work.
var faultCarbon = map[string]string{"worker1": "GB", "worker2": "US-CAL-CISO", lostWorker: "BR-SP",
	noQuotaWorker: "BR-SP", unschedWorker: "BR-SP", blackholeCluster: "BR-SP"}

// lost is the most efficient site of all until it is lost, so that work is nominated there
// while its Kueue is down; then noquota is.
var faultPUE = map[string]float64{lostWorker: 1.0, noQuotaWorker: 1.1}

func faultWorkers() []string {
	return []string{"worker1", "worker2", lostWorker, noQuotaWorker, unschedWorker}
}

func nodesOf(c *cluster) []nodeRow {
	if c == nil {
		return nil
	}
	return c.nodes
}

// heldConns keeps the blackhole's connections open, unread, until the test ends.
type heldConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

// startBlackhole listens on a loopback port, accepts every connection and never answers.
func (e *env) startBlackhole() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.blackhole, e.blackholeHeld = l, &heldConns{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			e.blackholeHeld.mu.Lock()
			e.blackholeHeld.conns = append(e.blackholeHeld.conns, c)
			e.blackholeHeld.mu.Unlock()
		}
	}()
	return nil
}

func (e *env) blackholeKubeconfig() []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: blackhole
  cluster: {server: "https://%s", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: never-checked}
contexts:
- name: blackhole
  context: {cluster: blackhole, user: admin}
current-context: blackhole
`, e.blackhole.Addr()))
}

type takeover struct {
	What  string  `json:"what"`
	AtS   float64 `json:"at_s"`
	TookS float64 `json:"took_s"`
}

// slowNomination is a first nomination and how long it took; AfterTakeoverS is how long after
// the end of the last takeover before it the job could be nominated.
type slowNomination struct {
	Job            string   `json:"job"`
	TookS          float64  `json:"took_s"`
	AfterTakeoverS *float64 `json:"eligible_after_a_takeover_s,omitempty"`
}

type renominationSeen struct {
	Job     string  `json:"job"`
	Reason  string  `json:"reason"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	TookS   float64 `json:"decided_s"` // from when it got stuck to the decision to move it
	MovedS  float64 `json:"moved_s"`   // from the decision (or the start it gave) to the new nomination
	AllowsS float64 `json:"allowed_s"`
}

// putBack is one Workload whose pods stayed unschedulable in unsched: from the first seen so
// until its next nomination elsewhere (the worker's Kueue evicted the copy after its
// waitForPodsReady timeout, MultiKueue put the Workload back in the queue, and greensched
// nominated it anew).
type putBack struct {
	Job     string  `json:"job"`
	To      string  `json:"to"`
	TookS   float64 `json:"renominated_s"`
	AllowsS float64 `json:"allowed_s"`
}

type faultResult struct {
	Jobs               int            `json:"jobs"`
	Workers            []string       `json:"workers"`
	UpS                float64        `json:"bring_up_s"`
	AllFinishedS       float64        `json:"all_finished_after_first_submit_s"`
	TotalS             float64        `json:"total_s"`
	Decisions          int            `json:"decisions"`
	DecisionsByCluster map[string]int `json:"decisions_by_cluster"`
	CompletedByCluster map[string]int `json:"completed_by_cluster"`
	NominationP50S     float64        `json:"nomination_p50_s"`
	NominationP99S     float64        `json:"nomination_p99_s"`
	NominationMaxS     float64        `json:"nomination_max_s"`
	NominationsCounted int            `json:"nominations_counted"`
	WaitedForTakeover  int            `json:"jobs_eligible_during_a_takeover"`
	// The slowest of those: each at most maxTakeover.
	TakeoverNominationMaxS float64            `json:"nomination_across_a_takeover_max_s"`
	SlowestNominations     []slowNomination   `json:"slowest_nominations"`
	Renominations          map[string]int     `json:"renominations_by_reason"`
	RenominationMaxS       map[string]float64 `json:"renomination_decided_max_s_by_reason"`
	MovedMaxS              float64            `json:"renominated_after_decision_max_s"`
	RenominationList       []renominationSeen `json:"renominations"`
	PutBack                int                `json:"put_back_by_unsched"`
	PutBackMaxS            float64            `json:"put_back_renominated_max_s"`
	PutBackList            []putBack          `json:"put_back"`
	StrandedReleased       int                `json:"jobs_stranded_on_lost_released"`
	UnreportedInLost       int                `json:"ended_unreported_on_lost"`
	Deactivated            int                `json:"deactivated"`
	DeactivatedBeforeNo    int                `json:"deactivated_before_their_nomination"`
	Resurrected            int                `json:"reservations_restored_while_inactive"`
	NominationConflicts    int                `json:"nomination_writes_refused_by_a_conflict"`
	Takeovers              []takeover         `json:"takeovers"`
	BlackholeState         string             `json:"blackhole_in_service"`
	DecisionLatency        decisionLatency    `json:"decision_seconds_of_the_serving_replica"`
	Lost                   int                `json:"lost"`
	RunTwice               int                `json:"run_more_than_once"`
	TwoAtOnce              int                `json:"running_in_two_workers_at_once"`
	Unfinished             []string           `json:"unfinished_workloads"`
	Problems               []string           `json:"problems"`
}

// deactivation is one Workload the test deactivated (spec.active false) and activated again.
type deactivation struct {
	workload    string
	at, backAt  time.Time
	nominatedAt time.Time // its nomination seen before the deactivation took effect, if any
}

func (e *env) exerciseFaults(ctx context.Context, jobs []jobSpec, obs *observer) (*faultResult, error) {
	res := &faultResult{Jobs: len(jobs), Workers: append(faultWorkers(), blackholeCluster)}
	byName := map[string]*cluster{}
	for _, w := range e.workers {
		byName[w.name] = w
	}
	lost, unsched := byName[lostWorker], byName[unschedWorker]

	// unsched: every node tainted, after the service has read it as it is.
	for _, n := range nodesOf(unsched) {
		patch := []byte(`{"spec":{"taints":[{"key":"greensched-e2e/maintenance","value":"true","effect":"NoSchedule"}]}}`)
		node := &corev1.Node{}
		node.Name = n.name
		if err := unsched.client.Patch(ctx, node, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return res, fmt.Errorf("tainting %s: %w", n.name, err)
		}
	}

	// Evictions racing nominations: every sixth Job's Workload is deactivated the moment its
	// green-window check is seen Ready (the dispatcher nominates it then), and activated
	// again once it was seen evicted.
	race := map[string]bool{}
	for i, j := range jobs {
		if i%6 == 3 {
			race[j.name] = true
		}
	}
	var deMu sync.Mutex
	var deactivations []*deactivation
	var deWG sync.WaitGroup
	setActive := func(name string, active bool) error {
		wl := &kueue.Workload{}
		wl.Name, wl.Namespace = name, "default"
		patch := []byte(fmt.Sprintf(`{"spec":{"active":%v}}`, active))
		var err error
		for try := 0; try < 20; try++ {
			if err = e.manager.client.Patch(ctx, wl, client.RawPatch(types.MergePatchType, patch)); err == nil {
				return nil
			}
			time.Sleep(200 * time.Millisecond)
		}
		return err
	}
	obs.onReady = func(workload string) {
		obs.mu.Lock()
		w := obs.workloads[workload]
		job := ""
		if w != nil {
			job = w.job
		}
		obs.mu.Unlock()
		deMu.Lock()
		mine := race[job]
		delete(race, job) // once per Job
		deMu.Unlock()
		if !mine {
			return
		}
		deWG.Add(1)
		defer deWG.Done()
		d := &deactivation{workload: workload}
		if err := setActive(workload, false); err != nil {
			logf("deactivating %s: %v", workload, err)
			return
		}
		d.at = time.Now()
		obs.mu.Lock()
		if len(w.history) > 0 {
			d.nominatedAt = w.history[0].at
		}
		obs.mu.Unlock()
		// Active again once Kueue has evicted it (and at least 3 s later).
		time.Sleep(3 * time.Second)
		_ = waitFor(workload+" evicted", 15*time.Second, func() (bool, error) {
			obs.mu.Lock()
			defer obs.mu.Unlock()
			return w.inactiveEvicted, nil
		})
		if err := setActive(workload, true); err != nil {
			logf("activating %s again: %v", workload, err)
		}
		d.backAt = time.Now()
		deMu.Lock()
		deactivations = append(deactivations, d)
		deMu.Unlock()
	}

	start := time.Now()
	since := func(t time.Time) float64 { return t.Sub(start).Seconds() }
	var fmu sync.Mutex
	var lostAt, lostKueueAt time.Time
	var takeoverWindows [][2]time.Time
	addTakeover := func(what string, at, back time.Time) {
		fmu.Lock()
		defer fmu.Unlock()
		res.Takeovers = append(res.Takeovers, takeover{What: what, AtS: since(at), TookS: back.Sub(at).Seconds()})
		takeoverWindows = append(takeoverWindows, [2]time.Time{at, back})
		logf("%s at %.1f s: took over after %.2f s", what, since(at), back.Sub(at).Seconds())
	}
	serviceHealth := e.dispatchURL + "/healthz"
	events := []event{
		{10 * time.Second, func() { // the service's writer
			at := time.Now()
			e.dispatch.kill()
			if err := waitFor("the dispatch standby serving", 60*time.Second, httpOK(serviceHealth)); err != nil {
				logf("%v", err)
			}
			addTakeover("SIGKILL dispatch service (standby takes over)", at, time.Now())
			// The killed one comes back as the new standby.
			next := e.procs.add("greensched-dispatch-standby-2", e.dispatch.env,
				append(append([]string(nil), e.dispatchBaseArgs...), "--standby")...)
			if err := next.start(); err != nil {
				logf("%v", err)
			}
		}},
		{16 * time.Second, func() { // lost: its Kueue first, copies made there are not admitted
			fmu.Lock()
			lostKueueAt = time.Now()
			fmu.Unlock()
			lost.kueue.kill()
			logf("%s's Kueue stopped at %.1f s", lost.name, since(lostKueueAt))
		}},
		{26 * time.Second, func() { // then the whole cluster, for good
			fmu.Lock()
			lostAt = time.Now()
			fmu.Unlock()
			for _, p := range []*proc{lost.apiserver, lost.kcm, lost.scheduler, lost.kwok, lost.extender} {
				p.kill()
			}
			logf("%s lost for good at %.1f s", lost.name, since(lostAt))
		}},
		{36 * time.Second, func() { // the controllers' leader
			leader := -1
			_ = waitFor("a greensched-kueue leader", 30*time.Second, func() (bool, error) {
				leader = e.leaderReplica()
				return leader >= 0, nil
			})
			if leader < 0 {
				logf("no greensched-kueue replica leads")
				return
			}
			at := time.Now()
			e.replicas[leader].kill()
			other := 1 - leader
			if err := waitFor("the other greensched-kueue replica leading", 60*time.Second, func() (bool, error) {
				return e.leaderReplica() == other, nil
			}); err != nil {
				logf("%v", err)
			}
			addTakeover(fmt.Sprintf("SIGKILL greensched-kueue leader (replica %d)", leader+1), at, time.Now())
			if err := e.replicas[leader].start(); err != nil { // back as a follower
				logf("%v", err)
			}
		}},
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		runEvents(ctx, start, events)
	}()

	submitted, err := e.submit(ctx, jobs, start)
	if err != nil {
		return res, err
	}
	wg.Wait()
	logf("%d jobs submitted in %.1f s", len(jobs), since(time.Now()))

	err = obs.waitAllDone(submitted, 300*time.Second)
	res.AllFinishedS = since(time.Now())
	logf("all finished %.1f s after the first submission", res.AllFinishedS)
	time.Sleep(2 * time.Second)
	deWG.Wait()

	// What became of the Jobs that did not complete (their Workload as the manager has it now).
	obs.mu.Lock()
	var unfinished []string
	for _, w := range obs.workloads {
		if _, done := obs.jobDone[w.job]; !done && w.job != "" {
			unfinished = append(unfinished, w.name)
		}
	}
	obs.mu.Unlock()
	sort.Strings(unfinished)
	for _, name := range unfinished[:min(len(unfinished), 10)] {
		res.Unfinished = append(res.Unfinished, e.describeWorkload(ctx, name))
	}
	res.BlackholeState = e.serviceClusterState(blackholeCluster)
	res.DecisionLatency = e.scrapeDecisionLatency()
	// The dispatcher's nomination writes that met a newer Workload (its resourceVersion guard).
	for _, p := range e.replicas {
		if text, err := os.ReadFile(p.log); err == nil {
			res.NominationConflicts += strings.Count(string(text), "the Workload changed while nominating it")
			res.StrandedReleased += strings.Count(string(text), "released a Job stranded on a lost worker")
		}
	}
	decisions, jerr := readJournal(e.journal)
	if jerr != nil {
		return res, jerr
	}
	res.Decisions = len(decisions)
	e.checkFaults(res, jobs, submitted, obs, decisions, deactivations, lostKueueAt, lostAt, takeoverWindows)
	if err != nil {
		res.Problems = append([]string{err.Error()}, res.Problems...)
	}
	if len(res.Problems) > 0 {
		return res, fmt.Errorf("%d problems (result.json lists them; logs in %s)", len(res.Problems), e.procs.dir)
	}
	return res, nil
}

// describeWorkload is a Workload's state in one line: activity, conditions, checks,
// nomination, cluster and greensched's annotations.
func (e *env) describeWorkload(ctx context.Context, name string) string {
	var wl kueue.Workload
	if err := e.manager.client.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &wl); err != nil {
		return name + ": " + err.Error()
	}
	parts := []string{name, fmt.Sprintf("active=%v", wl.Spec.Active == nil || *wl.Spec.Active)}
	for _, c := range wl.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	for _, c := range wl.Status.AdmissionChecks {
		parts = append(parts, fmt.Sprintf("check %s=%s", c.Name, c.State))
	}
	parts = append(parts, fmt.Sprintf("nominated=%v", wl.Status.NominatedClusterNames))
	if wl.Status.ClusterName != nil {
		parts = append(parts, "cluster="+*wl.Status.ClusterName)
	}
	for k, v := range wl.Annotations {
		if strings.HasPrefix(k, "greensched.io/") && k != "greensched.io/qos" && k != "greensched.io/duration" &&
			k != "greensched.io/data-gb" && k != "greensched.io/home" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// leaderReplica is the index of the greensched-kueue replica whose metrics say it leads, or -1.
func (e *env) leaderReplica() int {
	for i, port := range e.replicaMetrics {
		if !e.replicas[i].running() {
			continue
		}
		r, err := insecureHTTP.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if strings.Contains(string(body), `leader_election_master_status{name="`+leaseName+`"} 1`) {
			return i
		}
	}
	return -1
}

// serviceClusterState is what the service's /v1/clusters says of a cluster's health.
func (e *env) serviceClusterState(name string) string {
	r, err := e.dispatchGet("/v1/clusters")
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer r.Body.Close()
	var body struct {
		Clusters []map[string]any `json:"clusters"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.StatusCode != http.StatusOK {
		return fmt.Sprintf("HTTP %d: %v", r.StatusCode, err)
	}
	for _, c := range body.Clusters {
		if c["name"] == name {
			delete(c, "committed")
			data, _ := json.Marshal(c)
			return string(data)
		}
	}
	return "not listed"
}

func (e *env) checkFaults(res *faultResult, jobs []jobSpec, submitted map[string]time.Time, obs *observer,
	decisions []decision, deactivations []*deactivation, lostKueueAt, lostAt time.Time, takeovers [][2]time.Time) {
	obs.mu.Lock()
	defer obs.mu.Unlock()
	problem := func(format string, args ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, args...)) }
	byJob, podsOf := obs.byJob()
	deactivated := map[string]*deactivation{}
	for _, d := range deactivations {
		deactivated[d.workload] = d
	}
	for name, reason := range obs.jobFailed {
		problem("job %s failed in the manager: %s", name, reason)
	}
	res.Renominations, res.RenominationMaxS = map[string]int{}, map[string]float64{}
	res.CompletedByCluster, res.DecisionsByCluster = map[string]int{}, map[string]int{}
	inTakeover := func(t time.Time) bool {
		for _, w := range takeovers {
			if !t.Before(w[0].Add(-time.Second)) && !t.After(w[1].Add(takeoverCatchUp)) {
				return true
			}
		}
		return false
	}
	var latencies []float64
	var slowest []slowNomination
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
		// Runs: a pod that reached Running, from then until it ended or was deleted; a pod of
		// the lost worker ends when the worker was lost.
		type run struct {
			worker   string
			from, to time.Time
			ok       bool
		}
		var runs []run
		succeeded := 0
		for _, p := range podsOf[j.name] {
			if p.runningAt.IsZero() {
				continue
			}
			to := p.endedAt
			if to.IsZero() || (!p.deletedAt.IsZero() && p.deletedAt.Before(to)) {
				to = p.deletedAt
			}
			if to.IsZero() && p.worker == lostWorker && !lostAt.IsZero() {
				to = lostAt
			}
			if to.IsZero() {
				to = time.Now()
			}
			ok := p.phase == corev1.PodSucceeded
			if ok && p.worker == lostWorker && w.cluster != lostWorker {
				// It ended in lost, but the manager had not learnt it (lost's Kueue was down, or
				// MultiKueue had not read it yet) when the worker was lost: it is run again, as
				// Kueue does after its workerLostTimeout. Not a completion the manager saw.
				ok = false
				res.UnreportedInLost++
			}
			if ok {
				succeeded++
				res.CompletedByCluster[p.worker]++
			}
			runs = append(runs, run{p.worker, p.runningAt, to, ok})
		}
		if succeeded > 1 {
			problem("job %s completed %d times", j.name, succeeded)
			res.RunTwice++
		}
		if succeeded == 0 {
			problem("job %s: no pod of it was seen completing in any worker", j.name)
		}
		for a := range runs {
			for b := a + 1; b < len(runs); b++ {
				if runs[a].worker != runs[b].worker && runs[a].from.Before(runs[b].to) && runs[b].from.Before(runs[a].to) {
					problem("job %s ran in %s and %s at once", j.name, runs[a].worker, runs[b].worker)
					res.TwoAtOnce++
				}
			}
		}
		for _, r := range runs {
			if r.ok && w.cluster != r.worker {
				problem("job %s: completed in %s but the manager's Workload says %q", j.name, r.worker, w.cluster)
			}
			if r.ok && (r.worker == lostWorker && !lostAt.IsZero() && r.to.After(lostAt) ||
				r.worker == noQuotaWorker || r.worker == unschedWorker) {
				problem("job %s completed in %s, which cannot run it", j.name, r.worker)
			}
		}
		// Re-nominations: decided within the reason's timeout (plus renominationSlack) of the
		// nomination getting stuck, and nominated within renominationSlack of the decision (or
		// of the later start the service gave).
		for _, text := range w.renominated {
			f := strings.Fields(text)
			if len(f) < 7 {
				problem("job %s: renominated annotation %q", j.name, text)
				continue
			}
			reason, from, to := f[0], f[2], f[6]
			at, _ := time.Parse(time.RFC3339, f[4])
			var after time.Time
			if len(f) == 9 {
				after, _ = time.Parse(time.RFC3339, f[8])
			}
			// When the nomination got stuck: nominated to `from` (the last time before the
			// change); for worker-lost, when the worker was lost if later.
			var stuck, decided, renominated time.Time
			for _, h := range w.history {
				if len(h.clusters) == 1 && h.clusters[0] == from && !h.at.After(at.Add(time.Second)) {
					stuck = h.at
				}
			}
			for _, r := range w.renominating {
				if strings.HasPrefix(r.text, reason+" from "+from+" ") && r.at.After(stuck) && decided.IsZero() {
					decided = r.at
				}
			}
			for _, h := range w.history {
				if h.at.After(decided) && len(h.clusters) > 0 && h.clusters[0] != from && renominated.IsZero() {
					renominated = h.at
				}
			}
			allowed := faultAdmitTimeout
			switch reason {
			case "worker-lost":
				allowed = faultWorkerLostAfter
				if lostAt.After(stuck) {
					stuck = lostAt
				}
			}
			if stuck.IsZero() || decided.IsZero() || renominated.IsZero() {
				problem("job %s: re-nominated (%s) but seen stuck %v, decided %v, nominated %v (nominations %s)", j.name,
					text, !stuck.IsZero(), !decided.IsZero(), !renominated.IsZero(), historyText(w.history))
				continue
			}
			// A controller takeover in between is waited out on top.
			allowed += renominationSlack + overlap(stuck, renominated, takeovers)
			took, moved := decided.Sub(stuck), renominated.Sub(later(decided, after))
			res.Renominations[reason]++
			res.RenominationMaxS[reason] = max(res.RenominationMaxS[reason], took.Seconds())
			res.RenominationList = append(res.RenominationList, renominationSeen{Job: j.name, Reason: reason,
				From: from, To: to, TookS: took.Seconds(), MovedS: moved.Seconds(), AllowsS: allowed.Seconds()})
			if took > allowed {
				problem("job %s: re-nomination (%s) decided %.1f s after it got stuck in %s (at most %s)", j.name,
					reason, took.Seconds(), from, allowed)
			}
			// The new nomination waits for MultiKueue to delete the old copy (never two).
			if moved > e.o.maxCopyGone+overlap(decided, renominated, takeovers) {
				problem("job %s: nominated to %s %.1f s after its re-nomination (%s) was decided (at most %s)",
					j.name, to, moved.Seconds(), reason, e.o.maxCopyGone)
			}
			res.MovedMaxS = max(res.MovedMaxS, moved.Seconds())
		}
		// Put back by unsched: nominated elsewhere within the worker's waitForPodsReady timeout
		// (counted from its admission there, before its pods were seen unschedulable), the
		// release of its Job and putBackSlack.
		var unschedulableAt time.Time
		for _, p := range podsOf[j.name] {
			if p.worker == unschedWorker && !p.unschedulableAt.IsZero() &&
				(unschedulableAt.IsZero() || p.unschedulableAt.Before(unschedulableAt)) {
				unschedulableAt = p.unschedulableAt
			}
		}
		if !unschedulableAt.IsZero() {
			var elsewhere nominationSeen
			for _, h := range w.history {
				if h.at.After(unschedulableAt) && len(h.clusters) > 0 && h.clusters[0] != unschedWorker {
					elsewhere = h
					break
				}
			}
			if elsewhere.at.IsZero() {
				problem("job %s: its pods stayed unschedulable in %s and it was never nominated elsewhere (nominations %s)",
					j.name, unschedWorker, historyText(w.history))
			} else {
				took := elsewhere.at.Sub(unschedulableAt)
				allowed := faultPodsReadyTimeout + faultWorkerLostAfter + putBackSlack +
					overlap(unschedulableAt, elsewhere.at, takeovers)
				res.PutBack++
				res.PutBackMaxS = max(res.PutBackMaxS, took.Seconds())
				res.PutBackList = append(res.PutBackList, putBack{Job: j.name, To: elsewhere.clusters[0],
					TookS: took.Seconds(), AllowsS: allowed.Seconds()})
				if took > allowed {
					problem("job %s: nominated to %s %.1f s after its pods were seen unschedulable in %s (at most %s)",
						j.name, elsewhere.clusters[0], took.Seconds(), unschedWorker, allowed)
				}
			}
		}
		// The eviction race.
		if len(w.resurrected) > 0 {
			problem("job %s: its reservation came back while it was inactive: %v", j.name, w.resurrected)
			res.Resurrected++
		}
		if d := deactivated[w.name]; d != nil {
			res.Deactivated++
			if d.nominatedAt.IsZero() || d.nominatedAt.After(d.at) {
				res.DeactivatedBeforeNo++
			}
			if !w.everEvictedInactive {
				problem("job %s: deactivated, but never seen evicted", j.name)
			}
			continue // its first nomination raced the deactivation: not a latency sample
		}
		// The first nomination, from when the job could be nominated.
		from := submitted[j.name]
		if !w.readyAt.IsZero() {
			from = w.readyAt
		}
		if len(w.history) == 0 {
			problem("job %s: never seen nominated", j.name)
			continue
		}
		took := w.history[0].at.Sub(from).Seconds()
		if inTakeover(from) || inTakeover(w.history[0].at) {
			res.WaitedForTakeover++
			res.TakeoverNominationMaxS = max(res.TakeoverNominationMaxS, took)
			if took > maxTakeover.Seconds() {
				problem("job %s: nominated %.1f s after it could be, across a takeover (at most %s)", j.name,
					took, maxTakeover)
			}
			continue
		}
		latencies = append(latencies, took)
		slow := slowNomination{Job: j.name, TookS: took}
		for _, t := range takeovers {
			if t[1].Before(from) {
				after := from.Sub(t[1]).Seconds()
				slow.AfterTakeoverS = &after
			}
		}
		slowest = append(slowest, slow)
	}
	sort.Slice(slowest, func(a, b int) bool { return slowest[a].TookS > slowest[b].TookS })
	res.SlowestNominations = slowest[:min(len(slowest), 5)]
	res.NominationsCounted = len(latencies)
	res.NominationP50S = percentile(latencies, 0.5)
	res.NominationP99S = percentile(latencies, 0.99)
	res.NominationMaxS = percentile(latencies, 1)
	if math.IsNaN(res.NominationP99S) || res.NominationP99S > e.o.maxNominationP99.Seconds() {
		problem("nomination p99 %.3f s exceeds %s", res.NominationP99S, e.o.maxNominationP99)
	}
	if res.NominationMaxS > e.o.maxNominationMax.Seconds() {
		problem("nomination max %.3f s exceeds %s", res.NominationMaxS, e.o.maxNominationMax)
	}
	// The service's own decision latency (its histogram, from the standby's takeover on: the
	// blackhole and the lost worker included).
	if d := res.DecisionLatency; d.Scraped != "" || d.Count == 0 {
		problem("the service's decision latency could not be read: %q, %d decisions", d.Scraped, d.Count)
	} else if d.P99LeS < 0 || d.P99LeS > 1 || d.MaxLeS < 0 || d.MaxLeS > 2 {
		problem("the service's decisions: p99 at most %.3g s, max at most %.3g s (-1: over 5 s); want 1 s and 2 s",
			d.P99LeS, d.MaxLeS)
	}
	if res.PutBack == 0 {
		problem("no Workload was put back by %s: that fault was not exercised", unschedWorker)
	}
	for _, reason := range []string{"worker-lost", "admit-timeout"} {
		if res.Renominations[reason] == 0 {
			problem("no Workload was re-nominated for %s: that fault was not exercised", reason)
		}
	}
	if res.Deactivated == 0 {
		problem("no Workload was deactivated: the eviction race was not exercised")
	}
	if res.Lost > 0 || res.RunTwice > 0 || res.TwoAtOnce > 0 {
		problem("%d jobs lost, %d run more than once, %d in two workers at once", res.Lost, res.RunTwice, res.TwoAtOnce)
	}
	if len(res.Takeovers) != 2 {
		problem("%d takeovers seen, expected the service's standby and the controllers' other replica", len(res.Takeovers))
	}
	for _, t := range res.Takeovers {
		if t.TookS > maxTakeover.Seconds() {
			problem("%s: took over after %.1f s (at most %s)", t.What, t.TookS, maxTakeover)
		}
	}
	// The service never chose the blackhole, nor the lost worker once it was gone.
	for _, d := range decisions {
		res.DecisionsByCluster[d.cluster]++
		if d.cluster == blackholeCluster {
			problem("the service sent %s to the blackholed cluster", d.workload)
		}
		if d.cluster == lostWorker && !lostAt.IsZero() && d.wall.After(lostAt.Add(3*time.Second)) {
			problem("the service sent %s to %s %.1f s after it was lost", d.workload, lostWorker,
				d.wall.Sub(lostAt).Seconds())
		}
	}
	if !strings.Contains(res.BlackholeState, `"up":false`) {
		problem("the service's /v1/clusters says of %s: %s (want up false)", blackholeCluster, res.BlackholeState)
	}
	sort.Slice(res.RenominationList, func(a, b int) bool { return res.RenominationList[a].Job < res.RenominationList[b].Job })
}

// overlap is how much of [from, to] the takeovers cover.
func overlap(from, to time.Time, takeovers [][2]time.Time) time.Duration {
	var d time.Duration
	for _, w := range takeovers {
		if a, b := later(from, w[0]), earlier(to, w[1]); b.After(a) {
			d += b.Sub(a)
		}
	}
	return d
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func historyText(h []nominationSeen) string {
	var parts []string
	for _, n := range h {
		parts = append(parts, fmt.Sprintf("%s %v", n.at.Format("15:04:05.000"), n.clusters))
	}
	return strings.Join(parts, ", ")
}
