// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

// bounds_heldbytes.go keeps the records held for their use within Config.MaxHeldBytes: their bytes
// are counted when the hold callback returns them (callHold) and taken off when a resolution
// releases them; past the bound the oldest waiting result leaves as it would at OrphanGrace.

package pairing

// heldSize returns the bytes of a held record (Config.HeldSize), 0 without a size function.
func (e *Engine) heldSize(held any) int64 {
	if held == nil || e.cfg.HeldSize == nil {
		return 0
	}
	return e.cfg.HeldSize(held)
}

// released takes off the held bytes of the records the resolutions out[from:] release.
func (e *Engine) released(out []Resolution, from int) {
	for i := from; i < len(out); i++ {
		e.heldBytes -= e.heldSize(out[i].ResultPayload)
	}
}

// boundHeld releases the oldest waiting results while the held records' bytes exceed
// Config.MaxHeldBytes, appending their resolutions to out, and takes off the bytes of every
// record out[from:] releases.
func (e *Engine) boundHeld(now int64, out []Resolution, from int) []Resolution {
	e.released(out, from)
	if e.cfg.MaxHeldBytes <= 0 {
		return out
	}
	for e.heldBytes > e.cfg.MaxHeldBytes && e.waiting.head != nil {
		n := len(out)
		out = e.releaseWaiting(e.waiting.head, now, out)
		e.stats.HeldOverBytes++
		e.released(out, n)
	}
	return out
}

// recountHeld sets the held bytes from the records held now (after a restore).
func (e *Engine) recountHeld() { e.heldBytes = e.heldNow() }

// heldNow returns the bytes of the records held now: waiting results, companions and further
// reports.
func (e *Engine) heldNow() int64 {
	var n int64
	for ent := e.waiting.head; ent != nil; ent = ent.next {
		if ent.state == stateWaiting {
			n += e.heldSize(ent.payload)
		}
	}
	for _, c := range e.companions {
		n += e.heldSize(c)
	}
	for _, hs := range e.heldReports {
		for _, h := range hs {
			n += e.heldSize(h.payload)
		}
	}
	return n
}
