package httpx_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/httpx"
)

// A full disk is not a bug: a write that fails with ENOSPC (the real
// error, from /dev/full) answers 503 unavailable saying the storage is
// full, not 500 "quote request id when reporting it"; the log still
// names it, with the request id, for the operator.
func TestFullDiskIsUnavailable(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	_, werr := f.Write([]byte("chart bytes"))
	f.Close()
	if werr == nil {
		t.Fatal("a write to /dev/full succeeded")
	}
	var logs bytes.Buffer
	e := echo.New()
	e.HTTPErrorHandler = httpx.ErrorHandler(slog.New(slog.NewTextHandler(&logs, nil)))
	e.POST("/v1/repositories/:repo/charts", func(c echo.Context) error {
		c.Response().Header().Set(echo.HeaderXRequestID, "req123")
		return fmt.Errorf("store chart archive: write blob: %w", werr)
	})
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/repositories/r/charts", nil))
	var body client.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 503 || body.Error.Code != "unavailable" || !strings.Contains(body.Error.Message, "storage is full") {
		t.Errorf("%d %s, want 503 unavailable saying the storage is full", rec.Code, rec.Body)
	}
	if strings.Contains(body.Error.Message, "/dev/full") {
		t.Errorf("the message leaks a path: %s", body.Error.Message)
	}
	if !strings.Contains(logs.String(), "req123") || !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("log = %q, want the request id and the error", logs.String())
	}
}
