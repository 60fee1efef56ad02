// Package setup_test tests the setup action's script against a local HTTP
// server that serves a release as the release workflow lays it out.
package setup_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// archive is a release archive holding a benchgate that says its version.
func archive(t *testing.T, version string) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	bin := []byte("#!/bin/sh\necho benchgate " + version + "\n")
	if err := tw.WriteHeader(&tar.Header{Name: "benchgate", Mode: 0o755, Size: int64(len(bin))}); err != nil {
		t.Fatal(err)
	}
	tw.Write(bin)
	tw.Close()
	gz.Close()
	return b.Bytes()
}

// release serves version's archive for this machine and a checksums file
// whose line for it is sum (its real SHA-256 when empty).
func release(t *testing.T, version, sum string) string {
	t.Helper()
	arch := map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH]
	asset := fmt.Sprintf("benchgate_%s_%s_%s.tar.gz", strings.TrimPrefix(version, "v"), runtime.GOOS, arch)
	data := archive(t, version)
	if sum == "" {
		sum = fmt.Sprintf("%x", sha256.Sum256(data))
	}
	checksums := fmt.Sprintf("%x  benchgate_%s_windows_amd64.zip\n%s  %s\n", sha256.Sum256([]byte("other")), version, sum, asset)
	mux := http.NewServeMux()
	mux.HandleFunc("/"+version+"/"+asset, func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
	mux.HandleFunc("/"+version+"/checksums.txt", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, checksums) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// setup runs the script; it returns its output, the GITHUB_PATH file's
// text and the error.
func setup(t *testing.T, url, version, dir string) (string, string, error) {
	t.Helper()
	ghPath := filepath.Join(t.TempDir(), "github_path")
	cmd := exec.Command("bash", "setup-benchgate.sh", version, dir)
	cmd.Env = append(os.Environ(), "BENCHGATE_RELEASE_URL="+url, "GITHUB_PATH="+ghPath)
	out, err := cmd.CombinedOutput()
	p, _ := os.ReadFile(ghPath)
	return string(out), string(p), err
}

func TestSetupInstallsVerified(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the setup script is for Linux and macOS runners")
	}
	url := release(t, "v9.9.9", "")
	dir := filepath.Join(t.TempDir(), "tool")
	out, ghPath, err := setup(t, url, "v9.9.9", dir)
	if err != nil || !strings.Contains(out, "benchgate v9.9.9") {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	if ghPath != dir+"\n" {
		t.Errorf("GITHUB_PATH %q, want %q", ghPath, dir)
	}
	// A second run (a cache hit) uses what is there, without downloading.
	out, _, err = setup(t, "http://127.0.0.1:1", "v9.9.9", dir)
	if err != nil || !strings.Contains(out, "benchgate v9.9.9") {
		t.Errorf("cached: %v\n%s", err, out)
	}
}

func TestSetupRefuses(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the setup script is for Linux and macOS runners")
	}
	for _, c := range []struct {
		name, version, sum, want string
	}{
		{"wrong checksum", "v9.9.9", strings.Repeat("0", 64), "checksums.txt says " + strings.Repeat("0", 64) + ": refused"},
		{"not a release tag", "v9.9.9/../../x", "", "want a release tag"},
		{"no such release", "v1.0.0", "", "cannot download"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := release(t, "v9.9.9", c.sum)
			dir := filepath.Join(t.TempDir(), "tool")
			out, ghPath, err := setup(t, url, c.version, dir)
			if err == nil || !strings.Contains(out, c.want) {
				t.Fatalf("err %v, output %q; want a refusal saying %q", err, out, c.want)
			}
			if _, serr := os.Stat(filepath.Join(dir, "benchgate")); serr == nil || ghPath != "" {
				t.Errorf("a refused setup left a binary or a PATH entry (GITHUB_PATH %q)", ghPath)
			}
		})
	}
}

// TestReleaseThenSetup: what scripts/release.sh makes, the setup script
// installs — the archive's name, its layout and checksums.txt are the
// contract between them — and the installed binary is the version built.
func TestReleaseThenSetup(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the setup script is for Linux and macOS runners")
	}
	const version = "v0.0.0-test"
	rel := t.TempDir()
	build := exec.Command("bash", "../scripts/release.sh", version, rel, runtime.GOOS+"/"+runtime.GOARCH)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	mux := http.NewServeMux()
	mux.Handle("/"+version+"/", http.StripPrefix("/"+version+"/", http.FileServer(http.Dir(rel))))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "tool")
	out, _, err := setup(t, srv.URL, version, dir)
	if err != nil || !strings.Contains(out, "benchgate "+version) {
		t.Fatalf("setup of the release: %v\n%s", err, out)
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
	for _, c := range []struct{ name, sum, want string }{
		{"verified", fmt.Sprintf("%x", sha256.Sum256(data)), "benchgate " + version},
		{"wrong checksum", strings.Repeat("1", 64), "SHA-256"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			mux := http.NewServeMux()
			mux.HandleFunc("/"+version+"/"+asset, func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
			mux.HandleFunc("/"+version+"/checksums.txt", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "%s  %s\n", c.sum, asset) })
			srv := httptest.NewServer(mux)
			defer srv.Close()
			fake := t.TempDir()
			uname := "#!/bin/sh\ncase \"$1\" in -s) echo MINGW64_NT-10.0-20348 ;; -m) echo x86_64 ;; esac\n"
			if err := os.WriteFile(filepath.Join(fake, "uname"), []byte(uname), 0o755); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "tool")
			ghPath := filepath.Join(t.TempDir(), "github_path")
			cmd := exec.Command("bash", "setup-benchgate.sh", version, dir)
			cmd.Env = append(os.Environ(), "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"),
				"BENCHGATE_RELEASE_URL="+srv.URL, "GITHUB_PATH="+ghPath)
			out, err := cmd.CombinedOutput()
			if !strings.Contains(string(out), c.want) {
				t.Fatalf("setup: %v\n%s\nwant %q", err, out, c.want)
			}
			_, serr := os.Stat(filepath.Join(dir, "benchgate.exe"))
			if ok := c.name == "verified"; (err == nil) != ok || (serr == nil) != ok {
				t.Errorf("installed %v (err %v), want %v", serr == nil, err, ok)
			}
		})
	}

	rel := t.TempDir()
	build := exec.Command("bash", "../scripts/release.sh", "v0.0.0-test", rel, "windows/amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	zr, err := zip.OpenReader(filepath.Join(rel, "benchgate_0.0.0-test_windows_amd64.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "benchgate.exe" {
		t.Errorf("the windows archive holds %v, want benchgate.exe alone", zr.File)
	}
}
