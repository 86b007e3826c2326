package registry_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/registry"
	"github.com/chartctl/chartctl/internal/token"
)

// childEnv makes the test binary a registry server over a data directory
// (see TestMain), so a test can kill it with SIGKILL.
const childEnv = "CHARTCTL_REGISTRY_TEST_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(childEnv); dir != "" {
		os.Exit(serveChild(dir))
	}
	os.Exit(m.Run())
}

// storeAuth resolves API keys (HTTP Basic password or Bearer) with the
// store alone: the child process has no chartctl server around the
// registry.
type storeAuth struct{ db *bolt.DB }

func (a storeAuth) OptionalPrincipal(c echo.Context, challenge string) (*chartctl.Principal, error) {
	ctx := c.Request().Context()
	cred := ""
	if _, pw, ok := c.Request().BasicAuth(); ok {
		cred = pw
	} else if h := c.Request().Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		cred = strings.TrimPrefix(h, "Bearer ")
	} else {
		return nil, nil
	}
	k, err := a.db.APIKeyByHash(ctx, token.Hash(cred))
	if err != nil {
		return nil, chartctl.Errorf(chartctl.EUNAUTHORIZED, "Invalid or revoked API key.")
	}
	u, err := a.db.User(ctx, k.UserID)
	if err != nil {
		return nil, err
	}
	roles, err := a.db.OrgRoles(ctx, u.ID, u.Email)
	if err != nil {
		return nil, err
	}
	return &chartctl.Principal{User: u, CredentialID: k.ID, Scopes: k.Scopes, OrgRoles: roles}, nil
}

// serveChild serves the registry over dir until killed.
func serveChild(dir string) int {
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	reg := registry.New(app.New(db, blobs, app.Options{}), db, blobs, filepath.Join(dir, "uploads"))
	reg.Auth = storeAuth{db}
	reg.SessionKey = []byte("crash test: the same key after every restart")
	e := echo.New()
	reg.Register(e)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("url=http://%s\n", ln.Addr())
	return func() int {
		if err := http.Serve(ln, e); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		return 1
	}()
}

type child struct {
	cmd *exec.Cmd
	url string
}

func startChild(t *testing.T, dir string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "url=") {
		_ = cmd.Process.Kill()
		t.Fatalf("child did not start: %q %v", line, err)
	}
	c := &child{cmd: cmd, url: strings.TrimSpace(strings.TrimPrefix(line, "url="))}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return c
}

// pushed is an acknowledged manifest push.
type pushed struct {
	name, tag string
	manifest  digest.Digest
	blobs     map[digest.Digest][]byte
}

// chunkedPush pushes a config and two layers in chunks, then a manifest,
// and reports the push if the registry acknowledged the manifest.
func chunkedPush(c *http.Client, base, key, name, tag string) (*pushed, error) {
	do := func(method, url string, body []byte, hdr ...string) (*http.Response, error) {
		req, err := http.NewRequest(method, url, strings.NewReader(string(body)))
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth("crash", key)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, nil
	}
	p := &pushed{name: name, tag: tag, blobs: map[digest.Digest][]byte{}}
	var descs []ocispec.Descriptor
	for i := 0; i < 3; i++ {
		data := make([]byte, 64<<10)
		_, _ = rand.Read(data)
		d := digest.FromBytes(data)
		resp, err := do("POST", base+"/v2/"+name+"/blobs/uploads/", nil)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		for off := 0; off < len(data); off += 16 << 10 {
			chunk := data[off : off+16<<10]
			resp, err = do("PATCH", base+loc, chunk, "Content-Range", fmt.Sprintf("%d-%d", off, off+len(chunk)-1), "Content-Type", "application/octet-stream")
			if err != nil {
				return nil, err
			}
			if resp.StatusCode != 202 {
				return nil, fmt.Errorf("patch: %d", resp.StatusCode)
			}
			loc = resp.Header.Get("Location")
		}
		if resp, err = do("PUT", base+loc+"?digest="+d.String(), nil); err != nil {
			return nil, err
		} else if resp.StatusCode != 201 {
			return nil, fmt.Errorf("put: %d", resp.StatusCode)
		}
		p.blobs[d] = data
		mt := ocispec.MediaTypeImageLayer
		if i == 0 {
			mt = "application/vnd.example.config"
		}
		descs = append(descs, ocispec.Descriptor{MediaType: mt, Digest: d, Size: int64(len(data))})
	}
	m := ocispec.Manifest{MediaType: ocispec.MediaTypeImageManifest, Config: descs[0], Layers: descs[1:]}
	m.SchemaVersion = 2
	b, _ := json.Marshal(m)
	resp, err := do("PUT", base+"/v2/"+name+"/manifests/"+tag, b, "Content-Type", ocispec.MediaTypeImageManifest)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 201 {
		return nil, fmt.Errorf("manifest: %d", resp.StatusCode)
	}
	p.manifest = digest.FromBytes(b)
	return p, nil
}

