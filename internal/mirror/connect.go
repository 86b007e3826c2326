package mirror

import (
	"context"
	"errors"
	"net"
	"net/url"

	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/neterr"
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
	if errors.Is(err, netguard.ErrPrivateTarget) {
		// Which address, the server's operator finds in the log; the
		// mirror's owner learns what to ask the operator for.
		return errors.New("could not connect to " + u.Host + ": it is at a private or loopback address, which this server does not reach (its operator can allow it with " + app.FlagAllowPrivateUpstreams + ")")
	}
	// Only failures to reach the host are reworded (neterr words them as
	// webhook deliveries do); an answer the mirror could not use keeps its
	// own message.
	var dns *net.DNSError
	var op *net.OpError
	if !errors.As(err, &dns) && !errors.As(err, &op) && !ue.Timeout() && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return errors.New(neterr.Describe(u.Host, err))
}
