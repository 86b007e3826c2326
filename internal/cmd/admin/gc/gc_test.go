package gc

import (
	"errors"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func TestNewCmdGC(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     GCOptions
		wantFlag bool
	}{
		{name: "collect", args: []string{}, want: GCOptions{JSON: true}},
		{name: "dry run", args: []string{"--dry-run"}, want: GCOptions{DryRun: true, JSON: true}},
		{name: "argument", args: []string{"x"}, wantFlag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios}
			var got *GCOptions
			cmd := NewCmdGC(f, func(o *GCOptions) error { got = o; return nil })
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
			if got.DryRun != tt.want.DryRun || got.JSON != tt.want.JSON {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
