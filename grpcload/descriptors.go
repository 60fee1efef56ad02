// Package grpcload is benchgate's gRPC client side: message types from
// server reflection, .proto files or descriptor sets; requests as dynamic
// messages built from JSON; the gRPC protocol of the closed-loop load
// core (package load), unary calls with each message encoded once, as
// httpload is its HTTP one; the standard health check; and single calls
// rendered as JSON for the agreement check. No generated code is needed.
package grpcload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/benchgate/benchgate/internal/fsx"
	"github.com/bufbuild/protocompile"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Descriptors is where message types come from: a server's reflection
// service, resolved lazily service by service, or a fixed set of files
// compiled from .proto sources or read from a descriptor set. It is safe
// for concurrent use.
type Descriptors struct {
	mu    sync.RWMutex
	files *protoregistry.Files
	types *dynamicpb.Types
	// origin says where the descriptors came from, for errors.
	origin string
	// refl is the reflection client; nil for a fixed set.
	refl *reflector
}

// FromReflection returns descriptors resolved through conn's server
// reflection service (grpc.reflection.v1, falling back to v1alpha for older
// servers), one service at a time when Method first asks for it. Nothing is
// sent before that. ctx is not retained: only its outgoing metadata is,
// and it is sent with every reflection call (for a server that wants
// credentials on reflection too).
func FromReflection(ctx context.Context, conn grpc.ClientConnInterface) *Descriptors {
	d := newDescriptors("server reflection")
	md, _ := metadata.FromOutgoingContext(ctx)
	d.refl = &reflector{conn: conn, md: md.Copy()}
	return d
}

// FromProtoFiles compiles .proto files in process. importPaths are the
// directories imports are resolved against, as protoc's -I; with none,
// each file's own directory is one. A file is named by its path (under an
// import path, or relative to one). The well-known google/protobuf imports
// are always available. A file that does not compile is refused with
// file:line:col of each error.
func FromProtoFiles(files []string, importPaths []string) (*Descriptors, error) {
	if len(files) == 0 {
		return nil, errors.New("proto files: none given")
	}
	if len(importPaths) == 0 {
		for _, f := range files {
			dir := filepath.Dir(f)
			if !slices.Contains(importPaths, dir) {
				importPaths = append(importPaths, dir)
			}
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		n, err := importName(f, importPaths)
		if err != nil {
			return nil, err
		}
		names[i] = n
	}

	var errs []error
	rep := reporter.NewReporter(func(e reporter.ErrorWithPos) error {
		pos := e.GetPosition()
		errs = append(errs, fmt.Errorf("%s:%d:%d: %v", diskPath(pos.Filename, importPaths), pos.Line, pos.Col, e.Unwrap()))
		if len(errs) >= 10 {
			return e // enough: stop
		}
		return nil
	}, nil)
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: importPaths,
			// The .proto files come with the pull request: regular
			// files only (a FIFO would block, /dev/zero never end),
			// read through a limit.
			Accessor: func(path string) (io.ReadCloser, error) { return fsx.OpenLimited(path, MaxProtoBytes) }}),
		Reporter: rep,
		// One file at a time: errors come in a stable order.
		MaxParallelism: 1,
	}
	out, err := c.Compile(context.Background(), names...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("proto files: %w", errors.Join(errs...))
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) && errors.Is(err, os.ErrNotExist) {
			name := pe.Path
			for _, ip := range importPaths {
				if rel, ok := strings.CutPrefix(name, filepath.Clean(ip)+string(filepath.Separator)); ok {
					name = rel
					break
				}
			}
			return nil, fmt.Errorf("proto files: %s not found under the import paths %s", name, strings.Join(importPaths, ", "))
		}
		return nil, fmt.Errorf("proto files: %w", err)
	}

	protos := map[string]*descriptorpb.FileDescriptorProto{}
	var walk func(fd protoreflect.FileDescriptor)
	walk = func(fd protoreflect.FileDescriptor) {
		if _, ok := protos[fd.Path()]; ok {
			return
		}
		protos[fd.Path()] = protodesc.ToFileDescriptorProto(fd)
		imps := fd.Imports()
		for i := range imps.Len() {
			walk(imps.Get(i).FileDescriptor)
		}
	}
	for _, fd := range out {
		walk(fd)
	}
	d := newDescriptors("proto files " + strings.Join(files, ", "))
	if err := d.add(protos); err != nil {
		return nil, fmt.Errorf("proto files: %w", err)
	}
	return d, nil
}

