// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	semconv "go.opentelemetry.io/otel/semconv/v1.4.0"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/callkey"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/claim"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/custom"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/dialect/registry"
	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/normalize"
)

// knownDialects lists every dialect name the configuration accepts: the built-in dialects
// (specification section 8), in the order they are tried.
var knownDialects = registry.Names()

// Mode is what the processor does with the records it receives.
type Mode string

const (
	// ModePair pairs tool calls (the default): the back tier, or a single collector.
	ModePair Mode = "pair"
	// ModeRoute only writes each record's route (the tenant and scope of its call key, see
	// internal/route) into RouteAttribute, for a load_balancing exporter after it; it keeps no
	// pairing state.
	ModeRoute Mode = "route"
)

// DefaultRouteAttribute is the attribute route mode writes the route into by default.
const DefaultRouteAttribute = "toolpair.route"

// Disposition says what happens to an orphan or duplicate result record.
type Disposition string

const (
	// DispositionMark keeps the record and writes its toolpair.outcome.
	DispositionMark Disposition = "mark"
	// DispositionDrop removes the record from the pipeline (it is still counted).
	DispositionDrop Disposition = "drop"
)

// Config is the configuration of the toolpair processor (specification section 6). Every key is
// documented, with its default, in the component README.
type Config struct {
	// ConversationAttributes: the first of these attributes present on a record, else on its
	// resource, is the scope in which call IDs are unique; else the trace ID.
	ConversationAttributes []string `mapstructure:"scope_attributes"`
	// TenantAttributes: resource attributes added to service.name in the tenant key.
	TenantAttributes []string `mapstructure:"tenant_attributes"`
	// PairingTimeout: a use with no result after this long is interrupted with reason
	// expired.
	PairingTimeout time.Duration `mapstructure:"pairing_timeout"`
	// OrphanGrace: how long a result whose use has not been seen is held waiting for it.
	OrphanGrace time.Duration `mapstructure:"orphan_grace"`
	// MaxPendingCalls bounds pending uses plus waiting results; the oldest is evicted.
	MaxPendingCalls int `mapstructure:"max_pending_calls"`
	// MaxPendingCallsPerTenant bounds the pending calls plus held results of one tenant
	// (service.name and tenant_attributes); at it the tenant's own oldest are evicted. Zero
	// means no bound of its own: at max_pending_calls the tenant holding the most gives way
	// all the same (specification section 6).
	MaxPendingCallsPerTenant int `mapstructure:"max_pending_calls_per_tenant"`
	// MaxCallsPerRecord bounds the tool items (uses, results, refusals, echoes) read from one
	// span or log record; those beyond it are not tracked and are counted malformed under the
	// reason too_many_calls, the record itself passing unchanged (specification section 6).
	MaxCallsPerRecord int `mapstructure:"max_calls_per_record"`
	// MaxHeldBytes bounds the bytes of the result records held while they wait for their use
	// (each estimated from its names, attributes and body with its resource and scope); past
	// it the oldest held result leaves as it would at orphan_grace (specification section 6).
	MaxHeldBytes int64 `mapstructure:"max_held_bytes"`
	// MaxUnsentBytes bounds the bytes (OTLP protobuf) of the records the processor sent on
	// its own that a next consumer refused, kept to be sent again; past it the oldest are
	// given up and counted (specification section 9).
	MaxUnsentBytes int64 `mapstructure:"max_unsent_bytes"`
	// Dialects: which source formats are recognised.
	Dialects []string `mapstructure:"dialects"`
	// Orphans: mark or drop orphan results.
	Orphans Disposition `mapstructure:"orphans"`
	// Duplicates: mark or drop duplicate results.
	Duplicates Disposition `mapstructure:"duplicates"`
	// Synthesize: emit synthetic records for interrupted calls.
	Synthesize bool `mapstructure:"synthesize"`
	// TimeoutClassification configures specification section 4.
	TimeoutClassification TimeoutClassificationConfig `mapstructure:"timeout_classification"`
	// DurationNormalization configures specification section 5.
	DurationNormalization DurationNormalizationConfig `mapstructure:"duration_normalization"`
	// Storage is the ID of a storage extension (for example file_storage) that keeps the
	// processor's state across restarts (specification section 9); nil keeps it in memory only.
	Storage *component.ID `mapstructure:"storage"`
	// CheckpointInterval is how often the state is written to Storage: how old the stored
	// state may be after a crash.
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`
	// CustomDialects declares dialects in OTTL (specification section 8); they are tried after
	// the built-in dialects, on the records none of those claimed, except those with
	// precedence before_builtin, tried before them on the records their where selects.
	CustomDialects []custom.Config `mapstructure:"custom_dialects"`
	// Mode: pair (pair tool calls) or route (only write each record's route, specification
	// section 10). In route mode the pairing keys (pairing_timeout, orphan_grace, ...) are
	// validated but unused.
	Mode Mode `mapstructure:"mode"`
	// RouteAttribute is the record attribute route mode writes the route into: a span's or
	// log record's own attribute, which the load_balancing exporter's routing_attributes
	// reads per record.
	RouteAttribute string `mapstructure:"route_attribute"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// TimeoutClassificationConfig configures timeout classification (specification section 4).
type TimeoutClassificationConfig struct {
	// Enabled turns classification on. Disabled, no record is changed and nothing is tracked.
	Enabled bool `mapstructure:"enabled"`
	// CompactionSpanNames are regular expressions (Go syntax, unanchored unless anchored) of
	// the names of spans that are a context compaction.
	CompactionSpanNames []string `mapstructure:"compaction_span_names"`
	// CompactionEventNames are regular expressions of the event names of log records that are
	// a context compaction (the OTLP EventName, the event.name attribute, or a string body
	// that is an event name, as Claude Code writes it).
	CompactionEventNames []string `mapstructure:"compaction_event_names"`
	// Retention is how long the model calls, compactions and anchor spans of a scope are kept
	// after the scope last reported one (at least pairing_timeout plus orphan_grace), so
	// timeouts at instants up to that far in the past can be classified. The tool calls in
	// flight are the pairing engine's own, kept as long as it remembers them.
	Retention time.Duration `mapstructure:"retention"`
	// MaxTrackedOperations bounds the model-call and compaction intervals and the anchor spans
	// kept, over all scopes; the scope that reported one least recently loses them first.
	MaxTrackedOperations int `mapstructure:"max_tracked_operations"`
}

// Default compaction name patterns: the compaction span and event names the built-in
// dialects declare (dialect.Operations), each matched as the whole name.
var (
	defaultCompactionSpanNames  = compactionPatterns(func(o *dialect.Operations) []string { return o.CompactionSpans })
	defaultCompactionEventNames = compactionPatterns(func(o *dialect.Operations) []string { return o.CompactionEvents })
)

// compactionPatterns returns ^name$ (name quoted) for each name of the built-in dialects'
// operations that names picks, in trial order.
func compactionPatterns(names func(*dialect.Operations) []string) []string {
	var out []string
	for _, e := range registry.Entries() {
		for _, n := range names(&e.Operations) {
			out = append(out, "^"+regexp.QuoteMeta(n)+"$")
		}
	}
	return out
}

// DurationNormalizationConfig configures duration normalization (specification section 5).
type DurationNormalizationConfig struct {
	// Enabled turns normalization on.
	Enabled bool `mapstructure:"enabled"`
	// Canonical is the dotted path of the field whose value is copied to the mirrors.
	Canonical string `mapstructure:"canonical"`
	// Mirrors are dotted paths set to the canonical value where they already exist.
	Mirrors []string `mapstructure:"mirrors"`
}

var _ confmap.Validator = (*Config)(nil)

func createDefaultConfig() component.Config {
	return &Config{
		ConversationAttributes: registry.ConversationAttributes(),
		TenantAttributes:       []string{},
		PairingTimeout:         10 * time.Minute,
		OrphanGrace:            30 * time.Second,
		MaxPendingCalls:        100_000,
		MaxCallsPerRecord:      1024,
		MaxHeldBytes:           256 << 20,
		MaxUnsentBytes:         64 << 20,
		Dialects:               slices.Clone(knownDialects),
		Orphans:                DispositionMark,
		Duplicates:             DispositionDrop,
		Synthesize:             true,
		TimeoutClassification: TimeoutClassificationConfig{
			Enabled:              true,
			CompactionSpanNames:  slices.Clone(defaultCompactionSpanNames),
			CompactionEventNames: slices.Clone(defaultCompactionEventNames),
			Retention:            5 * time.Minute,
			MaxTrackedOperations: 100_000,
		},
		DurationNormalization: DurationNormalizationConfig{
			Enabled:   true,
			Canonical: normalize.DefaultCanonical,
			Mirrors:   slices.Clone(normalize.DefaultMirrors),
		},
		CheckpointInterval: 5 * time.Second,
		CustomDialects:     []custom.Config{},
		Mode:               ModePair,
		RouteAttribute:     DefaultRouteAttribute,
	}
}

// Validate refuses a configuration the processor cannot run with. Every error names the
// key at fault.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.PairingTimeout <= 0 {
		errs = append(errs, fmt.Errorf("pairing_timeout must be positive, got %v", cfg.PairingTimeout))
	}
	if cfg.OrphanGrace <= 0 {
		errs = append(errs, fmt.Errorf("orphan_grace must be positive, got %v", cfg.OrphanGrace))
	}
	if cfg.MaxPendingCalls < 1 {
		errs = append(errs, fmt.Errorf("max_pending_calls must be at least 1, got %d", cfg.MaxPendingCalls))
	}
	if cfg.MaxPendingCallsPerTenant < 0 || cfg.MaxPendingCallsPerTenant > cfg.MaxPendingCalls {
		errs = append(errs, fmt.Errorf("max_pending_calls_per_tenant must be between 0 (none of its own) and max_pending_calls (%d), got %d", cfg.MaxPendingCalls, cfg.MaxPendingCallsPerTenant))
	}
	if cfg.MaxHeldBytes < 1 {
		errs = append(errs, fmt.Errorf("max_held_bytes must be at least 1, got %d", cfg.MaxHeldBytes))
	}
	if cfg.MaxUnsentBytes < 1 {
		errs = append(errs, fmt.Errorf("max_unsent_bytes must be at least 1, got %d", cfg.MaxUnsentBytes))
	}
	if cfg.MaxCallsPerRecord < 1 {
		errs = append(errs, fmt.Errorf("max_calls_per_record must be at least 1, got %d", cfg.MaxCallsPerRecord))
	}
	if cfg.CheckpointInterval <= 0 {
		errs = append(errs, fmt.Errorf("checkpoint_interval must be positive, got %v", cfg.CheckpointInterval))
	}
	errs = append(errs, checkNames("scope_attributes", cfg.ConversationAttributes))
	errs = append(errs, checkNames("tenant_attributes", cfg.TenantAttributes))
	for i, d := range cfg.Dialects {
		if !slices.Contains(knownDialects, d) {
			errs = append(errs, fmt.Errorf("dialects[%d]: unknown dialect %q (known: %s)", i, d, strings.Join(knownDialects, ", ")))
		}
	}
	errs = append(errs, checkDisposition("orphans", cfg.Orphans))
	errs = append(errs, checkDisposition("duplicates", cfg.Duplicates))
	errs = append(errs, cfg.TimeoutClassification.validate())
	if cfg.DurationNormalization.Enabled {
		if strings.TrimSpace(cfg.DurationNormalization.Canonical) == "" {
			errs = append(errs, errors.New("duration_normalization.canonical must not be empty when duration_normalization.enabled is true"))
		}
		errs = append(errs, checkNames("duration_normalization.mirrors", cfg.DurationNormalization.Mirrors))
	}
	errs = append(errs, claim.ValidateCustom(cfg.CustomDialects))
	errs = append(errs, cfg.validateRoute())
	return errors.Join(errs...)
}

