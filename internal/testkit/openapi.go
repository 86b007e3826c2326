package testkit

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
)

// apiValidator, once ValidateOpenAPI has set it, checks every /v1
// exchange made through Do, DoJSON and Upload.
var apiValidator struct {
	sync.Mutex
	v validator.Validator
}

// ValidateOpenAPI makes every /v1 request and response sent through Do,
// DoJSON and Upload be validated against the OpenAPI document doc with
// libopenapi-validator; a mismatch fails the test that made the request.
// A package's TestMain calls it to hold its whole API suite to the
// document.
//
// The response is always checked: its status must be one the operation
// documents and its body must match. The request is checked when the
// server accepted it (status below 400): a request the server refused may
// be invalid on purpose, but one it accepted must be what the document
// allows. A path the document does not have must be answered 404 or 405.
func ValidateOpenAPI(doc []byte) error {
	d, err := libopenapi.NewDocument(doc)
	if err != nil {
		return fmt.Errorf("read the OpenAPI document: %w", err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		return fmt.Errorf("build the OpenAPI validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		return fmt.Errorf("the OpenAPI document is not valid: %s", describe(verrs))
	}
	apiValidator.Lock()
	apiValidator.v = v
	apiValidator.Unlock()
	return nil
}

func validating() bool {
	apiValidator.Lock()
	defer apiValidator.Unlock()
	return apiValidator.v != nil
}

// checkExchange validates one finished exchange against the document.
func checkExchange(tb testing.TB, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	tb.Helper()
	if problems := OpenAPIProblems(req, reqBody, resp.StatusCode, resp.Header, respBody); problems != "" {
		tb.Errorf("OpenAPI: %s %s answered %d %s, which server/openapi.yaml does not allow:\n%s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, truncate(respBody, 300), problems)
	}
}

// OpenAPIProblems describes how one exchange departs from the document
// ValidateOpenAPI set, by the rules ValidateOpenAPI states; "" when it
// conforms or when no document is set.
func OpenAPIProblems(req *http.Request, reqBody []byte, status int, header http.Header, respBody []byte) string {
	if !strings.HasPrefix(req.URL.Path, "/v1/") || !validating() {
		return ""
	}
	newReq := func() *http.Request {
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		r.ContentLength = int64(len(reqBody))
		return r
	}
	vresp := &http.Response{StatusCode: status, Header: header, Body: io.NopCloser(bytes.NewReader(respBody)), Request: req}
	apiValidator.Lock()
	defer apiValidator.Unlock()
	v := apiValidator.v
	var problems []*verrors.ValidationError
	if status < 400 {
		if ok, errs := v.ValidateHttpRequestSync(newReq()); !ok {
			problems = append(problems, errs...)
		}
	}
	if ok, errs := v.ValidateHttpResponse(newReq(), vresp); !ok {
		for _, e := range errs {
			if e.ValidationType == helpers.PathValidation && (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) {
				// No such route, and the server says so.
				continue
			}
			problems = append(problems, e)
		}
	}
	return describe(problems)
}

func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, e := range errs {
		line := "  - " + e.Message
		if e.Reason != "" && e.Reason != e.Message {
			line += ": " + e.Reason
		}
		for _, f := range e.SchemaValidationErrors {
			line += fmt.Sprintf("\n      %s: %s", f.FieldPath, f.Reason)
		}
		if !seen[line] {
			seen[line] = true
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
