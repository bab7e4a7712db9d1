// Package dispatchclient asks greensched's dispatch service (`greensched dispatch`, see
// docs/MULTICLUSTER.md) which worker clusters a Kueue Workload should go to and from when.
// Every decision is the service's; this package only carries the question and the answer.
//
// Over https the service's certificate is verified against Options.CAFile (or the system's
// CAs), optionally with a client certificate for mutual TLS; with Options.TokenFile every
// request carries `Authorization: Bearer <token>`, the file re-read when it changes (token.go).
package dispatchclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// ErrUnauthorized is wrapped by Dispatch's error when the service answers 401: the token (or
// client certificate) is missing or not the one the service expects.
var ErrUnauthorized = errors.New("the dispatch service refused the credentials")

// Answer is the service's reply to POST /v1/dispatch.
type Answer struct {
	Workload      string   `json:"workload"`
	Clusters      []string `json:"clusters"`
	EarliestStart string   `json:"earliest_start"`
	StartAfterS   int64    `json:"start_after_s"`
	// StartAfterMS is StartAfterS to the millisecond, from the moment the service answered
	// (absent from a service older than it).
	StartAfterMS *int64   `json:"start_after_ms"`
	Mode         string   `json:"mode"`
	Agent        string   `json:"agent"`
	Reason       string   `json:"reason"`
	Degraded     []string `json:"degraded"`
	Repeated     bool     `json:"repeated"`
	// Renominated: the service decided anew for a Workload asked about with DispatchAgain.
	Renominated bool `json:"renominated"`
}

// Client posts to the service at URL (e.g. https://greensched-dispatch:8090).
type Client struct {
	URL   string
	HTTP  *http.Client
	Token *TokenFile // nil: no Authorization header
}

// Options secure the connection to the service. All are optional.
type Options struct {
	TokenFile  string        // bearer token, re-read when the file changes
	CAFile     string        // PEM CA(s) the service's certificate must chain to (https)
	ClientCert string        // PEM client certificate for mutual TLS (with ClientKey)
	ClientKey  string        // PEM private key of ClientCert
	Timeout    time.Duration // per request; 0: 10 s
}

// DefaultTimeout bounds each request when Options.Timeout is 0.
const DefaultTimeout = 10 * time.Second

// New returns a client without credentials and with a bounded timeout.
func New(url string) *Client {
	return &Client{URL: url, HTTP: &http.Client{Timeout: DefaultTimeout}}
}

// NewWithOptions returns a client for `serviceURL` with the options' token and TLS settings.
// A token is only sent over https (or to a loopback address), and the TLS files only make
// sense with https: other combinations are errors, as are unreadable files.
func NewWithOptions(serviceURL string, o Options) (*Client, error) {
	u, err := url.Parse(serviceURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("dispatch URL %q: want http(s)://HOST:PORT", serviceURL)
	}
	https := u.Scheme == "https"
	if !https && (o.CAFile != "" || o.ClientCert != "" || o.ClientKey != "") {
		return nil, fmt.Errorf("dispatch URL %s: CA and client certificate files need an https URL", serviceURL)
	}
	if !https && o.TokenFile != "" && !loopback(u.Hostname()) {
		return nil, fmt.Errorf("dispatch URL %s: refusing to send the bearer token unencrypted; use https", serviceURL)
	}
	if (o.ClientCert == "") != (o.ClientKey == "") {
		return nil, errors.New("a client certificate needs its key and the other way round")
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Client{URL: strings.TrimSuffix(serviceURL, "/")}
	if o.TokenFile != "" {
		if c.Token, err = OpenTokenFile(o.TokenFile); err != nil {
			return nil, err
		}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if https {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if o.CAFile != "" {
			pem, err := os.ReadFile(o.CAFile)
			if err != nil {
				return nil, fmt.Errorf("dispatch CA file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("dispatch CA file %s: no PEM certificate in it", o.CAFile)
			}
			cfg.RootCAs = pool
		}
		if o.ClientCert != "" {
			pair, err := tls.LoadX509KeyPair(o.ClientCert, o.ClientKey)
			if err != nil {
				return nil, fmt.Errorf("dispatch client certificate: %w", err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		transport.TLSClientConfig = cfg
	}
	c.HTTP = &http.Client{Timeout: timeout, Transport: transport}
	return c, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	if c.Token != nil {
		req.Header.Set("Authorization", "Bearer "+c.Token.Token())
	}
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
		if res.StatusCode == http.StatusUnauthorized {
			return nil, fmt.Errorf("dispatch service: HTTP 401: %w (%s; check --dispatch-token-file "+
				"against the service's --auth-token-file)", ErrUnauthorized, e.Error)
		}
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
