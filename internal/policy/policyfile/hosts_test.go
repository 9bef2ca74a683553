package policyfile

import (
	"strings"
	"testing"

	"github.com/weir-sec/weir/internal/policy"
)

func hostRule(t *testing.T, allow, deny []string) *policy.ArgRule {
	t.Helper()
	h := &policy.HostRule{}
	for _, p := range allow {
		c, err := compileHostPattern(p)
		if err != nil {
			t.Fatal(err)
		}
		h.Allow = append(h.Allow, c)
	}
	for _, p := range deny {
		c, err := compileHostPattern(p)
		if err != nil {
			t.Fatal(err)
		}
		h.Deny = append(h.Deny, c)
	}
	return &policy.ArgRule{Name: "url", Hosts: h}
}

// TestHosts checks `hosts:` against the URL tricks that make a host look
// like another.
func TestHosts(t *testing.T) {
	allow := hostRule(t, []string{"corp.example", "*.corp.example", "bücher.example", "10.1.2.3", "::1"}, []string{"admin.corp.example"})
	deny := hostRule(t, nil, []string{"evil.example", "*.evil.example", "127.0.0.1", "169.254.169.254"})
	const notAllowed = "$.url host is not allowed"
	tests := []struct {
		name string
		rule *policy.ArgRule
		url  any
		want string // "" for allowed
	}{
		{"exact host", allow, "https://corp.example/x", ""},
		{"subdomain", allow, "https://api.corp.example/v1", ""},
		{"deeper subdomain", allow, "http://a.b.corp.example/", ""},
		{"port", allow, "https://corp.example:8443/x", ""},
		{"upper case", allow, "HTTPS://CORP.Example/", ""},
		{"trailing dot", allow, "https://corp.example./", ""},
		{"denied subdomain wins over allowed", allow, "https://admin.corp.example/", notAllowed},
		{"not listed", allow, "https://evil.example/", notAllowed},
		{"suffix without the dot", allow, "https://evilcorp.example/", notAllowed},
		{"allowed name as a subdomain of another", allow, "https://corp.example.evil.example/", notAllowed},
		{"userinfo looks like the host", allow, "https://corp.example@evil.example/", notAllowed},
		{"userinfo with password", allow, "https://corp.example:443@evil.example/", notAllowed},
		{"allowed name in the path", allow, "https://evil.example/corp.example", notAllowed},
		{"allowed name in the query", allow, "https://evil.example/?u=https://corp.example", notAllowed},
		{"allowed name in the fragment", allow, "https://evil.example#@corp.example", notAllowed},
		{"IDN homograph (Cyrillic а)", hostRule(t, []string{"example.com"}, nil), "https://exаmple.com/", notAllowed},
		{"IDN homograph, percent-encoded", hostRule(t, []string{"example.com"}, nil), "https://ex%D0%B0mple.com/", notAllowed},
		{"IDN allowed in Unicode", allow, "https://BÜCHER.example/", ""},
		{"IDN allowed in punycode", allow, "https://xn--bcher-kva.example/", ""},
		{"percent-encoded ASCII host", allow, "https://%63orp.example/", "$.url is not a valid URL"},
		{"IPv4 allowed", allow, "http://10.1.2.3:8080/", ""},
		{"IPv6 literal allowed", allow, "http://[::1]:8080/", ""},
		{"IPv6 long form of the same address", allow, "http://[0:0:0:0:0:0:0:1]/", ""},
		{"IPv6 not allowed", allow, "http://[::2]/", notAllowed},
		{"scheme ftp", allow, "ftp://corp.example/", `$.url scheme "ftp" is not http or https`},
		{"scheme file", allow, "file:///etc/passwd", `$.url scheme "file" is not http or https`},
		{"scheme javascript", allow, "javascript:alert(1)", `$.url scheme "javascript" is not http or https`},
		{"unknown scheme is not repeated", allow, "sk-live-123abc:corp.example", "$.url scheme is not http or https"},
		{"relative URL", allow, "//corp.example/x", "$.url is not an absolute URL with a host"},
		{"no scheme", allow, "corp.example", "$.url is not an absolute URL with a host"},
		{"opaque https", allow, "https:corp.example", "$.url is not an absolute URL with a host"},
		{"backslash authority", allow, `https://evil.example\.corp.example/`, "$.url is not a valid URL"},
		{"space in host", allow, "https://corp example/", "$.url is not a valid URL"},
		{"empty host", allow, "https:///x", "$.url is not an absolute URL with a host"},
		{"not a string", allow, 42.0, "$.url is a number, not a string"},
		{"deny list only: other hosts pass", deny, "https://example.org/", ""},
		{"deny list: denied", deny, "https://evil.example/", notAllowed},
		{"deny list: denied subdomain", deny, "https://x.evil.example/", notAllowed},
		{"deny list: trailing dot", deny, "https://EVIL.example./", notAllowed},
		{"deny list: decimal IP", deny, "http://2130706433/", notAllowed},
		{"deny list: hex IP", deny, "http://0x7f.0.0.1/", notAllowed},
		{"deny list: octal IP", deny, "http://0177.0.0.1/", notAllowed},
		{"deny list: short IP", deny, "http://127.1/", notAllowed},
		{"deny list: metadata IP in hex", deny, "http://0xa9fea9fe/latest/meta-data", notAllowed},
		{"deny list: bad IPv4", deny, "http://1.2.3.256/", "$.url host is not a valid host name"},
		{"deny list: IPv4-mapped IPv6 is the IPv4", deny, "http://[::ffff:127.0.0.1]/", notAllowed},
		{"deny list: IPv6 with a zone", hostRule(t, nil, []string{"fe80::1"}), "http://[fe80::1%25eth0]/", notAllowed},
	}
	if len(tests) < 12 {
		t.Fatal("too few rows")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.rule.Check(tt.url, nil)
			if got != tt.want {
				t.Errorf("Check(%q) = %q, want %q", tt.url, got, tt.want)
			}
			if s, ok := tt.url.(string); ok && got != "" && strings.Contains(got, strings.TrimPrefix(s, "https://")) {
				t.Errorf("violation %q quotes the value", got)
			}
		})
	}
}

func TestCanonicalHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Corp.Example", "corp.example"},
		{"corp.example.", "corp.example"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"exаmple.com", "xn--exmple-4nf.com"},
		{"[::1]", "::1"},
		{"0:0::1", "::1"},
		{"2130706433", "127.0.0.1"},
		{"0x7F.1", "127.0.0.1"},
		{"010.0.0.1", "8.0.0.1"},
		{"1.2.3", "1.2.0.3"},
		{"0x", "0.0.0.0"},
		{"1.2.3.4.", "1.2.3.4"},
		{"fe80::1%eth0", "fe80::1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"", ""},
		{".", ""},
		{"a..b", ""},
		{"under_score.example", ""},
		{"1.2.3.4.5", ""},
		{"4294967296", ""},
		{"1.256.0.0", ""},
		{"[corp.example]", ""},
		{"09.1.1.1", ""},
	}
	for _, tt := range tests {
		got, err := policy.CanonicalHost(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("CanonicalHost(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CanonicalHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestURLHost(t *testing.T) {
	scheme, host, err := policy.URLHost("HTTPS://user:pw@Corp.Example.:8443/a?b#c")
	if err != nil || scheme != "https" || host != "corp.example" {
		t.Errorf("URLHost = %q, %q, %v", scheme, host, err)
	}
}

func TestCompileHostPattern(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Corp.Example", "corp.example"},
		{"*.Corp.Example.", "*.corp.example"},
		{"*.bücher.example", "*.xn--bcher-kva.example"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"127.1", "127.0.0.1"},
		{"*.1.2.3.4", ""},
		{"*", ""},
		{"a*.example", ""},
		{"corp.example:80", ""},
		{"https://corp.example", ""},
		{"user@corp.example", ""},
		{"", ""},
	} {
		got, err := compileHostPattern(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("compileHostPattern(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("compileHostPattern(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
