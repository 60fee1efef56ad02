package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// types are the messages of demo.proto, compiled here from the file on
// disk as a client would, apart from the server's embedded copy.
var types = func() map[string]protoreflect.MessageDescriptor {
	c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{}}
	files, err := c.Compile(context.Background(), "demo.proto")
	if err != nil {
		panic(err)
	}
	out := map[string]protoreflect.MessageDescriptor{}
	msgs := files[0].Messages()
	for i := range msgs.Len() {
		out[string(msgs.Get(i).Name())] = msgs.Get(i)
	}
	return out
}()

// msg is a message of type name from its JSON form.
func msg(t *testing.T, name, js string) *dynamicpb.Message {
	t.Helper()
	m := dynamicpb.NewMessage(types[name])
	if err := protojson.Unmarshal([]byte(js), m); err != nil {
		t.Fatalf("%s %s: %v", name, js, err)
	}
	return m
}

// start serves the demo with o on 127.0.0.1:0 in this process and
// returns it with a client connection.
func start(t *testing.T, o options) (*server, *grpc.ClientConn) {
	t.Helper()
	if o.factor == nil {
		o.factor, _ = parseSlow("")
	}
	srv, err := newServer(o)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.stop(time.Second)
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, conn
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// call invokes a unary method of Inventory with a request in JSON and
// decodes the answer as type out.
func call(t *testing.T, conn *grpc.ClientConn, method, in, js, out string) (*dynamicpb.Message, error) {
	t.Helper()
	resp := dynamicpb.NewMessage(types[out])
	err := conn.Invoke(ctx(t), "/benchgate.demo.Inventory/"+method, msg(t, in, js), resp)
	return resp, err
}

func mustCall(t *testing.T, conn *grpc.ClientConn, method, in, js, out string) *dynamicpb.Message {
	t.Helper()
	resp, err := call(t, conn, method, in, js, out)
	if err != nil {
		t.Fatalf("%s %s: %v", method, js, err)
	}
	return resp
}

func checkEqual(t *testing.T, what string, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, protojson.Format(got), protojson.Format(want))
	}
}

func checkCode(t *testing.T, what string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: status %v (%v), want %v", what, got, err, want)
	}
}

func TestGet(t *testing.T) {
	t.Parallel()
	_, conn := start(t, options{})
	got := mustCall(t, conn, "Get", "GetRequest", `{"id": 42}`, "Item")
	// 42*7919 = 332598
	checkEqual(t, "Get(42)", got, msg(t, "Item", `{"id": 42, "name": "item-42", "price": 598, "tags": ["a", "b"]}`))
	again := mustCall(t, conn, "Get", "GetRequest", `{"id": 42}`, "Item")
	checkEqual(t, "Get(42) again", again, got)
	_, err := call(t, conn, "Get", "GetRequest", `{}`, "Item")
	checkCode(t, "Get(0)", err, codes.InvalidArgument)
	_, err = call(t, conn, "Nope", "GetRequest", `{"id": 1}`, "Item")
	checkCode(t, "an unknown method", err, codes.Unimplemented)
}

// wantSearch computes Search's answer apart from the server.
func wantSearch(t *testing.T, q string, limit int) *dynamicpb.Message {
	t.Helper()
	sum := sha256.Sum256([]byte(q))
	for range 2000 {
		sum = sha256.Sum256(sum[:])
	}
	var items []string
	for i := range limit {
		id := 1 + (int(binary.BigEndian.Uint32(sum[(i%8)*4:]))+i)%1000
		items = append(items, `{"id": `+strconv.Itoa(id)+`, "name": "item-`+strconv.Itoa(id)+`", "price": `+strconv.Itoa(id*7919%1000)+`, "tags": ["a", "b"]}`)
	}
	return msg(t, "SearchReply", `{"items": [`+strings.Join(items, ",")+`], "count": `+strconv.Itoa(limit)+`, "digest": "`+hex.EncodeToString(sum[:8])+`"}`)
}

