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

// TestScannedKeysMatchRead: the keys scanAttrs lets through its filter (scannedKeys) are
// exactly the keys the switch of scan.read has a case for, compared as they are spelled in
// record.go (constant names and string literals). A key added to the switch only would be
// filtered out and never read; this test fails then.
func TestScannedKeysMatchRead(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "record.go", nil, 0)
	require.NoError(t, err)
	src := func(e ast.Expr) string {
		var b strings.Builder
		require.NoError(t, printer.Fprint(&b, fset, e))
		return b.String()
	}
	var listed, cases []string
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			if len(n.Names) == 1 && n.Names[0].Name == "scannedKeys" {
				for _, e := range n.Values[0].(*ast.CompositeLit).Elts {
					listed = append(listed, src(e))
				}
			}
		case *ast.FuncDecl:
			if n.Name.Name != "read" || n.Recv == nil || src(n.Recv.List[0].Type) != "*scan" {
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
	})
	require.NotEmpty(t, listed, "scannedKeys not found in record.go")
	require.NotEmpty(t, cases, "scan.read's switch not found in record.go")
	slices.Sort(listed)
	slices.Sort(cases)
	require.Equal(t, cases, listed)
}
