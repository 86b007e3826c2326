package registry

import (
	"encoding/base64"
	"encoding/json"
	"github.com/labstack/echo/v4"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// handleBase answers GET /v2/: 200 for a caller with a credential (or the
// anonymous token), 401 with the token challenge otherwise, so clients
// learn where to log in.
func (r *Registry) handleBase(c echo.Context, _ pathMatch) error {
	w, req := c.Response(), c.Request()
	p, err := r.principal(c)
	if err != nil {
		return err
	}
	if req.Header.Get("Authorization") == "" && p == nil {
		w.Header().Set("WWW-Authenticate", r.challenge(req, ""))
		return newError(http.StatusUnauthorized, CodeUnauthorized, "Authentication required: log in with an API key as the password (any user name).")
	}
	return writeJSON(w, req, http.StatusOK, "application/json", struct{}{})
}

// tokenResponse is the Docker token flow's answer.
type tokenResponse struct {
	Token       string `json:"token"`
	AccessToken string `json:"access_token"`
	ExpiresIn   int    `json:"expires_in"`
	IssuedAt    string `json:"issued_at"`
}

// handleToken answers GET /v2/token (the Docker token flow): with HTTP
// Basic (password = API key, access token, robot secret or exchanged
// credential; any user name, except that robot$ORG+NAME must be the
// secret's robot) it returns
// that credential as the bearer token, after checking it; without a
// credential it returns the anonymous token, which pulls public
// repositories only. The scope parameter is not needed: every request is
// authorized on its own.
func (r *Registry) handleToken(c echo.Context, _ pathMatch) error {
	w, req := c.Response(), c.Request()
	tok := anonymousToken
	if hasCredential(req) {
		if _, err := r.principal(c); err != nil {
			return err
		}
		tok = credential(req)
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, req, http.StatusOK, "application/json", tokenResponse{
		Token: tok, AccessToken: tok, ExpiresIn: int(r.Config.TokenExpiry / time.Second),
		IssuedAt: r.Now().UTC().Format(time.RFC3339),
	})
}

// credential returns the credential of an Authorization header the server
// accepted: the token of Bearer, or the password of Basic.
func credential(req *http.Request) string {
	scheme, rest, _ := strings.Cut(req.Header.Get("Authorization"), " ")
	rest = strings.TrimSpace(rest)
	if strings.EqualFold(scheme, "Basic") {
		raw, _ := base64.StdEncoding.DecodeString(rest)
		_, pw, _ := strings.Cut(string(raw), ":")
		return pw
	}
	return rest
}

// writeJSON answers v as JSON with content type ct.
func writeJSON(w http.ResponseWriter, req *http.Request, status int, ct string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	writeBody(w, req, status, ct, b)
	return nil
}

// writeBody answers b with content type ct (no body for HEAD).
func writeBody(w http.ResponseWriter, req *http.Request, status int, ct string, b []byte) {
	h := w.Header()
	h["Content-Type"] = []string{ct}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}
