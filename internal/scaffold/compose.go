package scaffold

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ComposeFiles are the names of a compose file at a project's root, in
// the order docker compose (v2) looks for them: the first one there is
// the project's.
var ComposeFiles = []string{"compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"}

// The bounds of the read of a compose file: a larger one is not read, and
// the shapes the YAML parser (goccy/go-yaml) handles in time and memory
// that grow with their square are refused before it sees the text.
const (
	MaxComposeBytes = 1 << 20
	// maxFlowDepth, maxColumn and maxKeys bound flow nesting ([ and {),
	// the column a line's content starts at (block nesting) and the keys
	// at one indentation under one parent.
	maxFlowDepth = 64
	maxColumn    = 512
	maxKeys      = 2000
)

// dbImages are the words in an image's name that make a service look
// like a database.
var dbImages = []string{"postgres", "mysql", "mariadb", "redis", "mongo"}

// Compose is what Detect read of a compose project's file: enough to
// write its scenario. It is a guess, not compose's reading of the file
// (compose-go reads it when the gate runs): no interpolation, no
// include, extends or override files.
type Compose struct {
	File string // the file's name at the root: one of ComposeFiles
	// Problem says why the file could not be read ("larger than 1 MiB",
	// "not YAML init can read", "no services"), "" when it was: the
	// scenario's service and port are then guesses to fill in.
	Problem string
	// Services are the file's services in file order: those whose name a
	// scenario can hold (compose's letters, digits, '.', '_', '-').
	Services []string
	// Service is the service guessed to receive the load: the first
	// (not a database) with ports or a build when Sure, else the first
	// service, else "app".
	Service string
	Sure    bool
	// PortFrom says where Project.Port came from: "ports" or "expose"
	// of Service, "Dockerfile" (its build's EXPOSE), "" when none was found.
	PortFrom string
	// TagVar is the variable the load service's image tag comes from,
	// the scenario's env setting it to base and pr. TagReady says the
	// file's image already ends in :${TagVar} (or :${TagVar:-x}); else
	// TagVar is made from the service's name (API_TAG) and Image is the
	// repository the file should name, the file's own when it has a plain
	// one, else PROJECT-SERVICE as docker compose names a built image.
	TagVar   string
	TagReady bool
	Image    string
	// DB is a service that looks like a database (its image names
	// postgres, mysql, mariadb, redis or mongo, DBKind says which), ""
	// when none does: the setup and memory examples name it.
	DB, DBKind string
}

// findCompose is the compose file at dir's root, "" when there is none.
func findCompose(dir string) string {
	for _, name := range ComposeFiles {
		if regular(filepath.Join(dir, name)) {
			return name
		}
	}
	return ""
}

// readCompose reads project p's compose file, name at p.Dir's root,
// into p.Compose and p.Port. It never fails: a file it cannot read is a
// Problem, and guesses to fill in.
func readCompose(p *Project, name string) {
	c := &Compose{File: name}
	p.Compose = c
	defer c.fill(p)
	path := filepath.Join(p.Dir, name)
	if fi, err := os.Stat(path); err != nil {
		c.Problem = "unreadable"
		return
	} else if fi.Size() > MaxComposeBytes {
		c.Problem = "larger than 1 MiB, not read"
		return
	}
	src, err := readHead(path, MaxComposeBytes+1)
	switch {
	case err != nil:
		c.Problem = "unreadable"
		return
	case len(src) > MaxComposeBytes:
		c.Problem = "larger than 1 MiB, not read"
		return
	case !shapeBounded(src):
		c.Problem = "not YAML init can read"
		return
	}
	services, ok := parseServices(src)
	if !ok {
		c.Problem = "not YAML init can read"
		return
	}
	if len(services) == 0 {
		c.Problem = "no services in it"
		return
	}
	c.guess(p, services)
}

// service is what readCompose looks at in one service of the file.
type service struct {
	name, image string
	ports       []ast.Node // ports: entries
	expose      []ast.Node // expose: entries
	build       ast.Node   // build:, nil when none
	anchors     map[string]ast.Node
}

