package toolpairprocessor

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

// The component README is the operator's reference: these tests keep it true to the code.

// readmeSection returns the text of the README section headed by heading ("## Name"), up to
// the next heading of the same level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README has no section %q", heading)
	rest := text[i+1+len(heading):]
	if j := strings.Index(rest, "\n"+heading[:strings.IndexByte(heading, ' ')+1]); j >= 0 {
		rest = rest[:j]
	}
	return rest
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
// mapstructure tags.
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
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllStringSubmatch(section, -1) {
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
	attrs := stringConstants(t, ".", "Attr")
	for name, value := range stringConstants(t, "internal/synth", "Attr") {
		attrs["synth."+name] = value
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
