package sync

import (
	"errors"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func TestNewCmdSync(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     SyncOptions
		wantFlag bool
	}{
		{name: "name only", args: []string{"bitnami"}, want: SyncOptions{Name: "bitnami", JSON: true, Timeout: 10 * time.Minute}},
		{name: "wait", args: []string{"bitnami", "--wait", "--timeout", "30s"}, want: SyncOptions{Name: "bitnami", JSON: true, Wait: true, Timeout: 30 * time.Second}},
		{name: "short wait", args: []string{"bitnami", "-w"}, want: SyncOptions{Name: "bitnami", JSON: true, Wait: true, Timeout: 10 * time.Minute}},
		{name: "no timeout", args: []string{"bitnami", "--wait", "--timeout", "0s"}, wantFlag: true},
		{name: "no name", args: []string{}, wantFlag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios}
			var got *SyncOptions
			cmd := NewCmdSync(f, func(o *SyncOptions) error { got = o; return nil })
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
			if got.Name != tt.want.Name || got.JSON != tt.want.JSON || got.Wait != tt.want.Wait || got.Timeout != tt.want.Timeout {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}
