package toolpairprocessor

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/synth"
)

// output gathers the records to send downstream after applying outcomes, by the pipeline
// each belongs to: the pipeline its announcing record (for a synthetic record) or the record
// itself (for a released result) came through. The batch being processed, if any, takes the
// records of its own pipeline; the others are sent separately.
type output struct {
	curTraces consumer.Traces // the pipeline of the traces batch being processed, or nil
	traces    ptrace.Traces   // that batch
	curLogs   consumer.Logs
	logs      plog.Logs
	// other pipelines
	toTraces []routedTraces
	toLogs   []routedLogs
}

type routedTraces struct {
	next consumer.Traces
	td   ptrace.Traces
}

type routedLogs struct {
	next consumer.Logs
	ld   plog.Logs
}

// tracesFor returns where to put spans bound for next.
func (o *output) tracesFor(next consumer.Traces) ptrace.Traces {
	if o.curTraces != nil && next == o.curTraces {
		return o.traces
	}
	for _, r := range o.toTraces {
		if r.next == next {
			return r.td
		}
	}
	td := ptrace.NewTraces()
	o.toTraces = append(o.toTraces, routedTraces{next: next, td: td})
	return td
}

// logsFor returns where to put log records bound for next.
func (o *output) logsFor(next consumer.Logs) plog.Logs {
	if o.curLogs != nil && next == o.curLogs {
		return o.logs
	}
	for _, r := range o.toLogs {
		if r.next == next {
			return r.ld
		}
	}
	ld := plog.NewLogs()
	o.toLogs = append(o.toLogs, routedLogs{next: next, ld: ld})
	return ld
}

// send delivers the records bound for other pipelines than the current batch's, and counts
// those a next consumer refused (otelcol_processor_toolpair_send_failed), by what triggered
// the send. It is never called with a lock held.
func (s *shared) send(ctx context.Context, out *output, trigger sendTrigger) error {
	var errs []error
	for _, r := range out.toTraces {
		if n := r.td.SpanCount(); n > 0 {
			if err := r.next.ConsumeTraces(ctx, r.td); err != nil {
				s.tel.sendFailed(ctx, synth.Traces, trigger, n)
				errs = append(errs, err)
			}
		}
	}
	for _, r := range out.toLogs {
		if n := r.ld.LogRecordCount(); n > 0 {
			if err := r.next.ConsumeLogs(ctx, r.ld); err != nil {
				s.tel.sendFailed(ctx, synth.Logs, trigger, n)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
