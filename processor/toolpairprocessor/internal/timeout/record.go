// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
)

// Record is what classification needs of one span or log record.
type Record struct {
	// Timeout reports whether the record says it timed out.
	Timeout bool
	// Kind is the operation the record is.
	Kind Kind
	// Start and End are the operation's start and end in Unix nanoseconds: a span's start
	// and end; a log record's time as End, and End minus its duration_ms as Start when it has
	// one (0 when unknown).
	Start, End int64
	// Scope and ScopeAttr are the scope a transcript line names itself (Claude Code's
	// sessionId, or sessionId/agentId for a subagent), "" otherwise.
	Scope, ScopeAttr string
	// Transcript reports that the record is a transcript line (its body).
	Transcript bool
}

// Attribute keys read (semconv v1.37.0 where the convention has them).
var (
	keyErrorType        = string(semconv.ErrorTypeKey)
	keyExceptionType    = string(semconv.ExceptionTypeKey)
	keyExceptionMessage = string(semconv.ExceptionMessageKey)
	keyHTTPStatus       = string(semconv.HTTPResponseStatusCodeKey)
	keyOperation        = string(semconv.GenAIOperationNameKey)
	keyToolCallID       = string(semconv.GenAIToolCallIDKey)
)

const (
	// keyHTTPStatusOld is http.status_code, the name before semconv v1.21 (Gemini CLI).
	keyHTTPStatusOld = "http.status_code"
	// keyErrorMessage is error.message (Codex, Gemini CLI).
	keyErrorMessage = "error.message"
	// keyEventName is the event.name attribute (Claude Code, Codex, Gemini CLI).
	keyEventName = "event.name"
	// eventException is the span event name of a recorded exception (semconv).
	eventException = "exception"
)

// scan is what one pass over a record's attributes found. Of a key repeated in the map, the
// last occurrence counts (specification section 2), as for every field the processor reads.
type scan struct {
	// timeouts has bit timeoutBit(k) set when the last occurrence of key k says the record
	// timed out.
	timeouts uint16
	// kind hints of spans: gen_ai.operation.name; the value of a dialect's kind attribute
	// (dialect.Operations.KindAttribute: OpenInference's span kind); whether a tool kind
	// attribute says tool (ToolKindAttribute: OpenLLMetry's span kind); whether a model
	// attribute (OpenLLMetry's llm.request.type) or a call ID attribute is present.
	op, openInference string
	traceloopTool     bool
	llmRequest        bool
	callID            bool
	// of log records
	eventName  string
	durationMs pcommon.Value
	hasDur     bool
}

// timeoutKeys are the keys whose value may say a record timed out, in the order of their bits
// in scan.timeouts: the conventions' and the built-in dialects' (dialect.Operations
// StatusAttributes and ErrorAttributes), each once, 16 at most (TestTimeoutKeys).
var timeoutKeys = func() []string {
	keys := []string{keyErrorType, keyExceptionType, keyHTTPStatus, keyHTTPStatusOld, keyErrorMessage, keyExceptionMessage}
	for _, k := range append(slices.Clone(builtin.StatusAttributes), builtin.ErrorAttributes...) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}()

// timedOut reports whether the last occurrence of any timeout key says the record timed out.
func (sc *scan) timedOut() bool { return sc.timeouts != 0 }

// scannedKeys are the attribute keys scanAttrs reads by name: those actionOf has a case for
// (TestScannedKeysMatchRead checks that the two lists agree). It also reads the keys of
// dialectKeys, in the switch's default case.
var scannedKeys = []string{
	keyErrorType, keyExceptionType, keyHTTPStatus, keyHTTPStatusOld,
	keyErrorMessage, keyExceptionMessage, keyOperation, keyToolCallID, keyEventName,
}

// Roles of the span attributes the built-in dialects declare (dialect.Operations).
const (
	roleKind     uint8 = iota + 1 // KindAttribute: its value, in scan.openInference
	roleToolKind                  // ToolKindAttribute: whether its value is a Tool value
	roleModel                     // ModelAttributes: present
	roleCallID                    // CallIDAttributes: present
	roleStatus                    // StatusAttributes: a timeout status code
	roleError                     // ErrorAttributes: a timeout message
	roleDuration                  // DurationAttributes: the record's duration
)

