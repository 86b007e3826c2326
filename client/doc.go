// Package client is the Go SDK for the chartctl /v1 API.
//
// It defines the wire types that the server encodes, so the two cannot
// drift apart, and it never imports the module's internal packages.
//
// # Usage
//
// Create a client for a server, with a credential, and call the services:
//
//	c, err := client.New("https://charts.example.com",
//		client.WithToken(os.Getenv("CHARTCTL_TOKEN")))
//	if err != nil {
//		return err
//	}
//	repo, _, err := c.Repositories.Create(ctx, &client.CreateRepositoryRequest{Name: "stable"})
//
// Each group of endpoints is a service on the Client: Repositories, Charts,
// Teams, Organizations, Search, APIKeys, RateLimit, Users and OAuthClients.
// Every method takes a context, and returns the decoded resource, a
// *Response and an error.
//
// # Authentication
//
// WithToken sends a static bearer token (an API key, such as a CI job's);
// WithTokenSource takes an oauth2.TokenSource, such as the one of an
// oauth2.Config, which refreshes an expired access token by itself. The
// credential is added by the client's http.RoundTripper, and only to
// requests whose scheme, host and port are the base URL's: a redirect to
// another host, or any other request, goes without it.
//
// # Responses and errors
//
// A Response carries the request id (X-Request-Id), the rate-limit state of
// the X-RateLimit-* headers (Rate) and, for lists, the pagination Meta.
//
// An answer other than 2xx is an *Error, with the HTTP status, the
// contract's error Code, the server's Message, the offending Parameter,
// the RequestID and, for 429 and 503, RetryAfter. IsNotFound,
// IsUnauthorized, IsForbidden, IsConflict and IsRateLimited test for the
// common cases, through wrapping:
//
//	_, _, err := c.Repositories.Get(ctx, "stable")
//	if client.IsNotFound(err) {
//		// the repository does not exist, or the caller may not see it
//	}
//
// # Pagination
//
// List methods take ListOptions (Page, Limit) and return one page; the
// Response's Meta and NextPage tell whether more follow. The All methods
// return Go iterators that fetch page after page as the loop goes on:
//
//	for repo, err := range c.Repositories.All(ctx) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(repo.Name)
//	}
//
// # Retries
//
// Do retries a request that met
//
//   - 429 Too Many Requests: the server guarantees the refused request was
//     not executed, so any request is sent again whose body can be (JSON
//     bodies always; an upload when its archive is an io.ReadSeeker);
//   - 500, 502, 503 or 504, or a connection that dropped before an answer:
//     only idempotent requests (GET, HEAD, PUT, DELETE, OPTIONS), since a
//     POST might have taken effect.
//
// It waits as the server's Retry-After asks (seconds or an HTTP date), or
// else with exponential backoff and full jitter (a random wait up to 0.5 s,
// 1 s, 2 s, ... capped at 30 s). At most WithMaxRetries retries are made
// (3 by default). A single wait longer than WithMaxWait (a minute by
// default) is not slept through: the *Error is returned at once, with
// RetryAfter telling the caller how long to wait; and the waits of one call
// add up to at most WithMaxTotalWait. Cancelling the context ends a wait.
// WithRetryHook lets a program say why it is waiting.
//
// # Uploads
//
// ChartsService.Upload streams an archive from an io.Reader as
// multipart/form-data without holding it in memory, and reports progress
// through UploadOptions.Progress. Uploading the same archive twice succeeds
// (the server answers the stored record), so a CI job may push blindly.
package client
