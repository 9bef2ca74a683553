package clients

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/weir-sec/weir/internal/gateway"
)

// This file checks that weir wrap keeps the header values of a remote
// entry out of weir run's arguments, which every local user can read in
// the process list, and that they still reach the server exactly.

// headerLocations are the clients and formats that have remote entries.
var headerLocations = []Location{
	{Client: ClaudeCode, Path: "/home/ada/src/weir/.mcp.json", Format: FormatMCPServers},
	{Client: ClaudeCode, Path: "/home/ada/.claude.json", Format: FormatClaudeCode},
	{Client: ClaudeDesktop, Path: "claude_desktop_config.json", Format: FormatMCPServers},
	{Client: Cursor, Path: "/home/ada/.cursor/mcp.json", Format: FormatMCPServers},
	{Client: Windsurf, Path: "/home/ada/.codeium/windsurf/mcp_config.json", Format: FormatMCPServers},
	{Client: Kiro, Path: "/home/ada/.kiro/settings/mcp.json", Format: FormatMCPServers},
	{Client: Cline, Path: "cline_mcp_settings.json", Format: FormatMCPServers},
	{Client: LMStudio, Path: "/home/ada/.lmstudio/mcp.json", Format: FormatMCPServers},
	{Client: VSCode, Path: "/home/ada/src/weir/.vscode/mcp.json", Format: FormatVSCode},
	{Client: VSCode, Path: "/home/ada/.config/Code/User/settings.json", Format: FormatVSCodeSettings},
	{Client: GeminiCLI, Path: "/home/ada/.gemini/settings.json", Format: FormatGemini},
	{Client: Zed, Path: "/home/ada/.config/zed/settings.json", Format: FormatZed},
	{Client: Opencode, Path: "/home/ada/.config/opencode/opencode.json", Format: FormatOpencode},
	{Client: Unknown, Path: "servers.json", Format: FormatMCPServers},
	{Client: Goose, Path: "/home/ada/.config/goose/config.yaml", Format: FormatGoose},
	{Client: Continue, Path: "/home/ada/.continue/config.yaml", Format: FormatContinueYAML},
}

// genHeaderPiece is text a header value is made of: characters that mean
// something to a shell, to JSON or YAML, to a client's variable syntax or
// to weir run's ${VAR} expansion.
var genHeaderPiece = rapid.SampledFrom([]string{
	"$", "$$", "${X}", "${WEIR_HEADER_1}", "${WEIR_HEADER_2", "${HOME:-x}", "$HOME", "${env:Y}", "${input:z}", "{env:Z}",
	"${{ secrets.K }}", `"`, "'", `\`, `\"`, " ", "  ", "\t", "é", "😀", "%24", "{", "}", ",", ": ", "#", " #", "--header",
	"-", "Bearer ", "Basic ", "=", "*", "`", "&", "|", ";", "\u00a0", "[", "]", "\\u0041",
})

// drawHeaderValue returns a header value holding a unique secret between
// random pieces.
func drawHeaderValue(t *rapid.T, k int) (value, secret string) {
	secret = fmt.Sprintf("s3cr3t%d%s", k, rapid.StringMatching(`[a-z0-9]{6}`).Draw(t, "secret"))
	before := rapid.SliceOfN(genHeaderPiece, 0, 4).Draw(t, "before")
	after := rapid.SliceOfN(genHeaderPiece, 0, 4).Draw(t, "after")
	return strings.Join(before, "") + secret + strings.Join(after, ""), secret
}

