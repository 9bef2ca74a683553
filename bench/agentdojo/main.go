// Command agentdojo replays the real agent transcripts of an AgentDojo
// corpus through the real `weir` binary and scores Weir as the corpus
// README says: the share of hijacked runs whose harmful call Weir stops
// (stop rate), and the share of benign runs and calls it stops (false
// positives), per suite, model and preset, with no human and with an
// attentive human answering escalations.
//
//	go run ./bench/agentdojo                              # everything, results in bench/results/
//	go run ./bench/agentdojo --presets dataflow --limit 40
//	go run ./bench/agentdojo --corpus DIR --out FILE      # another corpus in the same format
//
// Each transcript runs, once per preset, as `weir run --monitor --name
// SUITE --policy P -- agentdojo replay-server SCRIPT` in a fresh
// WEIR_HOME: a replay MCP server serves the suite's tools and answers the
// n-th call with its recorded result; a client issues the recorded calls
// in order; the verdicts are read from the audit log. Monitor mode decides
// exactly what enforce mode would but lets every call run, so the session
// Weir sees at each call is the one the recorded agent had.
//
// The attentive human is then measured for real: each scored transcript
// runs again per preset and approval channel (elicitation, input_required,
// out_of_band) through `weir run` in enforce mode, and the client answers
// Weir's approval requests as the person would. See README.md.
package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

//go:embed policies/*.yaml
var policyFS embed.FS

// Presets scored by default, and the name of the no-gateway baseline.
var allPresets = []string{"default", "strict", "dataflow", "integrity"}

const undefended = "undefended"

// serverEnvVar, when set, makes this program (or its test binary) the
// replay server for the script it names.
const serverEnvVar = "WEIR_BENCH_REPLAY_SCRIPT"

type options struct {
	corpus   string
	presets  []string
	suites   []string
	models   []string
	limit    int
	out      string
	weir     string
	policies string
	jobs     int
	tmp      string
	timeout  time.Duration
	quiet    bool
	verdicts string
	channels []Channel
	humanAll bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "replay-server" {
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: agentdojo replay-server SCRIPT")
			os.Exit(2)
		}
		if err := replayServer(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "agentdojo replay-server:", err)
			os.Exit(3)
		}
		return
	}
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "agentdojo:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, o, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "agentdojo:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (*options, error) {
	fl := flag.NewFlagSet("agentdojo", flag.ContinueOnError)
	o := &options{}
	var presets, suites, models, channels string
	fl.StringVar(&o.corpus, "corpus", "", "corpus folder (default ../shared/corpora/agentdojo from the repository root)")
	fl.StringVar(&presets, "presets", strings.Join(allPresets, ","), "Weir presets to score, comma-separated (the undefended baseline is always scored)")
	fl.StringVar(&suites, "suites", "", "only these suites, comma-separated")
	fl.StringVar(&models, "models", "", "only these models, comma-separated")
	fl.IntVar(&o.limit, "limit", 0, "replay at most N transcripts (spread over suites and models), for quick runs")
	fl.StringVar(&o.out, "out", "", "results file (default bench/results/agentdojo-CORPUS.json; -partial before .json when filtered)")
	fl.StringVar(&o.weir, "weir", "", "prebuilt weir binary (default: go build ./cmd/weir into a temporary folder)")
	fl.StringVar(&o.policies, "policies", "", "folder of SUITE.yaml label policies (default: the ones built into this program, from bench/agentdojo/policies)")
	fl.IntVar(&o.jobs, "j", runtime.NumCPU(), "transcripts replayed at once")
	fl.StringVar(&o.tmp, "tmp", "", "scratch folder for WEIR_HOMEs (default /dev/shm when usable, else the system temp folder)")
	fl.DurationVar(&o.timeout, "timeout", 60*time.Second, "time limit for one replay")
	fl.BoolVar(&o.quiet, "q", false, "no progress bar")
	fl.StringVar(&o.verdicts, "verdicts", "", "also write every call's verdict, rule and reason, one transcript and preset per line, to this JSONL file")
	fl.BoolVar(&o.humanAll, "human-all", false, "replay every scored transcript on the approval channels, also those in which Weir escalated no call (their walks are otherwise the no-human walk of the monitor-mode verdicts, marked inferred)")
	fl.StringVar(&channels, "channels", joinChannels(allChannels), "approval channels on which an attentive human answers Weir for real, in enforce mode, comma-separated; none: only the monitor-mode replay")
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "usage: go run ./bench/agentdojo [flags]\n\nReplays AgentDojo transcripts through weir run and scores stop rate and false positives.\n\n")
		fl.PrintDefaults()
	}
	err := fl.Parse(args)
	if err != nil {
		return nil, err
	}
	if fl.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fl.Arg(0))
	}
	o.presets = splitList(presets)
	o.suites = splitList(suites)
	o.models = splitList(models)
	if o.channels, err = parseChannels(channels); err != nil {
		return nil, err
	}
	for _, p := range o.presets {
		if p == undefended {
			return nil, fmt.Errorf("--presets: the undefended baseline is always scored; list only Weir presets")
		}
	}
	if o.jobs < 1 {
		o.jobs = 1
	}
	return o, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// moduleRoot is the folder holding go.mod above the working directory, ""
