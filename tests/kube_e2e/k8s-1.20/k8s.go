package main

// What is particular to kube-scheduler 1.20.5 (the vendored tree of ../shared/third_party,
// built by kube_e2e.cmake): scheduler.New's signature and options, and the config version.

import (
	"context"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	"k8s.io/kubernetes/pkg/scheduler"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

const (
	kubeVersion = "1.20.5"
	// The config version the cases' -config and -deploy-config must have: 1.20 knows no v1.
	configAPIVersion = "kubescheduler.config.k8s.io/v1beta1"

	// How the scheduler picks among nodes of equal best score. The vendored 1.20.5 is the FGD
	// authors' fork (github.com/mental2008/kubernetes v1.20.5-minor), whose selectHost takes
	// the smallest node name, as greensched simulate's fixed tie order does (upstream 1.20.5
	// picks at random).
	tieBreak = "ties to the smallest node name, as simulate's fixed tie order"
	// The whole-list case's GPU allocation may be this many points below simulate's.
	allocationMaxLoss = 1.5
)

// newScheduler builds kube-scheduler from the decoded config: its profiles and extenders, with
// rec as every profile's event recorder.
func newScheduler(ctx context.Context, client kubernetes.Interface, factory informers.SharedInformerFactory,
	rec events.EventRecorder, cfg *schedulerapi.KubeSchedulerConfiguration) (*scheduler.Scheduler, error) {
	return scheduler.New(client, factory,
		func(string) events.EventRecorder { return rec }, ctx.Done(),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithAlgorithmSource(cfg.AlgorithmSource),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithParallelism(cfg.Parallelism),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds))
}
