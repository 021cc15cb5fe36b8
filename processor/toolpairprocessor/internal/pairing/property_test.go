// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

// Seeded property tests of the engine: random scenarios of uses, results, echoes, rejects,
// step boundaries and session ends in random batches, with clock advances, Ticks, evictions,
// results that cannot wait and a final Shutdown, checked against the conservation of
// specification section 7 after every call, against the one-outcome-per-use and
// one-outcome-per-result rule of specification section 2 at the end, and, for simple scenarios,
// against a small reference model of the outcome rules.
//
// A failure prints the scenario's seed and its operations; rerun it alone with (the test
// binary's flags go after the package)
//
//	go test -run '^TestProperty<Name>$' ./processor/toolpairprocessor/internal/pairing/ -pairing.seed=<seed>
//
// -pairing.long runs 1,000,000 scenarios per test instead of 10,000.

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var (
	pairingLong = flag.Bool("pairing.long", false, "run 1,000,000 seeded scenarios per pairing property test instead of 10,000")
	pairingSeed = flag.Uint64("pairing.seed", 0, "run only the pairing property scenario with this seed")
)

// propBaseSeed is the seed of scenario 0; scenario i uses propBaseSeed+i.
const propBaseSeed uint64 = 0x7001_9a12_0000_0001

func propScenarios() int {
	if *pairingLong {
		return 1_000_000
	}
	return 10_000
}

// useTok is the Payload of a use or reject event: the event's Ref. It comes back as
// Resolution.UsePayload, which names the use a use-side outcome closes.
type useTok int32

// heldTok is what the hold callback returns: a number unique to each held result. It comes
// back as Resolution.ResultPayload when the result is released.
type heldTok int32

type propOpKind uint8

const (
	propProcess propOpKind = iota + 1
	propAdvance
	propTick
	propShutdown // not generated: the executor always ends with Shutdown
)

type propOp struct {
	kind    propOpKind
	events  []Event // propProcess: a batch, a sub-slice of propScenario.events
	advance time.Duration
}

// End modes of model scenarios: what happens after the last batch, before Shutdown.
const (
	propEndShutdown = iota // Shutdown only: pending uses are interrupted/shutdown
	propEndGrace           // advance past orphan_grace (not pairing_timeout), Tick
	propEndTimeout         // advance past pairing_timeout, Tick: pending uses expire
)

type propScenario struct {
	seed    uint64
	cfg     Config // without Clock
	holdNil bool   // Process is called with a nil hold callback
	endMode int    // model scenarios only
	events  []Event
	refuse  []bool // by Ref: the hold callback returns nil for this result (it cannot wait)
	ops     []propOp
}

var (
	propTenants = []string{"t0", "t1"}
	propScopes  = []string{"", "s0", "s1", "s2"}
	propIDs     = []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"}
	propTools   = []string{"", "read", "bash"}
	// Steps without a group, and grouped ones (GroupStep) of two groups; "g1\x00" is the
	// Step of a grouped session end.
	propSteps = []string{"", "p0", "p1", "p2", "g0\x00p0", "g0\x00p1", "g1\x00p0", "g1\x00"}
)

// propCloses is the reference rule of which pending calls a closing may close, by Steps: a
// grouped closing (a NUL in its Step) only those of its group (for a boundary, of another
// step); an ungrouped boundary those of another non-empty step; an ungrouped session end all.
func propCloses(boundary bool, closing, use string) bool {
	if g, _, grouped := strings.Cut(closing, "\x00"); grouped {
		ug, _, ok := strings.Cut(use, "\x00")
		return ok && ug == g && (!boundary || use != closing)
	}
	if boundary {
		return use != "" && use != closing
	}
	return true
}

func propRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

func propNewEvent(rng *rand.Rand, kind Kind, k Key, minSource int) Event {
	return Event{
		Kind:     kind,
		Key:      k,
		Time:     rng.Int64N(40) * int64(time.Millisecond), // few values: equal times are frequent
		ToolName: propTools[rng.IntN(len(propTools))],
		Source:   uint8(minSource + rng.IntN(3-minSource)),
		Step:     propSteps[rng.IntN(len(propSteps))],
	}
}

// propFinish numbers the events (Ref = index, the processing order), gives uses and rejects
// their payload, picks the results that cannot wait (one in refuseOneIn, none when 0), and
// splits the events into batches separated by what between(batches) returns.
func (sc *propScenario) propFinish(rng *rand.Rand, refuseOneIn int, between func(nBatches int) []propOp) {
	sc.refuse = make([]bool, len(sc.events))
	for i := range sc.events {
		ev := &sc.events[i]
		ev.Ref = int32(i)
		if ev.Kind == KindUse || ev.Kind == KindReject {
			ev.Payload = useTok(i)
		}
		sc.refuse[i] = ev.Kind == KindResult && refuseOneIn > 0 && rng.IntN(refuseOneIn) == 0
	}
	var batches [][]Event
	for rest := sc.events; len(rest) > 0; {
		n := 1 + rng.IntN(min(8, len(rest)))
		batches = append(batches, rest[:n:n])
		rest = rest[n:]
	}
	for i, b := range batches {
		if i > 0 {
			sc.ops = append(sc.ops, between(len(batches))...)
		}
		sc.ops = append(sc.ops, propOp{kind: propProcess, events: b})
	}
}

