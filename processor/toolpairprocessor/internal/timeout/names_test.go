// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// referenceSpanNameKind and referenceEventNameKind are what a span or event name says, as
// the patterns and name sets say it, without nameKinds.
func referenceSpanNameKind(n *Names, name string) Kind {
	switch {
	case n.CompactionSpan(name):
		return KindCompaction
	case modelSpanNames[name]:
		return KindModel
	case toolSpanNames[name], strings.HasPrefix(name, claudeToolPrefix):
		return KindTool
	}
	return KindOther
}

func referenceEventNameKind(n *Names, name string) Kind {
	switch {
	case n.CompactionEvent(name):
		return KindCompaction
	case modelEvents[name]:
		return KindModel
	case toolEvents[name]:
		return KindTool
	}
	return KindOther
}

// TestNameKinds: the kind of a name is that of the patterns and name sets, with exact
// patterns only and with regular expressions (among them ones that match known model and
// tool names, which are then compaction names), on first sight and once remembered.
func TestNameKinds(t *testing.T) {
	names := []string{
		"", "claude_code.compaction", "openclaw.compaction", "my.compact", "llm_call",
		"codex.sampling", "ai.toolCall", "openclaw.exec", "claude_code.tool", "claude_code.tool.execution",
		"claude_code.too", "claude_code.api_request", "codex.tool_result", "gen_ai.choice", "gemini_cli.tool_call",
		"tool_result", "claude_code.tool_result", "chat gpt-5", "invoke_agent", "x.compaction",
		strings.Repeat("a", 63), strings.Repeat("a", 64) + ".compaction", "ai.generateText.doGenerate",
	}
	for _, tc := range []struct {
		name          string
		spans, events []string
	}{
		{name: "defaults", spans: []string{`^claude_code\.compaction$`, `^openclaw\.compaction$`}, events: []string{`^claude_code\.compaction$`, `^openclaw\.compaction$`}},
		{name: "none"},
		{name: "regexps", spans: []string{`compact(ion)?$`, `^llm_call$`, `(?i)^AI\.TOOL`}, events: []string{`(?i)TOOL_RESULT$`, `^gen_ai\.choice$`, `compaction`}},
		{name: "prefix as a pattern", spans: []string{`^claude_code\.tool\.`}, events: []string{`^codex\.`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NewNames(tc.spans, tc.events)
			require.NoError(t, err)
			for pass := 0; pass < 2; pass++ {
				for _, name := range names {
					assert.Equal(t, referenceSpanNameKind(n, name), n.spanKinds.kind(name), "span %q, pass %d", name, pass)
					assert.Equal(t, referenceEventNameKind(n, name), n.eventKind(name), "event %q, pass %d", name, pass)
				}
			}
			if len(n.spans.res) == 0 {
				assert.Zero(t, n.spanKinds.cached(), "exact patterns need no cache")
			}
			if len(n.events.res) == 0 {
				assert.Zero(t, n.eventKinds.cached(), "exact patterns need no cache")
			}
		})
	}
}

// TestNameKindsCacheBound: at most maxCachedNames verdicts are kept; names past the bound are
// matched every time and answered the same; a name is kept once, as a copy.
func TestNameKindsCacheBound(t *testing.T) {
	n, err := NewNames([]string{`compaction$`}, nil)
	require.NoError(t, err)
	k := n.spanKinds
	for _, tc := range []struct {
		names int
		want  int
	}{
		{names: 1, want: 1},
		{names: 1, want: 1}, // the same name again
		{names: maxCachedNames - 1, want: maxCachedNames - 1},
		{names: maxCachedNames, want: maxCachedNames},
		{names: maxCachedNames + 50, want: maxCachedNames},
	} {
		for i := 0; i < tc.names; i++ {
			name := "span." + strconv.Itoa(i)
			want := KindOther
			switch i % 3 {
			case 1:
				name += ".compaction"
				want = KindCompaction
			case 2:
				name = claudeToolPrefix + "." + name
				want = KindTool
			}
			assert.Equal(t, want, k.kind(name), name)
		}
		assert.Equal(t, tc.want, k.cached(), "after %d names", tc.names)
	}
	assert.Equal(t, KindCompaction, k.kind("not.kept.compaction"))
	assert.Equal(t, KindOther, k.kind("not.kept"))
	assert.Equal(t, maxCachedNames, k.cached())

	// The name kept is a copy: the batch's memory may be reused.
	n, err = NewNames([]string{`compaction$`}, nil)
	require.NoError(t, err)
	buf := []byte("x.compaction")
	assert.Equal(t, KindCompaction, n.spanKinds.kind(string(buf)))
	copy(buf, "y.compactioX")
	assert.Equal(t, KindCompaction, n.spanKinds.kind("x.compaction"))
	assert.Equal(t, KindOther, n.spanKinds.kind("y.compactioX"))
	assert.Equal(t, 2, n.spanKinds.cached())

	// A log body that looks like an event name is decided, never kept: arbitrary bodies must
	// not take the places of real event names.
	n, err = NewNames(nil, []string{`compaction$`})
	require.NoError(t, err)
	lr := plog.NewLogRecord()
	lr.Body().SetStr("x.compaction")
	assert.Equal(t, KindCompaction, n.Log(lr).Kind)
	assert.Equal(t, 0, n.eventKinds.cached())
	lr.SetEventName("y.compaction")
	assert.Equal(t, KindCompaction, n.Log(lr).Kind)
	assert.Equal(t, 1, n.eventKinds.cached())
}

