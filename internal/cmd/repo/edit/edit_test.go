package edit

import (
	"errors"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func TestNewCmdEdit(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		description *string
		visibility  *string
		wantFlag    bool
	}{
		{name: "visibility", args: []string{"stable", "--visibility", "internal"}, visibility: ptr("internal")},
		{name: "description", args: []string{"stable", "-d", "new"}, description: ptr("new")},
		{name: "empty description removes it", args: []string{"stable", "--description", ""}, description: ptr("")},
		{name: "both", args: []string{"stable", "--description", "d", "--visibility", "private"}, description: ptr("d"), visibility: ptr("private")},
		{name: "nothing to change", args: []string{"stable"}, wantFlag: true},
		{name: "unknown visibility", args: []string{"stable", "--visibility", "hidden"}, wantFlag: true},
		{name: "no name", args: []string{"--visibility", "public"}, wantFlag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios}
			var got *EditOptions
			cmd := NewCmdEdit(f, func(o *EditOptions) error { got = o; return nil })
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
			if got.Name != "stable" || !same(got.Description, tt.description) || !same(got.Visibility, tt.visibility) {
				t.Errorf("options = %+v", *got)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func same(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }
