// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distribution

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/internal/distrotest"
	"github.com/otelcol-agent/otelcol-agent/internal/otlpsplit"
)

// The scale-out test's time limits for the back tier and the single reference collector: short,
// so that interrupted calls expire within seconds. orphan_grace bounds how far the two fronts'
// deliveries may drift apart on a loaded machine (arrival order within it does not change
// outcomes); pairing_timeout is longer than dealing the captures takes.
const (
	scalePairingTimeout = 12 * time.Second
	scaleOrphanGrace    = 6 * time.Second
)

// scaleCaptures returns the OTLP captures dealt over the front tier, as <agent>/<scenario>
// under testdata/: every scenario of Claude Code, Codex, the AI SDK and Gemini CLI. The
// OpenLLMetry and OpenAI Agents SDK captures are left out: on a single collector their
// outcomes already depend on the order in which the spans of one trace arrive (an OpenLLMetry
// tool span arriving before the chat span that announced its call is standalone), and dealing
// them over two fronts reorders spans by milliseconds.
func scaleCaptures(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, agent := range []string{"claude", "codex", "aisdk", "aisdk6", "gemini"} {
		d, err := filepath.Glob(filepath.Join(repoRoot, "testdata", agent, "*"))
		require.NoError(t, err)
		dirs = append(dirs, d...)
	}
	var out []string
	for _, d := range dirs {
		for _, signal := range []string{"logs", "traces"} {
			if _, err := os.Stat(filepath.Join(d, signal+".json")); err == nil {
				rel, err := filepath.Rel(filepath.Join(repoRoot, "testdata"), d)
				require.NoError(t, err)
				out = append(out, filepath.ToSlash(rel))
				break
			}
		}
	}
	require.GreaterOrEqual(t, len(out), 17)
	return out
}

func scaleConfig(t *testing.T, name string) string {
	return filepath.Join(distrotest.RepoRoot(t), "examples", "scale-out", name)
}

// TestScaleOutConfigsValidate: the scale-out examples, alone and with the transcripts overlay.
func TestScaleOutConfigsValidate(t *testing.T) {
	bin := distrotest.Binary(t)
	for _, args := range [][]string{
		{"--config", scaleConfig(t, "front.yaml")},
		{"--config", scaleConfig(t, "back.yaml")},
		{"--config", scaleConfig(t, "front.yaml"), "--config", scaleConfig(t, "transcripts.yaml")},
		{"--config", scaleConfig(t, "back.yaml"), "--config", scaleConfig(t, "transcripts.yaml")},
	} {
		cmd := exec.Command(bin, append([]string{"validate"}, args...)...)
		cmd.Env = append(os.Environ(), "OTELCOL_AGENT_TRANSCRIPTS="+filepath.Join(t.TempDir(), "*.jsonl"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%v: %s", args, out)
	}
}

// dealTranscripts copies every transcript of testdata/ into ref under a name of its own, and
// returns a function that deals its lines alternately into files of the same name in
// fronts[0] and fronts[1], whose filelog receivers each read one half of every session. It
// appends the lines a few at a time, as an agent writes its session: two readers of whole
// files would drift apart by more than orphan_grace, which is arrival order the processor does
// not promise to undo (specification section 2).
//
// The returned deal calls step, when not nil, after each chunk it appended; chunks is how many
// it appends in all.
func dealTranscripts(t *testing.T, ref string, fronts [2]string) (deal func(step func()), chunks int) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(repoRoot, "testdata"))
	require.NoError(t, err)
	type file struct {
		name  string
		lines [][]byte
	}
	var files []file
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		name := strings.ReplaceAll(rel, string(filepath.Separator), "_")
		files = append(files, file{name: name, lines: bytes.SplitAfter(data, []byte("\n"))})
		return os.WriteFile(filepath.Join(ref, name), data, 0o600)
	}))
	require.GreaterOrEqual(t, len(files), 15)
	const chunk = 40 // lines of a file appended at a time, over both halves
	for _, f := range files {
		chunks += (len(f.lines) + chunk - 1) / chunk
	}
	return func(step func()) {
		var out [2]map[string]*os.File
		for i := range out {
			out[i] = map[string]*os.File{}
			for _, f := range files {
				w, err := os.Create(filepath.Join(fronts[i], f.name))
				require.NoError(t, err)
				defer w.Close()
				out[i][f.name] = w
			}
		}
		for _, f := range files {
			for start := 0; start < len(f.lines); start += chunk {
				for i, line := range f.lines[start:min(start+chunk, len(f.lines))] {
					_, err := out[(start+i)%2][f.name].Write(line)
					require.NoError(t, err)
				}
				time.Sleep(20 * time.Millisecond)
				if step != nil {
					step()
				}
			}
		}
	}, chunks
}

