// Command grpcdemo is the small gRPC service that benchgate's gRPC example
// gates: the service Inventory of demo.proto, with a cheap unary method
// (Get), a CPU-bound one (Search) and a server-streaming one (Watch, which
// a unary load generator must refuse).
//
// It has no generated code and needs no protoc: demo.proto is embedded,
// compiled at startup with protocompile, and every call is decoded into
// and answered with dynamicpb messages of the compiled types. Server
// reflection (v1 and v1alpha) serves the same descriptors, so reflection
// clients such as benchgate, grpcurl or ghz resolve the service without
// the .proto file; the standard health service answers SERVING.
//
//	grpcdemo -addr 127.0.0.1:50051                 # the normal build
//	grpcdemo -addr 127.0.0.1:50051 -slow Search=5  # Search does 5× the work
//
// The slowed build bakes the same setting in at link time:
//
//	go build -ldflags "-X main.defaultSlow=Search=5" -o grpcdemo-slow ./examples/grpcdemo
//
// Other flags make the builds a correctness check must tell apart: -wrong
// Get answers Get's price off by one, -wrong Search answers a different
// digest (and does a fifth of the work), -other-message makes Get answer
// the bytes of a SearchReply where an Item is expected.
// -no-reflection and -no-health leave those services out.
package main

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// defaultSlow is the -slow default; a slowed build sets it with -ldflags -X.
var defaultSlow = ""

//go:embed demo.proto
var demoProto string

// serviceName is the full name of the demo's service in demo.proto.
const serviceName = "benchgate.demo.Inventory"

// The work of one call, in SHA-256 rounds: what -slow multiplies and what
// the work counters count.
const (
	getRounds    = 100
	searchRounds = 2000
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "listen address")
	slow := flag.String("slow", defaultSlow, "method=factor: multiply the work of one method (Get, Search), e.g. Search=5")
	var o options
	flag.StringVar(&o.wrong, "wrong", "", "Get or Search: answer one field of that method differently (Get: the price off by one)")
	flag.BoolVar(&o.otherMessage, "other-message", false, "Get answers a SearchReply where an Item is expected")
	flag.BoolVar(&o.noReflection, "no-reflection", false, "do not register server reflection")
	flag.BoolVar(&o.noHealth, "no-health", false, "do not register the gRPC health service")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "grpcdemo: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	factor, err := parseSlow(*slow)
	if err == nil {
		o.wrong, err = parseWrong(o.wrong)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "grpcdemo:", err)
		os.Exit(2)
	}
	o.factor = factor
	srv, err := newServer(o)
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.stop(2 * time.Second)
	}()
	// Tests read the address from this line when -addr has port 0.
	log.Printf("grpcdemo: listening on %s (slow: %q)", lis.Addr(), *slow)
	if err := srv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		log.Fatal(err)
	}
	log.Print("grpcdemo: stopped")
}

// methods are the names -slow and -wrong accept.
var methods = []string{"Get", "Search"}

// method returns the canonical name of a method named in a flag, in any
// case.
func method(s string) (string, bool) {
	for _, m := range methods {
		if strings.EqualFold(s, m) {
			return m, true
		}
	}
	return "", false
}

// parseSlow reads -slow method=factor[,method=factor] into a factor for
// every method.
func parseSlow(s string) (map[string]float64, error) {
	f := map[string]float64{}
	for _, m := range methods {
		f[m] = 1
	}
	if s == "" {
		return f, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(part, "=")
		m, known := method(name)
		k, err := strconv.ParseFloat(n, 64)
		if !ok || !known || err != nil || !(k >= 1 && k <= 1000) {
			return nil, fmt.Errorf("-slow %q: want method=factor with method one of %s and factor from 1 to 1000, e.g. 1.25", part, strings.Join(methods, ", "))
		}
		f[m] = k
	}
	return f, nil
}

func parseWrong(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	m, ok := method(s)
	if !ok {
		return "", fmt.Errorf("-wrong %q: want one of %s", s, strings.Join(methods, ", "))
	}
	return m, nil
}

type options struct {
	factor       map[string]float64 // method → work multiplier; missing means 1
	wrong        string             // "", Get or Search
	otherMessage bool
	noReflection bool
	noHealth     bool
}

// compileProto compiles the embedded demo.proto into its file descriptor.
func compileProto(ctx context.Context) (protoreflect.FileDescriptor, error) {
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(map[string]string{"demo.proto": demoProto}),
		}),
	}
	files, err := c.Compile(ctx, "demo.proto")
	if err != nil {
		return nil, fmt.Errorf("compiling demo.proto: %w", err)
	}
	return files[0], nil
}

// inventory answers the service's calls with dynamic messages of the
// compiled types.
type inventory struct {
	o                                          options
	getRequest, item, searchRequest, searchRep protoreflect.MessageDescriptor
	// work counts the SHA-256 rounds each method did, so that tests can
	// check what -slow multiplies without timing anything.
	work map[string]*atomic.Int64
}

// sink keeps the slowed build's extra work from being optimised away.
var sink atomic.Uint32

