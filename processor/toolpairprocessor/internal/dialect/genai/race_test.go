// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

//go:build race

package genai

// raceEnabled: the tests run with the race detector, whose runtime allocates on its own, so
// allocation counts are not the code's (TestExtractSpanAllocations runs without it, in make
// test's non-race step).
const raceEnabled = true
