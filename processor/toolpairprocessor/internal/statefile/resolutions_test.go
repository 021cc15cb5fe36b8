// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

func testResolutions() []pairing.Resolution {
	k := func(scope, id string) pairing.Key { return pairing.Key{Tenant: "t", Conversation: scope, CallID: id} }
	return []pairing.Resolution{
		{Outcome: pairing.OutcomePaired, Key: k("s1", "a")},
		{Outcome: pairing.OutcomeDuplicate, Key: k("s1", "b")},
		{Outcome: pairing.OutcomeInterrupted, Key: k("s1", "c")},
		{Outcome: pairing.OutcomeOrphan, Key: k("s2", "d")},
		{Outcome: pairing.OutcomeRejected, Key: k("s1", "e\xff")},
	}
}

// TestResolutionsRoundTrip: a batch's resolution record keeps the keys of the calls it
// resolved (not its duplicates) in order, and the held results without a call ID it released;
// nothing is written for a batch without either.
func TestResolutionsRoundTrip(t *testing.T) {
	k := func(scope, id string) pairing.Key { return pairing.Key{Tenant: "t", Conversation: scope, CallID: id} }
	res := testResolutions()
	b, err := EncodeResolutions(res)
	require.NoError(t, err)
	keys, held, err := DecodeResolutions(b)
	require.NoError(t, err)
	assert.Equal(t, []pairing.Key{k("s1", "a"), k("s1", "c"), k("s2", "d"), k("s1", "e\xff")}, keys)
	assert.Nil(t, held)
	b, err = EncodeResolutions(res[1:2])
	assert.NoError(t, err)
	assert.Nil(t, b)

	// Releases of held results without a call ID: paired by their use (the call's key too),
	// or settled without one.
	res = append(res,
		pairing.Resolution{Outcome: pairing.OutcomePaired, Key: k("s2", "f"), Matched: true, HeldSeq: 12},
		pairing.Resolution{Outcome: pairing.OutcomeOrphan, Key: k("s2", ""), Matched: true, HeldSeq: 13},
		pairing.Resolution{Outcome: pairing.OutcomeStandalone, Key: k("s3", ""), Matched: true, HeldSeq: 300})
	b, err = EncodeResolutions(res)
	require.NoError(t, err)
	keys, held, err = DecodeResolutions(b)
	require.NoError(t, err)
	assert.Equal(t, []pairing.Key{k("s1", "a"), k("s1", "c"), k("s2", "d"), k("s1", "e\xff"), k("s2", "f")}, keys)
	assert.Equal(t, []pairing.HeldRef{
		{Scope: pairing.ConversationKey{Tenant: "t", Conversation: "s2"}, Seq: 12},
		{Scope: pairing.ConversationKey{Tenant: "t", Conversation: "s2"}, Seq: 13},
		{Scope: pairing.ConversationKey{Tenant: "t", Conversation: "s3"}, Seq: 300},
	}, held)
}

// TestResolutionsRefuseDamage: every truncation and single-byte change of a resolution record
// is refused with a *DiscardError; a record of format 3 (magic TPR1 or TPR2) or of a newer
// version is ReasonVersion.
func TestResolutionsRefuseDamage(t *testing.T) {
	res := append(testResolutions(), pairing.Resolution{Outcome: pairing.OutcomeOrphan, Key: pairing.Key{Tenant: "t", Conversation: "s2"}, HeldSeq: 13})
	b, err := EncodeResolutions(res)
	require.NoError(t, err)
	check := func(b []byte) {
		keys, held, err := DecodeResolutions(b)
		var de *DiscardError
		require.True(t, errors.As(err, &de), "%q: %v", b, err)
		assert.Nil(t, keys)
		assert.Nil(t, held)
	}
	for n := range len(b) {
		check(b[:n])
	}
	for i := range b {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= flip
			check(c)
		}
	}
	newer := append([]byte(nil), b...)
	newer[len(ResolutionsMagic)] = Version + 1
	for _, old := range [][]byte{[]byte("TPR1\x01\x01\x01t\x02s1\x01a\x00\x00\x00\x00"), []byte("TPR2\x00\x00\x00\x00\x00\x00"), newer} {
		_, _, err := DecodeResolutions(old)
		assert.Equal(t, ReasonVersion, ReasonOf(err), "%q: %v", old, err)
	}
}

