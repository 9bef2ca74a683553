package detect

import (
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// The phrase detectors do not use regular expressions: a pattern is a short
// sequence of steps over word tokens (see compilePattern), and every word a
// pattern names is interned in one lexicon trie. Tokenising a field resolves
// each token against the trie once; matching a step is then a comparison of
// small integers. A match never leaves its sentence and never spans more
// than maxWin tokens, and the matcher memoises (step, token) pairs, so the
// work per starting token is bounded by a constant: phrase matching is
// linear in the length of the text whatever the text is.

const maxWin = 40 // tokens a match may span

// lexicon is a byte trie of every word the patterns use. A word is either
// exact (the whole token) or a prefix (any token that starts with it, e.g.
// "instruct*").
type lexicon struct {
	root   [256]int32
	nodes  []lexNode
	words  []string
	frozen bool
	cells  []lexCell // the trie as a double array (after finalize), state 0 the root
	pairs  []int32   // the state after two ASCII word bytes (see pairIndex), or lexDead
	pref   []int16   // the prefix entry of each cell's state, or -1
	exact  []int16   // the exact entry of each cell's state, or -1
}

type lexNode struct {
	edges []lexEdge
	dense *[256]int32 // edges as a table: only the reference scanner's tests build these
	exact int16
	pref  int16
}

type lexEdge struct {
	b  byte
	to int32
}

// lexCell is one cell of the lexicon as a double-array trie, the form the
// tokeniser walks: the state after byte c from state s is t = cells[s].base
// + c if cells[t].check == s, and there is none otherwise. Two loads per
// byte, no search of a node's edges, and four bytes per cell (36 KB for
// the whole lexicon), so the trie stays in the cache while the detectors
// run. The few states where a prefix entry ends are marked in base; their
// entries are in lexicon.pref.
type lexCell struct {
	base  int16 // where this state's children start (plus their byte), | cellPref
	check int16 // the state whose child this cell is; -1: free
}

// cellPref marks the base of a state where a prefix entry ends; states and
// bases are below it.
const (
	cellPref = 1 << 14
	cellBase = cellPref - 1
)

// lexDead is the state of a token that no lexicon entry starts.
const lexDead = -1

var lex = newLexicon()

func newLexicon() *lexicon {
	return &lexicon{nodes: []lexNode{{exact: -1, pref: -1}}}
}

func (l *lexicon) child(n int32, b byte, create bool) int32 {
	if n == 0 {
		if c := l.root[b]; c != 0 || !create {
			return c
		}
		l.nodes = append(l.nodes, lexNode{exact: -1, pref: -1})
		l.root[b] = int32(len(l.nodes) - 1)
		return l.root[b]
	}
	nd := &l.nodes[n]
	if nd.dense != nil {
		return nd.dense[b]
	}
	for _, e := range nd.edges {
		if e.b == b {
			return e.to
		}
	}
	if !create {
		return 0
	}
	l.nodes = append(l.nodes, lexNode{exact: -1, pref: -1})
	to := int32(len(l.nodes) - 1)
	l.nodes[n].edges = append(l.nodes[n].edges, lexEdge{b, to})
	return to
}

// intern returns the id of a normalised word (one token).
func (l *lexicon) intern(w string, prefix bool) int16 {
	if l.frozen {
		panic("detect: lexicon extended after init")
	}
	if prefix && len(w) < 3 {
		panic(fmt.Sprintf("detect: prefix %q shorter than 3 bytes", w))
	}
	n := int32(0)
	for i := 0; i < len(w); i++ {
		n = l.child(n, w[i], true)
	}
	p := &l.nodes[n].exact
	if prefix {
		p = &l.nodes[n].pref
	}
	if *p < 0 {
		if len(l.words) >= 1<<15-1 {
			panic("detect: lexicon full")
		}
		l.words = append(l.words, w)
		*p = int16(len(l.words) - 1)
	}
	return *p
}

func (t *token) has(id int16) bool {
	for i := uint8(0); i < t.nid; i++ {
		if t.ids[i] == id {
			return true
		}
	}
	return false
}

// step kinds
const (
	stWords     uint8 = iota // one of several token sequences
	stGap                    // 0..gap arbitrary tokens
	stSentStart              // ^: the next token starts a sentence
	stSentEnd                // $: the previous token ends a sentence
	stColon                  // ':' follows the previous token
)

type step struct {
	kind       uint8
	opt        bool
	gap        int
	single     []int16  // single-token alternatives, while compiling
	set        []uint64 // the same as a bitset over lexicon ids (after finalize)
	first      []uint64 // bitset of every id a match can start with
	firstWords []uint16 // the indices of first's non-zero words
	// first folded to 64 bits (id&63), and first as a list when it is
	// short: quick tests of whether a window's ids can start the step
	firstSig uint64
	firstFew []int16
	multi    [][]int16 // multi-token alternatives
}

// allSteps lists every compiled step, so finalizeSteps can turn their
// word lists into bitsets once the lexicon is complete.
var allSteps []*step

func registerSteps(steps []step) {
	for i := range steps {
		allSteps = append(allSteps, &steps[i])
	}
}

// buildCells lays the trie out as a double array: each node, in
// breadth-first order, gets the lowest base at which all its children's
// cells are free. The array ends with 256 spare cells, so base+c never
// runs past it.
func (l *lexicon) buildCells() {
	children := func(n int32) []lexEdge {
		if n == 0 {
			var es []lexEdge
			for b, to := range l.root {
				if to != 0 {
					es = append(es, lexEdge{byte(b), to})
				}
			}
			return es
		}
		return l.nodes[n].edges
	}
	cells := make([]lexCell, 0, 4*len(l.nodes))
	var pref, exact []int16
	// skip[i] leads to the first free cell at or after i: path-compressed,
	// so finding a free cell does not walk the taken ones again
	var skip []int32
	grow := func(n int) {
		for len(cells) < n {
			skip = append(skip, int32(len(cells)))
			cells = append(cells, lexCell{check: -1})
			pref, exact = append(pref, -1), append(exact, -1)
		}
	}
	nextFree := func(i int32) int32 {
		f := i
		for {
			grow(int(f) + 1)
			if cells[f].check < 0 {
				break
			}
			f = skip[f]
		}
		for i < f && skip[i] != f {
			i, skip[i] = skip[i], f
		}
		return f
	}
	take := func(t int32, s int32) {
		cells[t].check = int16(s)
		skip[t] = t + 1
	}
	grow(1 + 256)
	take(0, 0)                           // the root is taken
	state := make([]int32, len(l.nodes)) // trie node → cell
	queue := []int32{0}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		s := state[n]
		nd := &l.nodes[n]
		pref[s], exact[s] = nd.pref, nd.exact
		if nd.pref >= 0 {
			cells[s].base |= cellPref
		}
		es := children(n)
		if len(es) == 0 {
			continue
		}
		lo := es[0].b
		for _, e := range es {
			lo = min(lo, e.b)
		}
		// the lowest child must land on a free cell, so only free cells
		// are tried for it; probing every base instead made building the
		// array quadratic in the lexicon (most cells are taken)
		base := int32(0)
		for f := nextFree(max(1, int32(lo)+1)); ; f = nextFree(f + 1) {
			base = f - int32(lo)
			grow(int(base) + 256 + 1)
			ok := true
			for _, e := range es {
				if cells[base+int32(e.b)].check >= 0 {
					ok = false
					break
				}
			}
			if ok {
				break
			}
		}
		if int(base)+256 >= cellBase {
			panic("detect: lexicon too large for its double array")
		}
		cells[s].base |= int16(base)
		for _, e := range es {
			t := base + int32(e.b)
			take(t, s)
			state[e.to] = t
			queue = append(queue, e.to)
		}
	}
	grow(len(cells) + 256)
	l.cells, l.pref, l.exact = cells, pref, exact
	// the first two bytes of a token, when both are ASCII letters or
	// digits, are one lookup; no prefix entry ends there (intern refuses
	// prefixes shorter than three bytes), so none is skipped
	pairs := make([]int32, 36*36)
	for _, c1 := range []byte(asciiWordBytes) {
		for _, c2 := range []byte(asciiWordBytes) {
			t := l.next(0, c1)
			if t != lexDead {
				t = l.next(t, c2)
			}
			pairs[pairIndex(c1, c2)] = t
		}
	}
	l.pairs = pairs
}

