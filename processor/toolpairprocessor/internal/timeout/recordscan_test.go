// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// actionValues are values that make each case of scan.read note something.
var actionValues = func() []pcommon.Value {
	var vs []pcommon.Value
	for _, s := range []string{"", "timeout", "TimeoutError", "408", "504", "deadline exceeded", "execute_tool", "chat", "TOOL", "LLM", "tool", "12", "other"} {
		vs = append(vs, pcommon.NewValueStr(s))
	}
	return append(vs, pcommon.NewValueInt(408), pcommon.NewValueInt(200), pcommon.NewValueInt(12), pcommon.NewValueBool(true))
}()

// TestScanRecordMatchesScanAttrs: scanRecord of a record's one pass reads what scanAttrs
// reads.
func TestScanRecordMatchesScanAttrs(t *testing.T) {
	keys := append(slices.Clone(scannedKeys), slices.Collect(maps.Keys(dialectKeys))...)
	slices.Sort(keys)
	for i, k := range keys {
		for j, v := range actionValues {
			m := pcommon.NewMap()
			m.PutStr("unrelated", "timeout")
			v.CopyTo(m.PutEmpty(k))
			// Another key's value.
			actionValues[(i+j)%len(actionValues)].CopyTo(m.PutEmpty(keys[(i+1)%len(keys)]))
			var a fields.Record
			a.Reset(m)
			var sc scan
			scanRecord(&a, &sc)
			assert.Equal(t, scanAttrs(m), sc, "key %s value %v", k, v.AsRaw())
			assert.Equal(t, sc.timedOut(), timedOutIn(&a), "key %s value %v", k, v.AsRaw())
		}
	}
}
