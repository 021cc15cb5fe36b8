// run.go reads the tool's own run time that a result line states: Claude Code's
// toolUseResult.durationMs, pi's and OpenClaw's message.details.durationMs (dialect.Found.RunMs,
// the record's toolpair.call.duration_ms when it is paired).

package transcript

import (
	"math"

	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// runOf reads the durationMs member of a JSON object (Claude Code's toolUseResult, pi's and
// OpenClaw's message.details): an integer, or a number rounded to the nearest ms.
func runOf(obj []byte) (int64, bool) {
	v, vt, _, err := jsonparser.Get(obj, "durationMs")
	if err != nil || vt != jsonparser.Number {
		return 0, false
	}
	if i, err := jsonparser.ParseInt(v); err == nil {
		return i, true
	}
	f, err := jsonparser.ParseFloat(v)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		return 0, false
	}
	return int64(math.Round(f)), true
}

// runOfMap reads the durationMs field of a map (see runOf): an int, or a double rounded to
// the nearest ms.
func runOfMap(m pcommon.Map) (int64, bool) {
	v, ok := fields.Get(m, "durationMs")
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int(), true
	case pcommon.ValueTypeDouble:
		if f := v.Double(); !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) <= 1e15 {
			return int64(math.Round(f)), true
		}
	}
	return 0, false
}
