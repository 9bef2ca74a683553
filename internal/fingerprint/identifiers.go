package fingerprint

import (
	"cmp"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IdentKind is the kind of an identifier found by Identifiers.
type IdentKind uint8

// The kinds of identifier. They are named Ident… because URL, Hex and
// Base64 already name Encodings in this package.
const (
	IdentURL    IdentKind = iota + 1 // http(s) or www. URL, or its bare host
	IdentEmail                       // e-mail address
	IdentIBAN                        // IBAN or IBAN-shaped account id
	IdentHex                         // long hex or decimal id, hash or UUID
	IdentBase64                      // long base64 or base64url token, JWT
)

var identKindNames = [...]string{IdentURL: "url", IdentEmail: "email", IdentIBAN: "iban", IdentHex: "hex", IdentBase64: "base64"}

func (k IdentKind) String() string {
	if int(k) < len(identKindNames) && identKindNames[k] != "" {
		return identKindNames[k]
	}
	return "IdentKind(" + strconv.Itoa(int(k)) + ")"
}

// Identifier bounds, in bytes of the canonical form. Longer values are
// data rather than identifiers, and fingerprints cover them.
const (
	minIdentHex    = 16
	minIdentBase64 = 20
	maxIdentOpaque = 1024 // hex and base64
	maxIdentURL    = 4096 // longer URLs give their host only
	maxEmailLocal  = 64
	maxEmail       = 254
)

// Identifiers calls fn with the canonical form of every identifier in
// text, once each, in order of first appearance (identifiers that start
// at the same byte in the order their kinds are listed below, a URL before
// its host).
//
// Identifiers attribute a sink argument to the result it was copied from
// when the value is far shorter than the 35 normalised bytes fingerprints
// need: "the to field came from an untrusted page". Both sides run this
// function: each identifier of a result is stored as a keyed Digest of
// its canonical form, and each string of a sink call's arguments (and each
// decoded view of it) is scanned the same way and looked up. So every
// rule is deterministic and context-free: an identifier is found, with
// the same canonical form, whether it stands alone or sits in prose, JSON
// or Markdown, as long as a separator (space, quote, bracket, comma,
// sentence punctuation…) divides it from its neighbours. Unlike Tokens,
// Identifiers wants low-entropy values too: an e-mail address or a host
// is exactly what an injection asks the agent to copy.
//
// The kinds, and their canonical forms:
//
//   - IdentURL. A URL starts with http:// or https:// (any case) or with
//     www. (any case) at the start of a word: not after a letter, digit,
//     or one of + / _ - . @. The host is a name of labels (ASCII letters,
//     digits and hyphens, or letters of any script) whose last label is a
//     top-level domain (two or more letters, or xn--…); after a scheme it
//     may also be an IPv4 address, a bracketed IPv6 address or localhost.
//     The URL runs on over an optional :port and the path, query and
//     fragment, which are made of RFC 3986 characters other than ' [ ]
//     (quotes and brackets end a URL in prose and Markdown) and letters
//     and digits of any script. The canonical form is the lowercased host
//     without the scheme, the user information or a leading www. (so the
//     http, https, www. and bare-host spellings of one address agree),
//     then the port unless it is 80 or 443, then the path and query as
//     written; the fragment is dropped, then trailing . , ; : ! ? * & and an
//     unbalanced ) are trimmed and so is a trailing slash of the path,
//     until none is left. The host alone is reported as a second IdentURL
//     identifier, so a sink argument that names only the host (www.evil.com
//     or https://evil.com/other) is attributed too. Hosts are not
//     IDNA-mapped (golang.org/x/net is not a dependency): they are
//     lowercased rune by rune, so a Unicode host and its xn-- A-label are
//     different identifiers. A name without a scheme or www. (report.pdf,
//     main.go, example.com) is not a URL: file names look the same.
//     Non-http schemes (ftp:, file:, javascript:) are not URLs either. A
//     URL longer than 4096 bytes gives its host only.
//   - IdentEmail. local@domain, where the local part is ASCII letters,
//     digits and . _ + - (without leading dots; at most 64 bytes) and the
//     domain is a host name as for URLs, with a dot and a top-level
//     domain. Quoted local parts and the rarer RFC 5322 symbols are not
//     recognised: they would make key=alice@example.com an address with
//     the local part key=alice. The canonical form is the address in
//     lowercase (local parts are case-sensitive in theory, never in
//     practice).
//   - IdentIBAN. Two capital letters, two digits and 10 to 30 capitals or
//     digits, written compact or in groups of four separated by single
//     spaces (GB29 NWBK 6016 1331 9268 19), with the ISO 13616 mod-97
//     checksum valid; or the same shape with at least 12 characters after
//     the check digits, even when the checksum fails. Attribution wants the
//     exact account string the agent copied, not a valid account: the
//     injections of the AgentDojo benchmark send money to
//     US133000000121212121212, whose checksum is wrong. The country code
//     is not checked against a list for the same reason. Lowercase is not
//     accepted, and an IBAN-shaped value made of hex digits only (DE12…)
//     whose checksum fails is hex, so that a hash in lowercase is never an
//     IBAN and the same hash in capitals almost never (1 in 97 of those
//     starting with two of A–F and two digits). The canonical form is
//     uppercase without spaces. Grouped values stop at the first group
//     shorter than four characters; when the groups go on, the longest
//     prefix with a valid checksum is taken, or, if none, all of them (so
//     a fake IBAN in groups directly followed by a word of four capitals
//     or digits takes that word in).
//   - IdentHex. A word of 16 to 1024 hex digits (after an optional 0x),
//     with at least one decimal digit and at least four distinct digits
//     (0000… and ffff… are constants, not identifiers): hashes, ids, long
//     decimal numbers (order, account and card numbers written without
//     separators). A UUID (8-4-4-4-12 hex digits) is one identifier. The
//     canonical form is the hex digits in lowercase, without 0x or dashes.
//   - IdentBase64. A run of 20 to 1024 characters of the base64 and
//     base64url alphabets (letters, digits, + / _ -, with up to two = of
//     padding; leading and trailing + / _ - are trimmed), holding at least
//     one digit, one uppercase and one lowercase letter, that is not a
//     name (Meeting-Room-4B-North, see Tokens' word rule) nor a path of
//     names, nor hex or IBAN. A run holding / is also split at the slashes
//     and each segment considered, so a token in a URL path is found
//     whatever precedes it. A JWT (three or more dot-separated runs, the
//     first starting with eyJ, 20 to 1024 bytes in all) is one
//     identifier, whole, and its parts are not considered: the first is
//     the same for every token signed with the same algorithm. The
//     canonical form is the run (or JWT) as written.
//
// A word is a maximal run of ASCII letters and digits; hex and IBAN
// identifiers are whole words, found also inside longer runs
// (commit_3f78…, key-US13…), so they may be reported next to the base64
// identifier of the run around them. Identifiers found inside a URL (a token in its
// query, an address in mailto-like parameters) are reported too.
//
// Dates, times, plain words and numbers shorter than 16 digits are never
// identifiers: they lack the letters, digits or length each kind needs.
// Phone numbers are not recognised: a rule loose enough to catch the
// formats people write (+1 (555) 010-0199, 0176 1234567) also matches
// dates, amounts, reference numbers and version strings, and a number an
// agent copies is reformatted as often as not.
//
// Known limits, all symmetric (they affect both sides alike): text glued
// to an identifier without a separator becomes part of it (id-AbC…), and
// so do letters of another script right after a URL path, as paths may
// hold any letters; letters of another script right after a host's
// top-level domain are cut off (example.com获取 is example.com).
//
// Identifiers allocates only for canonical forms that are not a piece of
// the text as written (case changed, spaces or dashes removed, a default
// port or a slash dropped inside a URL) and, when more than 16
// identifiers are found, to sort and deduplicate them. Each byte of text
// is read a small constant number of times.
func Identifiers(text string, fn func(kind IdentKind, canon string)) {
	s := identScanner{text: text}
	s.scan()
	s.emails()
	s.emit(fn)
}

// identMatch is one identifier found, with the byte where it starts.
type identMatch struct {
	start int
	kind  IdentKind
	canon string
}

// identScanner collects the matches of one text. The first few are kept
// in an array inside it, so that a text with few identifiers costs no
// allocation beyond their canonical forms.
type identScanner struct {
	text  string
	n     int // matches in small
	small [16]identMatch
	more  []identMatch
	// The last path scanned, [pathFrom, pathTo): a URL nested in it
	// (…?next=https://…) ends where it ends, so it is not scanned again.
	pathFrom, pathTo int
}

func (s *identScanner) add(start int, kind IdentKind, canon string) {
	m := identMatch{start, kind, canon}
	if s.n < len(s.small) {
		s.small[s.n] = m
		s.n++
		return
	}
	s.more = append(s.more, m)
}

// emit reports the matches in order of start, each (kind, canon) once.
func (s *identScanner) emit(fn func(IdentKind, string)) {
	ms := s.small[:s.n]
	if len(s.more) > 0 {
		ms = append(ms[:s.n:s.n], s.more...)
	}
	if !slices.IsSortedFunc(ms, identByStart) {
		slices.SortStableFunc(ms, identByStart)
	}
	if len(ms) <= 32 {
		for i, m := range ms {
			if !slices.ContainsFunc(ms[:i], func(p identMatch) bool { return p.kind == m.kind && p.canon == m.canon }) {
				fn(m.kind, m.canon)
			}
		}
		return
	}
	type key struct {
		kind  IdentKind
		canon string
	}
	seen := make(map[key]struct{}, len(ms))
	for _, m := range ms {
		k := key{m.kind, m.canon}
		if _, ok := seen[k]; !ok {
			seen[k] = struct{}{}
			fn(m.kind, m.canon)
		}
	}
}

// identByStart orders matches by start, then kind.
func identByStart(a, b identMatch) int {
	return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.kind, b.kind))
}

