// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// spdx is the line every source file of the repository carries (the Apache-2.0 LICENSE at the
// root).
const spdx = "// SPDX-License-Identifier: Apache-2.0"

// TestSourceFilesCarryTheLicence: the repository has its LICENSE (Apache-2.0) and every Go and
// protobuf source file tracked by git carries the SPDX line in its leading comments, but the
// generated ones (a "Code generated" line: ocb's, mdatagen's, protoc-gen-go's), which their
// generators rewrite.
func TestSourceFilesCarryTheLicence(t *testing.T) {
	root := filepath.Join("..", "..")
	licence, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(licence), "Apache License") || !strings.Contains(string(licence), "Version 2.0, January 2004") {
		t.Fatal("LICENSE is not the Apache License 2.0")
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "*.go", "*.proto").Output()
	if err != nil {
		t.Skipf("git ls-files: %v", err)
	}
	files := strings.Fields(string(out))
	if len(files) < 100 {
		t.Fatalf("only %d source files listed", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		head := string(data[:min(len(data), 1024)])
		if strings.Contains(head, "Code generated") {
			continue
		}
		if !strings.Contains(head, spdx) {
			t.Errorf("%s lacks %q", f, spdx)
		}
	}
}
