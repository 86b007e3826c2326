// Package team groups the `chartctl team` commands.
package team

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/team/addmember"
	"github.com/chartctl/chartctl/internal/cmd/team/create"
	"github.com/chartctl/chartctl/internal/cmd/team/list"
	"github.com/chartctl/chartctl/internal/cmd/team/members"
	"github.com/chartctl/chartctl/internal/cmd/team/setidpgroups"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdTeam returns the `team` command group.
func NewCmdTeam(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "team <command>",
		Short: "Create and list teams and manage their members",
		Long: `Teams belong to organizations. A user's role in an organization is the
highest of their roles in its teams: member (read), maintainer (also create
repositories and push charts) or owner (also manage teams and members).`,
		Example: `  chartctl team create platform --org acme
  chartctl team add-member platform --email ada@example.com
  chartctl team members platform`,
	}
	cmd.AddCommand(
		list.NewCmdList(f, nil),
		create.NewCmdCreate(f, nil),
		addmember.NewCmdAddMember(f, nil),
		members.NewCmdMembers(f, nil),
		setidpgroups.NewCmdSetIDPGroups(f, nil),
	)
	return cmd
}
