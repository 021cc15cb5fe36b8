// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// The component README is the operator's reference, and the pages under docs/ (relative to the
// repository root) hold the details it links to: these tests keep both true to the code.

// Pages of docs/ the tests read, relative to this package.
const (
	docsDir           = "../../docs"
	dialectDocsDir    = docsDir + "/dialects"
	customDialectPage = dialectDocsDir + "/custom.md"
	scaleOutPage      = docsDir + "/scale-out.md"
)

// readmeMaxBytes is the size limit of the component README: a reference, with the details on
// the pages of docs/.
const readmeMaxBytes = 30_000

// TestReadmeSize: the component README stays a reference of at most readmeMaxBytes.
func TestReadmeSize(t *testing.T) {
	fi, err := os.Stat("README.md")
	require.NoError(t, err)
	assert.LessOrEqualf(t, fi.Size(), int64(readmeMaxBytes), "README.md is %d bytes: move details to a page of docs/", fi.Size())
}

// readmeSection returns the text of the README section headed by heading ("## Name"), up to
// the next heading of the same level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	return docSection(t, "README.md", heading)
}

// docSection returns the text of the section of the Markdown file at path headed by heading
// ("## Name"), up to the next heading of the same level.
func docSection(t *testing.T, path, heading string) string {
	t.Helper()
	text := docText(t, path)
	i := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "%s has no section %q", path, heading)
	rest := text[i+1+len(heading):]
	if j := strings.Index(rest, "\n"+heading[:strings.IndexByte(heading, ' ')+1]); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// docText returns the text of the file at path.
func docText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// TestReadmeConfigurationExampleIsTheDefault: the YAML block of the README's Configuration
// section, read into an empty Config the way the collector reads a configuration, equals the
// factory's default configuration, key for key.
func TestReadmeConfigurationExampleIsTheDefault(t *testing.T) {
	section := readmeSection(t, "## Configuration")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	require.NotNil(t, m, "no yaml block in the Configuration section")
	retrieved, err := confmap.NewRetrievedFromYAML([]byte(m[1]))
	require.NoError(t, err)
	conf, err := retrieved.AsConf()
	require.NoError(t, err)
	sub, err := conf.Sub("processors::toolpair")
	require.NoError(t, err)

	var fromReadme Config
	require.NoError(t, sub.Unmarshal(&fromReadme))
	require.NoError(t, fromReadme.Validate())
	assert.Equal(t, createDefaultConfig(), &fromReadme)
}

// configKeys returns the dotted configuration keys of a config struct type, from its
// mapstructure tags. A list of structs is a key of its own and, for the keys of each entry,
// the prefix key[]. (custom_dialects[].name).
func configKeys(typ reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
		if name == "" || name == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == typ.PkgPath() {
			keys = append(keys, configKeys(f.Type, prefix+name+".")...)
			continue
		}
		keys = append(keys, prefix+name)
		if f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct {
			keys = append(keys, configKeys(f.Type.Elem(), prefix+name+"[].")...)
		}
	}
	return keys
}

