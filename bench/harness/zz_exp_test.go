package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
)

func TestZZExpFill(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZ_N"))
	dir := os.Getenv("ZZ_DIR")
	addr, _ := FreeLoopbackAddr()
	proc := &Process{Binary: os.Getenv("ZZ_BIN"), DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "chartctl.log"), Extra: []string{"--debug-addr", "127.0.0.1:"+os.Getenv("ZZ_PPROF")}}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	ctx := context.Background()
	if _, err := proc.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	admin, _ := ReadInitialAdmin(proc.DataDir)
	client := NewClient(8, time.Minute)
	bt := Target{Name: "chartctl", Token: admin.APIKey}
	bt.Base, _ = url.Parse("http://" + addr)
	if err := createRepo(ctx, client, bt, "big", "public"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := fillBig(ctx, bt, n, func(f string, a ...any) { fmt.Printf(f+"\n", a...) }); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("FILLED in %v at %s\n", time.Since(start), time.Now().Format("15:04:05"))
	os.WriteFile(filepath.Join(dir, "filled"), nil, 0o644)
	for {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
			return
		}
		time.Sleep(time.Second)
	}
}

func TestZZExpPush(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZ_N"))
	dir := os.Getenv("ZZ_DIR")
	addr, _ := FreeLoopbackAddr()
	proc := &Process{Binary: os.Getenv("ZZ_BIN"), DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "chartctl.log"), Extra: []string{"--debug-addr", "127.0.0.1:"+os.Getenv("ZZ_PPROF")}}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	ctx := context.Background()
	if _, err := proc.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	admin, _ := ReadInitialAdmin(proc.DataDir)
	client := NewClient(8, time.Minute)
	bt := Target{Name: "chartctl", Token: admin.APIKey}
	bt.Base, _ = url.Parse("http://" + addr)
	if err := createRepo(ctx, client, bt, "rpush", "public"); err != nil {
		t.Fatal(err)
	}
	var charts []*testkit.OCIChart
	for i := range n {
		v := fmt.Sprintf("2.0.%d", i)
		c, err := testkit.NewOCIChart("pr", v, ChartArchive("pr", v, 0))
		if err != nil {
			t.Fatal(err)
		}
		charts = append(charts, c)
	}
	os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
	time.Sleep(time.Second)
	for round := 0; round*100 < n; round++ {
		start := time.Now()
		for _, c := range charts[round*100 : min(n, round*100+100)] {
			if err := testkit.PushLikeHelm(client, "http://"+addr, "rpush", "admin", admin.APIKey, c); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Printf("PUSH round %d: %.1f/s\n", round, 100/time.Since(start).Seconds())
	}
}

func TestZZExpGet(t *testing.T) {
	dir := os.Getenv("ZZ_DIR")
	addr, _ := FreeLoopbackAddr()
	proc := &Process{Binary: os.Getenv("ZZ_BIN"), DataDir: filepath.Join(dir, "data"), Addr: addr, LogPath: filepath.Join(dir, "chartctl.log"), Extra: []string{"--debug-addr", "127.0.0.1:" + os.Getenv("ZZ_PPROF")}}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer proc.Stop()
	ctx := context.Background()
	if _, err := proc.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	admin, _ := ReadInitialAdmin(proc.DataDir)
	client := NewClient(8, time.Minute)
	bt := Target{Name: "chartctl", Token: admin.APIKey}
	bt.Base, _ = url.Parse("http://" + addr)
	if err := createRepo(ctx, client, bt, "rget", "public"); err != nil {
		t.Fatal(err)
	}
	c, _ := testkit.NewOCIChart("pg", "1.0.0", ChartArchive("pg", "1.0.0", 0))
	if err := testkit.PushLikeHelm(client, "http://"+addr, "rget", "admin", admin.APIKey, c); err != nil {
		t.Fatal(err)
	}
	u := "http://" + addr + "/v2/rget/pg/manifests/1.0.0"
	get := func(n int) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range n / 8 {
					req, _ := http.NewRequest("GET", u, nil)
					req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
					resp, err := client.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
	}
	get(2000)
	dl := func(name string) {
		resp, err := http.Get("http://127.0.0.1:" + os.Getenv("ZZ_PPROF") + "/debug/pprof/allocs")
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.Create(filepath.Join(dir, name))
		io.Copy(f, resp.Body)
		f.Close()
		resp.Body.Close()
	}
	dl("allocs0.pprof")
	start := time.Now()
	get(40000)
	fmt.Printf("GET: %.0f/s\n", 40000/time.Since(start).Seconds())
	dl("allocs1.pprof")
}
