// Package robot groups the `chartctl robot` commands: an organization's
// robot accounts.
package robot

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/robot/create"
	"github.com/chartctl/chartctl/internal/cmd/robot/delete"
	"github.com/chartctl/chartctl/internal/cmd/robot/disable"
	"github.com/chartctl/chartctl/internal/cmd/robot/list"
	"github.com/chartctl/chartctl/internal/cmd/robot/publisher"
	"github.com/chartctl/chartctl/internal/cmd/robot/rotate"
	"github.com/chartctl/chartctl/internal/cmd/robot/view"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdRobot returns the `robot` command group.
func NewCmdRobot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "robot <command>",
		Short: "Manage an organization's robot accounts: credentials for CI",
		Long: `A robot account belongs to an organization, not to a person: it survives
its creator leaving and goes when the organization is deleted. It reaches
only the repositories its patterns name (--repo 'acme-*'), with the
permissions it is given (pull, push, delete). Its secret works wherever an
API key does: as CHARTCTL_TOKEN, as a bearer token, and with Helm's basic
auth under the user name robot$ORG+NAME (quote it in shells:
'robot$acme+ci-push'). Organization owners manage robots.`,
		Example: `  chartctl robot create ci-push --org acme --repo 'acme-*' --permission pull,push --expires 90d
  chartctl robot list --org acme
  chartctl robot rotate ci-push --org acme --grace 10m
  chartctl robot delete ci-push --org acme`,
	}
	cmd.AddCommand(
		create.NewCmdCreate(f, nil),
		list.NewCmdList(f, nil),
		view.NewCmdView(f, nil),
		rotate.NewCmdRotate(f, nil),
		disable.NewCmdDisable(f, nil),
		disable.NewCmdEnable(f, nil),
		delete.NewCmdDelete(f, nil),
		publisher.NewCmdPublisher(f),
	)
	return cmd
}
