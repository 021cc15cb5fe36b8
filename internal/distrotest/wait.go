// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package distrotest

import "time"

// WaitUntil polls cond every 100ms for up to timeout and reports whether it came true, failing
// the test if the process exits first. Unlike WaitFor, running out of time is not a failure:
// the test asserts what it found, so a record that never comes fails with the test's own
// message, in seconds rather than WaitTimeout.
func (p *Process) WaitUntil(timeout time.Duration, cond func() bool) bool {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case err := <-p.exited:
			p.exited <- err
			p.t.Fatalf("%s exited early (%v)", p.name, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return true
}
