package main

// What the test sees, as it happens: every manager Workload's nomination, green-window check,
// admission and end (with the time the test saw each), every manager Job's completion, and
// every pod in every worker (which Job it runs for, when it ran, when it ended). Remote objects
// are garbage-collected once a Job finishes, so the worker pods are watched from the start.

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

type workloadSeen struct {
	name, job, uid string
	nominatedAt    time.Time // the first nomination
	nominated      []string
	lastNominated  []string // a later one (greensched nominates again when a worker stays away)
	lastAt         time.Time
	nominations    int
	pendingSeen    bool // the green-window check was seen Pending
	pendingMessage string
	readyAt        time.Time // the green-window check first seen Ready
	cluster        string
	admittedAt     time.Time
	finishedAt     time.Time

	history      []nominationSeen // every change of status.nominatedClusterNames, empty included
	renominated  []string         // the values of greensched.io/renominated seen, in order
	renominating []annotationSeen // the values of greensched.io/renominating, when first seen
	// Deactivation (the faults scenario): seen with spec.active false and no quota (evicted);
	// seen after that holding quota or nominated while still inactive (a stale write restored
	// it).
	inactiveEvicted      bool
	everEvictedInactive  bool // inactiveEvicted, ever (it is reset when active again)
	nominatedWhenEvicted string
	resurrected          []string
}

type annotationSeen struct {
	at   time.Time
	text string
}

type nominationSeen struct {
	at       time.Time
	clusters []string
}

type podSeen struct {
	worker, job, name, uid, node string
	runningAt, endedAt           time.Time
	unschedulableAt, deletedAt   time.Time
	phase                        corev1.PodPhase
}

type observer struct {
	mu        sync.Mutex
	workloads map[string]*workloadSeen // by Workload name
	jobDone   map[string]time.Time     // manager Job name -> Complete
	jobFailed map[string]string
	pods      map[string]*podSeen // by worker/uid
	// onReady is called (on its own goroutine) the first time a Workload's green-window check
	// is seen Ready.
	onReady func(workload string)
}

func (o *observer) onWorkload(obj any) {
	wl, ok := obj.(*kueue.Workload)
	if !ok {
		return
	}
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	w := o.workloads[wl.Name]
	if w == nil {
		w = &workloadSeen{name: wl.Name, uid: string(wl.UID)}
		for _, ref := range wl.OwnerReferences {
			if ref.Kind == "Job" {
				w.job = ref.Name
			}
		}
		o.workloads[wl.Name] = w
	}
	if names := wl.Status.NominatedClusterNames; len(w.history) == 0 && len(names) > 0 ||
		len(w.history) > 0 && fmt.Sprint(names) != fmt.Sprint(w.history[len(w.history)-1].clusters) {
		w.history = append(w.history, nominationSeen{now, append([]string(nil), names...)})
	}
	if r := wl.Annotations["greensched.io/renominated"]; r != "" &&
		(len(w.renominated) == 0 || w.renominated[len(w.renominated)-1] != r) {
		w.renominated = append(w.renominated, r)
	}
	if r := wl.Annotations["greensched.io/renominating"]; r != "" &&
		(len(w.renominating) == 0 || w.renominating[len(w.renominating)-1].text != r) {
		w.renominating = append(w.renominating, annotationSeen{now, r})
	}
	if wl.Spec.Active == nil || *wl.Spec.Active {
		w.inactiveEvicted = false // active again
	}
	if wl.Spec.Active != nil && !*wl.Spec.Active {
		reserved := false
		for _, c := range wl.Status.Conditions {
			reserved = reserved || (c.Type == kueue.WorkloadQuotaReserved && c.Status == "True")
		}
		names := fmt.Sprint(wl.Status.NominatedClusterNames)
		switch {
		case !reserved && !w.inactiveEvicted:
			w.inactiveEvicted, w.everEvictedInactive, w.nominatedWhenEvicted = true, true, names
		case w.inactiveEvicted && (reserved || names != w.nominatedWhenEvicted && len(wl.Status.NominatedClusterNames) > 0):
			w.resurrected = append(w.resurrected, fmt.Sprintf("at %s: inactive, quota reserved %v, nominated %v",
				now.Format("15:04:05.000"), reserved, wl.Status.NominatedClusterNames))
		}
	}
	if names := wl.Status.NominatedClusterNames; len(names) > 0 {
		if w.nominatedAt.IsZero() {
			w.nominatedAt, w.nominated = now, append([]string(nil), names...)
		}
		if fmt.Sprint(names) != fmt.Sprint(w.lastNominated) {
			w.lastNominated, w.lastAt = append([]string(nil), names...), now
			w.nominations++
		}
	}
	for _, s := range wl.Status.AdmissionChecks {
		if s.Name != "green-window" {
			continue
		}
		if s.State == kueue.CheckStatePending && s.Message != "" {
			w.pendingSeen, w.pendingMessage = true, s.Message
		}
		if s.State == kueue.CheckStateReady && w.readyAt.IsZero() {
			w.readyAt = now
			if o.onReady != nil {
				go o.onReady(wl.Name)
			}
		}
	}
	if wl.Status.ClusterName != nil {
		w.cluster = *wl.Status.ClusterName
	}
	for _, c := range wl.Status.Conditions {
		if c.Status != "True" {
			continue
		}
		if c.Type == kueue.WorkloadAdmitted && w.admittedAt.IsZero() {
			w.admittedAt = now
		}
		if c.Type == kueue.WorkloadFinished && w.finishedAt.IsZero() {
			w.finishedAt = now
		}
	}
}