// dialectKeys maps the span attributes the built-in dialects declare to their role; kindTools,
// kindModels and toolKinds are the values of their kind attributes that say a tool or a model
// call. A key scan.read has a case for keeps that case.
var dialectKeys, kindTools, kindModels, toolKinds = func() (keys map[string]uint8, tools, models, toolKind map[string]bool) {
	keys = map[string]uint8{}
	tools, models, toolKind = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, a := range builtinKinds {
		keys[a.Key] = roleKind
		for _, v := range a.Tool {
			tools[v] = true
		}
		for _, v := range a.Model {
			models[v] = true
		}
	}
	for _, a := range builtinToolKinds {
		keys[a.Key] = roleToolKind
		for _, v := range a.Tool {
			toolKind[v] = true
		}
	}
	for _, k := range builtin.ModelAttributes {
		keys[k] = roleModel
	}
	for _, k := range builtin.CallIDAttributes {
		keys[k] = roleCallID
	}
	for _, k := range builtin.StatusAttributes {
		keys[k] = roleStatus
	}
	for _, k := range builtin.ErrorAttributes {
		keys[k] = roleError
	}
	for _, k := range builtin.DurationAttributes {
		keys[k] = roleDuration
	}
	return keys, tools, models, toolKind
}()

// keyFilter has, at index l, bit b&31 set for each first byte b of a scanned key or dialect
// key of length l: most keys of a record are told apart from the scanned ones by their length
// and first byte, without comparing strings.
var keyFilter = func() (f [32]uint32) {
	for _, k := range scannedKeys {
		f[len(k)] |= 1 << (k[0] & 31)
	}
	for k := range dialectKeys {
		if k != "" && len(k) < len(f) {
			f[len(k)] |= 1 << (k[0] & 31)
		}
	}
	return f
}()

// mayScan reports whether k may be a key scanAttrs reads (keyFilter).
func mayScan(k string) bool {
	return k != "" && len(k) < len(keyFilter) && keyFilter[len(k)]&(1<<(k[0]&31)) != 0
}

// scanAttrs reads a record's (or an exception event's) attributes in one pass: whether they
// say it timed out, and the fields that say what kind of operation it is.
func scanAttrs(attrs pcommon.Map) scan {
	var sc scan
	for k, v := range attrs.All() {
		if mayScan(k) {
			sc.read(k, v)
		}
	}
	return sc
}

// read notes what attribute k, v says: the action of its key (actionOf), which scanRecord
// applies from a record's one pass.
func (sc *scan) read(k string, v pcommon.Value) {
	sc.apply(actionOf(k), v)
}

// statusValue is StatusCode of a string or integer value (an integer without formatting it).
func statusValue(v pcommon.Value) bool {
	if v.Type() == pcommon.ValueTypeInt {
		return v.Int() == 408 || v.Int() == 504
	}
	return StatusCode(str(v))
}

// messageValue reports whether a value is a string that says timeout (Message).
func messageValue(v pcommon.Value) bool { return v.Type() == pcommon.ValueTypeStr && Message(v.Str()) }

// intValue is an integer value, or a string value parsed as a decimal integer.
func intValue(v pcommon.Value) (int64, error) {
	if v.Type() == pcommon.ValueTypeInt {
		return v.Int(), nil
	}
	return strconv.ParseInt(str(v), 10, 64)
}

// str is a string or integer value as a string, else "".
func str(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return v.Str()
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.Int(), 10)
	default:
		return ""
	}
}

// Span reads a span: whether it is a timeout, what kind of operation it is, and its start
// and end.
func (n *Names) Span(s ptrace.Span) Record {
	sc := scanAttrs(s.Attributes())
	return n.span(s, &sc)
}

// span is Span of a span whose attributes scanned to sc.
func (n *Names) span(s ptrace.Span, sc *scan) Record {
	return Record{Kind: n.spanKind(s.Name(), sc), Start: int64(s.StartTimestamp()), End: int64(s.EndTimestamp()), Timeout: spanTimedOut(s, sc.timedOut())}
}

// spanTimedOut reports whether span s says it timed out: in its attributes (attrs, as its scan
// told), its error status's message, or an exception event's attributes.
func spanTimedOut(s ptrace.Span, attrs bool) bool {
	if st := s.Status(); attrs || (st.Code() == ptrace.StatusCodeError && Message(st.Message())) {
		return true
	}
	evs := s.Events()
	for i := 0; i < evs.Len(); i++ {
		if e := evs.At(i); e.Name() == eventException {
			if sc := scanAttrs(e.Attributes()); sc.timedOut() {
				return true
			}
		}
	}
	return false
}

// builtin are the operation names of the built-in dialects (dialect.Entry.Operations), and
// their kind and tool kind attributes.
var builtin, builtinKinds, builtinToolKinds = registry.Operations()

// toolSpanNames are spans of one tool call that carry no GenAI operation name (the Vercel AI
// SDK v6's, OpenClaw's diagnostics spans, ...), and toolSpanPrefixes start the names of tool
// spans and their children (Claude Code's).
var (
	toolSpanNames    = nameSet(builtin.ToolSpans)
	toolSpanPrefixes = builtin.ToolSpanPrefixes
)

