package toolpairprocessor

import (
	"context"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/timeout"
)

// Attributes written on timeout records (specification section 4).
const (
	// AttrTimeoutPhase is toolpair.timeout.phase: tool_execution, provider, compaction or
	// unknown.
	AttrTimeoutPhase = "toolpair.timeout.phase"
	// AttrTimeoutActiveTools is toolpair.timeout.active_tools (int): the tool calls of the
	// record's scope in flight at its instant.
	AttrTimeoutActiveTools = "toolpair.timeout.active_tools"
	// AttrTimeoutActiveToolName is toolpair.timeout.active_tool.name: the tool of the most
	// recently started call in flight (written only when its name is known).
	AttrTimeoutActiveToolName = "toolpair.timeout.active_tool.name"
	// AttrTimeoutActiveToolCallID is toolpair.timeout.active_tool.call_id.
	AttrTimeoutActiveToolCallID = "toolpair.timeout.active_tool.call_id"
	// AttrTimeoutActiveToolElapsed is toolpair.timeout.active_tool.elapsed_ms (int, ms): the
	// record's end minus the call's announcement or start, truncated.
	AttrTimeoutActiveToolElapsed = "toolpair.timeout.active_tool.elapsed_ms"
)

// settle is how long after its end a model call or compaction still counts as in flight for
// a turn-level timeout (the engine's Config.Settle): the timeout error of a model call ends the
// records of the step, turn and agent that wait on it within milliseconds (0.5 ms for the
// Vercel AI SDK, 9 ms for Claude Code in the corpus captures).
const settle = time.Second

// timeouts classifies the timeout records of a component (specification section 4) against
// what the engine's scopes were doing: their tool calls, and the model calls and compactions
// the batches report (recordBatch.addTimeout). It is nil when timeout_classification is
// disabled.
type timeouts struct {
	names *timeout.Names
	tel   *telemetry
}

// pendingTimeout is a timeout record of the batch, classified once the engine has processed
// the batch's events.
type pendingTimeout struct {
	attrs pcommon.Map
	rec   timeout.Record
	key   pairing.ScopeKey
}

func newTimeouts(cfg *TimeoutClassificationConfig, tel *telemetry) (*timeouts, error) {
	if !cfg.Enabled {
		return nil, nil
	}
	names, err := timeout.NewNames(cfg.CompactionSpanNames, cfg.CompactionEventNames)
	if err != nil {
		return nil, err
	}
	return &timeouts{names: names, tel: tel}, nil
}

// timeoutRelevant reports whether the classifier needs record rec: a timeout record, a model
// call or a compaction.
func timeoutRelevant(rec timeout.Record) bool {
	return rec.Timeout || rec.Kind == timeout.KindModel || rec.Kind == timeout.KindCompaction
}

// classify writes the phase and the calls in flight on each timeout record, as the engine's
// scopes show them, and counts it.
func (t *timeouts) classify(ctx context.Context, e *pairing.Engine, pending []pendingTimeout) {
	for i := range pending {
		p := &pending[i]
		at := p.rec.End
		if p.rec.Kind == timeout.KindTool && at > 0 {
			// A tool record's instant is just before its own end, so its own call, resolved
			// at that end, is counted and is the active tool.
			at--
		}
		f := e.InFlightAt(p.key, at)
		phase := timeout.Classify(p.rec.Kind, f)
		writeTimeout(p.attrs, phase, f, p.rec.End)
		t.tel.timeout(ctx, phase)
	}
}

// writeTimeout writes the specification section 4 attributes; the active tool's elapsed time runs
// to end, the record's end.
func writeTimeout(attrs pcommon.Map, phase timeout.Phase, snap pairing.InFlight, end int64) {
	attrs.PutStr(AttrTimeoutPhase, phase.String())
	attrs.PutInt(AttrTimeoutActiveTools, int64(snap.Tools))
	if snap.Tools == 0 {
		return
	}
	if snap.Latest.Tool != "" {
		attrs.PutStr(AttrTimeoutActiveToolName, snap.Latest.Tool)
	}
	attrs.PutStr(AttrTimeoutActiveToolCallID, snap.Latest.CallID)
	attrs.PutInt(AttrTimeoutActiveToolElapsed, (end-snap.Latest.Start)/int64(time.Millisecond))
}

// durationKeys are the duration attributes of the built-in dialects
// (dialect.Operations.DurationAttributes), each once, in trial order.
var durationKeys = func() []string {
	var keys []string
	for _, e := range registry.Entries() {
		for _, k := range e.Operations.DurationAttributes {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}()

// logStart is the start of the tool call a result log record reports: its time minus its
// duration (the first of durationKeys it has, an int or a decimal string, in ms), else 0.
func logStart(lr plog.LogRecord) int64 {
	var v pcommon.Value
	ok := false
	for _, k := range durationKeys {
		if v, ok = fields.Get(lr.Attributes(), k); ok {
			break
		}
	}
	if !ok {
		return 0
	}
	var ms int64
	switch v.Type() {
	case pcommon.ValueTypeInt:
		ms = v.Int()
	case pcommon.ValueTypeStr:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0
		}
		ms = n
	default:
		return 0
	}
	end := dialect.LogTime(lr)
	if ms < 0 || end <= ms*int64(time.Millisecond) {
		return 0
	}
	return end - ms*int64(time.Millisecond)
}

// fileScopes are the FileScope functions of the built-in dialects, in trial order.
var fileScopes = func() []func(pcommon.Map) string {
	var out []func(pcommon.Map) string
	for _, e := range registry.Entries() {
		if e.FileScope != nil {
			out = append(out, e.FileScope)
		}
	}
	return out
}()

// fileScope is the scope of a transcript timeout line that names none itself: the first a
// built-in dialect's FileScope finds in attrs (the file the line came from); "" when none does.
func fileScope(attrs pcommon.Map) string {
	for _, fs := range fileScopes {
		if scope := fs(attrs); scope != "" {
			return scope
		}
	}
	return ""
}
