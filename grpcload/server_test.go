package grpcload

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// The test server serves testdata/protos/bench.proto, compiled here with
// protocompile, with dynamic messages: no protoc, no generated code.

var (
	compileOnce  sync.Once
	compiled     *protoregistry.Files
	compiledMain protoreflect.FileDescriptor
	compileErr   error
)

// testFiles is bench.proto and its imports, compiled independently of the
// code under test.
func testFiles(t testing.TB) (*protoregistry.Files, protoreflect.FileDescriptor) {
	t.Helper()
	compileOnce.Do(func() {
		c := protocompile.Compiler{
			Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: []string{"testdata/protos"}}),
		}
		out, err := c.Compile(context.Background(), "bench.proto")
		if err != nil {
			compileErr = err
			return
		}
		files := new(protoregistry.Files)
		var reg func(fd protoreflect.FileDescriptor)
		reg = func(fd protoreflect.FileDescriptor) {
			if _, err := files.FindFileByPath(fd.Path()); err == nil {
				return
			}
			imps := fd.Imports()
			for i := range imps.Len() {
				reg(imps.Get(i).FileDescriptor)
			}
			if err := files.RegisterFile(fd); err != nil && compileErr == nil {
				compileErr = err
			}
		}
		reg(out[0])
		compiled, compiledMain = files, out[0]
	})
	if compileErr != nil {
		t.Fatalf("compiling bench.proto: %v", compileErr)
	}
	return compiled, compiledMain
}

type serverOpts struct {
	reflection string // "v1", "v1alpha", "both" or "" for none
	health     bool
}

type testServer struct {
	addr    string
	srv     *grpc.Server
	health  *health.Server
	lookups atomic.Int64
}

func startServer(t testing.TB, o serverOpts) *testServer {
	t.Helper()
	files, fd := testFiles(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{addr: lis.Addr().String(), srv: grpc.NewServer()}
	svcs := fd.Services()
	for i := range svcs.Len() {
		ts.register(svcs.Get(i))
	}
	opts := reflection.ServerOptions{Services: ts.srv, DescriptorResolver: files}
	switch o.reflection {
	case "v1":
		rpb.RegisterServerReflectionServer(ts.srv, reflection.NewServerV1(opts))
	case "v1alpha":
		rpbalpha.RegisterServerReflectionServer(ts.srv, reflection.NewServer(opts))
	case "both":
		rpb.RegisterServerReflectionServer(ts.srv, reflection.NewServerV1(opts))
		rpbalpha.RegisterServerReflectionServer(ts.srv, reflection.NewServer(opts))
	}
	if o.health {
		ts.health = health.NewServer()
		healthpb.RegisterHealthServer(ts.srv, ts.health)
	}
	go ts.srv.Serve(lis)
	t.Cleanup(ts.srv.Stop)
	return ts
}

// register serves sd: unary methods by handle, streaming ones refused.
func (ts *testServer) register(sd protoreflect.ServiceDescriptor) {
	desc := grpc.ServiceDesc{
		ServiceName: string(sd.FullName()),
		HandlerType: (*any)(nil),
		Metadata:    sd.ParentFile().Path(),
	}
	ms := sd.Methods()
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsStreamingClient() || md.IsStreamingServer() {
			desc.Streams = append(desc.Streams, grpc.StreamDesc{
				StreamName:    string(md.Name()),
				ServerStreams: md.IsStreamingServer(),
				ClientStreams: md.IsStreamingClient(),
				Handler: func(any, grpc.ServerStream) error {
					return status.Error(codes.Unimplemented, "no streams here")
				},
			})
			continue
		}
		desc.Methods = append(desc.Methods, grpc.MethodDesc{
			MethodName: string(md.Name()),
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				in := dynamicpb.NewMessage(md.Input())
				if err := dec(in); err != nil {
					return nil, err
				}
				return ts.handle(ctx, md, in)
			},
		})
	}
	ts.srv.RegisterService(&desc, struct{}{})
}

func (ts *testServer) handle(ctx context.Context, md protoreflect.MethodDescriptor, in *dynamicpb.Message) (any, error) {
	out := dynamicpb.NewMessage(md.Output())
	field := func(m *dynamicpb.Message, name string) protoreflect.FieldDescriptor {
		return m.Descriptor().Fields().ByName(protoreflect.Name(name))
	}
	// grpcload's codec sends what grpc-go's own does.
	if ct := metadata.ValueFromIncomingContext(ctx, "content-type"); len(ct) != 1 || ct[0] != "application/grpc" {
		return nil, status.Errorf(codes.FailedPrecondition, "content-type %q", ct)
	}
	switch md.Name() {
	case "Echo", "Ping":
		out.Set(field(out, "text"), in.Get(field(in, "text")))
		out.Set(field(out, "n"), in.Get(field(in, "n")))
		if v := metadata.ValueFromIncomingContext(ctx, "x-tenant"); len(v) > 0 {
			out.Set(field(out, "tenant"), protoreflect.ValueOfString(v[0]))
		}
	case "Lookup":
		if ts.lookups.Add(1)%10 == 0 {
			return nil, status.Error(codes.NotFound, "no such item")
		}
		out.Set(field(out, "id"), in.Get(field(in, "id")))
		out.Set(field(out, "count"), protoreflect.ValueOfInt64(42))
		tags := out.Mutable(field(out, "tags")).List()
		tags.Append(protoreflect.ValueOfString("a"))
		tags.Append(protoreflect.ValueOfString("b"))
	case "Slow":
		ms := in.Get(field(in, "ms")).Int()
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		}
		out.Set(field(out, "text"), protoreflect.ValueOfString("slept"))
	default:
		return nil, status.Errorf(codes.Unimplemented, "method %s", md.Name())
	}
	return out, nil
}

// testConn is a client connection to addr, closed with the test.
func testConn(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// testCtx ends with the test, or after a minute: a deadline for a broken
// run, long enough for a loaded machine's working one.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
