// Package coalesce sends an HTTP/1.1 response's head and the start of a
// large body from memory in one system call.
//
// net/http writes a response through a 4 KiB buffer: a body of more than
// that leaves in two writes, the buffer (status line, headers and the
// body's first bytes) and then the rest. Each write is a system call, and
// on a keep-alive connection without delay each sends its own segments,
// so the client wakes for the head and again for the body. nginx corks
// the connection around a response for that reason. A connection of this
// package, asked to by the handler (Write), holds the first of the two
// writes and sends it with the second in one writev: one system call
// fewer for the server, one burst for the client.
//
// The server wraps its listener (Listener) and keeps each connection in
// its requests' contexts (ConnContext); handlers write bodies of at least
// MinBody bytes with Write. Connections under TLS, HTTP/2 and bodies that
// go by sendfile are left as they are.
package coalesce

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
)

// MinBody is the smallest body Write sends joined: from 8 KiB on, the
// part of a body that does not fit in net/http's 4 KiB buffer beside the
// headers is written by a second write of its own, the one the first is
// joined to. A smaller body may leave in one write anyway.
const MinBody = 8 << 10

// maxHeld is the largest write held: net/http's buffer is 4 KiB. A
// larger first write is a body whose head went before (a handler that
// flushed), and goes at once: there is nothing to join it to.
const maxHeld = 16 << 10

// Listener returns ln whose TCP connections can join a response's two
// writes. Other connections are returned as they are.
func Listener(ln net.Listener) net.Listener { return listener{ln} }

type listener struct{ net.Listener }

// Accept wraps the next TCP connection in a *Conn.
func (l listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return &Conn{TCPConn: tc}, nil
	}
	return c, nil
}

// Conn is a TCP connection that, while armed, holds one write and sends
// it together with the next. Only the goroutine that writes the
// connection arms it: for HTTP/1.x, the one serving its requests.
type Conn struct {
	*net.TCPConn
	armed bool
	held  *[]byte
	// joined counts the writes sent joined to a held one (tests read it).
	joined int
}

// heldBufs are the copies of held writes (net/http reuses its buffer as
// soon as a write returns).
var heldBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// Write writes p, or, armed, keeps a copy of the first p to send with the
// next.
func (c *Conn) Write(p []byte) (int, error) {
	if !c.armed {
		return c.TCPConn.Write(p)
	}
	if c.held == nil {
		if len(p) > maxHeld {
			c.armed = false
			return c.TCPConn.Write(p)
		}
		b := heldBufs.Get().(*[]byte)
		*b = append((*b)[:0], p...)
		c.held = b
		return len(p), nil
	}
	held := c.held
	c.held, c.armed = nil, false
	first := len(*held)
	bufs := net.Buffers{*held, p}
	n, err := bufs.WriteTo(c.TCPConn) // one writev
	heldBufs.Put(held)
	c.joined++
	return int(max(n-int64(first), 0)), err
}

// ReadFrom sends the held write, if any, then r by the TCP connection's
// ReadFrom (sendfile for a file): net/http sends file bodies that way
// only when the connection has ReadFrom.
func (c *Conn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.disarm(); err != nil {
		return 0, err
	}
	return c.TCPConn.ReadFrom(r)
}

// NetConn returns the TCP connection c wraps.
func (c *Conn) NetConn() net.Conn { return c.TCPConn }

// arm makes c hold its next write.
func (c *Conn) arm() { c.armed = true }

// disarm ends holding and sends the held write, if any: the body's rest
// went into net/http's buffer, not to a write of its own.
func (c *Conn) disarm() error {
	c.armed = false
	held := c.held
	if held == nil {
		return nil
	}
	c.held = nil
	_, err := c.TCPConn.Write(*held)
	heldBufs.Put(held)
	return err
}

type connKey struct{}

// ConnContext is http.Server.ConnContext for a server on Listener: it keeps
// the connection's *Conn in ctx, under the wrappers that expose NetConn
// (a connection cap). Under TLS there is none.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	for {
		switch x := c.(type) {
		case *Conn:
			return context.WithValue(ctx, connKey{}, x)
		case *tls.Conn:
			return ctx
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return ctx
		}
	}
}

// Write writes body, of MinBody bytes or more, as the response to r,
// joining net/http's write of the response's head to the body's rest when
// r came over HTTP/1.x on a *Conn (ConnContext); otherwise, and for
// smaller bodies, it is w.Write. The status and headers are set before,
// Content-Length among them.
func Write(w http.ResponseWriter, r *http.Request, body []byte) (int, error) {
	if len(body) < MinBody || r.ProtoMajor != 1 {
		return w.Write(body)
	}
	c, _ := r.Context().Value(connKey{}).(*Conn)
	if c == nil {
		return w.Write(body)
	}
	c.arm()
	n, err := w.Write(body)
	if derr := c.disarm(); err == nil && derr != nil {
		err = derr
	}
	return n, err
}
