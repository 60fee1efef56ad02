// Package setup_test tests the setup action's script against a local
// https server that serves a release as the release workflow lays it out.
package setup_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// shared is a directory that lives as long as the package's tests (the
// release they share is built there once).
var shared string

func TestMain(m *testing.M) {
	var err error
	if shared, err = os.MkdirTemp("", "setup-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(shared)
	os.Exit(code)
}

func unixOnly(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the setup script is for Linux and macOS runners")
	}
}

// targz is a release archive holding a benchgate that prints says.
func targz(t *testing.T, says string) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	bin := []byte("#!/bin/sh\necho " + says + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: "benchgate", Mode: 0o755, Size: int64(len(bin))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(bin)
	tw.Close()
	gz.Close()
	return b.Bytes()
}

func sum(data []byte) string { return fmt.Sprintf("%x", sha256.Sum256(data)) }

// server is an https release server, trusted through a CA file of its own
// certificate, that counts the requests for each path.
type server struct {
	*httptest.Server
	ca    string
	files map[string][]byte        // path → body
	hits  map[string]*atomic.Int32 // path → requests; both fixed at the start
}

func newServer(t *testing.T, files map[string][]byte) *server {
	t.Helper()
	s := &server{files: files, hits: map[string]*atomic.Int32{}}
	for p := range files {
		s.hits[p] = new(atomic.Int32)
	}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		s.hits[r.URL.Path].Add(1)
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	s.ca = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(s.ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// assetName is the release archive's name for this machine.
func assetName(version string) string {
	return fmt.Sprintf("benchgate_%s_%s_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOOS, runtime.GOARCH)
}

// release serves version's archive for this machine, a benchgate that
// says "benchgate VERSION", and a checksums file whose line for it is
// sum (its real SHA-256 when empty).
func release(t *testing.T, version, sha string) *server {
	t.Helper()
	asset := assetName(version)
	data := targz(t, "benchgate "+version)
	if sha == "" {
		sha = sum(data)
	}
	checksums := fmt.Sprintf("%s  benchgate_%s_windows_amd64.zip\n%s  %s\n", sum([]byte("other")), version, sha, asset)
	return newServer(t, map[string][]byte{
		"/" + version + "/" + asset:      data,
		"/" + version + "/checksums.txt": []byte(checksums),
	})
}

// run is a run of the setup script: its output, the GITHUB_PATH file's
// text and the error.
type run struct {
	out, ghPath string
	err         error
}

// setup runs the script with the release at url, trusting ca; extra is
// more of its environment.
func setup(t *testing.T, url, ca, version, dir, bindir string, extra ...string) run {
	t.Helper()
	ghPath := filepath.Join(t.TempDir(), "github_path")
	cmd := exec.Command("bash", "setup-benchgate.sh", version, dir, bindir)
	cmd.Env = append(os.Environ(), "BENCHGATE_RELEASE_URL="+url, "CURL_CA_BUNDLE="+ca, "GITHUB_PATH="+ghPath)
	cmd.Env = append(cmd.Env, extra...)
	out, err := cmd.CombinedOutput()
	p, _ := os.ReadFile(ghPath)
	return run{string(out), string(p), err}
}

// TestSetupInstallsVerified: a first run downloads, verifies and keeps
// the archive in the cache, unpacks the binary into the bin directory and
// puts that on PATH; a second (a cache hit) downloads checksums.txt again
// and not the archive, and still checks the archive against it.
func TestSetupInstallsVerified(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	srv := release(t, "v9.9.9", "")
	dir, bindir := filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "bin")
	r := setup(t, srv.URL, srv.ca, "v9.9.9", dir, bindir)
	if r.err != nil || !strings.Contains(r.out, "benchgate v9.9.9") {
		t.Fatalf("setup: %v\n%s", r.err, r.out)
	}
	if r.ghPath != bindir+"\n" {
		t.Errorf("GITHUB_PATH %q, want %q", r.ghPath, bindir)
	}
	if _, err := os.Stat(filepath.Join(dir, assetName("v9.9.9"))); err != nil {
		t.Errorf("the cache holds no archive: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "benchgate")); err == nil {
		t.Errorf("the cache holds a binary: only the archive belongs there")
	}
	r = setup(t, srv.URL, srv.ca, "v9.9.9", dir, filepath.Join(t.TempDir(), "bin"))
	if r.err != nil || !strings.Contains(r.out, "benchgate v9.9.9") {
		t.Errorf("cached: %v\n%s", r.err, r.out)
	}
	if a, c := srv.hits["/v9.9.9/"+assetName("v9.9.9")].Load(), srv.hits["/v9.9.9/checksums.txt"].Load(); a != 1 || c != 2 {
		t.Errorf("two runs downloaded the archive %d times and checksums.txt %d times, want 1 and 2", a, c)
	}
}

// TestSetupRefusesAPlantedCache: what another job left in the cache is
// never run. A binary beside the archive (where the cache used to keep
// it) is ignored; an archive that is not the release's is refused, by
// its SHA-256, and the release's downloaded again.
func TestSetupRefusesAPlantedCache(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	srv := release(t, "v9.9.9", "")
	dir := filepath.Join(t.TempDir(), "cache")
	if r := setup(t, srv.URL, srv.ca, "v9.9.9", dir, filepath.Join(t.TempDir(), "bin")); r.err != nil {
		t.Fatalf("setup: %v\n%s", r.err, r.out)
	}
	planted := targz(t, "PLANTED")
	archive := filepath.Join(dir, assetName("v9.9.9"))
	if err := os.WriteFile(archive, planted, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "benchgate"), []byte("#!/bin/sh\necho PLANTED\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := setup(t, srv.URL, srv.ca, "v9.9.9", dir, filepath.Join(t.TempDir(), "bin"))
	want := "the cached " + archive + " has SHA-256 " + sum(planted) + ", but checksums.txt says "
	if r.err != nil || !strings.Contains(r.out, want) || !strings.Contains(r.out, "refused, downloading it again") {
		t.Fatalf("err %v, output %q; want a refusal saying %q", r.err, r.out, want)
	}
	if strings.Contains(r.out, "PLANTED") || !strings.Contains(r.out, "benchgate v9.9.9") {
		t.Errorf("output %q: the planted binary ran, or the release's did not", r.out)
	}
	if got, _ := os.ReadFile(archive); bytes.Equal(got, planted) {
		t.Errorf("the planted archive is still in the cache")
	}
	if n := srv.hits["/v9.9.9/"+assetName("v9.9.9")].Load(); n != 2 {
		t.Errorf("the archive was downloaded %d times, want 2 (the first run, and after the refusal)", n)
	}
}

func TestSetupRefuses(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	for _, c := range []struct {
		name, version, sum, want string
	}{
		{"wrong checksum", "v9.9.9", strings.Repeat("0", 64), "checksums.txt says " + strings.Repeat("0", 64) + ": refused"},
		{"not a release tag", "v9.9.9/../../x", "", "want a release tag"},
		{"no such release", "v1.0.0", "", "cannot download"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := release(t, "v9.9.9", c.sum)
			dir, bindir := filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "bin")
			r := setup(t, srv.URL, srv.ca, c.version, dir, bindir)
			if r.err == nil || !strings.Contains(r.out, c.want) {
				t.Fatalf("err %v, output %q; want a refusal saying %q", r.err, r.out, c.want)
			}
			for _, f := range []string{filepath.Join(bindir, "benchgate"), filepath.Join(dir, assetName("v9.9.9"))} {
				if _, err := os.Stat(f); err == nil {
					t.Errorf("a refused setup left %s", f)
				}
			}
			if r.ghPath != "" {
				t.Errorf("a refused setup left a PATH entry (GITHUB_PATH %q)", r.ghPath)
			}
		})
	}
}

// TestSetupHTTPSOnly: the script downloads over https only: an http
// address is refused before anything is fetched, and an https server's
// redirect to http is not followed (curl --proto-redir '=https'), so
// nothing reaches the http server.
func TestSetupHTTPSOnly(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		plainHits.Add(1)
		fmt.Fprintln(w, "served over http")
	}))
	defer plain.Close()
	srv := release(t, "v9.9.9", "")

	r := setup(t, plain.URL, srv.ca, "v9.9.9", filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "bin"))
	if r.err == nil || !strings.Contains(r.out, "BENCHGATE_RELEASE_URL "+plain.URL+": want an https:// address") {
		t.Errorf("an http release address: err %v, output %q", r.err, r.out)
	}

	redirect := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, plain.URL+r.URL.Path, http.StatusFound)
	}))
	defer redirect.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: redirect.Certificate().Raw}), 0o644)
	r = setup(t, redirect.URL, ca, "v9.9.9", filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "bin"))
	if r.err == nil || !strings.Contains(r.out, "cannot download "+redirect.URL+"/v9.9.9/checksums.txt") {
		t.Errorf("a redirect to http: err %v, output %q", r.err, r.out)
	}
	if n := plainHits.Load(); n != 0 {
		t.Errorf("the http server got %d requests", n)
	}
}

