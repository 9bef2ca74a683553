// Command train fits Weir's definition scorer (internal/detect/model.bin):
// a logistic regression over the words and word pairs of tool
// definitions, from the published poisoned definitions in
// testdata/poisoning (poisoned.jsonl, with their sources and licences) and
// the benign definitions of real servers (testdata/poisoning/benign.jsonl
// and every catalogue in testdata/catalogues).
//
//	go run ./bench/poisoning/train            # cross-validate, then write the model
//	go run ./bench/poisoning/train --cv-only  # only the cross-validation table
//	go run ./bench/poisoning/train --readme README.md  # and the README's tables
//
// Training is deterministic: the same data gives the same bytes.
//
// The threshold is chosen by leaving each fold out in turn — a split of
// the poisoned set with the benign definitions of that split, or a group
// of catalogues, and in either case every other definition of its benign
// servers: the model trained on the rest scores the fold it never saw, and
// the threshold is the lowest score at which at most --max-fp of those
// out-of-fold benign definitions are flagged. The tables printed are those
// out-of-fold numbers, what the model catches on definitions it was not
// trained on, and, from testdata/poisoning/first_sight.json, what it and
// the rules of each held-out split's first measurement catch together.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/weir-sec/weir/bench/internal/jsonl"
	"github.com/weir-sec/weir/bench/internal/mdblock"
	"github.com/weir-sec/weir/internal/detect"
)

type def struct {
	id, server, split, origin string
	poisoned                  bool
	keys                      []uint32
	tool                      detect.Tool
}

// The settings internal/detect/model.bin was trained with. defaultL2 is
// the shrinkage that caught the most out of split at defaultMaxFP among
// 5e-4 … 5e-3 once the catalogues' heldout10 was in the data (70.0% at
// 2e-3, 65.9% at the 1e-3 chosen the same way after poisoning heldout7;
// `--cv-only --l2 X` prints each).
const (
	defaultMaxFP = 0.001
	defaultL2    = 2e-3
)

func main() {
	data := flag.String("data", "testdata/poisoning", "the poisoning evaluation set")
	cats := flag.String("catalogues", "testdata/catalogues", "real servers' catalogues (benign)")
	out := flag.String("out", "internal/detect/model.bin", "where to write the model")
	cvOnly := flag.Bool("cv-only", false, "print the cross-validation table and write nothing")
	l2 := flag.Float64("l2", defaultL2, "L2 shrinkage of the weights a step touches")
	readme := flag.String("readme", "", "also rewrite the scorer's block of this Markdown file (README.md) with the numbers")
	scores := flag.String("scores", "", "also write each definition's out-of-split score to this JSONL file")
	maxFP := flag.Float64("max-fp", defaultMaxFP, "share of out-of-split benign definitions the threshold may flag")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench/poisoning/train [--cv-only] [--readme README.md] [--max-fp 0.001] [--out internal/detect/model.bin]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	defs, err := load(*data, *cats)
	if err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
	var first *firstSight
	if b, err := os.ReadFile(filepath.Join(*data, firstSightFile)); err == nil {
		first = new(firstSight)
		if err := json.Unmarshal(b, first); err != nil {
			fmt.Fprintf(os.Stderr, "train: %s: %v\n", filepath.Join(*data, firstSightFile), err)
			os.Exit(1)
		}
	}
	if err := run(defs, first, *maxFP, *l2, *cvOnly, *out, *scores, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "train:", err)
		os.Exit(1)
	}
}

// scored is a definition and the score of the model that never saw it,
// and for a poisoned one the score once diluted with ordinary prose.
type scored struct {
	d          def
	p, diluted float64
}

// augCopies is how many diluted copies of each poisoned definition
// training adds (see augment). Without them one sentence of ordinary prose
// beside a payload took most scores under the threshold: out of fold, 31%
// of poisoned definitions diluted with three sentences were still caught,
// 64% with them, for 2.5 points of recall on undiluted ones.
const augCopies = 2

// prose is the sentences of the benign definitions' descriptions long
// enough to read as prose: what an attacker dilutes a payload with.
func prose(defs []def) []string {
	var out []string
	for _, d := range defs {
		if d.poisoned {
			continue
		}
		for _, s := range strings.SplitAfter(d.tool.Description, ". ") {
			if len(strings.Fields(s)) >= 8 {
				out = append(out, strings.TrimSpace(s))
			}
		}
	}
	return out
}

