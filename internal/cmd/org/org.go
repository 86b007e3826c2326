// Package org groups the `chartctl org` commands.
package org

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/cmd/org/create"
	"github.com/chartctl/chartctl/internal/cmd/org/delete"
	"github.com/chartctl/chartctl/internal/cmd/org/list"
	"github.com/chartctl/chartctl/internal/cmd/quota"
	"github.com/chartctl/chartctl/internal/cmdutil"
)

// NewCmdOrg returns the `org` command group.
func NewCmdOrg(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "org <command>",
		Short: "List, create and delete organizations; their quotas",
		Example: `  chartctl org create acme
  chartctl org list
  chartctl org quota set acme --max-bytes 50GiB
  chartctl org delete acme`,
	}
	cmd.AddCommand(list.NewCmdList(f, nil), create.NewCmdCreate(f, nil), delete.NewCmdDelete(f, nil), quota.NewCmdQuota(f, quota.Organization(f)))
	return cmd
}
