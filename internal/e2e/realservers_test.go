package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weir-sec/weir/internal/scan"
)

var update = flag.Bool("update", false, "rewrite testdata/realservers.golden.json from the labels weir scan gives today")

// realServersGolden is the reviewed label set of every tool of
// realServers: "server/tool" → labels, as weir scan gives them with the
// default preset. A change to it is a change to what Weir decides about
// real tools, so it is reviewed like code.
const realServersGolden = "testdata/realservers.golden.json"

// realServer is one of the real npm MCP servers pinned in
// testdata/npm/package.json, and how it starts with no credentials: dummy
// keys where it wants one, nothing it could reach with them. In args and
// env, $DIR is a fresh directory of the server's own.
type realServer struct {
	name string   // its --name, its entry in the scanned config, and the golden keys' prefix
	main string   // its entry point under testdata/npm/node_modules
	args []string // after the entry point
	env  []string // KEY=VALUE
}

// realServers are started the way testdata/catalogues/README.md lists
// them, under the same names, so that a golden key is also the key of the
// tool's reviewed ground truth in testdata/catalogues/labels.json; the
// versions are the ones pinned in testdata/npm/package.json.
var realServers = []realServer{
	{name: "everything", main: "@modelcontextprotocol/server-everything/dist/index.js"},
	{name: "filesystem", main: "@modelcontextprotocol/server-filesystem/dist/index.js", args: []string{"$DIR"}},
	{name: "memory", main: "@modelcontextprotocol/server-memory/dist/index.js", env: []string{"MEMORY_FILE_PATH=$DIR/memory.jsonl"}},
	{name: "sequential-thinking", main: "@modelcontextprotocol/server-sequential-thinking/dist/index.js"},
	{name: "github-ref", main: "@modelcontextprotocol/server-github/dist/index.js", env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN=dummy"}},
	{name: "gitlab-ref", main: "@modelcontextprotocol/server-gitlab/dist/index.js", env: []string{"GITLAB_PERSONAL_ACCESS_TOKEN=dummy"}},
	{name: "slack", main: "@modelcontextprotocol/server-slack/dist/index.js", env: []string{"SLACK_BOT_TOKEN=xoxb-dummy", "SLACK_TEAM_ID=T000"}},
	{name: "brave-search", main: "@modelcontextprotocol/server-brave-search/dist/index.js", env: []string{"BRAVE_API_KEY=dummy"}},
	{name: "google-maps", main: "@modelcontextprotocol/server-google-maps/dist/index.js", env: []string{"GOOGLE_MAPS_API_KEY=dummy"}},
	{name: "postgres", main: "@modelcontextprotocol/server-postgres/dist/index.js", args: []string{"postgresql://127.0.0.1:1/none"}},
	{name: "notion", main: "@notionhq/notion-mcp-server/bin/cli.mjs", env: []string{"NOTION_TOKEN=dummy"}},
	{name: "firecrawl", main: "firecrawl-mcp/dist/index.js", env: []string{"FIRECRAWL_API_KEY=fc-dummy"}},
	{name: "tavily", main: "tavily-mcp/build/index.js", env: []string{"TAVILY_API_KEY=tvly-dummy"}},
	{name: "playwright", main: "@playwright/mcp/cli.js", args: []string{"--caps=vision,pdf,devtools"}},
	{name: "context7", main: "@upstash/context7-mcp/dist/index.js"},
	{name: "hubspot", main: "@hubspot/mcp-server/dist/index.js", env: []string{"PRIVATE_APP_ACCESS_TOKEN=dummy"}},
	{name: "airtable", main: "airtable-mcp-server/dist/main.js", env: []string{"AIRTABLE_API_KEY=patdummy"}},
	{name: "git-cyanheads", main: "@cyanheads/git-mcp-server/dist/index.js"},
	{name: "supabase", main: "@supabase/mcp-server-supabase/dist/cli.js", args: []string{"--features=account,database,debugging,development,functions,branching,storage"}, env: []string{"SUPABASE_ACCESS_TOKEN=dummy"}},
	{name: "perplexity", main: "@perplexity-ai/mcp-server/dist/index.js", env: []string{"PERPLEXITY_API_KEY=dummy"}},
	{name: "resend", main: "resend-mcp/dist/index.js", env: []string{"RESEND_API_KEY=re_dummy"}},
	{name: "todoist", main: "todoist-mcp/dist/index.js", env: []string{"API_KEY=dummy"}},
}

// startedServer is a realServer ready to launch.
type startedServer struct {
	realServer
	argv []string // node, entry point, args
	env  []string // the server's own variables, $DIR expanded
}

// TestRealServers runs Weir over real MCP servers from npm, pinned in
// testdata/npm, and requires two things of each:
//
//  1. Nothing is withheld: every tool the server lists when spoken to
//     directly reaches the client through weir run (in a fresh WEIR_HOME,
//     as on a first launch), and weir scan --format json reports none of
//     them withheld.
//  2. Each tool's labels, as weir scan gives them with the default preset,
//     are those of the reviewed golden file testdata/realservers.golden.json.
//     A change shows as a diff (tool, golden, now, and Weir's why); once
//     reviewed it is recorded with
//     go test ./internal/e2e -run TestRealServers -update
//
// The servers are scanned together from one config file, then listed
// directly and through weir run in parallel subtests (bounded by -parallel).
func TestRealServers(t *testing.T) {
	// Resolve every server first, so that a missing package skips (or,
	// under WEIR_E2E_REQUIRE=1, fails) before anything starts.
	home := t.TempDir() // the servers' HOME: nothing they write lands in the real one
	var servers []startedServer
	for _, s := range realServers {
		argv := npmPeer(t, filepath.Join("node_modules", s.main))
		dir := t.TempDir()
		expand := func(v string) string { return strings.ReplaceAll(v, "$DIR", dir) }
		ss := startedServer{realServer: s, argv: argv}
		for _, a := range s.args {
			ss.argv = append(ss.argv, expand(a))
		}
		for _, kv := range s.env {
			ss.env = append(ss.env, expand(kv))
		}
		servers = append(servers, ss)
	}
	baseEnv := []string{"HOME=" + home}

	start := time.Now()
	rep := scanRealServers(t, servers, baseEnv)
	t.Logf("weir scan of %d servers: %s", len(servers), time.Since(start).Round(100*time.Millisecond))
	byName := map[string]scan.ServerReport{}
	for _, s := range rep.Servers {
		byName[s.Name] = s
	}

	// A server the scan could not list fails here, once, with the reason;
	// its tools are then compared with nothing.
	unscanned := map[string]bool{}
	for _, s := range servers {
		sr, ok := byName[s.name]
		if !ok || sr.Status != scan.StatusScanned {
			t.Errorf("weir scan could not scan %s: %q: %s\nstderr:\n%s", s.name, sr.Status, sr.Error, sr.Stderr)
			unscanned[s.name] = true
		}
	}

	// 1. Nothing withheld, each server in its own subtest.
	start = time.Now()
	t.Run("list", func(t *testing.T) {
		for _, s := range servers {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				checkNothingWithheld(t, s, byName[s.name], !unscanned[s.name], baseEnv)
			})
		}
	})
	t.Logf("direct and weir run listings: %s", time.Since(start).Round(100*time.Millisecond))

	// 2. Labels against the golden file.
	now := map[string][]string{}
	why := map[string][]string{}
	for _, s := range servers {
		for _, tr := range byName[s.name].Tools {
			key := s.name + "/" + tr.Name
			now[key] = canonicalLabels(tr.Labels)
			why[key] = tr.Why
		}
	}
	if *update {
		if len(unscanned) > 0 {
			t.Fatalf("not rewriting %s while some servers could not be scanned", realServersGolden)
		}
		writeGolden(t, now)
		return
	}
	t.Run("labels", func(t *testing.T) {
		compareGolden(t, now, why, unscanned)
	})
}

