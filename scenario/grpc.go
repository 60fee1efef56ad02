package scenario

import (
	"path/filepath"
	"regexp"
	"strings"
)

// HealthGRPC is a target's health when it is the standard gRPC health
// service (grpc.health.v1.Health/Check), or, where the server has none,
// a connection that becomes ready.
const HealthGRPC = "grpc"

// KindGRPC is a scenario whose classes are gRPC calls.
const KindGRPC = "grpc"

// GRPCSettings is the grpc section of a scenario of gRPC classes: where
// the message types come from and how calls are sent.
type GRPCSettings struct {
	// Descriptors: "reflection" (the server's reflection service, the
	// default), "proto" (ProtoFiles compiled in process) or
	// "descriptor_set" (a FileDescriptorSet file).
	Descriptors   string
	ProtoFiles    []string // absolute
	ImportPaths   []string // absolute
	DescriptorSet string   // absolute
	// Connections spreads each rung's calls over this many connections.
	Connections int
}

// grpcMetadataKeyRE is a gRPC metadata key.
var grpcMetadataKeyRE = regexp.MustCompile(`^[0-9a-z_.-]+$`)

// printableASCII says whether s is printable ASCII, as gRPC metadata
// values must be.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// grpcMethodRE is a full method name: package.Service/Method (the package
// may be empty), with an optional leading slash.
var grpcMethodRE = regexp.MustCompile(`^/?([A-Za-z_][A-Za-z0-9_]*\.)*[A-Za-z_][A-Za-z0-9_]*/[A-Za-z_][A-Za-z0-9_]*$`)

// grpcClass reads a class's grpc field: the method, the request message
// as a JSON template, and metadata templates. It is a request whose
// method is "GRPC", whose path is "/package.Service/Method" and whose body
// is the message: the seeded stream renders it like any request.
func (l *loader) grpcClass(n *node, f string) *reqSrc {
	m, ok := l.fields(n, f, "method", "message", "metadata")
	if !ok {
		return nil
	}
	r := &reqSrc{method: "GRPC"}
	v := m["method"]
	if v == nil {
		line, col := n.reportPos()
		l.errAt(line, col, f+".method", "missing (want the full method name, e.g. benchgate.demo.Inventory/Get)")
		return nil
	}
	s, ok := l.nonEmptyStr(v, f+".method")
	if !ok {
		return nil
	}
	if !grpcMethodRE.MatchString(s) {
		l.errNode(v, f+".method", "%q is not a full method name (want package.Service/Method, e.g. benchgate.demo.Inventory/Get)", v.errText())
		return nil
	}
	if s[0] != '/' {
		s = "/" + s
	}
	r.path = l.template(s, v, f+".method")
	if r.path == nil {
		return nil
	}
	msg := "{}"
	mn := n
	if mv := m["message"]; mv != nil {
		if t, ok := l.str(mv, f+".message"); ok {
			msg, mn = t, mv
		}
	}
	r.body = l.template(msg, mn, f+".message")
	if h := m["metadata"]; h != nil {
		r.header = l.kvTemplates(h, f+".metadata", true)
		for i, k := range h.keys {
			// gRPC metadata keys: lower case letters, digits, - _ . ;
			// grpc- is the protocol's own. A key outside them fails
			// every call in the client, before it is sent.
			if !grpcMetadataKeyRE.MatchString(k.text) || strings.HasPrefix(k.text, "grpc-") {
				l.errAt(k.line, k.col, join(f+".metadata", k.text), "%q is not a gRPC metadata key (want lower case letters, digits, - _ . and no grpc- prefix)", k.text)
			} else if v := h.vals[i]; v.kind == kindScalar && !strings.Contains(v.text, "{{") && !printableASCII(v.text) {
				l.errNode(v, join(f+".metadata", k.text), "gRPC metadata values are printable ASCII (for binary values use a key ending in -bin)")
			}
		}
	}
	r.tmpl = RequestTemplate{Method: r.method, Path: s}
	if r.header != nil {
		r.tmpl.Header = map[string]string{}
		for _, kv := range r.header {
			r.tmpl.Header[kv.key] = kv.t.src
		}
	}
	if r.body != nil {
		r.tmpl.Body = r.body.src
	}
	return r
}

