// Command poisoning measures Weir's tool-poisoning detection on the
// evaluation set in testdata/poisoning: real poisoned tool definitions
// gathered from public proof-of-concept repositories and attack benchmarks,
// and the real tool catalogues of popular MCP servers.
//
//	go run ./bench/poisoning [--data testdata/poisoning] [--json FILE] [--list N]
//
// Each definition is judged the way weir run judges a tools/list: the
// relay's Gatherer runs the detectors over the server's whole catalogue
// (detect.ScanCatalogue, with the other servers' tool names for shadowing)
// and engine.Decide decides the list under the default policy, as on a
// first launch with no pins. A poisoned definition counts as caught when
// Weir withholds it (quarantine) or raises a finding of medium or high
// severity on it; a benign definition caught the same way is a false
// positive.
//
// A poisoned definition is listed by its server alone, with its sibling
// tools (names only, so that naming them is not taken for shadowing) and the
// other servers of its scenario (names only). Each benign server is listed
// with its whole catalogue, and the other benign servers stand as other
// servers, as if a user ran them all: those of its own split and of the
// splits gathered before it (dev and heldout were gathered together, heldout2
// after them, heldout3 after heldout2, heldout4 after heldout3, heldout5
// after heldout4, heldout6 after heldout5, heldout7 after heldout6), so that
// adding a later split leaves the earlier splits' numbers as they were.
//
// The program prints recall per attack class and per origin (poc,
// benchmark) and the false-positive rate per server, for the dev split, the
// heldout split, the heldout2 to heldout7 splits (each gathered later from
// other sources; every held-out split studied once measured)
// and all of them, then the
// misses and the false positives.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weir-sec/weir/bench/internal/jsonl"
	"github.com/weir-sec/weir/bench/internal/mdblock"
	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/store"
)

// Poisoned is one line of poisoned.jsonl.
type Poisoned struct {
	ID           string              `json:"id"`
	Name         string              `json:"name"`
	Title        string              `json:"title"`
	Description  string              `json:"description"`
	InputSchema  json.RawMessage     `json:"inputSchema"`
	OutputSchema json.RawMessage     `json:"outputSchema"`
	Annotations  json.RawMessage     `json:"annotations"`
	Server       string              `json:"server"`
	Siblings     []string            `json:"siblings"`
	Others       map[string][]string `json:"others"`
	Classes      []string            `json:"classes"`
	Origin       string              `json:"origin"`
	Split        string              `json:"split"`
	Group        string              `json:"group"`
}

// Benign is one line of benign.jsonl.
type Benign struct {
	ID           string          `json:"id"`
	Server       string          `json:"server"`
	Package      string          `json:"package"`
	Version      string          `json:"version"`
	Split        string          `json:"split"`
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
}

// Verdict is what Weir made of one definition.
type Verdict struct {
	Caught bool `json:"caught"`
	// ByRules is Caught without the scorer's findings: what the rules
	// alone catch (the scorer is trained on this set, so Caught is
	// in-sample for it; bench/poisoning/train prints its out-of-split
	// numbers).
	ByRules  bool     `json:"caught_by_rules"`
	Withheld bool     `json:"withheld"`
	Severity string   `json:"severity"`
	Rule     string   `json:"rule,omitempty"`
	Findings []string `json:"findings,omitempty"`
}

// Rate is a count of caught items out of a total.
type Rate struct {
	Caught int     `json:"caught"`
	Total  int     `json:"total"`
	Rate   float64 `json:"rate"`
}

func (r *Rate) add(caught bool) {
	r.Total++
	if caught {
		r.Caught++
	}
	r.Rate = float64(r.Caught) / float64(r.Total)
}

// Half is the numbers of one split (dev, heldout, heldout2 … heldout7, or all).
type Half struct {
	Recall         Rate            `json:"recall"`
	RulesRecall    Rate            `json:"recall_rules_alone"`
	RulesByOrigin  map[string]Rate `json:"recall_rules_alone_by_origin"`
	RulesFP        Rate            `json:"false_positive_rules_alone"`
	RecallByClass  map[string]Rate `json:"recall_by_class"`
	RecallByOrigin map[string]Rate `json:"recall_by_origin"`
	RecallByGroup  map[string]Rate `json:"recall_by_source"`
	FalsePositive  Rate            `json:"false_positive"`
	Withheld       Rate            `json:"benign_withheld"`
	FPByServer     map[string]Rate `json:"false_positive_by_server"`
	Misses         []string        `json:"misses"`
	FalsePositives []string        `json:"false_positives"`
	// RulesMisses and RulesFlagged are what the rules alone missed and
	// flagged: a split's first measurement (testdata/poisoning/
	// first_sight.json) is these, at the commit that measured it.
	RulesMisses  []string `json:"rules_misses"`
	RulesFlagged []string `json:"rules_flagged"`
}