// guess picks the load service, its port and image, and a database.
func (c *Compose) guess(p *Project, services []*service) {
	isDB := func(s *service) string {
		img := strings.ToLower(s.image)
		for _, w := range dbImages {
			if strings.Contains(img, w) {
				return w
			}
		}
		return ""
	}
	var load *service
	for _, s := range services {
		c.Services = append(c.Services, s.name)
		if load == nil && isDB(s) == "" && (len(s.ports) > 0 || s.build != nil) {
			load = s
		}
	}
	c.Sure = load != nil
	for _, s := range services {
		if load == nil && isDB(s) == "" {
			load = s
		}
	}
	if load == nil {
		load = services[0]
	}
	c.Service = load.name
	for _, s := range services {
		if kind := isDB(s); kind != "" && s != load {
			c.DB, c.DBKind = s.name, kind
			break
		}
	}

	for _, e := range load.ports {
		if p.Port = portOf(e, load.anchors); p.Port != 0 {
			c.PortFrom = "ports"
			break
		}
	}
	for _, e := range load.expose {
		if p.Port != 0 {
			break
		}
		if p.Port = portOf(e, load.anchors); p.Port != 0 {
			c.PortFrom = "expose"
		}
	}
	if p.Port == 0 && load.build != nil {
		if p.Port = buildExposed(p.Dir, load.build, load.anchors); p.Port != 0 {
			c.PortFrom = "Dockerfile"
		}
	}

	if m := taggedRE.FindStringSubmatch(load.image); m != nil && !reserved(m[1]) {
		c.TagVar, c.TagReady = m[1], true
		return
	}
	if repo := imageRepo(load.image); repo != "" {
		c.Image = repo
	}
}

// fill gives what the file did not a value the scenario loader accepts.
func (c *Compose) fill(p *Project) {
	if c.Service == "" {
		c.Service = "app"
	}
	if c.TagVar == "" {
		c.TagVar = envName(c.Service) + "_TAG"
	}
	if c.Image == "" && !c.TagReady {
		c.Image = repoName(p.Name + "-" + c.Service)
	}
}

// reserved says the workflow's script must not set the variable name
// for docker compose's command: the shell's, the runner's, docker's and
// compose's own.
func reserved(name string) bool {
	switch strings.ToUpper(name) {
	case "PATH", "HOME", "IFS", "PWD", "SHELL", "USER", "BASE_SHA":
		return true
	}
	for _, prefix := range []string{"GITHUB_", "RUNNER_", "DOCKER_", "COMPOSE_", "BUILDX_"} {
		if strings.HasPrefix(strings.ToUpper(name), prefix) {
			return true
		}
	}
	return false
}

// serviceName is a compose service name (the compose specification's
// pattern).
var serviceName = regexp.MustCompile(`^[a-zA-Z0-9._-]+$`)

// taggedRE is an image whose tag is a variable: name:${VAR} or
// name:${VAR:-default} (or -default).
var taggedRE = regexp.MustCompile(`^.*:\$\{([A-Za-z_][A-Za-z0-9_]*)(:?-[^}$]*)?\}$`)

// repoRE is a docker repository name a comment and a script may hold:
// lower case, an optional registry host (with a port), path components.
var repoRE = regexp.MustCompile(`^[a-z0-9]+([._-]+[a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*$`)

// imageRepo is image's repository (without its tag or digest) when it is
// a plain one, else "".
func imageRepo(image string) string {
	image, _, _ = strings.Cut(image, "@")
	if i := strings.LastIndexByte(image, ':'); i > strings.LastIndexByte(image, '/') {
		image = image[:i]
	}
	if !repoRE.MatchString(image) {
		return ""
	}
	return image
}

// envName is s made an environment variable's name: upper case, runs
// of other characters as '_', never starting with a digit.
func envName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "_") {
			b.WriteByte('_')
		}
	}
	name := strings.TrimSuffix(b.String(), "_")
	if name == "" {
		return "APP"
	}
	if name[0] >= '0' && name[0] <= '9' {
		name = "S" + name
	}
	return name
}

