package engine

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

func TestSplitNameDigits(t *testing.T) {
	tests := map[string][]string{
		"kv_namespaces_list": {"kv", "namespaces", "list"},
		"d1_database_query":  {"d1", "database", "query"},
		"getV2Items":         {"get", "v2", "items"},
		"API-post-search":    {"api", "post", "search"},
		"browser_tab_1":      {"browser", "tab", "1"},
		"git.status":         {"git", "status"},
	}
	for in, want := range tests {
		if got := splitName(in); !slices.Equal(got, want) {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestReadVerbAndObjects(t *testing.T) {
	tests := []struct {
		server, name, desc string
		verb               string
		class              verbClass
		objects            []string
	}{
		{"slack", "slack_get_channel_history", "", "get", vRead, []string{"channel", "history"}},
		{"k8s", "kubectl_get", "", "get", vRead, []string{}},         // a known service word is dropped
		{"fc", "monitor_run", "", "run", vExec, []string{"monitor"}}, // a leading non-verb before a verb is dropped, kept as an object
		{"x", "get_pull_request", "", "get", vRead, []string{"pull", "request"}},
		{"x", "merge_merge_request", "", "merge", vWrite, []string{"merge", "request"}},
		{"notion", "API-post-search", "", "search", vSearch, []string{}},  // an HTTP method before a verb
		{"notion", "API-post-page", "", "post", vWrite, []string{"page"}}, // the method is the verb
		{"x", "db-stats", "", "stats", vRead, []string{"db"}},             // a noun-verb when nothing else
		{"x", "collection-indexes", "Describe the indexes", "describe", vRead, []string{"collection", "index"}},
		{"x", "frob", "Retrieves the content of an email.", "retrieve", vRead, []string{"frob"}},
		{"x", "widget", "This tool will create a widget in Acme.", "create", vWrite, []string{"widget"}},
		{"x", "get_or_create_label", "", "get", vRead, []string{"label"}},
		{"x", "resolve_thread", "", "resolve", vWrite, []string{"thread"}}, // resolving a thread is a write
		{"x", "resolve-library-id", "", "resolve", vRead, []string{"library", "id"}},
		{"x", "port_forward", "", "forward", vSession, []string{"port"}},
	}
	for _, tt := range tests {
		r := readDef(ToolDef{Name: tt.name, Description: tt.desc}, serviceWords(tt.server, ""))
		if r.verb != tt.verb || r.class != tt.class || !slices.Equal(nonNilS(r.objects), tt.objects) {
			t.Errorf("%s: verb %q class %d objects %q, want %q %d %q", tt.name, r.verb, r.class, r.objects, tt.verb, tt.class, tt.objects)
		}
	}
	if r := readDef(ToolDef{Name: "get_or_create_label"}, nil); !slices.Equal(r.also, []verbClass{vWrite}) {
		t.Errorf("get_or_create_label: also %v", r.also)
	}
}

func nonNilS(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestParamMeaning(t *testing.T) {
	const (
		P = flow.Private
		U = flow.Untrusted
		S = flow.Sink
	)
	tests := []struct {
		name   string
		schema []Param
		want   flow.Labels
	}{
		// A recipient on a read is a filter, not a sink.
		{"list_messages", []Param{{Name: "to", Type: "string"}}, P | U},
		{"get_channel_history", []Param{{Name: "channel_id", Type: "string"}}, P | U},
		// A "to" that is a date bound names no one.
		{"frobnicate", []Param{{Name: "to", Type: "string", Format: "date-time"}}, 0},
		{"frobnicate", []Param{{Name: "to", Type: "string", Description: "End of the range (ISO date)"}}, 0},
		{"frobnicate", []Param{{Name: "to", Type: "string", Description: "Who gets it"}}, S},
		// A URL the tool requests: untrusted and a sink.
		{"get_page", []Param{{Name: "url", Type: "string", Required: true}}, U | S},
		{"scrape", []Param{{Name: "target_url", Type: "string", Format: "uri"}}, U | S},
		// An optional URL filter of a search is not requested.
		{"search_docs", []Param{{Name: "urls", Type: "array"}, {Name: "query", Type: "string", Required: true}}, U},
		// A boolean switch to URLs.
		{"read_file", []Param{{Name: "path", Type: "string"}, {Name: "isUrl", Type: "boolean"}}, P | U | S},
		// Arithmetic.
		{"add", []Param{{Name: "a", Type: "number"}, {Name: "b", Type: "number"}}, 0},
	}
	pol := mustPolicy(t, "version: 1\n")
	for _, tt := range tests {
		got := Label(pol, "srv", ToolDef{Name: tt.name, Schema: tt.schema})
		if got.Labels != tt.want {
			t.Errorf("%s %+v: labels %s, want %s (why %q)", tt.name, tt.schema, got.Labels, tt.want, got.Why)
		}
	}
}

func TestLocalWrites(t *testing.T) {
	closed := Annotations{Destructive: hint(true), OpenWorld: hint(false)}
	destructive := Annotations{Destructive: hint(true)}
	tests := []struct {
		server, pkg, name string
		ann               Annotations
		want              flow.Labels
	}{
		// Closed world and local objects: no sink.
		{"fs", "", "delete_file", closed, 0},
		{"mem", "", "delete_entities", closed, 0},
		{"g", "", "git_reset", closed, 0},
		{"g", "", "git_push", closed, flow.Sink},
		// Remote operations marked closed-world ("only our own API") stay sinks.
		{"db", "", "delete_branch", closed, flow.Sink},
		{"db", "", "merge_branch", closed, flow.Sink},
		{"db", "", "deploy_edge_function", closed, flow.Sink},
		{"cal", "", "update-event", closed, flow.Sink},
		// Without the hint a file write is a sink (it could be remote)...
		{"x", "", "write_file", Annotations{}, flow.Sink},
		// ...unless the registry knows the server is local.
		{"fs", "@modelcontextprotocol/server-filesystem", "write_something_new", Annotations{}, 0},
		// A notes app's server works on a vault of local files: its
		// destructive hints are about the machine; an open-world hint and
		// another server's destructive write still add a sink.
		{"obsidian", "obsidian-mcp-server", "obsidian_write_note", destructive, 0},
		{"vault", "mcp-obsidian", "delete_note", destructive, 0},
		{"notes", "@acme/logseq-mcp", "append_to_page", destructive, 0},
		{"obsidian", "obsidian-mcp-server", "obsidian_list_notes", Annotations{ReadOnly: hint(true)}, flow.Private},
		{"obsidian", "obsidian-mcp-server", "obsidian_publish_note", Annotations{OpenWorld: hint(true)}, flow.Sink},
		{"wiki", "wiki-mcp", "write_note", destructive, flow.Sink},
		// A container runtime's containers are local; pulling reaches a registry.
		{"podman", "podman-mcp-server", "container_remove", destructive, 0},
		{"docker", "docker-mcp", "image_pull", Annotations{}, flow.Sink},
	}
	pol := mustPolicy(t, "version: 1\n")
	for _, tt := range tests {
		got := Label(pol, tt.server, ToolDef{Name: tt.name, Package: tt.pkg, Annotations: tt.ann})
		if got.Labels != tt.want {
			t.Errorf("%s: labels %s, want %s (why %q)", tt.name, got.Labels, tt.want, got.Why)
		}
	}
}

func TestPackageOf(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"}, "@modelcontextprotocol/server-filesystem"},
		{[]string{"npx", "-y", "@playwright/mcp@0.0.83", "--caps=vision"}, "@playwright/mcp"},
		{[]string{"npx", "--yes", "firecrawl-mcp@latest"}, "firecrawl-mcp"},
		{[]string{"npx", "--package=mcp-server-kubernetes", "mcp-server-kubernetes"}, "mcp-server-kubernetes"},
		{[]string{"/usr/local/bin/npx", "tavily-mcp@0.2.22"}, "tavily-mcp"},
		{[]string{"npm", "exec", "--yes", "--", "@stripe/mcp", "--tools=all"}, "@stripe/mcp"},
		{[]string{"bunx", "linear-mcp"}, "linear-mcp"},
		{[]string{"pnpm", "dlx", "@notionhq/notion-mcp-server@2.5.2"}, "@notionhq/notion-mcp-server"},
		{[]string{"uvx", "mcp-server-git", "--repository", "."}, "mcp-server-git"},
		{[]string{"uvx", "mcp-server-fetch==0.6.3"}, "mcp-server-fetch"},
		{[]string{"uvx", "--from", "mcp_server_sqlite@0.6.2", "mcp-server-sqlite"}, "mcp-server-sqlite"},
		{[]string{"uv", "tool", "run", "mcp-server-time"}, "mcp-server-time"},
		{[]string{"pipx", "run", "mcp-server-fetch"}, "mcp-server-fetch"},
		{[]string{"python3", "-m", "mcp_server_git", "--repository", "."}, "mcp-server-git"},
		{[]string{"node", "/home/u/app/node_modules/@wonderwhy-er/desktop-commander/dist/index.js"}, "@wonderwhy-er/desktop-commander"},
		{[]string{"node", "--enable-source-maps", "C:\\x\\node_modules\\firecrawl-mcp\\dist\\index.js"}, "firecrawl-mcp"},
		{[]string{"docker", "run", "-i", "--rm", "-e", "GITHUB_TOKEN", "-v", "/a:/b", "mcp/github:latest"}, "mcp/github"},
		{[]string{"docker", "run", "--rm", "-i", "--env=X=1", "ghcr.io/github/github-mcp-server@sha256:abc"}, "ghcr.io/github/github-mcp-server"},
		{[]string{"podman", "container", "run", "-i", "docker.io/library/redis:7"}, "redis"},
		{[]string{"env", "A=1", "npx", "-y", "tavily-mcp"}, "tavily-mcp"},
		{[]string{"cmd", "/c", "npx", "-y", "tavily-mcp"}, "tavily-mcp"},
		{[]string{"https://mcp.Example.com/mcp?key=x"}, "mcp.example.com"},
		{[]string{"./my-server", "--stdio"}, ""},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := PackageOf(tt.argv); got != tt.want {
			t.Errorf("PackageOf(%q) = %q, want %q", tt.argv, got, tt.want)
		}
	}
}

func TestRegistry(t *testing.T) {
	m, err := registry()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		t.Fatal("empty registry")
	}
	// Every line's labels parse (parseRegistry checks); every entry says why.
	for id, s := range m {
		for tool, e := range s.Tools {
			if strings.TrimSpace(e.why) == "" {
				t.Errorf("%s/%s: no why", id, tool)
			}
			if e.labels&^(flow.Private|flow.Untrusted|flow.Sink) != 0 {
				t.Errorf("%s/%s: labels %v", id, tool, e.labels)
			}
		}
	}
	if registryFor("MCP_SERVER_GIT") == nil || registryFor("mcp/filesystem") == nil {
		t.Error("identities are not folded (PyPI spelling, docker alias)")
	}
	for _, bad := range []string{
		"servers:\n  - id: x\n    tools:\n      - {tool: a, labels: [secret], why: w}\n",
		"servers:\n  - id: x\n    tools:\n      - {tool: a, labels: [private]}\n",
		"servers:\n  - id: x\n    tools:\n      - {tool: a, labels: [], why: w}\n      - {tool: a, labels: [], why: w}\n",
		"servers:\n  - id: x\n  - id: X\n",
	} {
		if _, err := parseRegistry([]byte(bad)); err == nil {
			t.Errorf("parseRegistry accepted %q", bad)
		}
	}
}

// TestRegistryHasNoHeldoutServer: the held-out groups of the evaluation
// set (every group but dev) measure the heuristic, so none of their
// servers may be in the registry.
func TestRegistryHasNoHeldoutServer(t *testing.T) {
	b, err := os.ReadFile("../../testdata/catalogues/labels.json")
	if err != nil {
		t.Fatal(err)
	}
	var gt struct {
		Split map[string][]string `json:"split"`
	}
	if err := json.Unmarshal(b, &gt); err != nil {
		t.Fatal(err)
	}
	if len(gt.Split["heldout"]) == 0 || len(gt.Split["heldout2"]) == 0 {
		t.Fatal("no heldout or heldout2 group")
	}
	var heldout []string
	for g, servers := range gt.Split {
		if g != "dev" {
			heldout = append(heldout, servers...)
		}
	}
	for _, server := range heldout {
		cb, err := os.ReadFile("../../testdata/catalogues/" + server + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Package string `json:"package"`
		}
		if err := json.Unmarshal(cb, &c); err != nil {
			t.Fatal(err)
		}
		pkg, _, _ := strings.Cut(c.Package, " (")
		if s := registryFor(pkg); s != nil {
			t.Errorf("heldout server %s (%s) is in the registry as %s", server, pkg, s.ID)
		}
		if strings.Contains(strings.ToLower(string(registryYAML)), strings.ToLower(`"`+pkg+`"`)) {
			t.Errorf("heldout package %s appears in registry.yaml", pkg)
		}
	}
}

func TestRegistrySource(t *testing.T) {
	pol := mustPolicy(t, `version: 1
tools:
  - {match: "fs:read_file", labels: []}
`)
	const pkg = "@modelcontextprotocol/server-filesystem"
	// The registry replaces the heuristic and says so.
	got := Label(pol, "files", ToolDef{Name: "read_text_file", Package: pkg})
	if got.Labels != flow.Private || len(got.Why) == 0 || !strings.Contains(got.Why[0], "registry "+pkg+": ") {
		t.Errorf("registry: %s %q", got.Labels, got.Why)
	}
	// A policy entry wins over the registry.
	if got := Label(pol, "fs", ToolDef{Name: "read_file", Package: pkg}); got.Labels != 0 || !got.Listed {
		t.Errorf("policy: %s %q", got.Labels, got.Why)
	}
	// Annotations still add to a registry entry.
	got = Label(pol, "files", ToolDef{Name: "write_file", Package: pkg, Annotations: Annotations{OpenWorld: hint(true)}})
	if got.Labels != flow.Sink {
		t.Errorf("annotation on a registry entry: %s %q", got.Labels, got.Why)
	}
	// Off, the heuristic speaks.
	got = LabelWith(pol, "files", ToolDef{Name: "read_text_file", Package: pkg}, LabelOptions{NoRegistry: true})
	if got.Labels != flow.Private || !strings.Contains(got.Why[0], "heuristic: ") {
		t.Errorf("no registry: %s %q", got.Labels, got.Why)
	}
	// LabelDefs hands the package to definitions without one, and to a
	// tool called blind.
	if got := LabelDefs(pol, "files", pkg, "directory_tree", nil); !strings.Contains(strings.Join(got.Why, ";"), "registry") {
		t.Errorf("LabelDefs blind: %q", got.Why)
	}
}

// TestAnnotationsOnlyAdd: whatever a server's hints say, the labels are a
// superset of those the same definition gets with no hints. The one
// exception is documented in annotationLabels and isLocalWrite: a write
// whose own words say local file, git, note or graph work, marked
// closed-world, is not a sink.
func TestAnnotationsOnlyAdd(t *testing.T) {
	pol := mustPolicy(t, "version: 1\n")
	bools := []*bool{nil, hint(false), hint(true)}
	names := []string{"send_email", "read_file", "fetch", "get_issue", "write_file", "delete_branch", "merge_branch", "git_commit",
		"create_entities", "frobnicate", "list_users", "update-event", "deploy_function", "post_message"}
	for _, pkg := range []string{"", "@modelcontextprotocol/server-filesystem", "@modelcontextprotocol/server-github"} {
		for _, params := range [][]string{nil, {"path"}, {"url", "to"}} {
			for _, n := range names {
				def := ToolDef{Name: n, Package: pkg, Params: params}
				base := Label(pol, "srv", def).Labels
				for _, ro := range bools {
					for _, de := range bools {
						for _, ow := range bools {
							def.Annotations = Annotations{ReadOnly: ro, Destructive: de, OpenWorld: ow}
							want := base
							if ow != nil && !*ow && localTool(def, "srv", false) {
								want &^= flow.Sink
							}
							if got := Label(pol, "srv", def).Labels; got&want != want {
								t.Errorf("%s %s %v %+v: %s drops labels of %s", pkg, n, params, def.Annotations, got, base)
							}
						}
					}
				}
			}
		}
	}
	// The exception never covers remote verbs or objects.
	closed := Annotations{Destructive: hint(true), OpenWorld: hint(false)}
	for _, n := range []string{"delete_branch", "merge_branch", "deploy_function", "update-event", "send_email", "git_push"} {
		if got := Label(pol, "srv", ToolDef{Name: n, Annotations: closed}).Labels; !got.Has(flow.Sink) {
			t.Errorf("%s closed-world: %s, want a sink", n, got)
		}
	}
}

// TestVerbClassesDisjoint: a verb listed in two classes would get one of
// them at random, the order of a map's iteration deciding (drop was in
// both the write and the page-action classes).
func TestVerbClassesDisjoint(t *testing.T) {
	seen := map[string]verbClass{}
	for class, ws := range verbLists {
		for _, w := range strings.Fields(ws) {
			if c, ok := seen[w]; ok && c != class {
				t.Errorf("verb %q is in classes %d and %d", w, c, class)
			}
			seen[w] = class
		}
	}
}
