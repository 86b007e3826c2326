// Package packaging_test checks the .deb and .rpm that goreleaser builds
// (make packages, CHARTCTL_PACKAGES names its output directory) the way an
// operator meets them: the .deb is installed with the real dpkg into a
// scratch root (never the host) whose maintainer scripts run chrooted
// there, the unit is verified, the unit's ExecStart is run as its user
// with its environment and the installed config file (edited for TLS) and
// serves HTTPS, an upgrade keeps the edited config, and removal keeps the
// data.
package packaging_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/chartctl/chartctl/internal/testkit"
)

// packages returns the .deb and .rpm of this machine's architecture.
func packages(t *testing.T) (deb, rpm string) {
	t.Helper()
	dir := os.Getenv("CHARTCTL_PACKAGES")
	if dir == "" {
		if testkit.RequireE2E() {
			t.Fatal("CHARTCTL_PACKAGES is not set (run make packages) and CHARTCTL_REQUIRE_E2E=1")
		}
		t.Skip("set CHARTCTL_PACKAGES to the directory `make packages` wrote")
	}
	debs, _ := filepath.Glob(filepath.Join(dir, "chartctl_*_linux_"+runtime.GOARCH+".deb"))
	rpms, _ := filepath.Glob(filepath.Join(dir, "chartctl_*_linux_"+runtime.GOARCH+".rpm"))
	if len(debs) != 1 || len(rpms) != 1 {
		t.Fatalf("want one .deb and one .rpm for %s in %s, found %v %v", runtime.GOARCH, dir, debs, rpms)
	}
	return debs[0], rpms[0]
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// scratchRoot makes a directory dpkg can install into: an empty package
// database, and the few programs the maintainer scripts call (with their
// shared libraries), copied from this machine.
func scratchRoot(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers", "etc", "tmp", "bin", "usr/bin", "usr/sbin", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"var/lib/dpkg/status":    "",
		"var/lib/dpkg/available": "",
		"etc/passwd":             "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":              "root:x:0:\n",
		"etc/shadow":             "root:*:19000:0:99999:7:::\n",
		"etc/gshadow":            "root:*::\n",
		"etc/nsswitch.conf":      "passwd: files\ngroup: files\nshadow: files\n",
	}
	if b, err := os.ReadFile("/etc/login.defs"); err == nil {
		files["etc/login.defs"] = string(b)
	}
	for p, c := range files {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Scripts redirect to /dev/null, as on any real system.
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(filepath.Join(root, "dev/null"), syscall.S_IFCHR|0o666, int(mkdev(1, 3))); err != nil {
		// Where device nodes cannot be made, a plain file takes the writes.
		if err := os.WriteFile(filepath.Join(root, "dev/null"), nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	for _, prog := range []string{"sh", "getent", "useradd", "chgrp", "chmod", "nologin"} {
		path, err := exec.LookPath(prog)
		if err != nil {
			t.Skipf("%s is not installed here; the maintainer scripts need it", prog)
		}
		copyWithLibs(t, root, path)
	}
	sh, _ := exec.LookPath("sh")
	copyFile(t, sh, filepath.Join(root, "bin/sh"))
	return root
}

var lddPath = regexp.MustCompile(`(/\S+)`)

// copyWithLibs copies the program at path and the shared libraries ldd
// lists for it into root, under the same paths.
func copyWithLibs(t *testing.T, root, path string) {
	t.Helper()
	copyFile(t, path, filepath.Join(root, path))
	out, err := exec.Command("ldd", path).Output()
	if err != nil {
		return // static
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, m := range lddPath.FindAllString(line, -1) {
			if _, err := os.Stat(m); err == nil {
				copyFile(t, m, filepath.Join(root, m))
			}
		}
	}
}

// copyFile copies src to dst with src's permission bits.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
		t.Fatal(err)
	}
}

// mkdev is makedev(3) for Linux (small major and minor numbers).
func mkdev(major, minor uint32) uint64 {
	return uint64(major)<<8 | uint64(minor)
}

// dpkg runs the real dpkg on root. Maintainer scripts run chrooted there.
func dpkg(t *testing.T, root string, args ...string) string {
	t.Helper()
	return run(t, "dpkg", append([]string{"--root=" + root, "--force-bad-path", "--force-confdef", "--force-confold"}, args...)...)
}

// unit is the part of a systemd unit file that starting it depends on.
type unit struct {
	user, group, execStart, workDir, stateDir string
	env                                       []string
	all                                       map[string][]string
}

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unit{all: map[string][]string{}}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		u.all[k] = append(u.all[k], v)
		switch k {
		case "User":
			u.user = v
		case "Group":
			u.group = v
		case "ExecStart":
			u.execStart = v
		case "WorkingDirectory":
			u.workDir = v
		case "StateDirectory":
			u.stateDir = v
		case "Environment":
			u.env = append(u.env, strings.Fields(v)...)
		}
	}
	return u
}

