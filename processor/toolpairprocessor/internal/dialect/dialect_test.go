package dialect

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
)

func TestSkipHistory(t *testing.T) {
	noop := func(messages.Part) {}
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"scanned", messages.ScanValue(pcommon.NewValueStr(`[{"role":"user","parts":[]}]`), noop), nil},
		{"wrong type", messages.ScanValue(pcommon.NewValueInt(3), noop), []string{ReasonInvalidType}},
		{"unreadable JSON", messages.ScanValue(pcommon.NewValueStr(`[{"role":`), noop), []string{ReasonInvalidJSON}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f Found
			f.SkipHistory(tt.err)
			assert.Equal(t, tt.want, f.Malformed)
		})
	}
}