// grpcSection reads the scenario's grpc section.
func (l *loader) grpcSection(n *node) {
	g := &GRPCSettings{Descriptors: "reflection", Connections: 1}
	l.s.GRPC = g
	if n == nil {
		return
	}
	m, ok := l.fields(n, "grpc", "descriptors", "proto", "import_paths", "descriptor_set", "connections")
	if !ok {
		return
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(l.s.Dir, p)
	}
	if v := m["proto"]; v != nil {
		if files, ok := l.strList(v, "grpc.proto"); ok && len(files) > 0 {
			for _, f := range files {
				g.ProtoFiles = append(g.ProtoFiles, abs(f))
			}
			g.Descriptors = "proto"
		}
	}
	if v := m["import_paths"]; v != nil {
		if paths, ok := l.strList(v, "grpc.import_paths"); ok {
			for _, p := range paths {
				g.ImportPaths = append(g.ImportPaths, abs(p))
			}
		}
	}
	if v := m["descriptor_set"]; v != nil {
		if s, ok := l.nonEmptyStr(v, "grpc.descriptor_set"); ok {
			if g.Descriptors == "proto" {
				l.errAt(v.keyLine, v.keyCol, "grpc.descriptor_set", "proto and descriptor_set are exclusive")
			}
			g.DescriptorSet, g.Descriptors = abs(s), "descriptor_set"
		}
	}
	if v := m["descriptors"]; v != nil {
		if s, ok := l.str(v, "grpc.descriptors"); ok {
			switch {
			case s == "reflection" && (g.ProtoFiles != nil || g.DescriptorSet != ""):
				l.errNode(v, "grpc.descriptors", "reflection, but proto or descriptor_set is given too")
			case s == "reflection", s == "proto" && g.ProtoFiles != nil, s == "descriptor_set" && g.DescriptorSet != "":
				g.Descriptors = s
			case s == "proto" || s == "descriptor_set":
				l.errNode(v, "grpc.descriptors", "%s needs grpc.%s", s, s)
			default:
				l.errNode(v, "grpc.descriptors", "%q: want reflection (the server's), proto (files compiled here) or descriptor_set", v.errText())
			}
		}
	}
	if v := m["connections"]; v != nil {
		if c, ok := l.intRange(v, "grpc.connections", 1, MaxConnections); ok {
			g.Connections = c
		}
	}
}

// grpcKind makes a scenario of gRPC classes a KindGRPC scenario: every
// class a gRPC call (a mix of gRPC classes included), the grpc section
// read, targets checked for health by the gRPC health service. A grpc
// section or health: grpc in a scenario of HTTP classes is an error.
func (l *loader) grpcKind(m map[string]*node) {
	var grpcs, https int
	for _, c := range l.s.AllClasses {
		switch {
		case c.GRPC:
			grpcs++
		case c.Request != nil:
			https++
		}
	}
	if grpcs == 0 {
		if n := m["grpc"]; n != nil {
			l.errAt(n.keyLine, n.keyCol, "grpc", "only for a scenario of gRPC classes (classes with grpc: {method: ...})")
		}
		for _, t := range []*Target{&l.s.Baseline, &l.s.Candidate} {
			if n := l.healthPos[t.Name]; t.Health == HealthGRPC && n != nil {
				l.errNode(n, "targets."+t.Name+".health", "grpc is the health of a gRPC service, but the classes are HTTP requests (want a path, e.g. /healthz)")
			}
		}
		return
	}
	if https > 0 {
		l.errAt(1, 1, "classes", "%d gRPC and %d HTTP classes: a scenario measures one kind of service (split it in two)", grpcs, https)
		return
	}
	l.s.Kind = KindGRPC
	l.grpcSection(m["grpc"])
	for _, t := range []*Target{&l.s.Baseline, &l.s.Candidate} {
		if n := l.healthPos[t.Name+".url"]; n != nil && strings.HasPrefix(t.URL, "https://") {
			l.errNode(n, "targets."+t.Name+".url", "gRPC targets are reached over plaintext HTTP/2 (no TLS yet): want http://")
		}
	}
	for _, t := range []*Target{&l.s.Baseline, &l.s.Candidate} {
		switch n := l.healthPos[t.Name]; {
		case n == nil:
			t.Health = HealthGRPC
		case t.Health != HealthGRPC:
			l.errNode(n, "targets."+t.Name+".health", "%q: a gRPC service's health is grpc (the standard health service, else a ready connection)", n.errText())
		}
	}
	if len(l.s.Load.Defaults.Query) > 0 {
		l.errAt(1, 1, "load.defaults.query", "not for gRPC classes (a call has no query string)")
	}
}
