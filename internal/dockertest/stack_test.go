//go:build linux

package dockertest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"
)

func TestLddPaths(t *testing.T) {
	t.Parallel()
	out := "\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x00007f02)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f01)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f03)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f01)\n"
	got, err := lddPaths(out)
	want := [][2]string{
		{"/lib/x86_64-linux-gnu/libssl.so.3", "/lib/x86_64-linux-gnu/libssl.so.3"},
		{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"},
		{"/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("lddPaths = %q, %v; want %q", got, err, want)
	}
	if _, err := lddPaths(out + "\tlibfoo.so.1 => not found\n"); err == nil || err.Error() != "library libfoo.so.1 not found" {
		t.Errorf("lddPaths with a library not found: %v", err)
	}
	if got, err := lddPaths("\tnot a dynamic executable\n"); got != nil || err != nil {
		t.Errorf("lddPaths of a static binary = %q, %v; want none", got, err)
	}
}

// stackClient is Client, except that under CI=true an engine that does not
// answer fails the test: CI starts one.
func stackClient(t *testing.T) *client.Client {
	t.Helper()
	cli, err := Connect()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("docker, and CI=true: %v", err)
		}
		t.Skipf("docker: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// TestStack runs the stack as a compose file would: Redis as db on a
// network of its own, the seed as a one-off container of the API image,
// then both API builds, which must answer /list the same, the regressed
// one with one GET per item.
func TestStack(t *testing.T) {
	cli := stackClient(t)
	imgs := BuildStackImages(t, cli, "benchgate-test/stack", "../..")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, ref := range []string{imgs.Redis, imgs.API, imgs.APISlow} {
		img, err := cli.ImageInspect(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f MB", ref, float64(img.Size)/1e6)
	}

	name := fmt.Sprintf("benchgate-test-stack-%d", os.Getpid())
	netw, err := cli.NetworkCreate(ctx, name, network.CreateOptions{Driver: "bridge"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cli.NetworkRemove(context.Background(), netw.ID); err != nil {
			t.Errorf("removing network %s: %v", name, err)
		}
	})
	// create makes a container on the network, removed when the test
	// ends (before the network: cleanups run last first), with port
	// published on a free port of 127.0.0.1 when not 0.
	create := func(suffix, ref string, cmd []string, alias string, port int) string {
		t.Helper()
		cfg := &container.Config{Image: ref, Cmd: cmd}
		hc := &container.HostConfig{}
		if port != 0 {
			p := nat.Port(strconv.Itoa(port) + "/tcp")
			cfg.ExposedPorts = nat.PortSet{p: {}}
			hc.PortBindings = nat.PortMap{p: {{HostIP: "127.0.0.1"}}}
		}
		ep := &network.EndpointSettings{}
		if alias != "" {
			ep.Aliases = []string{alias}
		}
		nc := &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{name: ep}}
		c, err := cli.ContainerCreate(ctx, cfg, hc, nc, nil, name+"-"+suffix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}); err != nil {
				t.Errorf("removing container %s: %v", suffix, err)
			}
		})
		return c.ID
	}
	start := func(id string) {
		t.Helper()
		if err := cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	hostAddr := func(id string, port int) string {
		t.Helper()
		c, err := cli.ContainerInspect(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b := c.NetworkSettings.Ports[nat.Port(strconv.Itoa(port)+"/tcp")]
		if len(b) == 0 {
			t.Fatalf("container %s publishes no port %d: %v", c.Name, port, c.NetworkSettings.Ports)
		}
		return net.JoinHostPort(b[0].HostIP, b[0].HostPort)
	}
	logs := func(id string) string {
		var out strings.Builder
		rc, err := cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
		if err != nil {
			return err.Error()
		}
		defer rc.Close()
		stdcopy.StdCopy(&out, &out, rc)
		return out.String()
	}

	redis := create("redis", imgs.Redis, nil, "db", 6379)
	start(redis)

	// The seed retries while Redis starts, as it would under compose.
	seed := create("seed", imgs.API, []string{"-seed", "500", "-redis", "db:6379"}, "", 0)
	waitCtx, waitCancel := context.WithTimeout(ctx, 90*time.Second)
	defer waitCancel()
	exited, waitErr := cli.ContainerWait(waitCtx, seed, container.WaitConditionNextExit)
	start(seed)
	select {
	case r := <-exited:
		if r.StatusCode != 0 {
			t.Fatalf("the seed exited %d:\n%s\nredis:\n%s", r.StatusCode, logs(seed), logs(redis))
		}
	case err := <-waitErr:
		t.Fatalf("waiting for the seed: %v\n%s\nredis:\n%s", err, logs(seed), logs(redis))
	}
	if got := logs(seed); got != "seeded 500 items in 20 categories\n" {
		t.Errorf("the seed printed %q", got)
	}

	api := map[string]string{}
	for _, b := range []struct{ name, ref string }{{"normal", imgs.API}, {"nplus1", imgs.APISlow}} {
		id := create("api-"+b.name, b.ref, nil, "", 8080)
		start(id)
		api[b.name] = "http://" + hostAddr(id, 8080)
		waitHealthy(t, api[b.name], 30*time.Second, func() string { return logs(id) })
	}

	redisAddr := hostAddr(redis, 6379)
	bodies := map[string]string{}
	for _, b := range []string{"normal", "nplus1"} {
		redisCall(t, redisAddr, "CONFIG", "RESETSTAT")
		bodies[b] = httpGet(t, api[b]+"/list?category=3&limit=5")
		stats := redisCall(t, redisAddr, "INFO", "commandstats")
		gets, mgets := commandCalls(stats, "get"), commandCalls(stats, "mget")
		if want := map[bool][2]int{false: {0, 1}, true: {5, 0}}[b == "nplus1"]; gets != want[0] || mgets != want[1] {
			t.Errorf("the %s build's /list of 5 items called GET %d and MGET %d times, want %d and %d", b, gets, mgets, want[0], want[1])
		}
	}
	if bodies["normal"] != bodies["nplus1"] {
		t.Errorf("/list: the builds answer differently:\n%s\n%s", bodies["normal"], bodies["nplus1"])
	}
	var doc struct {
		Category int `json:"category"`
		Items    []struct {
			ID    int     `json:"id"`
			Name  string  `json:"name"`
			Price float64 `json:"price"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(bodies["normal"]), &doc); err != nil {
		t.Fatalf("/list: %v\n%s", err, bodies["normal"])
	}
	var ids []int
	for _, it := range doc.Items {
		ids = append(ids, it.ID)
	}
	if doc.Category != 3 || !reflect.DeepEqual(ids, []int{3, 23, 43, 63, 83}) || doc.Items[0].Name != "small lamp 3" || doc.Items[0].Price != 238.57 {
		t.Errorf("/list?category=3&limit=5 = %s", bodies["normal"])
	}
}

// waitHealthy polls url's /healthz until it answers 200, for at most
// limit.
func waitHealthy(t *testing.T, url string, limit time.Duration, logs func() string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(limit)
	last := ""
	for time.Now().Before(deadline) {
		resp, err := c.Get(url + "/healthz")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s/healthz did not answer 200 within %s (last: %s); logs:\n%s", url, limit, last, logs())
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", url, resp.StatusCode, b, err)
	}
	return string(b)
}

// redisCall sends one command to Redis at addr and returns its reply, a
// status line or a bulk string: enough RESP for CONFIG and INFO.
func redisCall(t *testing.T, addr string, args ...string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	cmd := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		cmd += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("redis %s: %v", args, err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"):
		return line[1:]
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 || n > 1<<20 {
			t.Fatalf("redis %s: bulk length %q", args, line)
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			t.Fatalf("redis %s: %v", args, err)
		}
		return string(b[:n])
	}
	t.Fatalf("redis %s answered %q", args, line)
	return ""
}

// commandCalls is how many calls of cmd INFO commandstats counts.
func commandCalls(info, cmd string) int {
	for _, line := range strings.Split(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			n, _, _ := strings.Cut(rest, ",")
			calls, _ := strconv.Atoi(n)
			return calls
		}
	}
	return 0
}
