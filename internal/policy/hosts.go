package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// HostRule is a `hosts:` constraint: the host of a URL argument must match
// none of Deny and, when Allow is not empty, one of Allow. Patterns are
// stored in canonical form ([CanonicalHost], then [SiteHost]):
// "corp.example" matches that host and its www. spelling, "*.corp.example"
// matches its subdomains only (a.corp.example, a.b.corp.example, not
// corp.example itself).
type HostRule struct{ Allow, Deny []string }

// matches reports whether canonical host h matches one of patterns.
func hostMatches(h string, patterns []string) bool {
	for _, p := range patterns {
		if suffix, ok := strings.CutPrefix(p, "*"); ok { // "*.corp.example"
			if len(h) > len(suffix) && strings.HasSuffix(h, suffix) {
				return true
			}
		} else if h == p {
			return true
		}
	}
	return false
}

// CanonicalHost puts a host name in the form host patterns are compared in,
// so that two spellings of one host compare equal and look-alikes do not:
//
//   - one trailing dot is dropped ("corp.example." is corp.example);
//   - an IPv6 literal (with or without brackets) is written the way
//     net/netip writes it, without a zone; an IPv4-mapped one
//     (::ffff:127.0.0.1) is the IPv4 address it reaches;
//   - a host whose last label is a number is an IPv4 address, read the way
//     browsers and WHATWG URL parsers read it (decimal, octal and hex parts,
//     shortened forms: "0x7f.1" and "2130706433" are 127.0.0.1), and written
//     as a dotted quad; one that does not parse is an error;
//   - any other name is mapped with IDNA's lookup profile (UTS #46):
//     lower-cased, and converted to its ASCII (punycode) form, so that
//     "bücher.example" is "xn--bcher-kva.example" and "exаmple.com" with a
//     Cyrillic а is "xn--exmple-4nf.com", not example.com. Names IDNA
//     refuses (spaces, underscores, "%", "\", empty labels) are errors.
//
// The engine uses it for the url_hosts and recipient_domains predicate
// variables, so predicates and `hosts:` patterns agree.
func CanonicalHost(host string) (string, error) {
	if host == "" {
		return "", errors.New("empty host")
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
		if !strings.Contains(host, ":") {
			return "", errors.New("brackets around a host that is not an IPv6 address")
		}
	}
	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return "", errors.New("not a valid IPv6 address")
		}
		// A zone names an interface, not another host; an IPv4-mapped
		// address reaches the IPv4 host on a dual-stack socket.
		return a.WithZone("").Unmap().String(), nil
	}
	if h, ok := strings.CutSuffix(host, "."); ok && h != "" {
		host = h
	}
	if endsInNumber(host) {
		a, err := parseIPv4(host)
		if err != nil {
			return "", err
		}
		return a.String(), nil
	}
	if h, ok := plainHost(host); ok {
		return h, nil
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("not a valid host name (%v)", err)
	}
	if a == "" || strings.Contains(a, "..") || strings.HasPrefix(a, ".") || strings.HasSuffix(a, ".") {
		return "", errors.New("not a valid host name")
	}
	return a, nil
}

// plainHost is the fast path of CanonicalHost for the common case, an
// ASCII letters-digits-hyphens name: IDNA's lookup profile maps such a name
// to itself in lower case, provided no label is empty, longer than 63, starts
// or ends with "-", or has "--" in its third and fourth places (punycode
// and reserved labels, which go through IDNA).
func plainHost(host string) (string, bool) {
	lower := true
	label := 0
	for i := 0; i <= len(host); i++ {
		if i == len(host) || host[i] == '.' {
			l := host[label:i]
			if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || len(l) >= 4 && l[2] == '-' && l[3] == '-' {
				return "", false
			}
			label = i + 1
			continue
		}
		switch c := host[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		case c >= 'A' && c <= 'Z':
			lower = false
		default:
			return "", false
		}
	}
	if !lower {
		return strings.ToLower(host), true
	}
	return host, true
}

