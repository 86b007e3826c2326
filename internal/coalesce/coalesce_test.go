package coalesce

import (
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// capConn stands for a wrapper over the connection, as the server's
// per-address cap is: it exposes what it wraps through NetConn.
type capConn struct{ net.Conn }

func (c capConn) NetConn() net.Conn { return c.Conn }

type capListener struct{ net.Listener }

func (l capListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return capConn{c}, nil
}

// serve starts an HTTP/1.1 server on Listener, under wrap, whose handler
// answers /N with N random bytes through Write. It returns the server's
// URL, the bodies it serves by size, and a channel that gets, once each
// request is answered, how many writes of its connection were joined
// while the handler wrote.
func serve(t *testing.T, wrap func(net.Listener) net.Listener) (string, map[int][]byte, <-chan int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[int][]byte{}
	joins := make(chan int, 1)
	for _, n := range []int{0, 100, 4000, 6000, MinBody - 1, MinBody, 72<<10 + 300, 300 << 10} {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		bodies[n] = b
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Path[1:])
		body, ok := bodies[n]
		if err != nil || !ok {
			http.NotFound(w, r)
			return
		}
		c, _ := r.Context().Value(connKey{}).(*Conn)
		if c == nil {
			t.Error("no joining connection in the request's context")
			return
		}
		before := c.joined
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		if r.URL.Query().Has("flush") {
			// The head leaves on its own; the body has nothing to join.
			w.(http.Flusher).Flush()
		}
		if r.Method != http.MethodHead {
			if _, err := Write(w, r, body); err != nil {
				t.Errorf("Write %d: %v", n, err)
			}
		}
		joins <- c.joined - before
	})
	srv := &http.Server{Handler: h, ConnContext: ConnContext}
	go func() { _ = srv.Serve(wrap(Listener(ln))) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), bodies, joins
}

func get(t *testing.T, client *http.Client, method, url string) []byte {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d", method, url, resp.StatusCode)
	}
	return b
}

// Bodies of MinBody bytes and more leave with the head in one joined
// write; every body arrives whole, on one keep-alive connection, a HEAD
// included, directly on the listener and under a wrapper.
func TestWriteJoinsHeadAndBody(t *testing.T) {
	for name, wrap := range map[string]func(net.Listener) net.Listener{
		"bare":      func(ln net.Listener) net.Listener { return ln },
		"under cap": func(ln net.Listener) net.Listener { return capListener{ln} },
	} {
		t.Run(name, func(t *testing.T) {
			url, bodies, joins := serve(t, wrap)
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1, DisableCompression: true}}
			defer client.CloseIdleConnections()
			for _, n := range []int{72<<10 + 300, 100, MinBody, 0, 300 << 10, 4000, 6000, MinBody - 1, 72<<10 + 300} {
				got := get(t, client, http.MethodGet, url+"/"+strconv.Itoa(n))
				if !bytes.Equal(got, bodies[n]) {
					t.Fatalf("GET %d bytes: got %d other bytes", n, len(got))
				}
				want := 0
				if n >= MinBody {
					want = 1
				}
				if j := <-joins; j != want {
					t.Errorf("GET %d bytes: %d joined writes, want %d", n, j, want)
				}
				if b := get(t, client, http.MethodHead, url+"/"+strconv.Itoa(n)); len(b) != 0 {
					t.Fatalf("HEAD %d: a body of %d bytes", n, len(b))
				}
				if j := <-joins; j != 0 {
					t.Errorf("HEAD %d: %d joined writes", n, j)
				}
				if got := get(t, client, http.MethodGet, url+"/"+strconv.Itoa(n)+"?flush=1"); !bytes.Equal(got, bodies[n]) {
					t.Fatalf("GET %d bytes after a flush: got %d other bytes", n, len(got))
				}
				if j := <-joins; j != 0 {
					t.Errorf("GET %d bytes after a flush: %d joined writes", n, j)
				}
			}
		})
	}
}

// A held write goes out before a body sent with ReadFrom, which still
// reaches the TCP connection's own (sendfile for a file).
func TestReadFromSendsHeldWriteFirst(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := make([]byte, 200<<10)
	_, _ = rand.Read(data)
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		c, err := Listener(ln).Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		cc := c.(*Conn)
		cc.arm()
		if _, err := cc.Write([]byte("head:")); err != nil {
			done <- err
			return
		}
		f, err := os.Open(path)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		_, err = cc.ReadFrom(f)
		done <- err
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append([]byte("head:"), data...)) {
		t.Fatalf("got %d bytes, not the head then the file", len(got))
	}
}

// Under TLS there is no joining connection: Write is the response's own.
func TestWriteUnderTLS(t *testing.T) {
	body := make([]byte, 72<<10)
	_, _ = rand.Read(body)
	var found bool
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, found = r.Context().Value(connKey{}).(*Conn)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = Write(w, r, body)
	}))
	srv.Config.ConnContext = ConnContext
	srv.Listener = Listener(srv.Listener)
	srv.TLS = &tls.Config{NextProtos: []string{"http/1.1"}}
	srv.StartTLS()
	defer srv.Close()
	got := get(t, srv.Client(), http.MethodGet, srv.URL+"/")
	if !bytes.Equal(got, body) {
		t.Fatalf("got %d other bytes", len(got))
	}
	if found {
		t.Error("a joining connection under TLS")
	}
}
