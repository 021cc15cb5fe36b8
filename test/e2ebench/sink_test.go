// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package e2ebench

import (
	"context"
	"net"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	_ "google.golang.org/grpc/encoding/gzip" // the OTLP exporter's default compression
)

// sink is the gateway's next hop: an OTLP/gRPC server in the test process that counts the
// spans and log records it receives and drops them. Its CPU is the test's, not the
// collector's.
type sink struct {
	port  int
	spans atomic.Int64
	logs  atomic.Int64
}

type traceSink struct {
	ptraceotlp.UnimplementedGRPCServer
	s *sink
}

func (t *traceSink) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	t.s.spans.Add(int64(req.Traces().SpanCount()))
	return ptraceotlp.NewExportResponse(), nil
}

type logSink struct {
	plogotlp.UnimplementedGRPCServer
	s *sink
}

func (l *logSink) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	l.s.logs.Add(int64(req.Logs().LogRecordCount()))
	return plogotlp.NewExportResponse(), nil
}

// startSink serves a sink on a free loopback port until the test ends.
func startSink(t *testing.T) *sink {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &sink{port: lis.Addr().(*net.TCPAddr).Port}
	srv := grpc.NewServer()
	ptraceotlp.RegisterGRPCServer(srv, &traceSink{s: s})
	plogotlp.RegisterGRPCServer(srv, &logSink{s: s})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return s
}
