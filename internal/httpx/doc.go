// Package httpx holds what every HTTP transport of chartctl shares: the
// caller's principal in a request, strict JSON binding, the success and
// error envelopes of the contract (§1, §2), pagination (§3) and the
// interfaces through which protocol packages (the Helm repository, the OCI
// registry, the OAuth server, the dashboard) reach authentication and rate
// limiting without importing the server that provides them.
package httpx
