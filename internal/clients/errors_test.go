package clients

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrors pins the messages people read when a file cannot be used: each
// names the file, line and column and says what to fix. The expected text
// is testdata/errors.golden (rewrite it with -update after a reviewed
// change).
func TestErrors(t *testing.T) {
	cases := []struct {
		name, format, input string
	}{
		{"missing comma", FormatMCPServers, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n    \"b\": {\"command\": \"y\"}\n  }\n}\n"},
		{"missing comma in array", FormatMCPServers, `{"mcpServers": {"a": {"command": "x", "args": ["-y" "pkg"]}}}`},
		{"windows path not escaped", FormatMCPServers, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"C:\\Program Files\\nodejs\\npx.cmd\"}\n  }\n}\n"},
		{"single quotes", FormatMCPServers, `{'mcpServers': {}}`},
		{"unquoted key", FormatMCPServers, `{mcpServers: {}}`},
		{"unterminated string", FormatMCPServers, "{\"mcpServers\": {\"a\": {\"command\": \"npx}}}\n"},
		{"line break in string", FormatMCPServers, "{\"mcpServers\": {\"a\": {\"command\": \"np\nx\"}}}"},
		{"unclosed object", FormatMCPServers, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n"},
		{"unclosed comment", FormatMCPServers, "{ /* servers\n \"mcpServers\": {} }"},
		{"two commas", FormatMCPServers, `{"mcpServers": {"a": {"command": "x"},, "b": {}}}`},
		{"extra closing brace", FormatMCPServers, "{\"mcpServers\": {}}}\n"},
		{"python literal", FormatMCPServers, `{"mcpServers": {"a": {"command": "x", "disabled": True}}}`},
		{"leading zero", FormatMCPServers, `{"mcpServers": {"a": {"command": "x", "timeout": 0600}}}`},
		{"missing colon", FormatMCPServers, `{"mcpServers" {}}`},
		{"bad escape u", FormatMCPServers, `{"mcpServers": {"a": {"command": "\u12"}}}`},
		{"top-level array", FormatMCPServers, `[{"command": "x"}]`},
		{"servers not an object", FormatMCPServers, "{\n  \"mcpServers\": [\"a\"]\n}"},
		{"duplicate server", FormatMCPServers, "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"},\n  \"a\": {\"command\": \"y\"}\n}}"},
		{"duplicate command", FormatMCPServers, "{\"mcpServers\": {\"a\": {\n  \"command\": \"x\",\n  \"command\": \"y\"\n}}}"},
		{"duplicate container", FormatMCPServers, "{\n\"mcpServers\": {},\n\"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}"},
		{"deep nesting", FormatMCPServers, strings.Repeat("[", 600)},
		{"control character", FormatMCPServers, "{\"mcpServers\": {\"a\": {\"command\": \"x\ty\"}}}"},
		{"bom then garbage", FormatMCPServers, "\xef\xbb\xbf{\"mcpServers\": x}"},
		{"yaml bad indentation", FormatGoose, "extensions:\n  fs:\n    cmd: npx\n   args: [a]\n"},
		{"yaml tab", FormatGoose, "extensions:\n\tfs: {}\n"},
		{"yaml duplicate", FormatGoose, "extensions:\n  fs:\n    cmd: a\n    cmd: b\n"},
		{"yaml two documents", FormatGoose, "extensions: {}\n---\nextensions: {}\n"},
		{"yaml extensions a list", FormatGoose, "extensions:\n  - fs\n"},
		{"yaml utf-16", FormatGoose, "\xff\xfee\x00"},
	}
	var b strings.Builder
	for _, tc := range cases {
		loc := Location{Client: Unknown, Path: "config" + map[bool]string{true: ".yaml", false: ".json"}[isYAMLFormat(tc.format)], Format: tc.format}
		_, err := Parse(loc, []byte(tc.input))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: error is %T, want *Error", tc.name, err)
		} else if e.Line < 1 || e.File != loc.Path {
			t.Errorf("%s: error %q lacks a file or line", tc.name, err)
		}
		fmt.Fprintf(&b, "# %s\n%s\n\n", tc.name, err)
	}
	checkGolden(t, filepath.Join("testdata", "errors.golden"), []byte(b.String()))
}

// TestRefusedNames pins the messages for server names weir run cannot use.
func TestRefusedNames(t *testing.T) {
	ok := []string{"notes", "a", "server-filesystem", "my_server.v2", "0day", strings.Repeat("x", 64)}
	for _, n := range ok {
		if err := ValidName(n); err != nil {
			t.Errorf("ValidName(%q) = %v", n, err)
		}
	}
	bad := []string{"", "github:work", "team/notes", "my server", "notes*", "-notes", ".hidden", strings.Repeat("x", 65), "notizen-ü", "a\tb", `back\slash`, "a[1]"}
	var b strings.Builder
	for _, n := range bad {
		err := ValidName(n)
		if err == nil {
			t.Errorf("ValidName(%q) = nil", n)
			continue
		}
		if s := SuggestName(n); ValidName(s) != nil {
			t.Errorf("SuggestName(%q) = %q, which is not valid", n, s)
		}
		fmt.Fprintf(&b, "%s\n", err)
	}
	checkGolden(t, filepath.Join("testdata", "names.golden"), []byte(b.String()))
}