// remoteFile writes one file of loc's format holding the remote entry
// "srv" with headers (and env, when not nil), in a random layout.
func remoteFile(t *rapid.T, loc Location, headers, env jobj) []byte {
	if isYAMLFormat(loc.Format) {
		var b strings.Builder
		ind := "    "
		if loc.Format == FormatGoose {
			b.WriteString("extensions:\n  srv:\n    type: streamable_http\n    uri: https://example.com/mcp\n")
		} else {
			b.WriteString("mcpServers:\n  - name: srv\n    type: streamable-http\n    url: https://example.com/mcp\n")
		}
		b.WriteString(ind + "headers:\n")
		for _, h := range headers {
			b.WriteString(ind + "  " + drawYAMLScalar(t, h.key, false) + ": " + drawYAMLScalar(t, string(h.val.(jstr)), false) + "\n")
		}
		if env != nil {
			k := "env"
			if loc.Format == FormatGoose {
				k = "envs"
			}
			if len(env) == 0 {
				b.WriteString(ind + k + ": {}\n")
			} else {
				b.WriteString(ind + k + ":\n")
				for _, m := range env {
					b.WriteString(ind + "  " + m.key + ": " + drawYAMLScalar(t, string(m.val.(jstr)), false) + "\n")
				}
			}
		}
		return []byte(b.String())
	}
	var e jobj
	envKey := "env"
	switch loc.Format {
	case FormatOpencode:
		envKey = "environment"
		e = jobj{{"type", jstr("remote")}, {"url", jstr("https://example.com/mcp")}}
	case FormatGemini:
		e = jobj{{"httpUrl", jstr("https://example.com/mcp")}}
	case FormatZed:
		e = jobj{{"url", jstr("https://example.com/mcp")}}
	default:
		key := "url"
		if loc.Client == Windsurf {
			key = "serverUrl"
		}
		e = jobj{{key, jstr("https://example.com/mcp")}}
		if rapid.Bool().Draw(t, "typed") {
			e = append(e, jkv{"type", jstr("http")})
		}
	}
	e = append(e, jkv{"headers", headers})
	if env != nil {
		e = append(e, jkv{envKey, env})
	}
	e = rapid.Permutation(e).Draw(t, "order")
	servers := jobj{{"srv", e}}
	root := map[string]jobj{
		FormatMCPServers: {{"mcpServers", servers}}, FormatClaudeCode: {{"mcpServers", servers}},
		FormatVSCode: {{"servers", servers}}, FormatVSCodeSettings: {{"mcp", jobj{{"servers", servers}}}},
		FormatGemini: {{"mcpServers", servers}}, FormatZed: {{"context_servers", servers}}, FormatOpencode: {{"mcp", servers}},
	}[loc.Format]
	var b strings.Builder
	drawLayout(t).write(&b, root, 0)
	return []byte(b.String())
}

