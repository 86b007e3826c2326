// Package neterr words the errors of outgoing connections (webhook
// deliveries, mirror and upstream fetches) for the people who read them:
// "could not connect to HOST: REASON", with a short reason and without
// what belongs to the server alone — its resolver's address, its own
// address and port, Go's error chains.
package neterr

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/chartctl/chartctl/internal/netguard"
)

// Describe returns "could not connect to HOST: REASON" for err, an error
// of a connection to host (a host name, or host:port) or of a request
// over it. REASON is one of a few short phrases (Reason).
func Describe(host string, err error) string {
	return "could not connect to " + host + ": " + Reason(err)
}

// Reason returns a short, server-neutral reason for a connection error:
// "no such host", "connection refused", "timed out", "connection reset",
// "host unreachable", "network unreachable", "refused to connect to a
// private address" (loopback, private and link-local addresses, unless
// the server allows them), "TLS certificate not trusted",
// "TLS certificate does not match the host", "TLS handshake failed",
// "the connection closed before an answer", or "connection failed" for
// anything else.
func Reason(err error) string {
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case err == nil:
		return "connection failed"
	case errors.Is(err, netguard.ErrPrivateTarget):
		return "refused to connect to a private address"
	case errors.As(err, &dns):
		switch {
		case dns.IsNotFound:
			return "no such host"
		case dns.IsTimeout:
			return "timed out looking up the host"
		}
		return "could not look up the host"
	case errors.As(err, &hostname):
		return "TLS certificate does not match the host"
	case errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &verify):
		return "TLS certificate not trusted"
	case errors.As(err, &header), errors.As(err, &alert):
		return "TLS handshake failed"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timed out"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed before an answer"
	}
	return "connection failed"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
