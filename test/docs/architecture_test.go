// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// component is the import path of the toolpair processor.
const component = "github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor"

// tableRow matches a row of the package table of docs/architecture.md: | `package` | holds |
// may import |.
var tableRow = regexp.MustCompile("^\\| `([^`]+)` \\|[^|]*\\|([^|]*)\\|$")

// backticked matches a name in backticks.
var backticked = regexp.MustCompile("`([^`]+)`")

// allowedImports reads the package table of docs/architecture.md: for each package (relative
// to the component's internal/, "root" for the component itself), the internal packages it may
// import, "*" for any. A name ending in "/*" stands for every package under it.
func allowedImports(t *testing.T) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string][]string{}
	var order []string
	for _, line := range strings.Split(string(data), "\n") {
		m := tableRow.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		pkg := strings.TrimPrefix(m[1], "internal/")
		if pkg == "toolpairprocessor" {
			pkg = "root"
		}
		col := strings.TrimSpace(m[2])
		switch col {
		case "any":
			allowed[pkg] = []string{"*"}
			order = append(order, pkg)
			continue
		case "none":
			allowed[pkg] = []string{}
			order = append(order, pkg)
			continue
		}
		var names []string
		for _, n := range backticked.FindAllStringSubmatch(col, -1) {
			names = append(names, strings.TrimPrefix(n[1], "internal/"))
		}
		if len(names) == 0 {
			t.Fatalf("docs/architecture.md: the row of %s names no import: %q", m[1], col)
		}
		allowed[pkg] = names
		order = append(order, pkg)
	}
	// Imports point down: every name a row allows has its row further down.
	for i, pkg := range order {
		for _, name := range allowed[pkg] {
			if j := slices.Index(order, name); j >= 0 && j <= i {
				t.Errorf("docs/architecture.md: %s may import %s, whose row is not below it", pkg, name)
			}
		}
	}
	return allowed
}

// permits reports whether an import of imp is among allowed.
func permits(allowed []string, imp string) bool {
	for _, a := range allowed {
		if a == "*" || a == imp || (strings.HasSuffix(a, "/*") && strings.HasPrefix(imp, strings.TrimSuffix(a, "*"))) {
			return true
		}
	}
	return false
}

// TestDocsPackageImports: the component's packages import each other only as the package table
// of docs/architecture.md allows (read from `go list`): no internal package imports the root,
// none imports a package its row does not name, and every package has a row.
func TestDocsPackageImports(t *testing.T) {
	allowed := allowedImports(t)
	if len(allowed) < 10 {
		t.Fatalf("docs/architecture.md: only %d rows in the package table", len(allowed))
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", component+"/...")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := relative(fields[0])
		rules, ok := allowed[pkg]
		if !ok {
			rules, ok = allowed[parentPattern(pkg)]
		}
		if !ok {
			t.Errorf("package %s has no row in docs/architecture.md", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			rel := relative(imp)
			switch {
			case rel == "":
				continue // outside the component
			case rel == "root":
				t.Errorf("%s imports the root package", pkg)
			case !permits(rules, rel):
				t.Errorf("%s imports %s, which its row of docs/architecture.md does not allow", pkg, rel)
			}
		}
	}
}

// relative returns an import path relative to the component's internal/ ("root" for the
// component), or "" for a package outside the component.
func relative(path string) string {
	switch {
	case path == component:
		return "root"
	case strings.HasPrefix(path, component+"/internal/"):
		return strings.TrimPrefix(path, component+"/internal/")
	}
	return ""
}

// parentPattern returns the table pattern standing for pkg, "dialect/*" for dialect/genai.
func parentPattern(pkg string) string {
	i := strings.LastIndex(pkg, "/")
	if i < 0 {
		return ""
	}
	return pkg[:i] + "/*"
}
