// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package statefile

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-agent/otelcol-agent/processor/toolpairprocessor/internal/delivery"
)

// The stored values of delivery.Fate and of the mark types (the format's, fixed here: the
// Go values may change).
var (
	fates      = map[delivery.Fate]uint32{delivery.FatePassed: 1, delivery.FateDropped: 2, delivery.FateHeld: 3}
	markTypes  = map[pcommon.ValueType]uint32{pcommon.ValueTypeStr: 1, pcommon.ValueTypeInt: 2, pcommon.ValueTypeDouble: 3, pcommon.ValueTypeBool: 4}
	fateOf     = invert(fates)
	markTypeOf = invert(markTypes)
)

// encodeDeliveries returns the stored form of dels (nil for none); entries of a fate or mark
// type the format has no value for are left out.
func encodeDeliveries(dels []delivery.Entry) []*Delivery {
	if len(dels) == 0 {
		return nil
	}
	out := make([]*Delivery, 0, len(dels))
	for i := range dels {
		e := &dels[i]
		f, ok := fates[e.Fate]
		if !ok || e.ID == 0 {
			continue
		}
		m := &Delivery{Id: uint64(e.ID), Deadline: e.Deadline, Fate: f}
		for _, mk := range e.Marks {
			if t, ok := markTypes[mk.Type]; ok {
				m.Marks = append(m.Marks, &DeliveryMark{Key: mk.Key, Type: t, Str: mk.Str, Num: mk.Num})
			}
		}
		out = append(out, m)
	}
	return out
}

// decodeDeliveries returns the deliveries of ms; an unknown fate or mark type is corrupt.
func decodeDeliveries(ms []*Delivery) ([]delivery.Entry, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := make([]delivery.Entry, 0, len(ms))
	for _, m := range ms {
		f, ok := fateOf[m.Fate]
		if !ok || m.Id == 0 {
			return nil, Discard(ReasonCorrupt, "delivery of fate %d, id %d", m.Fate, m.Id)
		}
		e := delivery.Entry{ID: delivery.ID(m.Id), Deadline: m.Deadline, Decision: delivery.Decision{Fate: f}}
		for _, mk := range m.Marks {
			t, ok := markTypeOf[mk.Type]
			if !ok {
				return nil, Discard(ReasonCorrupt, "delivery mark of type %d", mk.Type)
			}
			e.Marks = append(e.Marks, delivery.Mark{Key: mk.Key, Type: t, Str: mk.Str, Num: mk.Num})
		}
		out = append(out, e)
	}
	return out, nil
}
