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
func dealTranscripts(t *testing.T, ref string, fronts [2]string) (deal func()) {
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
	return func() {
		const chunk = 40 // lines of a file appended at a time, over both halves
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
			}
		}
	}
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

// dealOTLP posts every log record and span of the captures, each in a request of its own with
// its resource and scope, alternately to the two front collectors' OTLP/HTTP endpoints, and
// each capture whole to the reference collector's: first the logs of every capture, then,
// once they have had time to reach the back tier, the spans. Where a call is told in both
// signals, which record is paired, which duplicate is kept and which signal announces an
// interruption depend, on one collector too, on which signal arrives first; the fronts'
// exporters would otherwise reorder them by the milliseconds their queues take.
func dealOTLP(t *testing.T, ref string, fronts [2]string) {
	t.Helper()
	k := 0
	post := func(url string, body []byte) {
		require.True(t, distrotest.PostOTLP(url, body), "POST %s", url)
	}
	for _, signal := range []string{"logs", "traces"} {
		if signal == "traces" {
			time.Sleep(2 * time.Second)
		}
		for _, c := range scaleCaptures(t) {
			body, err := os.ReadFile(filepath.Join(repoRoot, "testdata", c, signal+".json"))
			if os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			post(ref+"/v1/"+signal, body)
			var requests [][]byte
			if signal == "logs" {
				ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(bytes.TrimSpace(body))
				require.NoError(t, err)
				for _, one := range otlpsplit.Logs(ld) {
					b, err := (&plog.JSONMarshaler{}).MarshalLogs(one)
					require.NoError(t, err)
					requests = append(requests, b)
				}
			} else {
				td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(bytes.TrimSpace(body))
				require.NoError(t, err)
				for _, one := range otlpsplit.Spans(td) {
					b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(one)
					require.NoError(t, err)
					requests = append(requests, b)
				}
			}
			for _, b := range requests {
				post(fronts[k%2]+"/v1/"+signal, b)
				k++
			}
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

// TestScaleOutMatchesOneCollector runs examples/scale-out with the built binary on free
// loopback ports: two front collectors (front.yaml, toolpair in route mode, load_balancing with
// the static resolver) and two back collectors (back.yaml), next to one reference collector
// (back.yaml alone). The real Claude Code, Codex and AI SDK captures are dealt record by record
// over both fronts' OTLP/HTTP endpoints and sent whole to the reference; every transcript of
// testdata/ is dealt line by line into files both fronts' filelog receivers read
// (transcripts.yaml), and read whole by the reference's. Every record with an outcome leaves
// exactly one back collector, once; every call gets the outcomes (and interruption reasons)
// the reference gives it, compared by call, not by which of two result records carries which
// (see byCall); and both back collectors get work.
func TestScaleOutMatchesOneCollector(t *testing.T) {
	bin := distrotest.Binary(t)
	tmp := t.TempDir()
	dir := func(name string) string {
		d := filepath.Join(tmp, name)
		require.NoError(t, os.MkdirAll(d, 0o700))
		return d
	}
	refTranscripts, frontTranscripts := dir("transcripts-ref"), [2]string{dir("transcripts-front-1"), dir("transcripts-front-2")}
	dealLines := dealTranscripts(t, refTranscripts, frontTranscripts)

	// Loopback addresses for the five collectors' gRPC and HTTP receivers, all distinct: taken
	// while every one of them is held open (a port asked for after another was released may be
	// that one again).
	addrs := freeAddrs(t, 10)
	addr := func() string {
		a := addrs[0]
		addrs = addrs[1:]
		return a
	}
	quiet := "--set=service::telemetry::metrics::level=none"
	pairing := []string{
		"--set=processors::toolpair::pairing_timeout=" + scalePairingTimeout.String(),
		"--set=processors::toolpair::orphan_grace=" + scaleOrphanGrace.String(),
		quiet,
	}
	type node struct {
		p         *distrotest.Process
		http, out string
	}
	start := func(name, grpc string, env []string, configs ...string) node {
		n := node{http: addr(), out: dir("out-" + name)}
		env = append(env, "OTELCOL_AGENT_OUT="+n.out, "OTELCOL_AGENT_HTTP="+n.http, "OTELCOL_AGENT_GRPC="+grpc,
			"OTELCOL_AGENT_STATE="+dir("state-"+name))
		var args []string
		for _, c := range configs {
			args = append(args, "--config", scaleConfig(t, c))
		}
		if strings.HasPrefix(name, "front") {
			args = append(args, quiet)
		} else {
			args = append(args, pairing...)
		}
		n.p = distrotest.Start(t, name, bin, env, args...)
		return n
	}
	backGRPC := [2]string{addr(), addr()}
	backs := [2]node{start("back-1", backGRPC[0], nil, "back.yaml"), start("back-2", backGRPC[1], nil, "back.yaml")}
	ref := start("reference", addr(), []string{"OTELCOL_AGENT_TRANSCRIPTS=" + filepath.Join(refTranscripts, "*.jsonl")}, "back.yaml", "transcripts.yaml")
	var fronts [2]node
	for i := range fronts {
		fronts[i] = start(fmt.Sprintf("front-%d", i+1), addr(), []string{
			"OTELCOL_AGENT_BACKENDS_1=" + backGRPC[0], "OTELCOL_AGENT_BACKENDS_2=" + backGRPC[1],
			"OTELCOL_AGENT_TRANSCRIPTS=" + filepath.Join(frontTranscripts[i], "*.jsonl"),
		}, "front.yaml", "transcripts.yaml")
	}
	for _, n := range append(append([]node{ref}, backs[:]...), fronts[:]...) {
		url := "http://" + n.http + "/v1/logs"
		n.p.WaitFor(func() bool { return distrotest.PostOTLP(url, []byte(`{}`)) }, "the OTLP/HTTP receiver")
	}

	warmUp(t, [2]string{"http://" + fronts[0].http, "http://" + fronts[1].http}, [2]string{backs[0].out, backs[1].out}, backs[0].p)
	dealOTLP(t, "http://"+ref.http, [2]string{"http://" + fronts[0].http, "http://" + fronts[1].http})
	dealLines()
	dealt := time.Now()

	// Interrupted calls expire pairing_timeout after their use arrived; then the fronts stop
	// (flushing what they still hold) and the back tier must hold as many outcomes as the
	// reference.
	time.Sleep(time.Until(dealt.Add(scalePairingTimeout + time.Second)))
	for _, f := range fronts {
		f.p.Stop()
	}
	decided := func(recs ...map[string][]outcome) int {
		n := 0
		for _, os := range byCall(recs...) {
			n += len(os)
		}
		return n
	}
	backCount := func() int { return decided(outcomeRecords(t, backs[0].out), outcomeRecords(t, backs[1].out)) }
	refCount := decided(outcomeRecords(t, ref.out))
	for deadline := time.Now().Add(20 * time.Second); backCount() < refCount && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond) // what is still missing then is reported below
	}
	ref.p.Stop()
	backs[0].p.Stop()
	backs[1].p.Stop()

	want := outcomeRecords(t, ref.out)
	got := [2]map[string][]outcome{outcomeRecords(t, backs[0].out), outcomeRecords(t, backs[1].out)}
	require.Greater(t, count(want), 420, "the reference decided the captures' calls")
	for i, g := range got {
		assert.Positive(t, count(g), "back-%d got work", i+1)
	}
	// Every record with an outcome leaves one back collector only, once.
	for id, g := range got[0] {
		assert.Empty(t, got[1][id], "%s: on both back collectors", id)
		assert.Len(t, g, 1, "%s: twice", id)
	}
	for id, g := range got[1] {
		assert.Len(t, g, 1, "%s: twice", id)
	}
	wantCalls, gotCalls := byCall(want), byCall(got[0], got[1])
	byOutcome := map[string]int{}
	recordsOf := func(call string, recs ...map[string][]outcome) []string {
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
	for call, w := range wantCalls {
		if !assert.Equal(t, w, gotCalls[call], "call %s", call) {
			t.Logf("call %s on one collector: %v\non the back tier: %v", call, recordsOf(call, want), recordsOf(call, got[0], got[1]))
		}
		for _, o := range w {
			byOutcome[o]++
		}
	}
	for call := range gotCalls {
		if _, ok := wantCalls[call]; !ok {
			t.Errorf("call %s: on the back tier only: %v", call, recordsOf(call, got[0], got[1]))
		}
	}
	t.Logf("%d calls, outcomes %v; records with an outcome: back-1 %d, back-2 %d", len(wantCalls), byOutcome, count(got[0]), count(got[1]))
}
