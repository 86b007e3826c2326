// Package client is the Go SDK for the chartctl /v1 API.
//
// It defines the wire types that the server encodes, so the two cannot
// drift apart, and it never imports the module's internal packages.
package client
