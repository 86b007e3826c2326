package harness

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeEnv makes the test binary act as a chart server (see TestMain), so the
// harness's process handling is tested on a real child process.
const fakeEnv = "CHARTBENCH_FAKE_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		os.Exit(fakeServe(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeServe implements just enough of `chartctl serve` for the harness:
// flags, initial-admin.json, graceful SIGTERM, and charts kept on disk.
func fakeServe(args []string) int {
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "fake: want serve")
		return 2
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	data := fs.String("data", "", "")
	for _, f := range []string{"rate-limit-global", "rate-limit-upload", "rate-limit-search", "max-concurrent-uploads"} {
		if fs.String(f, "", "") == nil {
			return 2
		}
	}
	if err := fs.Parse(args[1:]); err != nil {
		return 2
	}
	if err := os.MkdirAll(*data, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	adminPath := filepath.Join(*data, "initial-admin.json")
	if _, err := os.Stat(adminPath); err != nil {
		b, _ := json.Marshal(InitialAdmin{Email: "admin@localhost", Password: "pw", APIKey: "chartctl_fakekey"})
		if err := os.WriteFile(adminPath, b, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{Handler: newFakeServer(*data, "chartctl_fakekey")}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakeServer is a tiny chart server speaking the contract's routes (and
// ChartMuseum's upload path), storing archives as files.
type fakeServer struct {
	dir   string
	token string
	mu    sync.Mutex
}

func newFakeServer(dir, token string) http.Handler {
	s := &fakeServer{dir: filepath.Join(dir, "charts"), token: token}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("POST /v1/repositories", s.auth(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]string
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body["name"] == "" || body["visibility"] != "public" {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{"data": body})
	}))
	mux.HandleFunc("POST /v1/repositories/{repo}/charts", s.auth(s.upload))
	mux.HandleFunc("POST /api/charts", s.upload)
	mux.HandleFunc("GET /helm/{repo}/index.yaml", s.index)
	mux.HandleFunc("GET /index.yaml", s.index)
	mux.HandleFunc("GET /v1/repositories", s.auth(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"data": []any{map[string]string{"name": "bench"}}})
	}))
	mux.HandleFunc("GET /v1/repositories/{repo}/charts", s.auth(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("limit") != "100" {
			http.Error(w, "limit", http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{"data": s.list()})
	}))
	mux.HandleFunc("GET /v1/search", s.auth(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "" {
			http.Error(w, "q", http.StatusBadRequest)
			return
		}
		writeJSON(w, map[string]any{"data": []any{}})
	}))
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *fakeServer) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

func (s *fakeServer) upload(w http.ResponseWriter, r *http.Request) {
	f, _, err := r.FormFile("chart")
	if err != nil {
		http.Error(w, "missing chart", http.StatusBadRequest)
		return
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	name, version, err := chartNameVersion(b)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		http.Error(w, "store", http.StatusInternalServerError)
		return
	}
	path := filepath.Join(s.dir, name+"-"+version+".tgz")
	if _, err := os.Stat(path); err == nil {
		http.Error(w, "exists", http.StatusConflict)
		return
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		http.Error(w, "store", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusCreated)
	writeJSON(w, map[string]any{"data": map[string]string{"name": name, "version": version}})
}

func chartNameVersion(archive []byte) (name, version string, err error) {
	zr, err := gzip.NewReader(strings.NewReader(string(archive)))
	if err != nil {
		return "", "", fmt.Errorf("not gzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return "", "", fmt.Errorf("no Chart.yaml: %w", err)
		}
		if !strings.HasSuffix(h.Name, "/Chart.yaml") {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return "", "", err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "name: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "version: "); ok {
				version = v
			}
		}
		return name, version, nil
	}
}

func (s *fakeServer) list() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ents, _ := os.ReadDir(s.dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}

func (s *fakeServer) index(w http.ResponseWriter, r *http.Request) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nentries:\n")
	for _, f := range s.list() {
		sum := sha256.Sum256([]byte(f))
		fmt.Fprintf(&b, "  %s:\n  - urls: [charts/%s]\n    digest: %s\n", strings.TrimSuffix(f, ".tgz"), f, hex.EncodeToString(sum[:]))
	}
	b.WriteString("generated: \"2026-01-01T00:00:00Z\"\n")
	w.Header().Set("Content-Type", "application/x-yaml")
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, b.String())
		_ = zw.Close()
		return
	}
	_, _ = io.WriteString(w, b.String())
}