func TestSearch(t *testing.T) {
	t.Parallel()
	srv, conn := start(t, options{})
	got := mustCall(t, conn, "Search", "SearchRequest", `{"query": "alpha", "limit": 3}`, "SearchReply")
	checkEqual(t, "Search(alpha, 3)", got, wantSearch(t, "alpha", 3))
	if n := srv.inv.work["Search"].Load(); n != 2000 {
		t.Errorf("Search did %d hash rounds, want 2000", n)
	}
	// The default limit is 10; the answer depends on the query.
	def := mustCall(t, conn, "Search", "SearchRequest", `{"query": "beta"}`, "SearchReply")
	checkEqual(t, "Search(beta)", def, wantSearch(t, "beta", 10))
	big := mustCall(t, conn, "Search", "SearchRequest", `{"query": "beta", "limit": 1000}`, "SearchReply")
	if n := big.Get(types["SearchReply"].Fields().ByName("count")).Int(); n != 100 {
		t.Errorf("Search with limit 1000: count %d, want 100", n)
	}
	_, err := call(t, conn, "Search", "SearchRequest", `{"limit": 3}`, "SearchReply")
	checkCode(t, "Search without query", err, codes.InvalidArgument)
}

func TestWatchStreams(t *testing.T) {
	t.Parallel()
	_, conn := start(t, options{})
	st, err := conn.NewStream(ctx(t), &grpc.StreamDesc{ServerStreams: true}, "/benchgate.demo.Inventory/Watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SendMsg(msg(t, "GetRequest", `{"id": 7}`)); err != nil {
		t.Fatal(err)
	}
	st.CloseSend()
	var ids []int64
	for {
		it := dynamicpb.NewMessage(types["Item"])
		if err := st.RecvMsg(it); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, it.Get(types["Item"].Fields().ByName("id")).Int())
	}
	if !slices.Equal(ids, []int64{7, 8, 9}) {
		t.Errorf("Watch(7) streamed ids %v, want [7 8 9]", ids)
	}
}

func TestSlowMultipliesWork(t *testing.T) {
	t.Parallel()
	slow, err := parseSlow("Search=5")
	if err != nil {
		t.Fatal(err)
	}
	srv, conn := start(t, options{factor: slow})
	got := mustCall(t, conn, "Search", "SearchRequest", `{"query": "alpha", "limit": 3}`, "SearchReply")
	checkEqual(t, "slowed Search(alpha, 3)", got, wantSearch(t, "alpha", 3))
	if n := srv.inv.work["Search"].Load(); n != 5*2000 {
		t.Errorf("slowed Search did %d hash rounds, want %d", n, 5*2000)
	}
	mustCall(t, conn, "Get", "GetRequest", `{"id": 1}`, "Item")
	if n := srv.inv.work["Get"].Load(); n != 100 {
		t.Errorf("Get with Search slowed did %d hash rounds, want 100", n)
	}

	// A fractional factor, as verdict-quality asks (1.25×): to the
	// nearest round.
	slowFrac, _ := parseSlow("Search=1.25")
	srv, conn = start(t, options{factor: slowFrac})
	mustCall(t, conn, "Search", "SearchRequest", `{"query": "alpha", "limit": 3}`, "SearchReply")
	if n := srv.inv.work["Search"].Load(); n != 2500 {
		t.Errorf("Search slowed 1.25× did %d hash rounds, want 2500", n)
	}

	slowGet, _ := parseSlow("get=3")
	srv, conn = start(t, options{factor: slowGet})
	mustCall(t, conn, "Get", "GetRequest", `{"id": 1}`, "Item")
	if n := srv.inv.work["Get"].Load(); n != 300 {
		t.Errorf("Get slowed 3× did %d hash rounds, want 300", n)
	}
}