// dilute is t with n sentences of pool appended to its description.
func dilute(t detect.Tool, pool []string, n int, rng *rand.Rand) detect.Tool {
	var b strings.Builder
	b.WriteString(t.Description)
	for range n {
		b.WriteString(" " + pool[rng.IntN(len(pool))])
	}
	t.Description = b.String()
	return t
}

// augment adds, for each poisoned definition, copies diluted with one to
// three sentences of the training set's benign prose, so that the model
// learns that ordinary words beside a payload do not excuse it.
func augment(train []def, copies int) []def {
	if copies == 0 {
		return train
	}
	pool := prose(train)
	rng := rand.New(rand.NewPCG(5, 6))
	out := slices.Clone(train)
	for _, d := range train {
		if !d.poisoned {
			continue
		}
		for c := range copies {
			a := d
			a.tool = dilute(d.tool, pool, 1+c%3, rng)
			a.keys = keysOf(a.tool)
			out = append(out, a)
		}
	}
	return out
}

// crossValidate scores every definition with a model trained without its
// fold: a split of the poisoned set with the benign definitions of that
// split, or one group of catalogues (whose definitions are benign). The
// other definitions of a test fold's benign servers are left out of
// training too, so that no server's words leak into its own test.
func crossValidate(defs []def, l2 float64) []scored {
	var folds []string
	for _, d := range defs {
		if !slices.Contains(folds, d.split) {
			folds = append(folds, d.split)
		}
	}
	sort.Strings(folds)
	var oos []scored
	for _, s := range folds {
		testServers := map[string]bool{}
		for _, d := range defs {
			if !d.poisoned && d.split == s {
				testServers[d.server] = true
			}
		}
		var train, test []def
		for _, d := range defs {
			switch {
			case d.split == s:
				test = append(test, d)
			case !d.poisoned && testServers[d.server]:
			default:
				train = append(train, d)
			}
		}
		m := fit(augment(train, augCopies), l2)
		pool := prose(defs)
		rng := rand.New(rand.NewPCG(3, 4))
		for _, d := range test {
			x := scored{d: d, p: score(m, d.keys)}
			if d.poisoned {
				x.diluted = score(m, keysOf(dilute(d.tool, pool, 3, rng)))
			}
			oos = append(oos, x)
		}
	}
	return oos
}

// thresholdFor is the lowest score, at least 0.5, above which at most
// maxFP of the out-of-split benign definitions fall.
func thresholdFor(oos []scored, maxFP float64) (threshold float64, allowed, benign int) {
	var bs []float64
	for _, x := range oos {
		if !x.d.poisoned {
			bs = append(bs, x.p)
		}
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(bs)))
	allowed = int(math.Floor(maxFP * float64(len(bs))))
	threshold = 0.5
	if allowed < len(bs) {
		threshold = max(threshold, math.Nextafter(bs[allowed], 1))
	}
	return threshold, allowed, len(bs)
}

