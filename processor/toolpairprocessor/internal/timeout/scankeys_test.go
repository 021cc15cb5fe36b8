// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package timeout

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestScannedKeysMatchRead: the keys scanAttrs lets through its filter (scannedKeys, in
// record.go) are exactly the keys the switch of actionOf (recordscan.go), which scan.read
// applies, has a case for, compared as they are spelled (constant names and string
// literals). A key added to the switch only would be filtered out and never read; this test
// fails then.
func TestScannedKeysMatchRead(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range []string{"record.go", "recordscan.go"} {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	src := func(e ast.Expr) string {
		var b strings.Builder
		require.NoError(t, printer.Fprint(&b, fset, e))
		return b.String()
	}
	var listed, cases []string
	inspect := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			if len(n.Names) == 1 && n.Names[0].Name == "scannedKeys" {
				for _, e := range n.Values[0].(*ast.CompositeLit).Elts {
					listed = append(listed, src(e))
				}
			}
		case *ast.FuncDecl:
			if n.Name.Name != "actionOf" || n.Recv != nil {
				return false
			}
			ast.Inspect(n.Body, func(n ast.Node) bool {
				if cc, ok := n.(*ast.CaseClause); ok {
					for _, e := range cc.List {
						cases = append(cases, src(e))
					}
				}
				return true
			})
			return false
		}
		return true
	}
	for _, f := range files {
		ast.Inspect(f, inspect)
	}
	require.NotEmpty(t, listed, "scannedKeys not found in record.go")
	require.NotEmpty(t, cases, "actionOf's switch not found in recordscan.go")
	slices.Sort(listed)
	slices.Sort(cases)
	require.Equal(t, cases, listed)
}
