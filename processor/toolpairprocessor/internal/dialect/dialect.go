// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package dialect holds what every source dialect shares: the tool call items a dialect
// finds in one record, and the reasons it gives for skipping malformed input. Each
// dialect lives in a subpackage and turns pdata records of its source into Items.
package dialect

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/messages"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// Item is one tool_use or tool_result found in a record. A record may hold several (a chat
// span announcing parallel calls).
type Item struct {
	Kind pairing.Kind
	// CallID is the tool call ID, never empty.
	CallID string
	// ToolName is the tool's name, or "" when the record does not give it.
	ToolName string
	// Time is the item's time in Unix nanoseconds (see each dialect for which timestamp).
	Time int64
	// Conversation, when not empty, is the call's scope as the dialect knows it (for example a
	// transcript line's sessionId), overriding the scope_attributes lookup; ScopeAttr is the
	// attribute name it is reported under on synthetic records.
	Conversation     string
	ConversationAttr string
	// Step identifies the model request that announced a use, or the one a boundary starts.
	Step string
	// Match is the match hash (see MatchJSON) of a use whose results may come without a
	// call ID, or of such a result (pairing.KindMatch, CallID empty); 0 otherwise.
	Match uint64
	// Abort, on a pairing.KindMatch result, says the record reports its own call's abort
	// (Cancelled: a cancellation marker of specification section 2), as a KindAbort says it
	// of a result with a call ID; false on every other kind. The engine reads it as
	// pairing.Event.Abort (interrupted, reason aborted). Set by openinference on its TOOL
	// spans without a call ID (LangGraph's interrupted tool: status Error "interrupted by
	// SIGTERM").
	Abort bool
}

// Malformed-input reasons, the values of the malformed counter's reason attribute.
const (
	ReasonMissingCallID = "missing_call_id"
	ReasonNullCallID    = "null_call_id"
	ReasonInvalidCallID = "invalid_call_id"
	ReasonInvalidJSON   = "invalid_json"
	ReasonInvalidType   = "invalid_type"
)

// Found collects what dialects find in one record. Reset it between records to reuse its
// storage.
type Found struct {
	Items []Item
	// Malformed lists one reason per piece of tool input skipped as malformed.
	Malformed []string
	// RunMs is the tool's execution time in milliseconds that a dialect read in the body of a
	// result record (a transcript line's details.durationMs), when HasRun; the processor reads
	// the duration fields of attributes and map bodies itself (synth.Runtime).
	RunMs  int64
	HasRun bool
	// ModelCall says the record is a call to the model provider, for timeout classification
	// (specification section 4), as a custom dialect's model_call condition declares it;
	// ModelScope is its scope when the dialect's scope expression gave one ("" otherwise:
	// the processor's scope rules apply). The built-in dialects' model calls are known to
	// package timeout by name.
	ModelCall  bool
	ModelScope string
	// ToolPrefixedIDs says the record writes its call IDs as "<tool>__<id>", Gemini CLI's
	// telemetry form, where its items hold "<id>" (genaievents.WireID): the synthetic records
	// of its uses write their call IDs in that form too, as the agent's own records do.
	ToolPrefixedIDs bool
	// Line is what a dialect that read the record's body as a transcript line in full learned
	// of it for the timeout classifier (package timeout), whether or not the line has tool
	// items; LineUnread when none did.
	Line Line
	// text holds the bytes of strings the dialects make for their items (see Text); behind a
	// pointer so that copies of a Found hand out the same block's bytes once, not twice.
	text *[]byte
	// attrs reads the attributes of the record being read (see Attrs).
	attrs fields.Record
}

// Attrs returns the reader of attribute map m, the attributes of the record being read (see
// fields.Record): the dialects that read a record, and the processor after them, share its
// one pass over m. It reads m until Reset, or Attrs of another map (so ask for it again
// rather than keep it across a dialect's reading); m must get no new key meanwhile.
func (f *Found) Attrs(m pcommon.Map) *fields.Record {
	if f.attrs.Map() != m {
		f.attrs.Reset(m)
	}
	return &f.attrs
}

// Release resets f and drops its references into the batch's records (end of a batch): the
// strings of the items and malformed fields it found, and the last record read. A pooled
// scratch then keeps none of a batch's data until its next batch.
func (f *Found) Release() {
	clear(f.Items[:cap(f.Items)])
	clear(f.Malformed[:cap(f.Malformed)])
	f.Reset()
	f.attrs.Release()
}