// importName is file's name relative to the import path it is under, as
// protoc names a file given on its command line.
func importName(file string, importPaths []string) (string, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	for _, ip := range importPaths {
		ipAbs, err := filepath.Abs(ip)
		if err != nil {
			continue
		}
		if rel, err := filepath.Rel(ipAbs, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel), nil
		}
	}
	// Not a path under an import path: perhaps a name relative to one.
	if !filepath.IsAbs(file) {
		for _, ip := range importPaths {
			if _, err := os.Stat(filepath.Join(ip, file)); err == nil {
				return filepath.ToSlash(filepath.Clean(file)), nil
			}
		}
	}
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("proto files: %w", err)
	}
	return "", fmt.Errorf("proto files: %s is not under any import path (%s)", file, strings.Join(importPaths, ", "))
}

// diskPath turns a compiler file name back into the path a person can open.
func diskPath(name string, importPaths []string) string {
	for _, ip := range importPaths {
		p := filepath.Join(ip, filepath.FromSlash(name))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return name
}

// Bounds of the files a scenario's grpc section names (they come with the
// pull request): one .proto file, and a descriptor set.
const (
	MaxProtoBytes         = 16 << 20
	MaxDescriptorSetBytes = 64 << 20
)

// FromDescriptorSet reads a serialized google.protobuf.FileDescriptorSet,
// as written by protoc -o (with --include_imports) or buf build -o; a path
// ending in .json is read as the set's JSON form. Imports of the
// well-known google/protobuf files may be left out of the set.
func FromDescriptorSet(path string) (*Descriptors, error) {
	b, err := fsx.ReadFileLimited(path, MaxDescriptorSetBytes)
	if err != nil {
		return nil, fmt.Errorf("descriptor set: %w", err)
	}
	var set descriptorpb.FileDescriptorSet
	if strings.EqualFold(filepath.Ext(path), ".json") {
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, &set)
	} else {
		err = proto.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, &set)
	}
	if err != nil {
		return nil, fmt.Errorf("descriptor set %s: not a google.protobuf.FileDescriptorSet: %v", path, err)
	}
	if len(set.File) == 0 {
		return nil, fmt.Errorf("descriptor set %s: holds no files", path)
	}
	protos := map[string]*descriptorpb.FileDescriptorProto{}
	for _, f := range set.File {
		protos[f.GetName()] = f
	}
	d := newDescriptors("descriptor set " + path)
	if err := d.add(protos); err != nil {
		var me *missingError
		if errors.As(err, &me) {
			return nil, fmt.Errorf("descriptor set %s: %w (was it written with protoc --include_imports?)", path, err)
		}
		return nil, fmt.Errorf("descriptor set %s: %w", path, err)
	}
	return d, nil
}

func newDescriptors(origin string) *Descriptors {
	files := new(protoregistry.Files)
	return &Descriptors{files: files, types: dynamicpb.NewTypes(files), origin: origin}
}

type missingError struct{ file, dep string }

func (e *missingError) Error() string {
	return fmt.Sprintf("%s imports %s, which is missing", e.file, e.dep)
}

// add registers protos, each after its imports. An import that is neither
// in protos nor registered yet is taken from the well-known types linked
// into this binary, else refused. The caller holds d.mu or owns d.
func (d *Descriptors) add(protos map[string]*descriptorpb.FileDescriptorProto) error {
	names := make([]string, 0, len(protos))
	for n := range protos {
		names = append(names, n)
	}
	slices.Sort(names)
	visiting := map[string]bool{}
	var reg func(name, from string) error
	reg = func(name, from string) error {
		if _, err := d.files.FindFileByPath(name); err == nil {
			return nil
		}
		fdp, ok := protos[name]
		if !ok {
			if fd, err := protoregistry.GlobalFiles.FindFileByPath(name); err == nil {
				return d.files.RegisterFile(fd)
			}
			return &missingError{file: from, dep: name}
		}
		if visiting[name] {
			return fmt.Errorf("%s imports itself through %s", name, from)
		}
		visiting[name] = true
		for _, dep := range fdp.GetDependency() {
			if err := reg(dep, name); err != nil {
				return err
			}
		}
		fd, err := protodesc.NewFile(fdp, d.files)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		return d.files.RegisterFile(fd)
	}
	for _, n := range names {
		if err := reg(n, n); err != nil {
			return err
		}
	}
	return nil
}