func (o *observer) onJob(obj any) {
	j, ok := obj.(*batchv1.Job)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Type == batchv1.JobComplete {
			if _, seen := o.jobDone[j.Name]; !seen {
				o.jobDone[j.Name] = time.Now()
			}
		}
		if c.Type == batchv1.JobFailed {
			o.jobFailed[j.Name] = c.Reason + ": " + c.Message
		}
	}
}

func (o *observer) onPod(worker string) func(obj any) {
	return func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		o.mu.Lock()
		defer o.mu.Unlock()
		key := worker + "/" + string(p.UID)
		s := o.pods[key]
		if s == nil {
			s = &podSeen{worker: worker, name: p.Name, uid: string(p.UID), job: p.Labels["batch.kubernetes.io/job-name"]}
			o.pods[key] = s
		}
		s.node, s.phase = p.Spec.NodeName, p.Status.Phase
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
				c.Reason == corev1.PodReasonUnschedulable && s.unschedulableAt.IsZero() {
				s.unschedulableAt = now
			}
		}
		if (p.Status.Phase == corev1.PodRunning || p.Status.Phase == corev1.PodSucceeded) && s.runningAt.IsZero() {
			s.runningAt = now
		}
		if (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) && s.endedAt.IsZero() {
			s.endedAt = now
		}
	}
}

// onPodDeleted records when a worker's pod was deleted (its end, for one that never ended).
func (o *observer) onPodDeleted(worker string) func(obj any) {
	return func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		if s := o.pods[worker+"/"+string(p.UID)]; s != nil && s.deletedAt.IsZero() {
			s.deletedAt = time.Now()
		}
	}
}

func handler(f func(any)) toolscache.ResourceEventHandlerFuncs {
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    f,
		UpdateFunc: func(_, obj any) { f(obj) },
	}
}

// observe starts the watches and returns once their first lists are in.
func observe(ctx context.Context, e *env) (*observer, error) {
	o := &observer{workloads: map[string]*workloadSeen{}, jobDone: map[string]time.Time{},
		jobFailed: map[string]string{}, pods: map[string]*podSeen{}}
	for _, c := range e.all {
		ca, err := cache.New(c.cfg, cache.Options{Scheme: scheme})
		if err != nil {
			return nil, err
		}
		if c.worker {
			inf, err := ca.GetInformer(ctx, &corev1.Pod{})
			if err != nil {
				return nil, err
			}
			h := handler(o.onPod(c.name))
			h.DeleteFunc = o.onPodDeleted(c.name)
			if _, err := inf.AddEventHandler(h); err != nil {
				return nil, err
			}
		} else {
			inf, err := ca.GetInformer(ctx, &kueue.Workload{})
			if err != nil {
				return nil, err
			}
			if _, err := inf.AddEventHandler(handler(o.onWorkload)); err != nil {
				return nil, err
			}
			jinf, err := ca.GetInformer(ctx, &batchv1.Job{})
			if err != nil {
				return nil, err
			}
			if _, err := jinf.AddEventHandler(handler(o.onJob)); err != nil {
				return nil, err
			}
		}
		go func() { _ = ca.Start(ctx) }()
		if !ca.WaitForCacheSync(ctx) {
			return nil, ctx.Err()
		}
	}
	return o, nil
}

// byJob indexes what was seen by the manager's Job name: its Workload and its pods in the
// workers. The caller holds o.mu.
func (o *observer) byJob() (map[string]*workloadSeen, map[string][]*podSeen) {
	workloads := map[string]*workloadSeen{}
	for _, w := range o.workloads {
		if w.job != "" {
			workloads[w.job] = w
		}
	}
	pods := map[string][]*podSeen{}
	for _, p := range o.pods {
		pods[p.job] = append(pods[p.job], p)
	}
	return workloads, pods
}
