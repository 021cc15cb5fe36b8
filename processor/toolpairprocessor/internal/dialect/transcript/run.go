// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// run.go reads the tool's own run time that a result line states: Claude Code's
// toolUseResult.durationMs, pi's and OpenClaw's message.details.durationMs (dialect.Found.RunMs,
// the record's toolpair.call.duration_ms when it is paired).

package transcript

import (
	"github.com/buger/jsonparser"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/normalize"
)

// runOf reads the durationMs member of a JSON object (Claude Code's toolUseResult, pi's and
// OpenClaw's message.details) as runOfMap reads it from a map body, so that a line reads the
// same as a string or a parsed body: a number (rounded to the nearest ms) or a numeric string.
func runOf(obj []byte) (int64, bool) {
	raw, vt, _, err := jsonparser.Get(obj, "durationMs")
	if err != nil {
		return 0, false
	}
	v := pcommon.NewValueEmpty()
	switch vt {
	case jsonparser.Number:
		if i, err := jsonparser.ParseInt(raw); err == nil {
			v.SetInt(i)
		} else if f, err := jsonparser.ParseFloat(raw); err == nil {
			v.SetDouble(f)
		}
	case jsonparser.String:
		if str, err := jsonparser.ParseString(raw); err == nil {
			v.SetStr(str)
		}
	}
	return normalize.Millis(v)
}

// runOfMap reads the durationMs field of a map (see runOf) as the duration normalization
// reads its fields (normalize.Millis): an int, a double rounded to the nearest ms, or a numeric
// string.
func runOfMap(m pcommon.Map) (int64, bool) {
	v, ok := fields.Get(m, "durationMs")
	if !ok {
		return 0, false
	}
	return normalize.Millis(v)
}
