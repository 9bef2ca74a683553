// Command core runs the benchmarks the README quotes for the core proxy
// (issue 2), writes their results to bench/results/core.json, and rewrites
// the README's benchmark table from that file, so no number in the README
// is ever typed by hand.
//
//	go run ./bench/core            # run, record, update README.md
//	go run ./bench/core -readme    # only regenerate the README table
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A run is one `go test -bench` invocation.
type run struct {
	Pkg, Bench, Benchtime string
	Count                 int
}

var runs = []run{
	{"./internal/fingerprint", "^BenchmarkPrints$", "1s", 5},
	{"./internal/engine", "^BenchmarkDecide$", "1s", 5},
	{"./internal/engine", "^BenchmarkDecideRules$", "1s", 5},
	{"./internal/detect", "^(BenchmarkScanText4KB|BenchmarkScanCatalogue100)$", "1s", 3},
	{"./internal/e2e", "^BenchmarkAddedLatency$", "5000x", 3},
	{"./internal/e2e", "^BenchmarkSessionMemory$", "1x", 3},
}

// precisionCmd measures the injection detectors on their labelled set; its
// log lines are parsed into the results.
var precisionCmd = []string{"test", "-count=1", "-run", "^TestPrecisionRecall$", "-v", "./internal/detect"}

var precisionLine = regexp.MustCompile(`(all|held-out):\s+precision ([0-9.]+) \((\d+)/(\d+)\)\s+recall ([0-9.]+) \((\d+)/(\d+)\)`)

// Result is one benchmark line: its name and every metric it reported.
type Result struct {
	Name    string             `json:"name"`
	Metrics map[string]float64 `json:"metrics"`
}

// File is what bench/results/core.json holds.
type File struct {
	Date     string   `json:"date"`
	Commit   string   `json:"commit"`
	Machine  string   `json:"machine"`
	Go       string   `json:"go"`
	Commands []string `json:"commands"`
	Results  []Result `json:"results"`
}

const resultsPath = "bench/results/core.json"