// validateRoute checks mode and route_attribute. The route attribute is checked in either
// mode, so that switching a collector to route mode never reveals a bad value.
func (cfg *Config) validateRoute() error {
	if cfg.Mode != ModePair && cfg.Mode != ModeRoute {
		return fmt.Errorf("mode must be %q or %q, got %q", ModePair, ModeRoute, cfg.Mode)
	}
	if strings.TrimSpace(cfg.RouteAttribute) == "" {
		return errors.New("route_attribute must not be empty")
	}
	// The back tier reads the scope and tenant from these attributes: a route written over
	// one of them would change the very key it was computed from.
	if slices.Contains(cfg.ConversationAttributes, cfg.RouteAttribute) {
		return fmt.Errorf("route_attribute %q must not be one of scope_attributes", cfg.RouteAttribute)
	}
	if slices.Contains(cfg.TenantAttributes, cfg.RouteAttribute) || cfg.RouteAttribute == string(semconv.ServiceNameKey) {
		return fmt.Errorf("route_attribute %q must not be service.name or one of tenant_attributes", cfg.RouteAttribute)
	}
	// A custom dialect's scope expression reads its scope from records, usually from the
	// attribute it reports the scope under; synthetic records carry that attribute too.
	for i, dc := range cfg.CustomDialects {
		sa := dc.ConversationAttribute
		if sa == "" && dc.Conversation != "" {
			sa = custom.DefaultScopeAttribute
		}
		if sa != "" && sa == cfg.RouteAttribute {
			return fmt.Errorf("route_attribute %q must not be custom_dialects[%d].scope_attribute", cfg.RouteAttribute, i)
		}
	}
	return nil
}