// if none.
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func defaultCorpus(root string) string {
	if root == "" {
		return filepath.Join("..", "shared", "corpora", "agentdojo")
	}
	return filepath.Join(root, "..", "shared", "corpora", "agentdojo")
}

// corpusName names a corpus folder in the results file name.
func corpusName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return filepath.Base(abs)
}

func resultsPath(root, corpus string, partial bool) string {
	name := "agentdojo-" + corpusName(corpus)
	if partial {
		name += "-partial"
	}
	return filepath.Join(root, "bench", "results", name+".json")
}

func run(ctx context.Context, o *options, argv []string) error {
	start := time.Now()
	root := moduleRoot()
	if o.corpus == "" {
		o.corpus = defaultCorpus(root)
	}
	corpus, err := LoadCorpus(o.corpus)
	if err != nil {
		return err
	}
	selected := Select(corpus.Transcripts, o.suites, o.models, o.limit)
	if len(selected) == 0 {
		return fmt.Errorf("no transcripts in %s match --suites %v --models %v", o.corpus, o.suites, o.models)
	}
	scratch, err := scratchDir(o.tmp)
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)

	weir := o.weir
	if weir == "" {
		if root == "" {
			return fmt.Errorf("not inside the weir module; give a prebuilt binary with --weir")
		}
		weir = filepath.Join(scratch, "weir")
		if err := buildWeir(ctx, root, weir); err != nil {
			return err
		}
	}
	if weir, err = filepath.Abs(weir); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	suitePolicies, err := loadSuitePolicies(o.policies)
	if err != nil {
		return err
	}
	suites := usedSuites(selected)
	policyFiles, err := composePolicies(ctx, weir, filepath.Join(scratch, "policies"), o.presets, suites, suitePolicies)
	if err != nil {
		return err
	}
	rp := &Replayer{Weir: weir, Server: []string{self, "replay-server"}, Timeout: o.timeout}
	results, humanRuns, elapsed, err := replayAll(ctx, rp, corpus, selected, o, policyFiles, scratch)
	if err != nil {
		return err
	}
	rep := BuildReport(corpus, selected, results, append([]string{undefended}, o.presets...), o.channels)
	rep.Meta = describeRun(root, o, argv, weir, len(selected), humanRuns, elapsed, time.Since(start))
	rep.Meta.Policies = policyMeta(suites, suitePolicies, o.policies)

	partial := o.limit > 0 || len(o.suites) > 0 || len(o.models) > 0 || !slices.Equal(o.presets, allPresets) || !slices.Equal(o.channels, allChannels)
	out := o.out
	if out == "" {
		if root == "" {
			root = "."
		}
		out = resultsPath(root, o.corpus, partial)
	}
	if err := rep.Write(out); err != nil {
		return err
	}
	if o.verdicts != "" {
		if err := writeVerdicts(o.verdicts, selected, o.presets, results); err != nil {
			return err
		}
	}
	rep.Summary(os.Stdout)
	fmt.Printf("\nwrote %s (%d transcripts × %d presets, and %d replays with a human on %d channels, in %s, %d jobs)\n",
		out, len(selected), len(o.presets), rep.Meta.HumanReplays, len(o.channels), elapsed.Round(time.Second), o.jobs)
	return nil
}

func joinChannels(chs []Channel) string {
	var s []string
	for _, c := range chs {
		s = append(s, string(c))
	}
	return strings.Join(s, ",")
}

