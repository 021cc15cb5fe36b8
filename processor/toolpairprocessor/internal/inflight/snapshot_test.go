package inflight

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// TestExportImport: a tracker imported from another's export answers every question as the
// original does, and forgets what it forgets when retention passes.
func TestExportImport(t *testing.T) {
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	a := newTracker(t, c, 100)
	scopeB := pairing.ScopeKey{Tenant: "svc", Scope: "session-b"}
	a.Announce(scopeA, "c1", "Bash", 1000*ms)
	a.Announce(scopeA, "c2", "Read", 1100*ms)
	a.Resolve(scopeA, "c2", "Read", 1500*ms)
	a.Interval(scopeA, Model, 900*ms, 1050*ms)
	a.Interval(scopeB, Compaction, 2000*ms, 3000*ms)
	for i := range 12 { // enough calls to index the scope
		a.Announce(scopeB, string(rune('a'+i)), "Edit", int64(2000+i)*ms)
	}
	saved := a.Export()
	require.Len(t, saved, a.Len())

	b := newTracker(t, c, 100)
	require.NoError(t, b.Import(saved))
	assert.Equal(t, a.Len(), b.Len())
	assert.Equal(t, saved, b.Export())
	for _, at := range []int64{950, 1000, 1200, 1600, 2005, 2500, 3500} {
		for _, k := range []pairing.ScopeKey{scopeA, scopeB} {
			assert.Equal(t, a.At(k, at*ms), b.At(k, at*ms), "scope %s at %dms", k.Scope, at)
		}
	}
	c.now = c.now.Add(6 * time.Minute)
	a.Expire()
	b.Expire()
	assert.Equal(t, a.Export(), b.Export())
	require.Error(t, b.Import(saved), "import into a tracker that is not empty")
}