const asciiWordBytes = "abcdefghijklmnopqrstuvwxyz0123456789"

// pairIndex numbers two ASCII letters or digits from 0 to 36*36-1.
func pairIndex(c1, c2 byte) int { return int(wordByteIndex[c1])*36 + int(wordByteIndex[c2]) }

var wordByteIndex = func() (t [256]uint8) {
	for k := 0; k < len(asciiWordBytes); k++ {
		t[asciiWordBytes[k]] = uint8(k)
	}
	return t
}()

// next returns the state after byte c from state s (not lexDead), or
// lexDead.
func (l *lexicon) next(s int32, c byte) int32 {
	if l.cells == nil {
		// during init, before the double array is built: walk the trie,
		// whose node numbers serve as states
		if t := l.child(s, c, false); t != 0 {
			return t
		}
		return lexDead
	}
	t := int32(l.cells[s].base&cellBase) + int32(c)
	if l.cells[t].check == int16(s) {
		return t
	}
	return lexDead
}

// entries returns the prefix and exact entries that end in state s (not
// lexDead).
func (l *lexicon) entries(s int32) (pref, exact int16) {
	if l.cells == nil {
		return l.nodes[s].pref, l.nodes[s].exact
	}
	return l.pref[s], l.exact[s]
}

// finalizeSteps builds the bitsets of every step and the lexicon's double
// array.
func finalizeSteps() {
	seqMemo = nil
	lex.buildCells()
	words := (len(lex.words) + 63) / 64
	for _, st := range allSteps {
		st.set = make([]uint64, words)
		st.first = make([]uint64, words)
		for _, id := range st.single {
			st.set[id>>6] |= 1 << (id & 63)
			st.first[id>>6] |= 1 << (id & 63)
		}
		for _, alt := range st.multi {
			st.first[alt[0]>>6] |= 1 << (alt[0] & 63)
		}
		for w, x := range st.first {
			if x != 0 {
				st.firstWords = append(st.firstWords, uint16(w))
			}
			st.firstSig |= x
		}
		if n := bitCount(st.first); n <= maxFew {
			for w, x := range st.first {
				for ; x != 0; x &= x - 1 {
					st.firstFew = append(st.firstFew, int16(w<<6+bits.TrailingZeros64(x)))
				}
			}
		}
	}
}

