package toolpairprocessor

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
)

// Names the tests use of the built-in dialects and sources, which the package itself takes
// from the registry.
const (
	DialectGenAI      = genai.Name
	DialectTranscript = transcript.Name
	sourceGenAI       = genai.SourceSpan
	sourceGenAIEcho   = dialect.SourceEcho
)

// TestBuiltinDialectTables: the span and log tables are the registry's rules in trial order,
// each with its own source, none the echo's nor a custom dialect's; custom dialects' sources
// start where the registry says.
func TestBuiltinDialectTables(t *testing.T) {
	assert.Equal(t, dialect.SourceCustom, sourceCustom)
	seen := map[uint8]string{}
	check := func(name string, source uint8) {
		assert.NotZero(t, source, name)
		assert.NotEqual(t, dialect.SourceEcho, source, name)
		if prev, ok := seen[source]; ok {
			t.Errorf("source %d of %s is also %s's", source, name, prev)
		}
		seen[source] = name
	}
	for _, d := range spanDialects {
		assert.Contains(t, knownDialects, d.name)
		check(d.name, d.source)
	}
	for _, d := range logDialects {
		assert.Contains(t, knownDialects, d.name)
		check(d.name, d.source)
	}
	assert.Equal(t, len(spanDialects)+len(logDialects), len(seen))
	// genai comes after the span dialects whose spans its rules would also read.
	last := func(ds []spanDialect, name string) int {
		n := -1
		for i, d := range ds {
			if d.name == name {
				n = i
			}
		}
		return n
	}
	assert.Equal(t, len(spanDialects)-1, last(spanDialects, genai.Name))
	assert.True(t, logDialects[len(logDialects)-1].ownScope, "the transcript lines are tried last")
}
