package client_test

import (
	"testing"

	"github.com/chartctl/chartctl/client"
)

func TestInstallLines(t *testing.T) {
	l := client.Install("https://charts.example.com/", "stable", "web", "1.2.3", false)
	want := client.InstallLines{
		RepoAdd:    "helm repo add stable https://charts.example.com/helm/stable",
		Install:    "helm install my-web stable/web --version 1.2.3",
		OCIInstall: "helm install my-web oci://charts.example.com/stable/web --version 1.2.3",
	}
	if l != want {
		t.Errorf("public https:\n got %+v\nwant %+v", l, want)
	}
	l = client.Install("http://127.0.0.1:8080", "priv", "api", "", true)
	if l.RepoAdd != `helm repo add priv http://127.0.0.1:8080/helm/priv --username x --password "$KEY"` ||
		l.RegistryLogin != `echo "$KEY" | helm registry login 127.0.0.1:8080 --username x --password-stdin --plain-http` ||
		l.OCIInstall != "helm install my-api oci://127.0.0.1:8080/priv/api --plain-http" {
		t.Errorf("private http: %+v", l)
	}
	for _, name := range []string{"MyChart", "web-", "a..b"} {
		if l := client.Install("https://x", "r", name, "1.0.0", false); l.OCIInstall != "" {
			t.Errorf("%q is not an OCI name but got %q", name, l.OCIInstall)
		}
	}
}