// fakeModule is a module whose cmd/benchgate says the version release.sh
// stamps into it (-X main.version), as the real one does; release.sh,
// copied beside it, builds it as it builds benchgate. The archive's name,
// its layout and checksums.txt — the contract with the setup script —
// are the script's, whatever it compiles; the few runtime packages this
// main needs compile in seconds for any platform, where all of benchgate
// for two platforms took minutes on a loaded machine. (The real CLI
// through release.sh: scripts' TestReleaseImage; for Windows: .ci/run's
// cross-builds.)
const fakeMain = `package main

var version = "dev"

func main() { println("benchgate", version) }
`

var (
	releaseOnce sync.Once
	releaseDir  string
	releaseErr  error
)

const releaseVersion = "v0.0.0-test"

// built is the release.sh's output for this machine and for
// windows/amd64, made once for the package's tests.
func built(t *testing.T) string {
	t.Helper()
	releaseOnce.Do(func() {
		src, err := os.ReadFile("../scripts/release.sh")
		if err != nil {
			releaseErr = err
			return
		}
		mod := filepath.Join(shared, "module")
		for name, body := range map[string]string{
			"go.mod":                "module example.com/fake\n\ngo 1.21\n",
			"cmd/benchgate/main.go": fakeMain,
			"scripts/release.sh":    string(src),
		} {
			p := filepath.Join(mod, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				releaseErr = err
				return
			}
			if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
				releaseErr = err
				return
			}
		}
		releaseDir = filepath.Join(shared, "dist")
		cmd := exec.Command("bash", filepath.Join(mod, "scripts/release.sh"), releaseVersion, releaseDir, runtime.GOOS+"/"+runtime.GOARCH, "windows/amd64")
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			releaseErr = fmt.Errorf("release.sh: %v\n%s", err, out)
		}
	})
	if releaseErr != nil {
		t.Fatal(releaseErr)
	}
	return releaseDir
}

