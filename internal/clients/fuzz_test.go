package clients

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// addSeeds adds the golden originals, their wrapped forms (remote entries
// with their WEIR_UNWRAP records among them) and a few odd inputs to a fuzz
// corpus.
func addSeeds(f *testing.F, yamlFiles bool) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "golden", "*", "original.*"))
	wrapped, _ := filepath.Glob(filepath.Join("testdata", "golden", "*", "wrapped.*"))
	paths = append(paths, wrapped...)
	for _, p := range paths {
		if strings.HasSuffix(p, ".yaml") != yamlFiles {
			continue
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, s := range []string{
		"", "{}", "[]", `"x"`, "0", "-0.5e+3", "null", "\ufeff{}", "/* */", "//\n{}", "{,}", "[1,]", `{"a":1,}`,
		`"\ud83d\ude00\ud800\udc00\udfff"`, `"\u00e9\/\\"`, "{\"a\":\"\xff\"}", `{"mcpServers": {"a": {"command": "weir", "args": ["run", "--", "x"]}}}`,
		"extensions:\n  a: {cmd: x, args: [y]}\n", "mcpServers:\n- name: a\n  command: x\n  args:\n  - y\n",
		"a: &x [1]\nb: *x\n", "a: |\n  x\n",
		`{"mcpServers": {"r": {"type": "http", "url": "https://x/mcp", "headers": {"A": "b"}, "env": {"K": "v"}}}}`,
		`{"mcp": {"r": {"type": "remote", "url": "https://x/mcp", "headers": {"A": "b"}}}}`,
		"extensions:\n  r:\n    type: streamable_http\n    headers:\n      A: b\n    envs: {}\n    uri: https://x/mcp\n",
		"mcpServers:\n- name: r\n  type: streamable-http\n  url: https://x/mcp\n",
		`{"mcpServers": {"r": {"url": "https://x/mcp", "headers": {"A": "$ \"q\" 'x' $$", "B": "  ", "C": "k"}, "env": {"WEIR_HEADER_1": "k", "weir_header_2": "k"}}}}`,
		`{"mcp": {"r": {"type": "remote", "url": "https://x/mcp", "headers": {"A": "${X} {env:Y}", "B": "${WEIR_HEADER_1}"}}}}`,
		"extensions:\n  r:\n    type: streamable_http\n    headers: {A: \"$x ${Y}\", B: 'k, v'}\n    envs:\n      WEIR_HEADER_1: x\n    uri: https://x/mcp\n",
	} {
		f.Add([]byte(s))
	}
}

// FuzzJSONC checks that the JSONC reader never panics, that its errors
// carry a position, and that on plain JSON it reads what encoding/json
// reads.
func FuzzJSONC(f *testing.F) {
	addSeeds(f, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := parseJSONC(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 || e.Column < 1 {
				t.Fatalf("error without a position: %v", err)
			}
			if json.Valid(data) {
				t.Fatalf("valid JSON refused: %v", err)
			}
			return
		}
		if !json.Valid(data) {
			return // JSONC: comments, trailing commas, a BOM
		}
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var want any
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := toGo(n); !reflect.DeepEqual(got, want) {
			t.Fatalf("read %#v, encoding/json reads %#v", got, want)
		}
	})
}

// toGo converts a node to what encoding/json decodes (with UseNumber).
func toGo(n *node) any {
	switch n.kind {
	case kObject:
		m := map[string]any{}
		for _, mem := range n.members {
			m[validUTF8(mem.key)] = toGo(mem.val)
		}
		return m
	case kArray:
		a := []any{}
		for _, e := range n.elems {
			a = append(a, toGo(e))
		}
		return a
	case kString:
		return validUTF8(n.str)
	case kNumber:
		return json.Number(n.str)
	case kBool:
		return n.str == "true"
	}
	return nil
}

