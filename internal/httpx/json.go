package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// MaxJSONBody bounds every JSON request body (§2: 413 above 1 MiB).
const MaxJSONBody = 1 << 20

// JSONContentType is the media type of every JSON response (§1).
const JSONContentType = "application/json; charset=utf-8"

// BindJSON decodes the request body into v strictly: a JSON media type,
// at most 1 MiB, no unknown fields, no repeated keys, one value. Errors
// are EMEDIATYPE, ETOOLARGE or EINVALID naming the offending field (or
// "body"). It is the one decoder of every /v1 request body.
func BindJSON(c echo.Context, v any) error {
	req := c.Request()
	mt, _, err := mime.ParseMediaType(req.Header.Get(echo.HeaderContentType))
	if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return chartctl.Errorf(chartctl.EMEDIATYPE, "Send the request body as JSON with Content-Type: application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Response(), req.Body, MaxJSONBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return chartctl.Errorf(chartctl.ETOOLARGE, "The JSON body is larger than 1 MiB.")
		}
		return chartctl.Invalid("body", "Could not read the request body.")
	}
	if err := checkDuplicateKeys(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return chartctl.Invalid("body", "The request body must hold one JSON object.")
	}
	return nil
}

// checkDuplicateKeys refuses an object that names one key twice.
// encoding/json keeps the last value silently, and matches keys to fields
// without regard to case, so {"name":"a","Name":"b"} sets one field twice;
// a proxy or an audit tool reading the first value would then see another
// request than the server acts on. Keys that differ only in case count as
// repeated for that reason. Syntax errors are left to the decoder, which
// words them.
func checkDuplicateKeys(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	// One set of keys per open object; nil for an open array.
	var stack []map[string]bool
	expectKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, map[string]bool{})
				expectKey = true
				continue
			case '[':
				stack = append(stack, nil)
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
		case string:
			if expectKey {
				k := strings.ToLower(t)
				if stack[len(stack)-1][k] {
					return chartctl.Invalid(t, "The key %q appears more than once in an object of the request body; send each key once.", t)
				}
				stack[len(stack)-1][k] = true
				expectKey = false
				continue
			}
		}
		// After a value, the next string in an object is a key again.
		expectKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

func jsonError(err error) error {
	// Time.UnmarshalJSON's errors carry no field name; expires_at is the
	// only time a request body holds.
	var pe *time.ParseError
	if errors.As(err, &pe) || strings.HasPrefix(err.Error(), "Time.UnmarshalJSON") {
		return chartctl.Invalid("expires_at", "expires_at must be an RFC 3339 time, such as 2027-01-31T00:00:00Z.")
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return chartctl.Invalid("body", "The request body must be a JSON object.")
		}
		return chartctl.Invalid(te.Field, "Invalid %s: expected %s, got %s.", te.Field, jsonTypeName(te.Type), jsonValueName(te.Value))
	}
	if msg := err.Error(); strings.HasPrefix(msg, "json: unknown field ") {
		field := strings.Trim(strings.TrimPrefix(msg, "json: unknown field "), `"`)
		return chartctl.Invalid(field, "Unknown field %q in the request body.", field)
	}
	return chartctl.Invalid("body", "The request body is not valid JSON.")
}

// jsonTypeName names what a Go type takes in JSON's words ("an array of
// strings", not "[]string"), for a person who sent the wrong shape.
func jsonTypeName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		switch elem := jsonTypeName(t.Elem()); elem {
		case "a string":
			return "an array of strings"
		case "an object":
			return "an array of objects"
		}
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON value"
}

// jsonValueName names the JSON value UnmarshalTypeError.Value describes
// ("string", "number", "number 1.5", "bool", "array", "object").
func jsonValueName(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		return "a number"
	case "bool":
		return "true or false"
	case "array":
		return "an array"
	case "object":
		return "an object"
	}
	return "another JSON value"
}

// Data writes v in the success envelope {"data": v}.
func Data(c echo.Context, v any) error {
	return WriteJSON(c, http.StatusOK, struct {
		Data any `json:"data"`
	}{v})
}

// List writes a success envelope with pagination metadata.
func List(c echo.Context, v any, meta client.Meta) error {
	return WriteJSON(c, http.StatusOK, struct {
		Data any         `json:"data"`
		Meta client.Meta `json:"meta"`
	}{v, meta})
}

// ListEncoded writes the success envelope List writes for a list whose
// elements are already encoded: items are each the json.Marshal encoding
// of one element, written as they are. The response is the same, byte for
// byte, as List's of the elements.
func ListEncoded(c echo.Context, items [][]byte, meta client.Meta) error {
	m, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	n := len(`{"data":[],"meta":}`) + len(m) + 2
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"meta":`...)
	b = append(b, m...)
	b = append(b, "}\n"...)
	return c.Blob(http.StatusOK, JSONContentType, b)
}

// WriteJSON writes v as the JSON response body with status.
func WriteJSON(c echo.Context, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.Blob(status, JSONContentType, append(b, '\n'))
}
