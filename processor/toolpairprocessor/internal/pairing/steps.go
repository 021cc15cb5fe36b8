// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package pairing

import "strings"

// GroupSep separates the group from the step in a grouped Step (see GroupStep). A NUL byte
// never occurs in the span IDs, trace IDs and message IDs dialects use as groups and steps.
const GroupSep = "\x00"

// GroupStep returns the Step of a use, step boundary or session end that belongs to group:
// the agent (or sub-agent) whose model requests the step is one of, for example the trace ID
// or the parent agent span of a chat span.
//
// A boundary or session end with a grouped Step closes only the pending calls whose Step is
// in the same group: a nested agent (an agent run as a tool, a sub-agent sharing its
// parent's session ID) has steps of its own, and they must not interrupt the call of the
// outer agent that is waiting for the nested one. A boundary or session end with an
// ungrouped Step keeps the ungrouped rule (see KindBoundary and KindSessionEnd): a boundary
// closes the calls of every other non-empty step of its scope, a session end every call of
// its scope. Use GroupStep(group, "") as the Step of a grouped session end.
func GroupStep(group, step string) string {
	return group + GroupSep + step
}

// stepGroup returns the group of a Step made by GroupStep, and whether it is grouped.
func stepGroup(step string) (string, bool) {
	i := strings.Index(step, GroupSep)
	if i < 0 {
		return "", false
	}
	return step[:i], true
}

// closesStep reports whether a step boundary (boundary true) or session end whose Step is
// closing closes a pending call announced with Step use; the scope and times are checked by
// the caller.
func closesStep(boundary bool, closing, use string) bool {
	if g, ok := stepGroup(closing); ok {
		ug, uok := stepGroup(use)
		if !uok || ug != g {
			return false
		}
		return !boundary || use != closing
	}
	if boundary {
		return use != "" && use != closing
	}
	return true
}
