package harness

import (
	"net"
	"net/http"
	"strconv"
	"strings"
)

// floorFile is one file the floor server serves: its bytes, the gzip
// form if any, and the ETag chartctl sent for it.
type floorFile struct {
	body, gz []byte
	etag     string
}

// floorServer is the least a Go server can do for the static routes: a
// bare net/http handler answering from memory with the headers chartctl
// sends, no router, middleware, logging, metrics or lookups. Measured
// beside chartctl and nginx, it separates what chartctl's own code costs
// from what Go's HTTP server costs on the machine.
type floorServer struct {
	files map[string]floorFile
	srv   *http.Server
	ln    net.Listener
}

func (f *floorServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ff, ok := f.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
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

// start serves on a free loopback port.
func (f *floorServer) start() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	f.ln = ln
	f.srv = &http.Server{Handler: f}
	go func() { _ = f.srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), nil
}

func (f *floorServer) stop() {
	if f.srv != nil {
		_ = f.srv.Close()
	}
}