// Byte classes.
const (
	icRun   = 1 << iota // base64 ∪ base64url alphabet: letters, digits, + / _ -
	icLocal             // e-mail local part: letters, digits, . _ + -
	icPath              // URL path, query and fragment (ASCII part)
	icUser              // URL user information
)

var identClass = func() (t [256]uint8) {
	set := func(chars string, c uint8) {
		for i := 0; i < len(chars); i++ {
			t[chars[i]] |= c
		}
	}
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	set(alnum+"+/_-", icRun)
	set(alnum+"._+-", icLocal)
	set(alnum+"-._~:/?#@!$&()*+,;=%", icPath)
	set(alnum+"-._~%:!$&*+=;", icUser)
	return t
}()

func isRunByte(c byte) bool { return identClass[c]&icRun != 0 }

// scan walks the runs of the base64 alphabet: each is a candidate for the
// opaque kinds, and a run starting a word may start a URL.
func (s *identScanner) scan() {
	t := s.text
	for i := 0; i < len(t); {
		if !isRunByte(t[i]) {
			i++
			continue
		}
		a := i
		for i < len(t) && isRunByte(t[i]) {
			i++
		}
		// http, https and www are whole runs, ended by : and . .
		if n := i - a; i < len(t) && (n == 3 && t[i] == '.' || (n == 4 || n == 5) && t[i] == ':') {
			if a == 0 || t[a-1] != '.' && t[a-1] != '@' {
				s.url(a)
			}
		}
		// Padding: one or two = ending the run, not followed by more
		// of the alphabet (key=value is two runs).
		pad := 0
		for pad < 2 && i+pad < len(t) && t[i+pad] == '=' {
			pad++
		}
		if pad > 0 && i+pad < len(t) && (t[i+pad] == '=' || isRunByte(t[i+pad])) {
			pad = 0
		}
		if t[a] == 'e' {
			if end := s.jwt(a, i, pad); end > 0 {
				i = end
				continue
			}
		}
		if i-a >= 4 {
			s.run(a, i, pad)
		}
		i += pad
	}
}