// humanWalks is the number of walks with a human: one per scored
// transcript, preset and channel.
func humanWalks(ts []*Transcript, o *options) int {
	n := 0
	for _, t := range ts {
		if needsHuman(t) {
			n++
		}
	}
	return n * len(o.presets) * len(o.channels)
}

// Select filters transcripts by suite and model, and with limit > 0 keeps
// that many, taken round-robin over (suite, model) groups so a quick run
// still sees every group.
func Select(ts []*Transcript, suites, models []string, limit int) []*Transcript {
	var out []*Transcript
	for _, t := range ts {
		if len(suites) > 0 && !slices.Contains(suites, t.Suite) {
			continue
		}
		if len(models) > 0 && !slices.Contains(models, t.Model) {
			continue
		}
		out = append(out, t)
	}
	if limit <= 0 || limit >= len(out) {
		return out
	}
	groups := map[string][]*Transcript{}
	var keys []string
	for _, t := range out {
		k := t.Suite + "/" + t.Model
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], t)
	}
	slices.Sort(keys)
	// Share the limit out round-robin, then take evenly spaced transcripts
	// of each group (attack and no-attack runs alternate in file order).
	quota := make([]int, len(keys))
	for n := 0; n < limit; {
		for i, k := range keys {
			if n < limit && quota[i] < len(groups[k]) {
				quota[i]++
				n++
			}
		}
	}
	var picked []*Transcript
	for i, k := range keys {
		g, q := groups[k], quota[i]
		for j := 0; j < q; j++ {
			picked = append(picked, g[(2*j+1)*len(g)/(2*q)])
		}
	}
	return picked
}

func usedSuites(ts []*Transcript) []string {
	var out []string
	for _, t := range ts {
		if !slices.Contains(out, t.Suite) {
			out = append(out, t.Suite)
		}
	}
	slices.Sort(out)
	return out
}

// scratchDir makes the scratch folder, on a RAM disk when there is one:
// every replay creates a SQLite store and an audit log.
func scratchDir(base string) (string, error) {
	if base == "" {
		if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
			if d, err := os.MkdirTemp("/dev/shm", "weir-agentdojo-"); err == nil {
				return d, nil
			}
		}
	}
	return os.MkdirTemp(base, "weir-agentdojo-")
}

func buildWeir(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/weir")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/weir: %w\n%s", err, b)
	}
	return nil
}

// loadSuitePolicies reads SUITE.yaml label policies from dir, or the
// built-in ones when dir is "".
func loadSuitePolicies(dir string) (map[string][]byte, error) {
	var fsys fs.FS = policyFS
	pattern := "policies/*.yaml"
	if dir != "" {
		fsys, pattern = os.DirFS(dir), "*.yaml"
	}
	files, err := fs.Glob(fsys, pattern)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		if err := checkSuitePolicy(f, data); err != nil {
			return nil, err
		}
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = data
	}
	return out, nil
}

// checkSuitePolicy refuses a label policy that sets preset: or flow:: the
// runner chooses the preset, and the flow actions are the preset's.
func checkSuitePolicy(name string, data []byte) error {
	for i, line := range strings.Split(string(data), "\n") {
		for _, key := range []string{"preset:", "flow:"} {
			if strings.HasPrefix(line, key) {
				return fmt.Errorf("%s:%d: a suite policy must not set %q; the runner composes each preset with the suite's labels", name, i+1, strings.TrimSuffix(key, ":"))
			}
		}
	}
	return nil
}

// composePolicies writes, for each preset and suite, "preset: P" followed
// by the suite's label policy, and validates it with `weir policy check`.
// It returns the files by preset and suite.
func composePolicies(ctx context.Context, weir, dir string, presets, suites []string, suitePolicies map[string][]byte) (map[string]map[string]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, p := range presets {
		out[p] = map[string]string{}
		for _, s := range suites {
			body, ok := suitePolicies[s]
			if !ok {
				fmt.Fprintf(os.Stderr, "agentdojo: no label policy for suite %q; its tools are labelled by Weir's name heuristics only\n", s)
				body = []byte("version: 1\n")
			}
			text := fmt.Sprintf("# Composed by bench/agentdojo: preset %s + the %s label policy.\npreset: %s\n%s", p, s, p, body)
			path := filepath.Join(dir, s+"-"+p+".yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				return nil, err
			}
			cmd := exec.CommandContext(ctx, weir, "policy", "check", path)
			cmd.Env = weirlessEnv()
			if b, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("weir policy check %s (preset %s, suite %s): %w\n%s", path, p, s, err, b)
			}
			out[p][s] = path
		}
	}
	return out, nil
}

