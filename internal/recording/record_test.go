package recording

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/weir-sec/weir/internal/policy"
)

// A string schemeFirst turns away is one policy.URLHost finds no scheme
// and no host in: skipping the parse changes no recorded fact.
func TestPropertySchemeFirstSkipsOnlyNonURLs(t *testing.T) {
	prefixes := []string{"", "https://", "http:", "h", "1a:", "+x:", "a+b.c-d:", "mailto:", ":", "a b:", "ex.ample:", "//host/", "x:/", "x://h", "HTTP://"}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.SampledFrom(prefixes).Draw(t, "prefix") +
			rapid.StringOf(rapid.RuneFrom([]rune("aZ09+-.:/?#@%[] \x01é"))).Draw(t, "rest")
		if schemeFirst(s) {
			return
		}
		if scheme, host, err := policy.URLHost(s); err == nil || scheme != "" || host != "" {
			t.Fatalf("%q: schemeFirst says no scheme, URLHost says scheme %q host %q err %v", s, scheme, host, err)
		}
	})
}

func TestSchemeFirst(t *testing.T) {
	for s, want := range map[string]bool{
		"https://example.com": true, "mailto:a@b": true, "a+b-c.d:x": true, "x:": true,
		"": false, ":x": false, "1http://x": false, "hello world: it": false, "notes.md": false, "/etc/passwd": false,
	} {
		if got := schemeFirst(s); got != want {
			t.Errorf("schemeFirst(%q) = %v, want %v", s, got, want)
		}
	}
}