// jwt reports a JWT starting with the run t[a:b] as one base64 identifier
// and returns its end, or returns 0.
func (s *identScanner) jwt(a, b, pad int) int {
	t := s.text
	if pad != 0 || !strings.HasPrefix(t[a:b], "eyJ") {
		return 0
	}
	end, parts := b, 1
	for end+1 < len(t) && t[end] == '.' && isRunByte(t[end+1]) {
		k := end + 1
		for k < len(t) && isRunByte(t[k]) {
			k++
		}
		end = k
		parts++
	}
	if parts < 3 || end-a < minIdentBase64 {
		return 0
	}
	if end-a <= maxIdentOpaque {
		s.add(a, IdentBase64, t[a:end])
	}
	return end
}

// run considers the run t[a:b] followed by pad bytes of = padding: the
// IBANs and hex values among its words, and the run and its slash
// segments as base64.
func (s *identScanner) run(a, b, pad int) {
	t := s.text
	if b-a == 4 && pad == 0 && ibanHead(t[a:b]) {
		s.groupedIBAN(a)
		return
	}
	if b-a < 14 { // the shortest IBAN; hex and base64 need more
		return
	}
	// Words: IBANs and hex values.
	for w := a; w < b; {
		if !isAlnum(t[w]) {
			w++
			continue
		}
		e := w
		for e < b && isAlnum(t[e]) {
			e++
		}
		if e-w >= 8 {
			if canon, ok := ibanCompact(t[w:e]); ok {
				s.add(w, IdentIBAN, canon)
			} else if end, canon, ok := uuidAt(t, w, b); ok {
				if canon != "" {
					s.add(w, IdentHex, canon)
				}
				e = end
			} else if canon, ok := hexWord(t[w:e]); ok {
				s.add(w, IdentHex, canon)
			}
		}
		w = e
	}
	// The run, and its segments, as base64.
	ta, whole := trimOpaque(a, t[a:b+pad])
	if strings.IndexByte(whole, '/') < 0 {
		if isBase64Ident(whole) {
			s.add(ta, IdentBase64, whole)
		}
		return
	}
	// A run with slashes is a token whole only if no segment is a name:
	// com/v1/keys/AbC… is a path holding a token, not a token.
	if isBase64Ident(whole) && !hasNameSegment(whole) {
		s.add(ta, IdentBase64, whole)
	}
	for off, rest := ta, whole; rest != ""; {
		k := strings.IndexByte(rest, '/')
		if k < 0 {
			k = len(rest)
		}
		if so, seg := trimOpaque(off, rest[:k]); len(seg) < len(whole) && isBase64Ident(seg) {
			s.add(so, IdentBase64, seg)
		}
		off, rest = off+min(k+1, len(rest)), rest[min(k+1, len(rest)):]
	}
}