// lookupID finds name's id in a passwd or group file.
func lookupID(t *testing.T, file, name string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) > 2 && f[0] == name {
			id, _ := strconv.Atoi(f[2])
			return id
		}
	}
	t.Fatalf("%s has no %s:\n%s", file, name, b)
	return 0
}

func TestPackages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux packages")
	}
	deb, rpm := packages(t)
	for _, tool := range []string{"dpkg", "dpkg-deb"} {
		if _, err := exec.LookPath(tool); err != nil {
			if testkit.RequireE2E() {
				t.Fatalf("%s is needed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	if os.Geteuid() != 0 {
		if testkit.RequireE2E() {
			t.Fatal("installing into a scratch root needs root (dpkg --root chroots)")
		}
		t.Skip("installing into a scratch root needs root")
	}

	// What the .deb holds.
	contents := run(t, "dpkg-deb", "--contents", deb)
	for _, want := range []string{
		"./usr/bin/chartctl", "./usr/bin/chartctl-lint", "./lib/systemd/system/chartctl.service", "./etc/chartctl/config.yaml",
		"./usr/share/man/man1/chartctl.1.gz", "./usr/share/man/man1/chartctl-serve.1.gz",
		"./usr/share/bash-completion/completions/chartctl", "./usr/share/zsh/vendor-completions/_chartctl",
		"./usr/share/fish/vendor_completions.d/chartctl.fish", "./usr/lib/sysusers.d/chartctl.conf",
	} {
		if !strings.Contains(contents, want+"\n") {
			t.Errorf(".deb lacks %s:\n%s", want, contents)
		}
	}
	if conffiles := run(t, "dpkg-deb", "--info", deb, "conffiles"); !strings.Contains(conffiles, "/etc/chartctl/config.yaml") {
		t.Errorf("config.yaml is not a conffile: %q", conffiles)
	}
	if st, err := os.Stat(rpm); err != nil || st.Size() < 1<<20 {
		t.Errorf(".rpm: %v", err)
	}
	if rpmBin, err := exec.LookPath("rpm"); err == nil {
		files := run(t, rpmBin, "-qp", "--qf", "[%{FILENAMES} %{FILEFLAGS:fflags}\n]", rpm)
		if !strings.Contains(files, "/etc/chartctl/config.yaml cn\n") {
			t.Errorf("config.yaml is not %%config(noreplace) in the .rpm:\n%s", files)
		}
		for _, want := range []string{"/usr/bin/chartctl ", "/usr/bin/chartctl-lint ", "/lib/systemd/system/chartctl.service ", "/usr/share/man/man1/chartctl-serve.1.gz "} {
			if !strings.Contains(files, want) {
				t.Errorf(".rpm lacks %s", want)
			}
		}
		if scripts := run(t, rpmBin, "-qp", "--scripts", rpm); !strings.Contains(scripts, "useradd --system") || !strings.Contains(scripts, "preuninstall") {
			t.Errorf(".rpm scriptlets:\n%s", scripts)
		}
	} else if testkit.RequireE2E() {
		t.Fatal("rpm is not installed; CHARTCTL_REQUIRE_E2E=1 wants the .rpm checked")
	}

	// Install into the scratch root; postinst creates the user there.
	root := scratchRoot(t)
	dpkg(t, root, "--install", deb)
	if out := dpkg(t, root, "--status", "chartctl"); !strings.Contains(out, "Status: install ok installed") {
		t.Fatalf("dpkg --status:\n%s", out)
	}
	uid := lookupID(t, filepath.Join(root, "etc/passwd"), "chartctl")
	gid := lookupID(t, filepath.Join(root, "etc/group"), "chartctl")
	if uid == 0 || uid >= 1000 {
		t.Errorf("chartctl uid = %d, want a system uid", uid)
	}
	cfgPath := filepath.Join(root, "etc/chartctl/config.yaml")
	st, err := os.Stat(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if sys := st.Sys().(*syscall.Stat_t); int(sys.Gid) != gid || st.Mode().Perm() != 0o640 {
		t.Errorf("config.yaml gid %d mode %v, want group chartctl and 0640", sys.Gid, st.Mode().Perm())
	}

	// The unit: hardened, and accepted by systemd-analyze where it runs.
	unitPath := filepath.Join(root, "lib/systemd/system/chartctl.service")
	u := parseUnit(t, unitPath)
	for k, v := range map[string]string{"User": "chartctl", "StateDirectory": "chartctl", "ProtectSystem": "strict", "NoNewPrivileges": "yes", "PrivateTmp": "yes", "ProtectHome": "yes"} {
		if !slices.Contains(u.all[k], v) {
			t.Errorf("unit %s = %v, want %s", k, u.all[k], v)
		}
	}
	verifyUnit(t, root)
	checkInstalledLinter(t, root)

	// The operator's edit: a port of their choosing and TLS from files.
	ca := testkit.NewCA(t)
	cert, key, _ := ca.Issue(t, "localhost", "127.0.0.1")
	tlsDir := filepath.Join(root, "etc/chartctl/tls")
	if err := os.MkdirAll(tlsDir, 0o750); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"tls.crt": cert, "tls.key": key} {
		p := filepath.Join(tlsDir, name)
		if err := os.WriteFile(p, b, 0o640); err != nil {
			t.Fatal(err)
		}
		_ = os.Chown(p, 0, gid)
	}
	_ = os.Chown(tlsDir, 0, gid)
	port := freePort(t)
	shipped, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(shipped), "addr: 127.0.0.1:8080", fmt.Sprintf("addr: 127.0.0.1:%d", port), 1)
	edited = strings.Replace(edited, "# tls-cert: ", "tls-cert: ", 1)
	edited = strings.Replace(edited, "# tls-key: ", "tls-key: ", 1)
	if edited == string(shipped) || !strings.Contains(edited, "\ntls-cert: /etc/chartctl/tls/tls.crt") {
		t.Fatalf("the shipped config.yaml changed shape:\n%s", shipped)
	}
	if err := os.WriteFile(cfgPath, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}

	// An upgrade (the same package again) keeps the edited conffile.
	dpkg(t, root, "--install", deb)
	if b, _ := os.ReadFile(cfgPath); string(b) != edited {
		t.Fatalf("reinstalling replaced the edited config.yaml:\n%s", b)
	}

	// What systemd does for PrivateTmp= (a /tmp of the service's own,
	// where chartctl-lint unpacks charts when there is no /dev/shm) and
	// StateDirectory=, then ExecStart as the user,
	// with the unit's environment, chrooted into the scratch root.
	if err := os.Chmod(filepath.Join(root, "tmp"), os.ModePerm|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(root, "var/lib", u.stateDir)
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(stateDir, uid, gid); err != nil {
		t.Fatal(err)
	}
	argv := strings.Fields(u.execStart)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin"}, u.env...)
	cmd.Dir = u.workDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	defer func() {
		if !exited {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	var logs strings.Builder
	sc := bufio.NewScanner(stderr)
	served := ""
	for sc.Scan() {
		logs.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "chartctl serving") {
			served = sc.Text()
			break
		}
	}
	if served == "" {
		_ = cmd.Wait()
		t.Fatalf("ExecStart did not serve:\n%s", logs.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	var line map[string]any
	if err := json.Unmarshal([]byte(served), &line); err != nil {
		t.Fatalf("log-format json from the shipped config not in effect: %s", served)
	}
	if line["url"] != fmt.Sprintf("https://127.0.0.1:%d", port) || line["config"] != "/etc/chartctl/config.yaml" {
		t.Errorf("serving line = %s", served)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}, ForceAttemptHTTP2: true}}
	resp, err := client.Get(fmt.Sprintf("https://localhost:%d/readyz", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
		t.Fatalf("readyz over TLS: %d %s %s", resp.StatusCode, resp.Proto, body)
	}
	adminFile, err := os.ReadFile(filepath.Join(stateDir, "initial-admin.json"))
	if err != nil {
		t.Errorf("no initial-admin.json in the state directory: %v", err)
	}
	var admin struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(adminFile, &admin); err != nil || admin.APIKey == "" {
		t.Fatalf("initial-admin.json: %v", err)
	}
	// The installed server finds the installed chartctl-lint: uploads
	// under a lint policy are linted by Helm's rules.
	testkit.CheckLintPolicy(t, client, fmt.Sprintf("https://localhost:%d", port), admin.APIKey, "linted")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("ExecStart did not exit cleanly on SIGTERM: %v\n%s", err, logs.String())
	}
	exited = true

	// Removal keeps the data (and, until purge, the config).
	dpkg(t, root, "--remove", "chartctl")
	if _, err := os.Stat(filepath.Join(root, "usr/bin/chartctl")); err == nil {
		t.Error("the binary survived removal")
	}
	for _, p := range []string{"var/lib/chartctl/chartctl.db", "var/lib/chartctl/initial-admin.json", "etc/chartctl/config.yaml"} {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("removal deleted /%s", p)
		}
	}
	dpkg(t, root, "--purge", "chartctl")
	if _, err := os.Stat(filepath.Join(root, "var/lib/chartctl/chartctl.db")); err != nil {
		t.Error("purge deleted the data")
	}
}

// verifyUnit runs systemd-analyze verify (and its offline security
// review) on the installed unit, in the scratch root. The root gets a copy
// of this machine's own units (targets, slices) that the unit refers to.
// Where systemd-analyze or those units are missing it says so and returns.
func verifyUnit(t *testing.T, root string) {
	t.Helper()
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed here; the unit is not verified")
		return
	}
	hostUnits := "/lib/systemd/system"
	if _, err := os.Stat(filepath.Join(hostUnits, "sysinit.target")); err != nil {
		t.Log("this machine has no systemd units to verify against; the unit is not verified")
		return
	}
	entries, err := os.ReadDir(hostUnits)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() && e.Name() != "chartctl.service" {
			copyFile(t, filepath.Join(hostUnits, e.Name()), filepath.Join(root, "lib/systemd/system", e.Name()))
		}
	}
	out, err := exec.Command(sa, "verify", "--man=no", "--root="+root, "chartctl.service").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	out, err = exec.Command(sa, "security", "--offline=yes", "--root="+root, "chartctl.service").CombinedOutput()
	m := regexp.MustCompile(`Overall exposure level for chartctl.service: ([0-9.]+)`).FindSubmatch(out)
	if err != nil || m == nil {
		t.Logf("systemd-analyze security cannot judge the unit here: %v\n%s", err, out)
		return
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2.0 {
		t.Errorf("systemd-analyze security rates the unit %s, want at most 2.0 (OK):\n%s", m[1], out)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// checkInstalledLinter runs the installed chartctl-lint, as serve runs it
// for a lint policy (next to /usr/bin/chartctl, the archive on its
// standard input), on a chart Helm's lint warns about: a lint policy works
// in an installed server.
func checkInstalledLinter(t *testing.T, root string) {
	t.Helper()
	lint := filepath.Join(root, "usr/bin/chartctl-lint")
	if st, err := os.Stat(lint); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Fatalf("the installed chartctl-lint: %v", err)
	}
	archive := testkit.Archive(t, "notpl", map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: notpl\nversion: 1.0.0\n",
		"values.yaml": "a: 1\n",
	})
	cmd := exec.Command(lint)
	cmd.Stdin = bytes.NewReader(archive)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chartctl-lint: %v", err)
	}
	var ans struct {
		Messages []struct{ Severity, Path, Message string } `json:"messages"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		t.Fatalf("chartctl-lint answered %s: %v", out, err)
	}
	found := false
	for _, m := range ans.Messages {
		found = found || (m.Severity == "warning" && strings.Contains(m.Path+m.Message, "templates"))
	}
	if !found {
		t.Fatalf("chartctl-lint did not warn about the missing templates/: %s", out)
	}
}
