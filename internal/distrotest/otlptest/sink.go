// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package otlptest holds the OTLP ends of the distribution's end-to-end tests: a Sink, an OTLP
// server in the test process that the collector under test exports to and that the test
// switches down and up, and a Sender that posts batches to the collector's OTLP/HTTP receiver
// and sends every refused batch again, as an SDK exporter or a front collector does. They
// test what the collector does when its next hop fails and the batches come again.
//
// It is a package of its own, apart from distrotest, so that the modules importing distrotest
// without needing OTLP (test/dashboard) do not take in pdata and gRPC.
package otlptest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
)

// The signals a Sink takes, as Record.Signal and the arguments of Requests name them.
const (
	Traces = "traces"
	Logs   = "logs"
)

// The content types of OTLP/HTTP.
const (
	protobufType = "application/x-protobuf"
	jsonType     = "application/json"
)

// callIDKeys are the attributes a Record's CallID is read from, in this order: the semantic
// conventions' (GenAI spans, synthetic records), Claude Code's, Codex's.
var callIDKeys = []string{"gen_ai.tool.call.id", "tool_use_id", "call_id"}

// Record is one span or log record a Sink accepted, with what toolpair wrote on it.
type Record struct {
	// Signal is Traces or Logs; Transport "http" or "grpc", the protocol it came by.
	Signal, Transport string
	// Name is the span's name; for a log record its event name (the OTLP EventName, else the
	// event.name attribute), else its body when that is a string.
	Name string
	// TraceID and SpanID are hex, empty when unset.
	TraceID, SpanID string
	// Time is the span's end, or the log record's timestamp.
	Time pcommon.Timestamp
	// CallID is the first of gen_ai.tool.call.id, tool_use_id and call_id the record carries.
	CallID string
	// Outcome is toolpair.outcome, Reason toolpair.interrupt.reason ("" when absent).
	Outcome, Reason string
	// DurationMs is toolpair.call.duration_ms, when HasDuration; ElapsedMs is
	// toolpair.call.elapsed_ms, else DurationMs (the processor writes it where they differ):
	// the time from the call's announcement to the record.
	DurationMs  int64
	ElapsedMs   int64
	HasDuration bool
	// Synthetic is toolpair.synthetic=true: a record toolpair made for a call whose result
	// never came.
	Synthetic bool
	// Attributes are the record's own attributes, each value as a string (AsString).
	Attributes map[string]string
}

// IsResult reports whether toolpair marked the record with an outcome and did not make it: a
// tool_result (or a history echo) as its agent sent it.
func (r Record) IsResult() bool { return r.Outcome != "" && !r.Synthetic }

// Sink is an OTLP server on loopback ports, OTLP/HTTP and OTLP/gRPC, that stores every span
// and log record it accepts. While it is down (Down) it refuses every export with the
// retryable error of its protocol, as a next hop that is unavailable does: OTLP/HTTP 503 with
// a google.rpc.Status body, gRPC UNAVAILABLE. Up again (Up), it accepts.
type Sink struct {
	httpPort, grpcPort int
	down               atomic.Bool

	mu       sync.Mutex
	records  []Record
	traces   []ptrace.Traces
	logs     []plog.Logs
	accepted map[string]int
	refused  map[string]int
	last     time.Time
}

// NewSink starts a Sink, up, on two free ports; the test's end stops it.
func NewSink(t testing.TB) *Sink {
	t.Helper()
	s := &Sink{accepted: map[string]int{}, refused: map[string]int{}}

	var httpL, grpcL net.Listener
	s.httpPort, httpL = listen(t)
	s.grpcPort, grpcL = listen(t)

	mux := http.NewServeMux()
	mux.HandleFunc("/v1/traces", s.serveHTTP(Traces))
	mux.HandleFunc("/v1/logs", s.serveHTTP(Logs))
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(httpL) }()

	gs := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(gs, &traceServer{s: s})
	plogotlp.RegisterGRPCServer(gs, &logServer{s: s})
	go func() { _ = gs.Serve(grpcL) }()

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
		gs.Stop()
	})
	return s
}

// listen binds a port FreePort reserved, trying another if something outside the tests took
// it between FreePort's check and this bind.
func listen(t testing.TB) (int, net.Listener) {
	t.Helper()
	var err error
	for range 10 {
		port := distrotest.FreePort(t)
		var l net.Listener
		if l, err = net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			return port, l
		}
	}
	require.NoError(t, err, "no port for the sink")
	return 0, nil
}

// HTTPEndpoint is the base URL of the OTLP/HTTP server, for an otlp_http exporter's endpoint
// (the exporter appends /v1/traces and /v1/logs).
func (s *Sink) HTTPEndpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", s.httpPort) }

// GRPCEndpoint is the host:port of the OTLP/gRPC server, for an otlp_grpc exporter.
func (s *Sink) GRPCEndpoint() string { return fmt.Sprintf("127.0.0.1:%d", s.grpcPort) }

// Down makes the sink refuse every export until Up.
func (s *Sink) Down() { s.down.Store(true) }

// Up makes the sink accept exports again.
func (s *Sink) Up() { s.down.Store(false) }

