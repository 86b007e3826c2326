package server

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// A connection under the per-address cap still hands files to the TCP
// connection's ReadFrom (net/http sends a body by sendfile only through
// it).
func TestLimitedConnKeepsReadFrom(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	limited := newConnLimitListener(ln, 4)
	defer limited.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	c, err := limited.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rf, ok := c.(io.ReaderFrom)
	if !ok {
		t.Fatalf("%T has no ReadFrom", c)
	}
	data := bytes.Repeat([]byte("chartctl"), 40<<10)
	path := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(client, int64(len(data))))
		got <- b
	}()
	if n, err := rf.ReadFrom(f); err != nil || n != int64(len(data)) {
		t.Fatalf("ReadFrom: %d, %v", n, err)
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("received %d bytes, not the file's %d", len(b), len(data))
	}
}