// scanRealServers writes a config file listing every server and returns
// weir scan --format json's report of it, scanned in a fresh WEIR_HOME.
func scanRealServers(t *testing.T, servers []startedServer, baseEnv []string) scan.ConfigReport {
	t.Helper()
	type entry struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	cfg := map[string]map[string]entry{"mcpServers": {}}
	for _, s := range servers {
		e := entry{Command: s.argv[0], Args: s.argv[1:]}
		if len(s.env) > 0 {
			e.Env = map[string]string{}
			for _, kv := range s.env {
				k, v, _ := strings.Cut(kv, "=")
				e.Env[k] = v
			}
		}
		cfg["mcpServers"][s.name] = e
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ".mcp.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}

	e := newWeirEnv(t)
	cmd := exec.Command(weirBin, "scan", path, "--format", "json", "--timeout", "90s", "--parallel", "4")
	cmd.Env = e.environ(baseEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("weir scan: %v", err)
	}
	var rep scan.Report
	if err := json.Unmarshal(out, &rep); err != nil || len(rep.Configs) != 1 {
		t.Fatalf("weir scan exited %d with output that is not one config's report (%v):\n%s\nstderr:\n%s", code, err, out, stderr.String())
	}
	// 1: the trifecta these servers make up, unguarded, is a high finding;
	// 3: a server could not be scanned, which the caller reports per server.
	if code != scan.ExitOK && code != scan.ExitFindings && code != scan.ExitUnreachable {
		t.Fatalf("weir scan exited %d\nstderr:\n%s", code, stderr.String())
	}
	return rep.Configs[0]
}

// checkNothingWithheld lists the server's tools directly and through weir
// run, and requires the same tools both ways, the same as weir scan
// listed, none of them withheld in the scan.
func checkNothingWithheld(t *testing.T, s startedServer, sr scan.ServerReport, scanned bool, baseEnv []string) {
	e := newWeirEnv(t) // a fresh WEIR_HOME: the first launch
	env := e.environ(append(slices.Clone(baseEnv), s.env...)...)

	// Both start at once; the second boots while the first is listed.
	dp := startPeer(t, env, s.argv...)
	pp := startPeer(t, env, e.wrap(s.name, s.argv)...)
	direct := listToolNames(t, dp)
	if len(direct) == 0 {
		t.Fatalf("%s listed no tools directly", s.name)
	}
	proxied := listToolNames(t, pp)

	reports := map[string]scan.ToolReport{}
	var scannedNames []string
	for _, tr := range sr.Tools {
		reports[tr.Name] = tr
		scannedNames = append(scannedNames, tr.Name)
	}
	explain := func(tool string) string {
		tr, ok := reports[tool]
		if !ok {
			return "(weir scan did not list it)"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "scan: withheld %v, rule %q, reason %q, pin %s, severity %s", tr.Withheld, tr.Rule, tr.Reason, tr.Pin, tr.Severity)
		for _, f := range tr.Findings {
			fmt.Fprintf(&b, "\n      finding %s (%s) at %s: %s [%s]", f.Detector, f.Severity, f.Field, f.Message, f.Evidence)
		}
		return b.String()
	}

	for _, name := range direct {
		if !slices.Contains(proxied, name) {
			t.Errorf("WITHHELD by weir run: %s/%s\n    %s", s.name, name, explain(name))
		}
	}
	for _, name := range proxied {
		if !slices.Contains(direct, name) {
			t.Errorf("weir run listed %s/%s, which the server does not list directly", s.name, name)
		}
	}
	if scanned && !slices.Equal(sorted(direct), sorted(scannedNames)) {
		t.Errorf("%s: weir scan listed %d tools %v, the server directly %d %v", s.name, len(scannedNames), scannedNames, len(direct), direct)
	}
	for _, tr := range sr.Tools {
		if tr.Withheld {
			t.Errorf("weir scan reports %s/%s withheld\n    %s", s.name, tr.Name, explain(tr.Name))
		}
	}
	if !t.Failed() {
		t.Logf("%d tools, all listed through weir run", len(direct))
	}
}

// listToolNames initializes a session and lists the tools, following
// nextCursor, then ends the session.
func listToolNames(t *testing.T, p *peer) []string {
	t.Helper()
	tr := &transcript{}
	handshake(t, p, tr)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var names []string
	cursor := ""
	for page := 0; ; page++ {
		if page == 100 {
			t.Fatalf("still a nextCursor after 100 pages")
		}
		params := "{}"
		if cursor != "" {
			c, _ := json.Marshal(cursor)
			params = `{"cursor":` + string(c) + `}`
		}
		id := fmt.Sprint(page + 2)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":` + params + `}`)
		m := tr.await(t, p, id)
		if m.Error != nil {
			t.Fatalf("tools/list: error %d %s\nstderr:\n%s", m.Error.Code, m.Error.Message, p.stderr.String())
		}
		var res struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("tools/list result %s: %v", m.Result, err)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	p.close()
	return names
}

// sorted returns a sorted copy of names.
func sorted(names []string) []string {
	out := slices.Clone(names)
	sort.Strings(out)
	return out
}

// canonicalLabels returns the labels in Weir's order (private, untrusted,
// sink, then any other alphabetically), never nil, so that the golden
// compares sets and reads the same way everywhere.
func canonicalLabels(l []string) []string {
	rank := func(s string) int {
		if i := slices.Index([]string{"private", "untrusted", "sink"}, s); i >= 0 {
			return i
		}
		return 3
	}
	out := append([]string{}, l...)
	slices.SortFunc(out, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return slices.Compact(out)
}

func writeGolden(t *testing.T, now map[string][]string) {
	t.Helper()
	data, err := json.MarshalIndent(now, "", "  ") // keys sorted
	if err != nil {
		t.Fatal(err)
	}
	data = append(compactLabelLists(data), '\n')
	if err := os.MkdirAll(filepath.Dir(realServersGolden), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(realServersGolden, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d tools", realServersGolden, len(now))
}

// compactLabelLists puts each tool's labels on its line: one line per tool
// makes the golden's diffs read as "this tool's labels changed".
func compactLabelLists(data []byte) []byte {
	var out bytes.Buffer
	var list []string
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case in && (trimmed == "]" || trimmed == "],"):
			out.WriteString(strings.Join(list, ", ") + trimmed + "\n")
			in, list = false, nil
		case in:
			list = append(list, strings.TrimSuffix(trimmed, ","))
		case strings.HasSuffix(trimmed, "["):
			out.WriteString(line)
			in = true
		default:
			out.WriteString(line + "\n")
		}
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n"))
}

// compareGolden requires every tool's labels to be the golden file's, and
// says, for each that differs, what the golden has, what Weir gives now
// and why.
func compareGolden(t *testing.T, now, why map[string][]string, unscanned map[string]bool) {
	data, err := os.ReadFile(realServersGolden)
	if err != nil {
		t.Fatalf("%v (write it with go test ./internal/e2e -run TestRealServers -update, then review it)", err)
	}
	var golden map[string][]string
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatalf("%s: %v", realServersGolden, err)
	}
	var keys []string
	for k := range now {
		keys = append(keys, k)
	}
	for k := range golden {
		server, _, _ := strings.Cut(k, "/")
		if _, ok := now[k]; !ok && !unscanned[server] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var diff strings.Builder
	changed := 0
	for _, k := range keys {
		g, inGolden := golden[k]
		n, listed := now[k]
		switch {
		case !listed:
			fmt.Fprintf(&diff, "  %s\n    golden: %v\n    now:    (no longer listed)\n", k, g)
		case !inGolden:
			fmt.Fprintf(&diff, "  %s\n    golden: (not in the golden file)\n    now:    %v\n    why:    %s\n", k, n, whyText(why[k]))
		case !slices.Equal(canonicalLabels(g), n):
			fmt.Fprintf(&diff, "  %s\n    golden: %v\n    now:    %v\n    why:    %s\n", k, canonicalLabels(g), n, whyText(why[k]))
		default:
			continue
		}
		changed++
	}
	if changed > 0 {
		t.Errorf("the labels of %d of %d tools differ from %s:\n%s"+
			"Review each change; if it is right, record it with\n  go test ./internal/e2e -run TestRealServers -update",
			changed, len(now), realServersGolden, diff.String())
	} else {
		t.Logf("%d tools labelled as in %s", len(now), realServersGolden)
	}
}

func whyText(why []string) string {
	if len(why) == 0 {
		return "(no reason given)"
	}
	return strings.Join(why, "; ")
}
