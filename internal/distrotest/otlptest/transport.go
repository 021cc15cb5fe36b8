// Copyright The otelcol-agent Authors
// SPDX-License-Identifier: Apache-2.0

package otlptest

// The transports of a Sink: its OTLP/HTTP handlers and its OTLP/gRPC servers, both handing
// what they accept to the Sink (takeTraces, takeLogs).

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the otlp_grpc exporter compresses with gzip by default
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// serveHTTP is the OTLP/HTTP handler of one signal: protobuf or JSON bodies, gzip or not.
func (s *Sink) serveHTTP(signal string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		ctype := req.Header.Get("Content-Type")
		if ctype != protobufType && ctype != jsonType {
			http.Error(w, "unsupported content type "+ctype, http.StatusUnsupportedMediaType)
			return
		}
		var body io.Reader = req.Body
		switch req.Header.Get("Content-Encoding") {
		case "", "identity":
		case "gzip":
			gz, err := gzip.NewReader(req.Body)
			if err != nil {
				writeStatus(w, ctype, http.StatusBadRequest, codes.InvalidArgument, err.Error())
				return
			}
			defer gz.Close()
			body = gz
		default:
			http.Error(w, "unsupported encoding", http.StatusUnsupportedMediaType)
			return
		}
		data, err := io.ReadAll(body)
		if err != nil {
			writeStatus(w, ctype, http.StatusBadRequest, codes.InvalidArgument, err.Error())
			return
		}
		if s.refuse(signal) {
			writeStatus(w, ctype, http.StatusServiceUnavailable, codes.Unavailable, "sink down")
			return
		}
		var resp []byte
		switch signal {
		case Traces:
			er := ptraceotlp.NewExportRequest()
			if err = unmarshal(ctype, data, er.UnmarshalProto, er.UnmarshalJSON); err == nil {
				s.takeTraces(er.Traces(), "http")
				resp, err = marshal(ctype, ptraceotlp.NewExportResponse().MarshalProto, ptraceotlp.NewExportResponse().MarshalJSON)
			}
		case Logs:
			er := plogotlp.NewExportRequest()
			if err = unmarshal(ctype, data, er.UnmarshalProto, er.UnmarshalJSON); err == nil {
				s.takeLogs(er.Logs(), "http")
				resp, err = marshal(ctype, plogotlp.NewExportResponse().MarshalProto, plogotlp.NewExportResponse().MarshalJSON)
			}
		}
		if err != nil {
			writeStatus(w, ctype, http.StatusBadRequest, codes.InvalidArgument, err.Error())
			return
		}
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(resp)
	}
}

func unmarshal(ctype string, data []byte, fromProto, fromJSON func([]byte) error) error {
	if ctype == jsonType {
		return fromJSON(data)
	}
	return fromProto(data)
}

func marshal(ctype string, toProto, toJSON func() ([]byte, error)) ([]byte, error) {
	if ctype == jsonType {
		return toJSON()
	}
	return toProto()
}

// writeStatus answers an OTLP/HTTP failure as the OTLP specification has it: the HTTP status,
// and a google.rpc.Status body in the request's encoding. No Retry-After header: the sender
// picks its own delay.
func writeStatus(w http.ResponseWriter, ctype string, httpCode int, code codes.Code, msg string) {
	st := status.New(code, msg).Proto()
	var body []byte
	if ctype == jsonType {
		body, _ = protojson.Marshal(st)
	} else {
		body, _ = proto.Marshal(st)
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(httpCode)
	_, _ = w.Write(body)
}

// errDown is the gRPC answer of a sink that is down.
var errDown = status.Error(codes.Unavailable, "sink down")

// traceServer is the OTLP/gRPC trace service of a Sink.
type traceServer struct {
	ptraceotlp.UnimplementedGRPCServer
	s *Sink
}

// Export implements ptraceotlp.GRPCServer.
func (g *traceServer) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	if g.s.refuse(Traces) {
		return ptraceotlp.NewExportResponse(), errDown
	}
	g.s.takeTraces(req.Traces(), "grpc")
	return ptraceotlp.NewExportResponse(), nil
}

// logServer is the OTLP/gRPC logs service of a Sink.
type logServer struct {
	plogotlp.UnimplementedGRPCServer
	s *Sink
}

// Export implements plogotlp.GRPCServer.
func (g *logServer) Export(_ context.Context, req plogotlp.ExportRequest) (plogotlp.ExportResponse, error) {
	if g.s.refuse(Logs) {
		return plogotlp.NewExportResponse(), errDown
	}
	g.s.takeLogs(req.Logs(), "grpc")
	return plogotlp.NewExportResponse(), nil
}

// statusMessage decodes the google.rpc.Status body of an OTLP/HTTP failure, in the encoding of
// its content type, and returns its message, or "" when the body is not one.
func statusMessage(ctype string, body []byte) string {
	st := status.New(codes.Unknown, "").Proto() // a *google.rpc.Status to decode into
	var err error
	if ctype == jsonType {
		err = protojson.Unmarshal(body, st)
	} else {
		err = proto.Unmarshal(body, st)
	}
	if err != nil {
		return ""
	}
	return status.FromProto(st).Message()
}

var errNotAccepted = errors.New("not accepted")
