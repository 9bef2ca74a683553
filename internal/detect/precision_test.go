package detect

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// Precision and recall of the injection heuristics on
// testdata/injections.jsonl, a labelled set of texts written for this
// project (a few adapted from the AgentDojo injection goals, MIT). Run
//
//	go test ./internal/detect -run TestPrecisionRecall -v
//
// to print the numbers. A text counts as flagged when ScanText reports a
// Medium or High finding from a detector IsInjectionDetector accepts.
//
// The set was written in three batches, and the ids say which:
//
//   - no prefix: the first batch, written alongside the rules;
//   - "b-": written before the rules ever ran on it, then used to improve
//     them (general shapes were added, not its strings);
//   - "h-": held out — written after those improvements and measured once;
//     no rule was changed because of it. Its numbers are the honest
//     estimate of how the heuristics do on text nobody tuned them for.
//
// The thresholds are the measured values minus a small margin, so a change
// that costs precision or recall fails here and has to say why.

const (
	minPrecision        = 0.95 // measured 0.979 (93 of 95 flagged texts are injections)
	minRecall           = 0.87 // measured 0.903 (93 of 103 injections flagged)
	minHeldOutPrecision = 0.70 // measured 0.800 (8 of 10); one more false positive is 0.727
	minHeldOutRecall    = 0.40 // measured 0.471 (8 of 17); one more miss is 0.412
)

type labelled struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Lang  string `json:"lang"`
	Text  string `json:"text"`
	Note  string `json:"note"`
}

func loadLabelled(t testing.TB) []labelled {
	f, err := os.Open("testdata/injections.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []labelled
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l labelled
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("injections.jsonl:%d: %v", n, err)
		}
		if l.Label != "injection" && l.Label != "benign" {
			t.Fatalf("injections.jsonl:%d: label %q", n, l.Label)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// flagged reports whether the injection detectors flag text.
func flagged(text string) (bool, []Finding) {
	fs := ScanText("result.content[0].text", text)
	for _, f := range fs {
		if IsInjectionDetector(f.Detector) && f.Severity >= Medium {
			return true, fs
		}
	}
	return false, fs
}

type confusion struct{ tp, fp, fn, tn int }

func (c confusion) precision() float64 { return ratio(c.tp, c.tp+c.fp) }
func (c confusion) recall() float64    { return ratio(c.tp, c.tp+c.fn) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func TestPrecisionRecall(t *testing.T) {
	set := loadLabelled(t)
	var all, held confusion
	inj, ben, nonEnglish := 0, 0, 0
	for _, l := range set {
		got, fs := flagged(l.Text)
		isInj := l.Label == "injection"
		if isInj {
			inj++
			if l.Lang != "en" {
				nonEnglish++
			}
		} else {
			ben++
		}
		c := &all
		for _, cc := range []*confusion{&all, &held} {
			if cc == &held && !strings.HasPrefix(l.ID, "h-") {
				continue
			}
			c = cc
			switch {
			case got && isInj:
				c.tp++
			case got && !isInj:
				c.fp++
			case !got && isInj:
				c.fn++
			default:
				c.tn++
			}
		}
		if got != isInj {
			what := "missed injection"
			if got {
				what = "false positive"
			}
			t.Logf("%s: %s (%s) %q", what, l.ID, l.Lang, clip(l.Text, 100))
			for _, f := range fs {
				if f.Severity >= Medium {
					t.Logf("\t%s %s %q", f.Severity, f.Detector, f.Evidence)
				}
			}
		}
	}
	if inj < 40 || ben < 40 || nonEnglish < 12 {
		t.Fatalf("labelled set too small: %d injections (%d non-English), %d benign; want ≥40 (≥12), ≥40", inj, nonEnglish, ben)
	}
	t.Logf("labelled set: %d texts, %d injections (%d non-English), %d benign", len(set), inj, nonEnglish, ben)
	t.Logf("all:      precision %.3f (%d/%d)  recall %.3f (%d/%d)", all.precision(), all.tp, all.tp+all.fp, all.recall(), all.tp, all.tp+all.fn)
	t.Logf("held-out: precision %.3f (%d/%d)  recall %.3f (%d/%d)", held.precision(), held.tp, held.tp+held.fp, held.recall(), held.tp, held.tp+held.fn)
	if p := all.precision(); p < minPrecision {
		t.Errorf("precision %.3f below %.2f", p, minPrecision)
	}
	if r := all.recall(); r < minRecall {
		t.Errorf("recall %.3f below %.2f", r, minRecall)
	}
	if p := held.precision(); p < minHeldOutPrecision {
		t.Errorf("held-out precision %.3f below %.2f", p, minHeldOutPrecision)
	}
	if r := held.recall(); r < minHeldOutRecall {
		t.Errorf("held-out recall %.3f below %.2f", r, minHeldOutRecall)
	}
}