// IsDown reports whether the sink refuses exports.
func (s *Sink) IsDown() bool { return s.down.Load() }

// Requests returns how many export requests of signal (Traces or Logs) the sink accepted and
// how many it refused while down.
func (s *Sink) Requests(signal string) (accepted, refused int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted[signal], s.refused[signal]
}

// LastAccepted returns when the sink last accepted an export (the zero time before the first).
func (s *Sink) LastAccepted() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// Records returns every span and log record accepted so far, in the order they came.
func (s *Sink) Records() []Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Record(nil), s.records...)
}

// Find returns the records accepted so far for which match is true.
func (s *Sink) Find(match func(Record) bool) []Record {
	var out []Record
	for _, r := range s.Records() {
		if match(r) {
			out = append(out, r)
		}
	}
	return out
}

// Results returns, by call ID, the result records accepted so far (IsResult): each call's
// tool results, as many as arrived, with the outcome and duration toolpair wrote.
func (s *Sink) Results() map[string][]Record {
	out := map[string][]Record{}
	for _, r := range s.Records() {
		if r.IsResult() {
			out[r.CallID] = append(out[r.CallID], r)
		}
	}
	return out
}

// Synthetic returns the synthetic records (toolpair.synthetic=true) accepted so far.
func (s *Sink) Synthetic() []Record {
	return s.Find(func(r Record) bool { return r.Synthetic })
}

// Traces returns a copy of every traces export accepted, as it came.
func (s *Sink) Traces() []ptrace.Traces {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ptrace.Traces, len(s.traces))
	for i, td := range s.traces {
		out[i] = ptrace.NewTraces()
		td.CopyTo(out[i])
	}
	return out
}

// Logs returns a copy of every logs export accepted, as it came.
func (s *Sink) Logs() []plog.Logs {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]plog.Logs, len(s.logs))
	for i, ld := range s.logs {
		out[i] = plog.NewLogs()
		ld.CopyTo(out[i])
	}
	return out
}

// refuse counts a refused request when the sink is down and reports whether it was refused.
func (s *Sink) refuse(signal string) bool {
	if !s.down.Load() {
		return false
	}
	s.mu.Lock()
	s.refused[signal]++
	s.mu.Unlock()
	return true
}

// takeTraces stores an accepted export; td is copied.
func (s *Sink) takeTraces(td ptrace.Traces, transport string) {
	own := ptrace.NewTraces()
	td.CopyTo(own)
	var recs []Record
	for _, rs := range own.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				r := record(Traces, transport, sp.Attributes())
				r.Name = sp.Name()
				r.Time = sp.EndTimestamp()
				if !sp.TraceID().IsEmpty() {
					r.TraceID = sp.TraceID().String()
				}
				if !sp.SpanID().IsEmpty() {
					r.SpanID = sp.SpanID().String()
				}
				recs = append(recs, r)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traces = append(s.traces, own)
	s.records = append(s.records, recs...)
	s.accepted[Traces]++
	s.last = time.Now()
}

// takeLogs stores an accepted export; ld is copied.
func (s *Sink) takeLogs(ld plog.Logs, transport string) {
	own := plog.NewLogs()
	ld.CopyTo(own)
	var recs []Record
	for _, rl := range own.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				r := record(Logs, transport, lr.Attributes())
				r.Name = lr.EventName()
				if r.Name == "" {
					r.Name = r.Attributes["event.name"]
				}
				if r.Name == "" && lr.Body().Type() == pcommon.ValueTypeStr {
					r.Name = lr.Body().Str()
				}
				r.Time = lr.Timestamp()
				if !lr.TraceID().IsEmpty() {
					r.TraceID = lr.TraceID().String()
				}
				if !lr.SpanID().IsEmpty() {
					r.SpanID = lr.SpanID().String()
				}
				recs = append(recs, r)
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logs = append(s.logs, own)
	s.records = append(s.records, recs...)
	s.accepted[Logs]++
	s.last = time.Now()
}

// record reads what a Record keeps from a span's or log record's attributes.
func record(signal, transport string, attrs pcommon.Map) Record {
	r := Record{Signal: signal, Transport: transport, Attributes: make(map[string]string, attrs.Len())}
	for k, v := range attrs.All() {
		r.Attributes[k] = v.AsString()
	}
	for _, k := range callIDKeys {
		if v, ok := r.Attributes[k]; ok {
			r.CallID = v
			break
		}
	}
	r.Outcome = r.Attributes["toolpair.outcome"]
	r.Reason = r.Attributes["toolpair.interrupt.reason"]
	r.Synthetic = r.Attributes["toolpair.synthetic"] == "true"
	if v, ok := attrs.Get("toolpair.call.duration_ms"); ok && v.Type() == pcommon.ValueTypeInt {
		r.DurationMs, r.HasDuration = v.Int(), true
		r.ElapsedMs = r.DurationMs
	}
	if v, ok := attrs.Get("toolpair.call.elapsed_ms"); ok && v.Type() == pcommon.ValueTypeInt {
		r.ElapsedMs = v.Int()
	}
	return r
}
