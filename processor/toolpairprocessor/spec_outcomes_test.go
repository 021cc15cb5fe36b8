// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

// Specification section 2: the outcome of every use and every result.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestContractS2Outcomes: every tool_use ends in exactly one outcome, and so does every
// tool_result; what is written on the records of each call (result records and synthetic
// records), for every outcome and reason, with the conservation of section 7 checked on the
// component's metrics after each.
func TestContractS2Outcomes(t *testing.T) {
	mark := func(c *Config) { c.Duplicates, c.Orphans = DispositionMark, DispositionMark }
	tests := []struct {
		name   string
		mutate func(*Config)
		run    func(r *rig)
		want   map[string][]string
	}{
		{name: "paired: use then result", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "paired: result first, waits up to orphan_grace for its use", run: func(r *rig) {
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(29 * time.Second)
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "paired: across signals (Claude Code decision log, tool result span)", run: func(r *rig) {
			r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
			r.spans(ctSpan{service: "claude-code", trace: 3, id: 1, name: "claude_code.tool", start: 100, end: 180,
				attrs: map[string]any{"tool_use_id": "toolu_1", "tool_name": "Bash", "session.id": "sess-1"}})
		}, want: map[string][]string{"toolu_1": {"span:paired"}}},
		{name: "interrupted next_step: a later model request under the same agent", run: func(r *rig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1", "c2"), ctTool(1, 2, 7, "c2", 110, 150), ctChat(1, 3, 7, 200, 300))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:interrupted/next_step+synthetic"}, "c2": {"span:paired"}}},
		{name: "interrupted session_end: invoke_agent end", run: func(r *rig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctAgent(1, 7, 0, 0, 500))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:interrupted/session_end+synthetic"}}},
		{name: "interrupted session_end: claude_code.interaction end", run: func(r *rig) {
			d := ctClaudeDecision("toolu_1", "accept", 100)
			d.trace = 4
			r.logRecords(d)
			r.spans(ctSpan{service: "claude-code", trace: 4, id: 1, name: "claude_code.interaction", start: 0, end: 900,
				attrs: map[string]any{"session.id": "sess-1"}})
			r.advance(31 * time.Second)
		}, want: map[string][]string{"toolu_1": {"log:interrupted/session_end+synthetic", "span:interrupted/session_end+synthetic"}}},
		{name: "interrupted expired: no result within pairing_timeout", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.advance(9 * time.Minute)
			require.Empty(t, r.marks(nil), "not before pairing_timeout")
			r.advance(time.Minute)
		}, want: map[string][]string{"c1": {"span:interrupted/expired+synthetic"}}},
		{name: "interrupted evicted: max_pending_calls reached, oldest first", mutate: func(c *Config) { c.MaxPendingCalls = 2 }, run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.spans(ctChat(2, 1, 0, 0, 100, "c2"))
			r.spans(ctChat(3, 1, 0, 0, 100, "c3"))
		}, want: map[string][]string{"c1": {"span:interrupted/evicted+synthetic"}}},
		{name: "interrupted shutdown: pending at shutdown", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.logRecords(ctClaudeDecision("toolu_1", "accept", 100))
			r.shutdown()
		}, want: map[string][]string{"c1": {"span:interrupted/shutdown+synthetic"}, "toolu_1": {"log:interrupted/shutdown+synthetic"}}},
		{name: "interrupted aborted: Codex tool span aborted=true marks the result, no synthetic", run: func(r *rig) {
			r.logRecords(ctCodexDecision("call_1", "approved", 100))
			r.spans(ctCodexToolSpan("call_1", 110, 900, true))
			r.shutdown()
		}, want: map[string][]string{"call_1": {"span:interrupted/aborted"}}},
		{name: "interrupted aborted: Claude Code transcript interrupt marker", run: func(r *rig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)),
				ctLine("/p/s1.jsonl", ctClaudeResultLine("s1", "", "toolu_9", "[Request interrupted by user for tool use]", 200)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:interrupted/aborted"}}},
		{name: "interrupted aborted: OpenClaw synthetic missing tool result", run: func(r *rig) {
			r.logRecords(ctLine("/oc/a.jsonl", ctPiUse("e1", "call_oc", 100)),
				ctLine("/oc/a.jsonl", ctPiResult("e2", "call_oc", 200, map[string]any{"openclawSyntheticMissingToolResult": true})))
			r.shutdown()
		}, want: map[string][]string{"call_oc": {"log:interrupted/aborted"}}},
		{name: "interrupted aborted: the aborted result arriving before its use", run: func(r *rig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeResultLine("s1", "", "toolu_9", "[Request interrupted by user for tool use]", 200)))
			r.advance(10 * time.Second)
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:interrupted/aborted"}}},
		{name: "interrupted aborted: a tool span reporting its abort whose use is never seen (Mastra, Strands)", run: func(r *rig) {
			tool := ctTool(1, 2, 1, "c1", 100, 4100)
			tool.status, tool.statusMessage = ptrace.StatusCodeError, "Command aborted: sleep 20"
			r.spans(tool)
			r.advance(time.Minute)
		}, want: map[string][]string{"c1": {"span:interrupted/aborted"}}},
		{name: "interrupted aborted: ... also in a scope that saw other calls' uses, and when its use comes after orphan_grace", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 50, "c0"), ctTool(1, 3, 0, "c0", 60, 90))
			tool := ctWith(ctTool(1, 2, 0, "c1", 100, 4100), "error.type", "cancelled")
			r.spans(tool)
			r.advance(time.Minute)
			r.spans(ctChat(1, 4, 0, 0, 99, "c1")) // a repeat of the resolved call
			r.advance(time.Minute)
		}, want: map[string][]string{"c0": {"span:paired"}, "c1": {"span:interrupted/aborted"}}},
		{name: "rejected: Claude Code decision reject, no synthetic even at shutdown", run: func(r *rig) {
			r.logRecords(ctClaudeDecision("toolu_r", "reject", 100))
			r.shutdown()
		}, want: map[string][]string{}},
		{name: "rejected: a Claude Code transcript result the user refused, marked on the result, no synthetic even at shutdown", run: func(r *rig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)))
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeRefusalLine("s1", "toolu_9", "The user doesn't want to proceed with this tool use.", "permission_prompt", 200)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:rejected"}}},
		{name: "rejected: ... also when the user interrupted the running tool, and the refusal comes first", run: func(r *rig) {
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeRefusalLine("s1", "toolu_9", "[Request interrupted by user for tool use]", "interrupt", 200)))
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)))
			r.shutdown()
		}, want: map[string][]string{"toolu_9": {"log:rejected"}}},
		{name: "paired: a refusal text without toolDenialKind is an ordinary result", run: func(r *rig) {
			l := ctClaudeRefusalLine("s1", "toolu_9", "The user doesn't want to proceed with this tool use.", "", 200)
			r.logRecords(ctLine("/p/s1.jsonl", ctClaudeUse("s1", "", "msg_1", "toolu_9", 100)), ctLine("/p/s1.jsonl", l))
		}, want: map[string][]string{"toolu_9": {"log:paired"}}},
		{name: "rejected: Codex denied and abort", run: func(r *rig) {
			r.logRecords(ctCodexDecision("call_d", "denied", 100), ctCodexDecision("call_a", "abort", 100))
			r.shutdown()
		}, want: map[string][]string{}},
		{name: "rejected: a later result of the call is a duplicate", mutate: mark, run: func(r *rig) {
			r.logRecords(ctClaudeDecision("toolu_r", "reject", 100))
			r.logRecords(ctClaudeResult("toolu_r", 300))
		}, want: map[string][]string{"toolu_r": {"log:duplicate"}}},
		{name: "rejected: the result of a refused call is kept, marked duplicate, whether it comes after the refusal", run: func(r *rig) {
			r.logRecords(ctCodexDecision("call_d", "denied", 100))
			r.logRecords(ctCodexResult("call_d", 110))
			// An export retry: delivered again, it gets what its first delivery got.
			r.logRecords(ctCodexResult("call_d", 110))
			r.spans(ctCodexToolSpan("call_d", 100, 110, false))
			r.advance(31 * time.Second)
			assert.Len(t, r.outLogs(), 3)
		}, want: map[string][]string{"call_d": {"log:duplicate", "log:duplicate", "span:duplicate"}}},
		{name: "rejected: ... or before it", run: func(r *rig) {
			r.logRecords(ctCodexResult("call_d", 110))
			r.spans(ctCodexToolSpan("call_d", 100, 110, false))
			r.logRecords(ctCodexDecision("call_d", "denied", 100))
			// An export retry: delivered again, it gets what its first delivery got.
			r.logRecords(ctCodexResult("call_d", 110))
			r.advance(31 * time.Second)
			assert.Len(t, r.outLogs(), 3)
		}, want: map[string][]string{"call_d": {"log:duplicate", "log:duplicate", "span:duplicate"}}},
		{name: "orphan: no use within orphan_grace, in a scope where uses are visible", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150), ctTool(1, 3, 0, "ghost", 110, 160))
			r.advance(29 * time.Second)
			require.NotContains(t, r.marks(nil), "ghost", "held for orphan_grace")
			r.advance(2 * time.Second)
		}, want: map[string][]string{"c1": {"span:paired"}, "ghost": {"span:orphan"}}},
		{name: "standalone: no use visible in the scope", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100), ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:standalone"}}},
		{name: "duplicate: a second, different result of a paired call (marked)", mutate: mark, run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctTool(1, 4, 0, "c1", 110, 160))
		}, want: map[string][]string{"c1": {"span:duplicate", "span:paired"}}},
		{name: "delivered again: an exact copy of a paired result gets what its first delivery got, never duplicate", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_redeliveries", map[string]string{"otel.signal": "traces"}))
		}, want: map[string][]string{"c1": {"span:paired", "span:paired"}}},
		{name: "delivered again: a batch holding the use and its result, sent twice, pairs both copies", run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:paired", "span:paired"}}},
		{name: "delivered again: a copy of a held result while it is held is the held one, which leaves once", mutate: mark, run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "other"), ctTool(1, 3, 0, "other", 100, 200))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:orphan"}, "other": {"span:paired"}}},
		{name: "delivered again: a copy of a held result after its use released it gets the released one's outcome", run: func(r *rig) {
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:paired", "span:paired"}}},
		{name: "duplicate: a result after the call was interrupted and synthesized", mutate: mark, run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.advance(10 * time.Minute)
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
		}, want: map[string][]string{"c1": {"span:duplicate", "span:interrupted/expired+synthetic"}}},
		{name: "a second, different record of a held result: the first resolves the call, the second is a duplicate", mutate: mark, run: func(r *rig) {
			r.spans(ctChat(1, 1, 0, 0, 100, "other"), ctTool(1, 3, 0, "other", 100, 200))
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.spans(ctTool(1, 4, 0, "c1", 110, 160))
			r.advance(31 * time.Second)
		}, want: map[string][]string{"c1": {"span:duplicate", "span:orphan"}, "other": {"span:paired"}}},
		{name: "a use arriving after its result was released standalone is a repeat, never interrupted (README)", run: func(r *rig) {
			r.spans(ctTool(1, 2, 0, "c1", 110, 150))
			r.advance(31 * time.Second)
			r.spans(ctChat(1, 1, 0, 0, 100, "c1"))
			r.shutdown()
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_uses_repeated", nil))
		}, want: map[string][]string{"c1": {"span:standalone"}}},
		{name: "order of arrival: a boundary seen before the result it follows still lets the call pair", run: func(r *rig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctChat(1, 3, 7, 400, 500))
			r.advance(20 * time.Second)
			r.spans(ctTool(1, 2, 7, "c1", 110, 350))
			r.advance(20 * time.Second)
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "order of arrival: a session end seen before the result still lets the call pair", run: func(r *rig) {
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctAgent(1, 7, 0, 0, 500))
			r.advance(20 * time.Second)
			r.spans(ctTool(1, 2, 7, "c1", 110, 350))
			r.advance(20 * time.Second)
		}, want: map[string][]string{"c1": {"span:paired"}}},
		{name: "evicted: a waiting result counts against max_pending_calls and is released when evicted", mutate: func(c *Config) { c.MaxPendingCalls = 2 }, run: func(r *rig) {
			r.spans(ctTool(1, 2, 0, "w1", 110, 150))
			r.spans(ctChat(2, 1, 0, 0, 100, "c1"))
			require.Empty(t, r.marks(nil))
			r.spans(ctChat(3, 1, 0, 0, 100, "c2"))
		}, want: map[string][]string{"w1": {"span:standalone"}}},
		{name: "a repeated use is not a new call (invoke_agent repeats its chat spans' calls)", run: func(r *rig) {
			agent := ctAgent(1, 7, 0, 0, 500)
			agent.attrs["gen_ai.output.messages"] = ctChat(1, 0, 0, 0, 0, "c1").attrs["gen_ai.output.messages"]
			r.spans(ctChat(1, 1, 7, 0, 100, "c1"), ctTool(1, 2, 7, "c1", 110, 150), agent)
			r.spans(ctChat(1, 1, 7, 0, 100, "c1")) // an export retry
			r.advance(11 * time.Minute)
			r.shutdown()
			assert.Equal(t, int64(2), r.sum("otelcol_processor_toolpair_uses_repeated", nil))
			assert.Equal(t, int64(1), r.sum("otelcol_processor_toolpair_uses", nil))
		}, want: map[string][]string{"c1": {"span:paired"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, withConfig(tt.mutate))
			tt.run(r)
			assert.Equal(t, tt.want, r.marks(ctTranscriptCallID))
			r.checkConservation()
		})
	}
}

