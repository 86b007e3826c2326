package login

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/oauth2"

	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/keyring"
)

// deviceAuthorize runs the device authorization grant (RFC 8628): it
// prints a URL and a code for the person to enter in any browser, then
// polls the token endpoint at the interval the server asks for (x/oauth2
// honours slow_down) until the request is approved, denied or expired.
func deviceAuthorize(ctx context.Context, opts *LoginOptions, server string) (*keyring.Credential, error) {
	as := cmdutil.DiscoverAuthServer(ctx, opts.HTTPClient, server)
	if as.DeviceAuthorizationEndpoint == "" {
		return nil, &cmdutil.HintError{
			Err:  fmt.Errorf("%s does not offer device login (its OAuth metadata has no device_authorization_endpoint, or could not be read)", server),
			Hint: "Run chartctl login (in a browser on this machine) or chartctl login --with-token with an API key instead.",
		}
	}
	cfg := cmdutil.OAuthConfig(as, "", opts.Scopes)
	octx := context.WithValue(ctx, oauth2.HTTPClient, opts.HTTPClient)
	da, err := cfg.DeviceAuth(octx)
	if err != nil {
		return nil, fmt.Errorf("start the device login: %w", describeOAuthError(err))
	}
	cs := opts.IO.ColorScheme()
	fmt.Fprintf(opts.IO.ErrOut, "To sign in to %s, open this address in a browser on any device:\n\n  %s\n\nand enter the code %s\n",
		server, termtext.Line(da.VerificationURI), cs.Bold(termtext.Line(da.UserCode)))
	if da.VerificationURIComplete != "" {
		fmt.Fprintf(opts.IO.ErrOut, "\nOr open this address, which has the code filled in:\n\n  %s\n", termtext.Line(da.VerificationURIComplete))
	}
	fmt.Fprintf(opts.IO.ErrOut, "\nApprove only if the page shows the same code. Waiting for approval...\n")
	tok, err := cfg.DeviceAccessToken(octx, da)
	if err != nil {
		var re *oauth2.RetrieveError
		switch {
		case errors.As(err, &re) && re.ErrorCode == "access_denied":
			return nil, &cmdutil.AuthError{Err: errors.New("access was denied in the browser")}
		case errors.As(err, &re) && re.ErrorCode == "expired_token", errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, &cmdutil.HintError{
				Err:  errors.New("the code expired before it was approved"),
				Hint: "Run chartctl login --device again and enter the new code within its lifetime.",
			}
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("device login: %w", describeOAuthError(err))
	}
	return &keyring.Credential{
		AccessToken:  tok.AccessToken,
		RefreshToken: tok.RefreshToken,
		Expiry:       tok.Expiry.UTC(),
		TokenURL:     as.TokenEndpoint,
	}, nil
}

// describeOAuthError turns an OAuth error answer into its code and
// description, without the response body x/oauth2 quotes.
func describeOAuthError(err error) error {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode == "" {
		return err
	}
	msg := re.ErrorCode
	if re.ErrorDescription != "" {
		msg += ": " + re.ErrorDescription
	}
	return errors.New(termtext.Line(msg))
}