func newInventory(fd protoreflect.FileDescriptor, o options) (*inventory, error) {
	inv := &inventory{o: o, work: map[string]*atomic.Int64{}}
	for _, m := range methods {
		inv.work[m] = new(atomic.Int64)
	}
	msgs := fd.Messages()
	for name, p := range map[protoreflect.Name]*protoreflect.MessageDescriptor{
		"GetRequest": &inv.getRequest, "Item": &inv.item,
		"SearchRequest": &inv.searchRequest, "SearchReply": &inv.searchRep,
	} {
		if *p = msgs.ByName(name); *p == nil {
			return nil, fmt.Errorf("demo.proto has no message %s", name)
		}
	}
	return inv, nil
}

func (inv *inventory) factor(m string) float64 {
	if f := inv.o.factor[m]; f > 1 {
		return f
	}
	return 1
}

// times is n rounds times method m's factor, to the nearest round.
func (inv *inventory) times(m string, n int) int {
	return int(math.Round(float64(n) * inv.factor(m)))
}

// hash chains n SHA-256 rounds from sum, counting them as work of method m.
func (inv *inventory) hash(m string, sum [32]byte, n int) [32]byte {
	for range n {
		sum = sha256.Sum256(sum[:])
	}
	inv.work[m].Add(int64(n))
	return sum
}

// price is what item id costs, as in the HTTP demo.
func price(id int64) int64 { return (id * 7919) % 1000 }

// newItem is item id: name "item-<id>", its price, tags a and b; wrong
// puts the price off by one.
func (inv *inventory) newItem(id int64, wrong bool) *dynamicpb.Message {
	it := dynamicpb.NewMessage(inv.item)
	f := inv.item.Fields()
	it.Set(f.ByName("id"), protoreflect.ValueOfInt64(id))
	it.Set(f.ByName("name"), protoreflect.ValueOfString("item-"+strconv.FormatInt(id, 10)))
	p := price(id)
	if wrong {
		p++
	}
	it.Set(f.ByName("price"), protoreflect.ValueOfInt64(p))
	tags := it.Mutable(f.ByName("tags")).List()
	tags.Append(protoreflect.ValueOfString("a"))
	tags.Append(protoreflect.ValueOfString("b"))
	return it
}

func (inv *inventory) get(_ context.Context, req *dynamicpb.Message) (*dynamicpb.Message, error) {
	id := req.Get(inv.getRequest.Fields().ByName("id")).Int()
	if id < 1 {
		return nil, status.Errorf(codes.InvalidArgument, "id %d: want an id >= 1", id)
	}
	// Get's work is small and does not change the answer; a slowed Get
	// does more of it.
	var seed [32]byte
	binary.BigEndian.PutUint64(seed[:], uint64(id))
	sum := inv.hash("Get", seed, inv.times("Get", getRounds))
	sink.Add(uint32(sum[0]))
	it := inv.newItem(id, inv.o.wrong == "Get") // the bug: the price off by one
	if !inv.o.otherMessage {
		return it, nil
	}
	// The bug: a SearchReply holding the item where an Item is expected.
	// Decoded as an Item, its fields have the wrong wire types.
	rep := dynamicpb.NewMessage(inv.searchRep)
	f := inv.searchRep.Fields()
	rep.Mutable(f.ByName("items")).List().Append(protoreflect.ValueOfMessage(it))
	rep.Set(f.ByName("count"), protoreflect.ValueOfInt32(1))
	return rep, nil
}

func (inv *inventory) search(_ context.Context, req *dynamicpb.Message) (*dynamicpb.Message, error) {
	in := inv.searchRequest.Fields()
	q := req.Get(in.ByName("query")).String()
	if q == "" {
		return nil, status.Error(codes.InvalidArgument, "missing query")
	}
	limit := int(req.Get(in.ByName("limit")).Int())
	switch {
	case limit < 1:
		limit = 10
	case limit > 100:
		limit = 100
	}
	rounds := searchRounds
	if inv.o.wrong == "Search" {
		rounds /= 5 // the bug: 5× faster, and a different digest
	}
	sum := inv.hash("Search", sha256.Sum256([]byte(q)), rounds)
	// A slowed build does more work for the same answer.
	extra := inv.hash("Search", sum, inv.times("Search", rounds)-rounds)
	sink.Add(uint32(extra[0]))

	rep := dynamicpb.NewMessage(inv.searchRep)
	f := inv.searchRep.Fields()
	items := rep.Mutable(f.ByName("items")).List()
	for i := range limit {
		id := 1 + (int64(binary.BigEndian.Uint32(sum[(i%8)*4:]))+int64(i))%1000
		items.Append(protoreflect.ValueOfMessage(inv.newItem(id, false)))
	}
	rep.Set(f.ByName("count"), protoreflect.ValueOfInt32(int32(limit)))
	rep.Set(f.ByName("digest"), protoreflect.ValueOfString(hex.EncodeToString(sum[:8])))
	return rep, nil
}

