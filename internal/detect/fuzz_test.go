package detect

import (
	"reflect"
	"strings"
	"testing"
)

func fuzzSeeds(f *testing.F) {
	for _, l := range loadLabelled(f) {
		f.Add(l.Text)
	}
	for _, s := range fuzzSeedStrings {
		f.Add(s)
	}
}

func FuzzScanText(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		a := ScanText("f", s)
		b := ScanText("f", s)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("ScanText not deterministic on %q:\n%v\n%v", s, a, b)
		}
		checkFindings(t, s, a)
		for _, x := range a {
			if x.End > len(s) {
				t.Fatalf("span beyond the text: %+v", x)
			}
		}
	})
}

func FuzzClean(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		a := Clean(s)
		if b := Clean(s); !reflect.DeepEqual(a, b) {
			t.Fatalf("Clean not deterministic on %q", s)
		}
		if again := Clean(a.Text); again.Text != a.Text {
			t.Fatalf("Clean not idempotent on %q: %q then %q", s, a.Text, again.Text)
		}
		if a.Changed != (a.Text != s) {
			t.Fatalf("Changed wrong for %q", s)
		}
		if len(a.Hidden) > maxHiddenItems {
			t.Fatalf("%d hidden strings", len(a.Hidden))
		}
		for _, h := range a.Hidden {
			if len(h) > maxHiddenLen || strings.TrimSpace(h) == "" {
				t.Fatalf("hidden string of %d bytes: %q", len(h), h)
			}
		}
	})
}
