// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// activity_inflight.go answers "what was in flight in a scope at instant T" for timeout
// classification (specification section 4), from the entries the engine pairs with and the
// scope's activity: there is no second record of the calls.

package pairing

// ActiveCall is a tool call in flight.
type ActiveCall struct {
	CallID, Tool string
	// Start is the call's start (Unix ns): the earliest time any of its records showed.
	Start int64
}

// InFlight is what was in flight in a scope at an instant.
type InFlight struct {
	// Tools is the number of distinct tool calls in flight.
	Tools int
	// Latest is the most recently started call in flight (when Tools > 0); of calls started
	// at the same instant, the one with the greatest call ID, so that the answer does not
	// depend on arrival order.
	Latest ActiveCall
	// Model and Compaction report whether a model call or a compaction was in flight.
	Model, Compaction bool
}

// InFlightAt returns what was in flight in scope k at time at (Unix ns, record time):
//
//   - a tool call the engine holds (pending, its result held, or resolved and still
//     remembered) that started at or before at and did not end by then. A call ends at its
//     result's time (a held companion's, when only that came), its refusal's, or where its
//     interruption ended it; a pending call has not ended. A call with no known start, no
//     call ID, or resolved at an unknown time (a restore that replayed its resolution) is
//     never in flight;
//   - a model call or compaction that started at or before at and ended no earlier than
//     Config.Linger before it: a timed-out model call's error reaches the turn that waits on
//     it a few milliseconds after the call's record ends.
func (e *Engine) InFlightAt(k ConversationKey, at int64) InFlight {
	e.mu.Lock()
	defer e.mu.Unlock()
	var f InFlight
	sc := e.conversations[k]
	if sc == nil {
		return f
	}
	for ent := sc.entries; ent != nil; ent = ent.snext {
		f.count(ent, at)
	}
	for p := sc.resolvedFirst; p != 0; {
		rc := e.resolved.at(p - 1)
		if rc.ext != nil {
			f.count(rc.ext, at)
		} else {
			v := rc.view()
			f.count(&v, at)
		}
		p = rc.next
	}
	if sc.act != nil {
		settle := int64(e.cfg.Linger)
		for _, iv := range sc.act.intervals {
			if iv.start <= at && at <= iv.end+settle {
				f.Model = f.Model || iv.kind == ActivityModel
				f.Compaction = f.Compaction || iv.kind == ActivityCompaction
			}
		}
	}
	return f
}

// count counts the call of ent among the tool calls in flight at at when it was.
func (f *InFlight) count(ent *entry, at int64) {
	if ent.callID == "" || ent.useTime <= 0 || ent.useTime > at {
		return
	}
	if end, ended := ent.end(); ended && end <= at {
		return
	}
	f.Tools++
	if f.Tools == 1 || ent.useTime > f.Latest.Start || (ent.useTime == f.Latest.Start && ent.callID > f.Latest.CallID) {
		f.Latest = ActiveCall{CallID: ent.callID, Tool: ent.tool(), Start: ent.useTime}
	}
}

// end returns where the entry's call ended (Unix ns, record time), and whether it ended: a
// pending call has not; a resolved call with no end time ended at an unknown time, before
// anything InFlightAt is asked about.
func (ent *entry) end() (int64, bool) {
	switch ent.state {
	case statePending:
		return 0, false
	case stateResolved:
		if ent.resultTime == 0 {
			return 0, true
		}
	}
	return ent.resultTime, true
}
