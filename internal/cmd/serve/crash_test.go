package serve_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

// buildBinary builds chartctl once per test binary run.
var buildOnce struct {
	sync.Once
	path string
	err  error
}

func mustBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "chartctl-bin")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.path = filepath.Join(dir, "chartctl")
		out, err := exec.Command("go", "build", "-o", buildOnce.path, "github.com/chartctl/chartctl/cmd/chartctl").CombinedOutput()
		if err != nil {
			buildOnce.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildOnce.err != nil {
		t.Fatal(buildOnce.err)
	}
	return buildOnce.path
}

// proc is a running `chartctl serve` child process.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for one writer and many readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var servingRE = regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)`)

func startServe(t *testing.T, bin, data string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data,
		"--rate-limit-global", "0", "--rate-limit-upload", "0", "--rate-limit-search", "0"}, extra...)
	cmd := exec.Command(bin, args...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, stderr: &syncBuffer{}}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.stderr.WriteString(line + "\n")
			if m := servingRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "chartctl serving") {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		pw.Close()
	})
	select {
	case p.url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not start; stderr:\n%s", p.stderr)
	}
	return p
}

func adminKey(t *testing.T, data string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "initial-admin.json"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(filepath.Join(data, "initial-admin.json"))
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("initial-admin.json mode = %v", st.Mode().Perm())
	}
	var a struct {
		Email, Password string
		APIKey          string `json:"api_key"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.APIKey == "" || a.Password == "" || a.Email != "admin@localhost" {
		t.Fatalf("initial-admin.json = %s (%v)", b, err)
	}
	return a.APIKey
}

func do(t *testing.T, method, url, key string, body io.Reader, ctype string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestKill9LosesNoAcknowledgedUpload kills the server with SIGKILL during
// concurrent uploads; after a restart every upload that got 200 is listed
// and downloads with its digest, and every listed chart downloads.
func TestKill9LosesNoAcknowledgedUpload(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	data := t.TempDir()
	p := startServe(t, bin, data)
	key := adminKey(t, data)
	if r, b, err := do(t, "POST", p.url+"/v1/repositories", key, strings.NewReader(`{"name":"crash"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create repo: %v %s", err, b)
	}

	type ack struct{ name, version, digest string }
	var mu sync.Mutex
	var acked []ack
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				name, version := fmt.Sprintf("c%d", w), fmt.Sprintf("1.0.%d", i)
				archive := testkit.MakeChart(t, testkit.Chart{Name: name, Version: version})
				body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
				r, b, err := do(t, "POST", p.url+"/v1/repositories/crash/charts", key, bytes.NewReader(body), ctype)
				if err != nil {
					return // the server died mid-request: not acknowledged
				}
				if r.StatusCode != 200 {
					t.Errorf("upload: %d %s", r.StatusCode, b)
					return
				}
				sum := sha256.Sum256(archive)
				mu.Lock()
				acked = append(acked, ack{name, version, "sha256:" + hex.EncodeToString(sum[:])})
				mu.Unlock()
			}
		}(w)
	}
	// Let uploads run, then kill without warning.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 40 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = p.cmd.Process.Wait()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no upload was acknowledged before the kill")
	}

	p2 := startServe(t, bin, data)
	for _, a := range acked {
		r, b, err := do(t, "GET", p2.url+"/v1/repositories/crash/charts/"+a.name+"/"+a.version+"/archive", key, nil, "")
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("acknowledged %s %s lost after kill -9: %v %d %s", a.name, a.version, err, r.StatusCode, b)
		}
		sum := sha256.Sum256(b)
		if got := "sha256:" + hex.EncodeToString(sum[:]); got != a.digest {
			t.Fatalf("%s %s digest %s, want %s", a.name, a.version, got, a.digest)
		}
	}
	// Every listed chart downloads and matches its digest.
	for page := 1; ; page++ {
		_, b, err := do(t, "GET", fmt.Sprintf("%s/v1/repositories/crash/charts?limit=100&page=%d", p2.url, page), key, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Data []struct{ Name, Version, Digest string }
		}
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Data) == 0 {
			break
		}
		for _, c := range list.Data {
			r, blob, err := do(t, "GET", p2.url+"/v1/repositories/crash/charts/"+c.Name+"/"+c.Version+"/archive", key, nil, "")
			if err != nil || r.StatusCode != 200 {
				t.Fatalf("listed %s %s does not download: %v", c.Name, c.Version, err)
			}
			sum := sha256.Sum256(blob)
			if "sha256:"+hex.EncodeToString(sum[:]) != c.Digest {
				t.Fatalf("listed %s %s has a corrupt blob", c.Name, c.Version)
			}
		}
	}
}

// TestSecondServerOnSameDataDirFails checks the lock message.
func TestSecondServerOnSameDataDirFails(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	data := t.TempDir()
	startServe(t, bin, data)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--data", data)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("second server started")
	}
	if !strings.Contains(string(out), "in use by another chartctl server") {
		t.Fatalf("output = %s", out)
	}
}

// TestSIGTERMDrainsAndExits checks a clean shutdown.
func TestSIGTERMDrainsAndExits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	data := t.TempDir()
	p := startServe(t, bin, data)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.cmd.Process.Wait(); done <- err }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("server did not exit after SIGTERM")
	}
	// The store was closed cleanly: a new server opens it at once.
	startServe(t, bin, data)
}

// TestDebugListenerServesPprof checks the opt-in pprof listener and that
// the main listener does not serve pprof.
func TestDebugListenerServesPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	p := startServe(t, bin, t.TempDir(), "--debug-addr", "127.0.0.1:0")
	var debugURL string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && debugURL == ""; time.Sleep(50 * time.Millisecond) {
		if m := regexp.MustCompile(`pprof serving" url=(\S+)`).FindStringSubmatch(p.stderr.String()); m != nil {
			debugURL = m[1]
		}
	}
	if debugURL == "" {
		t.Fatalf("no pprof listener logged:\n%s", p.stderr)
	}
	resp, err := http.Get(debugURL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("pprof index: %v %v", err, resp)
	}
	resp.Body.Close()
	resp, err = http.Get(p.url + "/debug/pprof/")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("pprof on the main listener: %v %v", err, resp)
	}
	resp.Body.Close()
}