// parseServices parses src and returns the services of its first
// document, in file order; false when src is not YAML or its services
// are not a mapping. The goccy parser has panicked on odd input before:
// that is a file init cannot read, too.
func parseServices(src []byte) (services []*service, ok bool) {
	defer func() {
		if recover() != nil {
			services, ok = nil, false
		}
	}()
	f, err := parser.ParseBytes(src, 0)
	if err != nil || len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, err == nil
	}
	anchors := map[string]ast.Node{}
	ast.Walk(visitor(func(n ast.Node) {
		if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
			anchors[a.Name.GetToken().Value] = a.Value
		}
	}), f.Docs[0].Body)
	top, ok := mapping(f.Docs[0].Body, anchors)
	if !ok {
		return nil, false
	}
	svcs := get(top, "services", anchors)
	if svcs == nil {
		return nil, true
	}
	if _, null := deref(svcs, anchors).(*ast.NullNode); null {
		return nil, true
	}
	entries, ok := mapping(svcs, anchors)
	if !ok {
		return nil, false
	}
	for _, mv := range entries {
		name := keyName(mv, anchors)
		if !serviceName.MatchString(name) {
			continue
		}
		s := &service{name: name, anchors: anchors}
		fields, _ := mapping(mv.Value, anchors)
		s.image, _ = scalar(get(fields, "image", anchors), anchors)
		s.ports = sequence(get(fields, "ports", anchors), anchors)
		s.expose = sequence(get(fields, "expose", anchors), anchors)
		if b := get(fields, "build", anchors); b != nil {
			if _, null := deref(b, anchors).(*ast.NullNode); !null {
				s.build = b
			}
		}
		services = append(services, s)
	}
	return services, true
}

// visitor calls f on every node.
type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor {
	v(n)
	return v
}

// deref is what n stands for: an anchor's value, an alias's anchor, a
// tag's value (a few hops at most: an alias of an alias).
func deref(n ast.Node, anchors map[string]ast.Node) ast.Node {
	for range 8 {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			if v.Value == nil {
				return nil
			}
			n = anchors[v.Value.GetToken().Value]
		default:
			return n
		}
	}
	return nil
}

// mapping is n's entries when it is a mapping, those of its merge keys
// (<<: *x) after its own; false when it is not a mapping.
func mapping(n ast.Node, anchors map[string]ast.Node) ([]*ast.MappingValueNode, bool) {
	var own []*ast.MappingValueNode
	switch v := deref(n, anchors).(type) {
	case *ast.MappingNode:
		own = v.Values
	case *ast.MappingValueNode:
		own = []*ast.MappingValueNode{v}
	default:
		return nil, false
	}
	var out, merged []*ast.MappingValueNode
	for _, mv := range own {
		if _, ok := mv.Key.(*ast.MergeKeyNode); !ok {
			out = append(out, mv)
			continue
		}
		srcs := []ast.Node{mv.Value}
		if seq, ok := deref(mv.Value, anchors).(*ast.SequenceNode); ok {
			srcs = seq.Values
		}
		for _, s := range srcs {
			switch v := deref(s, anchors).(type) {
			case *ast.MappingNode:
				merged = append(merged, v.Values...)
			case *ast.MappingValueNode:
				merged = append(merged, v)
			}
		}
	}
	return append(out, merged...), true
}

// get is the value of key in a mapping's entries (the first: a merge's
// come after the mapping's own), nil when it has none.
func get(entries []*ast.MappingValueNode, key string, anchors map[string]ast.Node) ast.Node {
	for _, mv := range entries {
		if keyName(mv, anchors) == key {
			if mv.Value == nil {
				return &ast.NullNode{}
			}
			return mv.Value
		}
	}
	return nil
}

func keyName(mv *ast.MappingValueNode, anchors map[string]ast.Node) string {
	var k ast.Node = mv.Key
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		k = mk.Value
	}
	s, _ := scalar(k, anchors)
	return s
}

// scalar is n's text when it is a scalar.
func scalar(n ast.Node, anchors map[string]ast.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	switch v := deref(n, anchors).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return v.GetToken().Value, true
	}
	return "", false
}

// sequence is n's items when it is a sequence.
func sequence(n ast.Node, anchors map[string]ast.Node) []ast.Node {
	if n == nil {
		return nil
	}
	if seq, ok := deref(n, anchors).(*ast.SequenceNode); ok {
		return seq.Values
	}
	return nil
}

