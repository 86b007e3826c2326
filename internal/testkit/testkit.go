// Package testkit starts real chartctl servers and makes real chart
// archives for tests: a bbolt file and blob directory in a temp dir, the
// real router on a 127.0.0.1 listener. Only tests import it.
package testkit

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
)

// Server is a running test server with an admin user and key.
type Server struct {
	*server.Server
	URL      string
	Store    *bolt.DB
	Blobs    *blob.Store
	Dir      string
	AdminKey string
	Admin    *chartctl.User
}

// Option changes the server before it starts. It is also where a test
// wires the application's seams (App().Proxies, App().WakeMirror,
// App().WakeReplication, App().Config): set after the start, they are
// not promised to be seen by the requests and workers already running,
// and the race detector says so. Calling s.App() fixes the server's
// Config, Extra, Lint and Render: set those first.
type Option func(*server.Server)

// StartServer starts a server over a fresh data directory; it stops when
// the test ends.
func StartServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	return StartServerOn(tb, Listen(tb), opts...)
}

// Listen opens the 127.0.0.1 listener a server will use, for a test
// whose options need the server's own address (StartServerOn).
func Listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen: %v", err)
	}
	return ln
}

// StartServerOn is StartServer on ln (from Listen).
func StartServerOn(tb testing.TB, ln net.Listener, opts ...Option) *Server {
	tb.Helper()
	ts := openServer(tb, tb.TempDir(), ln, opts...)
	ts.Admin = ts.MustUser(tb, "admin@example.com", true)
	ts.AdminKey = ts.MustKey(tb, ts.Admin, chartctl.AllScopes...)
	return ts
}

// OpenServer starts a server over the data directory dir as it is (a
// restored backup, say), creating no user; it stops when the test ends.
func OpenServer(tb testing.TB, dir string, opts ...Option) *Server {
	tb.Helper()
	return openServer(tb, dir, Listen(tb), opts...)
}

func openServer(tb testing.TB, dir string, ln net.Listener, opts ...Option) *Server {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		tb.Fatalf("open store: %v", err)
	}
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		tb.Fatalf("open blobs: %v", err)
	}
	srv := server.New(db, blobs)
	// Webhook secrets are sealed with a fixed test key.
	box, err := secrets.New([]byte("testkit secrets key, 32+ bytes long"))
	if err != nil {
		tb.Fatal(err)
	}
	srv.Secrets = box
	for _, o := range opts {
		o(srv)
	}
	if err := srv.Open(ln); err != nil {
		tb.Fatalf("open server: %v", err)
	}
	ts := &Server{Server: srv, URL: srv.URL(), Store: db, Blobs: blobs, Dir: dir}
	tb.Cleanup(func() {
		_ = srv.Close()
		_ = db.Close()
	})
	return ts
}

// MustUser creates a user directly in the store.
func (s *Server) MustUser(tb testing.TB, email string, admin bool) *chartctl.User {
	tb.Helper()
	u := &chartctl.User{Email: email, Admin: admin}
	if err := s.Store.CreateUser(context.Background(), u); err != nil {
		tb.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// MustUserWithPassword creates a user who can sign in with password.
func (s *Server) MustUserWithPassword(tb testing.TB, email, password string, admin bool) *chartctl.User {
	tb.Helper()
	h, err := app.HashPassword(password)
	if err != nil {
		tb.Fatal(err)
	}
	u := &chartctl.User{Email: email, Admin: admin, PasswordHash: h}
	if err := s.Store.CreateUser(context.Background(), u); err != nil {
		tb.Fatalf("create user %s: %v", email, err)
	}
	return u
}

// MustKey creates an API key for u with scopes and returns its value.
func (s *Server) MustKey(tb testing.TB, u *chartctl.User, scopes ...chartctl.Scope) string {
	tb.Helper()
	v, h := token.New(token.APIKeyPrefix)
	k := &chartctl.APIKey{UserID: u.ID, Name: "test key", Scopes: chartctl.Scopes(scopes).Sorted(), Hash: h}
	if err := s.Store.CreateAPIKey(context.Background(), k); err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return v
}

// Response is a finished HTTP exchange.
type Response struct {
	*http.Response
	Body []byte
}

// JSON decodes the body into v, failing the test on error.
func (r *Response) JSON(tb testing.TB, v any) {
	tb.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		tb.Fatalf("decode %s: %v", r.Body, err)
	}
}

// ErrorCode returns error.code of an error body ("" if none).
func (r *Response) ErrorCode() string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &e)
	return e.Error.Code
}