// propGenerate makes a general scenario: few tenants, scopes and call IDs so that repeated
// uses, duplicates, orphans and standalone results are frequent; random clock advances, some
// beyond orphan_grace or pairing_timeout; step boundaries and session ends; sometimes a small
// max_pending (evictions), a small max_resolved or a short retention (forgotten calls), no
// hold callback, or one that refuses some results.
func propGenerate(seed uint64) *propScenario {
	rng := propRand(seed)
	og := time.Duration(1+rng.IntN(5)) * time.Second
	pt := time.Duration(1+rng.IntN(10)) * time.Second
	sc := &propScenario{seed: seed, cfg: Config{PairingTimeout: pt, OrphanGrace: og, MaxPending: 1000, HeldSize: oneByte}}
	if rng.IntN(3) == 0 {
		sc.cfg.MaxPending = 1 + rng.IntN(4)
	}
	if rng.IntN(4) == 0 {
		sc.cfg.MaxResolved = 1 + rng.IntN(4)
	}
	if rng.IntN(4) == 0 {
		sc.cfg.ResolvedRetention = time.Duration(1+rng.IntN(10)) * time.Second
	}
	sc.holdNil = rng.IntN(10) == 0
	tenants := propTenants[:1+rng.IntN(len(propTenants))]
	scopes := propScopes[:1+rng.IntN(len(propScopes))]
	ids := propIDs[:1+rng.IntN(len(propIDs))]
	n := 1 + rng.IntN(48)
	sc.events = make([]Event, 0, n)
	for range n {
		k := Key{Tenant: tenants[rng.IntN(len(tenants))], Conversation: scopes[rng.IntN(len(scopes))], CallID: ids[rng.IntN(len(ids))]}
		if rng.IntN(25) == 0 {
			k.CallID = ""
		}
		var kind Kind
		switch x := rng.IntN(100); {
		case x < 32:
			kind = KindUse
		case x < 56:
			kind = KindResult
		case x < 62:
			kind = KindRefused
		case x < 74:
			kind = KindEcho
		case x < 84:
			kind = KindReject
		case x < 92:
			kind = KindBoundary
		case x < 98:
			kind = KindSessionEnd
		case x < 99:
			kind = 0 // not a kind
		default:
			kind = 200 // not a kind
		}
		sc.events = append(sc.events, propNewEvent(rng, kind, k, 0))
	}
	refuseOneIn := 0
	if rng.IntN(5) == 0 {
		refuseOneIn = 1 + rng.IntN(4)
	}
	sc.propFinish(rng, refuseOneIn, func(int) []propOp {
		var ops []propOp
		var d time.Duration
		switch rng.IntN(8) {
		case 0, 1:
			d = time.Duration(rng.Int64N(int64(og)))
		case 2:
			d = og // exactly at the deadline
		case 3:
			d = og + time.Duration(rng.Int64N(int64(time.Second)))
		case 4:
			d = pt
		case 5:
			d = pt + time.Duration(rng.Int64N(int64(10*time.Second)))
		}
		if d > 0 {
			ops = append(ops, propOp{kind: propAdvance, advance: d})
		}
		if rng.IntN(3) == 0 {
			ops = append(ops, propOp{kind: propTick})
		}
		return ops
	})
	if rng.IntN(2) == 0 {
		sc.ops = append(sc.ops, propOp{kind: propAdvance, advance: time.Duration(rng.Int64N(int64(2 * pt)))}, propOp{kind: propTick})
	}
	return sc
}

// propGenerateModel makes a scenario simple enough for the reference model: max_pending and
// max_resolved far above the number of keys, clock advances that add up to less than
// orphan_grace (itself well under pairing_timeout) until the end, and each key given at most
// one use or reject and any number of results and echoes, in random order, with a few step
// boundaries and session ends per scope.
func propGenerateModel(seed uint64) *propScenario {
	rng := propRand(seed)
	og := time.Duration(1+rng.IntN(5)) * time.Second
	pt := 3*og + time.Duration(1+rng.IntN(10))*time.Second
	sc := &propScenario{
		seed:    seed,
		cfg:     Config{PairingTimeout: pt, OrphanGrace: og, MaxPending: 1000, HeldSize: oneByte},
		holdNil: rng.IntN(8) == 0,
		endMode: rng.IntN(3),
	}
	nKeys := 1 + rng.IntN(len(propIDs))
	for i := range nKeys {
		k := Key{Tenant: propTenants[rng.IntN(len(propTenants))], Conversation: propScopes[rng.IntN(len(propScopes))], CallID: propIDs[i]}
		switch rng.IntN(4) {
		case 0:
		case 1:
			sc.events = append(sc.events, propNewEvent(rng, KindReject, k, 1))
		default:
			sc.events = append(sc.events, propNewEvent(rng, KindUse, k, 1))
		}
		for range rng.IntN(4) {
			sc.events = append(sc.events, propNewEvent(rng, KindResult, k, 1))
		}
		for range rng.IntN(3) {
			sc.events = append(sc.events, propNewEvent(rng, KindEcho, k, 1))
		}
	}
	for range rng.IntN(3) {
		k := Key{Tenant: propTenants[0], Conversation: propScopes[rng.IntN(len(propScopes))]}
		sc.events = append(sc.events, propNewEvent(rng, Kind(1+rng.IntN(4)), k, 1))
	}
	if rng.IntN(2) == 0 {
		for range rng.IntN(4) {
			k := Key{Tenant: propTenants[rng.IntN(len(propTenants))], Conversation: propScopes[rng.IntN(len(propScopes))]}
			kind := KindBoundary
			if rng.IntN(3) == 0 {
				kind = KindSessionEnd
			}
			sc.events = append(sc.events, propNewEvent(rng, kind, k, 1))
		}
	}
	rng.Shuffle(len(sc.events), func(i, j int) { sc.events[i], sc.events[j] = sc.events[j], sc.events[i] })
	// The advances between batches add up to less than budget < orphan_grace < pairing_timeout,
	// so nothing expires and nothing is forgotten before the end.
	budget := og - time.Millisecond
	refuseOneIn := 0
	if rng.IntN(4) == 0 {
		refuseOneIn = 1 + rng.IntN(3)
	}
	sc.propFinish(rng, refuseOneIn, func(nBatches int) []propOp {
		var ops []propOp
		if rng.IntN(2) == 0 {
			ops = append(ops, propOp{kind: propAdvance, advance: time.Duration(rng.Int64N(int64(budget) / int64(nBatches)))})
		}
		if rng.IntN(3) == 0 {
			ops = append(ops, propOp{kind: propTick})
		}
		return ops
	})
	switch sc.endMode {
	case propEndGrace:
		// Every waiting result was held at most budget after the start: it is due. Every
		// pending use has more than og+2*budget left: it is not.
		sc.ops = append(sc.ops, propOp{kind: propAdvance, advance: og + budget}, propOp{kind: propTick})
	case propEndTimeout:
		sc.ops = append(sc.ops, propOp{kind: propAdvance, advance: pt + budget}, propOp{kind: propTick})
	}
	return sc
}

// propRun executes a scenario and accounts for every event and every resolution.
type propRun struct {
	sc  *propScenario
	e   *Engine
	clk *fakeClock
	res []Resolution

	verdicts []Verdict // by Ref
	asked    []bool    // by Ref: hold was called for the result
	heldOf   []int32   // by Ref: the heldTok given to the result, or -1
	useCount []uint8   // by Ref of a use or reject: use-side outcomes carrying its payload
	refCount []uint8   // by Ref of a result: resolutions naming it as ResultRef
	rejCount []uint8   // by Ref of a reject (as UseRef) or a refusal (as ResultRef): rejected outcomes naming it
	// refusedFirst, by Ref of a refusal: its rejected outcome carried no use (none was pending).
	refusedFirst []bool
	heldRef      []int32 // by heldTok: the Ref of the held result
	released     []uint8 // by heldTok: times released in a ResultPayload

	seen       int             // events handed to Process so far: sc.events[:seen]
	openUse    map[useTok]Key  // uses with VerdictPending not yet closed by an outcome
	openHeld   map[heldTok]Key // held results not yet released
	echoPaired int             // paired outcomes with neither a result Ref nor a held record
	// reportRef, by Ref: the record's outcome was a further report (Resolution.Report);
	// echoReports counts the further reports made by echoes, reports all of them.
	reportRef   []bool
	echoReports int
	reports     uint64
	holdErr     error
}