// intersects reports whether two bitsets of lexicon ids share one.
func intersects(a, b []uint64) bool {
	for w := range min(len(a), len(b)) {
		if a[w]&b[w] != 0 {
			return true
		}
	}
	return false
}

// maxFew is the most first ids a step lists in firstFew.
const maxFew = 8

func bitCount(set []uint64) int {
	n := 0
	for _, x := range set {
		n += bits.OnesCount64(x)
	}
	return n
}

// hasTok reports whether token t is one of the step's single-token words.
func (st *step) hasTok(t *token) bool {
	for i := uint8(0); i < t.nid; i++ {
		id := t.ids[i]
		if st.set[id>>6]&(1<<(id&63)) != 0 {
			return true
		}
	}
	return false
}

// canStart reports whether a match of the step can start at token t.
func (st *step) canStart(t *token) bool {
	for i := uint8(0); i < t.nid; i++ {
		id := t.ids[i]
		if st.first[id>>6]&(1<<(id&63)) != 0 {
			return true
		}
	}
	return false
}

// seqAt reports whether the token sequence alt matches at ti.
func seqAt(v *view, alt []int16, ti, limit int) bool {
	if ti+len(alt)-1 > limit {
		return false
	}
	for k, id := range alt {
		if !v.toks[ti+k].has(id) {
			return false
		}
	}
	return true
}

