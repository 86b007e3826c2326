package webhook

import (
	"net/http"
	"time"

	"github.com/chartctl/chartctl/internal/netguard"
)

// NewClient returns the HTTP client deliveries use: the address is checked
// (netguard) when the connection is made, after name resolution, so a name that
// resolves to a public address when the webhook is saved and to a private
// one later (DNS rebinding) is still refused; redirects are not followed;
// every phase is bounded by timeout.
func NewClient(allowPrivate bool, timeout time.Duration) *http.Client {
	tr := netguard.Transport(timeout, allowPrivate, "--allow-private-webhooks")
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