// trimOpaque trims + / _ - from both ends of the run r that starts at
// off (a padded run ends in =, which stays) and returns where the rest
// starts.
func trimOpaque(off int, r string) (int, string) {
	for r != "" && strings.IndexByte("+/_-", r[0]) >= 0 {
		r, off = r[1:], off+1
	}
	for r != "" && strings.IndexByte("+/_-", r[len(r)-1]) >= 0 {
		r = r[:len(r)-1]
	}
	return off, r
}

// hasNameSegment reports whether a segment of the slash-separated run r
// looks like a name (see isWordLike) with few case and digit changes
// (wJalrXUtnFEMI is letters only, but not a name).
func hasNameSegment(r string) bool {
	for seg := range strings.SplitSeq(strings.TrimRight(r, "="), "/") {
		if seg != "" && isWordLike(seg) && alternations(seg) <= 3 {
			return true
		}
	}
	return false
}

// isBase64Ident applies the base64 rules to a trimmed run (with its
// padding).
func isBase64Ident(r string) bool {
	if len(r) < minIdentBase64 || len(r) > maxIdentOpaque {
		return false
	}
	body := strings.TrimRight(r, "=")
	var classes byte
	for i := 0; i < len(body); i++ {
		classes |= class(body[i])
	}
	if classes&(classLower|classUpper|classDigit) != classLower|classUpper|classDigit {
		return false
	}
	if isWordLike(body) || isPathLike(body) {
		return false
	}
	if _, ok := ibanCompact(body); ok {
		return false
	}
	if end, _, ok := uuidAt(body, 0, len(body)); ok && end == len(body) {
		return false
	}
	_, ok := hexWord(body)
	return !ok && !isHexRun(strings.TrimPrefix(strings.TrimPrefix(body, "0x"), "0X"))
}

