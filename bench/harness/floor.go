package harness

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// floorFile is one file the floor server serves: its bytes, the gzip
// form if any, the ETag chartctl sent for it and, when set, the other
// headers chartctl sent with it (floorHeader), so that the floor answers
// with the very bytes chartctl answers with.
type floorFile struct {
	body, gz []byte
	etag     string
	header   http.Header
}

// floorHeader returns the headers of chartctl's response h that the
// floor sends as they are: all but those it sets itself (ETag,
// Content-Length, Content-Encoding) and Date, which net/http adds.
func floorHeader(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		switch k {
		case "Etag", "Content-Length", "Content-Encoding", "Date":
			continue
		}
		out[k] = slices.Clone(v)
	}
	return out
}

// floorServer is the least a Go server can do for the static routes: a
// bare net/http handler answering from memory with the headers chartctl
// sends, no router, middleware, logging, metrics or lookups. Measured
// beside chartctl and nginx, it separates what chartctl's own code costs
// from what Go's HTTP server costs on the machine.
//
// It runs in a process of its own, as chartctl and the peers do: served
// from inside the load generator's process, its connections' two ends
// share one Go scheduler, which spares it the wake-ups across processes
// every other server pays (FloorInProcess measures that way).
type floorServer struct {
	files map[string]floorFile
	// tls, when set, makes it serve HTTPS with its certificate.
	tls   *TLS
	srv   *http.Server
	ln    net.Listener
	cmd   *exec.Cmd
	stdin io.Closer
}

// FloorInProcess, if set, serves the floor inside the calling process, as
// the runs before 2026-11-29 did.
var FloorInProcess bool

// floorEnv names the spec file of a floor child process; floorCertEnv
// and floorKeyEnv its certificate and key when it serves HTTPS.
const (
	floorEnv     = "CHARTCTL_BENCH_FLOOR_SPEC"
	floorCertEnv = "CHARTCTL_BENCH_FLOOR_CERT"
	floorKeyEnv  = "CHARTCTL_BENCH_FLOOR_KEY"
)

// floorSpec is a floor child's files: each path's body file, gzip file
// ("" for none), ETag and other headers.
type floorSpec map[string]struct {
	Body, Gzip, ETag string
	Header           http.Header `json:",omitempty"`
}

// ServeFloorIfChild makes the process a floor server when the harness
// started it as one, and exits when that is done; a bench command's main
// calls it first.
func ServeFloorIfChild() {
	spec := os.Getenv(floorEnv)
	if spec == "" {
		return
	}
	if err := serveFloorChild(spec); err != nil {
		fmt.Fprintln(os.Stderr, "floor server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serveFloorChild serves the files of the spec at specPath, prints its
// address on stdout and returns when stdin closes.
func serveFloorChild(specPath string) error {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec floorSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return err
	}
	f := &floorServer{files: map[string]floorFile{}}
	if cert := os.Getenv(floorCertEnv); cert != "" {
		f.tls = &TLS{CertFile: cert, KeyFile: os.Getenv(floorKeyEnv)}
	}
	for path, e := range spec {
		ff := floorFile{etag: e.ETag, header: e.Header}
		if ff.body, err = os.ReadFile(e.Body); err != nil {
			return err
		}
		if e.Gzip != "" {
			if ff.gz, err = os.ReadFile(e.Gzip); err != nil {
				return err
			}
		}
		f.files[path] = ff
	}
	url, err := f.listen()
	if err != nil {
		return err
	}
	fmt.Println(url)
	_, _ = io.Copy(io.Discard, os.Stdin)
	f.stop()
	return nil
}

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ff, ok := f.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	for k, v := range ff.header {
		h[k] = v
	}
	h["Etag"] = []string{ff.etag}
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == ff.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := ff.body
	if ff.gz != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		body = ff.gz
		h["Content-Encoding"] = []string{"gzip"}
	}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	h["Content-Type"] = []string{"application/octet-stream"}
	_, _ = w.Write(body)
}

// start serves on a free loopback port, in a process of its own unless
// FloorInProcess.
func (f *floorServer) start() (string, error) {
	if FloorInProcess {
		return f.listen()
	}
	dir, err := os.MkdirTemp("", "chartctl-floor-")
	if err != nil {
		return "", err
	}
	spec := floorSpec{}
	i := 0
	for path, ff := range f.files {
		i++
		e := spec[path]
		e.ETag, e.Header, e.Body = ff.etag, ff.header, filepath.Join(dir, strconv.Itoa(i)+".body")
		if err := os.WriteFile(e.Body, ff.body, 0o600); err != nil {
			return "", err
		}
		if ff.gz != nil {
			e.Gzip = filepath.Join(dir, strconv.Itoa(i)+".gz")
			if err := os.WriteFile(e.Gzip, ff.gz, 0o600); err != nil {
				return "", err
			}
		}
		spec[path] = e
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return "", err
	}
	specPath := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(specPath, data, 0o600); err != nil {
		return "", err
	}
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), floorEnv+"="+specPath)
	if f.tls != nil {
		cmd.Env = append(cmd.Env, floorCertEnv+"="+f.tls.CertFile, floorKeyEnv+"="+f.tls.KeyFile)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	f.cmd, f.stdin = cmd, stdin
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		f.stop()
		return "", fmt.Errorf("floor server did not start (does this command's main call harness.ServeFloorIfChild?): %w", err)
	}
	go func() { _ = os.RemoveAll(dir) }()
	return strings.TrimSpace(line), nil
}

// listen serves f in this process on a free loopback port.
func (f *floorServer) listen() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	if f.tls != nil {
		cert, err := tls.LoadX509KeyPair(f.tls.CertFile, f.tls.KeyFile)
		if err != nil {
			ln.Close()
			return "", err
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}})
	}
	f.ln = ln
	f.srv = &http.Server{Handler: f}
	go func() { _ = f.srv.Serve(ln) }()
	return f.tls.URL(ln.Addr().String()), nil
}

// pid is the floor's process id: its child's, or this process's when it
// serves in process.
func (f *floorServer) pid() int {
	if f.cmd != nil && f.cmd.Process != nil {
		return f.cmd.Process.Pid
	}
	return os.Getpid()
}

func (f *floorServer) stop() {
	if f.cmd != nil {
		_ = f.stdin.Close()
		_ = f.cmd.Wait()
		f.cmd = nil
	}
	if f.srv != nil {
		_ = f.srv.Close()
	}
}
