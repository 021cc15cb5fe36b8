// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// requireResultAgrees checks that the reading of a tool result record (ResultLogIn,
// ResultSpanIn) tells the classifier what the whole reading (full, of LogLineIn or SpanIn)
// tells it once the record's kind is KindTool: relevant exactly when full is a timeout, and
// then the same record.
func requireResultAgrees(t *testing.T, full, result Record) {
	t.Helper()
	full.Kind = KindTool
	if result.Kind != KindTool || Relevant(result) != Relevant(full) {
		t.Fatalf("result reading %+v, whole reading as a tool %+v", result, full)
	}
	if Relevant(full) && result != full {
		t.Fatalf("result reading %+v, whole reading as a tool %+v", result, full)
	}
}

// resultOfLog is ResultLogIn of lr with facts line, on a fresh one pass over its attributes.
func resultOfLog(n *Names, lr plog.LogRecord, line dialect.Line) Record {
	var a fields.Record
	a.Reset(lr.Attributes())
	return n.ResultLogIn(lr, line, &a)
}

// resultOfSpan is ResultSpanIn of s on a fresh one pass over its attributes.
func resultOfSpan(n *Names, s ptrace.Span) Record {
	var a fields.Record
	a.Reset(s.Attributes())
	return n.ResultSpanIn(s, &a)
}

// TestResultLogInReadsAttributesWhateverTheLine: a record whose dialect found its line no
// timeout (dialect.LineNoTimeout) but whose attributes say timeout is a timeout for both
// readers.
func TestResultLogInReadsAttributesWhateverTheLine(t *testing.T) {
	n := defaultNames(t)
	for _, line := range []dialect.Line{dialect.LineNoTimeout, dialect.LineUnread} {
		lr := lineRecord(`{"type":"assistant","message":{"content":"ok"}}`)
		lr.Attributes().PutStr("error.type", "timeout")
		full := n.LogLine(lr, line)
		require.True(t, full.Timeout, "line %d", line)
		requireResultAgrees(t, full, resultOfLog(n, lr, line))
	}
}
