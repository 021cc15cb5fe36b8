// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package otlptest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

func oneSpan(callID string) ptrace.Traces {
	td := ptrace.NewTraces()
	s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName("execute_tool t")
	s.SetTraceID(pcommon.TraceID{1})
	s.SetSpanID(pcommon.SpanID{2})
	s.SetEndTimestamp(5)
	s.Attributes().PutStr("gen_ai.tool.call.id", callID)
	s.Attributes().PutStr("toolpair.outcome", "paired")
	s.Attributes().PutInt("toolpair.call.duration_ms", 7)
	return td
}

func oneLog(body string) plog.Logs {
	ld := plog.NewLogs()
	lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.Body().SetStr(body)
	lr.Attributes().PutStr("tool_use_id", "toolu_1")
	lr.Attributes().PutBool("toolpair.synthetic", true)
	return ld
}

// TestSenderResendsUntilTheSinkIsUp: a Sender posting straight to a Sink that is down gets
// 503 answers with the sink's google.rpc.Status message and tries again until the sink is up;
// the sink stores the batch once (the refused tries left nothing), with the outcome, duration
// and call ID read from its attributes, and counts the refused requests.
func TestSenderResendsUntilTheSinkIsUp(t *testing.T) {
	sink := NewSink(t)
	sender := NewSender(sink.HTTPEndpoint())
	sender.Interval = 20 * time.Millisecond
	sink.Down()
	go func() {
		time.Sleep(200 * time.Millisecond)
		sink.Up()
	}()
	d := sender.SendTraces(oneSpan("call_1"))
	require.True(t, d.Accepted(), "%v", d.Err)
	assert.Greater(t, d.Refusals, 1)
	assert.Equal(t, d.Refusals+1, d.Tries)
	assert.Equal(t, d.Refusals, d.Statuses[503])
	assert.Equal(t, "503 sink down", d.LastRefusal)
	accepted, refused := sink.Requests(Traces)
	assert.Equal(t, 1, accepted)
	assert.Equal(t, d.Refusals, refused)

	res := sink.Results()
	require.Len(t, res["call_1"], 1)
	r := res["call_1"][0]
	assert.Equal(t, "paired", r.Outcome)
	assert.True(t, r.HasDuration)
	assert.Equal(t, int64(7), r.DurationMs)
	assert.Equal(t, "execute_tool t", r.Name)
	assert.Equal(t, "http", r.Transport)

	// JSON bodies too, and the totals add up.
	body, err := (&plog.JSONMarshaler{}).MarshalLogs(oneLog("hello"))
	require.NoError(t, err)
	require.True(t, sender.SendJSON("/v1/logs", body).Accepted())
	syn := sink.Synthetic()
	require.Len(t, syn, 1)
	assert.Equal(t, "hello", syn[0].Name)
	assert.Equal(t, "toolu_1", syn[0].CallID)
	assert.Equal(t, d.Tries+1, sender.Totals().Tries)
}

// TestSenderBounded: a Sender gives up on a batch after MaxTries answered tries.
func TestSenderBounded(t *testing.T) {
	sink := NewSink(t)
	sink.Down()
	sender := NewSender(sink.HTTPEndpoint())
	sender.Interval, sender.MaxTries = time.Millisecond, 3
	d := sender.SendLogs(oneLog("x"))
	require.Error(t, d.Err)
	assert.Equal(t, 3, d.Tries)
	assert.Empty(t, sink.Records())
}

// TestSinkGRPC: over OTLP/gRPC a down sink answers UNAVAILABLE and stores nothing; up, it
// stores the spans and log records.
func TestSinkGRPC(t *testing.T) {
	sink := NewSink(t)
	conn, err := grpc.NewClient(sink.GRPCEndpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	traces, logs := ptraceotlp.NewGRPCClient(conn), plogotlp.NewGRPCClient(conn)

	sink.Down()
	_, err = traces.Export(ctx, ptraceotlp.NewExportRequestFromTraces(oneSpan("c")))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	_, err = logs.Export(ctx, plogotlp.NewExportRequestFromLogs(oneLog("x")))
	assert.Equal(t, codes.Unavailable, status.Code(err))
	assert.Empty(t, sink.Records())

	sink.Up()
	_, err = traces.Export(ctx, ptraceotlp.NewExportRequestFromTraces(oneSpan("c")))
	require.NoError(t, err)
	_, err = logs.Export(ctx, plogotlp.NewExportRequestFromLogs(oneLog("x")))
	require.NoError(t, err)
	recs := sink.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, "grpc", recs[0].Transport)
	assert.Equal(t, Traces, recs[0].Signal)
	assert.Equal(t, Logs, recs[1].Signal)
	assert.Len(t, sink.Traces(), 1)
	assert.Len(t, sink.Logs(), 1)
	_, refused := sink.Requests(Logs)
	assert.Equal(t, 1, refused)
}
