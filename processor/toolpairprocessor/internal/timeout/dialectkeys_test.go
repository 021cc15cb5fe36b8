package timeout

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestDialectKeys: every span attribute the built-in dialects declare passes scanAttrs's
// filter and is read in its role, none is a key scan.read reads by name, and a span carrying
// one is of the kind the role says.
func TestDialectKeys(t *testing.T) {
	assert.NotEmpty(t, dialectKeys)
	n := &Names{}
	n.spanKinds = newNameKinds(patterns{}, nil, nil)
	for k, role := range dialectKeys {
		assert.True(t, mayScan(k), k)
		assert.False(t, slices.Contains(scannedKeys, k), k)
		m := pcommon.NewMap()
		var want Kind
		switch role {
		case roleKind:
			for v := range kindTools {
				m.PutStr(k, v)
			}
			want = KindTool
		case roleToolKind:
			for v := range toolKinds {
				m.PutStr(k, v)
			}
			want = KindTool
		case roleModel:
			m.PutStr(k, "chat")
			want = KindModel
		case roleCallID:
			m.PutStr(k, "c1")
			want = KindTool
		default:
			t.Fatalf("%s has no role", k)
		}
		sc := scanAttrs(m)
		assert.Equal(t, want, n.spanKind("span", &sc), k)
	}
}
