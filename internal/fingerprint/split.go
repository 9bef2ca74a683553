package fingerprint

import "strings"

// Data can leave in the address rather than the body: hex or base32 in
// the labels of a host name (4a6f686e.7465.attacker.example, which a DNS
// lookup delivers), or base64 across the segments of a URL path or the
// keys or values of its query. Each piece is too short to be a run worth
// decoding, and the dots and slashes between them end every run. These
// rewrites join the pieces so that the alphabets can decode the join.
//
// A URL here is a run of URL characters that holds a dot and starts
// with a host name, after a scheme (https://) and user information if it
// has them: labels of letters, digits and hyphens joined by dots, the
// last all letters. The host's labels but the last two (the registered
// domain, roughly: the attacker's own name) and a leading www are the
// pieces of its host; when there are two or more and
// they hold at least minToken bytes, their join is offered. Path
// segments, query keys and query values are three sequences of pieces;
// in each, a group is two or more pieces in a row made only of
// base64url characters, and a group is joined from the first piece at
// which the join decodes to text in one of the alphabets (which finds
// base64 after the words of a path like /api/v1/upload/). Every join of
// a view goes into one view, a line each.

// joinHostLabels appends the joins of the hosts of the view's URLs.
func joinHostLabels(dst []byte, s string, _ *patches) ([]byte, bool) {
	return joinURLs(dst, s, true)
}

// joinPathSegments appends the joins of the paths and queries of the
// view's URLs that decode.
func joinPathSegments(dst []byte, s string, _ *patches) ([]byte, bool) {
	return joinURLs(dst, s, false)
}

func joinURLs(dst []byte, s string, hosts bool) ([]byte, bool) {
	start := len(dst)
	var scratch []byte
	// Every host name has a dot; a URL is found from one, so that words
	// and sentences cost a search for the next dot.
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], '.')
		if k < 0 {
			break
		}
		if d := i + k; d == 0 || d+1 >= len(s) || !isAlnum(s[d-1]) || !isAlnum(s[d+1]) {
			i = d + 1
			continue // a full stop, not a dot in a name
		}
		// The name may begin before i, after a dot that was skipped.
		a, b := i+k, i+k
		for a > 0 && urlByte[s[a-1]] {
			a--
		}
		for b < len(s) && urlByte[s[b]] {
			b++
		}
		i = b + 1
		tok := s[a:b]
		host, rest, ok := splitURL(tok)
		switch {
		case !ok:
		case hosts:
			dst = appendHostJoin(dst, start, host)
		default:
			path, query, _ := strings.Cut(rest, "?")
			query, _, _ = strings.Cut(query, "#")
			path, _, _ = strings.Cut(path, "#")
			dst, scratch = appendDecodableJoin(dst, start, scratch, path, "/", false)
			dst, scratch = appendDecodableJoin(dst, start, scratch, query, "&", true)
		}
	}
	return dst, len(dst) > start
}

// urlByte marks the bytes of RFC 3986 URLs but quotes and brackets,
// which end a URL in prose.
var urlByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("-._~:/?#@!$&*+,;=%", byte(c)) >= 0
	}
	return t
}()

// splitURL splits a URL into its host and the rest (path, query and
// fragment), and reports whether it has a host name.
func splitURL(tok string) (host, rest string, ok bool) {
	tok = strings.TrimRight(tok, ".,;:!?")
	if _, after, found := strings.Cut(tok, "://"); found {
		tok = after
	}
	end := strings.IndexAny(tok, "/?#")
	if end < 0 {
		end = len(tok)
	}
	host, rest = tok[:end], tok[end:]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = host[at+1:]
	}
	if c := strings.LastIndexByte(host, ':'); c >= 0 {
		host = host[:c]
	}
	return host, rest, isHostName(host)
}