// TestContractS2RepeatedKeysLastWins: a key repeated within one record's attributes (or its
// resource's) is read at its last occurrence, for every field the processor reads: call IDs,
// scope and tenant attributes, event names, decisions. Each case sends one record (and its
// resource) with a stale first occurrence of one key before the real one; read at the first,
// the call would not pair (or would be refused, or its result would not be one).
func TestContractS2RepeatedKeysLastWins(t *testing.T) {
	tests := []struct {
		name   string
		logs   []ctLog
		spans  []ctSpan
		key    string // repeated on record repeatOn (and its resource), stale value first
		stale  string
		signal string // where the paired result is
		// repeatOn is the index, in logs or spans, of the record whose key is repeated; each
		// record goes in a batch of its own.
		repeatOn int
	}{
		{name: "call ID (tool_use_id)", logs: []ctLog{ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 300)},
			key: "tool_use_id", stale: "toolu_stale", signal: "log", repeatOn: 1},
		{name: "call ID (gen_ai.tool.call.id)", spans: []ctSpan{ctChat(1, 1, 0, 0, 100, "c1"), ctTool(1, 2, 0, "c1", 110, 150)},
			key: "gen_ai.tool.call.id", stale: "c_stale", signal: "span", repeatOn: 1},
		{name: "scope (session.id)", logs: []ctLog{ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 300)},
			key: "session.id", stale: "sess-stale", signal: "log", repeatOn: 1},
		{name: "tenant (service.name, a resource attribute)", logs: []ctLog{ctClaudeDecision("toolu_1", "accept", 100), ctClaudeResult("toolu_1", 300)},
			key: "service.name", stale: "other-service", signal: "log", repeatOn: 0},
		{name: "event name (event.name)", logs: []ctLog{ctCodexDecision("call_1", "approved", 100), ctCodexResult("call_1", 300)},
			key: "event.name", stale: "codex.sse_event", signal: "log", repeatOn: 1},
		{name: "decision", logs: []ctLog{ctCodexDecision("call_1", "approved", 100), ctCodexResult("call_1", 300)},
			key: "decision", stale: "denied", signal: "log", repeatOn: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			for i, s := range tt.spans {
				td := ctTraces(s)
				if i == tt.repeatOn {
					td = ctRepeatKey(t, td, tt.key, tt.stale)
				}
				require.NoError(t, r.traces.ConsumeTraces(context.Background(), td))
			}
			for i, l := range tt.logs {
				ld := ctLogs(l)
				if i == tt.repeatOn {
					ld = ctRepeatKey(t, ld, tt.key, tt.stale)
				}
				require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
			}
			r.advance(11 * time.Minute)
			r.shutdown()
			var marks []string
			for _, s := range r.outSpans() {
				if o := ctStr(s.Attributes(), "toolpair.outcome"); o != "" {
					marks = append(marks, ctMark("span", s.Attributes()))
				}
			}
			for _, lr := range r.outLogs() {
				if o := ctStr(lr.Attributes(), "toolpair.outcome"); o != "" {
					marks = append(marks, ctMark("log", lr.Attributes()))
				}
			}
			assert.Equal(t, []string{tt.signal + ":paired"}, marks)
			r.checkConservation()
		})
	}
}

