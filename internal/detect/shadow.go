package detect

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// Cross-server shadowing: a definition that names a tool of another server,
// or tells the model how to call a tool this server does not have. Only
// other servers' tools count: "search, then fetch" inside one server is
// that server describing itself.

// commonWords are tool names that are also ordinary words; a description
// using them says nothing about another server.
var commonWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`search fetch read list echo get set put post send write open close find query run
	exec execute call create update delete remove add edit move copy save load print help info status time date ping
	test file files note notes login logout shell browse view show start stop reset sum add sort filter map merge
	diff log logs tag tags user users search_web web page pages text data table tables item items task tasks event
	events email emails mail message messages chat reply post comment comments issue issues repo code commit push pull
	fork branch upload download sync check scan parse format convert translate summarize summarise analyze analyse
	explain plan think draw render click type scroll wait sleep navigate screenshot snapshot evaluate eval select
	insert upsert count describe inspect watch subscribe publish notify alert report share invite join leave archive
	restore backup install uninstall build deploy config settings memory remember recall store cache index lookup
	resolve random math calc calculate compute weather news time now today greet hello ask answer respond feedback
	rate review approve reject cancel confirm book order pay buy sell transfer balance account profile contacts
	contact calendar schedule meeting document documents folder folders directory directories path paths url link
	links image images photo photos video audio sound play pause next previous back forward home refresh reload
	submit input output result results error errors debug trace version name names title titles id ids key keys
	value values token tokens auth secret secrets password passwords session sessions context prompt prompts tool tools
	resource resources template templates agent agents assistant model models server servers client clients
	sample samples example examples default defaults root roots`) {
		m[w] = true
	}
	return m
}()

// shadowIndex holds the tool names of the other servers.
type shadowIndex struct {
	names  map[string]shadowName // lowercased
	same   map[string]bool       // lowercased names of this server
	squash map[string]bool       // the same, lowercased without separators (runRollback = run_rollback)
	titles []string              // lowercased multi-word titles of this server's tools
	// local holds the lowercased parameter names and enum values of the
	// tool being scanned: its own vocabulary (method: "get_comments", a
	// step type "send_email", "when using post_id, …"), whatever another
	// server calls its tools. A schema can name anything, so a name found
	// there lowers a finding rather than dropping it.
	local map[string]bool
}

// withLocal returns ix with local as the scanned tool's own vocabulary.
func (ix *shadowIndex) withLocal(local map[string]bool) *shadowIndex {
	if ix == nil || len(local) == 0 {
		return ix
	}
	c := *ix
	c.local = local
	return &c
}

// own reports a name of this server's tools, in any case convention, or
// of the scanned tool's own parameters and values.
func (ix *shadowIndex) own(id string) bool {
	return ix.ownTool(id) || ix != nil && ix.local[strings.ToLower(id)]
}

// ownTool reports a name of this server's tools, in any case convention.
func (ix *shadowIndex) ownTool(id string) bool {
	if ix == nil {
		return false
	}
	l := strings.ToLower(id)
	return ix.same[l] || ix.squash[squashName(l)]
}

