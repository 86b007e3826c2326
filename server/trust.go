package server

import (
	"encoding/base64"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// Trust material (CONTRACT §18 "Trust and admission"): GET/POST
// /v1/repositories/:repo/trust and /v1/organizations/:org/trust, DELETE
// …/trust/:name.

// trustScope is the scope the route names.
func trustScope(c echo.Context) app.TrustScope {
	return app.TrustScope{Repository: c.Param("repo"), Organization: c.Param("org")}
}

// toTrustEntry is the /v1 form of a trust entry. Binary keyrings are
// shown base64, so the answer stays JSON text.
func toTrustEntry(e *chartctl.TrustEntry, creators map[string]string) client.TrustEntry {
	key := string(e.Key)
	if !utf8.Valid(e.Key) {
		key = base64.StdEncoding.EncodeToString(e.Key)
	}
	return client.TrustEntry{Name: e.Name, Kind: e.Kind, Key: key, Issuer: e.Issuer, Subject: e.Subject,
		CreatedBy: creators[e.CreatedBy], CreatedAt: ts(e.CreatedAt)}
}

// handleListTrust lists the trust entries of a repository or an
// organization, by name.
func (s *Server) handleListTrust(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	entries, err := s.app.TrustEntries(ctx, httpx.PrincipalOf(c), trustScope(c))
	if err != nil {
		return err
	}
	page, meta := httpx.Paginate(entries, pg)
	creators := map[string]string{}
	for _, e := range page {
		if _, ok := creators[e.CreatedBy]; !ok && e.CreatedBy != "" {
			if u, err := s.Store.User(ctx, e.CreatedBy); err == nil {
				creators[e.CreatedBy] = u.Email
			}
		}
	}
	return httpx.List(c, httpx.MapSlice(page, func(e *chartctl.TrustEntry) client.TrustEntry { return toTrustEntry(e, creators) }), meta)
}

// handleAddTrust adds a trust entry.
func (s *Server) handleAddTrust(c echo.Context) error {
	var req client.TrustRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	key := []byte(req.Key)
	if req.KeyBase64 != "" {
		if req.Key != "" {
			return chartctl.Invalid("key_base64", "Give the key as text in \"key\" or base64 in \"key_base64\", not both.")
		}
		b, err := base64.StdEncoding.DecodeString(req.KeyBase64)
		if err != nil {
			return chartctl.Invalid("key_base64", "key_base64 is not valid base64.")
		}
		key = b
	}
	p := httpx.PrincipalOf(c)
	e, err := s.app.AddTrust(c.Request().Context(), p, trustScope(c),
		app.TrustSpec{Kind: req.Kind, Name: req.Name, Key: key, Issuer: req.Issuer, Subject: req.Subject})
	if err != nil {
		return err
	}
	return httpx.Data(c, toTrustEntry(e, map[string]string{p.User.ID: p.User.Email}))
}

// handleRemoveTrust removes a trust entry.
func (s *Server) handleRemoveTrust(c echo.Context) error {
	if err := s.app.RemoveTrust(c.Request().Context(), httpx.PrincipalOf(c), trustScope(c), c.Param("name")); err != nil {
		return err
	}
	return httpx.Data(c, map[string]any{"name": c.Param("name"), "deleted": true})
}

// toVerification is the /v1 form of a verification record; a version
// never verified is unsigned.
func toVerification(v *chartctl.Verification) *client.Verification {
	out := &client.Verification{Status: chartctl.VerificationUnsigned, Signatures: []client.Signature{}}
	if v == nil {
		return out
	}
	out.Status = v.Status
	for _, s := range v.Signatures {
		cs := client.Signature{Kind: s.Kind, Identity: s.Identity, Trust: s.Trust, Reason: s.Reason}
		if s.VerifiedAt != nil {
			t := ts(*s.VerifiedAt)
			cs.VerifiedAt = &t
		}
		out.Signatures = append(out.Signatures, cs)
	}
	return out
}
