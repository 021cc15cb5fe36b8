//go:build !race

package genai

// raceEnabled: see race_test.go.
const raceEnabled = false
