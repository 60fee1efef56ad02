package grpcload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/benchgate/benchgate/load"
)

// Call is one unary method ready to be called with requests written as
// JSON. It is safe for concurrent use.
type Call struct {
	Method string // the path, "/package.Service/Method"
	In     protoreflect.MessageDescriptor
	Out    protoreflect.MessageDescriptor

	// types resolves Any and extensions; nil means the types linked into
	// this binary.
	types typeResolver

	mu    sync.RWMutex
	cache map[string]*encoded
}

// CacheSize bounds a Call's cache of messages by their JSON text.
const CacheSize = 4096

// encoded is a request built from one JSON text: the message, its wire
// form ready for the codec, or why the text does not fit.
type encoded struct {
	msg proto.Message
	buf mem.Buffer
	err error
}

type typeResolver interface {
	protoregistry.MessageTypeResolver
	protoregistry.ExtensionTypeResolver
}

// Prepare finds the unary method (see Descriptors.Method) and returns its
// Call.
func Prepare(ctx context.Context, d *Descriptors, method string) (*Call, error) {
	md, err := d.Method(ctx, method)
	if err != nil {
		return nil, err
	}
	return &Call{
		Method: "/" + string(md.Parent().FullName()) + "/" + string(md.Name()),
		In:     md.Input(),
		Out:    md.Output(),
		types:  resolver{d},
	}, nil
}

// Message builds the request message from its JSON form (protojson: field
// names as in the .proto or in lowerCamelCase). A field the message does
// not have, or a value of the wrong type, is an error that names it.
// Empty or blank JSON is the empty message. Messages are cached by their
// JSON text, as seeded request streams repeat: the message returned is
// shared and must not be modified.
func (c *Call) Message(json []byte) (proto.Message, error) {
	e := c.encode(json)
	return e.msg, e.err
}

func (c *Call) encode(json []byte) *encoded {
	c.mu.RLock()
	e := c.cache[string(json)]
	c.mu.RUnlock()
	if e != nil {
		return e
	}
	e = c.build(json)
	c.mu.Lock()
	if c.cache == nil {
		c.cache = make(map[string]*encoded)
	}
	if len(c.cache) >= CacheSize {
		for k := range c.cache { // any one
			delete(c.cache, k)
			break
		}
	}
	c.cache[string(json)] = e
	c.mu.Unlock()
	return e
}

func (c *Call) build(text []byte) *encoded {
	msg := dynamicpb.NewMessage(c.In)
	if len(bytes.TrimSpace(text)) > 0 {
		opts := protojson.UnmarshalOptions{Resolver: c.resolver()}
		if err := opts.Unmarshal(text, msg); err != nil {
			return &encoded{err: fmt.Errorf("request for %s does not fit %s: %s", c.Method, c.In.FullName(), protoError(err))}
		}
	}
	wire, err := proto.MarshalOptions{Deterministic: true}.Marshal(msg)
	if err != nil {
		return &encoded{err: fmt.Errorf("request for %s: %s", c.Method, protoError(err))}
	}
	return &encoded{msg: msg, buf: mem.SliceBuffer(wire)}
}

func (c *Call) resolver() typeResolver {
	if c.types == nil {
		return protoregistry.GlobalTypes
	}
	return c.types
}

// protoError is a protobuf error without its "proto:" prefix, which the
// library writes with a space or a no-break space at random.
func protoError(err error) string {
	s := strings.TrimPrefix(err.Error(), "proto:")
	return strings.TrimLeft(s, " \u00a0")
}

// Invoke makes one call of req (Body the JSON message, Header the
// metadata; the method is c's) on conn and returns the status code's name
// ("OK", "NotFound", ...) and, for OK, the response as compact JSON in a
// stable form (protojson with the .proto field names, unset fields left
// out), for comparing two servers' answers. A non-OK status the server
// answered is a result, not an error; err is set when the request does not
// fit the message type or the call got no answer from the server (ctx
// ended, or the connection failed).
func (c *Call) Invoke(ctx context.Context, conn grpc.ClientConnInterface, req *load.Request) (code string, responseJSON []byte, err error) {
	e := c.encode(req.Body)
	if e.err != nil {
		return "", nil, e.err
	}
	if len(req.Header) > 0 {
		md := toMD(req.Header)
		if old, ok := metadata.FromOutgoingContext(ctx); ok {
			md = metadata.Join(old, md)
		}
		ctx = metadata.NewOutgoingContext(ctx, md)
	}
	out := dynamicpb.NewMessage(c.Out)
	resp := rawResp{msg: out}
	err = conn.Invoke(ctx, c.Method, &rawReq{buf: e.buf}, &resp, grpc.ForceCodecV2(codec{}))
	if err != nil {
		st := status.Convert(err)
		// A server that ran out of the deadline we sent it answers
		// DeadlineExceeded; on a busy machine that answer can arrive
		// after our deadline passed but before our context's timer
		// fired. Past our deadline it is ours, not the server's answer.
		dl, has := ctx.Deadline()
		ours := has && st.Code() == codes.DeadlineExceeded && !time.Now().Before(dl)
		if ctx.Err() == nil && !ours && classify(err) == load.Status {
			return st.Code().String(), nil, nil
		}
		return st.Code().String(), nil, fmt.Errorf("call %s: %s: %s", c.Method, st.Code(), st.Message())
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true, Resolver: c.resolver()}.Marshal(out)
	if err != nil {
		return codes.OK.String(), nil, fmt.Errorf("call %s: rendering the response as JSON: %s", c.Method, protoError(err))
	}
	// protojson varies its whitespace on purpose; compact it away.
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return codes.OK.String(), nil, fmt.Errorf("call %s: rendering the response as JSON: %v", c.Method, err)
	}
	return codes.OK.String(), buf.Bytes(), nil
}

// toMD is h as gRPC metadata, whose keys are lower case.
func toMD(h http.Header) metadata.MD {
	md := make(metadata.MD, len(h))
	for k, vs := range h {
		lk := strings.ToLower(k)
		md[lk] = append(md[lk], vs...)
	}
	return md
}

// codec sends a request's wire form as it was encoded once, and decodes a
// response into the caller's message while noting its size. It sets no
// content-subtype (Name is ""), so requests carry "application/grpc", as
// grpc-go's own codec sends them.
type codec struct{}

type rawReq struct{ buf mem.Buffer }

type rawResp struct {
	msg  proto.Message
	size int
}

// unmarshal decodes responses. A proto2 required field left unset is not
// the load generator's business: AllowPartial skips that check, which
// costs allocations on dynamic messages.
var unmarshal = proto.UnmarshalOptions{AllowPartial: true}

func (codec) Name() string { return "" }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	r, ok := v.(*rawReq)
	if !ok {
		return nil, fmt.Errorf("grpcload codec: cannot send %T", v)
	}
	return mem.BufferSlice{r.buf}, nil
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	r, ok := v.(*rawResp)
	if !ok {
		return fmt.Errorf("grpcload codec: cannot receive into %T", v)
	}
	r.size = data.Len()
	if len(data) == 1 {
		return unmarshal.Unmarshal(data[0].ReadOnlyData(), r.msg)
	}
	b := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer b.Free()
	return unmarshal.Unmarshal(b.ReadOnlyData(), r.msg)
}