// outcome is what a collector decided for one record: its call (the call ID it names, else its
// session, else the record itself for a log record and "" for a span) and its outcome with the
// interruption reason.
type outcome struct{ call, outcome string }

// outcomeRecords reads the outcome of every record that has one in a collector's output
// directory, by record: a span by its trace and span IDs, a log record by its body, call ID
// attributes and time (but for synthetic records, stamped when the collector detected the
// interruption).
func outcomeRecords(t *testing.T, dir string) map[string][]outcome {
	t.Helper()
	got := map[string][]outcome{}
	callOf := func(id string, get func(string) string) string {
		for _, k := range []string{"gen_ai.tool.call.id", "tool_use_id", "call_id", "ai.toolCall.id"} {
			if v := get(k); v != "" {
				return v
			}
		}
		// Gemini CLI names its calls inside message JSON only: its records are grouped by
		// session (which of two records holding the same result is paired and which the
		// dropped duplicate depends on their arrival order).
		for _, k := range []string{"session.id", "gen_ai.conversation.id", "conversation.id"} {
			if v := get(k); v != "" {
				return "scope " + v
			}
		}
		return id
	}
	for _, s := range readSpans(t, filepath.Join(dir, "traces.jsonl")) {
		o := attr(s, "toolpair.outcome")
		if o == "" {
			continue
		}
		id := "span " + s.TraceID().String() + "/" + s.SpanID().String()
		get := func(k string) string { return attr(s, k) }
		// A span that names no call (a chat span quoting the results of earlier calls in its
		// input messages) is compared by record only: whether it or the execute_tool span of
		// the same call arrives first decides which of them is paired.
		call := callOf("", get)
		got[id] = append(got[id], outcome{call, o + "/" + attr(s, "toolpair.interrupt.reason")})
	}
	for _, lr := range readLogRecords(filepath.Join(dir, "logs.jsonl")) {
		o := logAttr(lr, "toolpair.outcome")
		if o == "" {
			continue
		}
		body := lr.Body().AsString()
		if len(body) > 100 {
			body = fmt.Sprintf("%.60s... (sha256 %x)", body, sha256.Sum256([]byte(body)))
		}
		when := fmt.Sprint(lr.Timestamp())
		if logAttr(lr, "toolpair.synthetic") == "true" {
			when = "" // a synthetic record's time is the collector's when it detected the interruption
		}
		id := fmt.Sprintf("log %s|%s|%s|%s|%s", body, logAttr(lr, "tool_use_id"), logAttr(lr, "call_id"),
			logAttr(lr, "gen_ai.tool.call.id"), when)
		get := func(k string) string { return logAttr(lr, k) }
		got[id] = append(got[id], outcome{callOf(id, get), o + "/" + logAttr(lr, "toolpair.interrupt.reason")})
	}
	return got
}

// byCall returns the outcomes of each call: the distinct outcomes (with interruption reasons)
// of its records, sorted, duplicates left out. Which of the records that tell a call's result
// is paired and which is the duplicate (Claude Code's tool_result event and tool span, Gemini
// CLI's log records and span, an execute_tool span and the later chat span quoting its
// result), whether a duplicate is kept, and which signal's synthetic record an interruption
// gets, depend on which record arrives first, on one collector as on several.
func byCall(recs ...map[string][]outcome) map[string][]string {
	calls := map[string][]string{}
	for _, m := range recs {
		for _, os := range m {
			for _, o := range os {
				if o.call != "" && !strings.HasPrefix(o.outcome, "duplicate/") && !slices.Contains(calls[o.call], o.outcome) {
					calls[o.call] = append(calls[o.call], o.outcome)
				}
			}
		}
	}
	for _, os := range calls {
		sort.Strings(os)
	}
	return calls
}