// hexWord reports a word of at least 16 hex digits after an optional 0x,
// with a decimal digit and four distinct digits, in lowercase.
func hexWord(w string) (string, bool) {
	if len(w) > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X') {
		w = w[2:]
	}
	if len(w) < minIdentHex || len(w) > maxIdentOpaque || !isHexRun(w) || !hexRules(w) {
		return "", false
	}
	return strings.ToLower(w), true
}

// hexRules reports whether hex digits hold a decimal digit and at least
// four distinct digits.
func hexRules[S string | []byte](w S) bool {
	var seen uint16
	decimal := false
	for i := 0; i < len(w); i++ {
		seen |= 1 << unhex(w[i])
		decimal = decimal || isDigit(w[i])
	}
	return decimal && bits.OnesCount16(seen) >= 4
}

func isHexRun(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isHexDigit(w[i]) {
			return false
		}
	}
	return len(w) > 0
}

// uuidAt reports a UUID (8-4-4-4-12 hex digits) starting at w and ending
// by b at a word boundary, and its end. canon is its hex digits in
// lowercase, or empty if they fail the hex rules (the nil UUID is a
// constant, not an identifier).
func uuidAt(t string, w, b int) (end int, canon string, ok bool) {
	const shape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
	end = w + len(shape)
	if end > b || end < len(t) && isAlnum(t[end]) {
		return 0, "", false
	}
	var buf [32]byte
	n := 0
	for i := range len(shape) {
		c := t[w+i]
		if shape[i] == '-' {
			if c != '-' {
				return 0, "", false
			}
			continue
		}
		if !isHexDigit(c) {
			return 0, "", false
		}
		buf[n] = c | 0x20 // lowercase for letters, a no-op for digits
		n++
	}
	if !hexRules(buf[:]) {
		return end, "", true
	}
	return end, string(buf[:]), true
}

// ibanHead reports the first group of a grouped IBAN: two uppercase
// letters and two digits.
func ibanHead(g string) bool {
	return len(g) == 4 && isUpper(g[0]) && isUpper(g[1]) && isDigit(g[2]) && isDigit(g[3])
}

// ibanCompact applies the IBAN rules to a word.
func ibanCompact(w string) (string, bool) {
	if len(w) < 14 || len(w) > 34 || !ibanHead(w[:4]) || !upperOrDigits(w) {
		return "", false
	}
	if ibanChecksum(w) || len(w) >= 16 && !isHexRun(w) {
		return w, true
	}
	return "", false
}

// ibanChecksum reports whether the uppercase alphanumeric b passes the ISO
// 13616 mod-97 check.
func ibanChecksum[S string | []byte](b S) bool {
	rem := 0
	add := func(c byte) {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
		} else {
			rem = (rem*100 + int(c-'A') + 10) % 97
		}
	}
	for i := 4; i < len(b); i++ {
		add(b[i])
	}
	for i := range 4 {
		add(b[i])
	}
	return rem == 1
}

// groupedIBAN considers the groups of four that follow the IBAN head at
// a: "GB29 NWBK 6016 1331 9268 19".
func (s *identScanner) groupedIBAN(a int) {
	t := s.text
	var buf [34]byte
	n := copy(buf[:], t[a:a+4])
	var lens [9]int // compact length after each group
	lens[0] = n
	ng := 1
	for k := a + 4; ng < len(lens) && k+1 < len(t) && t[k] == ' '; {
		g := k + 1
		e := g
		for e < len(t) && isAlnum(t[e]) {
			e++
		}
		// A group is a whole run of at most four capitals or digits.
		if e == g || e-g > 4 || n+e-g > len(buf) || !upperOrDigits(t[g:e]) || e < len(t) && isRunByte(t[e]) {
			break
		}
		n += copy(buf[n:], t[g:e])
		lens[ng] = n
		ng++
		if e-g < 4 {
			break
		}
		k = e
	}
	for g := ng - 1; g >= 1; g-- {
		if c := buf[:lens[g]]; len(c) >= 14 && ibanChecksum(c) {
			s.add(a, IdentIBAN, string(c))
			return
		}
	}
	if c := buf[:n]; len(c) >= 16 && !isHexRun(string(c)) {
		s.add(a, IdentIBAN, string(c))
	}
}