// TestNameKindsConcurrent: names are read and remembered from several goroutines (run with
// -race).
func TestNameKindsConcurrent(t *testing.T) {
	n, err := NewNames([]string{`compaction$`}, []string{`compaction$`})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2*maxCachedNames; i++ {
				name := "n" + strconv.Itoa(i%(maxCachedNames/2)) + ".compaction"
				assert.Equal(t, KindCompaction, n.spanKinds.kind(name))
				assert.Equal(t, KindCompaction, n.eventKind(name))
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, maxCachedNames/2, n.spanKinds.cached())
}

// TestScanAttrsKeys: every key scanAttrs reads passes its length and first-byte filter and is
// read; keys that share a scanned key's length and first byte, or none of them, are not.
func TestScanAttrsKeys(t *testing.T) {
	for _, k := range scannedKeys {
		assert.True(t, mayScan(k), k)
	}
	for _, tc := range []struct {
		key     string
		val     any
		timeout bool
		want    scan
	}{
		{key: "error.type", val: "timeout", timeout: true},
		{key: "exception.type", val: "TimeoutError", timeout: true},
		{key: "http.response.status_code", val: int64(504), timeout: true},
		{key: "http.status_code", val: "408", timeout: true},
		{key: "status_code", val: int64(408), timeout: true},
		{key: "error.message", val: "idle timeout", timeout: true},
		{key: "error", val: "Request timed out.", timeout: true},
		{key: "error_class", val: "api_timeout", timeout: true},
		{key: "exception.message", val: "deadline exceeded", timeout: true},
		{key: "gen_ai.operation.name", val: "chat", want: scan{op: "chat"}},
		{key: "openinference.span.kind", val: "TOOL", want: scan{openInference: "TOOL"}},
		{key: "traceloop.span.kind", val: "tool", want: scan{traceloopTool: true}},
		{key: "llm.request.type", val: "chat", want: scan{llmRequest: true}},
		{key: "gen_ai.tool.call_id", val: "c1", want: scan{callID: true}},
		{key: "call_id", val: "c1", want: scan{callID: true}},
		{key: "tool_use_id", val: "c1", want: scan{callID: true}},
		{key: "ai.toolCall.id", val: "c1", want: scan{callID: true}},
		{key: "event.name", val: "tool_result", want: scan{eventName: "tool_result"}},
		// Same length and first byte as a scanned key, or neither.
		{key: "error.typo", val: "timeout"},
		{key: "errors", val: "timed out"},
		{key: "status_cod3", val: int64(408)},
		{key: "gen_ai.operation.nam", val: "chat"},
		{key: "", val: "timeout"},
		{key: strings.Repeat("e", 40), val: "timeout"},
		{key: "Error", val: "timed out"},
	} {
		m := pcommon.NewMap()
		require.NoError(t, m.FromRaw(map[string]any{tc.key: tc.val, "gen_ai.request.model": "m"}))
		got := scanAttrs(m)
		assert.Equal(t, tc.timeout, got.timedOut(), tc.key)
		got.timeouts = 0
		assert.Equal(t, tc.want, got, tc.key)
	}
	m := pcommon.NewMap()
	m.PutInt("duration_ms", 12)
	sc := scanAttrs(m)
	assert.True(t, sc.hasDur)
	assert.Equal(t, int64(12), sc.durationMs.Int())
}