// Report is what --json writes.
type Report struct {
	Caught string           `json:"caught_when"`
	Policy string           `json:"policy"`
	Halves map[string]*Half `json:"splits"`
}

func main() {
	data := flag.String("data", "testdata/poisoning", "the folder holding poisoned.jsonl and benign.jsonl")
	jsonOut := flag.String("json", "", "write the numbers to this file as JSON")
	list := flag.Int("list", 40, "list at most this many misses and false positives per split (0: none, -1: all)")
	readme := flag.String("readme", "", "also rewrite the poisoning block of this Markdown file (README.md) with the numbers")
	catalogues := flag.String("catalogues", "", "instead, list every catalogue of this folder (testdata/catalogues) with all the others configured alongside, and print the definitions flagged")
	flag.Parse()
	if *catalogues != "" {
		if _, _, err := allAtOnce(*catalogues, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "poisoning:", err)
			os.Exit(1)
		}
		return
	}
	rep, err := run(*data, *jsonOut, *list, os.Stdout)
	if err == nil && *readme != "" {
		err = mdblock.Replace(*readme, readmeStart, readmeEnd, readmeBlock(rep))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "poisoning:", err)
		os.Exit(1)
	}
}

const (
	readmeStart = "<!-- bench:poisoning:start (generated by go run ./bench/poisoning --readme README.md; do not edit) -->"
	readmeEnd   = "<!-- bench:poisoning:end -->"
)