func TestWrong(t *testing.T) {
	t.Parallel()
	_, conn := start(t, options{wrong: "Get"})
	got := mustCall(t, conn, "Get", "GetRequest", `{"id": 42}`, "Item")
	checkEqual(t, "Get(42) with -wrong Get", got, msg(t, "Item", `{"id": 42, "name": "item-42", "price": 599, "tags": ["a", "b"]}`))
	// Only Get answers wrong.
	s := mustCall(t, conn, "Search", "SearchRequest", `{"query": "alpha", "limit": 3}`, "SearchReply")
	checkEqual(t, "Search(alpha, 3) with -wrong Get", s, wantSearch(t, "alpha", 3))

	srv, conn := start(t, options{wrong: "Search"})
	s = mustCall(t, conn, "Search", "SearchRequest", `{"query": "alpha", "limit": 3}`, "SearchReply")
	if proto.Equal(s, wantSearch(t, "alpha", 3)) {
		t.Error("Search with -wrong Search answers as the normal build")
	}
	if n := srv.inv.work["Search"].Load(); n != 400 {
		t.Errorf("Search with -wrong Search did %d hash rounds, want 400", n)
	}
}

func TestOtherMessage(t *testing.T) {
	t.Parallel()
	_, conn := start(t, options{otherMessage: true})
	// As the Item the method promises: no field the client knows.
	it := mustCall(t, conn, "Get", "GetRequest", `{"id": 42}`, "Item")
	if b, _ := protojson.Marshal(it); string(b) != "{}" {
		t.Errorf("Get with -other-message, as an Item: %s, want {} (only unknown fields)", b)
	}
	if len(it.GetUnknown()) == 0 {
		t.Error("Get with -other-message, as an Item, has no unknown fields")
	}
	// What it really is.
	rep := mustCall(t, conn, "Get", "GetRequest", `{"id": 42}`, "SearchReply")
	checkEqual(t, "Get with -other-message, as a SearchReply", rep,
		msg(t, "SearchReply", `{"items": [{"id": 42, "name": "item-42", "price": 598, "tags": ["a", "b"]}], "count": 1}`))
}

func TestHealth(t *testing.T) {
	t.Parallel()
	_, conn := start(t, options{})
	h := healthgrpc.NewHealthClient(conn)
	for _, svc := range []string{"", "benchgate.demo.Inventory"} {
		resp, err := h.Check(ctx(t), &healthgrpc.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("Check(%q): %v", svc, err)
		}
		if resp.Status != healthgrpc.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v, want SERVING", svc, resp.Status)
		}
	}

	_, conn = start(t, options{noHealth: true})
	_, err := healthgrpc.NewHealthClient(conn).Check(ctx(t), &healthgrpc.HealthCheckRequest{})
	checkCode(t, "Check with -no-health", err, codes.Unimplemented)
}

// reflect asks a reflection stream one question and returns the answer.
func reflect(t *testing.T, st reflectionv1.ServerReflection_ServerReflectionInfoClient, req *reflectionv1.ServerReflectionRequest) *reflectionv1.ServerReflectionResponse {
	t.Helper()
	if err := st.Send(req); err != nil {
		t.Fatal(err)
	}
	resp, err := st.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if e := resp.GetErrorResponse(); e != nil {
		t.Fatalf("reflection answered %v: %s", codes.Code(e.ErrorCode), e.ErrorMessage)
	}
	return resp
}

