// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distrotest

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Sample is one sample of a Prometheus text exposition: the metric name as exposed (with the
// `_total` of a counter), its labels and its value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Metrics is one scrape of a collector's own metrics (service.telemetry.metrics with a pull
// prometheus reader), read at a single instant so that sums taken from it balance.
type Metrics []Sample

// ScrapeMetrics reads the Prometheus endpoint http://127.0.0.1:port/metrics once.
func ScrapeMetrics(t testing.TB, port int) Metrics {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var m Metrics
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		require.NoError(t, err, line)
		m = append(m, s)
	}
	require.NoError(t, sc.Err())
	_, _ = io.Copy(io.Discard, resp.Body)
	return m
}

// Sum returns the sum of the samples of the metric named name (or name_total, as Prometheus
// exposes a counter) whose labels hold each of the pairs "key=value" given; with no pairs, of
// every sample of the metric. A metric never observed sums to 0.
func (m Metrics) Sum(name string, labels ...string) float64 {
	sum := 0.0
next:
	for _, s := range m {
		if s.Name != name && s.Name != name+"_total" {
			continue
		}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			if s.Labels[k] != v {
				continue next
			}
		}
		sum += s.Value
	}
	return sum
}

// Samples returns the samples of the metric named name (or name_total), for messages.
func (m Metrics) Samples(name string) []Sample {
	var out []Sample
	for _, s := range m {
		if s.Name == name || s.Name == name+"_total" {
			out = append(out, s)
		}
	}
	return out
}

// parseSample parses one sample line: name, optional {labels}, value, optional timestamp.
func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return s, fmt.Errorf("no value")
	}
	s.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, ", ")
			if strings.HasPrefix(line, "}") {
				line = line[1:]
				break
			}
			eq := strings.Index(line, `="`)
			if eq < 0 {
				return s, fmt.Errorf("bad label in %q", line)
			}
			key := line[:eq]
			line = line[eq+2:]
			var val strings.Builder
			for {
				if line == "" {
					return s, fmt.Errorf("unterminated label %s", key)
				}
				c := line[0]
				line = line[1:]
				if c == '"' {
					break
				}
				if c == '\\' && line != "" {
					switch line[0] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(line[0])
					}
					line = line[1:]
					continue
				}
				val.WriteByte(c)
			}
			s.Labels[key] = val.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	s.Value = v
	return s, err
}
