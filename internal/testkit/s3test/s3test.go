// Package s3test runs a real S3 server for tests: versitygw with its posix
// backend on a temp dir, on a free loopback port, one fresh bucket per
// test. The binary is found in CHARTCTL_VERSITYGW, on PATH, or in the
// module's .tools/versitygw-VERSION/ (where .ci/run installs it).
//
// Without the binary the tests skip, unless CHARTCTL_REQUIRE_E2E=1 (CI),
// where that is a failure. Use it from TestMain so the shared server stops
// when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(s3test.Main(m)) }
//
// The server's credentials are put in AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY of the test process, where the standard AWS
// credential chain finds them. Only tests import it.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/chartctl/chartctl/internal/testkit/proc"
)

// The credentials of the test server.
const (
	AccessKey = "chartctl-test"
	SecretKey = "chartctl-test-secret"
	Region    = "us-east-1"
)

// Server is a running versitygw.
type Server struct {
	bin  string
	root string
	addr string

	proc proc.Process
	mu   sync.Mutex
	n    int
}

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Main runs the tests, then stops the shared server if a test started it.
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops and removes the shared server, if a test started it;
// for a TestMain that runs several such helpers.
func StopShared() {
	if shared != nil {
		shared.stop()
		_ = os.RemoveAll(shared.root)
	}
}

var errNoBinary = errors.New("versitygw not found (go install github.com/versity/versitygw/cmd/versitygw, or set CHARTCTL_VERSITYGW)")

func skip(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CHARTCTL_REQUIRE_E2E") == "1" {
		tb.Fatalf("%v (CHARTCTL_REQUIRE_E2E=1)", err)
	}
	tb.Skip(err.Error())
}

// findBin returns the versitygw binary, or "".
func findBin() string {
	if p := os.Getenv("CHARTCTL_VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	dir, err := os.Getwd()
	for err == nil {
		if _, e := os.Stat(filepath.Join(dir, "go.mod")); e == nil {
			// .ci/run installs it in .tools/versitygw-VERSION/.
			matches, _ := filepath.Glob(filepath.Join(dir, ".tools", "versitygw*", "versitygw"))
			if len(matches) > 0 {
				return matches[len(matches)-1]
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// Shared returns the server shared by the package's tests, starting it on
// first use.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if errors.Is(sharedErr, errNoBinary) {
		skip(tb, sharedErr)
	} else if sharedErr != nil {
		tb.Fatalf("start versitygw: %v", sharedErr)
	}
	return shared
}

// Start starts a server of the test's own (for tests that stop it); it is
// stopped and removed when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if errors.Is(err, errNoBinary) {
		skip(tb, err)
	} else if err != nil {
		tb.Fatalf("start versitygw: %v", err)
	}
	tb.Cleanup(func() {
		s.stop()
		_ = os.RemoveAll(s.root)
	})
	return s
}

// NewBucket creates an empty bucket on the shared server and returns the
// blob store URL naming it.
func NewBucket(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).NewBucket(tb)
}

func start() (*Server, error) {
	bin := findBin()
	if _, err := os.Stat(bin); bin == "" || err != nil {
		return nil, errNoBinary
	}
	os.Setenv("AWS_ACCESS_KEY_ID", AccessKey)
	os.Setenv("AWS_SECRET_ACCESS_KEY", SecretKey)
	root, err := os.MkdirTemp("", "chartctl-s3-")
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"data", "meta"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			return nil, err
		}
	}
	s := &Server{bin: bin, root: root}
	for attempt := 0; ; attempt++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		s.addr = ln.Addr().String()
		_ = ln.Close()
		if err = s.launch(); err == nil || attempt == 4 {
			return s, err
		}
	}
}

// launch starts versitygw on s.addr and waits until it answers. It keeps
// connections alive, as S3 services do (versitygw closes each by default).
func (s *Server) launch() error {
	cmd := exec.Command(s.bin, "--access", AccessKey, "--secret", SecretKey, "--region", Region,
		"--port", s.addr, "--quiet", "--keep-alive", "posix", "--sidecar", filepath.Join(s.root, "meta"), filepath.Join(s.root, "data"))
	return s.proc.Start(cmd, filepath.Join(s.root, "versitygw.log"), 30*time.Second, func() error {
		resp, err := http.Get(s.Endpoint())
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}, syscall.SIGTERM)
}

// Endpoint returns the server's URL.
func (s *Server) Endpoint() string { return "http://" + s.addr }

// Client returns an S3 client of the server with its root credentials.
func (s *Server) Client(tb testing.TB) *minio.Client {
	tb.Helper()
	c, err := minio.New(s.addr, &minio.Options{
		Creds: credentials.NewStaticV4(AccessKey, SecretKey, ""), Region: Region, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// NewBucket creates an empty bucket and returns the blob store URL naming
// it (with a key prefix, as deployments sharing a bucket use).
func (s *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("test-%d", s.n)
	s.mu.Unlock()
	if err := s.Client(tb).MakeBucket(context.Background(), name, minio.MakeBucketOptions{Region: Region}); err != nil {
		tb.Fatalf("create bucket %s: %v", name, err)
	}
	return s.URL(name, "chartctl")
}

// URL returns the blob store URL of bucket and prefix on the server.
func (s *Server) URL(bucket, prefix string) string {
	u := "s3://" + bucket
	if prefix != "" {
		u += "/" + prefix
	}
	return u + "?endpoint=" + s.Endpoint() + "&region=" + Region + "&path_style=true"
}

// Stop stops the server, as an outage would.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	s.stop()
}

// Restart starts the stopped server again on the same address.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.launch(); err != nil {
		tb.Fatalf("restart versitygw: %v", err)
	}
}

func (s *Server) stop() {
	s.proc.Stop(syscall.SIGTERM, 10*time.Second)
}