// validate checks the timeout classification keys, whether or not it is enabled, so that
// enabling it later never reveals a bad value.
func (tc *TimeoutClassificationConfig) validate() error {
	var errs []error
	if tc.Retention <= 0 {
		errs = append(errs, fmt.Errorf("timeout_classification.retention must be positive, got %v", tc.Retention))
	}
	if tc.MaxTrackedOperations < 1 {
		errs = append(errs, fmt.Errorf("timeout_classification.max_tracked_operations must be at least 1, got %d", tc.MaxTrackedOperations))
	}
	errs = append(errs, checkPatterns("timeout_classification.compaction_span_names", tc.CompactionSpanNames))
	errs = append(errs, checkPatterns("timeout_classification.compaction_event_names", tc.CompactionEventNames))
	return errors.Join(errs...)
}

// checkPatterns refuses an empty pattern (it would match every name) or one that does not
// compile.
func checkPatterns(key string, patterns []string) error {
	for i, p := range patterns {
		if p == "" {
			return fmt.Errorf("%s[%d] must not be empty", key, i)
		}
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Errorf("%s[%d]: %w", key, i, err)
		}
	}
	return nil
}

func checkNames(key string, names []string) error {
	for i, n := range names {
		if strings.TrimSpace(n) == "" {
			return fmt.Errorf("%s[%d] must not be empty", key, i)
		}
	}
	return nil
}

