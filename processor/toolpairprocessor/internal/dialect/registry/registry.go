// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package registry lists the built-in dialects (specification section 8), each described by
// the dialect.Entry its own package declares, in the order the processor tries them on a
// record: the first dialect whose rule claims a record reads it.
package registry

import (
	"slices"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/adk"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/aisdk"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/claudecode"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/codex"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/geminicli"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genai"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/genaievents"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/openinference"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/openllmetry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/transcript"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/voltagent"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/fields"
)

// builtin lists the built-in dialects in trial order. Spans: the vendor dialects before
// genai, whose execute_tool and invoke_agent rules would also match Claude Code's spans, whose
// chat history rule would also match Gemini CLI's, and whose chat span rule would read
// OpenLLMetry's chat spans without the match hashes its tool spans need, and whose
// execute_tool rule would read ADK's tool spans by the ID ADK makes, which no use carries
// (adk before genai); voltagent's spans and step records carry no GenAI attribute, so its
// place among them only follows the vendor dialects'. Log records: gemini_cli before genai_events, which would also read Gemini CLI's
// operation details events.
var builtin = []*dialect.Entry{
	&claudecode.Entry,
	&codex.Entry,
	&geminicli.Entry,
	&aisdk.Entry,
	&openinference.Entry,
	&openllmetry.Entry,
	&voltagent.Entry,
	&adk.Entry,
	&genai.Entry,
	&genaievents.Entry,
	&transcript.Entry,
}

// conversationKeys registers the default scope attributes (ConversationAttributes) with
// package fields, so that a record's conversation is read in its one pass over its attributes
// (fields.Record).
var conversationKeys = func() []fields.Key {
	var keys []fields.Key
	for _, a := range ConversationAttributes() {
		keys = append(keys, fields.Register(a))
	}
	return keys
}()

// Entries returns the built-in dialects in trial order. The entries are shared: callers must
// not change them.
func Entries() []*dialect.Entry { return builtin }

// Names returns the configuration names of the built-in dialects, in trial order: the values
// the dialects key accepts.
func Names() []string {
	names := make([]string, len(builtin))
	for i, e := range builtin {
		names[i] = e.Name
	}
	return names
}

// Lookup returns the built-in dialect of configuration name name, or nil when there is none.
func Lookup(name string) *dialect.Entry {
	for _, e := range builtin {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// ConversationAttributes returns the scope attributes of the built-in dialects, each once: the
// conventions' first (they name a conversation wherever they are set), then the agents', in
// trial order. They are the default of scope_attributes, where the first present wins.
func ConversationAttributes() []string {
	var out []string
	for _, convention := range []bool{true, false} {
		for _, e := range builtin {
			if e.Convention != convention {
				continue
			}
			for _, a := range e.ConversationAttributes {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// Operations returns the operation names of every built-in dialect (dialect.Entry.Operations)
// together, each list in trial order: what timeout classification knows of the agents'
// records. KindAttributes and ToolKindAttributes are the dialects' KindAttribute and
// ToolKindAttribute that are set.
func Operations() (ops dialect.Operations, kindAttributes, toolKindAttributes []dialect.KindAttribute) {
	for _, e := range builtin {
		o := &e.Operations
		if o.KindAttribute.Key != "" {
			kindAttributes = append(kindAttributes, o.KindAttribute)
		}
		if o.ToolKindAttribute.Key != "" {
			toolKindAttributes = append(toolKindAttributes, o.ToolKindAttribute)
		}
		ops.ModelAttributes = append(ops.ModelAttributes, o.ModelAttributes...)
		ops.DurationAttributes = append(ops.DurationAttributes, o.DurationAttributes...)
		ops.StatusAttributes = append(ops.StatusAttributes, o.StatusAttributes...)
		ops.ErrorAttributes = append(ops.ErrorAttributes, o.ErrorAttributes...)
		ops.CallIDAttributes = append(ops.CallIDAttributes, o.CallIDAttributes...)
		ops.ModelSpans = append(ops.ModelSpans, o.ModelSpans...)
		ops.ToolSpans = append(ops.ToolSpans, o.ToolSpans...)
		ops.ToolSpanPrefixes = append(ops.ToolSpanPrefixes, o.ToolSpanPrefixes...)
		ops.ModelOperations = append(ops.ModelOperations, o.ModelOperations...)
		ops.ModelEvents = append(ops.ModelEvents, o.ModelEvents...)
		ops.ToolEvents = append(ops.ToolEvents, o.ToolEvents...)
		ops.CompactionSpans = append(ops.CompactionSpans, o.CompactionSpans...)
		ops.CompactionEvents = append(ops.CompactionEvents, o.CompactionEvents...)
	}
	return ops, kindAttributes, toolKindAttributes
}