// Do sends a request with a bearer token ("" for none) and reads the body.
func (s *Server) Do(tb testing.TB, method, path, tok string, body io.Reader, header ...string) *Response {
	tb.Helper()
	var reqBody []byte
	if body != nil && validating() {
		// Kept to validate the request once the answer is in.
		b, err := io.ReadAll(body)
		if err != nil {
			tb.Fatal(err)
		}
		reqBody, body = b, bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	if validating() {
		checkExchange(tb, req, reqBody, resp, b)
	}
	return &Response{Response: resp, Body: b}
}

// DoJSON sends v as a JSON body.
func (s *Server) DoJSON(tb testing.TB, method, path, tok string, v any) *Response {
	tb.Helper()
	var body io.Reader
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	return s.Do(tb, method, path, tok, body, "Content-Type", "application/json")
}

// Upload posts archive as multipart field "chart" to /v1.
func (s *Server) Upload(tb testing.TB, repo, tok string, archive []byte, query string) *Response {
	tb.Helper()
	body, ctype := Multipart(tb, map[string][]byte{"chart": archive})
	return s.Do(tb, http.MethodPost, "/v1/repositories/"+repo+"/charts"+query, tok, bytes.NewReader(body), "Content-Type", ctype)
}

// MustRepo creates a repository as the admin (visibility "" = private).
func (s *Server) MustRepo(tb testing.TB, name, visibility string) {
	tb.Helper()
	r := s.DoJSON(tb, http.MethodPost, "/v1/repositories", s.AdminKey, map[string]string{"name": name, "visibility": visibility})
	if r.StatusCode != 200 {
		tb.Fatalf("create repo %s: %d %s", name, r.StatusCode, r.Body)
	}
}

// MustYAMLRepo creates a repository as MustRepo does, serving a YAML
// index (new repositories serve JSON by default), for tests that read
// the index as YAML text.
func (s *Server) MustYAMLRepo(tb testing.TB, name, visibility string) {
	tb.Helper()
	r := s.DoJSON(tb, http.MethodPost, "/v1/repositories", s.AdminKey, map[string]string{"name": name, "visibility": visibility, "index_format": "yaml"})
	if r.StatusCode != 200 {
		tb.Fatalf("create repo %s: %d %s", name, r.StatusCode, r.Body)
	}
}

// Multipart encodes files as multipart/form-data fields.
func Multipart(tb testing.TB, fields map[string][]byte) ([]byte, string) {
	tb.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for name, content := range fields {
		fw, err := w.CreateFormFile(name, name+".tgz")
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := fw.Write(content); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// Chart describes a test chart.
type Chart struct {
	Name, Version, AppVersion, Description string
	Keywords                               []string
	// Extra is appended to Chart.yaml as is.
	Extra string
	// Extra files, by path relative to the chart directory.
	Files map[string]string
}

// MakeChart builds a valid chart archive laid out as `helm package` does.
func MakeChart(tb testing.TB, c Chart) []byte {
	tb.Helper()
	if c.AppVersion == "" {
		c.AppVersion = "1.0.0"
	}
	if c.Description == "" {
		c.Description = "A Helm chart for " + c.Name
	}
	var y strings.Builder
	fmt.Fprintf(&y, "apiVersion: v2\nname: %s\nversion: %s\nappVersion: %q\ndescription: %s\ntype: application\n", c.Name, c.Version, c.AppVersion, c.Description)
	if len(c.Keywords) > 0 {
		y.WriteString("keywords:\n")
		for _, k := range c.Keywords {
			fmt.Fprintf(&y, "  - %s\n", k)
		}
	}
	y.WriteString(c.Extra)
	files := map[string]string{
		"Chart.yaml":                y.String(),
		"values.yaml":               "replicaCount: 1\nimage:\n  repository: nginx\n  tag: stable\n",
		"templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicaCount }}\n",
	}
	for k, v := range c.Files {
		files[k] = v
	}
	return Archive(tb, c.Name, files)
}

// Archive tars and gzips files under top/.
func Archive(tb testing.TB, top string, files map[string]string) []byte {
	tb.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		content := files[n]
		hdr := &tar.Header{Name: top + "/" + n, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg, ModTime: time.Unix(1700000000, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write([]byte(content)); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// HelmBinary returns a real Helm client: the one named by CHARTCTL_HELM4,
// else CHARTCTL_HELM3 (`make tools` installs both under .tools/, and
// .ci/run sets the variables). Without one the test skips, unless
// CHARTCTL_REQUIRE_E2E=1 demands it run.
func HelmBinary(tb testing.TB) string {
	tb.Helper()
	for _, env := range []string{"CHARTCTL_HELM4", "CHARTCTL_HELM3"} {
		if p := os.Getenv(env); p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
		tb.Fatal("no helm binary: set CHARTCTL_HELM4 or CHARTCTL_HELM3 (make tools) since CHARTCTL_REQUIRE_E2E=1")
	}
	tb.Skip("no helm binary: set CHARTCTL_HELM4 / CHARTCTL_HELM3 (make tools)")
	return ""
}

// RunHelm runs the Helm binary bin with args in dir, with its own config,
// cache and data directories under a temporary home, and returns its
// combined output; a failure fails the test.
func RunHelm(tb testing.TB, bin, dir string, args ...string) string {
	tb.Helper()
	home := tb.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// ArchiveDir tars and gzips the chart directory dir (its base name is the
// archive's top directory), as `helm package` lays it out.
func ArchiveDir(tb testing.TB, dir string) []byte {
	tb.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return Archive(tb, filepath.Base(dir), files)
}
