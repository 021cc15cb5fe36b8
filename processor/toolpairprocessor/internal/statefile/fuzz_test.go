// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/pairing"
)

// FuzzDecode: Decode never panics, and whatever it decodes encodes again to a blob that
// decodes to the same snapshot. Seeded with real checkpoints; each input is
// also tried under a matching checksum, so that mutations reach the body.
func FuzzDecode(f *testing.F) {
	sinks := testSinks()
	for _, snap := range []*pairing.Snapshot{fullSnapshot(f, sinks), {}, benchSnapshot(20, sinks)} {
		blob, err := Encode(snap, testFP)
		require.NoError(f, err)
		f.Add(blob)
	}
	f.Fuzz(func(t *testing.T, blob []byte) {
		roundTrip(t, blob, sinks)
		// The same bytes under a checksum that matches, so that mutations reach the body.
		if len(blob) >= 4 {
			roundTrip(t, frame(append([]byte(nil), blob[:len(blob)-4]...)), sinks)
		}
	})
}

// roundTrip asserts that blob either does not decode, or decodes to a snapshot that encodes
// to a blob decoding to the same snapshot.
func roundTrip(t *testing.T, blob []byte, sinks Sinks) {
	snap, err := Decode(blob, testFP, sinks)
	if err != nil {
		require.Nil(t, snap)
		return
	}
	again, err := Encode(snap, testFP)
	require.NoError(t, err)
	got, err := Decode(again, testFP, sinks)
	require.NoError(t, err)
	require.Equal(t, plain(snap), plain(got))
}

// FuzzDecodeRecord: DecodeRecord never panics, and what it decodes encodes again to a record
// that decodes to the same. Seeded with records of resolutions, of additions, and of both.
func FuzzDecodeRecord(f *testing.F) {
	sinks := testSinks()
	for _, c := range []struct {
		res   []pairing.Resolution
		added *pairing.Snapshot
	}{{testResolutions(), nil}, {nil, addedSnapshot(f, sinks)}, {testResolutions(), addedSnapshot(f, sinks)}} {
		b, err := EncodeRecord(c.res, c.added, testFP)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, b := range [][]byte{b, frame(append([]byte(nil), b[:max(len(b)-4, 0)]...))} {
			rec, err := DecodeRecord(b, testFP, sinks)
			if err != nil {
				continue
			}
			// What a batch can resolve: calls with an ID, held results with a place.
			var res []pairing.Resolution
			var keys []pairing.Key
			var released []pairing.HeldRef
			for _, k := range rec.Resolved {
				if k.CallID != "" {
					res = append(res, pairing.Resolution{Outcome: pairing.OutcomePaired, Key: k})
					keys = append(keys, k)
				}
			}
			for _, h := range rec.Released {
				if h.Seq != 0 {
					res = append(res, pairing.Resolution{Outcome: pairing.OutcomeOrphan, Key: pairing.Key{Tenant: h.Scope.Tenant, Conversation: h.Scope.Conversation}, HeldSeq: h.Seq})
					released = append(released, h)
				}
			}
			again, err := EncodeRecord(res, rec.Added, testFP)
			require.NoError(t, err)
			if again == nil {
				continue // nothing to record: empty lists, an empty HeldSeq
			}
			got, err := DecodeRecord(again, testFP, sinks)
			require.NoError(t, err)
			require.Equal(t, keys, got.Resolved)
			require.Equal(t, released, got.Released)
			if rec.Added == nil {
				require.Nil(t, got.Added)
			} else {
				require.Equal(t, plain(rec.Added), plain(got.Added))
			}
		}
	})
}
