// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import "github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/claudecode"

// claudeToolPrefix starts the names of Claude Code's tool spans, the tool span prefix the
// tests know of.
const claudeToolPrefix = claudecode.SpanTool
