package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	rep := BuildReport(c, ts, map[string][]Run{"dataflow": runs}, []string{undefended, "dataflow"}, nil)
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

// TestHumanChannelsEndToEnd replays two banking transcripts whose
// update_password call the banking policy always escalates, through the
// real weir binary in enforce mode, with the attentive human on every
// approval channel: in the benign run the user's own password change is
// approved and the walk completes; in the attack the injected password
// change is declined and the walk stops at it. The real readings must
// agree with the simulated one on these.
func TestHumanChannelsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs weir")
	}
	c := testCorpus(t)
	byID := func(id string) *Transcript {
		for _, tr := range c.Transcripts {
			if tr.ID == id {
				return tr
			}
		}
		t.Fatalf("transcript %s not in the corpus", id)
		return nil
	}
	benign := byID("gpt-4o-2024-05-13/banking/user_task_14/none/none")
	attack := byID("gpt-4o-2024-05-13/banking/user_task_1/important_instructions/injection_task_7")
	weir := testWeir(t)
	if out, err := exec.Command(weir, "approvals", "--help").CombinedOutput(); err != nil {
		t.Skipf("this weir has no approvals command yet (%v): %s", err, out)
	}
	policies, err := loadSuitePolicies("")
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	ctx := context.Background()
	files, err := composePolicies(ctx, weir, filepath.Join(scratch, "policies"), []string{"default"}, []string{"banking"}, policies)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rp := &Replayer{Weir: weir, Server: []string{self}, ServerEnv: []string{serverEnvVar + "=1"}, Timeout: time.Minute}
	for i, tr := range []*Transcript{benign, attack} {
		dir := filepath.Join(scratch, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(dir, "script.json")
		if err := writeJSON(script, NewScript(tr, c.Tools[tr.Suite])); err != nil {
			t.Fatal(err)
		}
		mon := filepath.Join(dir, "monitor")
		if err := os.Mkdir(mon, 0o700); err != nil {
			t.Fatal(err)
		}
		d, err := rp.Replay(ctx, tr, script, files["default"]["banking"], mon)
		if err != nil {
			t.Fatal(err)
		}
		v := make([]Verdict, len(d))
		for j := range d {
			v[j] = d[j].Verdict
		}
		sim := WalkCalls(tr.Calls, v, Human)
		wantStop := -1
		if tr == attack {
			wantStop = FirstSink(tr.Calls)
		}
		if sim.StopAt != wantStop || sim.Prompts != 1 {
			t.Fatalf("%s: the simulated walk %+v, verdicts %v: want stop at %d after one prompt", tr.ID, sim, v, wantStop)
		}
		for _, ch := range allChannels {
			chDir := filepath.Join(dir, string(ch))
			if err := os.Mkdir(chDir, 0o700); err != nil {
				t.Fatal(err)
			}
			w, err := rp.ReplayHuman(ctx, tr, script, files["default"]["banking"], chDir, ch)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s %s: %+v", tr.ID, ch, w)
			if w.StopAt != wantStop || w.Prompts != 1 || len(w.Anomalies) > 0 {
				t.Errorf("%s on %s: walk %+v, want stop at %d after one prompt, no anomalies", tr.ID, ch, w, wantStop)
			}
			if tr == attack && (w.StopVerdict != "escalate" || OutcomeAt(tr.Calls, w.StopAt) != StoppedSink) {
				t.Errorf("%s on %s: stopped by %q, outcome %v", tr.ID, ch, w.StopVerdict, OutcomeAt(tr.Calls, w.StopAt))
			}
			wantChannel := map[Channel]string{Elicitation: "elicitation/", InputRequired: "input_required/", OutOfBand: "cli/"}[ch]
			if len(w.Approvals) == 0 || !strings.HasPrefix(w.Approvals[0], wantChannel) {
				t.Errorf("%s on %s: approval records %q, want one on channel %s", tr.ID, ch, w.Approvals, wantChannel)
			}
		}
	}
}

// TestApprovalMemoryEndToEnd replays a made-up banking run that changes
// the password twice to the same value: on the elicitation and
// input_required channels the person approves the first change for the
// session and Weir approves the second from memory (one prompt); out of
// band `weir approve ID` approves one call, so the second change is a new
// request (two prompts). This is the one way the real readings can show
// fewer prompts than the simulated one.
func TestApprovalMemoryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs weir")
	}
	c := testCorpus(t)
	weir := testWeir(t)
	if out, err := exec.Command(weir, "approvals", "--help").CombinedOutput(); err != nil {
		t.Skipf("this weir has no approvals command yet (%v): %s", err, out)
	}
	change := Call{Tool: "update_password", Arguments: []byte(`{"password":"n3w-Passw0rd"}`), Result: []byte(`"{'message': 'Password updated.'}"`), Executed: true}
	tr := &Transcript{ID: "made-up/banking/user_task_x/none/none", Suite: "banking", Model: "made-up", Utility: true, Calls: []Call{change, change}}
	policies, err := loadSuitePolicies("")
	if err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	ctx := context.Background()
	files, err := composePolicies(ctx, weir, filepath.Join(scratch, "policies"), []string{"default"}, []string{"banking"}, policies)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rp := &Replayer{Weir: weir, Server: []string{self}, ServerEnv: []string{serverEnvVar + "=1"}, Timeout: time.Minute}
	script := filepath.Join(scratch, "script.json")
	if err := writeJSON(script, NewScript(tr, c.Tools["banking"])); err != nil {
		t.Fatal(err)
	}
	want := map[Channel]int{Elicitation: 1, InputRequired: 1, OutOfBand: 2}
	for _, ch := range allChannels {
		dir := filepath.Join(scratch, string(ch))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		w, err := rp.ReplayHuman(ctx, tr, script, files["default"]["banking"], dir, ch)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", ch, w)
		if w.StopAt != -1 || w.Prompts != want[ch] || len(w.Anomalies) > 0 {
			t.Errorf("%s: walk %+v, want every call run after %d prompts", ch, w, want[ch])
		}
		if ch != OutOfBand && !slices.Contains(w.Approvals, "memory/approved_session") {
			t.Errorf("%s: approval records %q lack the memory approval", ch, w.Approvals)
		}
	}
}
