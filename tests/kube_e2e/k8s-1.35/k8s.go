package main

// What is particular to kube-scheduler 1.35.4 (Go modules, k8s-1.35/go.mod, built by
// kube_e2e_1_35.cmake): scheduler.New's signature and options, and the config version.
//
// Against 1.20.5: New takes a context (no stop channel) and a dynamic informer factory (nil:
// no custom resources here); WithAlgorithmSource is gone (v1 has no policy files);
// percentageOfNodesToScore is a pointer; the profile's recorder factory and
// events.EventRecorder are unchanged.

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

const (
	kubeVersion = "1.35.4"
	// The config version the cases' -config and -deploy-config must have: 1.35 knows only v1.
	configAPIVersion = "kubescheduler.config.k8s.io/v1"

	// How the scheduler picks among nodes of equal best score: upstream kube-scheduler draws
	// one at random per pod. The extender gives 10 only to the node simulate's fixed tie order
	// would take (9 to the others tied with it), so the draw has one candidate.
	tieBreak = "ties drawn at random, but the extender gives its top score to one node"
	// The whole-list case's GPU allocation may be this many points below simulate's, as for
	// 1.20.5: 94.29 % against 95.07 %. (When the extender gave 10 to every tied node, the draw
	// spread pods and left 88.5-88.8 %.)
	allocationMaxLoss = 1.5
)

// newScheduler builds kube-scheduler from the decoded config as cmd/kube-scheduler does: its
// profiles and extenders, with rec as every profile's event recorder.
func newScheduler(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory,
	rec events.EventRecorder, cfg *schedulerapi.KubeSchedulerConfiguration) (*scheduler.Scheduler, error) {
	return scheduler.New(ctx, client, factory, nil,
		func(string) events.EventRecorder { return rec },
		scheduler.WithComponentConfigVersion(configAPIVersion),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds))
}