func propExecute(sc *propScenario) (*propRun, error) {
	clk := newFakeClock()
	cfg := sc.cfg
	cfg.Clock = clk
	// Activity (model calls, compactions, anchor spans) observed between the batches, drawn
	// from a stream of its own so that the scenarios' events stay as they are: it must never
	// change an outcome, and every bound and expiry of it keeps the scope table whole.
	act := propRand(sc.seed ^ 0xac71_0000_0000_0001)
	if act.IntN(3) == 0 {
		cfg.MaxActivity = 1 + act.IntN(6)
	}
	if act.IntN(3) == 0 {
		cfg.ActivityRetention = time.Duration(1+act.IntN(5)) * time.Second
	}
	e := New(cfg)
	e.hashMask = propHashMask
	n := len(sc.events)
	r := &propRun{
		sc:           sc,
		e:            e,
		clk:          clk,
		verdicts:     make([]Verdict, n),
		asked:        make([]bool, n),
		heldOf:       make([]int32, n),
		useCount:     make([]uint8, n),
		refCount:     make([]uint8, n),
		rejCount:     make([]uint8, n),
		refusedFirst: make([]bool, n),
		reportRef:    make([]bool, n),
		openUse:      make(map[useTok]Key),
		openHeld:     make(map[heldTok]Key),
	}
	for i := range r.heldOf {
		r.heldOf[i] = -1
	}
	hold := r.hold
	if sc.holdNil {
		hold = nil
	}
	for i, op := range sc.ops {
		from := len(r.res)
		var batch []Event
		switch op.kind {
		case propAdvance:
			clk.Advance(op.advance)
			continue
		case propTick:
			r.res = e.Tick(r.res)
		case propProcess:
			propObserve(e, act, clk.Now().UnixNano())
			batch = slices.Clone(op.events)
			r.res = e.Process(batch, hold, r.res)
			for i := range batch {
				r.seen = max(r.seen, int(batch[i].Ref)+1)
			}
		}
		if err := r.after(op.kind, batch, from); err != nil {
			return r, fmt.Errorf("after op %d (%s): %w", i, propOpName(op.kind), err)
		}
		k := ConversationKey{Tenant: propTenants[act.IntN(len(propTenants))], Conversation: propScopes[act.IntN(len(propScopes))]}
		if err := e.checkInFlight(k, act.Int64N(int64(45*time.Millisecond))); err != nil {
			return r, fmt.Errorf("after op %d: %w", i, err)
		}
	}
	from := len(r.res)
	r.res = e.Shutdown(r.res)
	if err := r.after(propShutdown, nil, from); err != nil {
		return r, fmt.Errorf("after Shutdown: %w", err)
	}
	return r, r.final()
}

// propObserve observes up to three activities of random kinds in random scopes of the
// scenarios' keys, with record times in the range of the scenarios' events.
func propObserve(e *Engine, rng *rand.Rand, now int64) {
	n := rng.IntN(4)
	if n == 0 {
		return
	}
	acts := make([]Activity, n)
	for i := range acts {
		start := rng.Int64N(int64(time.Minute))
		acts[i] = Activity{
			Kind:   ActivityKind(1 + rng.IntN(4)),
			Key:    ConversationKey{Tenant: propTenants[rng.IntN(len(propTenants))], Conversation: propScopes[rng.IntN(len(propScopes))]},
			Start:  start,
			End:    start + rng.Int64N(int64(10*time.Second)),
			ID:     [24]byte{byte(rng.IntN(4))},
			Anchor: now,
		}
	}
	e.Observe(acts)
}

func (r *propRun) hold(ev *Event) any {
	if ev.Ref < 0 || int(ev.Ref) >= len(r.heldOf) {
		if r.holdErr == nil {
			r.holdErr = fmt.Errorf("hold called with unknown Ref %d", ev.Ref)
		}
		return nil
	}
	switch {
	case r.holdErr != nil:
	case ev.Kind != KindResult:
		r.holdErr = fmt.Errorf("hold called for ref %d of kind %s", ev.Ref, propKindName(ev.Kind))
	case r.asked[ev.Ref]:
		r.holdErr = fmt.Errorf("hold called twice for ref %d", ev.Ref)
	}
	r.asked[ev.Ref] = true
	if r.sc.refuse[ev.Ref] {
		return nil
	}
	tok := heldTok(len(r.heldRef))
	r.heldRef = append(r.heldRef, ev.Ref)
	r.released = append(r.released, 0)
	r.heldOf[ev.Ref] = int32(tok)
	r.openHeld[tok] = ev.Key
	return tok
}

// after checks the engine after one Process, Tick or Shutdown that appended r.res[from:].
func (r *propRun) after(kind propOpKind, batch []Event, from int) error {
	if r.holdErr != nil {
		return r.holdErr
	}
	s := r.e.Stats()
	if err := s.CheckConservation(); err != nil {
		return fmt.Errorf("conservation: %w", err)
	}
	if err := r.e.checkScopes(); err != nil {
		return fmt.Errorf("scopes: %w", err)
	}
	if held := r.e.heldNow(); s.HeldBytes != held {
		return fmt.Errorf("held bytes %d, but %d held", s.HeldBytes, held)
	}
	if s.Pending < 0 || s.Waiting < 0 || s.Pending+s.Waiting > r.sc.cfg.MaxPending {
		return fmt.Errorf("pending %d + waiting %d outside [0, max pending %d]", s.Pending, s.Waiting, r.sc.cfg.MaxPending)
	}
	for i := range batch {
		ev := &batch[i]
		r.verdicts[ev.Ref] = ev.Verdict
		if err := r.checkVerdict(ev); err != nil {
			return fmt.Errorf("ref %d %s: %w", ev.Ref, propFmtEvent(ev), err)
		}
		if ev.Kind == KindUse && ev.Verdict == VerdictPending {
			r.openUse[useTok(ev.Ref)] = ev.Key
		}
	}
	now := r.clk.Now().UnixNano()
	for i := from; i < len(r.res); i++ {
		if err := r.account(&r.res[i], kind, batch, now); err != nil {
			return fmt.Errorf("resolution %d {%s}: %w", i, propFmtRes(&r.res[i]), err)
		}
	}
	for i := range batch {
		b := &batch[i]
		if (b.Kind != KindBoundary && b.Kind != KindSessionEnd) || b.Verdict != VerdictResolved {
			continue
		}
		if !slices.ContainsFunc(r.res[from:], func(res Resolution) bool { return r.closes(b, &res) }) {
			return fmt.Errorf("ref %d %s resolved, but closed nothing", b.Ref, propFmtEvent(b))
		}
	}
	if len(r.openUse) != s.Pending {
		return fmt.Errorf("stats say %d pending, %d uses are pending by their verdicts and outcomes", s.Pending, len(r.openUse))
	}
	// Results held: one waiting result per key, and the records of further sources held with
	// it (Stats.HeldReports).
	if len(r.openHeld) != s.Waiting+s.HeldReports {
		return fmt.Errorf("stats say %d waiting and %d held reports, %d results are held and not released", s.Waiting, s.HeldReports, len(r.openHeld))
	}
	keys := make(map[Key]struct{}, len(r.openUse)+len(r.openHeld))
	for _, k := range r.openUse {
		if _, dup := keys[k]; dup {
			return fmt.Errorf("two pending uses of key %v", k)
		}
		keys[k] = struct{}{}
	}
	waiting := map[Key]struct{}{}
	for _, k := range r.openHeld {
		if _, dup := keys[k]; dup {
			return fmt.Errorf("key %v both pending and waiting", k)
		}
		waiting[k] = struct{}{}
	}
	if len(waiting) != s.Waiting {
		return fmt.Errorf("stats say %d waiting, results are held under %d keys", s.Waiting, len(waiting))
	}
	return nil
}

