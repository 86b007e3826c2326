package create

import (
	"errors"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

var now = time.Date(2026, 11, 21, 22, 33, 45, 0, time.UTC)

func TestParseExpiry(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
		err  bool
	}{
		{in: "90d", want: now.AddDate(0, 0, 90)},
		{in: "2w", want: now.AddDate(0, 0, 14)},
		{in: "36h", want: now.Add(36 * time.Hour)},
		{in: "2027-01-31", want: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)},
		{in: "2027-01-31T10:00:00Z", want: time.Date(2027, 1, 31, 10, 0, 0, 0, time.UTC)},
		{in: "0d", err: true},
		{in: "-5d", err: true},
		{in: "soon", err: true},
		{in: "2020-01-01", err: true},
		{in: "-1h", err: true},
	}
	for _, tt := range tests {
		got, err := ParseExpiry(now, tt.in)
		if tt.err {
			if err == nil {
				t.Errorf("ParseExpiry(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseExpiry(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestNewCmdCreate(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantFlag bool
		check    func(t *testing.T, o *CreateOptions)
	}{
		{name: "scopes and expiry", args: []string{"--name", "ci", "--scopes", "repo:read,repo:write", "--expires", "90d"},
			check: func(t *testing.T, o *CreateOptions) {
				if o.Name != "ci" || len(o.Scopes) != 2 || o.Scopes[1] != "repo:write" {
					t.Errorf("options %+v", o)
				}
				if o.Expires != "90d" {
					t.Errorf("expires %q", o.Expires)
				}
			}},
		{name: "no expiry", args: []string{"--name", "ci", "--scopes", "repo:read"},
			check: func(t *testing.T, o *CreateOptions) {
				if o.Expires != "" {
					t.Errorf("expires %q, want never", o.Expires)
				}
			}},
		{name: "repositories, repeated", args: []string{"--name", "deploy", "--scopes", "repo:read", "--repo", "acme-charts", "--repo", "web-*"},
			check: func(t *testing.T, o *CreateOptions) {
				if len(o.Repositories) != 2 || o.Repositories[0] != "acme-charts" || o.Repositories[1] != "web-*" {
					t.Errorf("repositories %q", o.Repositories)
				}
			}},
		{name: "missing name", args: []string{"--scopes", "repo:read"}, wantFlag: true},
		{name: "missing scopes", args: []string{"--name", "ci"}, wantFlag: true},
		{name: "bad expiry", args: []string{"--name", "ci", "--scopes", "repo:read", "--expires", "tomorrow"}, wantFlag: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
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
			tt.check(t, got)
		})
	}
}