// TestReadmeConfigurationTableNamesEveryKey: every configuration key has its row in the
// README's table, and every row is a key.
func TestReadmeConfigurationTableNamesEveryKey(t *testing.T) {
	section := readmeSection(t, "## Configuration")
	keys := configKeys(reflect.TypeFor[Config](), "")
	require.NotEmpty(t, keys)
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.\\[\\]]+)` \\|").FindAllStringSubmatch(section, -1) {
		rows = append(rows, m[1])
	}
	assert.ElementsMatch(t, keys, rows)
}

// stringConstants returns the string constants of the Go files (not tests) of a package
// directory whose names start with prefix, by name.
func stringConstants(t *testing.T, dir, prefix string) map[string]string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	consts := map[string]string{}
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !strings.HasPrefix(name.Name, prefix) || i >= len(vs.Values) {
							continue
						}
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							v, err := strconv.Unquote(lit.Value)
							require.NoError(t, err)
							consts[name.Name] = v
						}
					}
				}
			}
		}
	}
	return consts
}

// TestReadmeNamesEveryAttributeWritten: every attribute the processor writes (the Attr
// constants of this package and of internal/synth) has its row in the README's "Attributes
// written" table.
func TestReadmeNamesEveryAttributeWritten(t *testing.T) {
	section := readmeSection(t, "## Attributes written")
	attrs := map[string]string{}
	for _, dir := range []string{"internal/synth", "internal/timeout"} {
		for name, value := range stringConstants(t, dir, "Attr") {
			attrs[dir+"."+name] = value
		}
	}
	require.GreaterOrEqual(t, len(attrs), 10, "the Attr constants were not found")
	for name, value := range attrs {
		assert.Truef(t, strings.Contains(section, "| `"+value+"`"), "%s (%q) is not in the README's table", name, value)
	}
}

// TestReadmeNamesEveryMetric: every metric of metadata.yaml is in the README's Telemetry
// table, under the name the collector exports it with.
func TestReadmeNamesEveryMetric(t *testing.T) {
	section := readmeSection(t, "## Telemetry")
	data, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	retrieved, err := confmap.NewRetrievedFromYAML(data)
	require.NoError(t, err)
	conf, err := retrieved.AsConf()
	require.NoError(t, err)
	metrics, err := conf.Sub("telemetry::metrics")
	require.NoError(t, err)
	names := metrics.AllKeys()
	seen := map[string]bool{}
	for _, key := range names {
		name, _, _ := strings.Cut(key, "::")
		if seen[name] {
			continue
		}
		seen[name] = true
		assert.Truef(t, strings.Contains(section, "| `otelcol_"+name+"` |"), "metric %s is not in the README's Telemetry table", name)
	}
	require.GreaterOrEqual(t, len(seen), 8, "the metrics of metadata.yaml were not found")
}

// sourceFields returns the source fields and values a dialect package's code reads (not its
// tests): the string arguments of its Get and CallID calls (pcommon.Map and jsonparser
// lookups, dialect.Found.CallID), literal or through a package-level constant or variable,
// and the string cases of its switch statements (the transcript dialect's JSON keys and
// line types).
func sourceFields(t *testing.T, dir string) []string {
	t.Helper()
	pkgs, err := parser.ParseDir(token.NewFileSet(), dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	require.NoError(t, err)
	named := map[string]string{} // package-level names bound to a string literal
	var files []*ast.File
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			files = append(files, file)
			for _, decl := range file.Decls {
				gd, ok := decl.(*ast.GenDecl)
				if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := stringLit(vs.Values[i]); ok {
								named[name.Name] = v
							}
						}
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	add := func(e ast.Expr) {
		if v, ok := stringLit(e); ok {
			seen[v] = true
		} else if id, ok := e.(*ast.Ident); ok && named[id.Name] != "" {
			seen[named[id.Name]] = true
		}
	}
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Get" || sel.Sel.Name == "CallID") {
					for _, arg := range n.Args {
						add(arg)
					}
				}
			case *ast.CaseClause:
				for _, e := range n.List {
					add(e)
				}
			}
			return true
		})
	}
	fields := make([]string, 0, len(seen))
	for f := range seen {
		fields = append(fields, f)
	}
	return fields
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

// dialectPage returns the page of docs/dialects that documents the dialect package in dir:
// the page named after the dialect's configuration name (its Name constant), custom.md for the
// custom dialects, and the index (README.md, which holds the rules every dialect shares, such as
// the cancellation markers) for package dialect itself.
func dialectPage(t *testing.T, dir string) string {
	t.Helper()
	switch filepath.Base(dir) {
	case "dialect":
		return filepath.Join(dialectDocsDir, "README.md")
	case "custom":
		return customDialectPage
	}
	name := stringConstants(t, dir, "Name")["Name"]
	require.NotEmptyf(t, name, "%s declares no Name constant", dir)
	return filepath.Join(dialectDocsDir, name+".md")
}

// fencedBlock is a fenced code block of Markdown (its content in group 1).
var fencedBlock = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```")

// quotedText returns what text quotes: each fenced code block whole, then each inline code
// span of the rest (the fences' backquotes would pair with those of inline spans otherwise).
func quotedText(text string) []string {
	var quoted []string
	for _, m := range fencedBlock.FindAllStringSubmatch(text, -1) {
		quoted = append(quoted, m[1])
	}
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(fencedBlock.ReplaceAllString(text, ""), -1) {
		quoted = append(quoted, m[1])
	}
	return quoted
}

