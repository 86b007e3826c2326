// Package org groups the `chartctl org` commands.
package org

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/org/create"
	"github.com/chartctl/chartctl/internal/cmd/org/list"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdOrg returns the `org` command group.
func NewCmdOrg(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "org <command>",
		Short: "List and create organizations",
		Example: `  chartctl org create acme
  chartctl org list`,
	}
	cmd.AddCommand(list.NewCmdList(f, nil), create.NewCmdCreate(f, nil))
	return cmd
}
