package scenario

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

func (l *loader) targets(n *node) {
	if n == nil {
		l.errAt(1, 1, "targets", "missing (want baseline and candidate)")
		return
	}
	m, ok := l.fields(n, "targets", "baseline", "candidate")
	if !ok {
		return
	}
	for _, name := range []string{"baseline", "candidate"} {
		tn := m[name]
		if tn == nil {
			line, col := n.reportPos()
			l.errAt(line, col, "targets."+name, "missing (both baseline and candidate are required)")
			continue
		}
		t := l.target(tn, name)
		if name == "baseline" {
			l.s.Baseline = t
		} else {
			l.s.Candidate = t
		}
	}
}

func (l *loader) target(n *node, name string) Target {
	f := "targets." + name
	t := Target{Name: name, Health: DefaultHealth, StartupTimeout: DefaultStartupTimeout}
	m, ok := l.fields(n, f, "command", "url", "image", "compose", "port", "build", "dir", "env", "health", "startup_timeout",
		"service", "memory", "setup", "profile")
	if !ok {
		return t
	}
	var kinds []string
	for _, k := range []string{"command", "url", "image", "compose"} {
		if m[k] != nil {
			kinds = append(kinds, k)
		}
	}
	line, col := n.reportPos()
	kind := ""
	switch {
	case len(kinds) == 0:
		l.errAt(line, col, f, "want one of command, url, image, compose")
	case len(kinds) == 2 && m["command"] != nil && m["image"] != nil:
		// command with image: the container's command.
		kind = "image"
	case len(kinds) == 1:
		kind = kinds[0]
	default:
		// kind stays "": which fields belong is unclear until this is fixed.
		l.errAt(line, col, f, "%s are exclusive (want one of command, url, image, compose; an image target may also have a command)", strings.Join(kinds, " and "))
	}
	only := func(field string, kinds ...string) bool {
		v := m[field]
		if v == nil {
			return false
		}
		if kind == "image" && (field == "build" || field == "dir") {
			l.errAt(v.keyLine, v.keyCol, join(f, field), "not for an image target (build the image before running benchgate)")
			return false
		}
		if kind == "compose" && (field == "build" || field == "dir") {
			l.errAt(v.keyLine, v.keyCol, join(f, field), "not for a compose target (build its images before running benchgate)")
			return false
		}
		if kind != "" && !slices.Contains(kinds, kind) {
			which := strings.Join(kinds, " or ")
			article := "a"
			if strings.HasPrefix(which, "i") {
				article = "an"
			}
			l.errAt(v.keyLine, v.keyCol, join(f, field), "only for %s %s target, not %s", article, which, kind)
			return false
		}
		return true
	}
	if v := m["command"]; v != nil {
		if t.Command, _ = l.argv(v, f+".command"); t.Command != nil && kind != "image" {
			t.Shown = shellJoin(rawArgv(v))
		}
	}
	if v := m["url"]; v != nil {
		if s, ok := l.nonEmptyStr(v, f+".url"); ok && l.targetURL(v, s, f+".url") {
			t.URL, t.Shown = s, v.raw
			if l.healthPos == nil {
				l.healthPos = map[string]*node{}
			}
			l.healthPos[name+".url"] = v // for checks that need the kind of classes
		}
	}
	if v := m["image"]; v != nil {
		if t.Image, _ = l.nonEmptyStr(v, f+".image"); t.Image != "" {
			// The image as written, whether or not a command overrides
			// the image's own.
			t.Shown = v.shownText()
		}
		if m["port"] == nil {
			l.errAt(line, col, f+".port", "missing (an image target needs its container port)")
		}
	}
	if kind == "compose" {
		l.composeTarget(m, f, &t)
	} else if kind != "" {
		for _, k := range []string{"service", "memory", "setup"} {
			if v := m[k]; v != nil {
				l.errAt(v.keyLine, v.keyCol, join(f, k), "only for a compose target")
			}
		}
	}
	if only("port", "image", "compose") {
		t.Port, _ = l.intRange(m["port"], f+".port", 1, 65535)
	}
	if only("build", "command") {
		t.Build, _ = l.argv(m["build"], f+".build")
	}
	if kind == "command" {
		t.Dir = l.s.Dir
	}
	if only("dir", "command") {
		if s, ok := l.nonEmptyStr(m["dir"], f+".dir"); ok {
			dir := s
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(l.s.Dir, dir)
			}
			shown := dir
			if m["dir"].expanded {
				shown = m["dir"].shownText()
			}
			if fi, err := os.Stat(dir); err != nil {
				l.errNode(m["dir"], f+".dir", "%s does not exist", shown)
			} else if !fi.IsDir() {
				l.errNode(m["dir"], f+".dir", "%s is not a directory", shown)
			} else {
				t.Dir = dir
			}
		}
	}
	if only("env", "command", "image", "compose") {
		_, t.Env, _, _ = l.strMap(m["env"], f+".env")
	}
	if v := m["health"]; v != nil {
		if s, ok := l.str(v, f+".health"); ok {
			if s != HealthGRPC && !strings.HasPrefix(s, "/") {
				l.errNode(v, f+".health", "%q must be a path starting with / (e.g. /healthz), or grpc for a gRPC service", v.errText())
			} else {
				t.Health = s
				if l.healthPos == nil {
					l.healthPos = map[string]*node{}
				}
				l.healthPos[name] = v
			}
		}
	}
	if v := m["profile"]; v != nil {
		t.Profile = l.targetProfile(v, f+".profile")
	}
	if v := m["startup_timeout"]; v != nil {
		if d, ok := l.duration(v, f+".startup_timeout"); ok {
			if d <= 0 {
				l.errNode(v, f+".startup_timeout", "must be positive")
			} else {
				t.StartupTimeout = d
			}
		}
	}
	if kind == "command" && t.Command != nil {
		has := false
		for _, a := range t.Command {
			has = has || strings.Contains(a, "{port}")
		}
		for _, v := range t.Env {
			has = has || strings.Contains(v, "{port}")
		}
		if !has {
			l.errNode(m["command"], f+".command", "no argument or env value holds {port} (the service must listen on the port benchgate picks, e.g. -addr 127.0.0.1:{port})")
		}
	}
	return t
}