// TestDocsDialectPagesNameEverySourceFieldRead: every field name and value a dialect's code looks
// up (see sourceFields) is named, between backquotes, on that dialect's page of docs/dialects,
// alone or as part of a path or example; the fields of the code every dialect shares, on the
// index page.
func TestDocsDialectPagesNameEverySourceFieldRead(t *testing.T) {
	dirs, err := filepath.Glob("internal/dialect/*")
	require.NoError(t, err)
	dirs = append(dirs, "internal/dialect") // the rules every dialect shares (dialect.Cancelled)
	checked := 0
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || strings.HasSuffix(dir, "dialecttest") || strings.HasSuffix(dir, "registry") {
			continue
		}
		page := dialectPage(t, dir)
		quoted := quotedText(docText(t, page))
		for _, field := range sourceFields(t, dir) {
			checked++
			assert.Truef(t, slices.ContainsFunc(quoted, func(q string) bool { return strings.Contains(q, field) }),
				"%s reads %q, which %s does not name", dir, field, page)
		}
	}
	t.Logf("%d fields checked", checked)
	require.GreaterOrEqual(t, checked, 40, "the dialects' source fields were not found")
}

// TestDocsDialectPagesCoverTheRegistry: every built-in dialect has its page in docs/dialects, a
// row in the index there and in the README's Dialects table, and every page of docs/dialects
// is a built-in dialect's, the custom dialects' or the index.
func TestDocsDialectPagesCoverTheRegistry(t *testing.T) {
	index := docText(t, filepath.Join(dialectDocsDir, "README.md"))
	readme := readmeSection(t, "## Dialects")
	for _, name := range knownDialects {
		_, err := os.Stat(filepath.Join(dialectDocsDir, name+".md"))
		assert.NoErrorf(t, err, "dialect %s has no page", name)
		assert.Containsf(t, index, "| `"+name+"` |", "the dialects index has no row for %s", name)
		assert.Containsf(t, readme, "[`"+name+"`](../../docs/dialects/"+name+".md)", "the README's Dialects table has no row for %s", name)
	}
	pages, err := filepath.Glob(filepath.Join(dialectDocsDir, "*.md"))
	require.NoError(t, err)
	for _, page := range pages {
		name := strings.TrimSuffix(filepath.Base(page), ".md")
		assert.Truef(t, name == "README" || name == "custom" || slices.Contains(knownDialects, name), "%s is no dialect's page", page)
	}
}

// TestDocsCustomDialectExampleValidates: the YAML block of the Example section of the custom
// dialects page is a valid configuration, and declares the same dialects as
// examples/custom-dialect.yaml.
func TestDocsCustomDialectExampleValidates(t *testing.T) {
	cfg := docConfig(t, customDialectPage, "## Example")
	assert.Equal(t, exampleConfig(t, "custom-dialect.yaml").CustomDialects, cfg.CustomDialects)
}

// docConfig returns the toolpair configuration of the first YAML block of the section under
// heading of the Markdown file at path, unmarshalled over the defaults and validated.
func docConfig(t *testing.T, path, heading string) *Config {
	t.Helper()
	section := docSection(t, path, heading)
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindStringSubmatch(section)
	require.NotNil(t, m, "no yaml block in the section %q", heading)
	retrieved, err := confmap.NewRetrievedFromYAML([]byte(m[1]))
	require.NoError(t, err)
	conf, err := retrieved.AsConf()
	require.NoError(t, err)
	sub, err := conf.Sub("processors::toolpair")
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	return cfg
}

// TestScaleOutExamplesNameEveryDialect: each tier's example configuration lists, in the
// comment that gives the default of dialects, every built-in dialect, and says which keys must
// be equal between the tiers, custom_dialects included; so do the scale-out page and the
// example's README.
func TestScaleOutExamplesNameEveryDialect(t *testing.T) {
	list := regexp.MustCompile(`#\s+\[(genai[a-z_, ]*)\]`)
	equal := "scope_attributes, tenant_attributes, dialects and custom_dialects must be the same"
	for _, name := range []string{"front.yaml", "back.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "scale-out", name))
		require.NoError(t, err)
		text := string(data)
		m := list.FindStringSubmatch(text)
		require.NotNil(t, m, "%s lists the built-in dialects", name)
		assert.ElementsMatch(t, knownDialects, strings.Split(strings.ReplaceAll(m[1], " ", ""), ","), name)
		assert.Contains(t, strings.Join(strings.Fields(strings.ReplaceAll(text, "#", "")), " "), equal, name)
	}
	for _, text := range []string{
		docText(t, scaleOutPage),
		func() string {
			data, err := os.ReadFile(filepath.Join("..", "..", "examples", "scale-out", "README.md"))
			require.NoError(t, err)
			return string(data)
		}(),
	} {
		assert.Regexp(t, "`scope_attributes`, `tenant_attributes`, `dialects`\\s+and\\s+`custom_dialects`", text)
	}
}