// readmeBlock is the README's tables: recall per origin and class, false
// positives and precision, held-out first.
func readmeBlock(rep *Report) string {
	var b strings.Builder
	splits := append(slices.Clone(heldOut), struct{ key, name, note string }{"dev", "dev", "tuned on"}, struct{ key, name, note string }{"all", "all", ""})
	rate := func(r Rate) string {
		if r.Total == 0 {
			return "–"
		}
		return fmt.Sprintf("%s (%d/%d)", mdblock.Pct(r.Rate), r.Caught, r.Total)
	}
	b.WriteString("|")
	for _, sp := range splits {
		if sp.note != "" {
			fmt.Fprintf(&b, " | %s (%s)", sp.name, sp.note)
		} else {
			fmt.Fprintf(&b, " | %s", sp.name)
		}
	}
	b.WriteString(" |\n|---" + strings.Repeat("|--:", len(splits)) + "|\n")
	row := func(name string, get func(*Half) Rate) {
		fmt.Fprintf(&b, "| %s", name)
		for _, sp := range splits {
			fmt.Fprintf(&b, " | %s", rate(get(rep.Halves[sp.key])))
		}
		b.WriteString(" |\n")
	}
	row("proof-of-concepts caught", func(h *Half) Rate { return h.RecallByOrigin["poc"] })
	row("benchmark payloads caught", func(h *Half) Rate { return h.RecallByOrigin["benchmark"] })
	row("all poisoned caught (recall)", func(h *Half) Rate { return h.Recall })
	row("benign definitions flagged (false positives)", func(h *Half) Rate { return h.FalsePositive })
	row("benign definitions withheld", func(h *Half) Rate { return h.Withheld })
	row("proof-of-concepts caught, rules alone", func(h *Half) Rate { return h.RulesByOrigin["poc"] })
	row("benchmark payloads caught, rules alone", func(h *Half) Rate { return h.RulesByOrigin["benchmark"] })
	row("benign definitions flagged, rules alone", func(h *Half) Rate { return h.RulesFP })
	fmt.Fprintf(&b, "| precision (caught poisoned / everything flagged)")
	for _, sp := range splits {
		h := rep.Halves[sp.key]
		if n := h.Recall.Caught + h.FalsePositive.Caught; n > 0 {
			fmt.Fprintf(&b, " | %s", mdblock.Pct(float64(h.Recall.Caught)/float64(n)))
		} else {
			b.WriteString(" | –")
		}
	}
	b.WriteString(" |\n\n| class")
	for _, sp := range splits[:len(splits)-1] {
		fmt.Fprintf(&b, " | recall, %s", sp.name)
	}
	b.WriteString(" |\n|---" + strings.Repeat("|--:", len(splits)-1) + "|\n")
	classes := map[string]bool{}
	for _, sp := range splits {
		for c := range rep.Halves[sp.key].RecallByClass {
			classes[c] = true
		}
	}
	for _, c := range slices.Sorted(maps.Keys(classes)) {
		fmt.Fprintf(&b, "| %s", c)
		for _, sp := range splits[:len(splits)-1] {
			fmt.Fprintf(&b, " | %s", rate(rep.Halves[sp.key].RecallByClass[c]))
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\nCommand: `go run ./bench/poisoning --readme README.md` (`--list -1` prints every miss and false positive).\n")
	return b.String()
}

func run(dir, jsonOut string, list int, w io.Writer) (*Report, error) {
	pois, err := jsonl.Read[Poisoned](filepath.Join(dir, "poisoned.jsonl"))
	if err != nil {
		return nil, err
	}
	ben, err := jsonl.Read[Benign](filepath.Join(dir, "benign.jsonl"))
	if err != nil {
		return nil, err
	}
	pol, err := policyfile.Resolve("", "")
	if err != nil {
		return nil, err
	}
	ctx := context.Background()

	pv := make([]Verdict, len(pois))
	for i, p := range pois {
		pv[i] = judgePoisoned(ctx, pol, p)
	}
	bv := judgeBenign(ctx, pol, ben)

	rep := Report{
		Caught: "withheld (quarantined) or a finding of medium or high severity on the definition",
		Policy: pol.Source,
		Halves: map[string]*Half{},
	}
	for _, split := range append(slices.Clone(splitNames), "all") {
		h := &Half{RecallByClass: map[string]Rate{}, RecallByOrigin: map[string]Rate{}, RulesByOrigin: map[string]Rate{}, RecallByGroup: map[string]Rate{}, FPByServer: map[string]Rate{}, Misses: []string{}, FalsePositives: []string{}, RulesMisses: []string{}, RulesFlagged: []string{}}
		for i, p := range pois {
			if split != "all" && p.Split != split {
				continue
			}
			c := pv[i].Caught
			h.Recall.add(c)
			h.RulesRecall.add(pv[i].ByRules)
			rr := h.RulesByOrigin[p.Origin]
			rr.add(pv[i].ByRules)
			h.RulesByOrigin[p.Origin] = rr
			for _, cl := range p.Classes {
				r := h.RecallByClass[cl]
				r.add(c)
				h.RecallByClass[cl] = r
			}
			r := h.RecallByOrigin[p.Origin]
			r.add(c)
			h.RecallByOrigin[p.Origin] = r
			r = h.RecallByGroup[p.Group]
			r.add(c)
			h.RecallByGroup[p.Group] = r
			if !c {
				h.Misses = append(h.Misses, p.ID)
			}
			if !pv[i].ByRules {
				h.RulesMisses = append(h.RulesMisses, p.ID)
			}
		}
		for i, b := range ben {
			if split != "all" && b.Split != split {
				continue
			}
			c := bv[i].Caught
			h.FalsePositive.add(c)
			h.RulesFP.add(bv[i].ByRules)
			h.Withheld.add(bv[i].Withheld)
			r := h.FPByServer[b.Server]
			r.add(c)
			h.FPByServer[b.Server] = r
			if c {
				h.FalsePositives = append(h.FalsePositives, b.ID)
			}
			if bv[i].ByRules {
				h.RulesFlagged = append(h.RulesFlagged, b.ID)
			}
		}
		rep.Halves[split] = h
	}

	printReport(w, rep, pois, pv, ben, bv, list)
	if jsonOut != "" {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(jsonOut, append(out, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return &rep, nil
}

// judgePoisoned lists one poisoned definition with its siblings (names
// only) and judges it.
func judgePoisoned(ctx context.Context, pol *policy.Policy, p Poisoned) Verdict {
	tools := []detect.Tool{{
		Name: p.Name, Title: p.Title, Description: p.Description,
		InputSchema: p.InputSchema, OutputSchema: p.OutputSchema, Annotations: p.Annotations,
	}}
	for _, s := range p.Siblings {
		if s != p.Name {
			tools = append(tools, detect.Tool{Name: s})
		}
	}
	others := p.Others
	if others == nil {
		others = map[string][]string{}
	}
	return judgeList(ctx, pol, p.Server, tools, others)[0]
}

// heldOut are the held-out splits as the README's tables show them, in
// the order they were gathered, and what was done with each.
var heldOut = []struct{ key, name, note string }{
	{"heldout", "held-out", "its misses studied"},
	{"heldout2", "held-out 2", "false positives and misses studied"},
	{"heldout3", "held-out 3", "false positives and misses studied"},
	{"heldout4", "held-out 4", "false positives and misses studied"},
	{"heldout5", "held-out 5", "measured once, then its misses studied"},
	{"heldout6", "held-out 6", "measured once, then its misses studied"},
	{"heldout7", "held-out 7", "measured once, then its misses studied"},
}

// splitNames are the splits in the order they were gathered; "all" is
// every item.
var splitNames = []string{"dev", "heldout", "heldout2", "heldout3", "heldout4", "heldout5", "heldout6", "heldout7"}

// gathered is when a split was gathered: dev and heldout together, heldout2
// later, heldout3 after heldout2, heldout4 after heldout3, heldout5 after
// heldout4, heldout6 after heldout5, heldout7 after heldout6. A benign server
// sees as other servers those of its own split and of the splits gathered
// before it.
var gathered = map[string]int{"dev": 0, "heldout": 0, "heldout2": 1, "heldout3": 2, "heldout4": 3, "heldout5": 4, "heldout6": 5, "heldout7": 6}

func generation(split string) int {
	if g, ok := gathered[split]; ok {
		return g
	}
	return len(gathered)
}

// judgeBenign lists each benign server's whole catalogue, with the benign
// servers of its own split and of the splits gathered before it as the other
// servers, and returns a verdict per definition.
func judgeBenign(ctx context.Context, pol *policy.Policy, ben []Benign) []Verdict {
	byServer := map[string][]int{}
	split := map[string]string{}
	var servers []string
	for i, b := range ben {
		if _, ok := byServer[b.Server]; !ok {
			servers = append(servers, b.Server)
			split[b.Server] = b.Split
		}
		byServer[b.Server] = append(byServer[b.Server], i)
	}
	out := make([]Verdict, len(ben))
	for _, srv := range servers {
		others := map[string][]string{}
		for _, o := range servers {
			if o == srv || generation(split[o]) > generation(split[srv]) {
				continue
			}
			for _, i := range byServer[o] {
				others[o] = append(others[o], ben[i].Name)
			}
		}
		var tools []detect.Tool
		for _, i := range byServer[srv] {
			b := ben[i]
			tools = append(tools, detect.Tool{Name: b.Name, Title: b.Title, Description: b.Description,
				InputSchema: b.InputSchema, OutputSchema: b.OutputSchema, Annotations: b.Annotations})
		}
		vs := judgeList(ctx, pol, srv, tools, others)
		for k, i := range byServer[srv] {
			out[i] = vs[k]
		}
	}
	return out
}

// judgeList judges one tools/list by weir run's code path: the relay's
// Gatherer gathers the findings over the whole catalogue and the pins (an
// empty store: a first launch), and engine.Decide decides the list.
func judgeList(ctx context.Context, pol *policy.Policy, server string, tools []detect.Tool, others map[string][]string) []Verdict {
	for i := range tools {
		tools[i].Server = server
		tools[i].InputSchema = nullIfEmpty(tools[i].InputSchema)
		tools[i].OutputSchema = nullIfEmpty(tools[i].OutputSchema)
		tools[i].Annotations = nullIfEmpty(tools[i].Annotations)
	}
	g := relay.Gatherer{Store: store.NewMemory(), Server: server, Identity: pin.Identity(server),
		Now: func() time.Time { return time.Unix(1_700_000_000, 0) }}
	l := engine.List{Tools: tools}
	g.List(ctx, &l, nil, nil, others)
	d := engine.Decide(engine.Inputs{Policy: pol}, l)
	out := make([]Verdict, len(tools))
	for i := range tools {
		tv := d.Tools[i]
		sev := detect.Max(tv.Findings)
		v := Verdict{Withheld: tv.Withheld(), Severity: sev.String(), Rule: string(tv.Rule)}
		v.Caught = v.Withheld || sev >= detect.Medium
		v.ByRules = v.Withheld
		for _, f := range tv.Findings {
			v.ByRules = v.ByRules || f.Severity >= detect.Medium && f.Detector != detect.ModelDetector
			v.Findings = append(v.Findings, fmt.Sprintf("%s(%s) %s %q", f.Detector, f.Severity, f.Field, f.Evidence))
		}
		out[i] = v
	}
	return out
}

func nullIfEmpty(m json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(m)) == 0 || string(bytes.TrimSpace(m)) == "null" {
		return nil
	}
	return m
}

func pct(r Rate) string {
	if r.Total == 0 {
		return "     -"
	}
	return fmt.Sprintf("%5.1f%%", 100*r.Rate)
}

func printRates(w io.Writer, title string, m map[string]Rate) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintf(w, "  %s\n", title)
	for _, k := range keys {
		r := m[k]
		fmt.Fprintf(w, "    %-30s %4d/%-4d %s\n", k, r.Caught, r.Total, pct(r))
	}
}

func printReport(w io.Writer, rep Report, pois []Poisoned, pv []Verdict, ben []Benign, bv []Verdict, list int) {
	fmt.Fprintf(w, "Weir tool-poisoning evaluation (policy %s)\n", rep.Policy)
	fmt.Fprintf(w, "caught = %s\n", rep.Caught)
	fmt.Fprintf(w, "the definition scorer (%s) is trained on this set: its share is in-sample here; go run ./bench/poisoning/train prints its out-of-split numbers\n\n", detect.ModelDetector)
	byID := map[string]int{}
	for i, p := range pois {
		byID[p.ID] = i
	}
	benByID := map[string]int{}
	for i, b := range ben {
		benByID[b.ID] = i
	}
	for _, split := range append(slices.Clone(splitNames), "all") {
		h := rep.Halves[split]
		fmt.Fprintf(w, "== %s: recall %d/%d %s, false positives %d/%d %s (rules alone: %d/%d %s, %d/%d %s)\n", split,
			h.Recall.Caught, h.Recall.Total, pct(h.Recall), h.FalsePositive.Caught, h.FalsePositive.Total, pct(h.FalsePositive),
			h.RulesRecall.Caught, h.RulesRecall.Total, pct(h.RulesRecall), h.RulesFP.Caught, h.RulesFP.Total, pct(h.RulesFP))
		printRates(w, "recall by class", h.RecallByClass)
		printRates(w, "recall by origin", h.RecallByOrigin)
		printRates(w, "recall by source", h.RecallByGroup)
		printRates(w, "false positives by server", h.FPByServer)
		fmt.Fprintln(w)
	}
	if list == 0 {
		return
	}
	for _, split := range splitNames {
		h := rep.Halves[split]
		fmt.Fprintf(w, "== %s misses (%d)\n", split, len(h.Misses))
		for k, id := range h.Misses {
			if list > 0 && k >= list {
				fmt.Fprintf(w, "  … %d more (--list -1 lists all)\n", len(h.Misses)-k)
				break
			}
			p := pois[byID[id]]
			v := pv[byID[id]]
			fmt.Fprintf(w, "  %s [%s] max=%s\n", id, strings.Join(p.Classes, ","), v.Severity)
			for _, f := range firstN(v.Findings, 3) {
				fmt.Fprintf(w, "      %s\n", f)
			}
		}
		fmt.Fprintf(w, "== %s false positives (%d)\n", split, len(h.FalsePositives))
		for k, id := range h.FalsePositives {
			if list > 0 && k >= list {
				fmt.Fprintf(w, "  … %d more (--list -1 lists all)\n", len(h.FalsePositives)-k)
				break
			}
			v := bv[benByID[id]]
			state := "warn"
			if v.Withheld {
				state = "withheld"
			}
			fmt.Fprintf(w, "  %s %s max=%s\n", id, state, v.Severity)
			for _, f := range firstN(slices.DeleteFunc(slices.Clone(v.Findings), func(s string) bool { return strings.Contains(s, "(low)") }), 3) {
				fmt.Fprintf(w, "      %s\n", f)
			}
		}
		fmt.Fprintln(w)
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
