package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

func describeRun(root string, o *options, argv []string, weir string, n, human int, replay, total time.Duration) Meta {
	replays := n*len(o.presets) + human
	m := Meta{
		Date:         time.Now().UTC().Format(time.RFC3339),
		Commit:       gitDescribe(root),
		Uncommitted:  uncommitted(root),
		Machine:      machine(),
		Go:           runtime.Version(),
		Command:      strings.TrimSpace("go run ./bench/agentdojo " + strings.Join(argv, " ")),
		Corpus:       o.corpus,
		Weir:         weirVersion(weir),
		Presets:      append([]string{undefended}, o.presets...),
		Jobs:         o.jobs,
		Replays:      replays,
		ReplaySecs:   roundTo(replay.Seconds(), 1),
		TotalSecs:    roundTo(total.Seconds(), 1),
		HumanReplays: human,
		HumanAll:     o.humanAll && len(o.channels) > 0,
	}
	for _, ch := range o.channels {
		m.Channels = append(m.Channels, string(ch))
	}
	if o.weir != "" {
		m.Weir += " (prebuilt: " + o.weir + ")"
		m.Uncommitted = nil // not known to be what the binary was built from
	}
	if replays > 0 {
		m.MsPerReplay = roundTo(float64(replay.Milliseconds())/float64(replays), 1)
	}
	if abs, err := filepath.Abs(o.corpus); err == nil && root != "" {
		if rel, err := filepath.Rel(root, abs); err == nil {
			m.Corpus = rel
		}
	}
	return m
}

func roundTo(x float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

// uncommitted lists the changed and untracked files of the working tree
// outside bench/, which the weir binary may have been built with.
func uncommitted(root string) []string {
	if root == "" {
		return nil
	}
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all", "--", ".", ":!bench")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// gitDescribe is the commit of the working tree, "-dirty" when it has
// changes (other packages are often being edited while the bench runs).
func gitDescribe(root string) string {
	if root == "" {
		return "unknown"
	}
	cmd := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=7")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(b))
}

func weirVersion(weir string) string {
	b, err := exec.Command(weir, "version").Output()
	if err != nil {
		return "weir (version unknown)"
	}
	return strings.TrimSpace(string(b))
}

func machine() string {
	s := fmt.Sprintf("%s/%s, %d cores", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				s += ", " + strings.TrimSpace(v)
				break
			}
		}
	}
	return s
}

// policyMeta names each suite policy with a hash of its text, so a result
// can be tied to the policy that made it.
func policyMeta(suites []string, policies map[string][]byte, dir string) map[string]string {
	out := map[string]string{}
	for _, s := range suites {
		data, ok := policies[s]
		if !ok {
			out[s] = "(none: name heuristics)"
			continue
		}
		sum := sha256.Sum256(data)
		where := "bench/agentdojo/policies/" + s + ".yaml"
		if dir != "" {
			where = filepath.Join(dir, s+".yaml")
		}
		out[s] = where + " sha256:" + hex.EncodeToString(sum[:8])
	}
	return out
}

// progress draws a progress bar on a terminal, or a line every 10% on
// anything else.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	total    int
	n        int
	tty      bool
	off      bool
	start    time.Time
	lastPct  int
	lastDraw time.Time
}

func newProgress(w *os.File, total int, quiet bool) *progress {
	return &progress{w: w, total: total, tty: isTerminal(w), off: quiet, start: time.Now(), lastPct: -1}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	if p.off {
		return
	}
	if p.tty {
		if time.Since(p.lastDraw) > 100*time.Millisecond || p.n == p.total {
			p.lastDraw = time.Now()
			p.draw()
		}
		return
	}
	if pc := p.n * 10 / max(1, p.total); pc != p.lastPct {
		p.lastPct = pc
		fmt.Fprintf(p.w, "agentdojo: %d/%d replays (%d%%), %s\n", p.n, p.total, pc*10, time.Since(p.start).Round(time.Second))
	}
}

func (p *progress) draw() {
	const width = 30
	filled := p.n * width / max(1, p.total)
	el := time.Since(p.start)
	eta := ""
	if p.n > 0 && p.n < p.total {
		eta = fmt.Sprintf(", ~%s left", (el * time.Duration(p.total-p.n) / time.Duration(p.n)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d replays %s%s   ", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), p.n, p.total, el.Round(time.Second), eta)
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && !p.off && p.total > 0 {
		fmt.Fprintln(p.w)
	}
}
