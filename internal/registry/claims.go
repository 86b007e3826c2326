package registry

import (
	"context"

	"github.com/opencontainers/go-digest"
)

// earlyClaim is the claim of a blob's digest (app.ClaimDigests) taken as
// soon as a request that completes an upload names the digest, while the
// request is still being checked (its session read, its quota): on a
// shared store the claim is a committed write, and taken this way its
// round trip runs beside those reads instead of after the body. storeBlob
// takes it over (take); a request that ends before drops it.
type earlyClaim struct {
	done    chan struct{} // closed once the claim is answered
	release func()
	err     error
	taken   bool
}

// claimEarly starts claiming d.
func (r *Registry) claimEarly(ctx context.Context, d digest.Digest) *earlyClaim {
	c := &earlyClaim{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		c.release, c.err = r.App.ClaimDigests(ctx, d.String())
	}()
	return c
}

// take waits for the claim and returns its release, which is then the
// taker's to call.
func (c *earlyClaim) take() (func(), error) {
	<-c.done
	c.taken = true
	return c.release, c.err
}

// drop releases the claim unless storeBlob took it over, once it is
// answered (a release before the claim lands would leave the claim
// behind). A nil c drops nothing.
func (c *earlyClaim) drop() {
	if c == nil {
		return
	}
	<-c.done
	if !c.taken && c.err == nil {
		c.release()
	}
}