func count(m map[string][]outcome) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// otlpDeal is what dealOTLP posts: every log record and span of the captures, each in a request
// of its own with its resource and scope (dealt alternately to the two fronts), and each
// capture whole (to the reference), logs first.
type otlpDeal struct {
	signal string
	whole  []byte   // the capture, for the reference collector
	parts  [][]byte // its records one per request, for the fronts
}

// prepareOTLP splits the captures for dealOTLP.
func prepareOTLP(t *testing.T) []otlpDeal {
	t.Helper()
	var deals []otlpDeal
	for _, signal := range []string{"logs", "traces"} {
		for _, c := range scaleCaptures(t) {
			body, err := os.ReadFile(filepath.Join(repoRoot, "testdata", c, signal+".json"))
			if os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			d := otlpDeal{signal: signal, whole: body}
			if signal == "logs" {
				ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(bytes.TrimSpace(body))
				require.NoError(t, err)
				for _, one := range otlpsplit.Logs(ld) {
					b, err := (&plog.JSONMarshaler{}).MarshalLogs(one)
					require.NoError(t, err)
					d.parts = append(d.parts, b)
				}
			} else {
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(bytes.TrimSpace(body))
				require.NoError(t, err)
				for _, one := range otlpsplit.Spans(td) {
					b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
					require.NoError(t, err)
					d.parts = append(d.parts, b)
				}
			}
			deals = append(deals, d)
		}
	}
	return deals
}

// otlpSteps is the number of steps dealOTLP takes with deals: a request to a front each, and
// the pause between the logs and the spans.
func otlpSteps(deals []otlpDeal) int {
	n := 1
	for _, d := range deals {
		n += len(d.parts)
	}
	return n
}

// dealOTLP posts deals (prepareOTLP), each log record and span alternately to the two front
// collectors' OTLP/HTTP endpoints, and each capture whole to the reference collector's: first
// the logs of every capture, then, once they have had time to reach the back tier, the spans.
// Where a call is told in both signals, which record is paired, which duplicate is kept and
// which signal announces an interruption depend, on one collector too, on which signal arrives
// first; the fronts' exporters would otherwise reorder them by the milliseconds their queues
// take. step, when not nil, is called after each of its otlpSteps steps.
func dealOTLP(t *testing.T, ref string, fronts [2]string, deals []otlpDeal, step func()) {
	t.Helper()
	if step == nil {
		step = func() {}
	}
	k := 0
	post := func(url string, body []byte) {
		require.True(t, distrotest.PostOTLP(url, body), "POST %s", url)
	}
	paused := false
	for _, d := range deals {
		if d.signal == "traces" && !paused {
			time.Sleep(2 * time.Second)
			paused = true
			step()
		}
		post(ref+"/v1/"+d.signal, d.whole)
		for _, b := range d.parts {
			post(fronts[k%2]+"/v1/"+d.signal, b)
			k++
			step()
		}
	}
	require.Greater(t, k, 1000)
}

// warmUp sends log records of many sessions, none a tool record, through both fronts until each
// back collector has written one from each front: every front's exporter to every back is
// connected before the captures are dealt (a first export that waits for its connection is
// retried seconds later, longer than orphan_grace).
func warmUp(t *testing.T, fronts, backOuts [2]string, p *distrotest.Process) {
	t.Helper()
	for i, front := range fronts {
		ld := plog.NewLogs()
		for n := 0; n < 32; n++ {
			rl := ld.ResourceLogs().AppendEmpty()
			rl.Resource().Attributes().PutStr("service.name", "warm-up")
			rl.Resource().Attributes().PutStr("session.id", fmt.Sprintf("warm-up-%d-%d", i, n))
			lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
			lr.Body().SetStr("warm-up")
			lr.Attributes().PutInt("warm_up.front", int64(i))
		}
		body, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
		require.NoError(t, err)
		require.True(t, distrotest.PostOTLP(front+"/v1/logs", body))
	}
	p.WaitFor(func() bool {
		for _, out := range backOuts {
			var seen [2]bool
			for _, lr := range readLogRecords(filepath.Join(out, "logs.jsonl")) {
				if v, ok := lr.Attributes().Get("warm_up.front"); ok {
					seen[v.Int()] = true
				}
			}
			if !seen[0] || !seen[1] {
				return false
			}
		}
		return true
	}, "warm-up records from both fronts on both back collectors")
}

