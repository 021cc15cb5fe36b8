// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
)

// Names the tests use of the built-in dialects and sources, which the package itself takes
// from the registry.
const (
	DialectGenAI      = genai.Name
	DialectTranscript = transcript.Name
	sourceGenAI       = dialect.SourceGenAISpan
	sourceGenAIEcho   = dialect.SourceEcho
)

// vendorMarks are substrings of the agents' own event, span and field names: a string literal
// holding one names an agent.
var vendorMarks = []string{
	"claude_code.", "codex.", "gemini_cli.", "qwen-code.", "llm_call", "openclaw", "traceloop",
	"openinference", "ai.toolCall", "ai.generateText", "ai.streamText", "invoke_agent",
}

// TestOnlyDialectsNameAgents: no string literal of a non-test Go file of the component outside
// internal/dialect (generated files aside) names an agent's event, span or field: neither one
// of vendorMarks nor a name a built-in agent dialect declares (its anchors, operations and
// attributes, but not their status and error attributes, words as common as "error"; the
// dialects of the OTel conventions are left out, the rest of the component may name them).
// Those names belong in the dialects' registry entries.
func TestOnlyDialectsNameAgents(t *testing.T) {
	declared := map[string]string{}
	for _, e := range registry.Entries() {
		if e.Convention {
			continue
		}
		a, o := e.Anchors, e.Operations
		for _, list := range [][]string{
			a.TurnSpans, a.TurnSpanPrefixes, a.ModelSpans, o.ModelSpans, o.ToolSpans, o.ToolSpanPrefixes,
			o.ModelOperations, o.ModelEvents, o.ToolEvents, o.CompactionSpans, o.CompactionEvents,
			o.ModelAttributes, o.CallIDAttributes, o.DurationAttributes, {o.KindAttribute.Key, o.ToolKindAttribute.Key},
		} {
			for _, n := range list {
				if n != "" {
					declared[n] = e.Name
				}
			}
		}
	}
	require.NotEmpty(t, declared)
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == filepath.Join("internal", "dialect") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "generated_") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			require.NoError(t, err, path)
			if e, ok := declared[v]; ok {
				t.Errorf("%s names %q, which the %s dialect declares", path, v, e)
			}
			for _, m := range vendorMarks {
				if strings.Contains(v, m) {
					t.Errorf("%s names %q: an agent's name belongs in its dialect's entry", path, v)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 30, "the component's sources were not found")
}
