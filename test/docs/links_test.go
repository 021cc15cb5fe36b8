// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// Package docs checks the repository's Markdown: every relative link names a file that
// exists, and every #fragment a heading of its target.
package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// skipDirs are directories whose Markdown is not the repository's own.
var skipDirs = map[string]bool{".cache": true, "bin": true, "node_modules": true, ".git": true}

var (
	// inlineLink matches [text](target) and ![alt](target), with an optional "title".
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	// refDefinition matches a reference definition: [label]: target
	refDefinition = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S*?)>?(?:\s+.*)?$`)
	// htmlAnchor matches an explicit anchor: <a name="x"> or id="x".
	htmlAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
	// inlineCode matches a code span, whose text is not a link.
	inlineCode = regexp.MustCompile("`+[^`]*`+")
)

// TestDocsMarkdownLinks: every relative link of every *.md file of the repository (outside
// skipDirs) names an existing file or directory, and a #fragment names a heading (or an
// explicit anchor) of the Markdown file it points into, by GitHub's slug rules.
func TestDocsMarkdownLinks(t *testing.T) {
	files := markdownFiles(t, repoRoot)
	if len(files) < 5 {
		t.Fatalf("found only %d Markdown files under %s", len(files), repoRoot)
	}
	anchors := map[string]map[string]bool{}
	checked := 0
	for _, file := range files {
		for _, l := range links(t, file) {
			checked++
			if msg := checkLink(file, l.target, anchors); msg != "" {
				rel, _ := filepath.Rel(repoRoot, file)
				t.Errorf("%s:%d: link %q: %s", rel, l.line, l.target, msg)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d links", checked)
	}
	t.Logf("%d links in %d files checked", checked, len(files))
}

// markdownFiles returns the *.md files under root, outside skipDirs.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

type link struct {
	target string
	line   int
}

// links returns the link targets of a Markdown file, outside fenced code blocks and code
// spans.
func links(t *testing.T, file string) []link {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []link
	fence := ""
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "":
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		text := inlineCode.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
			out = append(out, link{m[1], i + 1})
		}
		for _, m := range refDefinition.FindAllStringSubmatch(text, -1) {
			out = append(out, link{m[1], i + 1})
		}
	}
	return out
}

// fenceOf returns the fence (``` or ~~~, as long as written) a line opens or closes, or "".
func fenceOf(line string) string {
	for _, c := range []string{"`", "~"} {
		n := 0
		for n < len(line) && line[n:n+1] == c {
			n++
		}
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// checkLink returns what is wrong with target, a link of file, or "" when nothing is. Links
// with a scheme (https:, mailto:) and empty targets are not checked.
func checkLink(file, target string, anchors map[string]map[string]bool) string {
	if target == "" || regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(target) {
		return ""
	}
	path, fragment, _ := strings.Cut(target, "#")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	dest := file
	if path != "" {
		if strings.HasPrefix(path, "/") {
			dest = filepath.Join(repoRoot, path)
		} else {
			dest = filepath.Join(filepath.Dir(file), path)
		}
		fi, err := os.Stat(dest)
		if err != nil {
			return "no such file"
		}
		if fi.IsDir() {
			if fragment == "" {
				return ""
			}
			dest = filepath.Join(dest, "README.md") // GitHub shows a directory's README
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	set, ok := anchors[dest]
	if !ok {
		var err error
		if set, err = headingAnchors(dest); err != nil {
			return err.Error()
		}
		anchors[dest] = set
	}
	if !set[strings.ToLower(fragment)] {
		return fmt.Sprintf("no heading %q in %s", fragment, filepath.Base(dest))
	}
	return ""
}

// headingAnchors returns the anchors GitHub makes for the headings of a Markdown file (ATX
// headings, outside fenced code blocks; a repeated slug gets -1, -2, ...), and its explicit
// HTML anchors.
func headingAnchors(file string) (map[string]bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	count := map[string]int{}
	fence := ""
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimLeft(line, " ")
		if f := fenceOf(trimmed); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(trimmed, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			set[strings.ToLower(m[1])] = true
		}
		level := 0
		for level < len(trimmed) && trimmed[level] == '#' {
			level++
		}
		if level == 0 || level > 6 || (len(trimmed) > level && trimmed[level] != ' ') {
			continue
		}
		s := Slug(strings.TrimRight(strings.TrimSpace(trimmed[level:]), "#"))
		if n := count[s]; n > 0 {
			set[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			set[s] = true
		}
		count[s]++
	}
	return set, nil
}

// markup are the inline Markdown forms whose text, not syntax, makes a heading's slug: links
// ([text](url) gives text) and images.
var markup = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)

// Slug returns GitHub's anchor for a heading's text: links reduced to their text, lower case,
// every character that is not a letter, a digit, a space, '-' or '_' dropped, and each space
// turned into '-'.
func Slug(heading string) string {
	heading = markup.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsSlug: GitHub's slugs of headings of this repository's kind.
func TestDocsSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Route mode (scaling out)":                                   "route-mode-scaling-out",
		"`genai`: OTel GenAI semantic-convention spans":              "genai-otel-genai-semantic-convention-spans",
		"Step boundaries, session ends and groups":                   "step-boundaries-session-ends-and-groups",
		"6. Configuration (collector YAML, `processors: toolpair:`)": "6-configuration-collector-yaml-processors-toolpair",
		"Which chat spans are `openllmetry`'s":                       "which-chat-spans-are-openllmetrys",
		"A [link](x.md) in a heading":                                "a-link-in-a-heading",
		"snake_case and  two spaces":                                 "snake_case-and--two-spaces",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