// targetURL checks the url of a target. The load generator keeps only
// scheme://host:port of it and appends each request's path and query, so
// anything else in the URL would be silently dropped; credentials would
// also end up in Target.Shown and so in reports.
func (l *loader) targetURL(n *node, s, field string) bool {
	// Neither message quotes a URL that holds credentials, not even as
	// written: the password may be in the file itself.
	u, err := url.Parse(s)
	if err == nil && u.User != nil {
		l.errNode(n, field, "credentials in the URL are not allowed: they would show in reports (put them in load.defaults.headers, e.g. Authorization: \"Bearer ${TOKEN}\")")
		return false
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if strings.Contains(s, "@") {
			l.errNode(n, field, "not an http or https URL (want e.g. http://127.0.0.1:9000)")
		} else {
			l.errNode(n, field, "%q is not an http or https URL (want e.g. http://127.0.0.1:9000)", n.errText())
		}
		return false
	}
	ok := true
	// url.Parse accepts '?' and '#' only as delimiters, so either one
	// means a query or a fragment, even an empty one.
	if strings.ContainsAny(s, "?#") {
		l.errNode(n, field, "%q has a query or fragment (put query parameters in load.defaults.query or in each class's request)", n.errText())
		ok = false
	}
	if p := u.EscapedPath(); p != "" && p != "/" {
		l.errNode(n, field, "%q has a path: the load generator appends each request path to scheme://host:port (put the path prefix in each class's request path)", n.errText())
		ok = false
	}
	return ok
}

// rawArgv is the argv of a command node as written, before ${VAR}
// expansion, split the way argv splits it.
func rawArgv(n *node) []string {
	if n.kind == kindScalar {
		return strings.Fields(n.raw)
	}
	out := make([]string, len(n.items))
	for i, it := range n.items {
		out[i] = it.raw
	}
	return out
}

