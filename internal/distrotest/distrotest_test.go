// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distrotest

import (
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFreePortReserves: the ports FreePort gives one test are distinct while the test runs
// (each is locked until it ends: 200 random draws from its range would repeat a port about
// four times in five without the locks), outside the kernel's ephemeral range, and bindable.
func TestFreePortReserves(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		assert.False(t, seen[p], "port %d given twice", p)
		seen[p] = true
		assert.True(t, p >= portLow && p < portHigh, "port %d", p)
	}
	for p := range seen {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		require.NoError(t, err)
		l.Close()
	}
}
