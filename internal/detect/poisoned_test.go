package detect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The poisoned corpus: testdata/poisoned/*.json are tool definitions and
// catalogues written for this project, one attack each. Every one must
// yield a High finding (quarantine) from the detector named in "expect",
// and a finding of at least Medium from each detector in "also".
//
// File shape:
//
//	{"class": "direct", "expect": "instruction-markup", "also": [...],
//	 "note": "what the attack is",
//	 "others": {"mail": ["send_email"]},      // other servers' tools
//	 "tool": {Tool} | "catalogue": {Catalogue}, "key": ""  // catalogue key to check
//	 "padDescription": N, "padSchema": N}     // grow the definition to N bytes

type poisonCase struct {
	file     string
	Class    string              `json:"class"`
	Expect   string              `json:"expect"`
	Also     []string            `json:"also"`
	Note     string              `json:"note"`
	Others   map[string][]string `json:"others"`
	Tool     *poisonTool         `json:"tool"`
	Cat      *poisonCatalogue    `json:"catalogue"`
	Key      string              `json:"key"`
	PadDesc  int                 `json:"padDescription"`
	PadSchem int                 `json:"padSchema"`
}

type poisonTool struct {
	Server       string          `json:"server"`
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
}

func (p poisonTool) tool() Tool { return Tool(p) }

type poisonCatalogue struct {
	Server       string        `json:"server"`
	Instructions string        `json:"instructions"`
	Tools        []poisonTool  `json:"tools"`
	Prompts      []benignNamed `json:"prompts"`
	Resources    []benignNamed `json:"resources"`
}

// poisonClasses are the attack classes the corpus must cover.
var poisonClasses = []string{"direct", "shadowing", "hidden-unicode", "fake-system-tags", "sensitive-paths",
	"secret-requests", "ansi-escapes", "homoglyphs", "oversized"}

func loadPoisoned(t *testing.T) []poisonCase {
	t.Helper()
	files, err := filepath.Glob("testdata/poisoned/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var out []poisonCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c poisonCase
		if err := json.Unmarshal(data, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.file = filepath.Base(f)
		if (c.Tool == nil) == (c.Cat == nil) {
			t.Fatalf("%s: want exactly one of tool and catalogue", f)
		}
		out = append(out, c)
	}
	return out
}

// findings scans a case and returns the findings to check.
func (c poisonCase) findings() []Finding {
	if c.Tool != nil {
		tl := c.Tool.tool()
		if c.PadDesc > 0 {
			tl.Description = padText(tl.Description, c.PadDesc)
		}
		if c.PadSchem > 0 {
			tl.InputSchema = padSchema(c.PadSchem)
		}
		return ScanTool(tl, c.Others)
	}
	cat := Catalogue{Server: c.Cat.Server, Instructions: c.Cat.Instructions}
	for _, p := range c.Cat.Tools {
		tl := p.tool()
		tl.Server = c.Cat.Server
		cat.Tools = append(cat.Tools, tl)
	}
	for _, p := range c.Cat.Prompts {
		cat.Prompts = append(cat.Prompts, NamedText(p))
	}
	for _, r := range c.Cat.Resources {
		cat.Resources = append(cat.Resources, NamedText(r))
	}
	return ScanCatalogue(cat, c.Others)[c.Key]
}

// padText grows s to n bytes with plain, harmless prose.
func padText(s string, n int) string {
	const filler = "This tool is reliable and well tested. "
	var b strings.Builder
	b.WriteString(s)
	for b.Len() < n {
		b.WriteString(filler)
	}
	return b.String()
}

// padSchema builds an input schema of about n bytes of harmless enum values.
func padSchema(n int) json.RawMessage {
	var vals []string
	size := 0
	for i := 0; size < n; i++ {
		v := "option-" + itoa(i)
		vals = append(vals, v)
		size += len(v) + 3
	}
	raw, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"mode": map[string]any{"type": "string", "enum": vals}}})
	return raw
}

func checkPoisonClass(t *testing.T, class string) {
	cases := loadPoisoned(t)
	n := 0
	for _, c := range cases {
		if c.Class != class {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			fs := c.findings()
			if !hasFinding(fs, c.Expect, High) {
				t.Errorf("%s (%s): want a High %s finding; got:\n%s", c.file, c.Note, c.Expect, describe(fs))
			}
			for _, d := range c.Also {
				if !hasFinding(fs, d, Medium) {
					t.Errorf("%s: want a %s finding of at least Medium; got:\n%s", c.file, d, describe(fs))
				}
			}
		})
	}
	if n == 0 {
		t.Fatalf("no poisoned definitions of class %q", class)
	}
}

func hasFinding(fs []Finding, det string, min Severity) bool {
	for _, f := range fs {
		if f.Detector == det && f.Severity >= min {
			return true
		}
	}
	return false
}

func describe(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\t" + f.Severity.String() + " " + f.Detector + " " + f.Field + " " + f.Evidence + "\n")
	}
	if len(fs) == 0 {
		b.WriteString("\t(none)\n")
	}
	return b.String()
}

func TestPoisonedCorpusShape(t *testing.T) {
	cases := loadPoisoned(t)
	if len(cases) < 24 {
		t.Fatalf("want at least 24 poisoned definitions, have %d", len(cases))
	}
	known := map[string]bool{}
	for _, c := range poisonClasses {
		known[c] = true
	}
	count := map[string]int{}
	for _, c := range cases {
		if !known[c.Class] {
			t.Errorf("%s: unknown class %q", c.file, c.Class)
		}
		count[c.Class]++
	}
	classes := make([]string, 0, len(count))
	for c := range count {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, c := range classes {
		t.Logf("%-18s %d", c, count[c])
	}
}

func TestPoisonedDirect(t *testing.T)         { checkPoisonClass(t, "direct") }
func TestPoisonedShadowing(t *testing.T)      { checkPoisonClass(t, "shadowing") }
func TestPoisonedHiddenUnicode(t *testing.T)  { checkPoisonClass(t, "hidden-unicode") }
func TestPoisonedFakeSystemTags(t *testing.T) { checkPoisonClass(t, "fake-system-tags") }
func TestPoisonedSensitivePaths(t *testing.T) { checkPoisonClass(t, "sensitive-paths") }
func TestPoisonedSecretRequests(t *testing.T) { checkPoisonClass(t, "secret-requests") }
func TestPoisonedANSI(t *testing.T)           { checkPoisonClass(t, "ansi-escapes") }
func TestPoisonedHomoglyphs(t *testing.T)     { checkPoisonClass(t, "homoglyphs") }
func TestPoisonedOversized(t *testing.T)      { checkPoisonClass(t, "oversized") }
