// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// TestRepeatedKeysLastWins: of a timeout key repeated in one record (OTLP carries repeats),
// the last occurrence decides (specification section 2), key by key; and so for the kind hints.
func TestRepeatedKeysLastWins(t *testing.T) {
	tests := []struct {
		name    string
		attrs   string // OTLP JSON attributes, in order
		timeout bool
		event   string
	}{
		{"a timeout, then not", `{"key":"error.type","value":{"stringValue":"timeout"}},{"key":"error.type","value":{"stringValue":"ECONNRESET"}}`, false, ""},
		{"not, then a timeout", `{"key":"error.type","value":{"stringValue":"ECONNRESET"}},{"key":"error.type","value":{"stringValue":"timeout"}}`, true, ""},
		{"another key still says timeout", `{"key":"error.message","value":{"stringValue":"timed out"}},{"key":"error.type","value":{"stringValue":"timeout"}},{"key":"error.type","value":{"stringValue":"x"}}`, true, ""},
		{"status code repeated", `{"key":"status_code","value":{"intValue":"504"}},{"key":"status_code","value":{"intValue":"200"}}`, false, ""},
		{"event name repeated", `{"key":"event.name","value":{"stringValue":"api_request"}},{"key":"event.name","value":{"stringValue":"api_error"}}`, false, "api_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[` + tt.attrs + `]}]}]}]}`))
			require.NoError(t, err)
			sc := scanAttrs(ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes())
			assert.Equal(t, tt.timeout, sc.timedOut())
			assert.Equal(t, tt.event, sc.eventName)
		})
	}
}