// isHostName reports two or more labels of letters, digits and hyphens
// joined by dots, the last of two or more letters.
func isHostName(h string) bool {
	dot := strings.LastIndexByte(h, '.')
	if dot <= 0 || len(h)-dot-1 < 2 {
		return false
	}
	for i := dot + 1; i < len(h); i++ {
		if !isLetter(h[i]) {
			return false
		}
	}
	for i := 0; i < dot; i++ {
		if c := h[i]; !isAlnum(c) && c != '-' && (c != '.' || i == 0 || h[i-1] == '.') {
			return false
		}
	}
	return true
}

// appendHostJoin appends, on a line of its own, the join of the labels of
// host but the last two and a leading www, when there are two or more
// and they hold at least minToken bytes.
func appendHostJoin(dst []byte, start int, host string) []byte {
	if strings.Count(host, ".") < 3 {
		return dst // at most one label besides the domain
	}
	labels := strings.Split(host, ".")
	labels = labels[:len(labels)-2]
	if len(labels) > 0 && strings.EqualFold(labels[0], "www") {
		labels = labels[1:]
	}
	n := 0
	for _, l := range labels {
		n += len(l)
	}
	if len(labels) < 2 || n < minToken {
		return dst
	}
	if len(dst) > start {
		dst = append(dst, '\n')
	}
	for _, l := range labels {
		dst = append(dst, l...)
	}
	return dst
}

// appendDecodableJoin splits part at sep (and, for a query, each piece
// at =, keys and values apart), and appends, a line each, the join of
// every group of pieces that decodes to text.
func appendDecodableJoin(dst []byte, start int, scratch []byte, part, sep string, query bool) ([]byte, []byte) {
	if !strings.Contains(part, sep) {
		return dst, scratch
	}
	var keys, values []string
	for p := range strings.SplitSeq(part, sep) {
		if !query {
			keys = append(keys, p)
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		keys, values = append(keys, k), append(values, v)
	}
	for _, pieces := range [][]string{keys, values} {
		for i := 0; i < len(pieces); {
			j := i
			for j < len(pieces) && isPiece(pieces[j]) {
				j++
			}
			if j-i >= 2 {
				var join []byte
				if join, scratch = decodableJoin(scratch, pieces[i:j]); join != nil {
					if len(dst) > start {
						dst = append(dst, '\n')
					}
					dst = append(dst, join...)
				}
			}
			i = j + 1
		}
	}
	return dst, scratch
}

// isPiece reports a piece made only of base64url characters (which
// include those of hex and base32) and = padding.
func isPiece(p string) bool {
	if p == "" {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !isAlnum(c) && c != '-' && c != '_' && c != '=' {
			return false
		}
	}
	return true
}

// decodableJoin returns the join of pieces from the first start at which
// it is a run of one alphabet that decodes to text, or nil. The pieces
// are joined once, in scratch (returned for reuse); each start is a
// suffix of the join, and costs a decoding of its head.
func decodableJoin(scratch []byte, pieces []string) ([]byte, []byte) {
	join := scratch[:0]
	var starts []int
	for _, p := range pieces {
		starts = append(starts, len(join))
		join = append(join, strings.TrimRight(p, "=")...)
	}
	for _, k := range starts[:len(starts)-1] {
		if decodesToText(join[k:]) {
			return join[k:], join
		}
	}
	return nil, join
}

// decodesToText reports whether run is all of one alphabet and decodes
// to at least minEvidence bytes of plain text in it (see isPlainText:
// joins are guesses, and path words decode to printable noise now and
// then). Only the first headLen characters are read before the whole run
// is.
func decodesToText(run []byte) bool {
	var buf [headLen]byte
	head := run[:min(len(run), headLen)]
	for _, a := range encAlphabets {
		if !a.all(head) || a.decodedLen(len(run)) < minEvidence {
			continue
		}
		if b, ok := a.decode(buf[:0], head); !ok || !isPlainText(b) {
			continue
		}
		if len(run) == len(head) {
			return true
		}
		if b, ok := a.decode(nil, run); ok && a.all(run) && isText(b) {
			return true
		}
	}
	return false
}

// all reports whether every byte of run is in the alphabet.
func (a *alphabet) all(run []byte) bool {
	for _, c := range run {
		if a.mask[c] == 0 {
			return false
		}
	}
	return len(run) > 0
}
