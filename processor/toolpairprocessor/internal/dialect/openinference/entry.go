// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package openinference

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// Entry describes the openinference dialect for package registry: its spans, and its span
// kind attribute, which says a tool call (TOOL) or a model call (LLM, EMBEDDING).
var Entry = dialect.Entry{
	Name:  Name,
	Spans: []dialect.Rule[ptrace.Span]{{Source: dialect.SourceOpenInferenceSpan, Extract: ExtractSpan}},
	Operations: dialect.Operations{
		KindAttribute: dialect.KindAttribute{Key: keySpanKind, Tool: []string{kindTool}, Model: []string{kindLLM, "EMBEDDING"}},
	},
}
