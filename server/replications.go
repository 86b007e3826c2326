package server

import (
	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/app"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// This file holds the replication endpoints of CONTRACT §18
// ("Federation"). The application layer decides who may manage which
// replication (admins of its source repository) and records every change.

func toReplication(r *chartctl.Replication) client.Replication {
	out := client.Replication{Name: r.Name, Source: r.Source, Target: r.Target, On: []string{}, CreatedAt: ts(r.CreatedAt)}
	for _, o := range r.On {
		out.On = append(out.On, string(o))
	}
	if r.Username != "" {
		u := r.Username
		out.Username = &u
	}
	if r.Filter.Name != "" || r.Filter.Version != "" {
		out.Filter = &client.ReplicationFilter{Name: r.Filter.Name, Version: r.Filter.Version}
	}
	return out
}

// replicationBody is the body of POST /v1/replications.
type replicationBody struct {
	Name     string                    `json:"name"`
	Source   string                    `json:"source"`
	Target   string                    `json:"target"`
	Username string                    `json:"username"`
	Password string                    `json:"password"`
	Filter   *client.ReplicationFilter `json:"filter"`
	On       []string                  `json:"on"`
}

// handleListReplications lists the replications of the repositories the
// caller administers.
func (s *Server) handleListReplications(c echo.Context) error {
	pg, err := httpx.ParsePage(c)
	if err != nil {
		return err
	}
	reps, err := s.app.Replications(c.Request().Context(), httpx.PrincipalOf(c))
	if err != nil {
		return err
	}
	return httpx.ListPage(c, reps, pg, toReplication)
}

// handleCreateReplication creates a replication.
func (s *Server) handleCreateReplication(c echo.Context) error {
	var req replicationBody
	if err := httpx.BindJSON(c, &req); err != nil {
		return err
	}
	in := app.ReplicationInput{Name: req.Name, Source: req.Source, Target: req.Target, Username: req.Username, Password: req.Password, On: req.On}
	if req.Filter != nil {
		in.FilterName, in.FilterVersion = req.Filter.Name, req.Filter.Version
	}
	r, err := s.app.CreateReplication(c.Request().Context(), httpx.PrincipalOf(c), in)
	if err != nil {
		return err
	}
	return httpx.Data(c, toReplication(r))
}

// handleGetReplication returns one replication.
func (s *Server) handleGetReplication(c echo.Context) error {
	r, err := s.app.Replication(c.Request().Context(), httpx.PrincipalOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return httpx.Data(c, toReplication(r))
}

// handleDeleteReplication deletes a replication.
func (s *Server) handleDeleteReplication(c echo.Context) error {
	if err := s.app.DeleteReplication(c.Request().Context(), httpx.PrincipalOf(c), c.Param("name")); err != nil {
		return err
	}
	return httpx.Data(c, map[string]any{"name": c.Param("name"), "deleted": true})
}

// handleRunReplication queues a copy of every version of the source.
func (s *Server) handleRunReplication(c echo.Context) error {
	n, err := s.app.RunReplication(c.Request().Context(), httpx.PrincipalOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	return httpx.Data(c, client.ReplicationRun{Name: c.Param("name"), Queued: n})
}

// handleReplicationStatus answers {pending, failed, last_success_at,
// last_error?}.
func (s *Server) handleReplicationStatus(c echo.Context) error {
	st, err := s.app.ReplicationStatus(c.Request().Context(), httpx.PrincipalOf(c), c.Param("name"))
	if err != nil {
		return err
	}
	out := client.ReplicationStatus{Pending: st.Pending, Failed: st.Failed, LastSuccessAt: tsp(st.LastSuccessAt)}
	if st.LastError != "" {
		e := st.LastError
		out.LastError = &e
	}
	return httpx.Data(c, out)
}
