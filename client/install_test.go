package client_test

import (
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
)

func TestInstallLines(t *testing.T) {
	l := client.Install("https://charts.example.com/", "stable", "web", "1.2.3", false)
	want := client.InstallLines{
		RepoAdd:      "helm repo add stable https://charts.example.com/helm/stable",
		Install:      "helm install my-web stable/web --version 1.2.3",
		ChartRepoAdd: "helm repo add web https://charts.example.com/helm/stable/charts/web",
		OCIInstall:   "helm install my-web oci://charts.example.com/stable/web --version 1.2.3",
	}
	if l != want {
		t.Errorf("public https:\n got %+v\nwant %+v", l, want)
	}
	l = client.Install("http://127.0.0.1:8080", "priv", "api", "", true)
	if l.RepoAdd != `helm repo add priv http://127.0.0.1:8080/helm/priv --username x --password "$KEY"` ||
		l.RegistryLogin != `echo "$KEY" | helm registry login 127.0.0.1:8080 --username x --password-stdin --plain-http` ||
		l.OCIInstall != "helm install my-api oci://127.0.0.1:8080/priv/api --plain-http" ||
		l.ChartRepoAdd != `helm repo add api http://127.0.0.1:8080/helm/priv/charts/api --username x --password "$KEY"` {
		t.Errorf("private http: %+v", l)
	}
	// The release name is one Helm accepts (lower case DNS-1123, at most
	// 53 characters), whatever the chart's name.
	for name, want := range map[string]string{
		"MyApp":                 "helm install my-myapp r/MyApp --version 1.0.0",
		"my_chart":              "helm install my-my-chart r/my_chart --version 1.0.0",
		"web-":                  "helm install my-web r/web- --version 1.0.0",
		"a..b":                  "helm install my-a.b r/a..b --version 1.0.0",
		"x.y":                   "helm install my-x.y r/x.y --version 1.0.0",
		strings.Repeat("a", 60): "helm install my-" + strings.Repeat("a", 50) + " r/" + strings.Repeat("a", 60) + " --version 1.0.0",
	} {
		if got := client.Install("https://x", "r", name, "1.0.0", false).Install; got != want {
			t.Errorf("%q: install line %q, want %q", name, got, want)
		}
	}
	if got := client.Install("https://x", "r", "x.y", "1.0.0", false).OCIInstall; got != "helm install my-x.y oci://x/r/x.y --version 1.0.0" {
		t.Errorf("OCI install line %q", got)
	}
	for _, name := range []string{"MyChart", "web-", "a..b"} {
		if l := client.Install("https://x", "r", name, "1.0.0", false); l.OCIInstall != "" {
			t.Errorf("%q is not an OCI name but got %q", name, l.OCIInstall)
		}
	}
}
