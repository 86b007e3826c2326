package mirror

import (
	"context"
	"errors"
	"net"
	"net/url"
	"syscall"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/netguard"
)

// connectError words a failure to reach an upstream for the mirror's
// status, which the repository's readers see: "could not connect to
// HOST: REASON", with HOST as the mirror's URL names it. The error Go
// gives says more than they should know: the server's resolver
// ("lookup x on 127.0.0.53:53") and the addresses a name resolved to,
// which may be internal. Other errors are returned as they are.
func connectError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil || u.Host == "" {
		return err
	}
	reason := ""
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.Is(err, netguard.ErrPrivateTarget):
		// Which address, the server's operator finds in the log.
		reason = "it is at a private or loopback address, which this server does not reach (its operator can allow it with " + app.FlagAllowPrivateUpstreams + ")"
	case errors.As(err, &dns) && dns.IsNotFound:
		reason = "no such host"
	case errors.As(err, &dns) && dns.IsTimeout:
		reason = "looking up its name timed out"
	case errors.As(err, &dns):
		reason = "its name could not be looked up"
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		reason = "no route to the host"
	case errors.Is(err, syscall.ECONNRESET):
		reason = "the connection was reset"
	case errors.Is(err, context.DeadlineExceeded), ue.Timeout():
		reason = "timed out"
	case errors.As(err, &op) && op.Op == "dial":
		reason = "the connection failed"
	default:
		return err
	}
	return errors.New("could not connect to " + u.Host + ": " + reason)
}
