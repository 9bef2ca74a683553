package policyfile

import (
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/policy"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern      string
		server, tool string
		want         bool
	}{
		// Literal patterns.
		{"read_file", "fs", "read_file", true},
		{"read_file", "other", "read_file", true}, // no colon: any server
		{"read_file", "fs", "read_files", false},
		{"read_file", "fs", "Read_file", false}, // case-sensitive
		{"fs:read_file", "fs", "read_file", true},
		{"fs:read_file", "fs2", "read_file", false},
		{"fs:read_file", "", "read_file", false},

		// *: any run, including none.
		{"notes:*", "notes", "read_note", true},
		{"notes:*", "notes", "", true},
		{"notes:*", "notes2", "read_note", false},
		{"*:send_*", "mail", "send_message", true},
		{"*:send_*", "mail", "resend_message", false},
		{"*read_file*", "fs", "read_file", true},
		{"*read_file*", "fs", "safe_read_file_v2", true},
		{"*", "any", "thing", true},
		{"*:*", "any", "thing", true},
		{"a*b*c", "s", "abc", true},
		{"a*b*c", "s", "aXbYbZc", true},
		{"a*b*c", "s", "aXbYcZ", false},
		{"**x", "s", "x", true},

		// *: never across the server/tool boundary, but across a colon
		// that is part of one name.
		{"notes*", "notes", "read", false},
		{"n*:*", "notes", "read", true},
		{"*", "s", "a:b", true},
		{"a:*", "a", "b:c", true},
		{"a*", "s", "a:b", true},
		{"s:a:b", "s", "a:b", true}, // split at the first colon only
		{"s:a:b", "s:a", "b", false},

		// ?: exactly one character, counted in runes.
		{"r?ad", "s", "read", true},
		{"r?ad", "s", "rad", false},
		{"r?ad", "s", "reead", false},
		{"caf?", "s", "café", true},
		{"?", "s", "é", true},
		{"??", "s", "é", false},

		// \: escapes.
		{`a\*b`, "s", "a*b", true},
		{`a\*b`, "s", "aXb", false},
		{`a\?`, "s", "a?", true},
		{`a\?`, "s", "ab", false},
		{`my\:srv:*`, "my:srv", "x", true},
		{`my\:srv:*`, "my", "srv:x", false},
		{`read\:all`, "s", "read:all", true}, // escaped colon: no server part
		{`a\\b`, "s", `a\b`, true},
		{`a\ b`, "s", "a b", true},
		{`\x`, "s", "x", true},
	}
	for _, tt := range tests {
		g, err := policy.CompileGlob(tt.pattern)
		if err != nil {
			t.Errorf("CompileGlob(%q): %v", tt.pattern, err)
			continue
		}
		if got := g.Match(tt.server, tt.tool); got != tt.want {
			t.Errorf("%q.Match(%q, %q) = %v, want %v", tt.pattern, tt.server, tt.tool, got, tt.want)
		}
		if g.String() != tt.pattern {
			t.Errorf("String() = %q, want %q", g.String(), tt.pattern)
		}
	}
}

func TestZeroGlobMatchesNothing(t *testing.T) {
	var g policy.Glob
	if g.Match("", "") || g.Match("s", "t") {
		t.Error("zero Glob matched")
	}
}

func TestCompileGlobErrors(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"", `empty pattern; write "server:tool" or "tool", e.g. "notes:*" or "read_file"`},
		{":x", `pattern ":x" has nothing before ":"; write "*:x" for any server, or drop the colon`},
		{"notes:", `pattern "notes:" has nothing after ":"; write "notes:*" for every tool of that server`},
		{`a\`, `pattern "a\" ends with a lone "\"; write "\\" for a backslash`},
		{"a b", `pattern "a b" contains a space; server and tool names have none (write "\ " if you mean one)`},
		{"notes:\t*", `pattern "notes:\t*" contains a space; server and tool names have none (write "\ " if you mean one)`},
		{"\xff", `pattern "\xff" is not valid UTF-8`},
	}
	for _, tt := range tests {
		_, err := policy.CompileGlob(tt.pattern)
		if err == nil {
			t.Errorf("CompileGlob(%q) succeeded", tt.pattern)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("CompileGlob(%q):\n got %s\nwant %s", tt.pattern, err, tt.want)
		}
	}
}

func TestParseFlowRule(t *testing.T) {
	tests := []struct {
		text     string
		from, to string // "" means an error is expected
	}{
		{"notes:* -> slack:post_message", "notes:*", "slack:post_message"},
		{"notes:*->slack:post_message", "notes:*", "slack:post_message"},
		{"  a   ->   b  ", "a", "b"},
		{"a -> b -> c", "", ""},
		{"a", "", ""},
		{"-> b", "", ""},
		{"a ->", "", ""},
		{"a b -> c", "", ""},
		{":x -> c", "", ""},
	}
	for _, tt := range tests {
		r, err := parseFlowRule(tt.text)
		if tt.from == "" {
			if err == nil {
				t.Errorf("parseFlowRule(%q) succeeded", tt.text)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseFlowRule(%q): %v", tt.text, err)
			continue
		}
		if r.From.String() != tt.from || r.To.String() != tt.to || r.Text != tt.text {
			t.Errorf("parseFlowRule(%q) = %q -> %q (%q)", tt.text, r.From, r.To, r.Text)
		}
	}
}

// TestGlobLongInput checks the matcher stays fast on adversarial patterns.
func TestGlobLongInput(t *testing.T) {
	g, err := policy.CompileGlob(strings.Repeat("a*", 50) + "b")
	if err != nil {
		t.Fatal(err)
	}
	if g.Match("s", strings.Repeat("a", 10000)) {
		t.Error("matched without a b")
	}
	if !g.Match("s", strings.Repeat("a", 10000)+"b") {
		t.Error("did not match")
	}
}

func BenchmarkGlobMatch(b *testing.B) {
	g, _ := policy.CompileGlob("*:*read_file*")
	for b.Loop() {
		g.Match("filesystem", "safe_read_file_v2")
	}
}
