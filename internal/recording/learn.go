package recording

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/store"
)

// LearnOptions say which recordings learn reads.
type LearnOptions struct {
	Since int64 // Unix ms; 0 for all
	// Preset is the preset the learned policy layers on; "" for the one
	// the recorded policies were built on.
	Preset string
}

// learnedTool is what the recordings say about one tool.
type learnedTool struct {
	server, tool string
	labels       flow.Labels
	used         bool                // some call to it was allowed
	dirs         map[string][]string // arg → directories read
	sites        map[string][]string // arg → sites called
	notURL       map[string]bool     // arg → some value was not an http(s) URL
	minutes      map[int64]int       // calls allowed per minute
}

// Learn writes a least-privilege policy from the recordings: every tool an
// allowed call used, listed with the labels it was decided with; every
// other tool denied (default_action: deny); the directories path arguments
// read as within rules; the sites URL arguments named as hosts rules; and
// a rate limit at three times each tool's busiest minute. It never
// weakens flow control: the flow actions are those of the recorded policy,
// calls that were blocked are left out, and the flows blocked as
// exfiltration are written as commented-out allow_flows for a person to
// review.
func Learn(ctx context.Context, src Source, o LearnOptions) ([]byte, error) {
	tools := map[string]*learnedTool{}
	get := func(server, tool string) *learnedTool {
		k := server + ":" + tool
		t := tools[k]
		if t == nil {
			t = &learnedTool{server: server, tool: tool, dirs: map[string][]string{}, sites: map[string][]string{}, notURL: map[string]bool{}, minutes: map[int64]int{}}
			tools[k] = t
		}
		return t
	}
	blockedFlows := map[string]bool{}
	policies := map[string]int{}
	var calls, sessions int
	seen := map[string]bool{}
	err := src.Records(ctx, o.Since, "", func(r store.Rec) error {
		if r.Kind != KindCall {
			return nil
		}
		var c Call
		if err := json.Unmarshal(r.Body, &c); err != nil {
			return fmt.Errorf("record %d: the record is damaged (%v)", r.Seq, err)
		}
		calls++
		if !seen[r.Session] {
			seen[r.Session] = true
			sessions++
		}
		policies[c.Policy]++
		t := get(r.Server, r.Tool)
		labels, err := parseLabels(c.Labels)
		if err != nil {
			return fmt.Errorf("record %d: %w", r.Seq, err)
		}
		t.labels |= labels
		v, _ := flow.ParseVerdict(c.Verdict)
		if v.Stops() {
			if c.Rule == "flow.exfiltration" {
				for _, s := range c.Sources {
					server, tool, _ := strings.Cut(s, "/")
					blockedFlows[fmt.Sprintf("%s:%s -> %s:%s", server, tool, r.Server, r.Tool)] = true
				}
			}
			return nil
		}
		t.used = true
		t.minutes[r.At/60000]++
		for _, l := range c.Learned {
			switch {
			case l.Dir != "":
				t.dirs[l.Arg] = append(t.dirs[l.Arg], l.Dir)
			case l.Other:
				t.notURL[l.Arg] = true
			case l.Site != "":
				t.sites[l.Arg] = append(t.sites[l.Arg], l.Site)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if calls == 0 {
		return nil, fmt.Errorf("there are no recorded calls to learn from; run your agent behind weir run first (record.enabled must be true)")
	}
	base, err := mostUsedPolicy(ctx, src, policies)
	if err != nil {
		return nil, err
	}
	preset := o.Preset
	if preset == "" {
		preset = base.Preset
	}
	keys := make([]string, 0, len(tools))
	for k := range tools {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	var b strings.Builder
	fmt.Fprintf(&b, "# Learned by weir learn from %d calls in %d sessions (%s).\n", calls, sessions, time.Now().UTC().Format("2006-01-02"))
	b.WriteString("# Every tool an allowed call used is listed with the labels it was decided\n")
	b.WriteString("# with; any other tool is refused (default_action: deny). Review it, then\n")
	b.WriteString("# check it: weir policy check FILE; weir replay --policy FILE --fail-on blocked\n")
	if base.Source != "" && !strings.HasPrefix(base.Source, "preset:") {
		fmt.Fprintf(&b, "# The recorded policy was %s: its own rules are not carried over.\n", base.Source)
	}
	b.WriteString("version: 1\n")
	fmt.Fprintf(&b, "preset: %s\n", preset)
	b.WriteString("default_action: deny\n")
	// The flow actions the sessions were decided with, written out, so the
	// learned policy is never looser than the recorded one.
	f := base.Flow
	fmt.Fprintf(&b, "flow:\n  exfiltration: %s\n  trifecta: %s\n  integrity: %s\n  tainted_args: %s\n  min_matches: %d\n",
		f.Exfiltration, f.Trifecta, f.Integrity, f.TaintedArgs, f.MinMatches)
	if len(blockedFlows) > 0 {
		b.WriteString("  # Flows Weir blocked as exfiltration. Allow one only if it is meant to\n")
		b.WriteString("  # happen (remove the # and put it under allow_flows: [...]):\n")
		for _, fl := range sortedKeys(blockedFlows) {
			fmt.Fprintf(&b, "  #   %q\n", fl)
		}
	}
	b.WriteString("tools:\n")
	used := 0
	for _, k := range keys {
		t := tools[k]
		if !t.used {
			continue
		}
		used++
		names := t.labels.Names()
		fmt.Fprintf(&b, "  - {match: %q, labels: [%s]}\n", t.server+":"+t.tool, strings.Join(names, ", "))
	}
	if used == 0 {
		b.WriteString("  []\n")
	}
	var rules strings.Builder
	for _, k := range keys {
		t := tools[k]
		if !t.used {
			continue
		}
		var args strings.Builder
		for _, arg := range sortedKeys(boolKeys(t.dirs)) {
			fmt.Fprintf(&args, "      %s: {within: [%s]}\n", yamlKey(arg), quoteAll(coverDirs(t.dirs[arg])))
		}
		for _, arg := range sortedKeys(boolKeys(t.sites)) {
			if t.notURL[arg] || len(t.dirs[arg]) > 0 {
				continue
			}
			var hosts []string
			for _, s := range uniq(t.sites[arg]) {
				hosts = append(hosts, s, "*."+s)
			}
			fmt.Fprintf(&args, "      %s: {hosts: {allow: [%s]}}\n", yamlKey(arg), quoteAll(hosts))
		}
		peak := 0
		for _, n := range t.minutes {
			peak = max(peak, n)
		}
		fmt.Fprintf(&rules, "  - id: %s\n    match: %q\n    rate_limit: %d/minute\n", ruleID(t), t.server+":"+t.tool, 3*peak)
		if args.Len() > 0 {
			rules.WriteString("    args:\n")
			rules.WriteString(args.String())
		}
	}
	if rules.Len() > 0 {
		b.WriteString("rules:\n")
		b.WriteString(rules.String())
	}
	return []byte(b.String()), nil
}

// mostUsedPolicy is the recorded policy most calls were decided under.
func mostUsedPolicy(ctx context.Context, src Source, counts map[string]int) (*policy.Policy, error) {
	best, n := "", -1
	for h, c := range counts {
		if c > n || c == n && h < best {
			best, n = h, c
		}
	}
	rp := &replayer{src: src, policies: map[string]*policy.Policy{}}
	return rp.recorded(ctx, best)
}

// coverDirs keeps the directories no other one in dirs contains.
func coverDirs(dirs []string) []string {
	dirs = uniq(dirs)
	var out []string
	for _, d := range dirs {
		covered := slices.ContainsFunc(dirs, func(o string) bool {
			return o != d && (o == "/" || strings.HasPrefix(d, o+string(filepath.Separator)))
		})
		if !covered {
			out = append(out, d)
		}
	}
	return out
}

func ruleID(t *learnedTool) string {
	id := "learned-" + t.server + "-" + t.tool
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '-'
	}, id)
}

func yamlKey(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b, _ := json.Marshal(s)
			return string(b)
		}
	}
	return s
}

func quoteAll(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		b, _ := json.Marshal(x)
		q[i] = string(b)
	}
	return strings.Join(q, ", ")
}

func uniq(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

func boolKeys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