// tally counts a fold's (or "all") catches: poisoned caught of all, of
// the proof-of-concepts and of the benchmark payloads, and benign flagged.
func tally(oos []scored, fold string, threshold float64) (all, poc, bench, benign [2]int) {
	for _, x := range oos {
		if fold != "all" && x.d.split != fold {
			continue
		}
		hit := b2i(x.p >= threshold)
		switch {
		case !x.d.poisoned:
			benign[0] += hit
			benign[1]++
			continue
		case x.d.origin == "benchmark":
			bench[0] += hit
			bench[1]++
		default:
			poc[0] += hit
			poc[1]++
		}
		all[0] += hit
		all[1]++
	}
	return
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// train fits the model on every definition and keeps the weights that
// matter.
func train(defs []def, l2, threshold float64) detect.Model {
	m := fit(defs, l2)
	model := detect.Model{Bias: float32(m.bias), Threshold: float32(threshold)}
	for k, w := range m.w {
		if math.Abs(w) >= 1e-3 {
			model.Keys = append(model.Keys, uint32(k))
			model.Weights = append(model.Weights, float32(w))
		}
	}
	return model
}

// firstSight is testdata/poisoning/first_sight.json: what the rules
// missed and flagged of each held-out split when it was first measured.
type firstSight struct {
	Splits map[string]struct {
		Commit  string   `json:"commit"`
		Missed  []string `json:"missed"`
		Flagged []string `json:"benign_flagged"`
	} `json:"splits"`
}

const firstSightFile = "first_sight.json"

const (
	readmeStart = "<!-- bench:poisoning-model:start (generated by go run ./bench/poisoning/train --readme README.md; do not edit) -->"
	readmeEnd   = "<!-- bench:poisoning-model:end -->"
)

// table is a table of the report, for a terminal or a README.
type table struct {
	title string
	head  []string
	rows  [][]string
}

func (t table) text() string {
	w := make([]int, len(t.head))
	for _, r := range append([][]string{t.head}, t.rows...) {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, r := range append([][]string{t.head}, t.rows...) {
		for i, c := range r {
			pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (t table) markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.head, " | ") + " |\n|---" + strings.Repeat("|--:", len(t.head)-1) + "|\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

// report is the out-of-split numbers per fold, and with first sight's
// record, what the rules of each split's first measurement and the
// scorer catch together.
func report(oos []scored, first *firstSight, threshold float64) []table {
	cv := table{title: "the scorer alone, on each fold while trained on the others",
		head: []string{"fold", "poisoned caught", "proof-of-concepts", "benchmark payloads", "benign flagged", "poisoned caught, diluted"}}
	var folds []string
	for _, x := range oos {
		if !slices.Contains(folds, x.d.split) {
			folds = append(folds, x.d.split)
		}
	}
	for _, f := range append(folds, "all") {
		all, poc, bench, benign := tally(oos, f, threshold)
		var dil [2]int
		for _, x := range oos {
			if x.d.poisoned && (f == "all" || x.d.split == f) {
				dil[0] += b2i(x.diluted >= threshold)
				dil[1]++
			}
		}
		cv.rows = append(cv.rows, []string{f, frac(all), frac(poc), frac(bench), frac(benign), frac(dil)})
	}
	if first == nil {
		return []table{cv}
	}
	fs := table{title: "the rules as they were when each split was first measured (testdata/poisoning/" + firstSightFile + "), and with the scorer that never saw it",
		head: []string{"split", "rules of commit", "rules caught", "rules or scorer", "benign flagged, rules", "benign flagged, either"}}
	for _, sp := range slices.Sorted(maps.Keys(first.Splits)) {
		f := first.Splits[sp]
		missed, flagged := map[string]bool{}, map[string]bool{}
		for _, id := range f.Missed {
			missed[id] = true
		}
		for _, id := range f.Flagged {
			flagged[id] = true
		}
		var rules, both, rfp, fp [2]int
		for _, x := range oos {
			if x.d.split != sp {
				continue
			}
			hit := x.p >= threshold
			if x.d.poisoned {
				rules[0] += b2i(!missed[x.d.id])
				both[0] += b2i(!missed[x.d.id] || hit)
				rules[1]++
				both[1]++
			} else {
				rfp[0] += b2i(flagged[x.d.id])
				fp[0] += b2i(flagged[x.d.id] || hit)
				rfp[1]++
				fp[1]++
			}
		}
		fs.rows = append(fs.rows, []string{sp, f.Commit[:min(7, len(f.Commit))], frac(rules), frac(both), frac(rfp), frac(fp)})
	}
	return []table{cv, fs}
}

func run(defs []def, first *firstSight, maxFP, l2 float64, cvOnly bool, out, scoresFile, readme string) error {
	oos := crossValidate(defs, l2)
	if scoresFile != "" {
		var b []byte
		for _, x := range oos {
			line, _ := json.Marshal(map[string]any{"id": x.d.id, "split": x.d.split, "poisoned": x.d.poisoned, "score": math.Round(x.p*1e4) / 1e4})
			b = append(append(b, line...), '\n')
		}
		if err := os.WriteFile(scoresFile, b, 0o644); err != nil {
			return err
		}
	}
	threshold, allowed, nb := thresholdFor(oos, maxFP)
	tables := report(oos, first, threshold)
	fmt.Printf("threshold %.4f (at most %d of %d out-of-split benign definitions above it)\n", threshold, allowed, nb)
	for _, t := range tables {
		fmt.Printf("\n%s\n%s", t.title, t.text())
	}
	if readme != "" {
		var md strings.Builder
		fmt.Fprintf(&md, "Threshold %.4f: at most %d of the %d benign definitions scored out of their split lie above it (`--max-fp %g`).\n", threshold, allowed, nb, maxFP)
		for _, t := range tables {
			fmt.Fprintf(&md, "\n%s:\n\n%s", t.title, t.markdown())
		}
		md.WriteString("\nCommand: `go run ./bench/poisoning/train --readme README.md` (writes internal/detect/model.bin too; `--cv-only` writes nothing).\n")
		if err := mdblock.Replace(readme, readmeStart, readmeEnd, md.String()); err != nil {
			return err
		}
	}
	if cvOnly {
		return nil
	}
	model := train(defs, l2, threshold)
	b, err := model.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s: %d weights, threshold %.4f, trained on %d definitions\n", out, len(model.Keys), threshold, len(defs))
	return nil
}

func frac(c [2]int) string {
	if c[1] == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(c[0])/float64(c[1]), c[0], c[1])
}

type weights struct {
	w    []float64
	bias float64
}

func score(m weights, keys []uint32) float64 {
	z := m.bias
	for _, k := range keys {
		z += m.w[k]
	}
	return 1 / (1 + math.Exp(-z))
}

// fit trains by stochastic gradient descent in a fixed pseudo-random
// order, with the classes weighted to count alike and L2 shrinkage on the
// weights a step touches.
func fit(defs []def, l2 float64) weights {
	const (
		epochs = 40
		rate   = 0.1
	)
	m := weights{w: make([]float64, detect.ModelBuckets)}
	var pos, neg float64
	for _, d := range defs {
		if d.poisoned {
			pos++
		} else {
			neg++
		}
	}
	wPos, wNeg := (pos+neg)/(2*pos), (pos+neg)/(2*neg)
	order := make([]int, len(defs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for e := range epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		lr := rate / (1 + 0.2*float64(e))
		for _, i := range order {
			d := defs[i]
			p := score(m, d.keys)
			y, cw := 0.0, wNeg
			if d.poisoned {
				y, cw = 1, wPos
			}
			g := cw * (p - y)
			m.bias -= lr * g
			for _, k := range d.keys {
				m.w[k] -= lr * (g + l2*m.w[k])
			}
		}
	}
	return m
}

func keysOf(t detect.Tool) []uint32 {
	fs := detect.DefinitionFeatures(t)
	ks := make([]uint32, len(fs))
	for i, f := range fs {
		ks[i] = f.Key
	}
	return ks
}

type record struct {
	ID           string          `json:"id"`
	Server       string          `json:"server"`
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Split        string          `json:"split"`
	Origin       string          `json:"origin"`
}

func (r record) tool() detect.Tool {
	return detect.Tool{Server: r.Server, Name: r.Name, Title: r.Title, Description: r.Description, InputSchema: r.InputSchema, OutputSchema: r.OutputSchema}
}

func load(data, cats string) ([]def, error) {
	var defs []def
	seen := map[string]bool{}
	for _, f := range []struct {
		name     string
		poisoned bool
	}{{"poisoned.jsonl", true}, {"benign.jsonl", false}} {
		rs, err := jsonl.Read[record](filepath.Join(data, f.name))
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			id := r.ID
			if !f.poisoned {
				id = r.Server + "/" + r.Name
				seen[id] = true
			}
			defs = append(defs, def{id: id, server: r.Server, split: r.Split, origin: r.Origin, poisoned: f.poisoned, keys: keysOf(r.tool()), tool: r.tool()})
		}
	}
	var labels struct {
		Split map[string][]string `json:"split"`
	}
	b, err := os.ReadFile(filepath.Join(cats, "labels.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &labels); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(cats, "labels.json"), err)
	}
	groups := map[string]string{}
	for g, servers := range labels.Split {
		for _, s := range servers {
			groups[s] = g
		}
	}
	files, err := filepath.Glob(filepath.Join(cats, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	for _, file := range files {
		if filepath.Base(file) == "labels.json" {
			continue
		}
		var c struct {
			Server string   `json:"server"`
			Tools  []record `json:"tools"`
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		for _, t := range c.Tools {
			t.Server = c.Server
			id := c.Server + "/" + t.Name
			if seen[id] {
				continue
			}
			seen[id] = true
			defs = append(defs, def{id: id, server: c.Server, split: "catalogues/" + groups[c.Server], keys: keysOf(t.tool()), tool: t.tool()})
		}
	}
	return defs, nil
}
