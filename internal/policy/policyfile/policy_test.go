package policyfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// summary is the comparable part of a Policy, for table tests.
type summary struct {
	Version       int
	Mode          policy.Mode
	DefaultAction policy.DefaultAction
	Exfiltration  flow.Verdict
	Trifecta      flow.Verdict
	Integrity     flow.Verdict
	TaintedArgs   flow.Verdict
	MinMatches    int
	AllowFlows    []string // "FROM -> TO" as compiled
	Tools         []string // "MATCH LABELS"
	Rules         []string // "ID MATCH ACTION"
	Config        []string // sorted keys
	Preset        string
	Source        string
}

func summarize(p *policy.Policy) summary {
	s := summary{
		Version:       p.Version,
		Mode:          p.Mode,
		DefaultAction: p.DefaultAction,
		Exfiltration:  p.Flow.Exfiltration,
		Trifecta:      p.Flow.Trifecta,
		Integrity:     p.Flow.Integrity,
		TaintedArgs:   p.Flow.TaintedArgs,
		MinMatches:    p.Flow.MinMatches,
		Preset:        p.Preset,
		Source:        p.Source,
	}
	for _, r := range p.Rules {
		s.Rules = append(s.Rules, r.ID+" "+r.Match.String()+" "+r.Action.String())
	}
	for k := range p.Config {
		s.Config = append(s.Config, k)
	}
	slices.Sort(s.Config)
	for _, r := range p.Flow.AllowFlows {
		s.AllowFlows = append(s.AllowFlows, r.From.String()+" -> "+r.To.String())
	}
	for _, e := range p.Tools {
		s.Tools = append(s.Tools, e.Match.String()+" "+e.Labels.String())
	}
	return s
}

// defaults is the default preset, as documented.
var defaults = summary{
	Version:       1,
	Mode:          policy.Enforce,
	DefaultAction: policy.DefaultAllow,
	Exfiltration:  flow.Block,
	Trifecta:      flow.Warn,
	Integrity:     flow.Allow,
	TaintedArgs:   flow.Allow,
	MinMatches:    2,
	Preset:        "default",
}

func equalSummary(a, b summary) bool {
	return a.Version == b.Version && a.Mode == b.Mode && a.DefaultAction == b.DefaultAction &&
		a.Exfiltration == b.Exfiltration && a.Trifecta == b.Trifecta && a.Integrity == b.Integrity &&
		a.TaintedArgs == b.TaintedArgs && a.MinMatches == b.MinMatches && slices.Equal(a.AllowFlows, b.AllowFlows) &&
		slices.Equal(a.Tools, b.Tools) && slices.Equal(a.Rules, b.Rules) && slices.Equal(a.Config, b.Config) &&
		a.Preset == b.Preset && a.Source == b.Source
}

