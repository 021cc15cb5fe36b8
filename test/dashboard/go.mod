// The dashboard test, in its own module so that the Prometheus PromQL parser and its
// dependencies stay out of the root module (and out of the distribution built from it).
module github.com/otelcol-agent/otelcol-agent/test/dashboard

go 1.26.0

require (
	github.com/otelcol-agent/otelcol-agent v0.0.0
	github.com/prometheus/common v0.69.0
	github.com/prometheus/prometheus v0.313.2
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dennwc/varint v1.0.0 // indirect
	github.com/grafana/regexp v0.0.0-20250905093917-f7b3be9d1853 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
)

replace github.com/otelcol-agent/otelcol-agent => ../../
