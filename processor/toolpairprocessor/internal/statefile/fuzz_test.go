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