// freeAddrs returns n distinct loopback addresses that were free when asked.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out
}

// scaleNode is one collector of the scale-out test: its process, its OTLP/HTTP address, how it
// was started (so that a back collector killed can be started again at the same addresses on
// the same state directory), and the output directory of each of its runs (one for all its
// runs when it exports to the sink collector: sunk).
type scaleNode struct {
	name string
	p    *distrotest.Process
	http string
	env  []string
	args []string
	outs []string
	sunk bool
}

// out is the output directory of the node's current run.
func (n *scaleNode) out() string { return n.outs[len(n.outs)-1] }

// outcomes reads the records with an outcome of every run of the node (outcomeRecords), a
// record written by two runs listed twice.
func (n *scaleNode) outcomes(t *testing.T) map[string][]outcome {
	t.Helper()
	all := map[string][]outcome{}
	for _, dir := range n.outs {
		for id, os := range outcomeRecords(t, dir) {
			all[id] = append(all[id], os...)
		}
	}
	return all
}

// scaleOut is examples/scale-out run with the built binary on free loopback ports: two front
// collectors (front.yaml with transcripts.yaml, toolpair in route mode, load_balancing with the
// static resolver) and two back collectors (back.yaml), next to one reference collector
// (back.yaml and transcripts.yaml), every one of them started and answering.
type scaleOut struct {
	t      *testing.T
	bin    string
	dir    func(name string) string
	ref    *scaleNode
	backs  [2]*scaleNode
	fronts [2]*scaleNode
	// sink, when not nil, is the collector the back collectors export to (scaleOptions.sink).
	sink *distrotest.Process
	// dealLines deals the transcripts into the fronts' files (dealTranscripts), chunks steps.
	dealLines func(step func())
	chunks    int
	// deals are the captures dealOTLP posts.
	deals []otlpDeal
}

// scaleOptions are the variations of scaleOut.
type scaleOptions struct {
	// dir is where the collectors' outputs and state directories go (t.TempDir() when empty).
	dir string
	// sink: the back collectors export to a sixth collector, the sink, which writes each one's
	// records to its output directory (out-back-N), instead of writing them to files
	// themselves (the file exporters of back.yaml, which back.yaml leaves for "your own
	// exporters"). Their OTLP exporter to it has no sending queue: a back collector's pipeline
	// returns, and its receiver answers the front, once the sink has taken the records, so
	// that a back collector killed loses nothing it had exported: a file exporter keeps the end
	// of what it last wrote in a buffer (flush_interval) that a kill loses.
	sink bool
	// pairingTimeout and orphanGrace are the back tier's and the reference's time limits
	// (scalePairingTimeout and scaleOrphanGrace when zero).
	pairingTimeout, orphanGrace time.Duration
}

