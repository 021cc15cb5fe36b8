// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package toolpairprocessor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/metadatatest"
)

// TestSendFailedCounted: records the processor sends outside the pipeline call that brought
// them, refused by the next consumer (consumertest.NewErr), are counted in
// otelcol_processor_toolpair_send_failed by signal and trigger: the synthetic log record of an
// expired call (expiry), of a call pending at shutdown (shutdown), and of a call evicted by a
// span's use in the traces pipeline, sent from that call to the logs pipeline (routed).
func TestSendFailedCounted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	clock := newTestClock()
	f := newFactoryWithClock(clock)
	cfg := f.CreateDefaultConfig().(*Config)
	cfg.MaxPendingCalls = 2
	ctx := context.Background()
	tsink := new(consumertest.TracesSink)
	tp, err := f.CreateTraces(ctx, metadatatest.NewSettings(tel), cfg, tsink)
	require.NoError(t, err)
	lp, err := f.CreateLogs(ctx, metadatatest.NewSettings(tel), cfg, consumertest.NewErr(errors.New("refused")))
	require.NoError(t, err)
	require.NoError(t, tp.Start(ctx, componenttest.NewNopHost()))
	require.NoError(t, lp.Start(ctx, componenttest.NewNopHost()))

	// expiry: a call announced in logs and never answered.
	require.Error(t, lp.ConsumeLogs(ctx, ruleLogs([]ruleLog{ruleDecision("toolu_expired", "Bash", 0)})))
	// The component's ticker expires it once the clock passed its deadline; its synthetic log
	// record is refused.
	sendFailed := func(trigger string) int64 {
		m, err := tel.GetMetric("otelcol_processor_toolpair_send_failed")
		if err != nil {
			return 0
		}
		var n int64
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			if v, _ := dp.Attributes.Value("toolpair.trigger"); v.AsString() == trigger {
				n += dp.Value
			}
		}
		return n
	}
	clock.Advance(cfg.PairingTimeout + time.Second)
	require.Eventually(t, func() bool { return sendFailed("expiry") == 1 }, 10*time.Second, 5*time.Millisecond,
		"the ticker expires the call")

	// routed: two calls pending (the bound), then a chat span announcing a third evicts the
	// oldest, whose synthetic log record the traces pipeline call sends to the logs pipeline.
	require.Error(t, lp.ConsumeLogs(ctx, ruleLogs([]ruleLog{ruleDecision("toolu_evicted", "Bash", 10), ruleDecision("toolu_shutdown", "Read", 20)})))
	require.NoError(t, tp.ConsumeTraces(ctx, spanBatchOf(chatSpan(1, 30, "call_span"))))

	// shutdown: the call left pending (and the span's call, whose synthetic span is accepted).
	// The first pipeline to shut down flushes, and returns the refusal.
	require.ErrorContains(t, tp.Shutdown(ctx), "refused")
	require.NoError(t, lp.Shutdown(ctx))

	assert.Equal(t, int64(1), sendFailed("expiry"))
	assert.Equal(t, int64(1), sendFailed("routed"))
	assert.Equal(t, int64(1), sendFailed("shutdown"))
	// Every refused delivery was kept and sent again (the ticker's tries, counted under
	// resend, depend on the wall clock); without storage the shutdown gives up the three
	// records still refused.
	givenUp, err := tel.GetMetric("otelcol_processor_toolpair_given_up")
	require.NoError(t, err)
	var shutdown int64
	for _, dp := range givenUp.Data.(metricdata.Sum[int64]).DataPoints {
		if v, _ := dp.Attributes.Value("reason"); v.AsString() == "shutdown" {
			shutdown += dp.Value
		}
	}
	assert.Equal(t, int64(3), shutdown)
	// A next consumer that implements every signal (as consumertest.NewErr does) still gets
	// the synthetic records of its own signal only.
	require.Equal(t, 2, tsink.SpanCount(), "the chat span and its call's synthetic span, accepted")
}