func (r *propRun) checkVerdict(ev *Event) error {
	ok := false
	v := ev.Verdict
	switch {
	case ev.Kind == KindBoundary || ev.Kind == KindSessionEnd: // the call ID does not matter
		ok = v == VerdictResolved || v == VerdictIgnored
	case ev.Key.CallID == "" || ev.Kind < KindUse || (ev.Kind > KindReject && ev.Kind != KindRefused):
		ok = v == VerdictNone
	case ev.Kind == KindUse:
		ok = v == VerdictPending || v == VerdictRepeated || v == VerdictResolved
	case ev.Kind == KindResult:
		ok = v == VerdictResolved || (v == VerdictHeld && !r.sc.holdNil && !r.sc.refuse[ev.Ref])
	case ev.Kind == KindEcho:
		ok = v == VerdictResolved || v == VerdictIgnored
	case ev.Kind == KindReject:
		ok = v == VerdictResolved || v == VerdictRepeated
	case ev.Kind == KindRefused:
		ok = v == VerdictResolved
	}
	if !ok {
		return fmt.Errorf("unexpected verdict %s", propVerdictName(v))
	}
	if v == VerdictHeld && r.heldOf[ev.Ref] == -1 {
		return fmt.Errorf("held without a hold call")
	}
	if v != VerdictHeld && r.heldOf[ev.Ref] != -1 {
		return fmt.Errorf("hold called but verdict %s", propVerdictName(v))
	}
	return nil
}

func (r *propRun) event(ref int32) (*Event, error) {
	if ref < 0 || int(ref) >= len(r.sc.events) {
		return nil, fmt.Errorf("unknown ref %d", ref)
	}
	return &r.sc.events[ref], nil
}

// resultEvent checks that res names, as ResultRef, a result of its key and time.
func (r *propRun) resultEvent(res *Resolution) error {
	ev, err := r.event(res.ResultRef)
	if err != nil {
		return err
	}
	// A refusal's record is a result record when its call was already resolved: a duplicate.
	isResult := ev.Kind == KindResult || (ev.Kind == KindRefused && res.Outcome == OutcomeDuplicate)
	if !isResult || ev.Key != res.Key || ev.Time != res.ResultTime {
		return fmt.Errorf("ResultRef %d is %s", res.ResultRef, propFmtEvent(ev))
	}
	if res.ResultPayload != nil {
		return fmt.Errorf("both a ResultRef and a ResultPayload")
	}
	r.refCount[res.ResultRef]++
	return nil
}

// release accounts for the held result res releases.
func (r *propRun) release(res *Resolution) error {
	h, ok := res.ResultPayload.(heldTok)
	if !ok || h < 0 || int(h) >= len(r.heldRef) {
		return fmt.Errorf("ResultPayload %v is not a held token", res.ResultPayload)
	}
	r.released[h]++
	if r.released[h] > 1 {
		return fmt.Errorf("held token %d (ref %d) released twice", h, r.heldRef[h])
	}
	delete(r.openHeld, h)
	ev := &r.sc.events[r.heldRef[h]]
	if ev.Key != res.Key || ev.Time != res.ResultTime {
		return fmt.Errorf("releases held token %d of %s", h, propFmtEvent(ev))
	}
	if res.ResultRef != -1 {
		return fmt.Errorf("both a ResultRef and a ResultPayload")
	}
	return nil
}

// closes reports whether the step boundary or session end b may have closed the call of res:
// an interruption with b's reason, in b's scope, ending at b's time, of a use announced at or
// before that time, whose Step the closing's Step closes (propCloses).
func (r *propRun) closes(b *Event, res *Resolution) bool {
	reason := ReasonSessionEnd
	if b.Kind == KindBoundary {
		reason = ReasonNextStep
	}
	if res.Outcome != OutcomeInterrupted || res.Reason != reason || res.Key.ConversationKey() != b.Key.ConversationKey() ||
		res.EndTime != b.Time || res.UseTime > b.Time {
		return false
	}
	u, ok := res.UsePayload.(useTok)
	if !ok || u < 0 || int(u) >= len(r.sc.events) {
		return false
	}
	return propCloses(reason == ReasonNextStep, b.Step, r.sc.events[u].Step)
}

// lastSign reports whether the end of a call interrupted for want of its result (expired,
// evicted, shutdown) is in record time, as specification section 3 says: its use time, or the time
// of a later event of its scope handed over so far, no later than the latest of them.
func (r *propRun) lastSign(res *Resolution) bool {
	if res.EndTime == res.UseTime {
		return true
	}
	if res.EndTime < res.UseTime {
		return false
	}
	found, latest := false, int64(0)
	for i := range r.sc.events[:r.seen] {
		ev := &r.sc.events[i]
		if ev.Key.ConversationKey() != res.Key.ConversationKey() {
			continue
		}
		latest = max(latest, ev.Time)
		found = found || ev.Time == res.EndTime
	}
	return found && res.EndTime <= latest
}