// startScaleOut starts the five collectors (six with o.sink) and warms the fronts' exporters
// up.
func startScaleOut(t *testing.T, o scaleOptions) *scaleOut {
	t.Helper()
	tmp := o.dir
	if tmp == "" {
		tmp = t.TempDir()
	}
	s := &scaleOut{t: t, bin: distrotest.Binary(t)}
	s.dir = func(name string) string {
		d := filepath.Join(tmp, name)
		require.NoError(t, os.MkdirAll(d, 0o700))
		return d
	}
	refTranscripts, frontTranscripts := s.dir("transcripts-ref"), [2]string{s.dir("transcripts-front-1"), s.dir("transcripts-front-2")}
	s.dealLines, s.chunks = dealTranscripts(t, refTranscripts, frontTranscripts)
	s.deals = prepareOTLP(t)

	// Loopback addresses for the five collectors' gRPC and HTTP receivers, all distinct: taken
	// while every one of them is held open (a port asked for after another was released may be
	// that one again).
	addrs := freeAddrs(t, 13)
	addr := func() string {
		a := addrs[0]
		addrs = addrs[1:]
		return a
	}
	quiet := "--set=service::telemetry::metrics::level=none"
	if o.pairingTimeout == 0 {
		o.pairingTimeout = scalePairingTimeout
	}
	if o.orphanGrace == 0 {
		o.orphanGrace = scaleOrphanGrace
	}
	pairing := []string{
		"--set=processors::toolpair::pairing_timeout=" + o.pairingTimeout.String(),
		"--set=processors::toolpair::orphan_grace=" + o.orphanGrace.String(),
		quiet,
	}
	// The back tier's orphan_grace is a fifth of its default (30s) or less, and the fronts'
	// exporters retry sooner than by default (5s, then 1.5 times longer, at most 30s, each
	// ±50%) likewise, at most 3s (4.5s with the randomization) apart, so that the records of one
	// scope that two fronts retry into a back collector come back within orphan_grace of each
	// other (TestCrashWindowFrontRetriesWithinOrphanGrace states the rule for the example).
	frontRetry := []string{
		"--set=exporters::load_balancing::protocol::otlp::retry_on_failure::initial_interval=1s",
		"--set=exporters::load_balancing::protocol::otlp::retry_on_failure::max_interval=3s",
	}
	start := func(name, grpc string, env, extra []string, configs ...string) *scaleNode {
		n := &scaleNode{name: name, http: addr(), outs: []string{s.dir("out-" + name)}}
		n.env = append(env, "OTELCOL_AGENT_HTTP="+n.http, "OTELCOL_AGENT_GRPC="+grpc,
			"OTELCOL_AGENT_STATE="+s.dir("state-"+name))
		for _, c := range configs {
			n.args = append(n.args, "--config", scaleConfig(t, c))
		}
		if strings.HasPrefix(name, "front") {
			n.args = append(n.args, quiet)
			n.args = append(n.args, frontRetry...)
		} else {
			n.args = append(n.args, pairing...)
		}
		n.args = append(n.args, extra...)
		n.p = distrotest.Start(t, name, s.bin, append(slices.Clone(n.env), "OTELCOL_AGENT_OUT="+n.out()), n.args...)
		return n
	}
	backGRPC := [2]string{addr(), addr()}
	var sinkArgs [2][]string
	if o.sink {
		sinkGRPC, sinkHTTP := [2]string{addr(), addr()}, addr()
		s.sink = startSink(t, s.dir("sink"), sinkHTTP, sinkGRPC, [2]string{s.dir("out-back-1"), s.dir("out-back-2")})
		for i := range sinkArgs {
			sinkArgs[i] = []string{
				"--set=exporters::otlp/sink::endpoint=" + sinkGRPC[i],
				"--set=exporters::otlp/sink::tls::insecure=true",
				"--set=exporters::otlp/sink::sending_queue::enabled=false",
				"--set=service::pipelines::traces::exporters=[debug, otlp/sink]",
				"--set=service::pipelines::logs::exporters=[debug, otlp/sink]",
			}
		}
	}
	startBack := func(i int) *scaleNode {
		n := start(fmt.Sprintf("back-%d", i+1), backGRPC[i], nil, sinkArgs[i], "back.yaml")
		n.sunk = o.sink
		return n
	}
	s.backs = [2]*scaleNode{startBack(0), startBack(1)}
	s.ref = start("reference", addr(), []string{"OTELCOL_AGENT_TRANSCRIPTS=" + filepath.Join(refTranscripts, "*.jsonl")}, nil, "back.yaml", "transcripts.yaml")
	for i := range s.fronts {
		s.fronts[i] = start(fmt.Sprintf("front-%d", i+1), addr(), []string{
			"OTELCOL_AGENT_BACKENDS_1=" + backGRPC[0], "OTELCOL_AGENT_BACKENDS_2=" + backGRPC[1],
			"OTELCOL_AGENT_TRANSCRIPTS=" + filepath.Join(frontTranscripts[i], "*.jsonl"),
		}, nil, "front.yaml", "transcripts.yaml")
	}
	for _, n := range append(append([]*scaleNode{s.ref}, s.backs[:]...), s.fronts[:]...) {
		s.waitReady(n)
	}
	warmUp(t, s.frontURLs(), [2]string{s.backs[0].out(), s.backs[1].out()}, s.backs[0].p)
	return s
}

// waitReady waits until n's OTLP/HTTP receiver takes a request.
func (s *scaleOut) waitReady(n *scaleNode) {
	s.t.Helper()
	url := "http://" + n.http + "/v1/logs"
	n.p.WaitFor(func() bool { return distrotest.PostOTLP(url, []byte(`{}`)) }, "the OTLP/HTTP receiver")
}