// ctRepeatKey returns a copy of data (plog.Logs or ptrace.Traces) in which every attribute
// list holding key (of resources and records) first holds key again with the string value
// stale: repeated keys as OTLP carries them (pcommon's Put methods cannot make them).
func ctRepeatKey[T plog.Logs | ptrace.Traces](t *testing.T, data T, key, stale string) T {
	t.Helper()
	var raw []byte
	var err error
	switch d := any(data).(type) {
	case plog.Logs:
		raw, err = (&plog.JSONMarshaler{}).MarshalLogs(d)
	case ptrace.Traces:
		raw, err = (&ptrace.JSONMarshaler{}).MarshalTraces(d)
	}
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	repeated := 0
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			for k, v := range n {
				if list, ok := v.([]any); ok && k == "attributes" {
					for _, a := range list {
						if a.(map[string]any)["key"] == key {
							stalePair := map[string]any{"key": key, "value": map[string]any{"stringValue": stale}}
							n[k] = append([]any{stalePair}, list...)
							repeated++
							break
						}
					}
					continue
				}
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(doc)
	require.Positive(t, repeated, "no attribute %s to repeat", key)
	raw, err = json.Marshal(doc)
	require.NoError(t, err)
	var out any
	switch any(data).(type) {
	case plog.Logs:
		out, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw)
	case ptrace.Traces:
		out, err = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
	}
	require.NoError(t, err)
	return out.(T)
}

