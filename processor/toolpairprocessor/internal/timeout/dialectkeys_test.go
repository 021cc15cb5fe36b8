// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

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
		case roleStatus, roleError, roleDuration:
			continue // TestTimeoutKeys, TestScanAttrsKeys
		default:
			t.Fatalf("%s has no role", k)
		}
		sc := scanAttrs(m)
		assert.Equal(t, want, n.spanKind("span", &sc), k)
	}
}

// TestTimeoutKeys: each timeout key has a bit of scan.timeouts of its own, and a dialect's
// status and error attributes say timeout as the conventions' do.
func TestTimeoutKeys(t *testing.T) {
	assert.LessOrEqual(t, len(timeoutKeys), 16)
	for i, k := range timeoutKeys {
		assert.Equal(t, i, slices.Index(timeoutKeys, k), k)
	}
	for k, role := range dialectKeys {
		m := pcommon.NewMap()
		switch role {
		case roleStatus:
			m.PutInt(k, 504)
		case roleError:
			m.PutStr(k, "request timed out")
		default:
			continue
		}
		sc := scanAttrs(m)
		assert.True(t, sc.timedOut(), k)
		m.PutStr(k, "overloaded")
		sc = scanAttrs(m)
		assert.False(t, sc.timedOut(), k)
	}
}
