package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/client/termtext"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/text"
)

// PrintJSON writes v as indented JSON. JSON escapes control characters, so
// server-provided text needs no further sanitizing here.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// Version ranges (">=1.0.0, <2") and URLs with "&" stay readable and
	// greppable; the output is not embedded in HTML.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// NewTable returns a table for standard output, aligned on a terminal.
func (f *Factory) NewTable() *text.Table {
	return text.NewTable(f.IOStreams.Out, f.IOStreams.IsStdoutTTY(), f.IOStreams.TerminalWidth())
}

// ExactArgs is cobra.ExactArgs with a usage error that names what is
// missing.
func ExactArgs(n int, msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return FlagErrorf("too many arguments")
		}
		if len(args) < n {
			return FlagErrorf("%s", msg)
		}
		return nil
	}
}

// RangeArgs is cobra.RangeArgs with a usage error that names what is
// missing.
func RangeArgs(minN, maxN int, msg string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > maxN {
			return FlagErrorf("too many arguments")
		}
		if len(args) < minN {
			return FlagErrorf("%s", msg)
		}
		return nil
	}
}

// NoArgs rejects positional arguments with a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return FlagErrorf("unknown argument %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}

// completionLimit bounds how many names a completion fetches.
const completionLimit = 100

// completeFrom completes toComplete from the items of seq: the names that
// start with it, each with its description (both from describe), at most
// completionLimit of them. The walk stops at the first error, completing
// what it found.
func completeFrom[T any](seq iter.Seq2[T, error], toComplete string, describe func(T) (name, desc string)) []string {
	var names []string
	for v, err := range seq {
		if err != nil || len(names) >= completionLimit {
			break
		}
		if name, desc := describe(v); strings.HasPrefix(name, toComplete) {
			names = append(names, termtext.Line(name)+"\t"+termtext.Line(desc))
		}
	}
	return names
}

// CompleteRepositories completes repository names from the server; any
// failure (no server, no credential) completes nothing rather than noise.
func CompleteRepositories(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeFrom(c.Repositories.All(cmd.Context()), toComplete, func(r *client.Repository) (string, string) { return r.Name, r.Description }), cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteTeams completes team names from the server.
func CompleteTeams(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeFrom(c.Teams.All(cmd.Context(), client.TeamListOptions{}), toComplete, func(t *client.Team) (string, string) { return t.Name, t.Organization }), cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteOrganizations completes organization names from the server.
func CompleteOrganizations(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeFrom(c.Organizations.All(cmd.Context()), toComplete, func(o *client.Organization) (string, string) { return o.Name, o.Description }), cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteEventTypes completes webhook event types ("*" for every one),
// the list the server accepts (chartctl.EventTypes).
func CompleteEventTypes(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	if toComplete == "" {
		out = append(out, "*\tevery event")
	}
	for _, t := range chartctl.EventTypes {
		if strings.HasPrefix(string(t), toComplete) {
			out = append(out, string(t))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// CompleteReplications completes replication names from the server.
func CompleteReplications(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, err := f.Client()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeFrom(c.Replications.All(cmd.Context()), toComplete, func(r *client.Replication) (string, string) { return r.Name, r.Source + " → " + r.Target }), cobra.ShellCompDirectiveNoFileComp
	}
}

// FirstArgOnly wraps a completion so it completes only the first
// positional argument.
func FirstArgOnly(fn func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// ShellQuote quotes s for a POSIX shell when it holds anything but plain
// characters, so a printed command line can be pasted as it is: a robot's
// user name robot$ORG+NAME becomes 'robot$ORG+NAME', which no shell
// expands.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
