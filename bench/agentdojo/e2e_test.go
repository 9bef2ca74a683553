package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the replay server: the end-to-end test
// runs it behind weir with serverEnvVar set and the script as the last
// argument.
func TestMain(m *testing.M) {
	if os.Getenv(serverEnvVar) == "1" {
		if err := replayServer(os.Args[len(os.Args)-1]); err != nil {
			fmt.Fprintln(os.Stderr, "replay server:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testCorpus finds the corpus next to the repository, or skips.
func testCorpus(t *testing.T) *Corpus {
	t.Helper()
	root := moduleRoot()
	dir := defaultCorpus(root)
	if _, err := os.Stat(filepath.Join(dir, "tools.json")); err != nil {
		t.Skipf("AgentDojo corpus not found at %s (CI has it in ../shared): %v", dir, err)
	}
	c, err := LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testWeir builds weir once per test run, or takes WEIR_BENCH_WEIR.
func testWeir(t *testing.T) string {
	t.Helper()
	if w := os.Getenv("WEIR_BENCH_WEIR"); w != "" {
		return w
	}
	out := filepath.Join(t.TempDir(), "weir")
	if err := buildWeir(context.Background(), moduleRoot(), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplayEndToEnd replays three real transcripts (a benign run, an
// attack on banking, an attack on slack) through the real weir binary
// under the dataflow preset and checks the replay is exact and every call
// got a verdict.
func TestReplayEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs weir")
	}
	c := testCorpus(t)
	pick := func(want func(*Transcript) bool) *Transcript {
		for _, tr := range c.Transcripts {
			if want(tr) {
				return tr
			}
		}
		t.Fatal("no transcript of the kind wanted")
		return nil
	}
	ts := []*Transcript{
		pick(func(tr *Transcript) bool { return !tr.IsAttack() && tr.Utility && len(tr.Calls) >= 2 }),
		pick(func(tr *Transcript) bool { return tr.ScorableAttack && tr.Suite == "banking" }),
		pick(func(tr *Transcript) bool { return tr.ScorableAttack && tr.Suite == "slack" && len(tr.Calls) >= 3 }),
	}
	weir := testWeir(t)
	policies, err := loadSuitePolicies("")
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	ctx := context.Background()
	files, err := composePolicies(ctx, weir, filepath.Join(scratch, "policies"), []string{"dataflow"}, usedSuites(ts), policies)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rp := &Replayer{Weir: weir, Server: []string{self}, ServerEnv: []string{serverEnvVar + "=1"}, Timeout: time.Minute}
	var runs []Run
	for i, tr := range ts {
		dir := filepath.Join(scratch, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "script.json")
		if err := writeJSON(script, NewScript(tr, c.Tools[tr.Suite])); err != nil {
			t.Fatal(err)
		}
		d, err := rp.Replay(ctx, tr, script, files["dataflow"][tr.Suite], dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(d) != len(tr.Calls) {
			t.Fatalf("%s: %d verdicts for %d calls", tr.ID, len(d), len(tr.Calls))
		}
		for j, x := range d {
			t.Logf("%s call %d %s: %s %s", tr.ID, j+1, tr.Calls[j].Tool, x.Verdict, x.Rule)
		}
		runs = append(runs, Run{Decisions: d})
	}
	rep := BuildReport(c, ts, map[string][]Run{"dataflow": runs}, []string{undefended, "dataflow"})
	if got := rep.Presets[0].Overall.Attacks.NoHuman; got.N != 2 || got.Passed != 2 {
		t.Errorf("undefended: %+v", got)
	}
}

// TestReplayMismatch checks that the replay server fails loudly when a
// call is not the recorded one.
func TestReplayMismatch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs weir")
	}
	weir := testWeir(t)
	tr := &Transcript{ID: "m/s/u/none/none", Suite: "s", Calls: []Call{{Tool: "get_x", Result: []byte(`"x"`), Executed: true}}}
	tools := []Tool{{Suite: "s", Name: "get_x", InputSchema: []byte(`{"type":"object","properties":{}}`)}}
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	s := NewScript(tr, tools)
	s.Calls[0].Tool = "get_y" // the server expects another tool
	if err := writeJSON(script, s); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pol, []byte("version: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	rp := &Replayer{Weir: weir, Server: []string{self}, ServerEnv: []string{serverEnvVar + "=1"}, Timeout: time.Minute}
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := rp.Replay(context.Background(), tr, script, pol, run)
	if err == nil {
		t.Fatal("a mismatched call replayed without an error")
	}
	if !strings.Contains(err.Error(), "replay mismatch") {
		t.Errorf("the error does not say it is a replay mismatch: %v", err)
	}
}
