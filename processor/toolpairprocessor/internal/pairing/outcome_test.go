// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutcomeTable: every outcome has its row (a name, a place in the conservation of
// specification section 7), and the names are the specification's.
func TestOutcomeTable(t *testing.T) {
	names := map[string]bool{}
	for _, o := range Outcomes() {
		p := o.Props()
		assert.NotEmpty(t, p.Name)
		assert.False(t, names[p.Name], p.Name)
		names[p.Name] = true
		assert.True(t, p.Uses != nil || p.Results != nil, "%s is in no balance", p.Name)
		assert.Equal(t, p.Name, o.String())
	}
	assert.Equal(t, map[string]bool{"paired": true, "interrupted": true, "rejected": true, "orphan": true, "duplicate": true, "standalone": true}, names)
	assert.Empty(t, Outcome(0).String())
	assert.Empty(t, Outcome(99).String())
}

// TestOutcomesAskedOfTheTable: outside the engine (this package, whose transitions give calls
// their outcomes), no source file of the processor compares an outcome with a named one (==,
// != or a case of a switch): what an outcome is (counted, dropped, stored, timed) is asked of
// its Props, so that a new outcome is a row of the table and its transition cells.
func TestOutcomesAskedOfTheTable(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "." || strings.HasSuffix(path, "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		checked++
		named := func(e ast.Expr) bool {
			switch e := e.(type) {
			case *ast.Ident:
				return false // this package is not checked
			case *ast.SelectorExpr:
				x, ok := e.X.(*ast.Ident)
				return ok && x.Name == "pairing" && strings.HasPrefix(e.Sel.Name, "Outcome")
			}
			return false
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (named(n.X) || named(n.Y)) {
					t.Errorf("%s: compares an outcome by name; ask pairing.Outcome.Props", fset.Position(n.Pos()))
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					if named(e) {
						t.Errorf("%s: a case of a named outcome; ask pairing.Outcome.Props", fset.Position(e.Pos()))
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, checked, 50, "the processor's source files")
}
