package grpcload

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// sources returns the three kinds of descriptors over the test server's
// proto, by name.
func sources(t *testing.T) map[string]*Descriptors {
	t.Helper()
	ts := startServer(t, serverOpts{reflection: "v1"})
	fromProto, err := FromProtoFiles([]string{"testdata/protos/bench.proto"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := FromDescriptorSet(writeSet(t, true))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Descriptors{
		"reflection": FromReflection(testCtx(t), testConn(t, ts.addr)),
		"proto":      fromProto,
		"set":        set,
	}
}

// writeSet writes the compiled bench.proto as a FileDescriptorSet, as
// protoc -o does: with its imports first when all is set (as with
// --include_imports), else bench.proto alone.
func writeSet(t *testing.T, all bool) string {
	t.Helper()
	_, main := testFiles(t)
	var set descriptorpb.FileDescriptorSet
	seen := map[string]bool{}
	var walk func(fd protoreflect.FileDescriptor)
	walk = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		imps := fd.Imports()
		for i := range imps.Len() {
			walk(imps.Get(i).FileDescriptor)
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	if all {
		walk(main)
	} else {
		set.File = append(set.File, protodesc.ToFileDescriptorProto(main))
	}
	b, err := proto.Marshal(&set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bench.pb")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMethodLookup(t *testing.T) {
	t.Parallel()
	for name, d := range sources(t) {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			for _, m := range []string{"bench.v1.Bench/Echo", "/bench.v1.Bench/Echo", "bench.v1.Bench.Echo"} {
				md, err := d.Method(ctx, m)
				if err != nil {
					t.Fatalf("%s: %v", m, err)
				}
				if md.Input().FullName() != "bench.v1.EchoRequest" || md.Output().FullName() != "bench.v1.EchoReply" {
					t.Errorf("%s: %s -> %s", m, md.Input().FullName(), md.Output().FullName())
				}
			}
			// An output type from the imported types.proto.
			c, err := Prepare(ctx, d, "bench.v1.Bench/Lookup")
			if err != nil {
				t.Fatal(err)
			}
			if c.Method != "/bench.v1.Bench/Lookup" || c.Out.FullName() != "bench.v1.Item" {
				t.Errorf("call %s out %s", c.Method, c.Out.FullName())
			}
			// A well-known import and a map in the request.
			c, err = Prepare(ctx, d, "bench.v1.Admin/Ping")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Message([]byte(`{"text":"x","at":"2024-01-02T03:04:05Z","labels":{"k":"v"}}`)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMethodErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method string
		want   []string
	}{
		{"bench.v1.Nope/Echo", []string{"unknown service bench.v1.Nope", "bench.v1.Admin, bench.v1.Bench"}},
		{"bench.v1.Bench/Nope", []string{"unknown method", `no method "Nope"`, "Echo, Lookup, Slow, Watch"}},
		{"bench.v1.Bench/Watch", []string{"server streaming", "only unary"}},
		{"Echo", []string{"want package.Service/Method"}},
		{"bench.v1.Bench/", []string{"want package.Service/Method"}},
		{"bench.v1.Item/Get", []string{"bench.v1.Item is a message, not a service"}},
	}
	for name, d := range sources(t) {
		for _, tc := range cases {
			t.Run(name+"/"+tc.method, func(t *testing.T) {
				_, err := d.Method(testCtx(t), tc.method)
				if err == nil {
					t.Fatal("no error")
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
			})
		}
	}
	// Reflection lists what the server offers, reflection included.
	d := sources(t)["reflection"]
	_, err := d.Method(testCtx(t), "bench.v1.Nope/Echo")
	if err == nil || !strings.Contains(err.Error(), "the server offers bench.v1.Admin, bench.v1.Bench, grpc.reflection.v1.ServerReflection") {
		t.Errorf("reflection: %v", err)
	}
}

func TestReflectionV1Alpha(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{reflection: "v1alpha"})
	ctx := testCtx(t)
	d := FromReflection(ctx, testConn(t, ts.addr))
	c, err := Prepare(ctx, d, "bench.v1.Bench/Lookup")
	if err != nil {
		t.Fatal(err)
	}
	if c.Out.FullName() != "bench.v1.Item" {
		t.Errorf("out %s", c.Out.FullName())
	}
	_, err = d.Method(ctx, "bench.v1.Bench/Nope")
	if err == nil || !strings.Contains(err.Error(), "Echo, Lookup, Slow, Watch") {
		t.Errorf("unknown method: %v", err)
	}
	_, err = d.Method(ctx, "x.Y/Z")
	if err == nil || !strings.Contains(err.Error(), "grpc.reflection.v1alpha.ServerReflection") {
		t.Errorf("unknown service: %v", err)
	}
}

func TestReflectionAbsent(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverOpts{})
	ctx := testCtx(t)
	_, err := FromReflection(ctx, testConn(t, ts.addr)).Method(ctx, "bench.v1.Bench/Echo")
	if err == nil || !strings.Contains(err.Error(), "neither grpc.reflection.v1 nor v1alpha") {
		t.Errorf("got %v", err)
	}
}

func TestFromProtoFiles(t *testing.T) {
	t.Parallel()
	// By a name relative to an import path, as protoc -I.
	d, err := FromProtoFiles([]string{"bench.proto"}, []string{"testdata/protos"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Method(testCtx(t), "bench.v1.Bench/Echo"); err != nil {
		t.Fatal(err)
	}
	// By an absolute path under an import path.
	abs, _ := filepath.Abs("testdata/protos/bench.proto")
	if _, err := FromProtoFiles([]string{abs}, []string{"testdata/protos"}); err != nil {
		t.Fatal(err)
	}

	_, err = FromProtoFiles([]string{"testdata/broken.proto"}, nil)
	if err == nil {
		t.Fatal("broken.proto compiled")
	}
	for _, w := range []string{"testdata/broken.proto:7:16:", "same tag 1"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	_, err = FromProtoFiles([]string{"testdata/syntax.proto"}, nil)
	if err == nil || !strings.Contains(err.Error(), "testdata/syntax.proto:4:14: syntax error") {
		t.Errorf("syntax error: %v", err)
	}

	_, err = FromProtoFiles([]string{"testdata/nope.proto"}, nil)
	if err == nil || !strings.Contains(err.Error(), "nope.proto") {
		t.Errorf("missing file: %v", err)
	}
	// An import that is not found names itself.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.proto"), []byte("syntax = \"proto3\";\nimport \"gone.proto\";\n"), 0o644)
	_, err = FromProtoFiles([]string{filepath.Join(dir, "a.proto")}, nil)
	if err == nil || !strings.Contains(err.Error(), "gone.proto") {
		t.Errorf("missing import: %v", err)
	}
}

func TestFromDescriptorSet(t *testing.T) {
	t.Parallel()
	_, err := FromDescriptorSet(writeSet(t, false))
	if err == nil || !strings.Contains(err.Error(), "imports types.proto, which is missing") || !strings.Contains(err.Error(), "--include_imports") {
		t.Errorf("set without imports: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.pb")
	os.WriteFile(bad, []byte("not a descriptor set at all"), 0o644)
	if _, err := FromDescriptorSet(bad); err == nil || !strings.Contains(err.Error(), "bad.pb") {
		t.Errorf("garbage: %v", err)
	}
	if _, err := FromDescriptorSet(filepath.Join(t.TempDir(), "none.pb")); err == nil {
		t.Error("a missing file read")
	}
}

func TestMessage(t *testing.T) {
	t.Parallel()
	d, err := FromProtoFiles([]string{"testdata/protos/bench.proto"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Prepare(testCtx(t), d, "bench.v1.Bench/Echo")
	if err != nil {
		t.Fatal(err)
	}
	m1, err := c.Message([]byte(`{"text":"hi","n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := c.Message([]byte(`{"text":"hi","n":3}`))
	if m1 != m2 {
		t.Error("the same JSON built twice")
	}
	dm := m1.(*dynamicpb.Message)
	if got := dm.Get(dm.Descriptor().Fields().ByName("n")).Int(); got != 3 {
		t.Errorf("n = %d", got)
	}
	if m, err := c.Message(nil); err != nil || proto.Size(m) != 0 {
		t.Errorf("empty body: %v, %v", m, err)
	}

	for _, tc := range []struct{ json, want string }{
		{`{"text":"hi","nope":1}`, `unknown field "nope"`},
		{`{"n":"abc"}`, "n"},
		{`{"text":5}`, "text"},
		{`{"text":`, "unexpected"},
	} {
		_, err := c.Message([]byte(tc.json))
		if err == nil {
			t.Errorf("%s: accepted", tc.json)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "does not fit bench.v1.EchoRequest") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "proto:") {
			t.Errorf("%s: %v", tc.json, err)
		}
	}

	// The cache is bounded.
	for i := range CacheSize + 10 {
		c.Message([]byte(`{"n":` + strings.Repeat("1", 1+i%5) + `,"text":"` + string(rune('a'+i%26)) + `"}` + strings.Repeat(" ", i)))
	}
	if len(c.cache) > CacheSize {
		t.Errorf("cache holds %d", len(c.cache))
	}
}

// The .proto files and descriptor sets come with the pull request: a FIFO
// is refused rather than waited on, /dev/zero rather than read forever.
func TestDescriptorFilesBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.proto")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	zero := filepath.Join(dir, "zero.proto")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, zero} {
			if _, err := FromProtoFiles([]string{p}, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v, want it refused as not a regular file", p, err)
			}
			if _, err := FromDescriptorSet(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("descriptor set %s: %v, want it refused as not a regular file", p, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reading a FIFO or /dev/zero did not return")
	}
}
