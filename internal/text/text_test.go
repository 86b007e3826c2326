package text

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTruncate(t *testing.T) {
	tests := []struct {
		w        int
		in, want string
	}{
		{10, "short", "short"},
		{8, "a long description", "a lon..."},
		{3, "abcdef", "abc"},
		{0, "abc", ""},
		{5, "世界世界世界", "世..."},
	}
	for _, tt := range tests {
		if got := Truncate(tt.w, tt.in); got != tt.want {
			t.Errorf("Truncate(%d, %q) = %q, want %q", tt.w, tt.in, got, tt.want)
		}
	}
}

func TestTableTTY(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, true, 0)
	tb.Header("name", "description")
	tb.AddField("stable")
	tb.AddField("Stable charts\x1b[2J")
	tb.EndRow()
	tb.AddField("incubator-long")
	tb.AddField("x", func(s string) string { return "<" + s + ">" })
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	want := "NAME            DESCRIPTION\n" +
		"stable          Stable charts\n" +
		"incubator-long  <x>\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestTableTTYFitsWidth(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, true, 30)
	tb.AddField("name")
	tb.AddField("a very very long description that does not fit")
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); DisplayWidth(got[:len(got)-1]) > 30 {
		t.Errorf("row %q wider than 30", got)
	}
}

func TestTablePlain(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, false, 0)
	tb.Header("name", "description")
	tb.AddField("stable")
	tb.AddField("multi\nline\ttext")
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	if want := "stable\tmulti line text\n"; buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

func TestTableTTYKeepWhole(t *testing.T) {
	var buf bytes.Buffer
	tb := NewTable(&buf, true, 40)
	tb.KeepWhole(0)
	tb.AddField("key_01M80A3QDF4ABF5XVKBG6KAMN0")
	tb.AddField("repo:read,repo:write,team:read")
	tb.EndRow()
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSuffix(buf.String(), "\n")
	if !strings.HasPrefix(got, "key_01M80A3QDF4ABF5XVKBG6KAMN0  ") {
		t.Errorf("the kept column was cut: %q", got)
	}
	if DisplayWidth(got) > 40 || !strings.HasSuffix(got, "...") {
		t.Errorf("the other column was not truncated to fit 40 columns: %q", got)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 10 << 20: "10 MiB", 5 << 30: "5 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestUsage(t *testing.T) {
	ten, fifty := int64(10<<20), int64(50)
	for _, c := range []struct {
		got, want string
	}{
		{Usage(5<<10, nil, 1, nil), "5 KiB, 1 version"},
		{Usage(1536, nil, 2, nil), "1.5 KiB, 2 versions"},
		{Usage(1<<20, &ten, 3, &fifty), "1 MiB of 10 MiB, 3 of 50 versions"},
	} {
		if c.got != c.want {
			t.Errorf("Usage = %q, want %q", c.got, c.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	good := map[string]int64{
		"0": 0, "1048576": 1048576, "512KiB": 512 << 10, "10 GiB": 10 << 30, "10gib": 10 << 30,
		"1.5GiB": 3 << 29, "2GB": 2e9, "10G": 10 << 30, "7B": 7, "1TiB": 1 << 40, " 3 MiB ": 3 << 20,
	}
	for in, want := range good {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1", "+5", "ten", "1.5B", "0.1KiB", "99999999999TiB", "1e3", "NaN"} {
		if got, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, got)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 repositories"}, {1, "1 repository"}, {2, "2 repositories"}} {
		if got := Count(c.n, "repository", "repositories"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"90s": 90 * time.Second, "12h": 12 * time.Hour, " 30d ": 30 * 24 * time.Hour, "0d": 0, "1h30m": 90 * time.Minute} {
		if got, err := ParseDuration(in); err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "d", "-1d", "-5s", "1.5d", "36501d", "soon"} {
		if _, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) accepted", in)
		}
	}
}

// Optional columns are left out on a narrow terminal, first given first,
// only as far as needed; a wide terminal and a pipe keep them all.
func TestTableOptionalColumns(t *testing.T) {
	render := func(tty bool, width int) string {
		var buf bytes.Buffer
		tb := NewTable(&buf, tty, width)
		tb.Header("id", "name", "created", "request")
		tb.KeepWhole(0)
		tb.Optional(3, 2)
		tb.AddField("key_01JDQ7Z8X4M2N6P0R3S5T7V9WA")
		tb.AddField("release pipeline")
		tb.AddField("2 days ago")
		tb.AddField("req_01JDQ7Z8X4M2N6P0R3S5T7V9WA")
		tb.EndRow()
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, c := range []struct {
		tty   bool
		width int
		want  string
	}{
		{true, 120, "ID                              NAME              CREATED     REQUEST\nkey_01JDQ7Z8X4M2N6P0R3S5T7V9WA  release pipeline  2 days ago  req_01JDQ7Z8X4M2N6P0R3S5T7V9WA\n"},
		{true, 80, "ID                              NAME              CREATED     REQUEST\nkey_01JDQ7Z8X4M2N6P0R3S5T7V9WA  release pipeline  2 days ago  req_01JDQ7Z8X4M...\n"},
		{true, 60, "ID                              NAME              CREATED\nkey_01JDQ7Z8X4M2N6P0R3S5T7V9WA  release pipeline  2 days ago\n"},
		{true, 50, "ID                              NAME\nkey_01JDQ7Z8X4M2N6P0R3S5T7V9WA  release pipeline\n"},
		{false, 0, "key_01JDQ7Z8X4M2N6P0R3S5T7V9WA\trelease pipeline\t2 days ago\treq_01JDQ7Z8X4M2N6P0R3S5T7V9WA\n"},
	} {
		if got := render(c.tty, c.width); got != c.want {
			t.Errorf("tty %v width %d:\n%s\nwant\n%s", c.tty, c.width, got, c.want)
		}
	}
}
