package server

import (
	"io"
	"net"
	"sync"
)

// connLimitListener caps concurrent connections per client address: one
// over the cap is closed as soon as it is accepted, so a single address
// cannot hold every file descriptor with idle or slow connections.
type connLimitListener struct {
	net.Listener
	max int
	mu  sync.Mutex
	n   map[string]int
}

func newConnLimitListener(ln net.Listener, max int) *connLimitListener {
	return &connLimitListener{Listener: ln, max: max, n: map[string]int{}}
}

// Accept returns the next connection whose address is under its cap.
func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host, _, err := net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			host = c.RemoteAddr().String()
		}
		l.mu.Lock()
		if l.n[host] >= l.max {
			l.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.n[host]++
		l.mu.Unlock()
		return &limitedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

func (l *connLimitListener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[host]--; l.n[host] <= 0 {
		delete(l.n, host)
	}
}

// limitedConn gives its slot back once, when closed.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// ReadFrom hands a file to the wrapped connection's ReadFrom, which is
// sendfile for a TCP connection: net/http sends a body that way only when
// the connection has ReadFrom.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(c.Conn, r)
}

// NetConn returns the connection c wraps, so that coalesce.ConnContext
// finds the joining connection under the cap.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
