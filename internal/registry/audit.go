package registry

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// This file audits refused and failed writes to /v2, as the server's
// audit middleware does for /v1 and the ChartMuseum API. Successful writes
// are audited in the store transaction of their change: a chart push or
// delete by the application layer, the push of any other manifest, the
// delete of a tag, a manifest or a blob by the handlers (App.Record),
// with the artifact (name@digest, name:tag) as the target.
//
// Every PUT, POST, PATCH or DELETE that is answered with an
// error leaves an entry: outcome "denied" when the caller's credential,
// scope or role refused it, "failed" otherwise (a quota, a conflict, an
// invalid manifest, a rate limit). One 401 is not audited: a request
// without any credential answered with the token challenge, which every
// Docker/OCI client sends first, before it logs in.

// Keys of the echo.Context a request's handlers fill in for its audit
// entry.
const (
	// auditActionKey holds the action when the handler learned it is
	// more specific than the route's: chart.push for a Helm chart
	// manifest, chart.delete for a chart version's.
	auditActionKey = "registry.audit_action"
	// deniedKey is set when authorization refused the request.
	deniedKey = "registry.denied"
)

// writeAction returns the audit action of method on the route named
// route, "" for a read.
func writeAction(route, method string) string {
	switch route + " " + method {
	case "manifest PUT":
		return "manifest.push"
	case "manifest DELETE":
		return "manifest.delete"
	case "startUpload POST", "upload PATCH", "upload PUT":
		return "blob.upload"
	case "upload DELETE":
		return "blob.upload_cancel"
	case "blob DELETE":
		return "blob.delete"
	}
	return ""
}

// denied marks the request as refused by authorization and returns err.
func denied(c echo.Context, err error) error {
	c.Set(deniedKey, true)
	return err
}

// auditRefusal records a write of route that was answered with err (the
// response already written), if it is one to audit. name is the OCI name
// the request addressed ("" if none).
func (r *Registry) auditRefusal(c echo.Context, route, name string, err error) {
	req := c.Request()
	action := writeAction(route, req.Method)
	if action == "" {
		return
	}
	if a, ok := c.Get(auditActionKey).(string); ok {
		action = a
	}
	status := c.Response().Status
	if status == http.StatusUnauthorized && !hasCredential(req) {
		return // the token flow's challenge: the client logs in and retries
	}
	outcome := chartctl.OutcomeFailed
	switch chartctl.ErrorCode(err) {
	case chartctl.EUNAUTHORIZED, chartctl.EFORBIDDEN:
		outcome = chartctl.OutcomeDenied
	}
	if d, _ := c.Get(deniedKey).(bool); d || status == http.StatusUnauthorized {
		outcome = chartctl.OutcomeDenied
	}
	// The repository's organization, so its owners see the entry too.
	org := ""
	if name != "" && chartctl.ValidOCIName(name) {
		if repo, err := r.App.Store.Repository(req.Context(), repoOf(name)); err == nil {
			org = repo.Organization
		}
	}
	r.App.AuditFailure(req.Context(), action, req.URL.Path, org, outcome)
}
