// Package org groups the `chartctl org` commands.
package org

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/org/create"
	"github.com/chartctl/chartctl/internal/cmd/org/list"
	"github.com/chartctl/chartctl/internal/cmd/quota"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdOrg returns the `org` command group.
func NewCmdOrg(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "org <command>",
		Short: "List and create organizations; their quotas",
		Example: `  chartctl org create acme
  chartctl org list
  chartctl org quota set acme --max-bytes 50GiB`,
	}
	cmd.AddCommand(list.NewCmdList(f, nil), create.NewCmdCreate(f, nil), quota.NewCmdQuota(f, quota.Organization(f)))
	return cmd
}
