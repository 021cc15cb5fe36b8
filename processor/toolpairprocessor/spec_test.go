// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specPath is the repository's specification, relative to this package.
const specPath = "../../docs/specification.md"

// specSections are the numbered sections of docs/specification.md, in order. Tests and
// comments cite them as "specification section N"; the contract tests are named after them
// (TestContractS1..., TestContractS8...).
var specSections = []string{
	"Words",
	"Outcomes",
	"What the processor writes",
	"Timeout classification",
	"Duration normalization (opt-out)",
	"Configuration (collector YAML, `processors: toolpair:`)",
	"The processor's own telemetry",
	"Sources (dialects)",
	"State across restarts",
	"More than one collector",
}

// TestSpecificationSections: docs/specification.md has exactly the numbered sections the
// citations rely on, 1 to 10 in order.
func TestSpecificationSections(t *testing.T) {
	data, err := os.ReadFile(specPath)
	require.NoError(t, err)
	var got []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "## "); ok {
			got = append(got, rest)
		}
	}
	want := make([]string, len(specSections))
	for i, title := range specSections {
		want[i] = strconv.Itoa(i+1) + ". " + title
	}
	assert.Equal(t, want, got)
}

// TestSpecificationCitations: every citation in the repository's Go sources, Markdown and
// YAML names a section the specification has, and none points at a specification kept
// outside the repository (a path under /work/, or a CONTRACT file).
func TestSpecificationCitations(t *testing.T) {
	cite := regexp.MustCompile(`specification(?:\s+//)?\s+(?:section|§)\s*(\d+)`)
	outside := regexp.MustCompile(`CONTRACT|/work/shared`)
	root := filepath.Join("..", "..")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "bin", ".cache":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml":
		default:
			return nil
		}
		if filepath.Base(path) == "spec_test.go" {
			return nil // this file names the forbidden patterns
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(data)
		assert.NotRegexp(t, outside, text, "%s cites a specification outside the repository", path)
		for _, m := range cite.FindAllStringSubmatch(text, -1) {
			n, _ := strconv.Atoi(m[1])
			assert.True(t, n >= 1 && n <= len(specSections), "%s cites %q, not a section", path, m[0])
			checked++
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 50, "the sources cite the specification by section")
}
