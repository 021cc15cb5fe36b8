// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"math/bits"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// action is what a scan does with the value of one key (scan.apply), decided once per
// registered key (actionOf) so that scanRecord compares no key: do is one of the act constants, bit the
// key's bit in scan.timeouts (-1: none).
type action struct {
	do  uint8
	bit int8
}

// What an action does.
const (
	actNone      uint8 = iota
	actErrorType       // a timeout when ErrorType says so
	actStatus          // a timeout status code (statusValue)
	actMessage         // a timeout message (messageValue)
	actOperation       // scan.op
	actCallID          // scan.callID
	actEventName       // scan.eventName
	actKind            // scan.openInference (roleKind)
	actToolKind        // scan.traceloopTool (roleToolKind)
	actModel           // scan.llmRequest (roleModel)
	actDuration        // scan.durationMs (roleDuration)
)

// actionOf is the action for key k: the timeout keys', then the dialect keys' roles.
func actionOf(k string) action {
	a := action{bit: int8(slices.Index(timeoutKeys, k))}
	switch k {
	case keyErrorType, keyExceptionType:
		a.do = actErrorType
	case keyHTTPStatus, keyHTTPStatusOld:
		a.do = actStatus
	case keyErrorMessage, keyExceptionMessage:
		a.do = actMessage
	case keyOperation:
		a.do = actOperation
	case keyToolCallID:
		a.do = actCallID
	case keyEventName:
		a.do = actEventName
	default:
		a.do = [...]uint8{actNone, actKind, actToolKind, actModel, actCallID, actStatus, actMessage, actDuration}[dialectKeys[k]]
	}
	return a
}

// apply notes what value v of a key of action a says (as scan.read would).
func (sc *scan) apply(a action, v pcommon.Value) {
	switch a.do {
	case actErrorType:
		sc.setBit(a.bit, ErrorType(str(v)))
	case actStatus:
		sc.setBit(a.bit, statusValue(v))
	case actMessage:
		sc.setBit(a.bit, messageValue(v))
	case actOperation:
		sc.op = str(v)
	case actCallID:
		sc.callID = true
	case actEventName:
		if v.Type() == pcommon.ValueTypeStr {
			sc.eventName = v.Str()
		}
	case actKind:
		sc.openInference = str(v)
	case actToolKind:
		sc.traceloopTool = toolKinds[str(v)]
	case actModel:
		sc.llmRequest = true
	case actDuration:
		sc.durationMs, sc.hasDur = v, true
	}
}

// setBit notes whether the key of bit i in scan.timeouts (none when i < 0) says timeout.
func (sc *scan) setBit(i int8, timedOut bool) {
	switch {
	case i < 0:
	case timedOut:
		sc.timeouts |= 1 << i
	default:
		sc.timeouts &^= 1 << i
	}
}

// readMask has the bit of each key scanAttrs reads (scannedKeys and dialectKeys) registered
// with package fields, laid out as fields.Record.Seen lays out its keys, and actions the
// action of each: scanRecord reads them from the record's one pass over its attributes.
var readMask, actions = func() (m [fields.MaxKeys / 64]uint64, acts [fields.MaxKeys]action) {
	add := func(k string) {
		if k == "" {
			return
		}
		f := fields.Register(k)
		m[f>>6] |= 1 << (f & 63)
		acts[f] = actionOf(k)
	}
	for _, k := range scannedKeys {
		add(k)
	}
	for k := range dialectKeys {
		add(k)
	}
	return m, acts
}()

// timeoutMask has the bit of each of timeoutKeys, laid out as readMask: the keys whose value
// may say a record timed out, all that timedOutIn reads.
var timeoutMask = func() (m [fields.MaxKeys / 64]uint64) {
	for _, k := range timeoutKeys {
		f := fields.Register(k)
		m[f>>6] |= 1 << (f & 63)
	}
	return m
}()

// recordExact reports whether scanRecord reads what scanAttrs reads: each key's last
// occurrence decides what scan notes of it, except where several keys share a role whose
// value the last of them gives (a kind, a tool kind, a duration), which one pass over the
// map in order alone tells; scanRecord then scans the map.
var recordExact = func() bool {
	n := map[uint8]int{}
	for _, role := range dialectKeys {
		n[role]++
	}
	return n[roleKind] <= 1 && n[roleToolKind] <= 1 && n[roleDuration] <= 1
}()

// scanRecord sets sc to scanAttrs of the attributes a reads, from a's one pass (sc is the
// caller's: a scan is too large to return by value on every record).
func scanRecord(a *fields.Record, sc *scan) {
	if !recordExact {
		*sc = scanAttrs(a.Map())
		return
	}
	*sc = scan{}
	applyKeys(a, &readMask, sc)
}

// timedOutIn is scanRecord's timedOut of the attributes a reads, from the timeout keys alone:
// each decides its own bit by its last occurrence, so one pass in order is never needed.
func timedOutIn(a *fields.Record) bool {
	var sc scan
	applyKeys(a, &timeoutMask, &sc)
	return sc.timedOut()
}

// applyKeys applies to sc the action of each key of mask that occurs in a, with its value.
func applyKeys(a *fields.Record, mask *[fields.MaxKeys / 64]uint64, sc *scan) {
	seen := a.Seen()
	for w := range seen {
		for b := seen[w] & mask[w]; b != 0; b &= b - 1 {
			k := fields.Key(w<<6 | bits.TrailingZeros64(b))
			v, _ := a.Value(k)
			sc.apply(actions[k], v)
		}
	}
}

// ResultLogIn is LogLineIn of a log record in which a dialect found a tool result: the
// record's kind is then KindTool whatever its names say, so the classifier needs it (Relevant)
// only when it is a timeout. Of a record that says no timeout (in its attributes or as a
// transcript line), Kind alone is set; its names, times and duration are not read.
func (n *Names) ResultLogIn(lr plog.LogRecord, line dialect.Line, a *fields.Record) Record {
	if !timedOutIn(a) {
		if line == dialect.LineNoTimeout {
			return Record{Kind: KindTool}
		}
		t, ok := TranscriptLine(lr.Body())
		if !ok || !t.Timeout {
			return Record{Kind: KindTool}
		}
	}
	r := n.LogLineIn(lr, line, a)
	r.Kind = KindTool
	return r
}

// ResultSpanIn is SpanIn of a span in which a dialect found a tool result, read only as far
// as ResultLogIn reads a log record: of a span that says no timeout (attributes, status,
// exception events), Kind alone is set, KindTool.
func (n *Names) ResultSpanIn(s ptrace.Span, a *fields.Record) Record {
	if !spanTimedOut(s, timedOutIn(a)) {
		return Record{Kind: KindTool}
	}
	r := n.SpanIn(s, a)
	r.Kind = KindTool
	return r
}

// LogLineIn is LogLine of a log record whose attributes a reads (dialect.Found.Attrs): the
// classifier shares the record's one pass over its attributes with its dialect.
func (n *Names) LogLineIn(lr plog.LogRecord, line dialect.Line, a *fields.Record) Record {
	var sc scan
	scanRecord(a, &sc)
	return n.logLine(lr, line, &sc)
}

// SpanIn is Span of a span whose attributes a reads (dialect.Found.Attrs).
func (n *Names) SpanIn(s ptrace.Span, a *fields.Record) Record {
	var sc scan
	scanRecord(a, &sc)
	return n.span(s, &sc)
}
