package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// healthTimeout bounds the wait for a started server to answer /healthz.
const healthTimeout = 60 * time.Second

// stopTimeout bounds the wait for a server to exit after SIGTERM before it
// is killed.
const stopTimeout = 30 * time.Second

// Process is a `chartctl serve` the harness started on a loopback port.
type Process struct {
	// Binary is the chartctl executable.
	Binary string
	// DataDir is the server's --data directory.
	DataDir string
	// Addr is the host:port it listens on.
	Addr string
	// LogPath receives the server's stdout and stderr.
	LogPath string
	// Extra are more serve arguments (say, --debug-addr).
	Extra []string
	// TLS, when set, makes the server serve HTTPS with its certificate.
	TLS *TLS

	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{}
	waitErr error
}

// FreeLoopbackAddr returns 127.0.0.1:PORT for a port free at the time of
// the call.
func FreeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	return addr, nil
}

// Args are the serve arguments: loopback address, the data directory, and
// every rate limit and the per-credential upload cap disabled so the load
// is not throttled.
func (p *Process) Args() []string {
	args := []string{
		"serve", "--addr", p.Addr, "--data", p.DataDir,
		"--rate-limit-global", "0", "--rate-limit-upload", "0", "--rate-limit-search", "0",
		"--max-concurrent-uploads", "0",
	}
	if p.TLS != nil {
		args = append(args, "--tls-cert", p.TLS.CertFile, "--tls-key", p.TLS.KeyFile)
	}
	return append(args, p.Extra...)
}

// URL is the server's base URL: http://ADDR, or https://ADDR with TLS.
func (p *Process) URL() string { return p.TLS.URL(p.Addr) }

// Start launches the server process (again, after Stop); its output is
// appended to LogPath.
func (p *Process) Start() error {
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			return errors.New("server already running")
		}
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("server log: %w", err)
	}
	cmd := exec.Command(p.Binary, p.Args()...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = cleanEnv(os.Environ())
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", p.Binary, err)
	}
	p.cmd = cmd
	p.exited = make(chan struct{})
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return nil
}

// cleanEnv drops CHARTCTL_* variables, which would override the flags the
// harness passes (say, re-enabling rate limits).
func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CHARTCTL_") {
			out = append(out, kv)
		}
	}
	return out
}

// PID is the server's process id (0 before Start).
func (p *Process) PID() int {
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// WaitHealthy polls GET /healthz until it answers 200 and returns the time
// since the process was started. It fails if the process exits first or
// after healthTimeout.
func (p *Process) WaitHealthy(ctx context.Context) (time.Duration, error) {
	client := p.TLS.probeClient()
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(healthTimeout)
	url := p.URL() + "/healthz"
	for time.Now().Before(deadline) {
		select {
		case <-p.exited:
			return 0, fmt.Errorf("server exited before becoming healthy (%v); log:\n%s", p.waitErr, p.LogTail(20))
		case <-ctx.Done():
			return 0, fmt.Errorf("wait for healthy: %w", ctx.Err())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, fmt.Errorf("health request: %w", err)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(p.started), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("server not healthy after %v; log:\n%s", healthTimeout, p.LogTail(20))
}

// Stop sends SIGTERM and waits for the process to exit, killing it after
// stopTimeout. It returns how long the graceful stop took.
func (p *Process) Stop() (time.Duration, error) {
	if p.cmd == nil {
		return 0, nil
	}
	select {
	case <-p.exited:
		return 0, nil
	default:
	}
	t0 := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("signal server: %w", err)
	}
	select {
	case <-p.exited:
		return time.Since(t0), nil
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return time.Since(t0), fmt.Errorf("server did not exit within %v of SIGTERM; killed", stopTimeout)
	}
}

// PeakRSS reads the process's peak resident set size (VmHWM) in bytes from
// /proc/PID/status; it works only on Linux and while the process lives.
func (p *Process) PeakRSS() (int64, error) {
	pid := p.PID()
	if pid == 0 {
		return 0, errors.New("server not started")
	}
	return peakRSS(pid)
}

func peakRSS(pid int) (int64, error) {
	n, err := ProcStatus(pid, "VmHWM")
	if err != nil {
		return 0, fmt.Errorf("read peak RSS: %w", err)
	}
	return n, nil
}

// ProcStatus reads one "key: N kB" field of /proc/PID/status (VmRSS,
// VmHWM, RssFile, …), in bytes; Linux only.
func ProcStatus(pid int, key string) (int64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	return parseStatusKB(b, key)
}

// parseStatusKB finds "key:   N kB" in /proc/PID/status or /proc/meminfo
// text and returns N KiB in bytes.
func parseStatusKB(b []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) < 1 {
			break
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s %q: %w", key, v, err)
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		return n, nil
	}
	return 0, fmt.Errorf("no %s line", key)
}

// LogTail returns the last n lines of the server log.
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// InitialAdmin is the file a fresh server writes to
// <data>/initial-admin.json (CONTRACT §6).
type InitialAdmin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	APIKey   string `json:"api_key"`
}

// ReadInitialAdmin reads <dataDir>/initial-admin.json, waiting up to a few
// seconds for the server to write it.
func ReadInitialAdmin(dataDir string) (InitialAdmin, error) {
	path := filepath.Join(dataDir, "initial-admin.json")
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			var a InitialAdmin
			if err := json.Unmarshal(b, &a); err == nil && a.APIKey != "" {
				return a, nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = errors.New("no api_key in it")
			}
			return InitialAdmin{}, fmt.Errorf("read %s: %w", path, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