// textChunk is the size of the blocks Text hands out its bytes from.
const textChunk = 4096

// Text returns n bytes for the dialect to write a string of an item in (a step made of span
// IDs in hex, say) and make it with readonly.String. The bytes come from blocks of textChunk
// bytes that are never written again once handed out, nor reused by Reset: a string made of
// them stays valid for as long as it is referenced, and a batch's steps take one allocation
// per block rather than one each. The pairing engine copies the steps it keeps, so a block
// is garbage once its batch is processed.
func (f *Found) Text(n int) []byte {
	if n > textChunk/4 {
		return make([]byte, n)
	}
	if f.text == nil {
		f.text = new([]byte)
	}
	t := *f.text
	if cap(t)-len(t) < n {
		t = make([]byte, 0, textChunk)
	}
	i := len(t)
	*f.text = t[:i+n]
	return t[i : i+n : i+n]
}

// Line is what a dialect tells the timeout classifier of a log record's body, a transcript
// line, once it has read it: whether the classifier must read the line itself. The dialect
// decides it from the fields the classifier decides from, read as the classifier reads them
// (in a string body the first of repeated keys, as its JSON reader does, and only in a line
// read whole as JSON; in a map body the last, as in the JSON text it is read as); on any
// other body it says LineUnread. The classification of a record is the same whatever the
// dialect says; only its cost changes.
type Line uint8

const (
	// LineUnread: no dialect read the body as a transcript line in full (not a JSON object,
	// invalid or repeated where it matters, or not a dialect that tells): the classifier
	// reads it as it would without a dialect.
	LineUnread Line = iota
	// LineNoTimeout: the line cannot be a timeout line (specification section 4: a line type that
	// never is, a user line without a tool_result marked is_error, a system line other than
	// an api_error, an assistant line not marked isApiErrorMessage): the classifier does not
	// read it.
	LineNoTimeout
	// LineMayTimeout: the line may be a timeout line (a tool_result marked is_error, an API
	// error line, a pi or OpenClaw message): the classifier reads it.
	LineMayTimeout
)

// Reset empties f, keeping its storage, for the next record: its attribute reader (Attrs)
// reads no map until asked for the record's.
func (f *Found) Reset() {
	f.Items = f.Items[:0]
	f.Malformed = f.Malformed[:0]
	f.Line = LineUnread
	f.RunMs, f.HasRun = 0, false
	f.ToolPrefixedIDs = false
	f.ModelCall, f.ModelScope = false, ""
	f.attrs.Reset(pcommon.Map{})
}

// Add appends an item.
func (f *Found) Add(kind pairing.Kind, callID, toolName string, t int64) {
	f.Items = append(f.Items, Item{Kind: kind, CallID: callID, ToolName: toolName, Time: t})
}

// AddStep appends an item of a step whose scope the dialect determined itself.
func (f *Found) AddStep(kind pairing.Kind, callID, toolName string, t int64, scopeAttr, scope, step string) {
	f.Items = append(f.Items, Item{Kind: kind, CallID: callID, ToolName: toolName, Time: t, Conversation: scope, ConversationAttr: scopeAttr, Step: step})
}

// AddLogCall appends a tool call event of kind that log record lr's attributes describe: its
// call ID is the attribute idKey, read as CallID reads it (a missing or wrong one is skipped
// and reported, and nothing is appended), its tool name the attribute toolKey ("" when
// absent), its time LogTime(lr). It reports whether it appended the item, which is then the
// last of f.Items.
func (f *Found) AddLogCall(lr plog.LogRecord, kind pairing.Kind, idKey, toolKey string) bool {
	id, idOK, tool, toolOK := fields.Get2(lr.Attributes(), idKey, toolKey)
	return f.AddLogCallValues(lr, kind, id, idOK, tool, toolOK)
}

// AddLogCallValues is AddLogCall for a record whose call ID and tool name fields the dialect
// read already (with fields.Get3, say, in its one pass over the record): id and tool are
// their values, idOK and toolOK whether they occur.
func (f *Found) AddLogCallValues(lr plog.LogRecord, kind pairing.Kind, id pcommon.Value, idOK bool, tool pcommon.Value, toolOK bool) bool {
	if !idOK {
		f.Skip(ReasonMissingCallID)
		return false
	}
	callID, ok := f.ValueCallID(id)
	if !ok {
		return false
	}
	name := ""
	if toolOK {
		name = tool.AsString()
	}
	f.Add(kind, callID, name, LogTime(lr))
	return true
}

