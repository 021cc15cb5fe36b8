// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// bounds_expiry.go holds what the engine decides without an event: on Tick, pending calls past
// pairing_timeout are interrupted (expired), held results past orphan_grace are released as
// orphan or standalone (a pending call whose companion is held is paired with it) and
// resolved calls of idle scopes are forgotten; at max_pending_calls the oldest pending call
// or held result is settled early (evicted); on Shutdown everything is settled.

package pairing

// makeRoom makes room for one more pending use or waiting result of tenant: while the tenant
// holds MaxPendingPerTenant, its own oldest is evicted; while the engine holds MaxPending, the
// oldest of the tenant holding the most (see bounds_tenants.go).
func (e *Engine) makeRoom(now int64, out []Resolution, tenant string) []Resolution {
	if max := e.cfg.MaxPendingPerTenant; max > 0 {
		if t := e.loads[tenant]; t != nil {
			for t.n >= max {
				out = e.evict(e.oldestOf(t), now, out)
			}
		}
	}
	for e.pending.n+e.waiting.n >= e.cfg.MaxPending {
		out = e.evict(e.oldestOf(e.heaviest()), now, out)
	}
	return out
}

// evict settles ent early: a pending use is interrupted/evicted, a waiting result released as
// orphan or standalone. A nil ent (no entry found, which the counts rule out) evicts the
// engine's oldest.
func (e *Engine) evict(ent *entry, now int64, out []Resolution) []Resolution {
	if ent == nil {
		p, w := e.pending.head, e.waiting.head
		if w == nil || (p != nil && p.seq < w.seq) {
			ent = p
		} else {
			ent = w
		}
	}
	if ent.state == statePending {
		return e.interruptPending(ent, ReasonEvicted, now, ent.lastSign(), out)
	}
	return e.releaseWaiting(ent, now, out)
}

// lastSign is where a pending call interrupted for want of its result (expired, evicted,
// shutdown) ends, in record time (Unix ns): the latest record time seen in its scope, when it
// is at or after the call's use time, else the use time (specification section 3). Never the
// engine's clock: a replayed or late capture must not yield a call days long.
func (ent *entry) lastSign() int64 {
	return max(ent.useTime, ent.scope.lastRecord)
}

// interruptPending closes a pending use as interrupted, ending at end (Unix ns); now is the
// engine clock.
func (e *Engine) interruptPending(ent *entry, reason Reason, now, end int64, out []Resolution) []Resolution {
	e.removePending(ent)
	e.stats.Interrupted[reason]++
	out = append(out, Resolution{
		Outcome:    OutcomeInterrupted,
		Reason:     reason,
		Key:        ent.key(),
		ToolName:   ent.tool(),
		UseTime:    ent.useTime,
		EndTime:    end,
		UseRef:     -1,
		ResultRef:  -1,
		UsePayload: ent.payload,
	})
	ent.resultTime = end // where the call ended, for InFlightAt
	e.toResolved(ent, now)
	return out
}

// releaseWaiting settles a waiting result as orphan or standalone and releases its record;
// a pending call whose companion is held is paired with the companion.
func (e *Engine) releaseWaiting(ent *entry, now int64, out []Resolution) []Resolution {
	if ent.state == statePendingHeld {
		return e.closeWithCompanion(ent, now, out)
	}
	if ent.has(flagMatch) {
		return e.releaseMatched(ent, now, out)
	}
	e.waiting.remove(ent)
	e.stats.Waiting--
	r := Resolution{
		Key:           ent.key(),
		ToolName:      ent.tool(),
		ResultTime:    ent.resultTime,
		UseRef:        -1,
		ResultRef:     -1,
		ResultPayload: ent.payload,
	}
	e.settleUnmatched(&r, e.sawUse(ent.scope), false, ent.has(flagAborted))
	e.firstReport(ent, ent.source, r.Outcome)
	out = append(out, r)
	out = e.releaseReports(ent, false, out)
	e.toResolved(ent, now)
	return out
}

// Tick expires what is due at the clock's now: step boundaries and session ends queued for
// Config.CloseDelay close their scope's pending calls, pending uses past pairing_timeout become
// interrupted/expired, waiting results past orphan_grace become orphan or standalone, and
// resolved calls of idle scopes are forgotten. It appends the outcomes to out and returns it.
func (e *Engine) Tick(out []Resolution) []Resolution {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	from := len(out)
	for !e.closings.empty() && e.closings.front().deadline <= now {
		out = e.applyClosing(now, out)
	}
	for p := e.pending.head; p != nil && p.deadline <= now; p = e.pending.head {
		out = e.interruptPending(p, ReasonExpired, now, p.lastSign(), out)
	}
	for w := e.waiting.head; w != nil && w.deadline <= now; w = e.waiting.head {
		out = e.releaseWaiting(w, now, out)
	}
	retention := int64(e.cfg.ResolvedRetention)
	for e.resolved.n > 0 {
		r := e.resolved.at(e.resolved.oldest())
		if r.deadline > now {
			break
		}
		if active := r.scope.lastSeen + retention; active > now {
			// The scope is still active: an invoke_agent span may yet repeat this call.
			e.requeueOldest(active)
			continue
		}
		e.forgetOldest()
	}
	e.expireActivity(now)
	return e.boundHeld(now, out, from)
}

// Shutdown applies every queued step boundary and session end, then closes every pending use
// left as interrupted/shutdown and releases every waiting result as orphan or standalone,
// appending the outcomes to out. No call is left after; the scopes' activity stays (Anchor
// places the synthetic spans of the calls it interrupted) until Tick expires it.
func (e *Engine) Shutdown(out []Resolution) []Resolution {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.cfg.Clock.Now().UnixNano()
	from := len(out)
	for !e.closings.empty() {
		out = e.applyClosing(now, out)
	}
	e.closings.reset()
	e.closingsQueued = 0
	for p := e.pending.head; p != nil; p = e.pending.head {
		out = e.interruptPending(p, ReasonShutdown, now, p.lastSign(), out)
	}
	for w := e.waiting.head; w != nil; w = e.waiting.head {
		out = e.releaseWaiting(w, now, out)
	}
	for e.resolved.n > 0 {
		e.forgetOldest()
	}
	e.released(out, from)
	return out
}
