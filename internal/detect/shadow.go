package detect

import (
	"strings"
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
	names map[string]shadowName // lowercased
	same  map[string]bool       // lowercased names of this server
}

type shadowName struct {
	server, name string
	plain        bool // an ordinary-looking word: only counts when marked as a tool
}

// newShadowIndex indexes others' tool names, skipping self's server and
// names this server also has.
func newShadowIndex(others map[string][]string, self string, same []string) *shadowIndex {
	ix := &shadowIndex{names: map[string]shadowName{}, same: map[string]bool{}}
	for _, n := range same {
		ix.same[strings.ToLower(n)] = true
	}
	for srv, names := range others {
		if srv == self {
			continue
		}
		for _, n := range names {
			l := strings.ToLower(n)
			if len(n) < 4 || commonWords[l] || ix.same[l] || !isToolNameish(n) {
				continue
			}
			// several servers may share a name: keep the smallest server
			// name, so the result does not depend on map order
			if old, ok := ix.names[l]; ok && old.server <= srv {
				continue
			}
			ix.names[l] = shadowName{server: srv, name: n, plain: isPlainWord(n)}
		}
	}
	return ix
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

// isPlainWord reports a name that reads as an ordinary word: no separator,
// digit or inner capital.
func isPlainWord(n string) bool {
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c == '_' || c == '-' || c == '.' || c == '/' || ('0' <= c && c <= '9') || (i > 0 && 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// scanShadow reports other servers' tool names in s, and instructions
// about calling tools this server does not have.
func scanShadow(s string, v *view, ix *shadowIndex, add adder) {
	if ix == nil {
		return
	}
	var buf [128]byte
	named := map[string]bool{}
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
		add(detShadow, High, a, b, "Names "+sn.name+", a tool of server "+sn.server+": a definition that steers how the model uses another server's tools is cross-server shadowing.")
		named[string(l)] = true
	}
	scanCallInstructions(s, v, ix, named, add)
}

// markedAsTool reports a plain-word name written as a tool: in backticks or
// quotes, followed by "(" or by the word tool/function/command.
func markedAsTool(s string, a, b int) bool {
	if a > 0 && b < len(s) {
		if q := s[a-1]; (q == '`' || q == '"' || q == '\'') && s[b] == q {
			return true
		}
	}
	if b < len(s) && s[b] == '(' {
		return true
	}
	rest := strings.TrimLeft(s[b:min(len(s), b+24)], " ")
	rest = strings.ToLower(rest)
	return strings.HasPrefix(rest, "tool") || strings.HasPrefix(rest, "function") || strings.HasPrefix(rest, "command")
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
		if len(id) < 4 || isPlainWord(id) {
			continue
		}
		l := strings.ToLower(id)
		if ix.same[l] || named[l] {
			continue
		}
		if _, known := ix.names[l]; known {
			continue
		}
		if !instead {
			// "when calling X" is shadowing only if it goes on to instruct
			end := int(v.toks[ti].sentEnd)
			if !callTail.anyIn(v, k+1, end) {
				continue
			}
		}
		add(detShadow, Medium, v.srcStart(int(v.toks[ti].start)), e, "Tells the model how to use "+id+", a tool this server does not provide: possibly shadowing a tool of another server.")
		ti = k
	}
}
