// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package otlptest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// Sender posts OTLP/HTTP batches to a collector's otlp receiver and sends every batch that is
// refused with a retryable status (429, 502, 503, 504) again, after Interval, until it is
// accepted (200), as an SDK's OTLP exporter with retries or a front collector's exporter does:
// at least once. It gives up after MaxTries answered tries or MaxTime, whichever comes first.
// A try that gets no answer (the collector not listening yet) is tried again too, within the
// same bounds. A Sender may be used by several goroutines.
type Sender struct {
	// Endpoint is the receiver's base URL, such as http://127.0.0.1:4318.
	Endpoint string
	// Interval is the wait before each try after the first.
	Interval time.Duration
	// MaxTries bounds the answered tries of one batch, MaxTime the time spent on it.
	MaxTries int
	MaxTime  time.Duration
	// Client sends the requests; its Timeout bounds each try.
	Client *http.Client

	mu     sync.Mutex
	totals Delivery
}

// NewSender returns a Sender to the receiver at endpoint that tries every 50ms, at most 2,000
// times and for at most 30s per batch, each try within 10s.
func NewSender(endpoint string) *Sender {
	return &Sender{
		Endpoint: endpoint,
		Interval: 50 * time.Millisecond,
		MaxTries: 2000,
		MaxTime:  30 * time.Second,
		Client:   &http.Client{Timeout: 10 * time.Second},
	}
}

// Delivery is what sending one batch took.
type Delivery struct {
	// Tries counts the tries that got an answer. Each went through the collector's pipeline:
	// the receiver answers once the pipeline has taken the batch or refused it.
	Tries int
	// Refusals counts the retryable answers: the deliveries of the batch the pipeline took in,
	// then refused, so that the batch was delivered again.
	Refusals int
	// Unanswered counts the tries that got no answer (connection refused, a timeout).
	Unanswered int
	// Statuses counts the answers by HTTP status.
	Statuses map[int]int
	// LastRefusal is the message of the last refusal's google.rpc.Status body, with its status.
	LastRefusal string
	// Err is nil when the batch was accepted.
	Err error
}

// Accepted reports whether the batch was accepted (200) in the end.
func (d Delivery) Accepted() bool { return d.Err == nil }

// add adds the counts of o to d (not Err).
func (d *Delivery) add(o Delivery) {
	d.Tries += o.Tries
	d.Refusals += o.Refusals
	d.Unanswered += o.Unanswered
	if d.Statuses == nil {
		d.Statuses = map[int]int{}
	}
	for k, v := range o.Statuses {
		d.Statuses[k] += v
	}
	if o.LastRefusal != "" {
		d.LastRefusal = o.LastRefusal
	}
}

// Totals returns the counts over every batch sent so far.
func (s *Sender) Totals() Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.totals
	t.Statuses = map[int]int{}
	for k, v := range s.totals.Statuses {
		t.Statuses[k] = v
	}
	return t
}

// SendTraces sends td as OTLP/HTTP protobuf to /v1/traces until it is accepted.
func (s *Sender) SendTraces(td ptrace.Traces) Delivery {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return Delivery{Err: err}
	}
	return s.Send("/v1/traces", protobufType, body)
}

// SendLogs sends ld as OTLP/HTTP protobuf to /v1/logs until it is accepted.
func (s *Sender) SendLogs(ld plog.Logs) Delivery {
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		return Delivery{Err: err}
	}
	return s.Send("/v1/logs", protobufType, body)
}

// SendJSON sends an OTLP/JSON body (a capture's logs.json or traces.json) to path until it is
// accepted.
func (s *Sender) SendJSON(path string, body []byte) Delivery {
	return s.Send(path, jsonType, body)
}

// Send posts body, of content type ctype, to path until it is accepted, a non-retryable
// status answers it, or a bound is reached; the same bytes each time.
func (s *Sender) Send(path, ctype string, body []byte) Delivery {
	d := Delivery{Statuses: map[int]int{}}
	defer func() {
		s.mu.Lock()
		s.totals.add(d)
		s.mu.Unlock()
	}()
	deadline := time.Now().Add(s.MaxTime)
	for first := true; ; first = false {
		if !first {
			if d.Tries >= s.MaxTries || time.Now().Add(s.Interval).After(deadline) {
				d.Err = fmt.Errorf("%w after %d tries (%d unanswered) in %s: last refusal %s", errNotAccepted, d.Tries, d.Unanswered, s.MaxTime, d.LastRefusal)
				return d
			}
			time.Sleep(s.Interval)
		}
		resp, err := s.Client.Post(s.Endpoint+path, ctype, bytes.NewReader(body))
		if err != nil {
			d.Unanswered++
			continue
		}
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		d.Tries++
		d.Statuses[resp.StatusCode]++
		switch resp.StatusCode {
		case http.StatusOK:
			return d
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			d.Refusals++
			d.LastRefusal = fmt.Sprintf("%d %s", resp.StatusCode, statusMessage(resp.Header.Get("Content-Type"), answer))
		default:
			d.Err = fmt.Errorf("%w: status %d, %s", errNotAccepted, resp.StatusCode, statusMessage(resp.Header.Get("Content-Type"), answer))
			return d
		}
	}
}