// TestWrapKeepsHeaderValuesOutOfArgs: for random header values, in every
// format and client, a wrapped remote entry's args hold no header value,
// nor any part of its secret (and, for Claude Code, which expands every
// ${...} in args itself, no ${ at all: see headerVars); weir run's --header
// expansion and --header-env, from the env the client gives weir run, give
// back each value exactly (its ${X} and $ are not expanded again); the
// listing masks it; and Unwrap gives back the original file byte for
// byte, the header variables gone. An entry is wrapped whenever its values
// hold no variable reference, or its client expands references in a stdio
// entry's env (the client's own expansion of a value, the same in env as
// in headers, is left out here); for Claude Code, but for a value that
// begins or ends with white space weir run --header-env would trim and the
// client would not.
func TestWrapKeepsHeaderValuesOutOfArgs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		loc := rapid.SampledFrom(headerLocations).Draw(t, "location")
		names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"Authorization", "X-Api-Key", "x-org", "Cookie", "X_Weird.1~"}), 1, 4, strings.ToLower).Draw(t, "names")
		var headers jobj
		var secrets []string
		want := http.Header{}
		refs, trimmed := false, false
		for k, n := range names {
			v, secret := drawHeaderValue(t, k)
			headers = append(headers, jkv{n, jstr(v)})
			secrets = append(secrets, secret)
			want.Set(n, strings.Trim(v, " \t"))
			refs = refs || anyRefRE.MatchString(v)
			t := strings.Trim(v, " \t")
			trimmed = trimmed || strings.TrimSpace(t) != t
		}
		var env jobj
		switch rapid.IntRange(0, 3).Draw(t, "env") {
		case 1:
			env = jobj{}
		case 2:
			env = jobj{{"WEIR_HEADER_1", jstr("taken")}, {"A", jstr("1")}}
		case 3:
			env = jobj{{"weir_header_2", jstr("taken too")}}
		}
		x := remoteFile(t, loc, headers, env)

		c, err := Parse(loc, x)
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, x)
		}
		w, changes, err := Wrap(c, WrapOptions{})
		if err != nil {
			t.Fatalf("Wrap: %v\n%s", err, x)
		}
		ch := changes[0]
		if ch.Action != ActionWrapped {
			if (!refs || envRefs(loc)) && (headerVars(loc) || !trimmed) {
				t.Fatalf("%s: refused (%s)\n%s", loc.Client.Name, ch.Detail, x)
			}
			return
		}
		if refs && !envRefs(loc) {
			t.Fatalf("%s: a reference moved for a client not known to expand it\n%s", loc.Client.Name, w)
		}
		for k, secret := range secrets {
			// A secret the value names as a variable is no secret.
			if strings.Contains(shownRefRE.ReplaceAllString(string(headers[k].val.(jstr)), ""), secret) && strings.Contains(ch.Detail, secret) {
				t.Fatalf("the listing shows a header value: %s", ch.Detail)
			}
		}
		cw, err := Parse(loc, w)
		if err != nil {
			t.Fatalf("Parse(Wrap(x)): %v\n%s", err, w)
		}
		s := cw.Servers[0]
		r, ok := parseRunLine(s.Args)
		if !ok || !s.Wrapped || r.upstream != "https://example.com/mcp" || len(r.flags) != len(headers) {
			t.Fatalf("wrapped as %+v\n%s", s, w)
		}
		if !headerVars(loc) && len(r.headers) != 0 {
			t.Fatalf("Claude Code is given --header %q\n%s", r.headers, w)
		}
		for _, a := range append([]string{s.Command}, s.Args...) {
			if !headerVars(loc) && strings.Contains(a, "${") {
				t.Fatalf("the argument %q holds a ${ Claude Code would expand\n%s", a, w)
			}
			for k, h := range headers {
				if strings.Contains(a, secrets[k]) || strings.Contains(a, strings.Trim(string(h.val.(jstr)), " \t")) {
					t.Fatalf("the argument %q holds the value of %s\n%s", a, h.key, w)
				}
			}
		}
		// What weir run sends: its --header flags, expanded (once) from
		// the environment the client starts it with, and its --header-env
		// flags, taken from that environment as they are.
		got, err := sentHeaders(r, s.Env)
		if err != nil {
			t.Fatalf("weir run would refuse the headers: %v\n%s", err, w)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("weir run would send %q, want %q\n%s", got, want, w)
		}
		// The env the entry had is kept as it was.
		for _, m := range env {
			if s.Env[m.key] != string(m.val.(jstr)) {
				t.Fatalf("env %s = %q, want %q\n%s", m.key, s.Env[m.key], m.val, w)
			}
		}
		u, uch, err := Unwrap(cw)
		if err != nil || uch[0].Action != ActionUnwrapped || !bytes.Equal(u, x) {
			t.Fatalf("Unwrap = %v %+v\n%s\n--- want\n%s", err, uch, u, x)
		}
	})
}

// sentHeaders are the headers weir run sends for the --header and
// --header-env flags of r, started with env as its environment: as its
// upstreamHeaders and headersFromEnv (cmd/weir) make them.
func sentHeaders(r runLine, env map[string]string) (http.Header, error) {
	lookup := func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
	h, err := gateway.ExpandHeaders(r.headers, lookup)
	if err != nil {
		return nil, err
	}
	if h == nil {
		h = http.Header{}
	}
	for _, f := range r.headerEnv {
		name, variable, ok := strings.Cut(f, "=")
		name, variable = strings.TrimSpace(name), strings.TrimSpace(variable)
		v, set := env[variable]
		if !ok || name == "" || !set {
			return nil, fmt.Errorf("--header-env %q: no such variable", f)
		}
		h.Add(name, strings.TrimSpace(v))
	}
	return h, nil
}
