package app

import (
	"context"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// MayManageRobots says whether p may create, change, rotate and delete
// the robot accounts of organization org: nil for its owners and server
// admins (with org:write), else the refusal CreateRobot would give
// (ENOTFOUND for an organization p may not see, EFORBIDDEN naming the
// missing role or scope). Pages use it to decide which buttons to show
// and to refuse a confirmation page; every change still goes through
// UpdateRobot, RotateRobot or DeleteRobot, which decide again.
func (a *App) MayManageRobots(ctx context.Context, p *chartctl.Principal, org string) error {
	_, err := a.robotOrg(ctx, p, org, true)
	return err
}
