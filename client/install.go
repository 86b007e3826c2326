package client

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// InstallLines are the shell commands that install one chart version from
// a chartctl server, over both protocols it speaks.
type InstallLines struct {
	// RepoAdd adds the repository as a classic Helm repository.
	RepoAdd string `json:"repo_add"`
	// Install installs the version from that classic repository.
	Install string `json:"install"`
	// ChartRepoAdd adds the chart's own index (only its versions, a few
	// KB however large the repository) as a Helm repository named after
	// the chart; empty on a repository's lines.
	ChartRepoAdd string `json:"chart_repo_add,omitempty"`
	// RegistryLogin logs Helm in to the server's OCI registry; empty for a
	// public repository, which pulls anonymously.
	RegistryLogin string `json:"registry_login,omitempty"`
	// OCIInstall installs the version straight from the OCI registry;
	// empty when the chart name is not a valid OCI path component (upper
	// case, a trailing '-'), which keeps such charts classic-only.
	OCIInstall string `json:"oci_install,omitempty"`
}

// ociComponent is one path component of an OCI repository name (OCI
// Distribution Specification, "Pulling manifests").
var ociComponent = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)

// OCIName reports whether name can be an OCI path component, so a chart of
// that name is reachable at oci://HOST/REPO/NAME.
func OCIName(name string) bool { return ociComponent.MatchString(name) }

// Install returns the install lines for version of chart in repo on the
// server at serverURL. A private repository's lines take an API key from
// $KEY (Helm sends it as the password of HTTP Basic); version "" installs
// the latest.
func Install(serverURL, repo, chart, version string, private bool) InstallLines {
	base := strings.TrimRight(serverURL, "/")
	var l InstallLines
	l.RepoAdd = fmt.Sprintf("helm repo add %s %s/helm/%s", repo, base, repo)
	if private {
		l.RepoAdd += ` --username x --password "$KEY"`
	}
	ver := ""
	if version != "" {
		ver = " --version " + version
	}
	l.ChartRepoAdd = fmt.Sprintf("helm repo add %s %s/helm/%s/charts/%s", chart, base, repo, url.PathEscape(chart))
	if private {
		l.ChartRepoAdd += ` --username x --password "$KEY"`
	}
	release := releaseName(chart)
	l.Install = fmt.Sprintf("helm install %s %s/%s%s", release, repo, chart, ver)
	if !OCIName(chart) {
		return l
	}
	host, plain := ociHost(base)
	if private {
		l.RegistryLogin = RegistryLogin(serverURL)
	}
	l.OCIInstall = fmt.Sprintf("helm install %s oci://%s/%s/%s%s%s", release, host, repo, chart, ver, plain)
	return l
}

// ociHost is the host (and path) of the OCI registry of the server at
// base, and " --plain-http" when it is reached over plain HTTP.
func ociHost(base string) (host, plain string) {
	host = base
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		host = u.Host + strings.TrimRight(u.Path, "/")
		if u.Scheme == "http" {
			plain = " --plain-http"
		}
	}
	return host, plain
}

// OCIRepository is the OCI address of repo on the server at serverURL
// (oci://HOST/REPO, which Helm takes with a chart name appended), and
// whether Helm must reach it with --plain-http.
func OCIRepository(serverURL, repo string) (addr string, plainHTTP bool) {
	host, plain := ociHost(strings.TrimRight(serverURL, "/"))
	return "oci://" + host + "/" + repo, plain != ""
}

// RegistryLogin is the command that logs Helm in to the OCI registry of
// the server at serverURL with an API key from $KEY.
func RegistryLogin(serverURL string) string {
	host, plain := ociHost(strings.TrimRight(serverURL, "/"))
	return fmt.Sprintf(`echo "$KEY" | helm registry login %s --username x --password-stdin%s`, hostOnly(host), plain)
}

// maxReleaseName is the longest release name Helm accepts.
const maxReleaseName = 53

// releaseName is the release name the install lines suggest for chart:
// "my-" and the chart's name, made into one Helm accepts (lower-case
// DNS-1123 labels separated by dots, at most 53 characters), since chart
// names may have upper case, '_', runs of dots and any length.
func releaseName(chart string) string {
	var labels []string
	for _, label := range strings.Split(strings.ToLower(chart), ".") {
		label = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
				return r
			}
			return '-'
		}, label)
		if label = strings.Trim(label, "-"); label != "" {
			labels = append(labels, label)
		}
	}
	name := "my-" + strings.Join(labels, ".")
	if len(labels) == 0 {
		name = "my-chart"
	}
	if len(name) > maxReleaseName {
		name = name[:maxReleaseName]
	}
	return strings.TrimRight(name, "-.")
}

// hostOnly drops a path prefix: `helm registry login` takes a host.
func hostOnly(hostPath string) string {
	h, _, _ := strings.Cut(hostPath, "/")
	return h
}