// account checks the shape of one resolution and records what it resolves.
func (r *propRun) account(res *Resolution, kind propOpKind, batch []Event, now int64) error {
	if res.Key.CallID == "" {
		return fmt.Errorf("outcome for an empty call ID")
	}
	if (res.Reason != ReasonNone) != (res.Outcome == OutcomeInterrupted) {
		return fmt.Errorf("reason %q with outcome %q", res.Reason, res.Outcome)
	}
	if res.SameSource && res.Outcome != OutcomeDuplicate {
		return fmt.Errorf("SameSource set on a %s outcome", res.Outcome)
	}
	if res.Outcome == OutcomeRejected && res.ResultRef != -1 {
		return r.refusal(res)
	}
	if res.Report {
		return r.report(res)
	}
	var ue *Event
	u := useTok(-1)
	switch res.Outcome {
	case OutcomePaired, OutcomeInterrupted, OutcomeRejected:
		var ok bool
		if u, ok = res.UsePayload.(useTok); !ok {
			return fmt.Errorf("use-side outcome whose UsePayload %v is not a use's", res.UsePayload)
		}
		var err error
		if ue, err = r.event(int32(u)); err != nil {
			return err
		}
		// The call starts at the earliest time its records show: never after its use.
		if ue.Key != res.Key || (res.UseTime > ue.Time && ue.Time != 0) {
			return fmt.Errorf("UsePayload is that of %s, UseTime %d", propFmtEvent(ue), res.UseTime)
		}
		r.useCount[u]++
		if r.useCount[u] > 1 {
			return fmt.Errorf("a second use-side outcome for ref %d", u)
		}
		if _, open := r.openUse[u]; open {
			delete(r.openUse, u)
		} else if r.verdicts[u] != VerdictResolved || res.UseRef != int32(u) {
			// Only an event resolved in this same call may be closed without being pending.
			return fmt.Errorf("use-side outcome for ref %d (verdict %s), which is not pending", u, propVerdictName(r.verdicts[u]))
		}
	default:
		if res.UsePayload != nil || res.UseRef != -1 {
			return fmt.Errorf("result-side outcome with a use")
		}
	}
	switch res.Outcome {
	case OutcomePaired:
		if ue.Kind != KindUse {
			return fmt.Errorf("paired with the payload of %s", propFmtEvent(ue))
		}
		switch {
		case res.ResultRef != -1:
			if res.UseRef != -1 {
				return fmt.Errorf("paired with both refs: the use should have been pending")
			}
			if ev, err := r.event(res.ResultRef); err == nil && ev.Kind == KindEcho {
				// An echo that resolved its call names its record, which carries the outcome.
				if ev.Key != res.Key || ev.Time != res.ResultTime || res.ResultPayload != nil {
					return fmt.Errorf("paired by echo ref %d: %s", res.ResultRef, propFmtEvent(ev))
				}
				r.echoPaired++
				return nil
			}
			return r.resultEvent(res)
		case res.ResultPayload != nil:
			if res.UseRef != int32(u) {
				return fmt.Errorf("paired with a held result but UseRef %d", res.UseRef)
			}
			return r.release(res)
		default:
			return fmt.Errorf("paired with neither a result record nor a held one")
		}
	case OutcomeInterrupted:
		if ue.Kind != KindUse {
			return fmt.Errorf("interrupted with the payload of %s", propFmtEvent(ue))
		}
		if res.UseRef != -1 || res.ResultRef != -1 || res.ResultPayload != nil {
			return fmt.Errorf("interrupted with refs or a result")
		}
		switch {
		case res.Reason == ReasonNextStep || res.Reason == ReasonSessionEnd:
			// Closed by a boundary or session end of this batch.
			if !slices.ContainsFunc(batch, func(b Event) bool { return r.closes(&b, res) }) {
				return fmt.Errorf("no step boundary or session end of the batch closes it")
			}
		case !r.lastSign(res):
			return fmt.Errorf("EndTime %d (clock %d) is not the use time %d nor a later record time of the scope", res.EndTime, now, res.UseTime)
		default:
			want := map[propOpKind]Reason{propProcess: ReasonEvicted, propTick: ReasonExpired, propShutdown: ReasonShutdown}[kind]
			if res.Reason != want {
				return fmt.Errorf("reason %q during %s", res.Reason, propOpName(kind))
			}
		}
	case OutcomeRejected:
		rej, err := r.event(res.UseRef)
		if err != nil {
			return err
		}
		if rej.Kind != KindReject || rej.Key != res.Key {
			return fmt.Errorf("rejected by %s", propFmtEvent(rej))
		}
		r.rejCount[res.UseRef]++
		if int32(u) != res.UseRef && ue.Kind != KindUse {
			return fmt.Errorf("rejected with the payload of %s", propFmtEvent(ue))
		}
		if res.ResultRef != -1 || res.ResultPayload != nil {
			return fmt.Errorf("rejected with a result")
		}
	case OutcomeOrphan, OutcomeStandalone:
		if res.ResultRef != -1 {
			if err := r.resultEvent(res); err != nil {
				return err
			}
			if !r.sc.holdNil && !r.sc.refuse[res.ResultRef] {
				return fmt.Errorf("an unmatched result settled at once although it could be held")
			}
			return nil
		}
		return r.release(res)
	case OutcomeDuplicate:
		if res.ResultRef == -1 && res.ResultPayload != nil {
			// A held result released as a duplicate: its call was rejected while it waited.
			if res.SameSource {
				return fmt.Errorf("a released duplicate with SameSource")
			}
			return r.release(res)
		}
		return r.resultEvent(res)
	default:
		return fmt.Errorf("unknown outcome %d", res.Outcome)
	}
	return nil
}

// report accounts for a further report: a result record (or a held one, or an echo) of a
// source that had not reported its call, with its own outcome and no use.
func (r *propRun) report(res *Resolution) error {
	r.reports++
	if res.UsePayload != nil || res.UseRef != -1 {
		return fmt.Errorf("a further report with a use")
	}
	switch res.Outcome {
	case OutcomePaired, OutcomeOrphan, OutcomeStandalone:
	default:
		return fmt.Errorf("a further report with outcome %s", res.Outcome)
	}
	if res.ResultPayload != nil {
		if err := r.release(res); err != nil {
			return err
		}
		r.reportRef[r.heldRef[res.ResultPayload.(heldTok)]] = true
		return nil
	}
	ev, err := r.event(res.ResultRef)
	if err != nil {
		return err
	}
	r.reportRef[res.ResultRef] = true
	if ev.Kind == KindEcho {
		if ev.Key != res.Key || ev.Time != res.ResultTime || res.Outcome != OutcomePaired {
			return fmt.Errorf("reported by echo ref %d: %s", res.ResultRef, propFmtEvent(ev))
		}
		r.echoReports++
		return nil
	}
	return r.resultEvent(res)
}

// refusal accounts for a call rejected on a refusal's record (KindRefused): it names the
// record as ResultRef, and carries the use's payload when the use was pending, else none (the
// call's use is then seen through the refusal).
func (r *propRun) refusal(res *Resolution) error {
	ev, err := r.event(res.ResultRef)
	if err != nil {
		return err
	}
	if ev.Kind != KindRefused || ev.Key != res.Key {
		return fmt.Errorf("rejected on the record of %s", propFmtEvent(ev))
	}
	if res.UseRef != -1 || res.ResultPayload != nil {
		return fmt.Errorf("a refusal with a use ref or a held result")
	}
	r.rejCount[res.ResultRef]++
	if res.UsePayload == nil {
		r.refusedFirst[res.ResultRef] = true
		return nil
	}
	u, ok := res.UsePayload.(useTok)
	if !ok {
		return fmt.Errorf("refusal whose UsePayload %v is not a use's", res.UsePayload)
	}
	ue, err := r.event(int32(u))
	if err != nil {
		return err
	}
	if ue.Kind != KindUse || ue.Key != res.Key {
		return fmt.Errorf("refusal with the payload of %s", propFmtEvent(ue))
	}
	r.useCount[u]++
	if r.useCount[u] > 1 {
		return fmt.Errorf("a second use-side outcome for ref %d", u)
	}
	if _, open := r.openUse[u]; !open {
		return fmt.Errorf("refused the use of ref %d, which is not pending", u)
	}
	delete(r.openUse, u)
	return nil
}