// watch streams the requested item and the two after it.
func (inv *inventory) watch(stream grpc.ServerStream) error {
	req := dynamicpb.NewMessage(inv.getRequest)
	if err := stream.RecvMsg(req); err != nil {
		return err
	}
	id := req.Get(inv.getRequest.Fields().ByName("id")).Int()
	if id < 1 {
		return status.Errorf(codes.InvalidArgument, "id %d: want an id >= 1", id)
	}
	for i := range int64(3) {
		if err := stream.SendMsg(inv.newItem(id+i, false)); err != nil {
			return err
		}
	}
	return nil
}

// serviceDesc is Inventory as a grpc.ServiceDesc whose handlers decode
// into dynamic messages of each method's input type: what generated code
// would register, built from the compiled descriptor.
func (inv *inventory) serviceDesc(sd protoreflect.ServiceDescriptor) (*grpc.ServiceDesc, error) {
	desc := &grpc.ServiceDesc{
		ServiceName: string(sd.FullName()),
		// Every value implements any: no interface for a server to meet.
		HandlerType: (*any)(nil),
		Metadata:    sd.ParentFile().Path(),
	}
	unary := map[protoreflect.Name]func(context.Context, *dynamicpb.Message) (*dynamicpb.Message, error){
		"Get": inv.get, "Search": inv.search,
	}
	ms := sd.Methods()
	for i := range ms.Len() {
		md := ms.Get(i)
		name := string(md.Name())
		switch {
		case md.IsStreamingClient():
			return nil, fmt.Errorf("%s: client streaming is not served", md.FullName())
		case md.IsStreamingServer() && name == "Watch":
			desc.Streams = append(desc.Streams, grpc.StreamDesc{
				StreamName:    name,
				ServerStreams: true,
				Handler:       func(_ any, stream grpc.ServerStream) error { return inv.watch(stream) },
			})
		case !md.IsStreamingServer() && unary[md.Name()] != nil:
			desc.Methods = append(desc.Methods, grpc.MethodDesc{
				MethodName: name,
				Handler:    unaryHandler(md, "/"+string(sd.FullName())+"/"+name, unary[md.Name()]),
			})
		default:
			return nil, fmt.Errorf("%s has no handler", md.FullName())
		}
	}
	return desc, nil
}

// unaryHandler decodes a call into a dynamic message of md's input type,
// through the server's interceptor when it has one.
func unaryHandler(md protoreflect.MethodDescriptor, full string, h func(context.Context, *dynamicpb.Message) (*dynamicpb.Message, error)) grpc.MethodHandler {
	return func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := dynamicpb.NewMessage(md.Input())
		if err := dec(in); err != nil {
			return nil, err
		}
		if interceptor == nil {
			return h(ctx, in)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: full}
		return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
			return h(ctx, req.(*dynamicpb.Message))
		})
	}
}

// resolver finds descriptors in each of its registries in turn: the
// compiled demo.proto first, then the ones linked into the binary (health,
// reflection), so that reflection clients resolve every listed service.
type resolver []*protoregistry.Files

func (r resolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	for _, f := range r {
		if d, err := f.FindFileByPath(path); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

func (r resolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	for _, f := range r {
		if d, err := f.FindDescriptorByName(name); err == nil {
			return d, nil
		}
	}
	return nil, protoregistry.NotFound
}

var _ protodesc.Resolver = resolver(nil)

// server is the demo's gRPC server with what it registered.
type server struct {
	*grpc.Server
	inv    *inventory
	health *health.Server // nil with -no-health
}

func newServer(o options) (*server, error) {
	fd, err := compileProto(context.Background())
	if err != nil {
		return nil, err
	}
	sd := fd.Services().ByName("Inventory")
	if sd == nil {
		return nil, errors.New("demo.proto has no service Inventory")
	}
	inv, err := newInventory(fd, o)
	if err != nil {
		return nil, err
	}
	desc, err := inv.serviceDesc(sd)
	if err != nil {
		return nil, err
	}
	s := &server{Server: grpc.NewServer(), inv: inv}
	s.RegisterService(desc, inv)
	if !o.noHealth {
		s.health = health.NewServer()
		s.health.SetServingStatus("", healthgrpc.HealthCheckResponse_SERVING)
		s.health.SetServingStatus(serviceName, healthgrpc.HealthCheckResponse_SERVING)
		healthgrpc.RegisterHealthServer(s.Server, s.health)
	}
	if !o.noReflection {
		local := new(protoregistry.Files)
		if err := local.RegisterFile(fd); err != nil {
			return nil, err
		}
		opts := reflection.ServerOptions{
			Services:           s.Server,
			DescriptorResolver: resolver{local, protoregistry.GlobalFiles},
		}
		reflectionv1.RegisterServerReflectionServer(s.Server, reflection.NewServerV1(opts))
		reflectionv1alpha.RegisterServerReflectionServer(s.Server, reflection.NewServer(opts))
	}
	return s, nil
}

// stop reports NOT_SERVING, lets calls in flight finish and stops; after
// timeout it closes what is left.
func (s *server) stop(timeout time.Duration) {
	if s.health != nil {
		s.health.Shutdown()
	}
	t := time.AfterFunc(timeout, s.Stop)
	defer t.Stop()
	s.GracefulStop()
}
