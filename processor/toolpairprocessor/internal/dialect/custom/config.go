// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package custom is the dialect an operator declares in collector YAML (the processor's
// custom_dialects key): OTTL conditions say which records of an agent the processor does not
// know (or reads otherwise than the operator wants: Config.Precedence) are tool uses,
// results, aborts, refusals, step boundaries or session ends, and OTTL value expressions say
// where the call ID, the tool name, the scope and the time are. The
// OTTL is the collector's own (pkg/ottl v0.158.0, the span and log contexts of the transform
// processor): paths are written with or without their context name (`attributes["x"]` and
// `log.attributes["x"]` are the same path in the log context), and the standard converters
// (ParseJSON, Concat, String, Time, ...) are available.
//
// This package reads no field of its own: every field it reads is one the operator's
// expressions name.
package custom

import (
	"errors"
	"fmt"
	"strings"
)

// Contexts a custom dialect reads records in (Config.Context): the names of the OTTL
// contexts.
const (
	// ContextSpan: the dialect reads spans, with OTTL's span context (ottlspan).
	ContextSpan = "span"
	// ContextLog: the dialect reads log records, with OTTL's log context (ottllog).
	ContextLog = "log"
	// ContextSpanEvent: the dialect reads the events of spans, with OTTL's span event
	// context (ottlspanevent: the event's name, time and attributes, and the span's fields
	// under span.*); what the events of one span hold is the span's, as a span dialect's.
	ContextSpanEvent = "spanevent"
)

// Precedences of a custom dialect (Config.Precedence): where it stands among the dialects a
// record is tried with.
const (
	// PrecedenceAfterBuiltin (the default): the dialect is tried after the built-in
	// dialects, on the records none of them claimed.
	PrecedenceAfterBuiltin = "after_builtin"
	// PrecedenceBeforeBuiltin: the dialect is tried before the built-in dialects, on the
	// records its Where condition selects; what it does not claim goes on to them.
	PrecedenceBeforeBuiltin = "before_builtin"
)

// Config declares one custom dialect. Conditions are OTTL boolean expressions and values OTTL
// value expressions, both evaluated in the dialect's Context; an empty string leaves the key
// unused. Every key is described, with an example, in docs/dialects/custom.md.
type Config struct {
	// Name identifies the dialect in the malformed-input metric and in errors; unique among
	// the custom dialects and distinct from the built-in dialect names.
	Name string `mapstructure:"name"`
	// Context is ContextSpan, ContextSpanEvent or ContextLog: the records the dialect reads.
	Context string `mapstructure:"context"`
	// Precedence is PrecedenceAfterBuiltin ("" means it) or PrecedenceBeforeBuiltin, which
	// requires Where.
	Precedence string `mapstructure:"precedence"`
	// Where selects the records the dialect reads: on a record where it does not hold, no
	// other condition is evaluated and the dialect does not claim the record. Optional with
	// PrecedenceAfterBuiltin.
	Where string `mapstructure:"where"`

	// Use: the record announces a tool call (a tool_use).
	Use string `mapstructure:"use"`
	// Result: the record resolves a tool call (a tool_result).
	Result string `mapstructure:"result"`
	// Abort: the record resolves its call as aborted (interrupted with reason aborted, on
	// the record itself; no synthetic record).
	Abort string `mapstructure:"abort"`
	// Reject: the record says the agent refused the call before running it (rejected).
	Reject string `mapstructure:"reject"`
	// StepBoundary: the record shows the agent began its next model request in the scope.
	StepBoundary string `mapstructure:"step_boundary"`
	// SessionEnd: the record closes the agent's turn or session in the scope.
	SessionEnd string `mapstructure:"session_end"`
	// ModelCall: the record is a call to the model provider, for timeout classification
	// (specification section 4): a timeout of its own is phase provider, and a timeout of
	// another record while it ran is too. Evaluated besides the other conditions.
	ModelCall string `mapstructure:"model_call"`

	// CallID: the call ID of a use, result, abort or reject record: a non-empty string, or a
	// list of them (a slice attribute, ParseJSON of a JSON list, or OTTL's Keys(SliceToMap(...)) of a list
	// of objects) for a record that names several calls, each entry one call.
	CallID string `mapstructure:"call_id"`
	// ToolName: the tool's name (a string); optional.
	ToolName string `mapstructure:"tool_name"`
	// Conversation: the call's scope (a string); optional. When it is unset, or yields nothing or
	// an empty string on a record, the processor's scope rules apply (scope_attributes, else
	// the trace ID).
	Conversation string `mapstructure:"scope"`
	// ConversationAttribute is the attribute under which synthetic records report a scope that the
	// Scope expression gave.
	ConversationAttribute string `mapstructure:"scope_attribute"`
	// Time: the record's time for pairing, as Unix nanoseconds (int), a time (the Time
	// converter) or an RFC 3339 string; optional (see docs/dialects/custom.md for the default of each
	// context).
	Time string `mapstructure:"time"`

	// Calls: for use records that announce their calls in a JSON document (a string
	// attribute or body) or a structured list or map: the expression giving it. When set,
	// a use record's calls are read from it, not from CallID.
	Calls string `mapstructure:"calls"`
	// CallsPath is the dotted path to the list of calls inside the Calls value ("" for the
	// value itself); a numeric segment indexes a list, and a Wildcard segment stands for
	// every entry of a list ("*.parts": the parts of every message), the lists it leads to
	// read one after the other.
	CallsPath string `mapstructure:"calls_path"`
	// CallsMatch keeps, of the entries of the list, those that hold at each dotted path (a
	// key) the string given as its value, for example {"type": "tool_call"}; the others are
	// passed over (neither calls nor malformed). Empty keeps every entry.
	CallsMatch map[string]string `mapstructure:"calls_match"`
	// CallIDPath is the dotted path to the call ID inside each entry of the list.
	CallIDPath string `mapstructure:"call_id_path"`
	// ToolNamePath is the dotted path to the tool name inside each entry; an entry without
	// a string there announces its call with no tool name.
	ToolNamePath string `mapstructure:"tool_name_path"`
}

