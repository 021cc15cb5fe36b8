// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

//go:build !race

package genai

// raceEnabled: see race_test.go.
const raceEnabled = false