// serveDir serves dir as the release version over https.
func serveDir(t *testing.T, version, dir string) *server {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["/"+version+"/"+e.Name()] = b
	}
	return newServer(t, files)
}

// TestReleaseThenSetup: what scripts/release.sh makes, the setup script
// installs — the archive's name, its layout and checksums.txt are the
// contract between them — and the installed binary is the version built.
func TestReleaseThenSetup(t *testing.T) {
	t.Parallel()
	unixOnly(t)
	srv := serveDir(t, releaseVersion, built(t))
	r := setup(t, srv.URL, srv.ca, releaseVersion, filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "bin"))
	if r.err != nil || !strings.Contains(r.out, "benchgate "+releaseVersion) {
		t.Fatalf("setup of the release: %v\n%s", r.err, r.out)
	}
}

// TestSetupOnWindows: under Git Bash (uname -s MINGW64_NT-…, here a fake
// uname on PATH) the script installs benchgate.exe from the release's
// .zip, verified like the tarball; and release.sh's windows archive holds
// benchgate.exe at its root, where the script looks for it.
func TestSetupOnWindows(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the fake Git Bash runs on Linux")
	}
	if _, err := exec.LookPath("unzip"); err != nil {
		t.Skip("no unzip on PATH (Git Bash has one)")
	}
	const version = "v9.9.9"
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "benchgate.exe", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	// A script under the .exe name: Linux runs it as "benchgate.exe version".
	fmt.Fprintf(w, "#!/bin/sh\necho benchgate %s\n", version)
	zw.Close()
	data := zb.Bytes()
	asset := "benchgate_9.9.9_windows_amd64.zip"
	fake := t.TempDir()
	uname := "#!/bin/sh\ncase \"$1\" in -s) echo MINGW64_NT-10.0-20348 ;; -m) echo x86_64 ;; esac\n"
	if err := os.WriteFile(filepath.Join(fake, "uname"), []byte(uname), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, sum, want string }{
		{"verified", sum(data), "benchgate " + version},
		{"wrong checksum", strings.Repeat("1", 64), "SHA-256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, map[string][]byte{
				"/" + version + "/" + asset:      data,
				"/" + version + "/checksums.txt": []byte(c.sum + "  " + asset + "\n"),
			})
			bindir := filepath.Join(t.TempDir(), "bin")
			r := setup(t, srv.URL, srv.ca, version, filepath.Join(t.TempDir(), "cache"), bindir,
				"PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"))
			if !strings.Contains(r.out, c.want) {
				t.Fatalf("setup: %v\n%s\nwant %q", r.err, r.out, c.want)
			}
			_, serr := os.Stat(filepath.Join(bindir, "benchgate.exe"))
			if ok := c.name == "verified"; (r.err == nil) != ok || (serr == nil) != ok {
				t.Errorf("installed %v (err %v), want %v", serr == nil, r.err, ok)
			}
		})
	}

	zr, err := zip.OpenReader(filepath.Join(built(t), "benchgate_0.0.0-test_windows_amd64.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "benchgate.exe" {
		t.Errorf("the windows archive holds %v, want benchgate.exe alone", zr.File)
	}
}