// endsInNumber is the WHATWG "ends in a number" check: the last label is
// all digits, or a 0x hex number. Such a host is an IPv4 address or
// invalid, never a domain name.
func endsInNumber(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if allDigits(last, 10) {
		return true
	}
	if rest, ok := cutHexPrefix(last); ok {
		return allDigits(rest, 16)
	}
	return false
}

func cutHexPrefix(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:], true
	}
	return s, false
}

func allDigits(s string, base int) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
		default:
			return false
		}
	}
	return true
}

// parseIPv4 is the WHATWG IPv4 parser: one to four parts, each decimal,
// octal (leading 0) or hex (0x); the last part fills the remaining bytes.
func parseIPv4(host string) (netip.Addr, error) {
	bad := errors.New("not a valid IPv4 address")
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, bad
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base := 10
		if rest, ok := cutHexPrefix(p); ok {
			p, base = rest, 16
			if p == "" {
				p = "0"
			}
		} else if len(p) > 1 && p[0] == '0' {
			p, base = p[1:], 8
		}
		if p == "" || !allDigits(p, base) {
			return netip.Addr{}, bad
		}
		n, err := strconv.ParseUint(p, base, 64)
		if err != nil {
			return netip.Addr{}, bad
		}
		nums[i] = n
	}
	last := len(nums) - 1
	for _, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, bad
		}
	}
	if nums[last] >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, bad
	}
	v := nums[last]
	for i, n := range nums[:last] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

// URLHost returns the canonical host ([CanonicalHost]) of an absolute URL,
// and its scheme in lower case. Userinfo and port are not part of the host:
// "https://corp.example@evil.example:8443/" is evil.example. A string that
// is not an absolute URL with a host is an error.
func URLHost(raw string) (scheme, host string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		// The error quotes the URL; say only what kind of problem it is.
		return "", "", errNotURL
	}
	if u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return strings.ToLower(u.Scheme), "", errNotAbsolute
	}
	host, err = CanonicalHost(u.Hostname())
	if err != nil {
		return strings.ToLower(u.Scheme), "", errBadHost
	}
	return strings.ToLower(u.Scheme), host, nil
}

var (
	errNotURL      = errors.New("is not a valid URL")
	errNotAbsolute = errors.New("is not an absolute URL with a host")
	errBadHost     = errors.New("host is not a valid host name")
)

// knownSchemes are the schemes a violation may name. Any other scheme is
// text from the call (it may be a secret written as "SECRET:..."), and is not
// repeated.
var knownSchemes = map[string]bool{
	"ftp": true, "ftps": true, "sftp": true, "file": true, "data": true, "javascript": true,
	"mailto": true, "ws": true, "wss": true, "gopher": true, "ssh": true, "git": true,
	"smb": true, "ldap": true, "dict": true, "tel": true, "blob": true, "about": true,
}

// SiteHost is the site a canonical host names, the way `hosts:` patterns
// and the url_hosts predicate variable both compare hosts: leading "www."
// labels are dropped while a dot remains, so "www.corp.example" is
// corp.example. A pattern for corp.example then covers the www. spelling
// of the same site, in an allow list and in a deny list alike, and a
// predicate over url_hosts sees what a hosts: rule sees.
func SiteHost(h string) string {
	for strings.HasPrefix(h, "www.") && strings.IndexByte(h[4:], '.') > 0 {
		h = h[4:]
	}
	return h
}

// checkHost checks one URL value against h; it returns a violation or "".
func (h *HostRule) check(path, raw string) string {
	scheme, host, err := URLHost(raw)
	if scheme != "" && scheme != "http" && scheme != "https" {
		if knownSchemes[scheme] {
			return fmt.Sprintf("%s scheme %q is not http or https", path, scheme)
		}
		return path + " scheme is not http or https"
	}
	if err != nil {
		return path + " " + err.Error()
	}
	host = SiteHost(host)
	if hostMatches(host, h.Deny) || len(h.Allow) > 0 && !hostMatches(host, h.Allow) {
		return path + " host is not allowed"
	}
	return ""
}