// TestParseKeys checks that every key's valid values land in the right
// field, and that everything the file leaves out keeps the default preset's
// value.
func TestParseKeys(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		edit func(*summary) // applied to the defaults to get the expectation
	}{
		{"empty file", "", nil},
		{"only comments", "# nothing here\n\n# at all\n", nil},
		{"document marker only", "---\n", nil},
		{"explicit null", "null\n", nil},
		{"version only", "version: 1\n", nil},
		{"version hex", "version: 0x1\n", nil},
		{"mode enforce", "version: 1\nmode: enforce\n", nil},
		{"mode monitor", "version: 1\nmode: monitor\n", func(s *summary) { s.Mode = policy.Monitor }},
		{"mode quoted", "version: 1\nmode: \"monitor\"\n", func(s *summary) { s.Mode = policy.Monitor }},
		{"default_action allow", "version: 1\ndefault_action: allow\n", nil},
		{"default_action deny", "version: 1\ndefault_action: deny\n", func(s *summary) { s.DefaultAction = policy.DefaultDeny }},
		{"exfiltration allow", "version: 1\nflow:\n  exfiltration: allow\n", func(s *summary) { s.Exfiltration = flow.Allow }},
		{"exfiltration warn", "version: 1\nflow:\n  exfiltration: warn\n", func(s *summary) { s.Exfiltration = flow.Warn }},
		{"exfiltration block", "version: 1\nflow:\n  exfiltration: block\n", func(s *summary) { s.Exfiltration = flow.Block }},
		{"exfiltration escalate", "version: 1\nflow:\n  exfiltration: escalate\n", func(s *summary) { s.Exfiltration = flow.Escalate }},
		{"trifecta allow", "version: 1\nflow: {trifecta: allow}\n", func(s *summary) { s.Trifecta = flow.Allow }},
		{"trifecta block", "version: 1\nflow: {trifecta: block}\n", func(s *summary) { s.Trifecta = flow.Block }},
		{"trifecta escalate", "version: 1\nflow: {trifecta: escalate}\n", func(s *summary) { s.Trifecta = flow.Escalate }},
		{"integrity warn", "version: 1\nflow: {integrity: warn}\n", func(s *summary) { s.Integrity = flow.Warn }},
		{"integrity escalate", "version: 1\nflow: {integrity: escalate}\n", func(s *summary) { s.Integrity = flow.Escalate }},
		{"min_matches 1", "version: 1\nflow: {min_matches: 1}\n", func(s *summary) { s.MinMatches = 1 }},
		{"min_matches 7", "version: 1\nflow: {min_matches: 7}\n", func(s *summary) { s.MinMatches = 7 }},
		{"flow empty", "version: 1\nflow:\n", nil},
		{"flow empty mapping", "version: 1\nflow: {}\n", nil},
		{"allow_flows empty", "version: 1\nflow: {allow_flows: []}\n", nil},
		{"allow_flows null", "version: 1\nflow: {allow_flows: null}\n", nil},
		{
			"allow_flows",
			"version: 1\nflow:\n  allow_flows:\n    - notes:* -> slack:post_message\n    - \"fs:read_file->gh:create_pull_request\"\n",
			func(s *summary) {
				s.AllowFlows = []string{"notes:* -> slack:post_message", "fs:read_file -> gh:create_pull_request"}
			},
		},
		{"tools empty", "version: 1\ntools: []\n", nil},
		{"tools null", "version: 1\ntools:\n", nil},
		{
			"tools",
			"version: 1\ntools:\n  - {match: \"notes:*\", labels: [private]}\n  - match: web:fetch\n    labels:\n      - untrusted\n      - sink\n  - {match: calc, labels: []}\n",
			func(s *summary) {
				s.Tools = []string{"notes:* private", "web:fetch untrusted,sink", "calc none"}
			},
		},
		{"all three labels", "version: 1\ntools: [{match: x, labels: [sink, untrusted, private]}]\n", func(s *summary) {
			s.Tools = []string{"x private,untrusted,sink"}
		}},
		{
			"anchors and aliases",
			"version: 1\ntools:\n  - {match: \"a\", labels: &l [private, sink]}\n  - {match: \"b\", labels: *l}\nflow: {trifecta: &act block, integrity: *act}\n",
			func(s *summary) {
				s.Tools = []string{"a private,sink", "b private,sink"}
				s.Trifecta, s.Integrity = flow.Block, flow.Block
			},
		},
		{
			"everything",
			`version: 1
mode: monitor
default_action: deny
flow:
  exfiltration: escalate
  trifecta: block
  integrity: warn
  min_matches: 3
  allow_flows: ["notes:* -> slack:post_message"]
tools:
  - {match: "notes:*", labels: [private]}
  - {match: "web:fetch", labels: [untrusted, sink]}
`,
			func(s *summary) {
				*s = summary{
					Version: 1, Mode: policy.Monitor, DefaultAction: policy.DefaultDeny, Preset: "default",
					Exfiltration: flow.Escalate, Trifecta: flow.Block, Integrity: flow.Warn, MinMatches: 3,
					AllowFlows: []string{"notes:* -> slack:post_message"},
					Tools:      []string{"notes:* private", "web:fetch untrusted,sink"},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := defaults
			if tt.edit != nil {
				tt.edit(&want)
			}
			want.Source = "p.yaml"
			if got := summarize(p); !equalSummary(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestParsePositions(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`version: 1
flow:
  allow_flows:
    - "a -> b"
tools:
  - {match: x, labels: []}

  - match: y
    labels: [sink]
`))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Flow.AllowFlows[0]; r.Line != 4 || r.Source != "p.yaml" || r.Text != "a -> b" {
		t.Errorf("allow_flows[0] = line %d source %q text %q", r.Line, r.Source, r.Text)
	}
	if e := p.Tools[0]; e.Line != 6 || e.Source != "p.yaml" {
		t.Errorf("tools[0] at line %d source %q", e.Line, e.Source)
	}
	if e := p.Tools[1]; e.Line != 8 {
		t.Errorf("tools[1] at line %d, want 8", e.Line)
	}
}

// TestLayering checks the precedence rules of the package doc: the file's
// keys replace the base's one by one, lists are appended after the base's.
func TestLayering(t *testing.T) {
	base, err := Preset("default")
	if err != nil {
		t.Fatal(err)
	}
	// A base with entries of its own, as a future preset may have.
	base.Tools = []policy.ToolEntry{{Match: mustGlob(t, "notes:*"), Labels: flow.Private, Source: "preset:test"}}
	base.Flow.AllowFlows = []policy.FlowRule{mustRule(t, "notes:* -> drafts:*")}
	base.Flow.MinMatches = 5

	l, errs := decode("p.yaml", []byte(`version: 1
flow:
  trifecta: block
  allow_flows: ["a -> b"]
tools:
  - {match: "notes:secret", labels: [sink]}
`))
	if len(errs) > 0 {
		t.Fatal(ErrorList(errs))
	}
	p := l.apply(base, "p.yaml")
	got := summarize(p)
	want := defaults
	want.Trifecta = flow.Block
	want.MinMatches = 5 // flow keys the file leaves out keep the base's
	want.AllowFlows = []string{"notes:* -> drafts:*", "a -> b"}
	want.Tools = []string{"notes:* private", "notes:secret sink"}
	want.Source = "p.yaml"
	if !equalSummary(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// The base is untouched.
	if len(base.Tools) != 1 || len(base.Flow.AllowFlows) != 1 || base.Flow.Trifecta != flow.Warn || base.Source != "preset:default" {
		t.Errorf("apply changed the base: %+v", summarize(base))
	}
	// Entries keep where they came from.
	if p.Tools[0].Source != "preset:test" || p.Tools[1].Source != "p.yaml" {
		t.Errorf("sources %q, %q", p.Tools[0].Source, p.Tools[1].Source)
	}
	labels, entry := p.ToolLabels("notes", "secret")
	if labels != flow.Private|flow.Sink || entry != &p.Tools[0] {
		t.Errorf("ToolLabels = %v, %v", labels, entry)
	}
}

// TestParseDoesNotShareState checks that changing one parsed policy does not
// change the presets or later parses.
func TestParseDoesNotShareState(t *testing.T) {
	p, err := Parse("a.yaml", []byte("version: 1\ntools: [{match: x, labels: [sink]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p.Tools[0].Labels = 0
	p.Flow.MinMatches = 99
	p.Tools = append(p.Tools, policy.ToolEntry{})
	q, err := Preset("default")
	if err != nil {
		t.Fatal(err)
	}
	q.Tools = append(q.Tools, policy.ToolEntry{})
	r, err := Parse("b.yaml", []byte(""))
	if err != nil {
		t.Fatal(err)
	}
	want := defaults
	want.Source = "b.yaml"
	if got := summarize(r); !equalSummary(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func mustGlob(t *testing.T, s string) policy.Glob {
	t.Helper()
	g, err := policy.CompileGlob(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustRule(t *testing.T, s string) policy.FlowRule {
	t.Helper()
	r, err := parseFlowRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustParse(t testing.TB, src string) *policy.Policy {
	t.Helper()
	p, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const labelsPolicy = `version: 1
tools:
  - {match: "notes:*", labels: [private]}
  - {match: "web:fetch", labels: [untrusted, sink]}
  - {match: "*send*", labels: [sink]}
  - {match: "notes:share", labels: [sink]}
  - {match: "calc:*", labels: []}
`

func TestToolLabels(t *testing.T) {
	p := mustParse(t, labelsPolicy)
	tests := []struct {
		server, tool string
		want         flow.Labels
		entry        int // index into p.Tools of the first match, -1 for none
	}{
		{"notes", "read_note", flow.Private, 0},
		{"notes", "share", flow.Private | flow.Sink, 0},          // union of two entries
		{"notes", "send_note", flow.Private | flow.Sink, 0},      // notes:* and *send*
		{"notes", "share_and_send", flow.Private | flow.Sink, 0}, // three entries, sink twice
		{"notes", "", flow.Private, 0},                           // * matches the empty name
		{"notes", "notes:share", flow.Private, 0},                // a colon inside the tool name
		{"web", "fetch", flow.Untrusted | flow.Sink, 1},
		{"web", "fetcher", 0, -1},              // web:fetch is exact
		{"web", "fetch_send", flow.Sink, 2},    // ... but *send* matches
		{"web", "web:fetch", 0, -1},            // the pattern's server is not part of the tool name
		{"mail", "send_message", flow.Sink, 2}, // no colon: any server
		{"mail", "godsend", flow.Sink, 2},
		{"mail", "SEND", 0, -1}, // case-sensitive
		{"", "send", flow.Sink, 2},
		{"calc", "add", 0, 4},            // listed with no labels
		{"calc", "", 0, 4},               //
		{"calc", "resend", flow.Sink, 2}, // first match is *send*, then calc:*
		{"other", "tool", 0, -1},         // not listed
		{"notesx", "read_note", 0, -1},   // the server part is exact
		{"NOTES", "read_note", 0, -1},    // case-sensitive
		{"x", "notes:share", 0, -1},      // server:tool in a tool name is just a name
	}
	for _, tt := range tests {
		labels, entry := p.ToolLabels(tt.server, tt.tool)
		if labels != tt.want {
			t.Errorf("ToolLabels(%q, %q) labels = %v, want %v", tt.server, tt.tool, labels, tt.want)
		}
		var want *policy.ToolEntry
		if tt.entry >= 0 {
			want = &p.Tools[tt.entry]
		}
		if entry != want {
			t.Errorf("ToolLabels(%q, %q) entry = %v, want tools[%d]", tt.server, tt.tool, entry, tt.entry)
		}
		if got := p.Listed(tt.server, tt.tool); got != (tt.entry >= 0) {
			t.Errorf("Listed(%q, %q) = %v", tt.server, tt.tool, got)
		}
	}
}

func TestListed(t *testing.T) {
	p := mustParse(t, "version: 1\ndefault_action: deny\ntools:\n  - {match: \"fs:read_*\", labels: [private]}\n  - {match: \"calc:add\", labels: []}\n")
	tests := []struct {
		server, tool string
		want         bool
	}{
		{"fs", "read_file", true},
		{"fs", "read_", true},
		{"fs", "write_file", false},
		{"calc", "add", true},
		{"calc", "sub", false},
		{"other", "read_file", false},
	}
	for _, tt := range tests {
		if got := p.Listed(tt.server, tt.tool); got != tt.want {
			t.Errorf("Listed(%q, %q) = %v, want %v", tt.server, tt.tool, got, tt.want)
		}
	}
	empty := mustParse(t, "")
	if empty.Listed("fs", "read_file") {
		t.Error("empty policy lists a tool")
	}
}

func TestFlowAllowed(t *testing.T) {
	p := mustParse(t, `version: 1
flow:
  allow_flows:
    - "notes:* -> slack:post_message"
    - "read_file->*:create_pull_request"
    - "a:x -> b:y"
`)
	tests := []struct {
		source, sink string
		want         bool
	}{
		{"notes/read_note", "slack/post_message", true},
		{"notes/search", "slack/post_message", true},
		{"notes/read_note", "slack/post_file", false},
		{"notes/read_note", "discord/post_message", false},
		{"mail/read", "slack/post_message", false},
		{"fs/read_file", "github/create_pull_request", true},
		{"other/read_file", "gitlab/create_pull_request", true},
		{"fs/read_files", "github/create_pull_request", false},
		{"a/x", "b/y", true},
		{"a/x", "a/y", false},
		{"b/y", "a/x", false},                              // direction matters
		{"read_file", "github/create_pull_request", true},  // no server: tool only
		{"notes", "slack/post_message", false},             // "notes" is a tool name
		{"notes/a/b", "slack/post_message", true},          // split at the first "/"
		{"notes/read_note", "slack/post_message/x", false}, //
		{"", "", false},        //
		{"a/x", "b/y/", false}, //
		{"fs/read_file", "github/create_pull_request", true}, //
	}
	for _, tt := range tests {
		if got := p.FlowAllowed(tt.source, tt.sink); got != tt.want {
			t.Errorf("FlowAllowed(%q, %q) = %v, want %v", tt.source, tt.sink, got, tt.want)
		}
	}
	if mustParse(t, "").FlowAllowed("notes/read_note", "slack/post_message") {
		t.Error("default preset allows a flow")
	}
}

func TestNilPolicy(t *testing.T) {
	var p *policy.Policy
	if l, e := p.ToolLabels("a", "b"); l != 0 || e != nil {
		t.Error("nil ToolLabels")
	}
	if p.Listed("a", "b") || p.FlowAllowed("a/b", "c/d") {
		t.Error("nil policy matched")
	}
}

func TestPresets(t *testing.T) {
	if got, want := PresetNames(), []string{"default", "strict", "dataflow", "integrity", "monitor"}; !slices.Equal(got, want) {
		t.Fatalf("PresetNames() = %v, want %v", got, want)
	}
	preset := func(name string, edit func(*summary)) summary {
		s := defaults
		s.Preset = name
		edit(&s)
		return s
	}
	want := map[string]summary{
		"default": defaults,
		"strict": preset("strict", func(s *summary) {
			s.Exfiltration, s.Trifecta, s.Integrity, s.TaintedArgs = flow.Block, flow.Block, flow.Warn, flow.Block
		}),
		"dataflow": preset("dataflow", func(s *summary) {
			s.Exfiltration, s.Trifecta, s.Integrity, s.TaintedArgs = flow.Block, flow.Escalate, flow.Allow, flow.Block
		}),
		"integrity": preset("integrity", func(s *summary) {
			s.Exfiltration, s.Trifecta, s.Integrity, s.TaintedArgs = flow.Block, flow.Escalate, flow.Escalate, flow.Escalate
		}),
		"monitor": preset("monitor", func(s *summary) { s.Mode = policy.Monitor }),
	}
	for _, name := range PresetNames() {
		p, err := Preset(name)
		if err != nil {
			t.Fatalf("Preset(%q): %v", name, err)
		}
		w := want[name]
		w.Source = "preset:" + name
		if got := summarize(p); !equalSummary(got, w) {
			t.Errorf("preset %s:\ngot  %+v\nwant %+v", name, got, w)
		}
		// Every key is set and explained.
		text, err := PresetText(name)
		if err != nil {
			t.Fatal(err)
		}
		l, errs := decode(name, text)
		if len(errs) > 0 {
			t.Fatal(ErrorList(errs))
		}
		if m := l.missing(); len(m) > 0 {
			t.Errorf("preset %s leaves out %v", name, m)
		}
		for _, key := range append(slices.Clone(topLevel.keys), flowLevel.keys...) {
			if !strings.Contains(string(text), key+":") {
				t.Errorf("preset %s does not show key %s", name, key)
			}
		}
		if !strings.HasPrefix(string(text), "# Weir preset \""+name+"\"") {
			t.Errorf("preset %s does not open with its title comment", name)
		}
		// A preset parsed as a user file gives the same policy (layered on
		// default, since a preset names no preset).
		q, err := Parse("x", text)
		if err != nil {
			t.Fatalf("preset %s as a file: %v", name, err)
		}
		w.Source = "x"
		w.Preset = "default"
		if got := summarize(q); !equalSummary(got, w) {
			t.Errorf("preset %s as a file:\ngot  %+v\nwant %+v", name, got, w)
		}
	}
	// Every embedded file is listed.
	files, err := fs.Glob(presetFS, "presets/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if !slices.Contains(PresetNames(), name) {
			t.Errorf("embedded preset %s is not in PresetNames", name)
		}
	}
	_, err = Preset("strikt")
	if err == nil || err.Error() != `preset: unknown preset "strikt"; want default, strict, dataflow, integrity or monitor; did you mean "strict"?` {
		t.Errorf("Preset(strikt) error = %v", err)
	}
	_, err = Preset("defualt")
	if err == nil || err.Error() != `preset: unknown preset "defualt"; want default, strict, dataflow, integrity or monitor; did you mean "default"?` {
		t.Errorf("Preset(defualt) error = %v", err)
	}
	if _, err := PresetText("nope"); err == nil {
		t.Error("PresetText(nope) succeeded")
	}
	// Preset returns a copy.
	p, _ := Preset("default")
	p.Flow.MinMatches = 9
	q, _ := Preset("default")
	if q.Flow.MinMatches != 2 {
		t.Error("Preset returned shared state")
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	emptyHome := filepath.Join(dir, "empty")
	if err := os.Mkdir(emptyHome, 0o700); err != nil {
		t.Fatal(err)
	}
	homePolicy := writeFile(t, home, "policy.yaml", "version: 1\nflow: {min_matches: 4}\n")
	flagPolicy := writeFile(t, dir, "flag.yaml", "version: 1\nmode: monitor\n")

	tests := []struct {
		name            string
		flag, home      string
		source          string
		mode            policy.Mode
		minMatches      int
		wantErrContains string
	}{
		{"flag wins over home", flagPolicy, home, flagPolicy, policy.Monitor, 2, ""},
		{"home file", "", home, homePolicy, policy.Enforce, 4, ""},
		{"no home file", "", emptyHome, "preset:default", policy.Enforce, 2, ""},
		{"no home at all", "", "", "preset:default", policy.Enforce, 2, ""},
		{"home missing dir", "", filepath.Join(dir, "nope"), "preset:default", policy.Enforce, 2, ""},
		{"flag missing", filepath.Join(dir, "missing.yaml"), home, "", 0, 0, "cannot read the policy file (no such file or directory)"},
		{"home is a file", "", flagPolicy, "", 0, 0, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Resolve(tt.flag, tt.home)
			if tt.wantErrContains != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrContains) {
					t.Fatalf("Resolve error = %v, want it to contain %q", err, tt.wantErrContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Source != tt.source || p.Mode != tt.mode || p.Flow.MinMatches != tt.minMatches {
				t.Errorf("got source %q mode %v min_matches %d", p.Source, p.Mode, p.Flow.MinMatches)
			}
		})
	}
}

func TestResolveBadHomePolicyIsAnError(t *testing.T) {
	home := t.TempDir()
	file := writeFile(t, home, "policy.yaml", "version: 1\nmode: off\n")
	_, err := Resolve("", home)
	want := file + `:2:7: mode: unknown mode "off"; want enforce or monitor`
	if err == nil || err.Error() != want {
		t.Errorf("Resolve error = %v\nwant %s", err, want)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.yaml")
	_, err := Load(missing)
	if err == nil || err.Error() != missing+": cannot read the policy file (no such file or directory); check the path and its permissions" {
		t.Errorf("Load(missing) = %v", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) error does not wrap fs.ErrNotExist: %v", err)
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.File != missing || pe.Line != 0 {
		t.Errorf("Load(missing) error is not a file-level *Error: %#v", pe)
	}

	_, err = Load(dir)
	if err == nil || err.Error() != dir+": is a directory; give the path of a policy file" {
		t.Errorf("Load(dir) = %v", err)
	}

	big := writeFile(t, dir, "big.yaml", "version: 1\n"+strings.Repeat("# padding\n", MaxFileSize/10+1))
	_, err = Load(big)
	if err == nil || err.Error() != big+": is larger than 1024 KiB; a policy is a short YAML file, check the path" {
		t.Errorf("Load(big) = %v", err)
	}

	if os.Geteuid() != 0 { // root reads anything
		unreadable := writeFile(t, dir, "secret.yaml", "version: 1\n")
		if err := os.Chmod(unreadable, 0); err != nil {
			t.Fatal(err)
		}
		_, err = Load(unreadable)
		if err == nil || !strings.Contains(err.Error(), "permission denied") || !strings.HasPrefix(err.Error(), unreadable+": ") {
			t.Errorf("Load(unreadable) = %v", err)
		}
	}

	good := writeFile(t, dir, "good.yaml", "version: 1\nmode: monitor\n")
	p, err := Load(good)
	if err != nil || p.Mode != policy.Monitor || p.Source != good {
		t.Errorf("Load(good) = %+v, %v", p, err)
	}
}

func TestErrorFormat(t *testing.T) {
	tests := []struct {
		e    Error
		want string
	}{
		{Error{File: "p.yaml", Line: 3, Column: 7, Key: "mode", Msg: "m"}, "p.yaml:3:7: mode: m"},
		{Error{File: "p.yaml", Line: 3, Key: "mode", Msg: "m"}, "p.yaml:3: mode: m"},
		{Error{File: "p.yaml", Line: 3, Msg: "m"}, "p.yaml:3: m"},
		{Error{File: "p.yaml", Msg: "m"}, "p.yaml: m"},
		{Error{Line: 3, Column: 7, Key: "mode", Msg: "m"}, "3:7: mode: m"},
		{Error{Key: "preset", Msg: "m"}, "preset: m"},
		{Error{Msg: "m"}, "m"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}

func TestErrorListUnwraps(t *testing.T) {
	_, err := Parse("p.yaml", []byte("version: 2\nmode: x\n"))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("error %v is not an ErrorList of 2", err)
	}
	var first *Error
	if !errors.As(err, &first) || first.Key != "version" {
		t.Errorf("errors.As found %v", first)
	}
	if u, ok := err.(interface{ Unwrap() []error }); !ok || len(u.Unwrap()) != 2 {
		t.Error("no Unwrap() []error")
	}
	if err.Error() != "p.yaml:1:10: version: version 2 is not supported; this Weir reads version 1\n"+
		`p.yaml:2:7: mode: unknown mode "x"; want enforce or monitor` {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestErrorsAreSorted(t *testing.T) {
	// Tools are checked after flow in code, but errors come out by line.
	_, err := Parse("p.yaml", []byte("tools: 3\nflow: 3\nmode: 3\nversion: 3\n"))
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatal(err)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].Line > list[i].Line {
			t.Fatalf("not sorted:\n%v", err)
		}
	}
	if len(list) != 4 {
		t.Errorf("want 4 errors, got:\n%v", err)
	}
}

func TestTooManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\ntools:\n")
	for range 500 {
		b.WriteString("  - {match: x, labels: [nope]}\n")
	}
	_, err := Parse("p.yaml", []byte(b.String()))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != maxErrors {
		t.Errorf("got %d errors, want %d", len(list), maxErrors)
	}
}

func TestSuggest(t *testing.T) {
	keys := topLevel.keys
	tests := []struct{ in, want string }{
		{"mdoe", "mode"},
		{"Mode", "mode"},
		{"defualt_action", "default_action"},
		{"default-action", "default_action"},
		{"defaultaction", "default_action"},
		{"version", "version"},
		{"verison", "version"},
		{"tool", "tools"},
		{"flows", "flow"},
		{"foo", ""},
		{"x", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, keys); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if d := editDistance("ab", "ba"); d != 1 {
		t.Errorf("editDistance(ab, ba) = %d, want 1", d)
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

func TestEnumStrings(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{policy.Enforce.String(), "enforce"},
		{policy.Monitor.String(), "monitor"},
		{policy.Mode(7).String(), "mode(7)"},
		{policy.DefaultAllow.String(), "allow"},
		{policy.DefaultDeny.String(), "deny"},
		{policy.DefaultAction(7).String(), "default_action(7)"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestNonTextInput(t *testing.T) {
	tests := []struct{ data, want string }{
		{"version: 1\nmode: \x01\n", "p.yaml:2:7: invalid YAML: control characters are not allowed; save the file as UTF-8 text"},
		{"version: 1\nmode: \"\xff\"\n", "p.yaml:2:8: invalid YAML: invalid leading UTF-8 octet; save the file as UTF-8 text"},
		{"version: 1\nmode: \"\x00\"\n", "p.yaml:2:8: invalid YAML: control characters are not allowed; save the file as UTF-8 text"},
	}
	for _, tt := range tests {
		_, err := Parse("p.yaml", []byte(tt.data))
		if err == nil {
			t.Errorf("Parse(%q) succeeded", tt.data)
			continue
		}
		checkErrors(t, "p.yaml", err)
		if err.Error() != tt.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tt.data, err, tt.want)
		}
	}
}

// TestValidPolicies parses every policy in testdata/valid.txtar (which the
// schema tests also check).
func TestValidPolicies(t *testing.T) {
	a, err := parseArchiveFile("testdata/valid.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Files) < 5 {
		t.Fatalf("only %d valid policies", len(a.Files))
	}
	for _, f := range a.Files {
		if _, err := Parse(f.Name, f.Data); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
	}
}

func TestScratchSettings(t *testing.T) {
	p, err := Parse("p.yaml", []byte("version: 1\nscratch:\n  tools: [\"github:list_*\", read_dir]\n  min_rows: 5\n  max_payload_bytes: 2MiB\n  max_session_bytes: 64MB\n  max_session_calls: 9\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Scratch
	if s.MinRows != 5 || s.MaxPayloadBytes != 2<<20 || s.MaxSessionBytes != 64_000_000 || s.MaxSessionCalls != 9 {
		t.Errorf("bounds read as %+v", s)
	}
	for _, c := range []struct {
		server, tool string
		want         bool
	}{
		{"github", "list_issues", true}, {"github", "get_issue", false}, {"files", "read_dir", true}, {"files", "read_file", false},
	} {
		if got := s.Stores(c.server, c.tool); got != c.want {
			t.Errorf("Stores(%s, %s) = %v, want %v", c.server, c.tool, got, c.want)
		}
	}
	for _, name := range PresetNames() {
		q, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Scratch.Tools) != 0 {
			t.Errorf("preset %s stores results of %v; scratch is off in every preset", name, q.Scratch.Tools)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1 << 10: "1KiB", 1536 << 10: "1536KiB", 64 << 20: "64MiB", 4 << 30: "4GiB"} {
		got := FormatSize(n)
		if got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := ParseSize(got); err != nil || back != n {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", got, back, err, n)
		}
	}
}

func TestStateRetention(t *testing.T) {
	p, err := Parse("p.yaml", []byte("version: 1\nstate: {retention_days: 7}\n"))
	if err != nil || p.StateRetentionDays != 7 {
		t.Fatalf("state.retention_days read as %v (%v)", p, err)
	}
	for _, name := range PresetNames() {
		if q, err := Preset(name); err != nil || q.StateRetentionDays != 30 {
			t.Errorf("preset %s keeps state %d days (%v), want 30", name, q.StateRetentionDays, err)
		}
	}
}
