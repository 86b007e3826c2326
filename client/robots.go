package client

import (
	"context"
	"iter"
	"net/http"
	"net/url"
)

// RobotsService manages an organization's robot accounts
// (/v1/organizations/:org/robots): credentials that belong to the
// organization, limited to repository patterns and to pull, push and
// delete. Organization owners and server admins manage them.
type RobotsService service

// robotsPath is the path of an organization's robots, or of one robot
// when name is not empty.
func robotsPath(org, name string) string {
	p := "v1/organizations/" + url.PathEscape(org) + "/robots"
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// List returns one page of the robots of organization org, by name. It
// calls GET /v1/organizations/:org/robots.
func (s *RobotsService) List(ctx context.Context, org string, opts *ListOptions) ([]*Robot, *Response, error) {
	return getPage[Robot](ctx, s.client, robotsPath(org, ""), opts)
}

// All iterates over every robot of organization org, fetching pages of
// GET /v1/organizations/:org/robots as it goes.
func (s *RobotsService) All(ctx context.Context, org string) iter.Seq2[*Robot, error] {
	return paginate(ctx, ListOptions{}, func(ctx context.Context, lo *ListOptions) ([]*Robot, *Response, error) {
		return s.List(ctx, org, lo)
	})
}

// Get returns the robot name of organization org (with its last use and
// expiry; never its secret). It calls GET /v1/organizations/:org/robots/:name.
func (s *RobotsService) Get(ctx context.Context, org, name string) (*Robot, *Response, error) {
	req, err := s.client.NewRequest(http.MethodGet, robotsPath(org, name), nil)
	if err != nil {
		return nil, nil, err
	}
	return s.doRobot(ctx, req)
}

// Create creates a robot in organization org. The returned robot's Secret
// holds its secret, shown this once. It calls
// POST /v1/organizations/:org/robots.
func (s *RobotsService) Create(ctx context.Context, org string, r *CreateRobotRequest) (*Robot, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPost, robotsPath(org, ""), r)
	if err != nil {
		return nil, nil, err
	}
	return s.doRobot(ctx, req)
}

// Update changes the set fields of r on robot name of organization org:
// its description, patterns, permissions, expiry, or whether it is
// disabled. It calls PATCH /v1/organizations/:org/robots/:name.
func (s *RobotsService) Update(ctx context.Context, org, name string, r *UpdateRobotRequest) (*Robot, *Response, error) {
	req, err := s.client.NewRequest(http.MethodPatch, robotsPath(org, name), r)
	if err != nil {
		return nil, nil, err
	}
	return s.doRobot(ctx, req)
}

// Rotate gives robot name of organization org a new secret, returned in
// the robot's Secret this once; the old one keeps working for r.Grace (a
// nil r: not at all). It calls POST /v1/organizations/:org/robots/:name/rotate.
func (s *RobotsService) Rotate(ctx context.Context, org, name string, r *RotateRobotRequest) (*Robot, *Response, error) {
	if r == nil {
		r = &RotateRobotRequest{}
	}
	req, err := s.client.NewRequest(http.MethodPost, robotsPath(org, name)+"/rotate", r)
	if err != nil {
		return nil, nil, err
	}
	return s.doRobot(ctx, req)
}

// Delete deletes robot name of organization org; its secret stops at
// once. It calls DELETE /v1/organizations/:org/robots/:name.
func (s *RobotsService) Delete(ctx context.Context, org, name string) (*Response, error) {
	req, err := s.client.NewRequest(http.MethodDelete, robotsPath(org, name), nil)
	if err != nil {
		return nil, err
	}
	return s.client.Do(ctx, req, nil)
}

// doRobot sends req and decodes the robot it answers.
func (s *RobotsService) doRobot(ctx context.Context, req *http.Request) (*Robot, *Response, error) {
	robot := new(Robot)
	resp, err := s.client.Do(ctx, req, robot)
	if err != nil {
		return nil, resp, err
	}
	return robot, resp, nil
}