// matchAt reports whether a words step matches at ti, and the longest
// length.
func (st *step) matchAt(v *view, ti, limit int) int {
	if ti > limit || ti >= len(v.toks) || !st.canStart(&v.toks[ti]) {
		return 0
	}
	best := 0
	if st.hasTok(&v.toks[ti]) {
		best = 1
	}
	for _, alt := range st.multi {
		if len(alt) > best && seqAt(v, alt, ti, limit) {
			best = len(alt)
		}
	}
	return best
}

// firstIDs returns the ids a match of this step can start with.
func (st *step) firstIDs() []int16 {
	ids := append([]int16(nil), st.single...)
	for _, alt := range st.multi {
		ids = append(ids, alt[0])
	}
	return ids
}

// classes are named alternatives patterns can refer to with @name.
var classes = map[string]string{}

// compilePattern turns a pattern into steps. Syntax, separated by spaces:
//
//	word        the token "word" (normalised like the text)
//	word*       any token starting with "word"
//	"a b"       inside {…}: a sequence of tokens
//	{a|b c|d*}  one of the alternatives
//	@name       the alternatives of class name
//	X?          X is optional
//	~N          0 to N arbitrary tokens
//	^ $ :       sentence start, sentence end, a colon after the previous token
func compilePattern(p string) []step {
	var steps []step
	i := 0
	for i < len(p) {
		c := p[i]
		switch {
		case c == ' ':
			i++
			continue
		case c == '~':
			j := i + 1
			n := 0
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				n = n*10 + int(p[j]-'0')
				j++
			}
			steps = append(steps, step{kind: stGap, gap: n})
			i = j
			continue
		case c == '^' && (i+1 == len(p) || p[i+1] == ' '):
			steps = append(steps, step{kind: stSentStart})
			i++
			continue
		case c == '$' && (i+1 == len(p) || p[i+1] == ' '):
			steps = append(steps, step{kind: stSentEnd})
			i++
			continue
		case c == ':' && (i+1 == len(p) || p[i+1] == ' '):
			steps = append(steps, step{kind: stColon})
			i++
			continue
		}
		var body string
		switch c {
		case '{':
			j := strings.IndexByte(p[i:], '}')
			if j < 0 {
				panic("detect: unclosed { in pattern " + p)
			}
			body = p[i+1 : i+j]
			i += j + 1
		case '@':
			j := i + 1
			for j < len(p) && p[j] != ' ' && p[j] != '?' {
				j++
			}
			b, ok := classes[p[i+1:j]]
			if !ok {
				panic("detect: unknown class " + p[i:j] + " in pattern " + p)
			}
			body = b
			i = j
		default:
			j := i
			for j < len(p) && p[j] != ' ' && p[j] != '?' {
				j++
			}
			body = p[i:j]
			i = j
		}
		st := step{kind: stWords}
		if i < len(p) && p[i] == '?' {
			st.opt = true
			i++
		}
		st.addAlts(body)
		steps = append(steps, st)
	}
	first := 0
	if len(steps) > 1 && steps[0].kind == stSentStart {
		first = 1
	}
	if len(steps) == 0 || steps[first].kind != stWords || steps[first].opt {
		panic("detect: pattern must start with a required word step: " + p)
	}
	if len(steps)*(maxWin+1) > 64*len(matcher{}.seen) {
		panic("detect: pattern too long: " + p)
	}
	return steps
}

// addAlts adds "a|b c|d*" (classes may be referenced inside as @name).
func (st *step) addAlts(body string) {
	for _, alt := range strings.Split(body, "|") {
		alt = strings.TrimSpace(alt)
		if alt == "" {
			continue
		}
		if alt[0] == '@' {
			b, ok := classes[alt[1:]]
			if !ok {
				panic("detect: unknown class " + alt)
			}
			st.addAlts(b)
			continue
		}
		seq := wordSeq(alt)
		if len(seq) == 0 {
			panic("detect: empty alternative in " + body)
		}
		if len(seq) == 1 {
			st.single = append(st.single, seq[0])
		} else {
			st.multi = append(st.multi, seq)
		}
	}
}