// Run is the verdicts of one transcript under one preset (monitor mode),
// and its real walks with a human on each approval channel (enforce mode;
// nil for the transcripts no reading of theirs scores).
type Run struct {
	Decisions []Decision
	Human     map[Channel]*HumanWalk
}

// replayAll replays every transcript under every preset on a pool of
// o.jobs workers, then the scored ones on every approval channel, and
// returns results[preset][transcript index] and the number of
// enforce-mode replays.
//
// Unless o.humanAll, a transcript in whose monitor-mode replay Weir
// escalated no call is not replayed on the channels: nobody would be
// asked, and its walk is the no-human walk of its verdicts (inferredWalk).
func replayAll(ctx context.Context, rp *Replayer, corpus *Corpus, ts []*Transcript, o *options, policyFiles map[string]map[string]string, scratch string) (map[string][]Run, int, time.Duration, error) {
	results := map[string][]Run{}
	for _, p := range o.presets {
		results[p] = make([]Run, len(ts))
	}
	total := len(ts)*len(o.presets) + humanWalks(ts, o)
	bar := newProgress(os.Stderr, total, o.quiet)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
		seq      atomic.Int64
		human    atomic.Int64
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	start := time.Now()
	for w := 0; w < o.jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				t := ts[i]
				dir := filepath.Join(scratch, fmt.Sprintf("t%d", seq.Add(1)))
				if err := os.Mkdir(dir, 0o700); err != nil {
					fail(err)
					continue
				}
				script := filepath.Join(dir, "script.json")
				if err := writeJSON(script, NewScript(t, corpus.Tools[t.Suite])); err != nil {
					fail(err)
					continue
				}
				for _, p := range o.presets {
					if ctx.Err() != nil {
						break
					}
					runDir := filepath.Join(dir, p)
					if err := os.Mkdir(runDir, 0o700); err != nil {
						fail(err)
						break
					}
					d, err := rp.Replay(ctx, t, script, policyFiles[p][t.Suite], runDir)
					if err != nil {
						fail(fmt.Errorf("preset %s: %w", p, err))
						break
					}
					run := Run{Decisions: d}
					bar.add(1)
					if needsHuman(t) && len(o.channels) > 0 {
						run.Human = map[Channel]*HumanWalk{}
						if !o.humanAll && !escalated(d) {
							for _, ch := range o.channels {
								run.Human[ch] = inferredWalk(d)
							}
							bar.add(len(o.channels))
							results[p][i] = run
							continue
						}
						for _, ch := range o.channels {
							chDir := filepath.Join(dir, p+"-"+string(ch))
							if err := os.Mkdir(chDir, 0o700); err != nil {
								fail(err)
								break
							}
							w, err := rp.ReplayHuman(ctx, t, script, policyFiles[p][t.Suite], chDir, ch)
							if err != nil {
								fail(fmt.Errorf("preset %s: %w", p, err))
								break
							}
							run.Human[ch] = w
							human.Add(1)
							bar.add(1)
						}
					}
					results[p][i] = run
				}
				os.RemoveAll(dir)
			}
		}()
	}
feed:
	for i := range ts {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	bar.done()
	if firstErr != nil {
		return nil, 0, 0, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, 0, err
	}
	return results, int(human.Load()), time.Since(start), nil
}

// escalated reports whether Weir escalated any call of a monitor-mode
// replay.
func escalated(d []Decision) bool {
	for _, x := range d {
		if x.Verdict == Escalate {
			return true
		}
	}
	return false
}

// inferredWalk is the walk of a replay in which Weir escalated nothing:
// nobody is asked, and it ends at the first blocked call. Monitor mode
// decides what enforce mode would, so this is the enforce-mode walk; a run
// with --human-all replays these too (and on the AgentDojo corpus every
// such replay agreed).
func inferredWalk(d []Decision) *HumanWalk {
	w := &HumanWalk{StopAt: -1, Inferred: true}
	for i, x := range d {
		if x.Verdict.Stops() {
			w.StopAt, w.StopVerdict = i, x.Verdict.String()
			break
		}
	}
	return w
}