// restart starts n again, after it was killed, with the same environment and arguments (its
// addresses, its state directory). Unless it exports to the sink, it writes to a new output
// directory: the file exporter truncates its file at start, and the killed run's last line
// may be cut short.
func (s *scaleOut) restart(n *scaleNode, run int) {
	s.t.Helper()
	if !n.sunk {
		n.outs = append(n.outs, s.dir(fmt.Sprintf("out-%s-run-%d", n.name, run)))
	}
	n.p = distrotest.Start(s.t, fmt.Sprintf("%s (run %d)", n.name, run), s.bin,
		append(slices.Clone(n.env), "OTELCOL_AGENT_OUT="+n.out()), n.args...)
}

// startSink starts the sink collector of scaleOptions.sink and waits until it answers (on
// OTLP/HTTP at http): back collector i's records, taken by OTLP/gRPC at grpc[i], are written
// to outs[i] (traces.jsonl and logs.jsonl, as the back collectors' file exporters would),
// flushed every 10ms and at its stop.
func startSink(t *testing.T, dir, http string, grpc, outs [2]string) *distrotest.Process {
	t.Helper()
	var b strings.Builder
	b.WriteString("receivers:\n")
	for i := range grpc {
		fmt.Fprintf(&b, "  otlp/back-%d:\n    protocols:\n      grpc:\n        endpoint: %s\n", i+1, grpc[i])
		if i == 0 {
			fmt.Fprintf(&b, "      http:\n        endpoint: %s\n", http)
		}
	}
	b.WriteString("exporters:\n")
	for i := range outs {
		for _, sig := range []string{"traces", "logs"} {
			fmt.Fprintf(&b, "  file/back-%d-%s:\n    path: %s\n    flush_interval: 10ms\n", i+1, sig, filepath.Join(outs[i], sig+".jsonl"))
		}
	}
	b.WriteString("service:\n  telemetry:\n    metrics:\n      level: none\n  pipelines:\n")
	for i := range outs {
		for _, sig := range []string{"traces", "logs"} {
			fmt.Fprintf(&b, "    %s/back-%d:\n      receivers: [otlp/back-%d]\n      exporters: [file/back-%d-%s]\n", sig, i+1, i+1, i+1, sig)
		}
	}
	cfg := filepath.Join(dir, "sink.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(b.String()), 0o600))
	p := distrotest.Start(t, "sink", distrotest.Binary(t), nil, "--config", cfg)
	p.WaitFor(func() bool { return distrotest.PostOTLP("http://"+http+"/v1/logs", []byte(`{}`)) }, "the sink's OTLP/HTTP receiver")
	return p
}

func (s *scaleOut) frontURLs() [2]string {
	return [2]string{"http://" + s.fronts[0].http, "http://" + s.fronts[1].http}
}

// deal deals the captures (dealOTLP) and the transcripts (dealLines) over the fronts, calling
// step, when not nil, after each of its steps (s.steps in all).
func (s *scaleOut) deal(step func()) {
	dealOTLP(s.t, "http://"+s.ref.http, s.frontURLs(), s.deals, step)
	s.dealLines(step)
}

// steps is the number of steps of deal.
func (s *scaleOut) steps() int { return otlpSteps(s.deals) + s.chunks }

// settle waits until until, by when every call still interrupted has expired on the back tier
// (pairing_timeout after its use arrived), then stops the fronts (flushing what they still
// hold), waits up to 20s for the back tier to hold as many outcomes as the reference and stops
// the back tier and the reference. It returns the reference's records with an outcome and the
// back collectors' (each over all its runs).
func (s *scaleOut) settle(until time.Time) (want map[string][]outcome, got [2]map[string][]outcome) {
	s.t.Helper()
	time.Sleep(time.Until(until))
	for _, f := range s.fronts {
		f.p.Stop()
	}
	decided := func(recs ...map[string][]outcome) int {
		n := 0
		for _, os := range byCall(recs...) {
			n += len(os)
		}
		return n
	}
	backCount := func() int { return decided(s.backs[0].outcomes(s.t), s.backs[1].outcomes(s.t)) }
	refCount := decided(s.ref.outcomes(s.t))
	for deadline := time.Now().Add(20 * time.Second); backCount() < refCount && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond) // what is still missing then is reported below
	}
	s.ref.p.Stop()
	s.backs[0].p.Stop()
	s.backs[1].p.Stop()
	if s.sink != nil {
		s.sink.Stop() // flushes what it wrote
	}

	want = s.ref.outcomes(s.t)
	got = [2]map[string][]outcome{s.backs[0].outcomes(s.t), s.backs[1].outcomes(s.t)}
	require.Greater(s.t, count(want), 420, "the reference decided the captures' calls")
	for i, g := range got {
		assert.Positive(s.t, count(g), "back-%d got work", i+1)
	}
	return want, got
}

