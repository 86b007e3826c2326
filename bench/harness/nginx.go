package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// NginxInstallHint says how to get the nginx the side-by-side bench
// compares with.
const NginxInstallHint = "install Debian's nginx (1.22 on bookworm): apt-get install -y nginx"

// Nginx is an nginx the harness runs in the foreground on a loopback port,
// serving the files under Root as a static file server with the settings
// of issue #19: worker_processes auto, sendfile on, tcp_nopush on,
// access_log off and gzip_static on. Everything it writes (pid, error log,
// temp paths) stays in Dir.
type Nginx struct {
	// Binary is the nginx executable ("nginx" from PATH when empty).
	Binary string
	// Dir is the prefix directory: the configuration, logs and temp paths.
	Dir string
	// Root is the document root.
	Root string
	// Addr is the loopback host:port to listen on.
	Addr string
	// TLS, when set, makes nginx serve HTTPS with its certificate
	// (OpenSSL; no kernel TLS, so no sendfile).
	TLS *TLS

	cmd    *exec.Cmd
	exited chan struct{}
}

// Config is nginx.conf for n.
func (n *Nginx) Config() string {
	d := n.Dir
	return fmt.Sprintf(`daemon off;
master_process on;
worker_processes auto;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 1024; }
http {
    types {
        application/x-yaml yaml;
        application/gzip tgz;
        application/pgp-signature prov;
    }
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    access_log off;
    gzip_static on;
    client_body_temp_path %[1]s/tmp/body;
    proxy_temp_path %[1]s/tmp/proxy;
    fastcgi_temp_path %[1]s/tmp/fastcgi;
    uwsgi_temp_path %[1]s/tmp/uwsgi;
    scgi_temp_path %[1]s/tmp/scgi;
    server {
        listen %[2]s%[4]s;
        root %[3]s;%[5]s
    }
}
`, d, n.Addr, n.Root, n.listenTLS(), n.certificates())
}

// listenTLS is the listen directive's ssl parameter with TLS.
func (n *Nginx) listenTLS() string {
	if n.TLS == nil {
		return ""
	}
	return " ssl"
}

// certificates are the server block's certificate directives with TLS.
func (n *Nginx) certificates() string {
	if n.TLS == nil {
		return ""
	}
	return fmt.Sprintf("\n        ssl_certificate %s;\n        ssl_certificate_key %s;", n.TLS.CertFile, n.TLS.KeyFile)
}

// Start writes the configuration, starts nginx and waits until it accepts
// connections.
func (n *Nginx) Start(ctx context.Context) error {
	if _, err := CheckLoopback("http://" + n.Addr); err != nil {
		return err
	}
	bin := n.Binary
	if bin == "" {
		bin = "nginx"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return fmt.Errorf("nginx not found (%v): %s", err, NginxInstallHint)
	}
	if err := os.MkdirAll(filepath.Join(n.Dir, "tmp"), 0o755); err != nil {
		return fmt.Errorf("nginx dir: %w", err)
	}
	conf := filepath.Join(n.Dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(n.Config()), 0o644); err != nil {
		return fmt.Errorf("nginx config: %w", err)
	}
	// Started by root, nginx's workers run as nobody: they must be able to
	// read the document root.
	if err := makeReadable(n.Root); err != nil {
		return err
	}
	cmd := exec.Command(path, "-p", n.Dir, "-c", conf, "-e", filepath.Join(n.Dir, "error.log"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start nginx: %w", err)
	}
	n.cmd = cmd
	n.exited = make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(n.exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-n.exited:
			b, _ := os.ReadFile(filepath.Join(n.Dir, "error.log"))
			return fmt.Errorf("nginx exited at start: %s", strings.TrimSpace(string(b)))
		case <-ctx.Done():
			n.Stop()
			return ctx.Err()
		default:
		}
		if c, err := net.DialTimeout("tcp", n.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.Stop()
	return errors.New("nginx did not accept connections within 10s")
}

// PID is nginx's master process id (0 before Start); its workers are its
// children.
func (n *Nginx) PID() int {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Stop asks nginx to exit (SIGQUIT, a graceful stop) and waits, killing it
// after five seconds.
func (n *Nginx) Stop() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-n.exited:
	case <-time.After(5 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}

// makeReadable opens root and everything under it to other users (0755
// directories, 0644 files).
func makeReadable(root string) error {
	return filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if fi.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
}