// portOf is the container port of a ports: or expose: entry: "8080:80",
// "127.0.0.1:8080:80/tcp", "80", 80, "8000-8001" (the first), or the
// long form's target; 0 for a UDP one, a variable or anything else.
func portOf(n ast.Node, anchors map[string]ast.Node) int {
	s, ok := scalar(n, anchors)
	if !ok {
		entries, isMap := mapping(n, anchors)
		if !isMap {
			return 0
		}
		if proto, _ := scalar(get(entries, "protocol", anchors), anchors); proto != "" && !strings.EqualFold(proto, "tcp") {
			return 0
		}
		s, _ = scalar(get(entries, "target", anchors), anchors)
	}
	s, proto, _ := strings.Cut(s, "/")
	if proto != "" && !strings.EqualFold(proto, "tcp") {
		return 0
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	s, _, _ = strings.Cut(s, "-")
	port, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || port < 1 || port > 65535 {
		return 0
	}
	return port
}

// buildExposed is the first EXPOSE of a service's build: its
// dockerfile_inline, or the Dockerfile of its context (a directory of
// the project's, relative; not a URL, not absolute), 0 when none.
func buildExposed(dir string, build ast.Node, anchors map[string]ast.Node) int {
	context, file := ".", "Dockerfile"
	if s, ok := scalar(build, anchors); ok {
		context = s
	} else if entries, ok := mapping(build, anchors); ok {
		if inline, ok := scalar(get(entries, "dockerfile_inline", anchors), anchors); ok {
			return exposedIn(strings.NewReader(inline))
		}
		if s, ok := scalar(get(entries, "context", anchors), anchors); ok {
			context = s
		}
		if s, ok := scalar(get(entries, "dockerfile", anchors), anchors); ok {
			file = s
		}
	} else {
		return 0
	}
	for _, s := range []string{context, file} {
		if s == "" || filepath.IsAbs(s) || strings.Contains(s, "://") || strings.HasPrefix(s, "git@") || strings.Contains(s, "$") {
			return 0
		}
	}
	return exposed(filepath.Join(dir, context, file))
}

// shapeBounded says src may go to the YAML parser: its flow collections
// nest at most maxFlowDepth deep, no line's content starts past column
// maxColumn (indentation and "- " entries: block nesting), and no more
// than maxKeys keys follow each other at one indentation. It is not a
// YAML reader: it errs on the side of counting (a bracket in a string
// counts), and a file it refuses is one init guesses about.
func shapeBounded(src []byte) bool {
	flow := 0
	keys := map[int]int{} // indentation → keys at it since a shallower line
	for _, line := range strings.Split(string(src), "\n") {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		rest := line[indent:]
		if t := strings.TrimSpace(rest); t == "" || t[0] == '#' {
			continue
		}
		col := indent
		for strings.HasPrefix(rest, "- ") || strings.HasPrefix(rest, "? ") {
			trimmed := strings.TrimLeft(rest[2:], " ")
			col += len(rest) - len(trimmed)
			rest = trimmed
		}
		if col > maxColumn {
			return false
		}
		for i := range keys {
			if i > col {
				delete(keys, i)
			}
		}
		if flow == 0 && (strings.Contains(rest, ": ") || strings.HasSuffix(strings.TrimRight(rest, " \r"), ":")) {
			if keys[col]++; keys[col] > maxKeys {
				return false
			}
		}
		for i := 0; i < len(rest); i++ {
			switch rest[i] {
			case '[', '{':
				if flow++; flow > maxFlowDepth {
					return false
				}
			case ']', '}':
				flow = max(0, flow-1)
			case '#':
				if i > 0 && (rest[i-1] == ' ' || rest[i-1] == '\t') {
					i = len(rest) // a comment: the rest of the line
				}
			}
		}
	}
	return true
}

// describe is what the compose file is, for init's first line.
func (c *Compose) describe() string {
	if c.Problem != "" {
		return fmt.Sprintf("a compose file (%s: %s)", c.File, c.Problem)
	}
	return fmt.Sprintf("a compose file (%s, services %s)", c.File, c.servicesText(8))
}

// servicesText lists the services, at most n by name.
func (c *Compose) servicesText(n int) string {
	if len(c.Services) <= n {
		return strings.Join(c.Services, ", ")
	}
	return strings.Join(c.Services[:n], ", ") + fmt.Sprintf(" and %d more", len(c.Services)-n)
}
