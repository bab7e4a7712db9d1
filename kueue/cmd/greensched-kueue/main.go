// greensched-kueue runs greensched's Kueue controllers on a MultiKueue manager cluster: the
// external dispatcher (nominates worker clusters) and the greensched.io/green-window
// admission check (holds a best-effort Workload until its green start). Both ask the dispatch
// service (`greensched dispatch`) and keep no state of their own. See docs/MULTICLUSTER.md.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"greensched.io/kueue/internal/controller"
	"greensched.io/kueue/internal/dispatchclient"
)

func main() {
	var (
		serviceURL  string
		dispatcher  bool
		greenWindow bool
		metricsAddr string
		probeAddr   string
		leaderElect bool
		leaderNS    string
		lease       leaseTimes
		maxWait     time.Duration
		workersNS   string
		renominate  controller.Dispatcher
		security    dispatchclient.Options
	)
	flag.StringVar(&serviceURL, "dispatch-url", "http://greensched-dispatch:8090",
		"URL of the dispatch service (greensched dispatch); https with its --tls-cert")
	flag.StringVar(&security.TokenFile, "dispatch-token-file", "",
		"file holding the service's bearer token (its --auth-token-file); re-read when it changes")
	flag.StringVar(&security.CAFile, "dispatch-ca-file", "",
		"PEM CA that signed the service's certificate (default: the system's CAs)")
	flag.StringVar(&security.ClientCert, "dispatch-client-cert", "",
		"PEM client certificate for the service's --client-ca (mutual TLS)")
	flag.StringVar(&security.ClientKey, "dispatch-client-key", "", "PEM private key of --dispatch-client-cert")
	flag.BoolVar(&dispatcher, "dispatcher", true,
		"run the MultiKueue external dispatcher (Kueue's multiKueue.dispatcherName must name greensched.io/dispatcher)")
	flag.BoolVar(&greenWindow, "green-window", true,
		"run the admission check controller of "+controller.GreenWindowController)
	flag.StringVar(&metricsAddr, "metrics-bind-address", ":8080", "metrics endpoint (0 to disable)")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "health probe endpoint")
	flag.BoolVar(&leaderElect, "leader-elect", true,
		"elect a leader among the replicas (a Lease); --leader-elect=false for a single process")
	flag.StringVar(&leaderNS, "leader-election-namespace", "",
		"namespace of the leader election Lease (default: $POD_NAMESPACE, else the pod's own namespace)")
	flag.DurationVar(&lease.duration, "leader-elect-lease-duration", 15*time.Second,
		"how long a standby replica waits before taking over from a leader that stopped renewing (one killed)")
	flag.DurationVar(&lease.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader tries to renew before it gives up leading (and exits); less than the lease duration")
	flag.DurationVar(&lease.retryPeriod, "leader-elect-retry-period", 2*time.Second,
		"how often replicas try to take or renew the lease")
	flag.DurationVar(&renominate.WorkerLostAfter, "worker-lost-after", 2*time.Minute,
		"nominate again a Workload not yet admitted whose nominated worker MultiKueue has not reached for this long (0: never)")
	flag.DurationVar(&renominate.AdmitTimeout, "admit-timeout", 5*time.Minute,
		"nominate again a Workload that no nominated worker has admitted this long after its nomination (0: never)")
	flag.StringVar(&workersNS, "worker-kubeconfig-namespace", "kueue-system",
		"namespace of MultiKueue's worker kubeconfig Secrets, with which the workers are read; empty: workers are not read (no --admit-timeout)")
	flag.DurationVar(&maxWait, "max-wait", 5*time.Minute,
		"ask the service again at least this often while a Workload waits for its window")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	service, err := dispatchclient.NewWithOptions(serviceURL, security)
	if err != nil {
		fail(err)
	}

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fail(err)
	}
	if err := kueue.AddToScheme(scheme); err != nil {
		fail(err)
	}
	if err := lease.check(); err != nil {
		fail(err)
	}
	if leaderNS == "" {
		leaderNS = os.Getenv("POD_NAMESPACE") // else controller-runtime reads the pod's own
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: probeAddr,
		// One replica leads (the Lease greensched-kueue.greensched.io); the others wait.
		// The leader gives the Lease up when it stops (SIGTERM: a rolling update hands over at
		// once, not after the lease runs out), which is safe because the process ends as soon
		// as the manager returns.
		LeaderElection:                leaderElect,
		LeaderElectionID:              "greensched-kueue.greensched.io",
		LeaderElectionNamespace:       leaderNS,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &lease.duration,
		RenewDeadline:                 &lease.renewDeadline,
		RetryPeriod:                   &lease.retryPeriod,
	})
	if err != nil {
		fail(err)
	}
	if dispatcher {
		d := &controller.Dispatcher{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Service: service,
			Recorder:        mgr.GetEventRecorderFor("greensched-dispatcher"),
			WorkerLostAfter: renominate.WorkerLostAfter, AdmitTimeout: renominate.AdmitTimeout}
		if workersNS != "" {
			d.Workers = &controller.KubeconfigWorkers{Clusters: mgr.GetClient(), Secrets: mgr.GetAPIReader(),
				Namespace: workersNS, Scheme: scheme}
		}
		if err := d.SetupWithManager(mgr); err != nil {
			fail(err)
		}
	}
	if greenWindow {
		g := &controller.GreenWindow{Client: mgr.GetClient(), Service: service,
			Recorder: mgr.GetEventRecorderFor("greensched-green-window"), MaxWait: maxWait}
		if err := g.SetupWithManager(mgr); err != nil {
			fail(err)
		}
		if err := (&controller.ActiveChecks{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
			fail(err)
		}
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		fail(err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		fail(err)
	}
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "greensched-kueue:", err)
	os.Exit(1)
}

// leaseTimes are the leader election's timings (as kube-controller-manager's flags).
type leaseTimes struct {
	duration, renewDeadline, retryPeriod time.Duration
}

func (l leaseTimes) check() error {
	if l.retryPeriod <= 0 || l.renewDeadline <= l.retryPeriod || l.duration <= l.renewDeadline {
		return fmt.Errorf("leader election: need 0 < --leader-elect-retry-period (%s) < --leader-elect-renew-deadline (%s) < --leader-elect-lease-duration (%s)",
			l.retryPeriod, l.renewDeadline, l.duration)
	}
	return nil
}
