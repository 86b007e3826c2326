package create

import (
	"errors"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func TestNewCmdCreate(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		tty      bool
		want     CreateOptions
		wantFlag bool
	}{
		{name: "name only", args: []string{"stable"}, want: CreateOptions{Name: "stable", JSON: true}},
		{name: "all flags on a tty", args: []string{"platform", "--description", "Platform charts", "--org", "acme", "--public"}, tty: true,
			want: CreateOptions{Name: "platform", Description: "Platform charts", Organization: "acme", Public: true, Visibility: "public"}},
		{name: "internal", args: []string{"shared", "--visibility", "internal"}, want: CreateOptions{Name: "shared", JSON: true, Visibility: "internal"}},
		{name: "visibility public", args: []string{"x", "--visibility", "public"}, want: CreateOptions{Name: "x", JSON: true, Visibility: "public"}},
		{name: "public and visibility together", args: []string{"x", "--public", "--visibility", "public"}, wantFlag: true},
		{name: "unknown visibility", args: []string{"x", "--visibility", "secret"}, wantFlag: true},
		{name: "short description", args: []string{"x", "-d", "desc"}, want: CreateOptions{Name: "x", Description: "desc", JSON: true}},
		{name: "mirror", args: []string{"upstream", "--mirror", "https://charts.example.com", "--mirror-interval", "6h", "--mirror-username", "robot", "--mirror-password-stdin"},
			want: CreateOptions{Name: "upstream", JSON: true, Mirror: "https://charts.example.com", MirrorInterval: "6h", MirrorUsername: "robot", MirrorPasswordStdin: true}},
		{name: "mirror with the default interval", args: []string{"upstream", "--mirror", "https://charts.example.com"},
			want: CreateOptions{Name: "upstream", JSON: true, Mirror: "https://charts.example.com", MirrorInterval: "1h"}},
		{name: "mirror settings without --mirror", args: []string{"x", "--mirror-interval", "2h"}, wantFlag: true},
		{name: "mirror password without --mirror", args: []string{"x", "--mirror-password-stdin"}, wantFlag: true},
		{name: "no name", args: []string{}, wantFlag: true},
		{name: "two names", args: []string{"a", "b"}, wantFlag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			ios.SetStdoutTTY(tt.tty)
			f := &cmdutil.Factory{IOStreams: ios}
			var got *CreateOptions
			cmd := NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(ios.Out)
			cmd.SetErr(ios.ErrOut)
			err := cmd.Execute()
			if tt.wantFlag {
				var fe *cmdutil.FlagError
				if !errors.As(err, &fe) {
					t.Fatalf("err = %v, want a FlagError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want.Name || got.Description != tt.want.Description || got.Organization != tt.want.Organization ||
				got.Public != tt.want.Public || got.Visibility != tt.want.Visibility || got.JSON != tt.want.JSON || got.Mirror != tt.want.Mirror ||
				(tt.want.Mirror != "" && got.MirrorInterval != tt.want.MirrorInterval) || got.MirrorUsername != tt.want.MirrorUsername ||
				got.MirrorPasswordStdin != tt.want.MirrorPasswordStdin {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}