// final checks, after Shutdown, that every event had exactly the outcomes its verdict
// promises and that the counters agree with the outcomes.
func (r *propRun) final() error {
	s := r.e.Stats()
	if s.Pending != 0 || s.Waiting != 0 {
		return fmt.Errorf("after Shutdown: pending %d, waiting %d", s.Pending, s.Waiting)
	}
	var usesSeen, repeated, resultsSeen, echoesIgnored, echoesResolved uint64
	acceptedPerKey := map[Key]int{}
	for i := range r.sc.events {
		ev := &r.sc.events[i]
		v := r.verdicts[i]
		bad := func(what string) error {
			return fmt.Errorf("ref %d %s (verdict %s): %s", i, propFmtEvent(ev), propVerdictName(v), what)
		}
		if v == VerdictNone {
			if r.useCount[i] != 0 || r.refCount[i] != 0 || r.rejCount[i] != 0 {
				return bad("an outcome for an event that was not processed")
			}
			continue
		}
		switch ev.Kind {
		case KindUse:
			switch {
			case v == VerdictRepeated && r.useCount[i] != 0:
				return bad("a repeated use has an outcome")
			case v != VerdictRepeated && r.useCount[i] != 1:
				return bad(fmt.Sprintf("an accepted use has %d use-side outcomes", r.useCount[i]))
			case v == VerdictRepeated:
				repeated++
			default:
				usesSeen++
				acceptedPerKey[ev.Key]++
			}
		case KindReject:
			switch {
			case v == VerdictRepeated && (r.rejCount[i] != 0 || r.useCount[i] != 0):
				return bad("a repeated reject has an outcome")
			case v == VerdictRepeated:
				repeated++
			case r.rejCount[i] != 1:
				return bad(fmt.Sprintf("%d rejected outcomes", r.rejCount[i]))
			case r.useCount[i] == 1: // a reject of a call not announced before
				usesSeen++
				acceptedPerKey[ev.Key]++
			}
		case KindResult:
			if !r.reportRef[i] {
				resultsSeen++
			}
			if v == VerdictHeld {
				if r.refCount[i] != 0 || r.released[r.heldOf[i]] != 1 {
					return bad(fmt.Sprintf("held result with %d ref outcomes, released %d times", r.refCount[i], r.released[r.heldOf[i]]))
				}
			} else if r.refCount[i] != 1 {
				return bad(fmt.Sprintf("%d result-side outcomes", r.refCount[i]))
			}
		case KindEcho:
			if v == VerdictResolved && !r.reportRef[i] {
				resultsSeen++
				echoesResolved++
			} else if v != VerdictResolved {
				echoesIgnored++
			}
		case KindRefused:
			switch {
			case r.rejCount[i] == 1 && r.refCount[i] == 0: // the call's refusal, on the use side
				if r.refusedFirst[i] {
					usesSeen++
					acceptedPerKey[ev.Key]++
				}
			case r.rejCount[i] == 0 && r.refCount[i] == 1: // its call was resolved: a duplicate
				resultsSeen++
			default:
				return bad(fmt.Sprintf("%d rejected and %d result-side outcomes", r.rejCount[i], r.refCount[i]))
			}
		}
	}
	for h, n := range r.released {
		if n != 1 {
			return fmt.Errorf("held token %d (ref %d) released %d times", h, r.heldRef[h], n)
		}
	}
	if echoesResolved != uint64(r.echoPaired) {
		return fmt.Errorf("%d echoes resolved a call, %d outcomes paired by an echo", echoesResolved, r.echoPaired)
	}
	// Per key: as many use-side outcomes as uses accepted as new (one, unless the resolved
	// call was forgotten and announced again).
	outcomesPerKey := map[Key]int{}
	var count [OutcomeStandalone + 1]uint64
	var reasons [numReasons]uint64
	for i := range r.res {
		res := &r.res[i]
		if res.Report {
			continue
		}
		count[res.Outcome]++
		reasons[res.Reason]++
		switch res.Outcome {
		case OutcomePaired, OutcomeInterrupted, OutcomeRejected:
			outcomesPerKey[res.Key]++
		}
	}
	if !maps.Equal(acceptedPerKey, outcomesPerKey) {
		return fmt.Errorf("uses accepted per key %v, use-side outcomes per key %v", acceptedPerKey, outcomesPerKey)
	}
	type pair struct {
		what      string
		got, want uint64
	}
	for _, c := range []pair{
		{"UsesSeen", s.UsesSeen, usesSeen},
		{"UsesRepeated", s.UsesRepeated, repeated},
		{"ResultsSeen", s.ResultsSeen, resultsSeen},
		{"EchoesIgnored", s.EchoesIgnored, echoesIgnored},
		{"Paired", s.Paired, count[OutcomePaired]},
		{"Rejected", s.Rejected, count[OutcomeRejected]},
		{"Orphan", s.Orphan, count[OutcomeOrphan]},
		{"Duplicate", s.Duplicate, count[OutcomeDuplicate]},
		{"Standalone", s.Standalone, count[OutcomeStandalone]},
		{"Interrupted", s.InterruptedTotal(), count[OutcomeInterrupted]},
		{"Reports", s.Reports, r.reports},
	} {
		if c.got != c.want {
			return fmt.Errorf("stats %s = %d, the events and outcomes say %d", c.what, c.got, c.want)
		}
	}
	for _, reason := range Reasons() {
		if s.Interrupted[reason] != reasons[reason] {
			return fmt.Errorf("stats Interrupted[%s] = %d, outcomes %d", reason, s.Interrupted[reason], reasons[reason])
		}
	}
	return nil
}

// propOutcome is what the reference model predicts, counted per key.
type propOutcome struct {
	Key        Key
	Outcome    Outcome
	Reason     Reason
	SameSource bool
	Report     bool
	End        int64 // EndTime, for next_step and session_end only
}

type propModelState uint8

const (
	propNone propModelState = iota
	propPending
	propWaiting
	propResolved
)

