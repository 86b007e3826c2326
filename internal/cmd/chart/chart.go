// Package chart groups the `chartctl chart` commands.
package chart

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/chart/check"
	"github.com/chartctl/chartctl/internal/cmd/chart/delete"
	"github.com/chartctl/chartctl/internal/cmd/chart/diff"
	"github.com/chartctl/chartctl/internal/cmd/chart/list"
	"github.com/chartctl/chartctl/internal/cmd/chart/pull"
	"github.com/chartctl/chartctl/internal/cmd/chart/push"
	"github.com/chartctl/chartctl/internal/cmd/chart/view"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdChart returns the `chart` command group.
func NewCmdChart(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chart <command>",
		Short: "Push, list, view, diff, pull and delete charts",
		Example: `  chartctl chart push ./mychart --repo stable
  chartctl chart list --repo stable
  chartctl chart view mychart --repo stable
  chartctl chart pull mychart --repo stable`,
	}
	cmd.AddCommand(
		push.NewCmdPush(f, nil),
		list.NewCmdList(f, nil),
		pull.NewCmdPull(f, nil),
		delete.NewCmdDelete(f, nil),
		view.NewCmdView(f, nil),
		diff.NewCmdDiff(f, nil),
		check.NewCmdCheck(f, nil),
	)
	return cmd
}
