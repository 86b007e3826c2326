package create

import (
	"testing"

	"github.com/chartctl/chartctl/client"
)

// TestParseFilters: name= and version= in one flag or several; a comma
// inside a SemVer range stays in the range; anything else is a usage
// error.
func TestParseFilters(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want *client.ReplicationFilter
	}{
		{nil, nil},
		{[]string{"name=web-*"}, &client.ReplicationFilter{Name: "web-*"}},
		{[]string{"name=web-*,version=>=1.0.0"}, &client.ReplicationFilter{Name: "web-*", Version: ">=1.0.0"}},
		{[]string{"version=>=1.0.0, <2", "name=api"}, &client.ReplicationFilter{Name: "api", Version: ">=1.0.0, <2"}},
		{[]string{"version=>=1.0.0,<2,name=x"}, &client.ReplicationFilter{Name: "x", Version: ">=1.0.0,<2"}},
	} {
		got, err := ParseFilters(tc.in)
		if err != nil || (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("ParseFilters(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range [][]string{{"chart=web"}, {"web"}, {"name=web,oops"}, {"name="}} {
		if _, err := ParseFilters(bad); err == nil {
			t.Errorf("ParseFilters(%q) accepted", bad)
		}
	}
}