func checkDisposition(key string, d Disposition) error {
	if d != DispositionMark && d != DispositionDrop {
		return fmt.Errorf("%s must be %q or %q, got %q", key, DispositionMark, DispositionDrop, d)
	}
	return nil
}

// dialectEnabled reports whether the named dialect is configured.
func (cfg *Config) dialectEnabled(name string) bool {
	return slices.Contains(cfg.Dialects, name)
}

// keyer returns the call keyer of the configuration (scope_attributes, tenant_attributes).
func (cfg *Config) keyer() callkey.Keyer {
	return callkey.New(cfg.ConversationAttributes, cfg.TenantAttributes)
}

// stateFingerprint is the fingerprint of the configuration that gives stored call keys their
// meaning (specification section 9): the first 8 bytes of a SHA-256 of scope_attributes,
// tenant_attributes, dialects (in any order) and custom_dialects. A stored state of another
// fingerprint is discarded: its keys would not match the records the processor now sees.
func stateFingerprint(cfg *Config) [8]byte {
	h := sha256.New()
	write := func(name string, list []string) {
		h.Write([]byte(name))
		for _, s := range list {
			h.Write([]byte{0})
			h.Write([]byte(s))
		}
		h.Write([]byte{1})
	}
	write("scope_attributes", cfg.ConversationAttributes)
	write("tenant_attributes", cfg.TenantAttributes)
	dialects := slices.Clone(cfg.Dialects)
	slices.Sort(dialects)
	write("dialects", dialects)
	custom := make([]string, 0, len(cfg.CustomDialects))
	for _, c := range cfg.CustomDialects {
		custom = append(custom, fmt.Sprintf("%#v", c))
	}
	write("custom_dialects", custom)
	var fp [8]byte
	copy(fp[:], h.Sum(nil))
	return fp
}