// addedSnapshot is what a batch added: a pending call announced in a log record, a session
// end it queued, and the turn span of its conversation.
func addedSnapshot(t testing.TB, sinks Sinks) *pairing.Snapshot {
	full := fullSnapshot(t, sinks)
	s1 := full.Conversations[0].Key
	return &pairing.Snapshot{
		Conversations: []pairing.ConversationSnapshot{{Key: s1, UsesSeen: true, LastSeen: 77, LastRecord: 640,
			Closings: []pairing.ClosingSnapshot{{Kind: pairing.KindSessionEnd, Time: 900}}}},
		Queue:    []pairing.QueuedClosing{{Scope: 0, Time: 900, Deadline: 1900}},
		Calls:    []pairing.CallSnapshot{full.Calls[2], full.Calls[5]},
		Activity: []pairing.ActivitySnapshot{anchorSnapshot(s1, pairing.ActivityTurn, 3, 100, 1000, 77)},
	}
}

// TestRecordRoundTrip: a record keeps what its batch resolved and what it added (pending
// calls with their origins, queued closings with their scope, anchor spans), bound to the
// sinks; a record of additions only is written; additions written under another
// configuration are refused (ReasonConfig); DecodeResolutions reads the resolutions alone.
func TestRecordRoundTrip(t *testing.T) {
	sinks := testSinks()
	added := addedSnapshot(t, sinks)
	res := testResolutions()
	b, err := EncodeRecord(res, added, testFP)
	require.NoError(t, err)
	rec, err := DecodeRecord(b, testFP, sinks)
	require.NoError(t, err)
	keys, held, err := DecodeResolutions(b)
	require.NoError(t, err)
	assert.Equal(t, keys, rec.Resolved)
	assert.Equal(t, held, rec.Released)
	assert.Len(t, rec.Resolved, 4)
	assert.Equal(t, plain(added), plain(rec.Added))
	assert.Same(t, sinks.Logs, rec.Added.Calls[0].Payload.(*synth.Origin).Next)
	assert.Same(t, sinks.Logs, rec.Added.Calls[1].Payload.(*synth.Origin).Also.Next)

	b, err = EncodeRecord(nil, added, testFP)
	require.NoError(t, err)
	rec, err = DecodeRecord(b, testFP, sinks)
	require.NoError(t, err)
	assert.Empty(t, rec.Resolved)
	assert.Equal(t, plain(added), plain(rec.Added))

	_, err = DecodeRecord(b, [8]byte{9}, sinks)
	assert.Equal(t, ReasonConfig, ReasonOf(err), "%v", err)

	b, err = EncodeRecord(res, nil, testFP)
	require.NoError(t, err)
	rec, err = DecodeRecord(b, testFP, sinks)
	require.NoError(t, err)
	assert.Nil(t, rec.Added)
}

// TestRecordRefusesDamage: every truncation and single-byte change of a record with additions
// is refused with a *DiscardError.
func TestRecordRefusesDamage(t *testing.T) {
	sinks := testSinks()
	b, err := EncodeRecord(testResolutions(), addedSnapshot(t, sinks), testFP)
	require.NoError(t, err)
	check := func(b []byte) {
		_, err := DecodeRecord(b, testFP, sinks)
		var de *DiscardError
		require.True(t, errors.As(err, &de), "%q: %v", b, err)
	}
	for n := range len(b) {
		check(b[:n])
	}
	for i := range b {
		for _, flip := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= flip
			check(c)
		}
	}
}
