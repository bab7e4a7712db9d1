package main

// The dispatch service's own account of its decision latency: the histogram
// greensched_dispatch_decision_seconds its /metrics exports (the serving replica's, from its
// start), read at the end of a scenario.

import (
	"bufio"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// decisionLatency is the histogram's count, its p99 and max as bucket bounds (the smallest
// bound at or under which 99 % / all of the decisions fall; -1 when only +Inf holds them).
type decisionLatency struct {
	Count   int     `json:"count"`
	P99LeS  float64 `json:"p99_at_most_s"`
	MaxLeS  float64 `json:"max_at_most_s"`
	Scraped string  `json:"error,omitempty"`
}

// scrapeDecisionLatency reads greensched_dispatch_decision_seconds from the service's
// /metrics.
func (e *env) scrapeDecisionLatency() decisionLatency {
	r, err := e.dispatchGet("/metrics")
	if err != nil {
		return decisionLatency{Scraped: err.Error()}
	}
	defer r.Body.Close()
	if r.StatusCode != 200 {
		return decisionLatency{Scraped: fmt.Sprintf("GET /metrics: HTTP %d", r.StatusCode)}
	}
	type bucket struct {
		le    float64
		count float64
	}
	var buckets []bucket
	count := -1.0
	s := bufio.NewScanner(r.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		name, rest, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		switch {
		case name == "greensched_dispatch_decision_seconds_count":
			count = value
		case strings.HasPrefix(name, `greensched_dispatch_decision_seconds_bucket{le="`):
			le := strings.TrimSuffix(strings.TrimPrefix(name, `greensched_dispatch_decision_seconds_bucket{le="`), `"}`)
			bound := math.Inf(1)
			if le != "+Inf" {
				if bound, err = strconv.ParseFloat(le, 64); err != nil {
					continue
				}
			}
			buckets = append(buckets, bucket{bound, value})
		}
	}
	if count < 0 || len(buckets) == 0 {
		return decisionLatency{Scraped: "no greensched_dispatch_decision_seconds in /metrics"}
	}
	sort.Slice(buckets, func(a, b int) bool { return buckets[a].le < buckets[b].le })
	out := decisionLatency{Count: int(count), P99LeS: -1, MaxLeS: -1}
	for i := len(buckets) - 1; i >= 0; i-- {
		if math.IsInf(buckets[i].le, 1) {
			continue
		}
		if buckets[i].count >= 0.99*count {
			out.P99LeS = buckets[i].le
		}
		if buckets[i].count >= count {
			out.MaxLeS = buckets[i].le
		}
	}
	return out
}