// seqMemo holds wordSeq's answers while the patterns compile: a class
// such as @act is expanded into every pattern that names it, and
// normalising its words once per use was most of what loading the
// package cost. finalizeSteps drops it.
var seqMemo = map[string][]int16{}

// wordSeq interns the tokens of one alternative. The slice it returns is
// shared by every step with that alternative: nothing writes to it.
func wordSeq(alt string) []int16 {
	if seq, ok := seqMemo[alt]; ok {
		return seq
	}
	seq := wordSeqOf(alt)
	if seqMemo != nil {
		seqMemo[alt] = seq
	}
	return seq
}

func wordSeqOf(alt string) []int16 {
	var seq []int16
	for _, w := range strings.Fields(alt) {
		prefix := strings.HasSuffix(w, "*")
		w = strings.TrimSuffix(w, "*")
		v := newView(w)
		for k, t := range v.toks {
			seq = append(seq, lex.intern(string(v.norm[t.start:t.end]), prefix && k == len(v.toks)-1))
		}
		// thousands of words are compiled at start: one view's buffers
		// serve them all, instead of a heap of garbage the process holds
		// on to
		v.release()
	}
	return seq
}

// wordSet compiles a class body into a single words step, for window
// checks (cue words, request verbs…).
func wordSet(body string) *step {
	st := &step{kind: stWords}
	st.addAlts(body)
	allSteps = append(allSteps, st)
	return st
}

// anyIn reports whether st matches at some token in [a, b] (clipped to the
// text and to the sentence of token b if sameSentence is set).
func (st *step) anyIn(v *view, a, b int) bool {
	if a < 0 {
		a = 0
	}
	if b >= len(v.toks) {
		b = len(v.toks) - 1
	}
	for k := a; k <= b; k++ {
		if st.matchAt(v, k, b) > 0 {
			return true
		}
	}
	return false
}

type matcher struct {
	v            *view
	steps        []step
	start, limit int
	seen         [24]uint64
}

// run tries the pattern at token start and returns the index one past the
// last token of the match, or -1.
func (m *matcher) run(v *view, steps []step, start int) int {
	m.v, m.steps, m.start = v, steps, start
	m.limit = int(v.toks[start].sentEnd)
	if m.limit > start+maxWin-1 {
		m.limit = start + maxWin - 1
	}
	m.seen = [24]uint64{}
	return m.dfs(0, start)
}

func (m *matcher) dfs(si, ti int) int {
	if si == len(m.steps) {
		return ti
	}
	key := si*(maxWin+1) + (ti - m.start)
	if m.seen[key>>6]&(1<<(key&63)) != 0 {
		return -1
	}
	m.seen[key>>6] |= 1 << (key & 63)
	st := &m.steps[si]
	switch st.kind {
	case stGap:
		for k := 0; k <= st.gap && ti+k <= m.limit+1; k++ {
			if e := m.dfs(si+1, ti+k); e >= 0 {
				return e
			}
		}
		return -1
	case stSentStart:
		if ti <= m.limit && m.v.toks[ti].flags&tokSentStart != 0 {
			return m.dfs(si+1, ti)
		}
		return -1
	case stSentEnd:
		if ti > m.start && ti-1 == int(m.v.toks[ti-1].sentEnd) {
			return m.dfs(si+1, ti)
		}
		return -1
	case stColon:
		if ti > m.start && m.v.toks[ti-1].flags&tokColonAfter != 0 {
			return m.dfs(si+1, ti)
		}
		return -1
	}
	if ti <= m.limit {
		tk := &m.v.toks[ti]
		if tk.nid > 0 && st.canStart(tk) {
			if st.hasTok(tk) {
				if e := m.dfs(si+1, ti+1); e >= 0 {
					return e
				}
			}
			for _, alt := range st.multi {
				if tk.has(alt[0]) && seqAt(m.v, alt, ti, m.limit) {
					if e := m.dfs(si+1, ti+len(alt)); e >= 0 {
						return e
					}
				}
			}
		}
	}
	if st.opt {
		return m.dfs(si+1, ti)
	}
	return -1
}

// validUTF8Prefix trims s to at most n bytes without splitting a rune.
func validUTF8Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