// modelSpanNames are model call spans that carry no GenAI operation name (Claude Code's,
// Codex's, Gemini CLI's, the Vercel AI SDK v6 provider-call spans, OpenClaw's, ...).
var modelSpanNames = nameSet(builtin.ModelSpans)

// modelOperations are the GenAI operation names of a model call: semconv v1.37.0
// gen_ai.operation.name, and those the built-in dialects add.
var modelOperations = nameSet(append([]string{"chat", "text_completion", "generate_content", "embeddings"}, builtin.ModelOperations...))

// modelOperation reports whether op is the GenAI operation name of a model call.
func modelOperation(op string) bool { return modelOperations[op] }

// nameSet is the set of names.
func nameSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func (n *Names) spanKind(name string, sc *scan) Kind {
	nk := n.spanKinds.kind(name) // compaction, modelSpanNames, toolSpanNames, toolSpanPrefixes
	switch {
	case nk == KindCompaction:
		return KindCompaction
	case sc.op == "execute_tool", kindTools[sc.openInference]:
		return KindTool
	case modelOperation(sc.op), kindModels[sc.openInference]:
		return KindModel
	case sc.traceloopTool:
		return KindTool
	case sc.llmRequest, nk == KindModel:
		return KindModel
	case nk == KindTool:
		return KindTool
	case sc.callID:
		// A span that names one tool call is part of running it (Codex's span named after
		// the tool and its children carry call_id; Gemini CLI's tool_call carries
		// gen_ai.tool.call_id).
		return KindTool
	}
	return KindOther
}

// Log event names by kind, of the built-in dialects (dialect.Operations.ModelEvents and
// ToolEvents). Claude Code's events also arrive as event.name without their prefix; the body
// or EventName then carries the prefixed form, which is what is matched.
var (
	modelEvents = nameSet(builtin.ModelEvents)
	toolEvents  = nameSet(builtin.ToolEvents)
)

// eventKind is the kind a log event name says: a compaction event (configured), else a
// model or tool event (modelEvents, toolEvents), else KindOther.
func (n *Names) eventKind(name string) Kind { return n.eventKinds.kind(name) }

// logKind is the kind the names a log record gives its event say, the first that says one:
// the OTLP EventName, the event.name attribute (attr), and a string body that looks like an
// event name (Claude Code's "claude_code.tool_result"). The body is looked at only when the
// other two say nothing.
func (n *Names) logKind(lr plog.LogRecord, attr string) Kind {
	if k := n.eventKind(lr.EventName()); k != KindOther {
		return k
	}
	if k := n.eventKind(attr); k != KindOther {
		return k
	}
	// Two byte searches: strings.ContainsAny builds a set of the bytes on every call.
	if b := lr.Body(); b.Type() == pcommon.ValueTypeStr && len(b.Str()) <= 128 && strings.IndexByte(b.Str(), ' ') < 0 && strings.IndexByte(b.Str(), '{') < 0 {
		return n.eventKinds.kindOnce(b.Str())
	}
	return KindOther
}

// Log reads a log record: whether it is a timeout, what kind of operation it is, and its
// time. Transcript lines in its body are read by TranscriptLine.
func (n *Names) Log(lr plog.LogRecord) Record { return n.LogLine(lr, dialect.LineUnread) }

// LogLine is Log of a record whose body a dialect has read as a transcript line and found to
// be line (dialect.Line): the body of a dialect.LineNoTimeout record is not read at all (not
// even by TranscriptLine's prefilter), that of any other record is read as Log reads it. The
// record read is the same as Log's whenever the dialect tells the truth.
func (n *Names) LogLine(lr plog.LogRecord, line dialect.Line) Record {
	sc := scanAttrs(lr.Attributes())
	return n.logLine(lr, line, &sc)
}

// logLine is LogLine of a record whose attributes scanned to sc.
func (n *Names) logLine(lr plog.LogRecord, line dialect.Line, sc *scan) Record {
	r := Record{Kind: n.logKind(lr, sc.eventName), End: dialect.LogTime(lr), Timeout: sc.timedOut()}
	if r.Kind != KindOther && sc.hasDur {
		if ms, err := intValue(sc.durationMs); err == nil && ms >= 0 && r.End > ms*1e6 {
			r.Start = r.End - ms*1e6
		}
	}
	if !r.Timeout && line != dialect.LineNoTimeout {
		if t, ok := TranscriptLine(lr.Body()); ok {
			t.End = transcriptTime(lr, t.End)
			return t
		}
	}
	return r
}

// transcriptTime is the log record's time when it has one, else the line's own time, else
// the observed time.
func transcriptTime(lr plog.LogRecord, line int64) int64 {
	if t := lr.Timestamp(); t != 0 {
		return int64(t)
	}
	if line != 0 {
		return line
	}
	return int64(lr.ObservedTimestamp())
}
