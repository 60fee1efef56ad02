package grpcload

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// BenchmarkGenerate measures the generator's calls per second against the
// in-process test server (Echo, a small message with metadata), at c=1
// and c=8: b.N calls in all, shared among the workers. The server runs in
// the same process, so ns/op and allocs/op hold both sides of a call;
// BenchmarkInvoke is the same load with plain grpc-go calls (default
// codec, a dynamic message marshalled per call, a context and metadata
// per call) for comparison: the generator's own cost is the difference.
func BenchmarkGenerate(b *testing.B) {
	ts := startServer(b, serverOpts{reflection: "v1"})
	ctx := context.Background()
	d := FromReflection(ctx, testConn(b, ts.addr))
	call, err := Prepare(ctx, d, "bench.v1.Bench/Echo")
	if err != nil {
		b.Fatal(err)
	}
	req := load.Request{Target: "bench.v1.Bench/Echo", Body: []byte(`{"text":"hello","n":7}`),
		Header: map[string][]string{"X-Tenant": {"acme"}}}
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			b.ReportAllocs()
			per := max(b.N/c, 1)
			b.ResetTimer()
			r, err := Generate(ctx, Load{
				Target: ts.addr,
				Loop: load.Loop{
					Concurrency: c,
					Duration:    time.Hour, // the sources end it
					Timeout:     10 * time.Second,
					Source:      loadtest.Finite(per, req),
				},
				Resolve: func(string) (*Call, error) { return call, nil },
			})
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if r.Requests != int64(per*c) || r.Statuses["OK"] != r.Requests {
				b.Fatalf("%d calls, statuses %v, errors %v", r.Requests, r.Statuses, r.Errors)
			}
			b.ReportMetric(float64(r.Requests)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

func BenchmarkInvoke(b *testing.B) {
	ts := startServer(b, serverOpts{reflection: "v1"})
	ctx := context.Background()
	conn := testConn(b, ts.addr)
	d := FromReflection(ctx, conn)
	call, err := Prepare(ctx, d, "bench.v1.Bench/Echo")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			b.ReportAllocs()
			per := max(b.N/c, 1)
			b.ResetTimer()
			var wg sync.WaitGroup
			for range c {
				wg.Go(func() {
					out := dynamicpb.NewMessage(call.Out)
					for range per {
						in := dynamicpb.NewMessage(call.In)
						in.Set(call.In.Fields().ByName("text"), protoreflectString("hello"))
						cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
						cctx = withTenant(cctx)
						if err := conn.Invoke(cctx, call.Method, in, out); err != nil {
							b.Error(err)
						}
						cancel()
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(per*c)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

func protoreflectString(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }

func withTenant(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "x-tenant", "acme")
}
