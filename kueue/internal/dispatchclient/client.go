// Package dispatchclient asks greensched's dispatch service (`greensched dispatch`, see
// docs/MULTICLUSTER.md) which worker clusters a Kueue Workload should go to and from when.
// Every decision is the service's; this package only carries the question and the answer.
package dispatchclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// Answer is the service's reply to POST /v1/dispatch.
type Answer struct {
	Workload      string   `json:"workload"`
	Clusters      []string `json:"clusters"`
	EarliestStart string   `json:"earliest_start"`
	StartAfterS   int64    `json:"start_after_s"`
	Mode          string   `json:"mode"`
	Agent         string   `json:"agent"`
	Reason        string   `json:"reason"`
	Degraded      []string `json:"degraded"`
	Repeated      bool     `json:"repeated"`
	// Renominated: the service decided anew for a Workload asked about with DispatchAgain.
	Renominated bool `json:"renominated"`
}

// Client posts to the service at URL (e.g. http://greensched-dispatch:8090).
type Client struct {
	URL  string
	HTTP *http.Client
}

// New returns a client with a bounded timeout.
func New(url string) *Client {
	return &Client{URL: url, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

type request struct {
	Workload   *kueue.Workload `json:"workload"`
	Clusters   []string        `json:"clusters,omitempty"`
	Exclude    []string        `json:"exclude,omitempty"`
	Renominate *Renomination   `json:"renominate,omitempty"`
}

// Renomination says why a Workload is asked about again: Reason (worker-lost, admit-timeout or
// unschedulable) and the cluster it was nominated to, From.
type Renomination struct {
	Reason string `json:"reason"`
	From   string `json:"from"`
}

// DispatchAgain asks anew where `wl`, nominated to `from` and moved away for `reason`, should
// go among `clusters`, none of `exclude` (the service decides anew, with the same agent, and
// answers "renominated": true).
func (c *Client) DispatchAgain(ctx context.Context, wl *kueue.Workload, clusters, exclude []string,
	from, reason string) (*Answer, error) {
	return c.send(ctx, request{Workload: wl, Clusters: clusters, Exclude: exclude,
		Renominate: &Renomination{Reason: reason, From: from}})
}

// Dispatch asks where `wl` should go among `clusters` (all the service knows when empty).
func (c *Client) Dispatch(ctx context.Context, wl *kueue.Workload, clusters []string) (*Answer, error) {
	return c.send(ctx, request{Workload: wl, Clusters: clusters})
}

func (c *Client) send(ctx context.Context, r request) (*Answer, error) {
	wl := r.Workload
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("encoding workload %s/%s: %w", wl.Namespace, wl.Name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+"/v1/dispatch", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("dispatch service: %w", err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("dispatch service: reading the answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(data, &e)
		return nil, fmt.Errorf("dispatch service: HTTP %d: %s", res.StatusCode, e.Error)
	}
	var a Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("dispatch service: the answer is not JSON: %w", err)
	}
	if len(a.Clusters) == 0 {
		return nil, fmt.Errorf("dispatch service: the answer names no cluster")
	}
	return &a, nil
}