// emails finds each @ with a local part before it and a domain after it.
func (s *identScanner) emails() {
	t := s.text
	for off := 0; ; {
		k := strings.IndexByte(t[off:], '@')
		if k < 0 {
			return
		}
		at := off + k
		off = at + 1
		a := at
		for a > 0 && identClass[t[a-1]]&icLocal != 0 {
			a--
		}
		for a < at && t[a] == '.' {
			a++
		}
		if a == at || at-a > maxEmailLocal {
			continue
		}
		end := scanHost(t, at+1)
		if end-a > maxEmail || hostKind(t[at+1:end]) != hostName {
			continue
		}
		s.add(a, IdentEmail, strings.ToLower(t[a:end]))
	}
}

// url reports the URL starting at a, if there is one, and its host.
func (s *identScanner) url(a int) {
	t := s.text
	rest := t[a:]
	var hs int // host start
	www := false
	switch {
	case hasPrefixFold(rest, "https://"):
		hs = a + len("https://")
	case hasPrefixFold(rest, "http://"):
		hs = a + len("http://")
	case hasPrefixFold(rest, "www."):
		hs, www = a, true
	default:
		return
	}
	if !www {
		k := hs
		for k < len(t) && identClass[t[k]]&icUser != 0 {
			k++
		}
		if k < len(t) && t[k] == '@' {
			// user:password@host. The user information is dropped.
			hs = k + 1
		}
	}
	var he int // host end
	if !www && hs < len(t) && t[hs] == '[' {
		he = ipv6End(t, hs)
		if he < 0 {
			return
		}
	} else {
		he = scanHost(t, hs)
		switch hostKind(t[hs:he]) {
		case hostName:
		case hostIPv4, hostLocal:
			if www {
				return
			}
		default:
			return
		}
	}
	host := canonHost(t[hs:he])
	// Port: digits after a colon; a colon without them ends the URL.
	pe, port := he, ""
	if he+1 < len(t) && t[he] == ':' && isDigit(t[he+1]) {
		k := he + 1
		for k < len(t) && isDigit(t[k]) {
			k++
		}
		if k-he <= 6 {
			pe = k
			if p := t[he+1 : k]; p != "80" && p != "443" {
				port = t[he:k]
			}
		}
	}
	// Path, query and fragment.
	te := pe
	if pe < len(t) && (t[pe] == '/' || t[pe] == '?' || t[pe] == '#') {
		if s.pathFrom <= pe && pe < s.pathTo {
			te = s.pathTo
		} else {
			te = pathEnd(t, pe)
			s.pathFrom, s.pathTo = pe, te
		}
	}
	if te-pe > maxIdentURL {
		s.add(a, IdentURL, host)
		return
	}
	tail := t[pe:te]
	if h := strings.IndexByte(tail, '#'); h >= 0 {
		tail = tail[:h]
	}
	tail = trimURLTail(tail)
	path, query := tail, ""
	if q := strings.IndexByte(tail, '?'); q >= 0 {
		path, query = tail[:q], tail[q:]
		path = strings.TrimRight(path, "/")
	}
	var canon string
	switch n := len(host) + len(port) + len(path) + len(query); {
	case n > maxIdentURL:
		canon = host
	case len(path)+len(query) == len(tail) && pe-he == len(port) && he-len(host) >= hs && t[he-len(host):he] == host:
		canon = t[he-len(host) : pe+len(tail)] // the text itself: no allocation
	default:
		canon = host + port + path + query
	}
	s.add(a, IdentURL, canon)
	s.add(a, IdentURL, host)
}

// hasPrefixFold reports whether s starts with the lowercase ASCII prefix,
// in any case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}

// canonHost lowercases a host and drops leading www. labels while a dot
// is left.
func canonHost(h string) string {
	h = strings.ToLower(h)
	for hasPrefixFold(h, "www.") && strings.IndexByte(h[4:], '.') > 0 {
		h = h[4:]
	}
	return h
}