// Method finds the unary method fullName, "package.Service/Method" (a
// leading "/" is accepted, as is "package.Service.Method"). The error says
// which services or methods exist when the service or the method is
// unknown, and refuses streaming methods: only unary calls are supported.
func (d *Descriptors) Method(ctx context.Context, fullName string) (protoreflect.MethodDescriptor, error) {
	svcName, mName, err := splitMethod(fullName)
	if err != nil {
		return nil, err
	}
	sd, err := d.service(ctx, svcName)
	if err != nil {
		return nil, err
	}
	md := sd.Methods().ByName(protoreflect.Name(mName))
	if md == nil {
		var have []string
		ms := sd.Methods()
		for i := range ms.Len() {
			have = append(have, string(ms.Get(i).Name()))
		}
		return nil, fmt.Errorf("unknown method %s: service %s has no method %q; its methods: %s",
			fullName, svcName, mName, listOrNone(have))
	}
	switch {
	case md.IsStreamingClient() && md.IsStreamingServer():
		return nil, fmt.Errorf("method %s/%s is a bidirectional streaming method: only unary methods are supported", svcName, mName)
	case md.IsStreamingClient():
		return nil, fmt.Errorf("method %s/%s is a client streaming method: only unary methods are supported", svcName, mName)
	case md.IsStreamingServer():
		return nil, fmt.Errorf("method %s/%s is a server streaming method: only unary methods are supported", svcName, mName)
	}
	return md, nil
}

func splitMethod(full string) (svc, method string, err error) {
	s := strings.TrimPrefix(full, "/")
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		i = strings.LastIndexByte(s, '.')
	}
	if i <= 0 || i == len(s)-1 {
		return "", "", fmt.Errorf("method %q: want package.Service/Method", full)
	}
	svc, method = s[:i], s[i+1:]
	if !protoreflect.FullName(svc).IsValid() || !protoreflect.Name(method).IsValid() {
		return "", "", fmt.Errorf("method %q: want package.Service/Method", full)
	}
	return svc, method, nil
}

// service finds the service name, through reflection when it is not known
// yet.
func (d *Descriptors) service(ctx context.Context, name string) (protoreflect.ServiceDescriptor, error) {
	d.mu.RLock()
	desc, err := d.files.FindDescriptorByName(protoreflect.FullName(name))
	d.mu.RUnlock()
	if err != nil && d.refl != nil {
		d.mu.Lock()
		err = d.resolve(ctx, name)
		if err == nil {
			desc, err = d.files.FindDescriptorByName(protoreflect.FullName(name))
		}
		d.mu.Unlock()
	}
	var nf *notFoundError
	if errors.As(err, &nf) || errors.Is(err, protoregistry.NotFound) {
		return nil, d.unknownService(ctx, name)
	}
	if err != nil {
		return nil, err
	}
	sd, ok := desc.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is %s, not a service", name, kindOf(desc))
	}
	return sd, nil
}

func (d *Descriptors) unknownService(ctx context.Context, name string) error {
	var have []string
	if d.refl != nil {
		var err error
		have, err = d.refl.listServices(ctx)
		if err != nil {
			return fmt.Errorf("unknown service %s: the server's reflection does not know it (listing its services failed: %v)", name, err)
		}
		return fmt.Errorf("unknown service %s: the server offers %s", name, listOrNone(have))
	}
	d.mu.RLock()
	d.files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		ss := fd.Services()
		for i := range ss.Len() {
			have = append(have, string(ss.Get(i).FullName()))
		}
		return true
	})
	d.mu.RUnlock()
	slices.Sort(have)
	return fmt.Errorf("unknown service %s: services in the %s: %s", name, d.origin, listOrNone(have))
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func kindOf(d protoreflect.Descriptor) string {
	switch d.(type) {
	case protoreflect.MessageDescriptor:
		return "a message"
	case protoreflect.EnumDescriptor:
		return "an enum"
	case protoreflect.MethodDescriptor:
		return "a method"
	case protoreflect.FieldDescriptor:
		return "a field"
	}
	return "not a service"
}

// resolver is d's types for protojson and Any, read under d.mu since a
// reflection source may register files while messages are built.
type resolver struct{ d *Descriptors }

func (r resolver) FindMessageByName(name protoreflect.FullName) (protoreflect.MessageType, error) {
	r.d.mu.RLock()
	mt, err := r.d.types.FindMessageByName(name)
	r.d.mu.RUnlock()
	if err != nil {
		return protoregistry.GlobalTypes.FindMessageByName(name)
	}
	return mt, nil
}

func (r resolver) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	r.d.mu.RLock()
	mt, err := r.d.types.FindMessageByURL(url)
	r.d.mu.RUnlock()
	if err != nil {
		return protoregistry.GlobalTypes.FindMessageByURL(url)
	}
	return mt, nil
}

func (r resolver) FindExtensionByName(name protoreflect.FullName) (protoreflect.ExtensionType, error) {
	r.d.mu.RLock()
	defer r.d.mu.RUnlock()
	return r.d.types.FindExtensionByName(name)
}

func (r resolver) FindExtensionByNumber(message protoreflect.FullName, field protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	r.d.mu.RLock()
	defer r.d.mu.RUnlock()
	return r.d.types.FindExtensionByNumber(message, field)
}
