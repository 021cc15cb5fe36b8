package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// TestScopeAttributes: the conventions' scope attributes come first, then the agents' in
// trial order, each once.
func TestScopeAttributes(t *testing.T) {
	assert.Equal(t, []string{"gen_ai.conversation.id", "session.id", "conversation.id"}, ScopeAttributes())
	for _, e := range Entries() {
		for _, a := range e.ScopeAttributes {
			assert.Contains(t, ScopeAttributes(), a, e.Name)
		}
	}
}
