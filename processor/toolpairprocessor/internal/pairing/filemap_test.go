// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFileMapNamesEveryFile: the file map at the top of engine.go names every source file of
// the package, so that a file added is a file placed.
func TestFileMapNamesEveryFile(t *testing.T) {
	data, err := os.ReadFile("engine.go")
	require.NoError(t, err)
	text := string(data)
	fileMap := text[:strings.Index(text, "\npackage ")]
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		assert.Contains(t, fileMap, f, "engine.go's file map does not name %s", f)
	}
}