func main() {
	readmeOnly := flag.Bool("readme", false, "only regenerate the README table from "+resultsPath)
	flag.Parse()
	if !*readmeOnly {
		f, err := measure()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/core:", err)
			os.Exit(1)
		}
		data, _ := json.MarshalIndent(f, "", "  ")
		if err := os.WriteFile(resultsPath, append(data, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "bench/core:", err)
			os.Exit(1)
		}
		fmt.Println("wrote", resultsPath)
	}
	if err := updateReadme(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/core:", err)
		os.Exit(1)
	}
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(-\d+)?\s+(\d+)\s+(.*)$`)

func measure() (*File, error) {
	f := &File{
		Date:    time.Now().UTC().Format(time.RFC3339),
		Commit:  strings.TrimSpace(output("git", "rev-parse", "--short", "HEAD")),
		Machine: machine(),
		Go:      runtime.Version(),
	}
	for i, r := range runs {
		args := []string{"test", "-run", "^$", "-bench", r.Bench, "-benchtime", r.Benchtime, "-count", strconv.Itoa(r.Count), r.Pkg}
		f.Commands = append(f.Commands, "go "+strings.Join(args, " "))
		fmt.Fprintf(os.Stderr, "[%d/%d] go %s\n", i+1, len(runs), strings.Join(args, " "))
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		f.Results = append(f.Results, parse(out)...)
	}
	f.Commands = append(f.Commands, "go "+strings.Join(precisionCmd, " "))
	out, err := exec.Command("go", precisionCmd...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v\n%s", strings.Join(precisionCmd, " "), err, out)
	}
	for _, m := range precisionLine.FindAllStringSubmatch(string(out), -1) {
		r := Result{Name: "DetectPrecisionRecall/" + m[1], Metrics: map[string]float64{}}
		for i, k := range []string{"precision", "flagged-true", "flagged", "recall", "found", "injections"} {
			r.Metrics[k], _ = strconv.ParseFloat(m[i+2], 64)
		}
		f.Results = append(f.Results, r)
	}
	return f, nil
}

// parse reads benchmark lines; repeated runs (-count) keep the median of
// each metric.
func parse(out []byte) []Result {
	all := map[string]map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := m[1]
		if all[name] == nil {
			all[name] = map[string][]float64{}
			order = append(order, name)
		}
		f := strings.Fields(m[4])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err == nil {
				all[name][f[i+1]] = append(all[name][f[i+1]], v)
			}
		}
	}
	var res []Result
	for _, name := range order {
		r := Result{Name: name, Metrics: map[string]float64{}}
		for k, vs := range all[name] {
			r.Metrics[k] = median(vs)
		}
		res = append(res, r)
	}
	return res
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func output(name string, args ...string) string {
	out, _ := exec.Command(name, args...).Output()
	return string(out)
}

func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%s/%s, %d cores, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), model)
}

// The README blocks this program writes.
var blocks = []struct {
	start, end string
	render     func(*File) string
}{
	{"<!-- bench:core:start (generated by go run ./bench/core; do not edit) -->", "<!-- bench:core:end -->", table},
	{"<!-- bench:detect:start (generated by go run ./bench/core; do not edit) -->", "<!-- bench:detect:end -->", detectTable},
}

func updateReadme() error {
	data, err := os.ReadFile(resultsPath)
	if err != nil {
		return err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%s: %w", resultsPath, err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		return err
	}
	s := string(readme)
	for _, b := range blocks {
		i, j := strings.Index(s, b.start), strings.Index(s, b.end)
		if i < 0 || j < i {
			return fmt.Errorf("README.md has no %q … %q section", b.start, b.end)
		}
		s = s[:i+len(b.start)] + "\n" + b.render(&f) + s[j:]
	}
	return os.WriteFile("README.md", []byte(s), 0o644)
}

func metric(f *File, name, m string) string {
	for _, r := range f.Results {
		if r.Name == name {
			if v, ok := r.Metrics[m]; ok {
				return strconv.FormatFloat(v, 'f', -1, 64)
			}
		}
	}
	return "n/a"
}

func detectTable(f *File) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s (commit %s). Raw data: [`%s`](%s).\n\n", f.Date[:10], f.Machine, f.Commit, resultsPath, resultsPath)
	b.WriteString("| injection heuristics on the labelled set (`internal/detect/testdata/injections.jsonl`) | precision | recall |\n|---|---|---|\n")
	for _, set := range []struct{ name, label string }{{"all", "all texts (written alongside the rules: optimistic)"}, {"held-out", "held-out texts (written after tuning, measured once: the honest estimate)"}} {
		n := "DetectPrecisionRecall/" + set.name
		fmt.Fprintf(&b, "| %s, %s injections | %s (%s/%s) | %s (%s/%s) |\n", set.label, metric(f, n, "injections"),
			metric(f, n, "precision"), metric(f, n, "flagged-true"), metric(f, n, "flagged"),
			metric(f, n, "recall"), metric(f, n, "found"), metric(f, n, "injections"))
	}
	fmt.Fprintf(&b, "\n| detector cost | goal | measured |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| ScanText on a 4 KB result | p50 ≤ 200 µs | p50 %s µs |\n", metric(f, "BenchmarkScanText4KB", "p50-µs"))
	fmt.Fprintf(&b, "| ScanCatalogue on a 100-tool catalogue | — | %s ms/op |\n", strconv.FormatFloat(parseF(metric(f, "BenchmarkScanCatalogue100", "ns/op"))/1e6, 'f', 2, 64))
	b.WriteString("\nCommands: `go " + strings.Join(precisionCmd, " ") + "`; `go test -run '^$' -bench '^(BenchmarkScanText4KB|BenchmarkScanCatalogue100)$' ./internal/detect`. ")
	b.WriteString("The 1 MB adversarial inputs are a test (`go test ./internal/detect -run Adversarial`), each under 50 ms of CPU scaled to the machine's speed.\n")
	return b.String()
}

func parseF(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func table(f *File) string {
	get := func(name, m string) string { return metric(f, name, m) }
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s (commit %s, %s); medians of repeated runs. Raw data: [`%s`](%s).\n\n", f.Date[:10], f.Machine, f.Commit, f.Go, resultsPath, resultsPath)
	b.WriteString("| what | goal | measured |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| fingerprinting (normalise + hash + winnow), 1 MB | ≥ 250 MB/s per core | %s MB/s (64 KB: %s, 4 KB: %s) |\n",
		get("BenchmarkPrints/1024KB", "MB/s"), get("BenchmarkPrints/64KB", "MB/s"), get("BenchmarkPrints/4KB", "MB/s"))
	fmt.Fprintf(&b, "| decision, sink call with a 4 KB argument, session holding 1 MB private | p50 ≤ 100 µs | p50 %s µs, p99 %s µs (a base64 leak found: p50 %s µs) |\n",
		get("BenchmarkDecide/benign-4KB", "p50-µs"), get("BenchmarkDecide/benign-4KB", "p99-µs"), get("BenchmarkDecide/leak-base64-4KB", "p50-µs"))
	fmt.Fprintf(&b, "| added latency per tools/call, 4 KB, allowed tool (weir run − direct) | p50 ≤ 150 µs, p99 ≤ 1 ms | p50 %s µs, p99 %s µs (bare relay floor: p50 %s µs) |\n",
		get("BenchmarkAddedLatency/allow-4KB", "added-p50-µs"), get("BenchmarkAddedLatency/allow-4KB", "added-p99-µs"), get("BenchmarkAddedLatency/allow-4KB", "relay-added-p50-µs"))
	fmt.Fprintf(&b, "| added latency per tools/call, 4 KB, sink decided against 1 MB private | same | p50 %s µs, p99 %s µs |\n",
		get("BenchmarkAddedLatency/sink-4KB-vs-1MB-private", "added-p50-µs"), get("BenchmarkAddedLatency/sink-4KB-vs-1MB-private", "added-p99-µs"))
	fmt.Fprintf(&b, "| decision with a 50-rule policy (10 CEL) vs no rules, same call | p50 ≤ 20 µs added | p50 %s µs vs %s µs |\n",
		get("BenchmarkDecideRules/50-rules-10-cel", "p50-µs"), get("BenchmarkDecideRules/no-rules", "p50-µs"))
	fmt.Fprintf(&b, "| CPU per 4 KB tools/call (weir / bare relay) | — | %s µs / %s µs |\n",
		get("BenchmarkAddedLatency/allow-4KB", "weir-cpu-µs/call"), get("BenchmarkAddedLatency/allow-4KB", "relay-cpu-µs/call"))
	fmt.Fprintf(&b, "| peak RSS of weir run, session holding 10 MB of private results | — | %s MB (at start: %s MB) |\n",
		get("BenchmarkSessionMemory", "peak-RSS-MB"), get("BenchmarkSessionMemory", "start-RSS-MB"))
	b.WriteString("\nCommands:\n\n```\n")
	for _, c := range f.Commands {
		b.WriteString(c + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}
