// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package registry

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// TestEntries: every built-in dialect has a name of its own, reads spans or log records, and
// is found by its name; Names lists them in trial order.
func TestEntries(t *testing.T) {
	names := Names()
	require.Len(t, names, len(Entries()))
	seen := map[string]bool{}
	for i, e := range Entries() {
		assert.NotEmpty(t, e.Name)
		assert.False(t, seen[e.Name], "%s is listed twice", e.Name)
		seen[e.Name] = true
		assert.Equal(t, e.Name, names[i])
		assert.NotEmpty(t, len(e.Spans)+len(e.Logs), "%s reads nothing", e.Name)
		for _, r := range e.Spans {
			assert.NotNil(t, r.Extract, e.Name)
		}
		for _, r := range e.Logs {
			assert.NotNil(t, r.Extract, e.Name)
		}
		assert.Same(t, e, Lookup(e.Name))
	}
	assert.Nil(t, Lookup("langchain"))
}

// TestSourcesUnique: every rule of every entry has a Source of its own, none of them an
// echo's (each signal's history is a source of its own) nor a custom dialect's.
func TestSourcesUnique(t *testing.T) {
	seen := map[uint8]string{dialect.SourceEcho: "span history", dialect.SourceEchoLog: "log history"}
	check := func(name string, src uint8) {
		prev, dup := seen[src]
		assert.False(t, dup, "%s and %s share source %d", name, prev, src)
		assert.NotZero(t, src, name)
		assert.Less(t, src, dialect.SourceCustom, name)
		seen[src] = name
	}
	for _, e := range Entries() {
		for _, r := range e.Spans {
			check(e.Name, r.Source)
		}
		for _, r := range e.Logs {
			check(e.Name, r.Source)
		}
	}
}

// TestSourcesDeclaredInOnePlace: the Source constants of internal/dialect/sources.go are the
// numbers the rules use, each rule's Source is one of them, and each of them but the echoes'
// and SourceCustom is the Source of exactly one rule: a new stream is one line there.
func TestSourcesDeclaredInOnePlace(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "../sources.go", nil, 0)
	require.NoError(t, err)
	declared := map[uint8]string{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				require.True(t, ok, "%s: a literal number, never iota: stored state keeps it", name.Name)
				v, err := strconv.ParseUint(constant.MakeFromLiteral(lit.Value, lit.Kind, 0).ExactString(), 10, 8)
				require.NoError(t, err)
				_, dup := declared[uint8(v)]
				assert.False(t, dup, "%s reuses %d", name.Name, v)
				declared[uint8(v)] = name.Name
			}
		}
	}
	used := map[uint8]int{}
	for _, e := range Entries() {
		for _, r := range e.Spans {
			used[r.Source]++
		}
		for _, r := range e.Logs {
			used[r.Source]++
		}
	}
	for src := range used {
		assert.Contains(t, declared, src, "Source %d is not declared in sources.go", src)
	}
	for src, name := range declared {
		switch src {
		case dialect.SourceEcho, dialect.SourceEchoLog, dialect.SourceCustom:
			assert.Zero(t, used[src], name)
		default:
			assert.Equal(t, 1, used[src], "%s is the Source of %d rules", name, used[src])
		}
	}
}

// TestScopeAttributes: the conventions' scope attributes come first, then the agents' in
// trial order, each once.
func TestScopeAttributes(t *testing.T) {
	assert.Equal(t, []string{"gen_ai.conversation.id", "session.id", "conversation.id"}, ConversationAttributes())
	for _, e := range Entries() {
		for _, a := range e.ConversationAttributes {
			assert.Contains(t, ConversationAttributes(), a, e.Name)
		}
	}
}
