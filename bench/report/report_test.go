package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGolden renders the fixture results in testdata/results (trimmed
// copies of real results files, one agentdojo file from before
// bench/agentdojo recorded per-class passed/ended_earlier counts, and a
// -partial file the report must leave out) and compares RESULTS.md and the
// README block with the golden files. go test ./bench/report -update
// rewrites them after a reviewed change.
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	out, readme := filepath.Join(dir, "RESULTS.md"), filepath.Join(dir, "README.md")
	in, err := os.ReadFile("testdata/README.in.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readme, in, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run("testdata/results", out, readme); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct{ got, golden string }{{out, "testdata/RESULTS.golden.md"}, {readme, "testdata/README.golden.md"}} {
		got, err := os.ReadFile(g.got)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile(g.golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(g.golden)
		if err != nil {
			t.Fatalf("%v (run go test ./bench/report -update)", err)
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from %s (go test ./bench/report -update rewrites it after review):\n%s", filepath.Base(g.got), g.golden, diff(string(want), string(got)))
		}
	}
}

// TestEveryFigureTraces checks that the report only quotes numbers it read:
// rendering the same fixtures twice gives the same page, and rendering
// with no results files yields no figures at all, only the commands to
// run.
func TestEveryFigureTraces(t *testing.T) {
	in, err := load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	page := Results(in) + Headline(in)
	for _, want := range []string{"go run ./bench/agentdojo", "go run ./bench/overhead", "go run ./bench/core"} {
		if !strings.Contains(page, want) {
			t.Errorf("empty report does not say to run %s", want)
		}
	}
	for _, unit := range []string{"%", "µs", "MB/s", "calls/s"} {
		if strings.Contains(page, unit) {
			t.Errorf("empty report shows a figure in %s", unit)
		}
	}
}

// TestAgentdojoBeforeRealHuman renders the fixture as files written
// before bench/agentdojo replayed the attentive human for real (no
// real_human anywhere): the tables keep their old columns, and nothing
// mentions the real readings.
func TestAgentdojoBeforeRealHuman(t *testing.T) {
	data, err := os.ReadFile("testdata/results/agentdojo-fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			for _, k := range []string{"real_human", "stop_rate_real_human", "human_channels", "human_replays"} {
				delete(x, k)
			}
			for _, y := range x {
				strip(y)
			}
		case []any:
			for _, y := range x {
				strip(y)
			}
		}
	}
	strip(v)
	dir := t.TempDir()
	old, _ := json.Marshal(v)
	if err := os.WriteFile(filepath.Join(dir, "agentdojo-old.json"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := load(dir)
	if err != nil {
		t.Fatal(err)
	}
	page := Results(in) + Headline(in)
	for _, absent := range []string{"real human", "a person asked", "simulated", "elicitation"} {
		if strings.Contains(strings.ToLower(page), absent) {
			t.Errorf("an old file's report mentions %q", absent)
		}
	}
	if !strings.Contains(page, "| preset | attacks stopped, no human | attacks stopped, attentive human | benign runs stopped, no human |") {
		t.Error("the old headline table is gone")
	}
}

func TestSpliceNeedsOneBlock(t *testing.T) {
	for _, doc := range []string{"no markers", readmeEnd + readmeStart, readmeStart + readmeEnd + readmeStart + readmeEnd} {
		if _, err := splice(doc, "x\n"); err == nil {
			t.Errorf("splice(%q) succeeded", doc)
		}
	}
	got, err := splice("a\n"+readmeStart+"\nold\n"+readmeEnd+"\nb\n", "new\n")
	if err != nil || got != "a\n"+readmeStart+"\nnew\n"+readmeEnd+"\nb\n" {
		t.Errorf("splice = %q, %v", got, err)
	}
}

// diff shows the first differing lines.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n- " + a + "\n+ " + b
		}
	}
	return "(only trailing differences)"
}
