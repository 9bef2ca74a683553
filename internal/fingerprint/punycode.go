package fingerprint

import (
	"strings"
	"unicode/utf8"
)

// Punycode (RFC 3492) writes Unicode as letters, digits and hyphens, for
// host names: xn--mnchen-3ya is münchen. Text in another script, written
// into a host name label by label, survives as its punycode only.

// decodePunycodeLabels appends the view with every xn-- label (any
// case, starting a word or after a dot) replaced by what it encodes, and
// reports whether one decoded. A label that does not decode is kept.
func decodePunycodeLabels(dst []byte, s string, p *patches) ([]byte, bool) {
	if !strings.Contains(s, "--") || !containsFold(s, "xn--") {
		return dst, false
	}
	start := len(dst)
	changed := false
	last := 0
	var lbl []byte
	for i := 0; i+4 <= len(s); i++ {
		if s[i]|0x20 != 'x' || !strings.EqualFold(s[i:i+4], "xn--") || i > 0 && isAlnum(s[i-1]) {
			continue
		}
		j := i + 4
		for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
			j++
		}
		out, ok := decodePunycode(lbl[:0], s[i+4:j])
		if !ok {
			continue
		}
		lbl = out
		dst = append(dst, s[last:i]...)
		at := len(dst)
		dst = append(dst, out...)
		p.mark(at, len(dst))
		last, i, changed = j, j-1, true
	}
	if !changed {
		return dst[:start], false
	}
	return append(dst, s[last:]...), true
}

// containsFold reports whether s contains the lower-case ASCII word sub
// in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); {
		j := strings.IndexByte(s[i:], sub[0]&^0x20)
		k := strings.IndexByte(s[i:], sub[0])
		switch {
		case j < 0 && k < 0:
			return false
		case j < 0 || k >= 0 && k < j:
			j = k
		}
		i += j
		if i+len(sub) <= len(s) && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
		i++
	}
	return false
}

// Punycode parameters, RFC 3492 section 5.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	// maxPunycode bounds the code points of one label: a DNS label is at
	// most 63 bytes, and each insertion costs a copy of the label so far.
	maxPunycode = 64
)

// decodePunycode appends the decoding of a label without its xn--
// prefix, as RFC 3492 section 6.2 describes, and reports whether it was
// valid and held at least one non-ASCII code point.
func decodePunycode(dst []byte, label string) ([]byte, bool) {
	var out [maxPunycode]rune
	n := 0
	basic := strings.LastIndexByte(label, '-')
	if basic > 0 {
		for i := 0; i < basic; i++ {
			c := label[i]
			if c >= utf8.RuneSelf || n == len(out) {
				return dst, false
			}
			out[n] = rune(c)
			n++
		}
	}
	rest := label[basic+1:]
	code, i, bias := rune(pcInitialN), 0, pcInitialBias
	inserted := false
	for k := 0; k < len(rest); {
		old, w := i, 1
		for t := pcBase; ; t += pcBase {
			if k == len(rest) {
				return dst, false
			}
			d := punyDigit(rest[k])
			k++
			if d < 0 || d > (1<<30-i)/w {
				return dst, false
			}
			i += d * w
			th := min(max(t-bias, pcTMin), pcTMax)
			if d < th {
				break
			}
			if w > (1<<30)/(pcBase-th) {
				return dst, false
			}
			w *= pcBase - th
		}
		bias = punyAdapt(i-old, n+1, old == 0)
		if i/(n+1) > utf8.MaxRune-int(code) {
			return dst, false
		}
		code += rune(i / (n + 1))
		i %= n + 1
		if n == len(out) || code < pcInitialN || !utf8.ValidRune(code) {
			return dst, false
		}
		copy(out[i+1:n+1], out[i:n])
		out[i] = code
		n++
		i++
		inserted = true
	}
	if !inserted {
		return dst, false
	}
	for _, r := range out[:n] {
		dst = utf8.AppendRune(dst, r)
	}
	return dst, true
}

func punyDigit(c byte) int {
	switch {
	case 'a' <= c && c <= 'z':
		return int(c - 'a')
	case 'A' <= c && c <= 'Z':
		return int(c - 'A')
	case '0' <= c && c <= '9':
		return int(c-'0') + 26
	}
	return -1
}

func punyAdapt(delta, points int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / points
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}