// TestCrashDuringChunkedPushes kills the server with SIGKILL while
// several clients push in chunks; after a restart every acknowledged
// manifest is there and every blob it names pulls with its digest.
func TestCrashDuringChunkedPushes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir, key := prepareData(t)
	c := startChild(t, dir)
	client := &http.Client{}
	var (
		mu    sync.Mutex
		acked []*pushed
		wg    sync.WaitGroup
	)
	enough := make(chan struct{})
	var once sync.Once
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				p, err := chunkedPush(client, c.url, key, fmt.Sprintf("crash/app%d", w), fmt.Sprintf("v%d", i))
				if err != nil {
					return // the server died under this push
				}
				mu.Lock()
				acked = append(acked, p)
				if len(acked) >= 24 {
					once.Do(func() { close(enough) })
				}
				mu.Unlock()
			}
		}(w)
	}
	<-enough
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	wg.Wait()

	c = startChild(t, dir)
	mu.Lock()
	defer mu.Unlock()
	for _, p := range acked {
		req, _ := http.NewRequest("GET", c.url+"/v2/"+p.name+"/manifests/"+p.tag, nil)
		req.SetBasicAuth("crash", key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || digest.FromBytes(body) != p.manifest {
			t.Fatalf("acknowledged manifest %s:%s lost: %d", p.name, p.tag, resp.StatusCode)
		}
		for d, want := range p.blobs {
			req, _ := http.NewRequest("GET", c.url+"/v2/"+p.name+"/blobs/"+d.String(), nil)
			req.SetBasicAuth("crash", key)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(got) != string(want) {
				t.Fatalf("blob %s of %s:%s: %d, %d bytes", d, p.name, p.tag, resp.StatusCode, len(got))
			}
		}
	}
	t.Logf("%d acknowledged pushes survived the crash", len(acked))
}

// prepareData creates a data directory with an admin, its API key and a
// private repository "crash", as a server's first start would.
func prepareData(t *testing.T) (dir, key string) {
	t.Helper()
	dir = t.TempDir()
	var h []byte
	ctx := context.Background()
	db, err := bolt.Open(filepath.Join(dir, "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	u := &chartctl.User{Email: "admin@example.com", Admin: true}
	if err := db.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	key, h = token.New(token.APIKeyPrefix)
	if err := db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: u.ID, Name: "k", Scopes: chartctl.AllScopes, Hash: h}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRepository(ctx, &chartctl.Repository{Name: "crash", OwnerID: u.ID, Visibility: chartctl.VisibilityPrivate}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, key
}

// TestUploadSurvivesRestart: a chunked push resumes after SIGKILL and a
// restart at the last acknowledged byte.
func TestUploadSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir, key := prepareData(t)
	c := startChild(t, dir)
	do := func(method, url string, body string, hdr ...string) *http.Response {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.SetBasicAuth("x", key)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	loc := do("POST", c.url+"/v2/crash/app/blobs/uploads/", "").Header.Get("Location")
	if r := do("PATCH", c.url+loc, "hello ", "Content-Range", "0-5"); r.StatusCode != 202 {
		t.Fatalf("chunk: %d", r.StatusCode)
	}
	// A session with no chunk yet: nothing of it is stored, its ID is
	// known after the restart all the same.
	fresh := do("POST", c.url+"/v2/crash/app/blobs/uploads/", "").Header.Get("Location")
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	_ = c.cmd.Wait()

	c = startChild(t, dir)
	if r := do("PUT", c.url+fresh+"?digest="+digest.FromString("fresh").String(), "fresh"); r.StatusCode != 201 {
		t.Fatalf("whole PUT to a session started before the restart: %d", r.StatusCode)
	}
	if r := do("GET", c.url+loc, ""); r.StatusCode != 204 || r.Header.Get("Range") != "0-5" {
		t.Fatalf("status after restart: %d %q", r.StatusCode, r.Header.Get("Range"))
	}
	d := digest.FromString("hello world")
	if r := do("PUT", c.url+loc+"?digest="+d.String(), "world", "Content-Range", "6-10"); r.StatusCode != 201 {
		t.Fatalf("complete after restart: %d", r.StatusCode)
	}
	req, _ := http.NewRequest("GET", c.url+"/v2/crash/app/blobs/"+d.String(), nil)
	req.SetBasicAuth("x", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != "hello world" {
		t.Fatalf("blob = %q", got)
	}
}
