package openllmetry

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
)

// SourceSpan is the Source of OpenLLMetry's result stream, its spans (dialect.Rule.Source).
const SourceSpan uint8 = 14

// Entry describes the openllmetry dialect for package registry: its spans.
var Entry = dialect.Entry{
	Name:  Name,
	Spans: []dialect.Rule[ptrace.Span]{{Source: SourceSpan, Extract: ExtractSpan}},
}
