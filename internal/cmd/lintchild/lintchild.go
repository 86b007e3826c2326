// Package lintchild is the hidden `__lint` command: the child process in
// which the server lints an untrusted chart with Helm's rules, bounded in
// time and memory (CONTRACT §18 decision 9, admission.Subprocess).
package lintchild

import (
	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/internal/admission"
	"github.com/chartctl/chartctl/internal/chart"
)

// Name is the command's name, which the server runs its binary with.
const Name = "__lint"

// NewCmdLintChild returns the hidden lint command: it reads a chart
// archive on standard input and writes Helm's lint messages as JSON.
func NewCmdLintChild() *cobra.Command {
	return &cobra.Command{
		Use:    Name,
		Short:  "Lint a chart archive read from standard input (used by the server)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return admission.RunLintChild(cmd.InOrStdin(), cmd.OutOrStdout(), chart.DefaultLimits())
		},
	}
}