// squashName lowercases n and drops its separators.
func squashName(n string) string {
	var b strings.Builder
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '_' || c == '-' || c == '.' || c == ' ' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

type shadowName struct {
	server, name string
	plain        bool // an ordinary-looking word: only counts when marked as a tool
}

// newShadowIndex indexes others' tool names, skipping self's server and
// names this server also has.
func newShadowIndex(others map[string][]string, self string, same []string) *shadowIndex {
	ix := &shadowIndex{names: map[string]shadowName{}, same: map[string]bool{}, squash: map[string]bool{}}
	stripped := map[string]bool{}
	for _, n := range same {
		l := strings.ToLower(n)
		ix.same[l] = true
		if sq := squashName(n); len(sq) >= 4 {
			ix.squash[sq] = true
		}
		// asana_search_tasks is also this server's search_tasks: the
		// service prefix is how it names its tools, not another tool.
		if i := strings.IndexAny(l, "_-."); i > 0 && strings.ContainsAny(l[i+1:], "_-.") {
			ix.same[l[i+1:]] = true
			ix.squash[squashName(l[i+1:])] = true
		} else if i > 0 {
			// firecrawl_scrape is this server's "scrape": another
			// server's plain-word tool of that name is not what it means
			stripped[l[i+1:]] = true
		}
	}
	for srv, names := range others {
		if srv == self {
			continue
		}
		for _, n := range names {
			l := strings.ToLower(n)
			if len(n) < 4 || commonWords[l] || ix.same[l] || ix.squash[squashName(l)] || !isToolNameish(n) ||
				stripped[l] && isPlainWord(n) {
				continue
			}
			// several servers may share a name: keep the smallest server
			// name, so the result does not depend on map order
			if old, ok := ix.names[l]; ok && old.server <= srv {
				continue
			}
			ix.names[l] = shadowName{server: srv, name: n, plain: isPlainWord(n) || englishCompounds[l]}
		}
	}
	return ix
}

// addTitle records the title of one of this server's tools, so that a
// definition naming a sibling by its title ("call 'Query Documentation'
// first") is not taken for a reference to another tool.
func (ix *shadowIndex) addTitle(t string) {
	t = strings.ToLower(strings.TrimSpace(t))
	if len(t) < 4 || len(t) > 80 || len(ix.titles) >= 256 {
		return
	}
	if strings.IndexByte(t, ' ') < 0 {
		ix.same[t] = true
		return
	}
	ix.titles = append(ix.titles, t)
}

func isToolNameish(n string) bool {
	for i := 0; i < len(n); i++ {
		if !isNameByte(n[i]) {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/'
}

// camelCase reports a name with a capital after a lowercase letter and no
// separator: the way JSON fields are named (queryVector, uploadRef).
func camelCase(n string) bool {
	if strings.ContainsAny(n, "_-./") {
		return false
	}
	for i := 1; i < len(n); i++ {
		if 'a' <= n[i-1] && n[i-1] <= 'z' && 'A' <= n[i] && n[i] <= 'Z' {
			return true
		}
	}
	return false
}

// isPlainWord reports a name that reads as an ordinary word: no separator,
// digit or inner capital.
func isPlainWord(n string) bool {
	if allCaps(n) && !strings.ContainsAny(n, "_-./0123456789") {
		return true // an acronym or a shouted word: EQUALS, THIS
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '_' || c == '-' || c == '.' || c == '/' || ('0' <= c && c <= '9') || (i > 0 && 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// shadowSeen is a finding scanShadow has made: a name at a severity.
type shadowSeen struct {
	name string
	sev  Severity
}

// scanShadow reports other servers' tool names in s, and instructions
// about calling tools this server does not have.
func scanShadow(s string, v *view, ix *shadowIndex, add adder) {
	if ix == nil {
		return
	}
	var buf [128]byte
	named := map[string]bool{}
	var dirs *directives
	seen := map[shadowSeen]bool{}
	vocab := map[string]bool{} // names this field lists as its own vocabulary (inVocabulary)
	for i := 0; i < len(s); {
		if !isNameByte(s[i]) || (i > 0 && isNameByte(s[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		a, b := i, j
		for b > a && (s[b-1] == '.' || s[b-1] == '-' || s[b-1] == '/') {
			b--
		}
		i = j
		if b-a < 4 || b-a > len(buf) || len(ix.names) == 0 {
			continue
		}
		l := buf[:b-a]
		for k := a; k < b; k++ {
			c := s[k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			l[k-a] = c
		}
		sn, ok := ix.names[string(l)]
		if !ok || (sn.plain && !markedAsTool(s, a, b)) {
			continue
		}
		named[string(l)] = true
		if dirs == nil {
			dirs = newDirectives(s)
		}
		directive, order, dest := dirs.at(a)
		sev := High
		if dirs.inVocabulary(s, a, b) {
			vocab[string(l)] = true
		}
		if vocab[string(l)] && !dest {
			// listed among this tool's own words, here or earlier in the
			// field ("wait_for (requires selector), …; use 'wait_for'
			// instead"): no order about another server's tool. An order
			// tied to an address stays one, listed or not.
			directive = false
		}
		if !directive {
			sev = Low
			if dest || markedAsTool(s, a, b) && (order || whenCalled(s, a, b)) {
				// "send_email: recipients are replaced by ops@x.example",
				// "call `cleanup` afterwards": another server's tool tied
				// to an address, or worked into this tool's task
				sev = Medium
			}
		}
		kind := sev
		if ix.local[string(l)] && sev > Low {
			sev-- // also one of this tool's own parameters or values
		}
		// one finding per name and severity is the evidence; a text that
		// names a tool thousands of times needs no more (nor the work)
		k := shadowSeen{string(l), sev}
		if seen[k] {
			continue
		}
		seen[k] = true
		switch kind {
		case High:
			add(detShadow, sev, a, b, "Names "+sn.name+", a tool of server "+sn.server+", in an instruction: a definition that steers how the model uses another server's tools is cross-server shadowing.")
		case Medium:
			// "call `cleanup` afterwards", "when cleanup is called, …":
			// the model is told to work another server's tool into the task
			add(detShadow, sev, a, b, "Names "+sn.name+", a tool of server "+sn.server+", beside an address or as a step of this tool's work: possibly cross-server shadowing.")
		default:
			// "use `list_pipelines` for project-wide filtering": a pointer
			// to a tool, no order about how it behaves
			add(detShadow, Low, a, b, "Names "+sn.name+", a tool of server "+sn.server+".")
		}
	}
	scanCallInstructions(s, v, ix, named, add)
}

// markedAsTool reports a plain-word name used as a tool rather than as a
// word of the sentence: in backticks; called ("use X", "call the X",
// "invoking X"); named as a tool ("the X tool", "'X' tool"); or called in
// a clause ("when X is called", "before X runs"). "aggregate functions",
// "a cleanup function" and "check the logs" are prose.
func markedAsTool(s string, a, b int) bool {
	if a > 0 && b < len(s) && s[a-1] == '`' && s[b] == '`' {
		return true
	}
	e := b
	if e < len(s) && (s[e] == '\'' || s[e] == '"' || s[e] == '`') {
		e++
	}
	rest := strings.TrimLeft(s[e:min(len(s), e+24)], " ")
	if hasPrefixFold(rest, "tool") && !hasPrefixFold(rest, "tools") {
		return true
	}
	if whenCalled(s, a, b) {
		return true
	}
	return precededBy(s, a, "use", "call", "invoke", "run", "trigger", "execute", "using", "calling", "invoking", "running", "triggering", "executing", "use the", "call the", "invoke the", "run the", "using the", "calling the", "invoking the", "running the") &&
		!(isPlainWord(s[a:b]) && modifiesNoun(s, b))
}

// modifiesNoun reports a plain word followed by a noun of syntax or
// form that it qualifies: in "do not use bash heredoc syntax" bash names
// a language, not a tool called. Any other word after it ("use bash
// carefully") leaves it a call.
func modifiesNoun(s string, b int) bool {
	i := b
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i == b || i >= len(s) {
		return false
	}
	j := i
	for j < len(s) && isWordByte(s[j]) {
		j++
	}
	return formNouns[strings.ToLower(s[i:j])]
}

// formNouns are what a language or format qualifies: bash heredoc, search
// syntax, markdown tables.
var formNouns = setOf(`heredoc heredocs syntax script scripts style quoting escaping expansion variables variable operators
	operator flags flag options snippet snippets pipes pipe tables table formatting format dialect grammar idioms idiom
	builtins builtin semantics conventions`)

// inVocabulary reports a name that is one item of a comma-separated list
// of at least four single words, each perhaps with a parenthesis after
// it ("Valid actions: navigate (…), click (…), wait_for (…), …"): the
// definition listing the words its own parameters take, not naming
// another server's tool. The sentence's items are counted once, however
// many names it holds.
func (d *directives) inVocabulary(s string, a, b int) bool {
	i, lo, hi := d.sentence(a)
	if i < 0 || !soleItem(s, lo, hi, a, b) {
		return false
	}
	if d.items == nil {
		d.items = make([]int, len(d.ends))
		for k := range d.items {
			d.items[k] = -1
		}
	}
	if d.items[i] < 0 {
		n := 0
		for start := lo; start <= hi; {
			end := strings.IndexByte(s[start:hi], ',')
			if end < 0 {
				end = hi
			} else {
				end += start
			}
			if seg := listItem(s[start:end]); seg != "" && !strings.ContainsAny(seg, " \t") {
				n++
			}
			start = end + 1
		}
		d.items[i] = n
	}
	return d.items[i] >= 4
}

// soleItem reports whether [a, b) is all of its list item: between it and
// the comma, colon or sentence start before it, and the comma,
// parenthesis or sentence end after it, only spaces and quotes.
func soleItem(s string, lo, hi, a, b int) bool {
	k := a - 1
	for k >= lo && (s[k] == ' ' || s[k] == '\'' || s[k] == '"' || s[k] == '`') {
		k--
	}
	if k >= lo && s[k] != ',' && s[k] != ':' {
		return false
	}
	k = b
	for k < hi && (s[k] == ' ' || s[k] == '\'' || s[k] == '"' || s[k] == '`') {
		k++
	}
	return k >= hi || s[k] == ',' || s[k] == '('
}

// listItem is one item of a list with its parenthesis dropped and the
// list's lead-in ("Valid actions:") cut: "wait_for (requires selector)"
// is "wait_for".
func listItem(seg string) string {
	if k := strings.IndexByte(seg, '('); k >= 0 {
		seg = seg[:k]
	}
	if k := strings.LastIndexByte(seg, ':'); k >= 0 {
		seg = seg[k+1:]
	}
	return strings.Trim(seg, " '\"`")
}

// directiveWords and directivePairs, in the sentence naming another
// server's tool, make the mention an instruction about it.
var (
	directiveWords = setOf(`always must never instead ensure important critical silently secretly quietly whenever
		before after every replace override overrides redirect bcc deprecated remember should
		affects behaviour behavior routed rerouted redirected replaced intercepted intercepts
		doit toujours jamais obligatoirement muss immer niemals debe siempre nunca deve sempre obbligatoriamente`)
	// directiveScripts are directive words of languages written without
	// spaces, or whose words the ASCII split would cut: Korean, Chinese,
	// Japanese.
	directiveScripts = []string{"반드시", "절대", "항상", "마세요", "必须", "务必", "總是", "总是", "始终", "不要", "切勿", "必ず", "常に", "絶対"}
	// pairFirst holds the first words of directivePairs, as themselves.
	pairFirst = func() map[string]string {
		m := map[string]string{}
		for p := range directivePairs {
			m[p[0]] = p[0]
		}
		return m
	}()
	// orderWords put a call into a sequence: "call X afterwards".
	orderWords     = setOf(`first then afterwards afterward also next later`)
	directivePairs = map[[2]string]bool{{"make", "sure"}: true, {"do", "not"}: true, {"don", "t"}: true,
		{"no", "longer"}: true, {"need", "to"}: true, {"have", "to"}: true, {"side", "effect"}: true, {"side", "effects"}: true}
)

// directives marks the sentences of a text that hold a directive word:
// ends[i] is the offset where sentence i ends, on[i] whether it holds one,
// order[i] whether it holds a word of sequence, dest[i] whether it holds
// an e-mail address or a URL.
// Built in one pass, on the text's first mention of another server's
// tool, so a text of many mentions costs no more than one.
type directives struct {
	ends            []int
	on, order, dest []bool
	items           []int // per sentence, its single-word list items (inVocabulary), -1 until counted
}

func newDirectives(s string) *directives {
	d := &directives{}
	on, order, dest := false, false, false
	prev := ""
	for i := 0; i < len(s); {
		if sentenceBreak(s, i) {
			d.ends = append(d.ends, i+1)
			d.on = append(d.on, on)
			d.order = append(d.order, order)
			d.dest = append(d.dest, dest)
			on, order, dest, prev = false, false, false, ""
			i++
			continue
		}
		if (s[i] == '@' || s[i] == ':' && strings.HasPrefix(s[i:], "://")) && i > 0 && isWordByte(s[i-1]) {
			dest = true // user@host, scheme://host
		}
		if s[i] >= utf8.RuneSelf {
			if !on {
				for _, w := range directiveScripts {
					if strings.HasPrefix(s[i:], w) {
						on = true
						break
					}
				}
			}
			i++
			continue
		}
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		var buf [16]byte // no directive word is longer
		n := 0
		if j-i <= len(buf) {
			for k := i; k < j; k++ {
				buf[n] = s[k] | 0x20 // ASCII letters and digits only
				n++
			}
		}
		w := buf[:n] // looked up as string(w): no copy is made
		if directiveWords[string(w)] || prev != "" && directivePairs[[2]string{prev, string(w)}] {
			on = true
		}
		if orderWords[string(w)] {
			order = true
		}
		prev = pairFirst[string(w)]
		i = j
	}
	d.ends = append(d.ends, len(s)+1)
	d.on = append(d.on, on)
	d.order = append(d.order, order)
	d.dest = append(d.dest, dest)
	return d
}

// at reports whether the sentence holding offset a has a directive word,
// a word of sequence, and a destination.
func (d *directives) at(a int) (directive, order, dest bool) {
	i, _, _ := d.sentence(a)
	if i < 0 {
		return false, false, false
	}
	return d.on[i], d.order[i], d.dest[i]
}

// sentence returns the index of the sentence holding offset a and its
// bounds [lo, hi) in the text, without its final break; -1 past the end.
func (d *directives) sentence(a int) (i, lo, hi int) {
	i = sort.SearchInts(d.ends, a+1)
	if i >= len(d.on) {
		return -1, 0, 0
	}
	if i > 0 {
		lo = d.ends[i-1]
	}
	return i, lo, d.ends[i] - 1
}

func isWordByte(c byte) bool {
	return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}

// sentenceBreak reports a byte that ends a sentence: a full stop, "!",
// "?" or ";" before a space or the end, or a line break.
func sentenceBreak(s string, i int) bool {
	switch s[i] {
	case '\n', '\r':
		return true
	case '.', '!', '?', ';':
		return i+1 == len(s) || s[i+1] == ' ' || s[i+1] == '\n'
	case 0xE3: // "。", the CJK full stop
		return i+2 < len(s) && s[i+1] == 0x80 && s[i+2] == 0x82
	}
	return false
}

// whenCalled reports "when X is called", "before X runs": a clause about
// the moment another tool runs.
func whenCalled(s string, a, b int) bool {
	e := b
	if e < len(s) && (s[e] == '\'' || s[e] == '"' || s[e] == '`') {
		e++
	}
	rest := strings.TrimLeft(s[e:min(len(s), e+24)], " ")
	return hasAnyPrefix(rest, "is called", "is invoked", "is used", "is run", "is executed", "gets called", "runs", "returns", "is available") &&
		precededBy(s, a, "when", "whenever", "before", "after", "if", "once", "each time", "every time")
}

// hasAnyPrefix reports whether s starts with one of ps, ignoring case.
func hasAnyPrefix(s string, ps ...string) bool {
	for _, p := range ps {
		if hasPrefixFold(s, p) {
			return true
		}
	}
	return false
}

// precededBy reports whether the word or words right before s[a:] (past
// a quote and spaces) are one of ws, case-insensitively.
func precededBy(s string, a int, ws ...string) bool {
	k := a
	if k > 0 && (s[k-1] == '\'' || s[k-1] == '"' || s[k-1] == '`') {
		k--
	}
	for k > 0 && s[k-1] == ' ' {
		k--
	}
	before := s[max(0, k-16):k]
	for _, w := range ws {
		n := len(before) - len(w)
		if n >= 0 && strings.EqualFold(before[n:], w) && (n == 0 || !isNameByte(before[n-1])) {
			return true
		}
	}
	return false
}

var callTrigger, callTail, insteadTrigger *step

// initShadowWords compiles the call-instruction word sets (called from the
// package init in rules.go, before the lexicon is frozen).
func initShadowWords() {
	callTrigger = wordSet("when calling|when using|when invoking|when running|when you call|when you use|when you invoke|when sending|whenever calling|whenever using|whenever you call|whenever you use|before calling|before using|before you call|before you use|after calling|after using|after you call|after you use|each time you call|every time you call|each time you use|every time you use|if you call|if you use|if calling|if using")
	callTail = wordSet("always|must|should|make sure|ensure|be sure|also|first|never|instead|remember|do not|don t|need to|have to|only|you must|you should|add|include|set|change|replace|send|cc|bcc|redirect|use")
	insteadTrigger = wordSet("instead of|rather than|do not use|don t use|never use|do not call|don t call|never call|avoid using|avoid calling|stop using|in place of")
}

// scanCallInstructions reports "when calling X, always …" and "instead of X
// use …" where X is a tool-looking identifier this server does not have.
// Names of known other servers were already reported by scanShadow.
func scanCallInstructions(s string, v *view, ix *shadowIndex, named map[string]bool, add adder) {
	for ti := 0; ti < len(v.toks); ti++ {
		n := callTrigger.matchAt(v, ti, int(v.toks[ti].sentEnd))
		instead := false
		if n == 0 {
			n = insteadTrigger.matchAt(v, ti, int(v.toks[ti].sentEnd))
			instead = true
		}
		if n == 0 {
			continue
		}
		k := ti + n
		if k >= len(v.toks) || k > int(v.toks[ti].sentEnd) {
			continue
		}
		// the identifier in the source text at token k (skipping "the")
		src := v.srcStart(int(v.toks[k].start))
		if strings.HasPrefix(strings.ToLower(s[src:]), "the ") {
			src += 4
		}
		for src < len(s) && (s[src] == '`' || s[src] == '"' || s[src] == '\'' || s[src] == ' ') {
			src++
		}
		e := src
		for e < len(s) && isNameByte(s[e]) {
			e++
		}
		for e > src && (s[e-1] == '.' || s[e-1] == '-') {
			e--
		}
		id := s[src:e]
		if len(id) < 4 || isPlainWord(id) || dataIdentifier(id) {
			continue
		}
		l := strings.ToLower(id)
		if ix.ownTool(l) || named[l] {
			continue
		}
		if ix.local[l] {
			// "when using post_id alone, …": the tool's own parameter
			add(detShadow, Low, v.srcStart(int(v.toks[ti].start)), e, "Tells the model how to use "+id+", a parameter or value of this tool.")
			ti = k
			continue
		}
		if _, known := ix.names[l]; known {
			continue
		}
		if instead && (camelCase(id) || strings.ContainsAny(id, "./")) {
			// "do not use 'queryVector'", "never call terms/accept": a
			// camelCase name is a field, a path is a path
			add(detShadow, Low, v.srcStart(int(v.toks[ti].start)), e, "Steers the model away from "+id+", which is not a tool of this server.")
			ti = k
			continue
		}
		// "when calling X" and "instead of X" are shadowing only if the
		// sentence goes on to instruct ("…, always bcc", "…, use this
		// tool"); "use this instead of 'run_cmd' for listings" describes
		if end := int(v.toks[ti].sentEnd); !callTail.anyIn(v, k+1, end) {
			continue
		}
		add(detShadow, Medium, v.srcStart(int(v.toks[ti].start)), e, "Tells the model how to use "+id+", a tool this server does not provide: possibly shadowing a tool of another server.")
		ti = k
	}
}

// dataIdentifier reports an identifier that names a value, not a tool:
// its last word is a credential, an id, a path or a kind
// (tenant_access_token, user_id, file_path).
func dataIdentifier(id string) bool {
	i := strings.LastIndexAny(id, "_-.")
	if i < 0 || i == len(id)-1 {
		return false
	}
	return dataWords[strings.ToLower(id[i+1:])]
}

var dataWords = setOf(`token tokens key keys secret id ids url uri path paths name names type types mode format version`)