// Defaults of the optional keys, applied when a dialect is compiled.
const (
	DefaultScopeAttribute = "session.id"
	DefaultCallIDPath     = "id"
	DefaultToolNamePath   = "name"
)

// withDefaults returns c with the optional keys left empty set to their defaults.
func (c Config) withDefaults() Config {
	if c.ConversationAttribute == "" {
		c.ConversationAttribute = DefaultScopeAttribute
	}
	if c.CallIDPath == "" {
		c.CallIDPath = DefaultCallIDPath
	}
	if c.ToolNamePath == "" {
		c.ToolNamePath = DefaultToolNamePath
	}
	return c
}

// check refuses a declaration that cannot work whatever its expressions say; each error
// names the key (the caller prefixes the entry).
func (c *Config) check() error {
	var errs []error
	if strings.TrimSpace(c.Name) == "" {
		errs = append(errs, keyError("name", errors.New("must not be empty")))
	}
	if c.Context != ContextSpan && c.Context != ContextLog && c.Context != ContextSpanEvent {
		errs = append(errs, keyError("context", fmt.Errorf("must be %q, %q or %q, got %q", ContextSpan, ContextSpanEvent, ContextLog, c.Context)))
	}
	if c.Use == "" && c.Result == "" && c.Abort == "" && c.Reject == "" && c.StepBoundary == "" && c.SessionEnd == "" && c.ModelCall == "" {
		errs = append(errs, keyError("use", errors.New("at least one of use, result, abort, reject, step_boundary, session_end, model_call must be set")))
	}
	callRecords := c.Result != "" || c.Abort != "" || c.Reject != "" || (c.Use != "" && c.Calls == "")
	if callRecords && c.CallID == "" {
		errs = append(errs, keyError("call_id", errors.New("must be set when use (without calls), result, abort or reject is")))
	}
	if c.Calls != "" && c.Use == "" {
		errs = append(errs, keyError("calls", errors.New("is read on use records: use must be set")))
	}
	if len(c.CallsMatch) > 0 && c.Calls == "" {
		errs = append(errs, keyError("calls_match", errors.New("filters the entries of calls: calls must be set")))
	}
	if c.Precedence != "" && c.Precedence != PrecedenceAfterBuiltin && c.Precedence != PrecedenceBeforeBuiltin {
		errs = append(errs, keyError("precedence", fmt.Errorf("must be %q or %q, got %q", PrecedenceAfterBuiltin, PrecedenceBeforeBuiltin, c.Precedence)))
	}
	if c.Precedence == PrecedenceBeforeBuiltin && strings.TrimSpace(c.Where) == "" {
		errs = append(errs, keyError("where", fmt.Errorf("must be set when precedence is %q: it selects the records taken before the built-in dialects", PrecedenceBeforeBuiltin)))
	}
	return errors.Join(errs...)
}

// KeyError is an error of one key of a declaration, as New and Validate return them (several
// joined with errors.Join).
type KeyError struct {
	// Key is the configuration key at fault (for example "use").
	Key string
	// Err says what is wrong with it (for an OTTL parse error, the parser's own message).
	Err error
}

func keyError(key string, err error) error { return &KeyError{Key: key, Err: err} }

// Error returns "key: reason".
func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *KeyError) Unwrap() error { return e.Err }
