package grpcload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// reflectionTimeout bounds one reflection exchange when the caller's
// context has no deadline of its own.
const reflectionTimeout = 30 * time.Second

// reflector is a client of the server reflection service. It speaks
// grpc.reflection.v1 and falls back to v1alpha, once and for all, when the
// server does not implement v1. The two versions' messages are the same on
// the wire, so v1 messages are sent and received throughout.
type reflector struct {
	conn grpc.ClientConnInterface
	md   metadata.MD

	mu    sync.Mutex
	alpha bool // the server answered Unimplemented for v1
}

// notFoundError is reflection's answer for a symbol the server does not know.
type notFoundError struct{ name string }

func (e *notFoundError) Error() string { return "symbol " + e.name + " not found" }

// session is one reflection stream, which lives in the context open
// returns with it: every ask of the session passes that context.
type session struct {
	r     *reflector
	send  func(*rpb.ServerReflectionRequest) error
	recv  func() (*rpb.ServerReflectionResponse, error)
	asked int
}

// open starts a session under ctx, bounded by reflectionTimeout when ctx
// has no deadline of its own; cancel ends its stream.
func (r *reflector) open(ctx context.Context) (s *session, sctx context.Context, cancel context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		sctx, cancel = context.WithCancel(ctx)
	} else {
		sctx, cancel = context.WithTimeout(ctx, reflectionTimeout)
	}
	return &session{r: r}, sctx, cancel
}

func (s *session) start(ctx context.Context) error {
	if len(s.r.md) > 0 {
		ctx = metadata.NewOutgoingContext(ctx, s.r.md)
	}
	s.r.mu.Lock()
	alpha := s.r.alpha
	s.r.mu.Unlock()
	if alpha {
		st, err := rpbalpha.NewServerReflectionClient(s.r.conn).ServerReflectionInfo(ctx)
		if err != nil {
			return err
		}
		s.send = func(req *rpb.ServerReflectionRequest) error {
			var a rpbalpha.ServerReflectionRequest
			if err := convert(req, &a); err != nil {
				return err
			}
			return st.Send(&a)
		}
		s.recv = func() (*rpb.ServerReflectionResponse, error) {
			a, err := st.Recv()
			if err != nil {
				return nil, err
			}
			var resp rpb.ServerReflectionResponse
			return &resp, convert(a, &resp)
		}
		return nil
	}
	st, err := rpb.NewServerReflectionClient(s.r.conn).ServerReflectionInfo(ctx)
	if err != nil {
		return err
	}
	s.send, s.recv = st.Send, st.Recv
	return nil
}

func convert(from, to proto.Message) error {
	b, err := proto.Marshal(from)
	if err != nil {
		return err
	}
	return proto.Unmarshal(b, to)
}

// ask sends req and returns the answer. The first exchange of a session
// finds the version the server speaks.
func (s *session) ask(ctx context.Context, req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	for {
		if s.send == nil {
			if err := s.start(ctx); err != nil {
				return nil, reflectionError(err)
			}
		}
		err := s.send(req)
		var resp *rpb.ServerReflectionResponse
		if err == nil {
			resp, err = s.recv()
		} else {
			// A failed Send's cause is reported by Recv.
			_, err = s.recv()
		}
		if err == nil {
			s.asked++
			return resp, nil
		}
		s.r.mu.Lock()
		retry := s.asked == 0 && !s.r.alpha && status.Code(err) == codes.Unimplemented
		if retry {
			s.r.alpha = true
		}
		s.r.mu.Unlock()
		if !retry {
			return nil, reflectionError(err)
		}
		// A new stream on v1alpha; the failed one ends with the
		// session's context.
		s.send, s.recv = nil, nil
	}
}

func reflectionError(err error) error {
	if status.Code(err) == codes.Unimplemented {
		return errors.New("server reflection: the server implements neither grpc.reflection.v1 nor v1alpha; give the scenario a .proto file or a descriptor set instead")
	}
	return fmt.Errorf("server reflection: %w", err)
}

func answerError(e *rpb.ErrorResponse, what string) error {
	return fmt.Errorf("server reflection: %s: %s: %s", what, codes.Code(e.GetErrorCode()), e.GetErrorMessage())
}

// resolve asks the server for the file defining name and every file it
// needs, and registers them. The caller holds d.mu.
func (d *Descriptors) resolve(ctx context.Context, name string) error {
	s, ctx, cancel := d.refl.open(ctx)
	defer cancel()
	resp, err := s.ask(ctx, &rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: name},
	})
	if err != nil {
		return err
	}
	if e := resp.GetErrorResponse(); e != nil {
		if codes.Code(e.GetErrorCode()) == codes.NotFound {
			return &notFoundError{name: name}
		}
		return answerError(e, "symbol "+name)
	}
	protos := map[string]*descriptorpb.FileDescriptorProto{}
	if err := addAnswer(protos, resp); err != nil {
		return err
	}
	// A server sends each file once per stream and may leave out imports;
	// ask for what is still missing by name.
	for {
		var missing []string
		for _, fdp := range protos {
			for _, dep := range fdp.GetDependency() {
				if _, ok := protos[dep]; ok {
					continue
				}
				if _, err := d.files.FindFileByPath(dep); err == nil {
					continue
				}
				if !slices.Contains(missing, dep) {
					missing = append(missing, dep)
				}
			}
		}
		if len(missing) == 0 {
			break
		}
		slices.Sort(missing)
		progress := false
		for _, dep := range missing {
			resp, err := s.ask(ctx, &rpb.ServerReflectionRequest{
				MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: dep},
			})
			if err != nil {
				return err
			}
			if e := resp.GetErrorResponse(); e != nil {
				if _, err := protoregistry.GlobalFiles.FindFileByPath(dep); err == nil {
					continue // a well-known file: add takes this binary's copy
				}
				return answerError(e, "file "+dep)
			}
			n := len(protos)
			if err := addAnswer(protos, resp); err != nil {
				return err
			}
			if len(protos) > n {
				progress = true
			}
		}
		if !progress {
			break // add reports what is still missing
		}
	}
	if err := d.add(protos); err != nil {
		return fmt.Errorf("server reflection: %w", err)
	}
	return nil
}

func addAnswer(protos map[string]*descriptorpb.FileDescriptorProto, resp *rpb.ServerReflectionResponse) error {
	fdr := resp.GetFileDescriptorResponse()
	if fdr == nil {
		return errors.New("server reflection: the server answered without file descriptors")
	}
	for _, b := range fdr.GetFileDescriptorProto() {
		fdp := new(descriptorpb.FileDescriptorProto)
		if err := proto.Unmarshal(b, fdp); err != nil {
			return fmt.Errorf("server reflection: a file descriptor that does not decode: %v", err)
		}
		if _, ok := protos[fdp.GetName()]; !ok {
			protos[fdp.GetName()] = fdp
		}
	}
	return nil
}

// listServices returns the names of the services the server offers, sorted.
func (r *reflector) listServices(ctx context.Context) ([]string, error) {
	s, ctx, cancel := r.open(ctx)
	defer cancel()
	resp, err := s.ask(ctx, &rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	if err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		return nil, answerError(e, "list services")
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	slices.Sort(names)
	return names, nil
}
