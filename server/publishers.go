package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// The trusted publishers of a robot account (CONTRACT §18 "Access"):
// GET/POST /v1/organizations/:org/robots/:name/publishers and DELETE
// …/publishers/:id.

// toPublisher is the /v1 form of a trusted publisher; creators maps user
// IDs to emails.
func toPublisher(p *chartctl.TrustedPublisher, creators map[string]string) client.Publisher {
	claims := map[string]string{}
	for k, v := range p.Claims {
		claims[k] = v
	}
	return client.Publisher{ID: p.ID, Issuer: p.Issuer, Audience: p.Audience, Claims: claims,
		CreatedBy: creators[p.CreatedBy], CreatedAt: ts(p.CreatedAt)}
}

// creatorEmails maps the creators of pubs to their emails; a creator
// whose account is gone maps to "".
func (s *Server) creatorEmails(ctx context.Context, pubs ...*chartctl.TrustedPublisher) map[string]string {
	out := map[string]string{}
	for _, p := range pubs {
		if _, done := out[p.CreatedBy]; done || p.CreatedBy == "" {
			continue
		}
		out[p.CreatedBy] = ""
		if u, err := s.Store.User(ctx, p.CreatedBy); err == nil {
			out[p.CreatedBy] = u.Email
		}
	}
	return out
}

// handleListPublishers lists a robot's trusted publishers, oldest first.
func (s *Server) handleListPublishers(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	pubs, err := s.app.Publishers(ctx, httpx.PrincipalOf(c), c.Param("org"), c.Param("name"))
	if err != nil {
		return err
	}
	page, meta := httpx.Paginate(pubs, pg)
	creators := s.creatorEmails(ctx, page...)
	return httpx.List(c, httpx.MapSlice(page, func(p *chartctl.TrustedPublisher) client.Publisher { return toPublisher(p, creators) }), meta)
}

// handleAddPublisher adds a trusted publisher to a robot.
func (s *Server) handleAddPublisher(c echo.Context) error {
	var req client.PublisherRequest
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	ctx := c.Request().Context()
	p, err := s.app.AddPublisher(ctx, httpx.PrincipalOf(c), c.Param("org"), c.Param("name"),
		app.PublisherSpec{Issuer: req.Issuer, Audience: req.Audience, Claims: req.Claims})
	if err != nil {
		return err
	}
	return httpx.Data(c, toPublisher(p, s.creatorEmails(ctx, p)))
}

// handleRemovePublisher removes a robot's trusted publisher.
func (s *Server) handleRemovePublisher(c echo.Context) error {
	if err := s.app.RemovePublisher(c.Request().Context(), httpx.PrincipalOf(c), c.Param("org"), c.Param("name"), c.Param("id")); err != nil {
		return err
	}
	return httpx.Data(c, map[string]any{"id": c.Param("id"), "deleted": true})
}