// AddMatch appends an item with a match hash: a use that a result without a call ID may
// resolve, or such a result (pairing.KindMatch, callID "").
func (f *Found) AddMatch(kind pairing.Kind, callID, toolName string, t int64, step string, match uint64) {
	f.Items = append(f.Items, Item{Kind: kind, CallID: callID, ToolName: toolName, Time: t, Step: step, Match: match})
}

// AddMatchedResult adds a result span that carries no call ID, to be matched to its call by
// match (a KindMatch item ending at t): marked Abort when the span reports its own call's
// abort (ResultKind, the cancellation markers of specification section 2), so that it resolves
// its call as interrupted/aborted as a result with a call ID would.
func (f *Found) AddMatchedResult(span ptrace.Span, toolName string, t int64, match uint64) {
	f.Items = append(f.Items, Item{Kind: pairing.KindMatch, ToolName: toolName, Time: t, Match: match, Abort: ResultKind(span) == pairing.KindAbort})
}

// Skip records a malformed piece of input.
func (f *Found) Skip(reason string) {
	f.Malformed = append(f.Malformed, reason)
}

// SkipHistory records the error of a chat history scan (package messages), if any: a
// history attribute of the wrong type (messages.ErrWrongType) as ReasonInvalidType, any
// other error (JSON that cannot be walked) as ReasonInvalidJSON. A nil err records nothing.
func (f *Found) SkipHistory(err error) {
	switch {
	case err == nil:
	case errors.Is(err, messages.ErrWrongType):
		f.Skip(ReasonInvalidType)
	default:
		f.Skip(ReasonInvalidJSON)
	}
}

// Results counts the result items found (a refusal written as a result, KindRefused,
// included: its record is a tool_result record).
func (f *Found) Results() int {
	n := 0
	for i := range f.Items {
		if k := f.Items[i].Kind; k == pairing.KindResult || k == pairing.KindAbort || k == pairing.KindCompanion || k == pairing.KindMatch || k == pairing.KindRefused {
			n++
		}
	}
	return n
}

// Matches reports whether an item is a result without a call ID of its own (KindMatch).
func (f *Found) Matches() bool {
	for i := range f.Items {
		if f.Items[i].Kind == pairing.KindMatch {
			return true
		}
	}
	return false
}

// Empty reports whether nothing was found, malformed or not.
func (f *Found) Empty() bool { return len(f.Items) == 0 && len(f.Malformed) == 0 }

// LogTime returns a log record's time in Unix nanoseconds: its timestamp, else its observed
// timestamp (Codex sends timeUnixNano 0), else its event.timestamp attribute (ISO 8601, as
// Claude Code and Codex write it), else 0.
func LogTime(lr plog.LogRecord) int64 {
	if t := lr.Timestamp(); t != 0 {
		return int64(t)
	}
	if t := lr.ObservedTimestamp(); t != 0 {
		return int64(t)
	}
	if v, ok := fields.Get(lr.Attributes(), "event.timestamp"); ok {
		if t, err := time.Parse(time.RFC3339Nano, v.AsString()); err == nil {
			return t.UnixNano()
		}
	}
	return 0
}

// CallID reads the call ID attribute key of attrs. A missing or empty value is skipped as
// ReasonMissingCallID and a value that is not a string as ReasonInvalidCallID; then ok is
// false and the record must not pair.
func (f *Found) CallID(attrs pcommon.Map, key string) (id string, ok bool) {
	v, found := fields.Get(attrs, key)
	if !found {
		f.Skip(ReasonMissingCallID)
		return "", false
	}
	return f.ValueCallID(v)
}

// ValueCallID reads a call ID value that is present (see CallID): an empty string is skipped as
// ReasonMissingCallID and a value that is not a string as ReasonInvalidCallID; then ok is
// false.
func (f *Found) ValueCallID(v pcommon.Value) (id string, ok bool) {
	switch {
	case v.Type() != pcommon.ValueTypeStr:
		f.Skip(ReasonInvalidCallID)
	case v.Str() == "":
		f.Skip(ReasonMissingCallID)
	default:
		return v.Str(), true
	}
	return "", false
}

// EventName returns the name of the event a log record is: its OTLP EventName, else its
// event.name attribute when that is a string (semantic conventions before EventName, and
// agents such as Gemini CLI and Qwen Code that name their events so), else "".
func EventName(lr plog.LogRecord) string {
	if name := lr.EventName(); name != "" {
		return name
	}
	if v, ok := fields.Get(lr.Attributes(), "event.name"); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