// TestContractS2TranscriptRefusals runs the real Claude Code transcript short.jsonl, whose two
// refused calls (toolUseResult "User rejected tool use", Claude Code 2.1.38) are given the
// toolDenialKind later versions write: those two result records are marked rejected, no
// synthetic record is made, every other call stays paired, and the processor's telemetry
// counts them under rejected with the conservation of section 7 holding.
func TestContractS2TranscriptRefusals(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "transcripts", "claude-code", "short.jsonl")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	const marker = `"toolUseResult":"User rejected tool use"`
	require.Equal(t, 2, strings.Count(string(data), marker))
	data = []byte(strings.ReplaceAll(string(data), marker, marker+`,"toolDenialKind":"permission_prompt"`))
	edited := filepath.Join(t.TempDir(), "short.jsonl")
	require.NoError(t, os.WriteFile(edited, data, 0o600))

	r := newRig(t)
	for _, ld := range transcriptBatches(t, edited) {
		require.NoError(t, r.logs.ConsumeLogs(context.Background(), ld))
	}
	r.advance(time.Minute)
	r.shutdown()
	outcomes := map[string]int{}
	rejected := 0
	for _, lr := range r.outLogs() {
		o := ctStr(lr.Attributes(), "toolpair.outcome")
		outcomes[o]++
		if o == "rejected" {
			rejected++
			assert.Contains(t, lr.Body().Str(), marker)
			_, ok := lr.Attributes().Get("toolpair.call.duration_ms")
			assert.False(t, ok, "only paired results carry a duration")
		}
	}
	assert.Equal(t, 2, rejected)
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	assert.Equal(t, transcriptResults(t, lines)-2, outcomes["paired"], "every other call paired")
	assert.Zero(t, outcomes["interrupted"], "no synthetic record")
	const m = "otelcol_processor_toolpair_"
	assert.Equal(t, int64(2), r.sum(m+"outcomes", map[string]string{"toolpair.outcome": "rejected"}))
	r.checkConservation()
}