// validUTF8 replaces each invalid byte by U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// FuzzWrap checks Wrap and Unwrap on any file the reader accepts, in the
// JSON formats: no error (Wrap's self-check failing is a bug), wrapping
// twice changes nothing, and Unwrap(Wrap(x)) == Unwrap(x).
func FuzzWrap(f *testing.F) {
	addSeeds(f, false)
	formats := []string{FormatMCPServers, FormatClaudeCode, FormatVSCodeSettings, FormatZed, FormatOpencode, FormatContinue}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range formats {
			loc := Location{Client: Unknown, Path: "config.json", Format: format}
			if _, err := Parse(loc, data); err != nil {
				continue
			}
			checkWrapInvariants(t, loc, data)
		}
	})
}

// FuzzYAML does the same for the YAML formats, and checks that the YAML
// reader never panics and gives positions.
func FuzzYAML(f *testing.F) {
	addSeeds(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := parseYAML(data); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
		}
		for _, format := range []string{FormatGoose, FormatContinueYAML} {
			loc := Location{Client: Unknown, Path: "config.yaml", Format: format}
			if _, err := Parse(loc, data); err != nil {
				continue
			}
			checkWrapInvariants(t, loc, data)
		}
	})
}

func checkWrapInvariants(t *testing.T, loc Location, x []byte) {
	t.Helper()
	c, err := Parse(loc, x)
	if err != nil {
		t.Fatal(err)
	}
	w, changes, err := Wrap(c, WrapOptions{})
	if err != nil {
		t.Fatalf("%s: Wrap: %v", loc.Format, err)
	}
	for _, ch := range changes {
		if strings.Contains(ch.Detail, "could not rewrite this entry safely") {
			t.Fatalf("%s: Wrap failed its own check: %s", loc.Format, ch.Detail)
		}
	}
	cw, err := Parse(loc, w)
	if err != nil {
		t.Fatalf("%s: Wrap output does not parse: %v", loc.Format, err)
	}
	w2, _, err := Wrap(cw, WrapOptions{})
	if err != nil || !bytes.Equal(w, w2) {
		t.Fatalf("%s: Wrap not idempotent: %v\n%q\n%q", loc.Format, err, w, w2)
	}
	// A remote entry's header values are not in weir run's arguments,
	// only the variables of env they are in (or a blank value): named as
	// ${WEIR_HEADER_N} by --header, or, for Claude Code (see headerVars),
	// as WEIR_HEADER_N by --header-env.
	for i, ch := range changes {
		if ch.Action != ActionWrapped || c.Servers[i].Transport != TransportHTTP {
			continue
		}
		r, _ := parseRunLine(cw.Servers[i].Args)
		for _, h := range r.headers {
			_, v, _ := strings.Cut(h, ": ")
			if _, set := cw.Servers[i].Env[strings.Trim(v, "${}")]; !(headerVarRE.MatchString(v) && set && headerVars(loc)) && strings.TrimSpace(v) != "" {
				t.Fatalf("%s: a header value in args: %q", loc.Format, h)
			}
		}
		for _, h := range r.headerEnv {
			_, v, _ := strings.Cut(h, "=")
			if _, set := cw.Servers[i].Env[v]; !set || headerVars(loc) || !strings.HasPrefix(v, headerVarPrefix) {
				t.Fatalf("%s: --header-env %q", loc.Format, h)
			}
		}
	}
	u, uch, err := Unwrap(cw)
	if err != nil {
		t.Fatalf("%s: Unwrap(Wrap(x)): %v", loc.Format, err)
	}
	for _, ch := range uch {
		if strings.Contains(ch.Detail, "could not rewrite this entry safely") {
			t.Fatalf("%s: Unwrap failed its own check: %s", loc.Format, ch.Detail)
		}
	}
	ux, _, err := Unwrap(c)
	if err != nil {
		t.Fatalf("%s: Unwrap(x): %v", loc.Format, err)
	}
	if !bytes.Equal(u, ux) {
		t.Fatalf("%s: Unwrap(Wrap(x)) != Unwrap(x)\n%q\n%q", loc.Format, u, ux)
	}
}