// propModel is the reference model of the outcome rules (specification section 2 and the doc
// comments of Kind, Verdict and Resolution.SameSource) for model scenarios, where nothing
// expires, is evicted or is forgotten before the end. It returns each event's verdict and
// the outcomes per key.
func propModel(sc *propScenario) ([]Verdict, map[propOutcome]int) {
	state := map[Key]propModelState{}
	// source is the Source of the result that settled the call's result side (paired,
	// orphan, standalone) or is held; 0 when the call was resolved without a result.
	source := map[Key]uint8{}
	usesSeen := map[ConversationKey]bool{} // a use or reject was seen in the scope
	rejected := map[Key]bool{}             // resolved by a reject
	useTime := map[Key]int64{}             // of pending calls
	useStep := map[Key]string{}            // of pending calls
	// answered is the outcome of the report that resolved a call (paired, orphan, standalone);
	// reporters the sources that reported it; heldReports the records of further sources held
	// with a waiting result (specification section 2: each source's first record of a call gets
	// its own outcome).
	answered := map[Key]Outcome{}
	reporters := map[Key]map[uint8]bool{}
	heldReports := map[Key]int{}
	reportBy := func(k Key, src uint8) bool {
		if reporters[k] == nil {
			reporters[k] = map[uint8]bool{}
		}
		if reporters[k][src] {
			return false
		}
		reporters[k][src] = true
		return true
	}
	out := map[propOutcome]int{}
	verdicts := make([]Verdict, len(sc.events))
	unmatched := func(k Key) Outcome {
		if usesSeen[k.ConversationKey()] {
			return OutcomeOrphan
		}
		return OutcomeStandalone
	}
	for i, ev := range sc.events { // events are numbered in processing order
		k := ev.Key
		if ev.Kind == KindBoundary || ev.Kind == KindSessionEnd {
			// Closes the scope's pending calls announced at or before its time (for a
			// boundary: by another step, never by none), ending them at its time.
			reason := ReasonSessionEnd
			if ev.Kind == KindBoundary {
				reason = ReasonNextStep
			}
			verdicts[i] = VerdictIgnored
			for pk, st := range state {
				if st != propPending || pk.ConversationKey() != k.ConversationKey() || useTime[pk] > ev.Time {
					continue
				}
				if !propCloses(reason == ReasonNextStep, ev.Step, useStep[pk]) {
					continue
				}
				state[pk] = propResolved
				out[propOutcome{Key: pk, Outcome: OutcomeInterrupted, Reason: reason, End: ev.Time}]++
				verdicts[i] = VerdictResolved
			}
			continue
		}
		if k.CallID == "" {
			verdicts[i] = VerdictNone
			continue
		}
		var v Verdict
		switch ev.Kind {
		case KindUse:
			usesSeen[k.ConversationKey()] = true
			switch state[k] {
			case propNone:
				v, state[k] = VerdictPending, propPending
				useTime[k], useStep[k] = ev.Time, ev.Step
			case propWaiting: // the held result pairs with its use, and so do those held with it
				v, state[k], answered[k] = VerdictResolved, propResolved, OutcomePaired
				out[propOutcome{Key: k, Outcome: OutcomePaired}]++
				if n := heldReports[k]; n > 0 {
					out[propOutcome{Key: k, Outcome: OutcomePaired, Report: true}] += n
					delete(heldReports, k)
				}
			default: // pending or resolved: not a new call
				v = VerdictRepeated
				if state[k] == propPending {
					useTime[k] = earliest(useTime[k], ev.Time) // the call starts at its earliest record
				}
			}
		case KindReject:
			usesSeen[k.ConversationKey()] = true
			switch state[k] {
			case propNone, propPending:
				v, state[k], rejected[k] = VerdictResolved, propResolved, true
				out[propOutcome{Key: k, Outcome: OutcomeRejected}]++
			case propWaiting: // the call is rejected; its held results are kept duplicates, as after it
				v, state[k], rejected[k] = VerdictResolved, propResolved, true
				out[propOutcome{Key: k, Outcome: OutcomeRejected}]++
				out[propOutcome{Key: k, Outcome: OutcomeDuplicate}]++
				if n := heldReports[k]; n > 0 {
					out[propOutcome{Key: k, Outcome: OutcomeDuplicate}] += n
					delete(heldReports, k)
				}
			default:
				v = VerdictRepeated
			}
		case KindResult:
			switch state[k] {
			case propPending:
				v, state[k], source[k], answered[k] = VerdictResolved, propResolved, ev.Source, OutcomePaired
				reportBy(k, ev.Source)
				out[propOutcome{Key: k, Outcome: OutcomePaired}]++
			case propWaiting, propResolved: // a second copy of a waiting result, or a late one
				v = VerdictResolved
				canHold := !sc.holdNil && !sc.refuse[i]
				if state[k] == propWaiting && canHold && reportBy(k, ev.Source) {
					// Another source's record of a held result: held with it.
					v = VerdictHeld
					heldReports[k]++
					break
				}
				if state[k] == propResolved && answered[k] != 0 && reportBy(k, ev.Source) {
					// The first record of its source for an answered call: its own outcome.
					out[propOutcome{Key: k, Outcome: answered[k], Report: true}]++
					break
				}
				same := source[k] == 0 || reporters[k][ev.Source]
				if rejected[k] && source[k] == 0 { // the first result of a refused call: kept
					same, source[k] = false, ev.Source
					reportBy(k, ev.Source)
				}
				out[propOutcome{Key: k, Outcome: OutcomeDuplicate, SameSource: same}]++
			default:
				source[k] = ev.Source
				reportBy(k, ev.Source)
				if sc.holdNil || sc.refuse[i] { // cannot wait: settled at once
					v, state[k], answered[k] = VerdictResolved, propResolved, unmatched(k)
					out[propOutcome{Key: k, Outcome: unmatched(k)}]++
				} else {
					v, state[k] = VerdictHeld, propWaiting
				}
			}
		case KindEcho: // resolves a pending call, reports a paired one once, else ignored
			if state[k] == propPending {
				v, state[k], source[k], answered[k] = VerdictResolved, propResolved, ev.Source, OutcomePaired
				reportBy(k, ev.Source)
				out[propOutcome{Key: k, Outcome: OutcomePaired}]++
			} else if state[k] == propResolved && answered[k] == OutcomePaired && reportBy(k, ev.Source) {
				v = VerdictResolved
				out[propOutcome{Key: k, Outcome: OutcomePaired, Report: true}]++
			} else {
				v = VerdictIgnored
			}
		default:
			v = VerdictNone
		}
		verdicts[i] = v
	}
	for k, st := range state {
		switch st {
		case propPending:
			reason := ReasonShutdown
			if sc.endMode == propEndTimeout {
				reason = ReasonExpired
			}
			out[propOutcome{Key: k, Outcome: OutcomeInterrupted, Reason: reason}]++
		case propWaiting: // released by the final Tick or by Shutdown, with those held with it
			out[propOutcome{Key: k, Outcome: unmatched(k)}]++
			if n := heldReports[k]; n > 0 {
				out[propOutcome{Key: k, Outcome: unmatched(k), Report: true}] += n
			}
		}
	}
	return verdicts, out
}

