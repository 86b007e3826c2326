package httpx_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/httpx"
)

// ListEncoded answers, byte for byte, what List answers for the same
// elements, whatever they hold (characters JSON escapes, HTML, invalid
// UTF-8, empty lists).
func TestListEncodedIsList(t *testing.T) {
	org := "team <&> \u2028"
	lists := [][]client.Repository{
		nil,
		{},
		{{ID: "repo_1", Name: "a", Visibility: "public", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}},
		{
			{ID: "repo_2", Name: "b", Description: "quotes \" and \\ and <script>&amp;", Organization: &org, Visibility: "private"},
			{ID: "repo_3", Name: "c", Description: "invalid \xff utf-8, tab\t, newline\n, é"},
		},
	}
	metas := []client.Meta{{Total: 0, Page: 1, Limit: 20}, {Total: 3, Page: 2, Limit: 1}, {Total: 1, Page: 1, Limit: 5, NextCursor: "x<y"}}
	e := echo.New()
	answer := func(write func(echo.Context) error) []byte {
		rec := httptest.NewRecorder()
		if err := write(e.NewContext(httptest.NewRequest("GET", "/", nil), rec)); err != nil {
			t.Fatal(err)
		}
		if rec.Header().Get("Content-Type") != httpx.JSONContentType || rec.Code != 200 {
			t.Fatalf("%d %v", rec.Code, rec.Header())
		}
		return rec.Body.Bytes()
	}
	for _, l := range lists {
		for _, m := range metas {
			var items [][]byte
			for _, r := range l {
				b, err := json.Marshal(r)
				if err != nil {
					t.Fatal(err)
				}
				items = append(items, b)
			}
			v := httpx.MapSlice(l, func(r client.Repository) client.Repository { return r })
			want := answer(func(c echo.Context) error { return httpx.List(c, v, m) })
			got := answer(func(c echo.Context) error { return httpx.ListEncoded(c, items, m) })
			if !bytes.Equal(got, want) {
				t.Errorf("ListEncoded:\n%s\nList:\n%s", got, want)
			}
		}
	}
}
