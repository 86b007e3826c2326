package httpx

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// ServeBlob serves a stored blob as a download named filename, with
// ranges, conditional requests and the digest as a strong ETag.
func ServeBlob(c echo.Context, blobs chartctl.BlobStore, digest, filename, contentType string) error {
	b, err := blobs.Open(c.Request().Context(), digest)
	if err != nil {
		return err
	}
	defer b.Close()
	h := c.Response().Header()
	h.Set("Content-Type", contentType)
	h.Set("ETag", strconv.Quote(digest))
	h.Set("Cache-Control", "private, max-age=0, must-revalidate")
	h.Set("Content-Disposition", `attachment; filename="`+filename+`"`)
	http.ServeContent(c.Response(), c.Request(), "", time.Time{}, b)
	return nil
}