func TestReflection(t *testing.T) {
	t.Parallel()
	_, conn := start(t, options{})
	st, err := reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	list := reflect(t, st, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_ListServices{ListServices: "*"}})
	var names []string
	for _, s := range list.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"benchgate.demo.Inventory", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, without %s", names, want)
		}
	}

	// A client resolves the method's types from the server alone.
	fdr := reflect(t, st, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "benchgate.demo.Inventory"}})
	set := &descriptorpb.FileDescriptorSet{}
	for _, b := range fdr.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fdp := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(b, fdp); err != nil {
			t.Fatal(err)
		}
		set.File = append(set.File, fdp)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName("benchgate.demo.Inventory.Search")
	if err != nil {
		t.Fatal(err)
	}
	md := d.(protoreflect.MethodDescriptor)
	if md.Input().FullName() != "benchgate.demo.SearchRequest" || md.Output().FullName() != "benchgate.demo.SearchReply" {
		t.Errorf("Search resolved as %s → %s", md.Input().FullName(), md.Output().FullName())
	}
	if w, _ := files.FindDescriptorByName("benchgate.demo.Inventory.Watch"); w == nil || !w.(protoreflect.MethodDescriptor).IsStreamingServer() {
		t.Error("Watch is not resolved as server-streaming")
	}
	// The services linked into the binary resolve too.
	reflect(t, st, &reflectionv1.ServerReflectionRequest{MessageRequest: &reflectionv1.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "grpc.health.v1.Health"}})

	// The older v1alpha service, which many clients still ask first.
	alpha, err := reflectionv1alpha.NewServerReflectionClient(conn).ServerReflectionInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := alpha.Send(&reflectionv1alpha.ServerReflectionRequest{MessageRequest: &reflectionv1alpha.ServerReflectionRequest_ListServices{ListServices: "*"}}); err != nil {
		t.Fatal(err)
	}
	resp, err := alpha.Recv()
	if err != nil {
		t.Fatal(err)
	}
	names = names[:0]
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	if !slices.Contains(names, "benchgate.demo.Inventory") {
		t.Errorf("v1alpha reflection lists %v, without benchgate.demo.Inventory", names)
	}

	_, conn = start(t, options{noReflection: true})
	st, err = reflectionv1.NewServerReflectionClient(conn).ServerReflectionInfo(ctx(t))
	if err == nil {
		_, err = st.Recv()
	}
	checkCode(t, "reflection with -no-reflection", err, codes.Unimplemented)
}

func TestFlags(t *testing.T) {
	t.Parallel()
	f, err := parseSlow("Search=5,get=2")
	if err != nil || f["Search"] != 5 || f["Get"] != 2 {
		t.Errorf("parseSlow(Search=5,get=2) = %v, %v", f, err)
	}
	for _, bad := range []string{"Search", "Search=0", "Watch=2", "Search=x"} {
		if _, err := parseSlow(bad); err == nil {
			t.Errorf("parseSlow(%q) accepted", bad)
		}
	}
	if m, err := parseWrong("get"); m != "Get" || err != nil {
		t.Errorf("parseWrong(get) = %q, %v", m, err)
	}
	if _, err := parseWrong("Watch"); err == nil {
		t.Error("parseWrong(Watch) accepted")
	}
}

// TestSlowedBinary builds the slowed binary as the example does, with
// -ldflags -X, and runs it: it listens, answers, reports its setting and
// stops gracefully on SIGTERM.
func TestSlowedBinary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "grpcdemo-slow")
	build := exec.Command("go", "build", "-ldflags", "-X main.defaultSlow=Search=5", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	if out, err := exec.Command(bin, "-slow", "Watch=2").CombinedOutput(); exitCode(err) != 2 {
		t.Errorf("-slow Watch=2: exit %d, want 2\n%s", exitCode(err), out)
	}

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	listening := regexp.MustCompile(`listening on (\S+) \(slow: "(.*)"\)`)
	var addr, slow string
	for lines.Scan() {
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			addr, slow = m[1], m[2]
			break
		}
	}
	if addr == "" {
		t.Fatal("the server never said where it listens")
	}
	if slow != "Search=5" {
		t.Errorf("the slowed build runs with -slow %q, want Search=5", slow)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := mustCall(t, conn, "Search", "SearchRequest", `{"query": "alpha", "limit": 3}`, "SearchReply")
	checkEqual(t, "the slowed binary's Search(alpha, 3)", got, wantSearch(t, "alpha", 3))
	resp, err := healthgrpc.NewHealthClient(conn).Check(ctx(t), &healthgrpc.HealthCheckRequest{})
	if err != nil || resp.Status != healthgrpc.HealthCheckResponse_SERVING {
		t.Errorf("health: %v, %v", resp, err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v\n%s", err, rest.String())
	}
	if !strings.Contains(rest.String(), "grpcdemo: stopped") {
		t.Errorf("after SIGTERM the server said:\n%s", rest.String())
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