// scanHost returns the end of the host name starting at i: ASCII letters,
// digits, hyphens and single dots, and letters, marks and digits of other
// scripts; trailing dots and hyphens are not part of it, nor letters of
// another script than the top-level domain's.
func scanHost(t string, i int) int {
	j := i
	for j < len(t) {
		c := t[j]
		if c < utf8.RuneSelf {
			if isAlnum(c) || c == '-' || c == '.' && j+1 < len(t) && t[j+1] != '.' {
				j++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(t[j:])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r) {
			break
		}
		j += size
	}
	j = trimHost(t, i, j)
	// No top-level domain mixes ASCII with other scripts: example.com获取
	// is example.com followed by a word.
	ld := i + strings.LastIndexByte(t[i:j], '.') + 1
	if ld < j {
		ascii := t[ld] < utf8.RuneSelf
		for k := ld; k < j; k++ {
			if (t[k] < utf8.RuneSelf) != ascii {
				j = trimHost(t, i, k)
				break
			}
		}
	}
	return j
}

func trimHost(t string, i, j int) int {
	for j > i && (t[j-1] == '.' || t[j-1] == '-') {
		j--
	}
	return j
}

// Host kinds.
const (
	hostInvalid = iota
	hostName    // labels and a top-level domain
	hostIPv4
	hostLocal // localhost
)

// hostKind classifies a host as scanHost delimits it.
func hostKind(h string) int {
	if h == "" {
		return hostInvalid
	}
	if strings.EqualFold(h, "localhost") {
		return hostLocal
	}
	labels, numeric := 0, 0
	var last string
	for l := range strings.SplitSeq(h, ".") {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return hostInvalid
		}
		labels++
		if allDigits(l) {
			numeric++
			if v, err := strconv.Atoi(l); err != nil || len(l) > 3 || v > 255 {
				numeric = -1 << 30
			}
		}
		last = l
	}
	if labels == 4 && numeric == 4 {
		return hostIPv4
	}
	if labels < 2 {
		return hostInvalid
	}
	if len(last) > 4 && hasPrefixFold(last, "xn--") {
		return hostName
	}
	runes := 0
	for _, r := range last {
		if !isLetterRune(r) && !unicode.IsMark(r) {
			return hostInvalid
		}
		runes++
	}
	if runes < 2 {
		return hostInvalid
	}
	return hostName
}

// ipv6End returns the end of a bracketed IPv6 address at i, or -1.
func ipv6End(t string, i int) int {
	for k := i + 1; k < len(t) && k-i <= 46; k++ {
		switch c := t[k]; {
		case c == ']':
			if k-i > 2 {
				return k + 1
			}
			return -1
		case isHexDigit(c) || c == ':' || c == '.':
		default:
			return -1
		}
	}
	return -1
}

// pathEnd returns the end of the path, query and fragment starting at i.
func pathEnd(t string, i int) int {
	for i < len(t) {
		c := t[i]
		if c < utf8.RuneSelf {
			if identClass[c]&icPath == 0 {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(t[i:])
		if !unicode.IsLetter(r) && !unicode.IsMark(r) && !unicode.IsDigit(r) {
			return i
		}
		i += size
	}
	return i
}

// trimURLTail trims sentence punctuation, a dangling &, an unbalanced )
// and (outside a query) trailing slashes from the end of a path and query,
// until none is left, so that the canonical form is the same with or
// without them.
func trimURLTail(tail string) string {
	q := strings.IndexByte(tail, '?')
	opens, closes := -1, 0 // counted when a ) is met
	for len(tail) > 0 {
		switch c := tail[len(tail)-1]; {
		case strings.IndexByte(".,;:!?*&", c) >= 0:
		case c == ')':
			if opens < 0 {
				opens, closes = strings.Count(tail, "("), strings.Count(tail, ")")
			}
			if opens >= closes {
				return tail
			}
			closes--
		case c == '/' && q < 0:
		default:
			return tail
		}
		tail = tail[:len(tail)-1]
		if len(tail) <= q {
			q = -1 // the query's ? was trimmed
		}
	}
	return tail
}