// shellJoin joins argv for display so that it reads back as the same
// argv: an argument that is empty or holds whitespace or a quote is
// single-quoted. Other shell syntax ($, {}, *) is left alone on purpose,
// so that ${VAR} and {port} read as written.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsFunc(a, func(r rune) bool { return unicode.IsSpace(r) || r == '\'' || r == '"' }) {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// DefaultSetupTimeout bounds a compose target's setup step when the file
// gives no timeout.
const DefaultSetupTimeout = 5 * time.Minute

// composeTarget reads what only a compose target has: its files, the
// service that receives the load, the memory split by service and the
// setup step. The files are read by the target, before anything starts;
// here they must exist.
func (l *loader) composeTarget(m map[string]*node, f string, t *Target) {
	v := m["compose"]
	var files []string
	if v.kind == kindScalar {
		if s, ok := l.nonEmptyStr(v, f+".compose"); ok {
			files = []string{s}
		}
	} else {
		files, _ = l.strList(v, f+".compose")
		if len(files) == 0 && !v.broken {
			l.errNode(v, f+".compose", "must not be empty (want the compose files, e.g. [compose.yaml])")
		}
	}
	var shown []string
	for i, file := range files {
		raw := v.raw
		if v.kind != kindScalar {
			raw = v.items[i].raw
		}
		path := file
		if !filepath.IsAbs(path) {
			path = filepath.Join(l.s.Dir, path)
		}
		if fi, err := os.Stat(path); err != nil {
			l.errNode(v, f+".compose", "%s does not exist", raw)
			continue
		} else if fi.IsDir() {
			l.errNode(v, f+".compose", "%s is a directory (want the compose file, e.g. %s)", raw, filepath.Join(raw, "compose.yaml"))
			continue
		}
		t.Compose = append(t.Compose, path)
		shown = append(shown, raw)
	}
	line, col := v.keyLine, v.keyCol
	if m["service"] == nil {
		l.errAt(line, col, f+".service", "missing (a compose target names the service that receives the load)")
	} else if s, ok := l.nonEmptyStr(m["service"], f+".service"); ok {
		t.Service = s
	}
	if m["port"] == nil {
		l.errAt(line, col, f+".port", "missing (a compose target needs its service's container port)")
	}
	svc := t.Service
	if sv := m["service"]; sv != nil {
		svc = sv.raw
	}
	t.Shown = strings.Join(shown, " ") + " (service " + svc + ")"
	if v := m["memory"]; v != nil {
		keys, sizes, nodes, _ := l.strMap(v, f+".memory")
		for _, svc := range keys {
			size := sizes[svc]
			b, err := ParseMemory(size)
			if err != nil {
				l.errNode(nodes[svc], join(f+".memory", svc), "%q is not a memory size (want e.g. 2GiB, 512MiB, 1G or a number of bytes)", nodes[svc].raw)
				continue
			}
			if t.Memory == nil {
				t.Memory, t.MemoryText = map[string]int64{}, map[string]string{}
			}
			t.Memory[svc], t.MemoryText[svc] = b, size
		}
	}
	if v := m["setup"]; v != nil {
		sm, ok := l.fields(v, f+".setup", "service", "command", "timeout")
		if !ok {
			return
		}
		st := &Setup{Service: t.Service, Timeout: DefaultSetupTimeout}
		if sv := sm["service"]; sv != nil {
			st.Service, _ = l.nonEmptyStr(sv, f+".setup.service")
		}
		if sm["command"] == nil {
			l.errAt(v.keyLine, v.keyCol, f+".setup.command", "missing (the command to run in a new container of the service, e.g. [/api, -seed, \"2000\"])")
		} else {
			st.Command, _ = l.argv(sm["command"], f+".setup.command")
		}
		if tv := sm["timeout"]; tv != nil {
			if d, ok := l.duration(tv, f+".setup.timeout"); ok {
				if d <= 0 {
					l.errNode(tv, f+".setup.timeout", "must be positive")
				} else {
					st.Timeout = d
				}
			}
		}
		t.Setup = st
	}
}
