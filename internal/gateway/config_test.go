package gateway

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseFile(t *testing.T) {
	f, err := ParseFile("/etc/weir/gateway.yaml", []byte(`
listen: 127.0.0.1:9000
policy: ./policy.yaml
rate: 50
allow_origins: [http://localhost:3000]
store: {url: "postgres://weir:${PGPASS}@db.internal:5432/weir?sslmode=require"}
servers:
  notes: {command: [npx, -y, "@modelcontextprotocol/server-filesystem", /home/me/notes], env: {A: b}}
  web:   {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer ${WEB_TOKEN}"}}
`), env(map[string]string{"WEB_TOKEN": "t0k", "PGPASS": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	if f.Listen != "127.0.0.1:9000" || f.Policy != "/etc/weir/policy.yaml" || f.Rate != 50 || len(f.AllowOrigins) != 1 {
		t.Errorf("file = %+v", f)
	}
	if len(f.Servers) != 2 || f.Servers[0].Name != "notes" || f.Servers[1].Name != "web" {
		t.Fatalf("servers = %+v (want the file's order)", f.Servers)
	}
	if f.Servers[0].Env["A"] != "b" || len(f.Servers[0].Command) != 4 {
		t.Errorf("notes = %+v", f.Servers[0])
	}
	if got := f.Servers[1].Header.Get("Authorization"); got != "Bearer t0k" {
		t.Errorf("web header = %q", got)
	}
	if f.StoreURL != "postgres://weir:s3cret@db.internal:5432/weir?sslmode=require" {
		t.Errorf("store url = %q", f.StoreURL)
	}
}

// Every mistake is reported with the file, line, column and key, all at
// once; the golden file is what a user reads.
func TestParseFileErrors(t *testing.T) {
	cases := []struct{ name, yaml string }{
		{"unknown top-level key", "listen: x\nservrs: {}\n"},
		{"unknown server key", "servers:\n  a: {command: [x], comand: [y]}\n"},
		{"bad server name", "servers:\n  my_server: {command: [x]}\n"},
		{"both command and url", "servers:\n  a: {command: [x], url: \"http://h/mcp\"}\n"},
		{"neither", "servers:\n  a: {env: {}}\n"},
		{"bad url", "servers:\n  a: {url: \"ftp://h\"}\n"},
		{"credentials in url", "servers:\n  a: {url: \"https://u:p@h/mcp\"}\n"},
		{"unset variable", "servers:\n  a: {url: \"https://h/mcp\", headers: {Authorization: \"Bearer ${NOPE}\"}}\n"},
		{"headers on a command", "servers:\n  a: {command: [x], headers: {A: b}}\n"},
		{"repeated key", "servers:\n  a: {command: [x]}\nservers:\n  b: {command: [y]}\n"},
		{"no servers", "listen: 127.0.0.1:1\n"},
		{"duplicate server", "servers:\n  fs: {command: [a]}\n  fs: {command: [b]}\n"},
		{"bad origin", "allow_origins: [nope]\nservers:\n  a: {command: [x]}\n"},
		{"wrong types", "rate: fast\nservers:\n  a: {command: x}\n"},
		{"not yaml", "servers: [\n"},
		{"empty", ""},
		{"store url not postgres", "store: {url: \"sqlite:///tmp/x.db\"}\nservers:\n  a: {command: [x]}\n"},
		{"store url unset variable", "store: {url: \"postgres://weir:${NOPE}@db/weir\"}\nservers:\n  a: {command: [x]}\n"},
		{"store url without host", "store: {url: \"postgres:///weir\"}\nservers:\n  a: {command: [x]}\n"},
		{"store unknown key", "store: {uri: \"postgres://db/weir\"}\nservers:\n  a: {command: [x]}\n"},
	}
	var out strings.Builder
	for _, c := range cases {
		_, err := ParseFile("gateway.yaml", []byte(c.yaml), env(nil))
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		out.WriteString("# " + c.name + "\n" + err.Error() + "\n\n")
	}
	golden := filepath.Join("testdata", "config_errors.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("errors differ from %s (run with -update):\n%s", golden, out.String())
	}
}

// SERVER__NAME and SERVER+URI are injective and reversible: for any valid
// server name and any tool name or URI, splitting gives back both.
func TestNamingReversible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		server := rapid.StringMatching(`[A-Za-z][A-Za-z0-9-]{0,20}`).Draw(t, "server")
		name := rapid.StringN(1, 40, -1).Draw(t, "name")
		m := &mux{members: map[string]*member{server: {}}}
		item, _ := json.Marshal(map[string]string{"name": name, "uri": name})
		out, ok := prefixItem(server, item)
		if !ok {
			t.Fatalf("prefixItem(%q) failed", item)
		}
		var got map[string]string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		s, n, ok := m.splitName(got["name"])
		if !ok || s != server || n != name {
			t.Fatalf("split(%q) = %q %q %v", got["name"], s, n, ok)
		}
		s, u, ok := strings.Cut(got["uri"], uriSep)
		if !ok || s != server || u != name {
			t.Fatalf("split(%q) = %q %q", got["uri"], s, u)
		}
	})
}

func TestTokens(t *testing.T) {
	tok, err := ParseTokensEnv("alice=aaaaaaaaaaaaaaaaaaaa, bob=bbbbbbbbbbbbbbbbbbbb")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(path, []byte("# team tokens\ncarol "+HashToken("cccccccccccccccccccc")+"\n"), 0o600)
	if err := LoadTokensFile(path, tok); err != nil {
		t.Fatal(err)
	}
	for header, want := range map[string]string{
		"Bearer aaaaaaaaaaaaaaaaaaaa": "alice",
		"bearer bbbbbbbbbbbbbbbbbbbb": "bob",
		"Bearer cccccccccccccccccccc": "carol",
	} {
		if got, err := tok.Authenticate(header); err != nil || got != want {
			t.Errorf("Authenticate(%q) = %q, %v; want %s", header, got, err, want)
		}
	}
	for header, want := range map[string]error{"": ErrNoToken, "Basic x": ErrNoToken, "Bearer ": ErrNoToken, "Bearer wrongwrongwrongwrong": ErrBadToken} {
		if _, err := tok.Authenticate(header); err != want {
			t.Errorf("Authenticate(%q) = %v, want %v", header, err, want)
		}
	}
	for _, bad := range []string{"x", "a=short", "bad name=aaaaaaaaaaaaaaaaaaaa", "a=aaaaaaaaaaaaaaaaaaaa,a=bbbbbbbbbbbbbbbbbbbb"} {
		if _, err := ParseTokensEnv(bad); err == nil {
			t.Errorf("ParseTokensEnv(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "aaaaaaaaaa") {
			t.Errorf("the error shows a token: %v", err)
		}
	}
	os.WriteFile(path, []byte("dave sha256:nothex\n"), 0o600)
	if err := LoadTokensFile(path, &Tokens{}); err == nil || !strings.Contains(err.Error(), path+":1") {
		t.Errorf("bad hash: %v (want the file and line)", err)
	}
}
