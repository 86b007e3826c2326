package scim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

type memberRef struct {
	Value string `json:"value"`
}

// groupBody is a Group resource as providers send it.
type groupBody struct {
	DisplayName string      `json:"displayName"`
	ExternalID  string      `json:"externalId"`
	Members     []memberRef `json:"members"`
}

func refs(ms []memberRef) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Value != "" {
			out = append(out, m.Value)
		}
	}
	return out
}

func (h *Handler) renderGroup(c echo.Context) func(*chartctl.SCIMGroup) any {
	withMembers := !strings.Contains(strings.ToLower(c.QueryParam("excludedAttributes")), "members")
	return func(g *chartctl.SCIMGroup) any {
		out := map[string]any{
			"schemas":     []string{SchemaGroup},
			"id":          g.ID,
			"displayName": g.DisplayName,
			"meta": map[string]any{"resourceType": "Group", "created": ts(g.CreatedAt), "lastModified": ts(g.UpdatedAt),
				"location": h.location("Groups", g.ID)},
		}
		if g.ExternalID != "" {
			out["externalId"] = g.ExternalID
		}
		if withMembers {
			ms := []map[string]string{}
			for _, id := range g.Members {
				m := map[string]string{"value": id, "$ref": h.location("Users", id)}
				if u, err := h.App.SCIMUser(ctxOf(c), id); err == nil {
					m["display"] = u.Email
				} else {
					continue // deleted since
				}
				ms = append(ms, m)
			}
			out["members"] = ms
		}
		return out
	}
}

func (h *Handler) listGroups(c echo.Context) error {
	f, err := parseFilter(c.QueryParam("filter"))
	if err != nil {
		return err
	}
	start, count, err := page(c)
	if err != nil {
		return err
	}
	groups, err := h.App.Store.SCIMGroups(ctxOf(c))
	if err != nil {
		return err
	}
	if f != nil {
		var keep []*chartctl.SCIMGroup
		for _, g := range groups {
			switch f.attr {
			case "displayname":
				if strings.EqualFold(g.DisplayName, f.value) {
					keep = append(keep, g)
				}
			case "externalid":
				if g.ExternalID == f.value {
					keep = append(keep, g)
				}
			case "id":
				if g.ID == f.value {
					keep = append(keep, g)
				}
			default:
				return errorf(http.StatusBadRequest, "invalidFilter", "Groups can be filtered by displayName, externalId or id.")
			}
		}
		groups = keep
	}
	return list(c, groups, start, count, h.renderGroup(c))
}

func (h *Handler) getGroup(c echo.Context) error {
	g, err := h.App.Store.SCIMGroup(ctxOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, h.renderGroup(c)(g))
}

func (h *Handler) createGroup(c echo.Context) error {
	var b groupBody
	if err := readBody(c, &b); err != nil {
		return err
	}
	g := &chartctl.SCIMGroup{DisplayName: strings.TrimSpace(b.DisplayName), ExternalID: b.ExternalID, Members: refs(b.Members)}
	if err := h.App.PutSCIMGroup(ctxOf(c), g); err != nil {
		return err
	}
	return writeJSON(c, http.StatusCreated, h.renderGroup(c)(g))
}

func (h *Handler) replaceGroup(c echo.Context) error {
	ctx := ctxOf(c)
	g, err := h.App.Store.SCIMGroup(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	var b groupBody
	if err := readBody(c, &b); err != nil {
		return err
	}
	g.DisplayName, g.ExternalID, g.Members = strings.TrimSpace(b.DisplayName), b.ExternalID, refs(b.Members)
	if err := h.App.PutSCIMGroup(ctx, g); err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, h.renderGroup(c)(g))
}

// memberFilter matches members[value eq "ID"], the path Okta removes a
// member at.
var memberFilter = regexp.MustCompile(`(?i)^members\[\s*value\s+eq\s+"([^"]*)"\s*\]$`)

func (h *Handler) patchGroup(c echo.Context) error {
	ctx := ctxOf(c)
	g, err := h.App.Store.SCIMGroup(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	ops, err := readPatch(c)
	if err != nil {
		return err
	}
	members := slices.Clone(g.Members)
	memberList := func(raw json.RawMessage) ([]string, error) {
		var ms []memberRef
		if len(raw) == 0 || string(raw) == "null" {
			return nil, nil
		}
		if err := json.Unmarshal(raw, &ms); err != nil {
			var one memberRef
			if json.Unmarshal(raw, &one) != nil {
				return nil, errorf(http.StatusBadRequest, "invalidValue", "members must be a list of {\"value\": USER_ID}.")
			}
			ms = []memberRef{one}
		}
		return refs(ms), nil
	}
	str := func(raw json.RawMessage, attr string) (string, error) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", errorf(http.StatusBadRequest, "invalidValue", "%s must be a string.", attr)
		}
		return s, nil
	}
	apply := func(op, path string, raw json.RawMessage) error {
		lp := strings.ToLower(path)
		if m := memberFilter.FindStringSubmatch(path); m != nil {
			if op == "remove" {
				members = slices.DeleteFunc(members, func(id string) bool { return id == m[1] })
			}
			return nil
		}
		switch lp {
		case "members":
			ids, err := memberList(raw)
			if err != nil {
				return err
			}
			switch op {
			case "add":
				members = append(members, ids...)
			case "replace":
				members = ids
			case "remove":
				if ids == nil {
					members = nil // no value: every member goes
				}
				members = slices.DeleteFunc(members, func(id string) bool { return slices.Contains(ids, id) })
			}
		case "displayname":
			if op != "remove" {
				s, err := str(raw, "displayName")
				if err != nil {
					return err
				}
				g.DisplayName = strings.TrimSpace(s)
			}
		case "externalid":
			if op == "remove" {
				g.ExternalID = ""
			} else {
				s, err := str(raw, "externalId")
				if err != nil {
					return err
				}
				g.ExternalID = s
			}
		}
		// Other attributes (id, meta, extensions) are not changed by a
		// PATCH and are accepted as a no-op.
		return nil
	}
	for _, op := range ops {
		if op.Path != "" {
			if err := apply(op.Op, op.Path, op.Value); err != nil {
				return err
			}
			continue
		}
		var attrs map[string]json.RawMessage
		if err := json.Unmarshal(op.Value, &attrs); err != nil {
			return errorf(http.StatusBadRequest, "invalidValue", "An operation without a path needs an object value.")
		}
		for k, v := range attrs {
			if err := apply(op.Op, k, v); err != nil {
				return err
			}
		}
	}
	g.Members = members
	if err := h.App.PutSCIMGroup(ctx, g); err != nil {
		return err
	}
	h.invalidate()
	return writeJSON(c, http.StatusOK, h.renderGroup(c)(g))
}

func (h *Handler) deleteGroup(c echo.Context) error {
	if err := h.App.DeleteSCIMGroup(ctxOf(c), c.Param("id")); err != nil {
		return err
	}
	h.invalidate()
	return c.NoContent(http.StatusNoContent)
}