// recordsOf lists the records of call in recs with their outcomes, for a failure's report.
func recordsOf(call string, recs ...map[string][]outcome) []string {
	var out []string
	for _, m := range recs {
		for id, os := range m {
			for _, o := range os {
				if o.call == call {
					out = append(out, id+" "+o.outcome)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// absentRecords returns the records with an outcome on the reference that no back collector
// wrote, among those whose presence does not depend on arrival order: a record of a call named
// by its call ID, or a transcript line (its call is the record itself). Left out: Gemini CLI's
// records, grouped by session (which of two records holding the same result is paired and
// which the dropped duplicate depends on their arrival order), and spans that name no call (a
// chat span quoting an earlier result stays unmarked when the execute_tool span came first).
func absentRecords(want map[string][]outcome, got [2]map[string][]outcome) []string {
	var out []string
	for id, os := range want {
		if len(got[0][id]) > 0 || len(got[1][id]) > 0 {
			continue
		}
		for _, o := range os {
			if o.call != "" && !strings.HasPrefix(o.call, "scope ") && !strings.HasPrefix(o.outcome, "duplicate/") {
				out = append(out, fmt.Sprintf("%s (call %.80s, %s)", id, o.call, o.outcome))
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// sameCalls requires that every call gets, on the back tier, the outcomes (and interruption
// reasons) the reference gives it, compared by call (byCall), and that the back tier decided
// no call the reference did not. It returns the failing calls.
func sameCalls(t *testing.T, want map[string][]outcome, got [2]map[string][]outcome) (failed []string) {
	t.Helper()
	wantCalls, gotCalls := byCall(want), byCall(got[0], got[1])
	byOutcome := map[string]int{}
	for call, w := range wantCalls {
		if !assert.Equal(t, w, gotCalls[call], "call %s", call) {
			t.Logf("call %s on one collector: %v\non the back tier: %v", call, recordsOf(call, want), recordsOf(call, got[0], got[1]))
			failed = append(failed, call)
		}
		for _, o := range w {
			byOutcome[o]++
		}
	}
	for call := range gotCalls {
		if _, ok := wantCalls[call]; !ok {
			t.Errorf("call %s: on the back tier only: %v", call, recordsOf(call, got[0], got[1]))
			failed = append(failed, call)
		}
	}
	t.Logf("%d calls, outcomes %v; records with an outcome: back-1 %d, back-2 %d", len(wantCalls), byOutcome, count(got[0]), count(got[1]))
	sort.Strings(failed)
	return failed
}

// TestScaleOutMatchesOneCollector runs examples/scale-out (scaleOut). The real Claude Code,
// Codex and AI SDK captures are dealt record by record over both fronts' OTLP/HTTP endpoints
// and sent whole to the reference; every transcript of testdata/ is dealt line by line into
// files both fronts' filelog receivers read (transcripts.yaml), and read whole by the
// reference's. Every record with an outcome leaves exactly one back collector, once; every call
// gets the outcomes (and interruption reasons) the reference gives it, compared by call, not by
// which of two result records carries which (see byCall); and both back collectors get work.
func TestScaleOutMatchesOneCollector(t *testing.T) {
	s := startScaleOut(t, scaleOptions{})
	s.deal(nil)
	dealt := time.Now()

	// Interrupted calls expire pairing_timeout after their use arrived.
	want, got := s.settle(dealt.Add(scalePairingTimeout + time.Second))
	// Every record with an outcome leaves one back collector only, once.
	for id, g := range got[0] {
		assert.Empty(t, got[1][id], "%s: on both back collectors", id)
		assert.Len(t, g, 1, "%s: twice", id)
	}
	for id, g := range got[1] {
		assert.Len(t, g, 1, "%s: twice", id)
	}
	sameCalls(t, want, got)
	assert.Empty(t, absentRecords(want, got), "records with an outcome on the reference that no back collector wrote")
}
