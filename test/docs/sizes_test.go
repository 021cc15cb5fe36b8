// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sizes a newcomer reads in one sitting: a source file of the processor of about 400 lines at
// most, a function of about 90 (the margins allow for a doc comment's growth, not for another
// job: split the file or the function by what it does).
const (
	maxFileLines = 450
	maxFuncLines = 95
)

// TestSourceSizes: no source file of the component (tests and generated code aside) is over
// maxFileLines lines, no function over maxFuncLines.
func TestSourceSizes(t *testing.T) {
	root := filepath.Join("..", "..", "processor", "toolpairprocessor")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(data[:min(len(data), 1024)]), "Code generated") {
			return nil
		}
		checked++
		if n := strings.Count(string(data), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines (at most about %d): split it by job", path, n, maxFileLines)
		}
		file, err := parser.ParseFile(fset, path, data, 0)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line; n > maxFuncLines {
				t.Errorf("%s: %s has %d lines (at most about %d): split it in steps", path, fd.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked", checked)
	}
}