func propCompareModel(sc *propScenario, r *propRun) error {
	verdicts, want := propModel(sc)
	for i := range verdicts {
		if verdicts[i] != r.verdicts[i] {
			return fmt.Errorf("model: ref %d %s: verdict %s, model says %s",
				i, propFmtEvent(&sc.events[i]), propVerdictName(r.verdicts[i]), propVerdictName(verdicts[i]))
		}
	}
	got := map[propOutcome]int{}
	for i := range r.res {
		res := &r.res[i]
		o := propOutcome{Key: res.Key, Outcome: res.Outcome, Reason: res.Reason, SameSource: res.SameSource, Report: res.Report}
		if o.Reason == ReasonNextStep || o.Reason == ReasonSessionEnd {
			o.End = res.EndTime
		}
		got[o]++
	}
	if maps.Equal(got, want) {
		return nil
	}
	var diff []string
	for o := range maps.Keys(want) {
		if got[o] != want[o] {
			diff = append(diff, fmt.Sprintf("%s: engine %d, model %d", propFmtOutcome(o), got[o], want[o]))
		}
	}
	for o := range maps.Keys(got) {
		if _, ok := want[o]; !ok {
			diff = append(diff, fmt.Sprintf("%s: engine %d, model 0", propFmtOutcome(o), got[o]))
		}
	}
	sort.Strings(diff)
	return fmt.Errorf("model: outcomes differ:\n\t%s", strings.Join(diff, "\n\t"))
}

// propForEachSeed runs gen's scenarios (or only -pairing.seed) through the executor and check.
func propForEachSeed(t *testing.T, gen func(uint64) *propScenario, check func(*propScenario, *propRun) error) {
	seeds := []uint64{*pairingSeed}
	if *pairingSeed == 0 {
		seeds = make([]uint64, propScenarios())
		for i := range seeds {
			seeds[i] = propBaseSeed + uint64(i)
		}
	}
	for _, seed := range seeds {
		sc := gen(seed)
		r, err := propExecute(sc)
		if err == nil && check != nil {
			err = check(sc, r)
		}
		if err != nil {
			require.NoErrorf(t, err, "seed %d; rerun alone with: go test -run '^%s$' <this package> -pairing.seed=%d\n%s", seed, t.Name(), seed, sc)
		}
	}
}

// TestPropertyConservation runs general random scenarios: conservation after every call,
// one outcome per accepted use and per result, every held record released exactly once,
// nothing pending or waiting after Shutdown, counters that agree with the outcomes.
func TestPropertyConservation(t *testing.T) {
	propForEachSeed(t, propGenerate, nil)
}

// TestPropertyReferenceModel runs simple scenarios through the engine and the reference
// model and compares every verdict and the outcomes per key.
func TestPropertyReferenceModel(t *testing.T) {
	propForEachSeed(t, propGenerateModel, propCompareModel)
}

// propHashMask is the engine's hashMask in property runs.
var propHashMask = ^uint64(0)

// TestPropertyHashCollisions runs the property tests with the call index's hash narrowed to
// two bits, so that most call keys collide and go through the collision side map, and
// entries leave the index while colliding keys remain.
func TestPropertyHashCollisions(t *testing.T) {
	propHashMask = 3
	defer func() { propHashMask = ^uint64(0) }()
	propForEachSeed(t, propGenerate, nil)
	propForEachSeed(t, propGenerateModel, propCompareModel)
}

// TestPropertyModelScenariosAreSimple guards the model's premises: its scenarios never evict
// and never reach a deadline before the end.
func TestPropertyModelScenariosAreSimple(t *testing.T) {
	for i := range 1000 {
		sc := propGenerateModel(propBaseSeed + uint64(i))
		var advanced time.Duration
		for _, op := range sc.ops[:len(sc.ops)-2*min(sc.endMode, 1)] {
			advanced += op.advance
		}
		require.Less(t, advanced, sc.cfg.OrphanGrace, "seed %d", sc.seed)
		require.Less(t, 3*sc.cfg.OrphanGrace, sc.cfg.PairingTimeout, "seed %d", sc.seed)
		require.Less(t, len(sc.events), sc.cfg.MaxPending, "seed %d", sc.seed)
	}
}

func (sc *propScenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scenario: PairingTimeout=%v OrphanGrace=%v MaxPending=%d MaxResolved=%d ResolvedRetention=%v holdNil=%v\n",
		sc.cfg.PairingTimeout, sc.cfg.OrphanGrace, sc.cfg.MaxPending, sc.cfg.MaxResolved, sc.cfg.ResolvedRetention, sc.holdNil)
	for _, op := range sc.ops {
		switch op.kind {
		case propProcess:
			b.WriteString("  Process:\n")
			for i := range op.events {
				ev := &op.events[i]
				refused := ""
				if sc.refuse[ev.Ref] {
					refused = " (hold returns nil)"
				}
				fmt.Fprintf(&b, "    ref %d %s%s\n", ev.Ref, propFmtEvent(ev), refused)
			}
		case propAdvance:
			fmt.Fprintf(&b, "  advance %v\n", op.advance)
		default:
			fmt.Fprintf(&b, "  %s\n", propOpName(op.kind))
		}
	}
	b.WriteString("  Shutdown\n")
	return b.String()
}

func propFmtEvent(ev *Event) string {
	return fmt.Sprintf("%s %s/%s/%s t=%dms src=%d step=%q", propKindName(ev.Kind), ev.Key.Tenant, ev.Key.Conversation, ev.Key.CallID,
		ev.Time/int64(time.Millisecond), ev.Source, ev.Step)
}

func propFmtRes(r *Resolution) string {
	return fmt.Sprintf("%s/%s %s/%s/%s useRef=%d resultRef=%d use=%v held=%v same=%v",
		r.Outcome, r.Reason, r.Key.Tenant, r.Key.Conversation, r.Key.CallID, r.UseRef, r.ResultRef, r.UsePayload, r.ResultPayload, r.SameSource)
}

func propFmtOutcome(o propOutcome) string {
	return fmt.Sprintf("%s/%s/%s %s/%s same=%v report=%v end=%dms", o.Key.Tenant, o.Key.Conversation, o.Key.CallID, o.Outcome, o.Reason, o.SameSource,
		o.Report, o.End/int64(time.Millisecond))
}

func propKindName(k Kind) string {
	switch k {
	case KindUse:
		return "use"
	case KindResult:
		return "result"
	case KindEcho:
		return "echo"
	case KindReject:
		return "reject"
	case KindRefused:
		return "refused"
	case KindBoundary:
		return "boundary"
	case KindSessionEnd:
		return "session_end"
	}
	return fmt.Sprintf("kind(%d)", k)
}

func propVerdictName(v Verdict) string {
	switch v {
	case VerdictNone:
		return "none"
	case VerdictPending:
		return "pending"
	case VerdictRepeated:
		return "repeated"
	case VerdictResolved:
		return "resolved"
	case VerdictHeld:
		return "held"
	case VerdictIgnored:
		return "ignored"
	}
	return fmt.Sprintf("verdict(%d)", v)
}

func propOpName(k propOpKind) string {
	switch k {
	case propProcess:
		return "Process"
	case propAdvance:
		return "advance"
	case propTick:
		return "Tick"
	case propShutdown:
		return "Shutdown"
	}
	return "?"
}

// oneByte counts every held record as one byte: the engine's held bytes are then the number
// of records it holds.
func oneByte(any) int64 { return 1 }
