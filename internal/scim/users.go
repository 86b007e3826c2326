package scim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// userBody is a User resource as providers send it; what chartctl does
// not keep (name, displayName, locale, password, extension schemas) is
// accepted and ignored.
type userBody struct {
	UserName   string `json:"userName"`
	ExternalID string `json:"externalId"`
	// Active is a boolean, or a string as Entra ID sends ("False").
	Active any `json:"active"`
	Emails []struct {
		Value   string `json:"value"`
		Primary any    `json:"primary"`
	} `json:"emails"`
}

// email is the account's email: the userName when it is one (as Okta and
// Entra ID send it by default), else the primary email.
func (b *userBody) email() string {
	if strings.Contains(b.UserName, "@") {
		return b.UserName
	}
	for _, e := range b.Emails {
		if p, _ := boolValue(e.Primary); p {
			return e.Value
		}
	}
	if len(b.Emails) > 0 {
		return b.Emails[0].Value
	}
	return b.UserName
}

func (b *userBody) active() (bool, error) {
	if b.Active == nil {
		return true, nil
	}
	return boolValue(b.Active)
}

func (h *Handler) renderUser(u *chartctl.User) any {
	out := map[string]any{
		"schemas":  []string{SchemaUser},
		"id":       u.ID,
		"userName": u.Email,
		"active":   !u.Disabled,
		"emails":   []map[string]any{{"value": u.Email, "primary": true, "type": "work"}},
		"meta": map[string]any{"resourceType": "User", "created": ts(u.CreatedAt), "lastModified": ts(u.CreatedAt),
			"location": h.location("Users", u.ID)},
	}
	if u.Identity.Provider == chartctl.ProviderSCIM && u.Identity.Subject != u.Email {
		out["externalId"] = u.Identity.Subject
	}
	return out
}

func (h *Handler) listUsers(c echo.Context) error {
	f, err := parseFilter(c.QueryParam("filter"))
	if err != nil {
		return err
	}
	start, count, err := page(c)
	if err != nil {
		return err
	}
	users, err := h.App.SCIMUsers(ctxOf(c))
	if err != nil {
		return err
	}
	if f != nil {
		var keep []*chartctl.User
		for _, u := range users {
			switch f.attr {
			case "username", "emails.value", "emails":
				if strings.EqualFold(u.Email, f.value) {
					keep = append(keep, u)
				}
			case "externalid":
				if u.Identity.Provider == chartctl.ProviderSCIM && u.Identity.Subject == f.value {
					keep = append(keep, u)
				}
			case "id":
				if u.ID == f.value {
					keep = append(keep, u)
				}
			default:
				return errorf(http.StatusBadRequest, "invalidFilter", "Users can be filtered by userName, emails.value, externalId or id.")
			}
		}
		users = keep
	}
	return list(c, users, start, count, h.renderUser)
}

func (h *Handler) getUser(c echo.Context) error {
	u, err := h.App.SCIMUser(ctxOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, h.renderUser(u))
}

func (h *Handler) createUser(c echo.Context) error {
	var b userBody
	if err := readBody(c, &b); err != nil {
		return err
	}
	active, err := b.active()
	if err != nil {
		return err
	}
	u, err := h.App.ProvisionUser(ctxOf(c), b.email(), b.ExternalID, active)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusCreated, h.renderUser(u))
}

func (h *Handler) replaceUser(c echo.Context) error {
	ctx := ctxOf(c)
	u, err := h.App.SCIMUser(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	var b userBody
	if err := readBody(c, &b); err != nil {
		return err
	}
	active, err := b.active()
	if err != nil {
		return err
	}
	email := b.email()
	if u, err = h.App.UpdateSCIMUser(ctx, u, &email, &active); err != nil {
		return err
	}
	h.invalidate()
	return writeJSON(c, http.StatusOK, h.renderUser(u))
}

// patchOp is one PATCH operation (RFC 7644 §3.5.2); op compares without
// case, as Entra ID sends "Replace".
type patchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

type patchBody struct {
	Operations []patchOp `json:"Operations"`
}

func readPatch(c echo.Context) ([]patchOp, error) {
	var b patchBody
	if err := readBody(c, &b); err != nil {
		return nil, err
	}
	if len(b.Operations) == 0 {
		return nil, errorf(http.StatusBadRequest, "invalidValue", "Operations is required: a PATCH needs at least one operation.")
	}
	for i := range b.Operations {
		op := strings.ToLower(b.Operations[i].Op)
		if op != "add" && op != "replace" && op != "remove" {
			return nil, errorf(http.StatusBadRequest, "invalidSyntax", "Unknown PATCH op %q: use add, replace or remove.", b.Operations[i].Op)
		}
		b.Operations[i].Op = op
	}
	return b.Operations, nil
}

// emailPath matches the paths an email is patched at: emails[type eq
// "work"].value, emails.value.
var emailPath = regexp.MustCompile(`(?i)^emails(\[[^\]]*\])?(\.value)?$`)

func (h *Handler) patchUser(c echo.Context) error {
	ctx := ctxOf(c)
	u, err := h.App.SCIMUser(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	ops, err := readPatch(c)
	if err != nil {
		return err
	}
	var (
		email  *string
		active *bool
	)
	set := func(attr string, raw json.RawMessage) error {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return errorf(http.StatusBadRequest, "invalidValue", "The value of %s is not valid JSON.", attr)
		}
		switch {
		case strings.EqualFold(attr, "active"):
			b, err := boolValue(v)
			if err != nil {
				return err
			}
			active = &b
		case strings.EqualFold(attr, "userName"):
			if s, ok := v.(string); ok && strings.Contains(s, "@") {
				email = &s
			}
		case emailPath.MatchString(attr):
			switch x := v.(type) {
			case string:
				email = &x
			case []any:
				for _, e := range x {
					if m, ok := e.(map[string]any); ok {
						if s, ok := m["value"].(string); ok && email == nil {
							email = &s
						}
					}
				}
			}
		}
		// Anything else (name, displayName, extension attributes) is
		// not kept by chartctl and is accepted as a no-op.
		return nil
	}
	for _, op := range ops {
		if op.Op == "remove" {
			continue // nothing chartctl keeps can be removed from a user
		}
		if op.Path != "" {
			if err := set(op.Path, op.Value); err != nil {
				return err
			}
			continue
		}
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(op.Value, &attrs); err != nil {
			return errorf(http.StatusBadRequest, "invalidValue", "An operation without a path needs an object value.")
		}
		for k, v := range attrs {
			if err := set(k, v); err != nil {
				return err
			}
		}
	}
	if u, err = h.App.UpdateSCIMUser(ctx, u, email, active); err != nil {
		return err
	}
	h.invalidate()
	return writeJSON(c, http.StatusOK, h.renderUser(u))
}

func (h *Handler) deleteUser(c echo.Context) error {
	ctx := ctxOf(c)
	u, err := h.App.SCIMUser(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	if err := h.App.DeleteSCIMUser(ctx, u); err != nil {
		return err
	}
	h.invalidate()
	return c.NoContent(http.StatusNoContent)
}
