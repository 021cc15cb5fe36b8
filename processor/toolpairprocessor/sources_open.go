package toolpairprocessor

// Sources of the openinference and openllmetry span dialects (see logs.go for the others),
// numbered apart from the list there so that dialects added to it do not renumber them.
const (
	sourceOpenInference uint8 = 64 + iota
	sourceOpenLLMetry
)
