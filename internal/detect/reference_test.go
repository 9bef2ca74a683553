package detect

import (
	"bytes"
	"math/bits"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// The reference scanner: ScanText and every function of its pipeline that
// the single-pass scanner replaced or changed (or that calls one), exactly
// as they were before it: the code of commit c83a3ec, renamed with a "ref"
// prefix by a tool that copied it. The functions this file does not copy
// are shared, and unchanged since then. differential_test.go holds the single-pass scanner
// to the same findings as this one, on every corpus the package's tests
// use and on random and mutated text, and benchmarks the two side by side.
//
// The only edits: refNewView allocates its view instead of taking one from
// viewPool, and refScanField does not release it, so the reference shares
// no buffers with the scanner it checks; and refNewView first builds the
// lexicon's edge tables (refDense), which the scanner no longer needs.

// refVisible is visible as of the reference commit.
func refVisible(s string, homoglyph bool) string {
	var b strings.Builder
	prev := rune(-1)
	for i := 0; i < len(s) && b.Len() < 200; {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case isTag(r):
			j := i
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !isTag(r2) {
					break
				}
				j += sz
			}
			if prev == 0x1F3F4 && subdivisionFlagLen(s[i:j]) == j-i {
				b.WriteString(s[i:j])
			} else {
				b.WriteString("⟦tags: ")
				b.WriteString(decodeTags(s[i:j]))
				b.WriteString("⟧")
			}
			prev = -2
			i = j
			continue
		case isVS(r):
			j, n := vsRun(s, i)
			if n == 1 {
				writeEscape(&b, r)
			} else {
				b.WriteString("⟦" + itoa(n) + " variation selectors: " + vsSummary(s[i:j]) + "⟧")
			}
			prev = -2
			i = j
			continue
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case (r >= 0x80 && r <= 0x9F) || isIgnorable(r):
			writeEscape(&b, r)
		case homoglyph && !isLatinLetter(r) && r >= 0x370:
			if confusableOf(r) != 0 {
				writeEscape(&b, r)
			} else {
				b.WriteRune(r)
			}
		default:
			b.WriteRune(r)
		}
		prev = r
		i += size
	}
	return clip(b.String(), 120)
}

// refScanCommands is scanCommands as of the reference commit.
func refScanCommands(v *view) []cmdHit {
	n := v.norm
	var hits []cmdHit
	// each look-ahead for a "need" reads at most a line of 160 bytes;
	// hostile text ("curl curl curl …") gets at most needBudget of them
	budget := needBudget
	// a command inside another one's span is tried too ("wget … && chmod
	// 777 …"): overlapping findings merge, keeping the higher severity
	for ti := 0; ti < len(v.toks) && len(hits) < 16; ti++ {
		t := &v.toks[ti]
		i := int(t.start)
		if !cmdWordStep.hasTok(t) {
			continue // not a word a command starts with: no lookup
		}
		cands := cmdWords[string(n[t.start:t.end])]
		if cands == nil {
			continue
		}
		// a command starts a word: not "my-rm", "x.cat", "/usr/bin/sudo"
		if i > 0 {
			if p := n[i-1]; p == '-' || p == '_' || p == '.' || p == '/' {
				continue
			}
		}
		if h, ok := matchCommand(n, i, cands, &budget); ok {
			hits = append(hits, h)
		}
	}
	nw := len(hits)
	last := 0
	for i := 0; i < len(n) && len(hits) < 16; i++ {
		if i = cmdLeads.nextIn(n, i); i >= len(n) {
			break
		}
		if i < last {
			continue
		}
		if h, ok := matchCommand(n, i, cmdPunct[n[i]], &budget); ok {
			hits = append(hits, h)
			last = h.ne
			i = h.ne - 1
		}
	}
	if nw > 0 && len(hits) > nw {
		sort.Slice(hits, func(a, b int) bool { return hits[a].ns < hits[b].ns })
	}
	return hits
}

// refScanText is ScanText as of the reference commit.
func refScanText(field, text string) []Finding {
	return refFinish(ctxRes, refScanField(ctxRes, field, text, fieldOpts{}))
}

// refScanField is scanField as of the reference commit.
func refScanField(ctx ctxKind, field, text string, opt fieldOpts) []rawFinding {
	if text == "" {
		return nil
	}
	var out []rawFinding
	// at most maxPerDetector findings per detector and severity: hostile
	// text can hold a million escapes, and finish keeps only the most
	// severe maxPerDetector of each detector anyway
	counts := map[string]*[4]uint8{}
	lastDet, lastC := "", (*[4]uint8)(nil)
	add := func(det string, sev Severity, start, end int, msg string) {
		c := lastC
		if det != lastDet {
			c = counts[det]
			if c == nil {
				c = new([4]uint8)
				counts[det] = c
			}
			lastDet, lastC = det, c
		}
		if c[sev&3] >= maxPerDetector {
			return
		}
		c[sev&3]++
		out = append(out, rawFinding{Finding: Finding{Detector: det, Severity: sev, Field: field, Start: start, End: end, Message: msg}})
	}
	v := refNewView(text)
	for _, h := range refMatchPhrases(v) {
		r := &phraseRules[h.rule]
		if opt.secretName && r.detector == detSecret {
			continue
		}
		if r.check != 0 {
			ok, a := postCheck(v, r, h.a, h.b, opt.shadow, opt.param)
			if !ok {
				continue
			}
			h.a = a
		}
		sev := sevFor(ctx, r.def, r.res)
		if h.mention {
			sev = demote(ctx, sev)
		}
		s, e := v.tokSpan(h.a, h.b)
		if h.rule >= intentStart && (r.destAfter || r.check&(chkDestNear|chkDestIn) != 0) {
			// the rules of intent.go show the address they are about
			e = destEnd(text, e)
		}
		out = append(out, rawFinding{Finding: Finding{Detector: r.detector, Severity: sev, Field: field, Start: s, End: e, Message: r.msg}, mention: h.mention})
	}
	mhits, inExample := refScanMarkup(v)
	for hi, h := range mhits {
		sev, msg := markupSeverity(h, ctx)
		if h.kind == mkOddTag && bracketLabels[h.name] && !labelDirects(v, h.ne) {
			// "[CRITICAL] SSO mode opens a browser": a label on a
			// statement; "[important] read the notes first" gives orders
			sev = Low
		}
		ta := v.tokenAt(h.ns)
		mention := false
		if inExample[hi] && h.kind != mkTag && h.kind != mkOddTag {
			// a chat turn inside <examples> or a code fence illustrates a
			// conversation; a system turn there is still odd
			mention = true
			sev = demote(ctx, sev)
			if exampleRoles[h.name] {
				sev = min(sev, Low)
			}
		} else if ta < len(v.toks) && (h.kind == mkTag || h.kind == mkToken || h.kind == mkRoleTag || h.kind == mkOddTag) {
			tb := max(ta, v.tokenAt(h.ne)-1)
			if tb >= len(v.toks) {
				tb = len(v.toks) - 1
			}
			if isMention(v, ta, tb) {
				mention = true
				sev = demote(ctx, sev)
			}
		}
		s, e := v.span(h.ns, h.ne)
		out = append(out, rawFinding{Finding: Finding{Detector: detMarkup, Severity: sev, Field: field, Start: s, End: e, Message: msg}, mention: mention})
	}
	for _, h := range refScanPaths(v) {
		req := requested(v, h.ns, h.ne)
		var sev Severity
		var msg string
		switch {
		case req:
			sev = sevFor(ctx, High, Medium)
			msg = "Asks for " + h.lit.what + ": instructions to read or send credential files are how poisoned tools steal secrets."
		case pathExample(v, h.ns, h.ne):
			sev = Low
			msg = "Mentions " + h.lit.what + " as an example or as a path it refuses."
		default:
			sev = sevFor(ctx, Medium, Low)
			msg = "Mentions " + h.lit.what + "."
		}
		s, e := v.span(h.ns, h.ne)
		add(detPath, sev, s, e, msg)
	}
	for _, h := range refScanCommands(v) {
		sev, msg := commandSeverity(v, h, ctx)
		s, e := v.span(h.ns, h.ne)
		add(detCommand, sev, s, e, msg)
	}
	scanUnicode(text, ctx, add)
	scanANSI(text, ctx, add)
	scanShadow(text, v, opt.shadow, add)
	if strings.IndexByte(text, '<') >= 0 {
		spans, imgs := refScanHiddenHTML(text)
		for _, h := range spans {
			add(detHiddenHTML, hiddenSeverity(ctx, h.text), h.start, h.end, "Text hidden from view by "+h.why+": the model reads it, a person looking at the page does not.")
		}
		for _, u := range imgs {
			if k := strings.Index(text, u); k >= 0 {
				add(detImageExfil, sevFor(ctx, High, Medium), k, k+len(u), "An image whose URL carries data: the client fetches it without a tool call, so it can carry data out.")
			}
		}
	}
	_, ispans := refScanImages(text)
	for _, sp := range ispans {
		add(detImageExfil, sevFor(ctx, High, Medium), sp[0], sp[1], "A markdown image whose URL carries data: the client fetches it without a tool call, so it can carry data out.")
	}
	out = refMergeOverlaps(out)
	for i := range out {
		refSetEvidence(&out[i].Finding, text)
	}
	return out
}

// refMergeOverlaps is mergeOverlaps as of the reference commit.
func refMergeOverlaps(fs []rawFinding) []rawFinding {
	if len(fs) < 2 {
		return fs
	}
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].Detector != fs[j].Detector {
			return fs[i].Detector < fs[j].Detector
		}
		return fs[i].Start < fs[j].Start
	})
	out := fs[:1]
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Detector != last.Detector || f.Start >= last.End || f.End <= f.Start || last.End <= last.Start {
			out = append(out, f)
			continue
		}
		last.End = max(last.End, f.End)
		if f.Severity > last.Severity {
			last.Severity, last.Message = f.Severity, f.Message
		}
		last.mention = last.mention && f.mention
	}
	return out
}

// refFinish is finish as of the reference commit.
func refFinish(ctx ctxKind, raw []rawFinding) []Finding {
	if len(raw) == 0 {
		return nil
	}
	// Corroboration: two different injection detectors in one definition
	// (or one result) reinforce each other. In a definition their Medium
	// findings become High; in a result their Low findings become Medium.
	dets := map[string]bool{}
	for _, f := range raw {
		if corroborating[f.Detector] && !f.mention && (f.Severity >= Medium || ctx == ctxRes) && !(ctx == ctxDef && f.Detector == detAddress) {
			dets[f.Detector] = true
		}
	}
	if len(dets) >= 2 {
		for i := range raw {
			f := &raw[i]
			if !dets[f.Detector] || f.mention {
				continue
			}
			if ctx == ctxDef && f.Severity == Medium {
				f.Severity = High
				f.Message += " Other signs of poisoning in the same definition make this severe."
			}
			if ctx == ctxRes && f.Severity == Low {
				f.Severity = Medium
				f.Message += " Other signs of injected instructions in the same text make this worth a warning."
			}
		}
	}
	// keep the most severe findings per (field, detector)
	fieldOrder := map[string]int{}
	for _, f := range raw {
		if _, ok := fieldOrder[f.Field]; !ok {
			fieldOrder[f.Field] = len(fieldOrder)
		}
	}
	sort.SliceStable(raw, func(i, j int) bool {
		a, b := &raw[i], &raw[j]
		if a.Field != b.Field {
			return fieldOrder[a.Field] < fieldOrder[b.Field]
		}
		if a.Detector != b.Detector {
			return a.Detector < b.Detector
		}
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return a.Start < b.Start
	})
	type key struct{ field, det string }
	count := map[key]int{}
	var fs []Finding
	for _, f := range raw {
		k := key{f.Field, f.Detector}
		if count[k] >= maxPerDetector {
			continue
		}
		count[k]++
		fs = append(fs, f.Finding)
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := &fs[i], &fs[j]
		if a.Field != b.Field {
			return fieldOrder[a.Field] < fieldOrder[b.Field]
		}
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End < b.End
		}
		return a.Detector < b.Detector
	})
	return fs
}

// refSetEvidence is setEvidence as of the reference commit.
func refSetEvidence(f *Finding, text string) {
	if f.Start < 0 || f.End > len(text) || f.Start > f.End {
		f.Start, f.End = 0, 0
	}
	f.Evidence = refVisible(text[f.Start:f.End], f.Detector == detHomoglyph)
}

// refScanHiddenHTML is scanHiddenHTML as of the reference commit.
func refScanHiddenHTML(s string) (spans []hiddenSpan, imgs []string) {
	if strings.IndexByte(s, '<') < 0 {
		return nil, nil
	}
	lastGT := strings.LastIndexByte(s, '>')
	var stack []openElem
	hiddenAt := -1 // stack index of the outermost hidden element
	var cur strings.Builder
	curStart, curWhy := 0, ""
	refFinish := func(end int) {
		t := collapseSpace(cur.String())
		if t != "" && len(spans) < maxHiddenItems {
			spans = append(spans, hiddenSpan{curStart, end, clip(t, maxHiddenLen), curWhy})
		}
		cur.Reset()
		hiddenAt = -1
	}
	appendText := func(t string) {
		if hiddenAt >= 0 && cur.Len() < maxHiddenLen*2 {
			cur.WriteString(decodeEntities(t[:min(len(t), maxHiddenLen*2)]))
		}
	}
	i := 0
	for i < len(s) {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 || i+lt > lastGT {
			appendText(s[i:])
			break
		}
		appendText(s[i : i+lt])
		i += lt
		// comment
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			body, next := "", len(s)
			if end >= 0 {
				body, next = s[i+4:i+4+end], i+4+end+3
			} else {
				body = s[i+4:]
			}
			if hiddenAt < 0 {
				if t := collapseSpace(body); t != "" && len(spans) < maxHiddenItems {
					spans = append(spans, hiddenSpan{i, next, clip(t, maxHiddenLen), "an HTML comment"})
				}
			}
			i = next
			continue
		}
		gt := strings.IndexByte(s[i:], '>')
		if gt < 0 {
			appendText(s[i:])
			break
		}
		tag := s[i+1 : i+gt]
		tagStart := i
		i += gt + 1
		name, attrs, closing, selfClose := parseTag(tag)
		if name == "" {
			appendText(s[tagStart:i])
			continue
		}
		if closing {
			// pop to the matching element (searching a bounded depth)
			for k := len(stack) - 1; k >= 0 && k >= len(stack)-16; k-- {
				if stack[k].name == name {
					if hiddenAt >= k {
						refFinish(i)
					}
					stack = stack[:k]
					break
				}
			}
			continue
		}
		if name == "script" || name == "style" || name == "template" || name == "noscript" {
			// raw text: skip to the closing tag
			end := indexFold(s[i:], "</"+name)
			if end < 0 {
				break
			}
			i += end
			continue
		}
		why := refHiddenWhy(attrs)
		if name == "img" {
			if src := refAttrValue(attrs, "src"); src != "" && refUrlCarriesData(src) {
				imgs = append(imgs, clip(src, 2048))
			}
		}
		if name == "input" && strings.EqualFold(refAttrValue(attrs, "type"), "hidden") {
			if v := refAttrValue(attrs, "value"); v != "" && hiddenAt < 0 && len(spans) < maxHiddenItems {
				spans = append(spans, hiddenSpan{tagStart, i, clip(collapseSpace(decodeEntities(v)), maxHiddenLen), "a hidden form field"})
			}
		}
		if voidElements[name] || selfClose {
			continue
		}
		if len(stack) >= maxStack {
			continue
		}
		stack = append(stack, openElem{name, why != ""})
		if why != "" && hiddenAt < 0 {
			hiddenAt = len(stack) - 1
			curStart, curWhy = tagStart, why
		}
	}
	if hiddenAt >= 0 {
		refFinish(len(s))
	}
	return spans, imgs
}

// refAttrValue is attrValue as of the reference commit.
func refAttrValue(attrs, name string) string {
	a := attrs
	for len(a) > 0 {
		a = strings.TrimLeft(a, " \t\r\n/")
		k := 0
		for k < len(a) && a[k] != '=' && a[k] != ' ' && a[k] != '\t' && a[k] != '\n' && a[k] != '>' {
			k++
		}
		if k == 0 {
			return ""
		}
		key := a[:k]
		a = strings.TrimLeft(a[k:], " \t\r\n")
		val := ""
		if strings.HasPrefix(a, "=") {
			a = strings.TrimLeft(a[1:], " \t\r\n")
			if len(a) > 0 && (a[0] == '"' || a[0] == '\'') {
				q := a[0]
				e := strings.IndexByte(a[1:], q)
				if e < 0 {
					val, a = a[1:], ""
				} else {
					val, a = a[1:1+e], a[2+e:]
				}
			} else {
				e := 0
				for e < len(a) && a[e] != ' ' && a[e] != '\t' && a[e] != '\n' {
					e++
				}
				val, a = a[:e], a[e:]
			}
		} else if strings.EqualFold(key, name) {
			return " " // boolean attribute present
		}
		if strings.EqualFold(key, name) {
			if val == "" {
				return " "
			}
			return val
		}
	}
	return ""
}

// refHiddenWhy is hiddenWhy as of the reference commit.
func refHiddenWhy(attrs string) string {
	if attrs == "" {
		return ""
	}
	if refAttrValue(attrs, "hidden") != "" {
		return "the hidden attribute"
	}
	if strings.EqualFold(strings.TrimSpace(refAttrValue(attrs, "aria-hidden")), "true") {
		return "aria-hidden"
	}
	style := refAttrValue(attrs, "style")
	if style == "" {
		return ""
	}
	var color, bg string
	for _, decl := range strings.Split(strings.ToLower(style), ";") {
		p, v, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		p = strings.TrimSpace(p)
		v = strings.ReplaceAll(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "!important")), " ", "")
		switch p {
		case "display":
			if v == "none" {
				return "display:none"
			}
		case "visibility":
			if v == "hidden" || v == "collapse" {
				return "visibility:hidden"
			}
		case "font-size":
			if isZeroLength(v) {
				return "font-size:0"
			}
		case "opacity":
			if v == "0" || v == "0.0" || v == ".0" || v == "0%" {
				return "opacity:0"
			}
		case "color":
			color = v
		case "background-color", "background":
			bg = v
		case "left", "top", "text-indent", "margin-left":
			if strings.HasPrefix(v, "-") && len(strings.TrimLeft(v, "-0123456789.")) <= 3 && len(v) >= 5 {
				return "positioned off-screen"
			}
		case "width", "height", "max-height", "max-width":
			if isZeroLength(v) && strings.Contains(style, "overflow") {
				return "zero size"
			}
		case "clip":
			if strings.HasPrefix(v, "rect(0") {
				return "clipped away"
			}
		}
	}
	if color != "" && isWhite(color) && (bg == "" || isWhite(bg)) {
		return "white text on white"
	}
	if color != "" && bg != "" && color == bg {
		return "text coloured like its background"
	}
	return ""
}

// refScanImages is scanImages as of the reference commit.
func refScanImages(s string) (urls []string, spans [][2]int) {
	if !strings.Contains(s, "![") {
		return nil, nil
	}
	var refs map[string]string
	stop := -1 // the next ']' or newline at or after the current alt text
	for i := 0; i < len(s) && len(urls) < 32; {
		k := strings.Index(s[i:], "![")
		if k < 0 {
			break
		}
		start := i + k
		j := start + 2
		// alt text: up to the next ']' on the same line, at most 1000
		// bytes; stop only moves forward, so the scan stays linear
		if stop < j {
			stop = len(s)
			if n := strings.IndexAny(s[j:], "]\n"); n >= 0 {
				stop = j + n
			}
		}
		e := stop
		if e >= len(s) || s[e] != ']' || e-j > 1000 {
			i = start + 2
			continue
		}
		e++
		var u string
		end := e
		switch {
		case e < len(s) && s[e] == '(':
			u, end = linkDest(s, e+1)
		case e < len(s) && s[e] == '[':
			r := e + 1
			for r < len(s) && r-e < 200 && s[r] != ']' && s[r] != '\n' {
				r++
			}
			if r < len(s) && s[r] == ']' {
				label := strings.ToLower(s[e+1 : r])
				if label == "" {
					label = strings.ToLower(s[j : e-1])
				}
				if refs == nil {
					refs = refDefinitions(s)
				}
				u, end = refs[label], r+1
			}
		}
		if u != "" && refUrlCarriesData(u) {
			urls = append(urls, clip(u, 2048))
			spans = append(spans, [2]int{start, end})
		}
		i = max(end, start+2)
	}
	return urls, spans
}

// refUrlCarriesData is urlCarriesData as of the reference commit.
func refUrlCarriesData(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "") || u.Host == "" {
		return false
	}
	for _, kv := range strings.Split(u.RawQuery, "&") {
		_, raw, _ := strings.Cut(kv, "=")
		v, err := url.QueryUnescape(raw)
		if err != nil {
			v = raw
		}
		if len(v) > 32 || encodedRun(raw) || encodedRun(v) {
			return true
		}
	}
	if u.RawQuery != "" && !strings.Contains(u.RawQuery, "=") && (len(u.RawQuery) > 32 || encodedRun(u.RawQuery)) {
		return true
	}
	path := u.EscapedPath()
	for _, seg := range strings.Split(path, "/") {
		if dot := strings.LastIndexByte(seg, '.'); dot > 0 && len(seg)-dot <= 5 {
			seg = seg[:dot] // a file extension
		}
		if encodedRun(seg) {
			return true
		}
	}
	return false
}

// refResolve is lexicon.resolve as of the reference commit.
func refResolve(l *lexicon, v *view) {
	nodes := l.nodes
	norm := v.norm
	for k := range v.toks {
		t := &v.toks[k]
		t.nid = 0
		w := norm[t.start:t.end]
		if len(w) == 0 {
			continue
		}
		n := l.root[w[0]]
		for i := 1; n != 0; i++ {
			nd := &nodes[n]
			if nd.pref >= 0 && t.nid < uint8(len(t.ids)) {
				t.ids[t.nid] = nd.pref
				t.nid++
			}
			if i == len(w) {
				if nd.exact >= 0 && t.nid < uint8(len(t.ids)) {
					t.ids[t.nid] = nd.exact
					t.nid++
				}
				break
			}
			b := w[i]
			if nd.dense != nil {
				n = nd.dense[b]
				continue
			}
			n = 0
			for _, e := range nd.edges {
				if e.b == b {
					n = e.to
					break
				}
			}
		}
	}
}

// refScanMarkup is scanMarkup as of the reference commit.
func refScanMarkup(v *view) (hits []markupHit, example []bool) {
	n := v.norm
	var closeNames map[string]bool
	hasClose := func(name string) bool {
		if closeNames == nil {
			closeNames = closingNames(n)
		}
		return closeNames[name]
	}
	upper := func(j, k int) bool {
		a, b := v.span(j, k)
		return allCaps(v.src[a:b])
	}
	lineStart := true
	for i := 0; i < len(n) && len(hits) < 64; i++ {
		if !lineStart {
			// nothing starts before the next line or '#', '<', '['
			if i = markupStart.nextIn(n, i); i >= len(n) {
				break
			}
		}
		c := n[i]
		if lineStart && c != '\n' {
			if h, ok := refLineRoleAt(n, i); ok {
				hits = append(hits, h)
			}
		}
		lineStart = c == '\n'
		switch c {
		case '#':
			// "### System:" in the middle of a line
			if i > 0 && n[i-1] == ' ' && i+1 < len(n) && n[i+1] == '#' {
				if h, ok := refLineRoleAt(n, i); ok && h.kind == mkHeaderRole {
					hits = append(hits, h)
					i = h.ne - 1
				}
			}
		case '<':
			if h, ok := refAngleAt(n, i, hasClose, upper); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		case '[':
			if h, ok := refBracketAt(n, i); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		case '{':
			if h, ok := refCurlyAt(n, i); ok {
				hits = append(hits, h)
				i = h.ne - 1
			}
		}
	}
	if len(hits) > 0 {
		example = markExamples(n, hits)
	}
	return hits, example
}

// refAngleAt is angleAt as of the reference commit.
// refFlagBefore is a command-line flag ending just before a tag: "--x ",
// "-k=", "(--name ".
var refFlagBefore = regexp.MustCompile("(?:^|[ (`,])-[A-Za-z0-9_-]{0,39}[ =]{1,2}$")

func refAngleAt(n []byte, i int, hasClose func(string) bool, upper func(j, k int) bool) (markupHit, bool) {
	j := i + 1
	// <|token|>
	if j < len(n) && n[j] == '|' {
		k := j + 1
		for k < len(n) && k-j < 40 && (isIdentByte(n[k]) || n[k] == '.' || n[k] == ' ') {
			k++
		}
		if k > j+1 && k+1 < len(n) && n[k] == '|' && n[k+1] == '>' {
			return markupHit{i, k + 2, mkToken, string(n[j+1 : k])}, true
		}
		return markupHit{}, false
	}
	// <<sys>> and <</sys>>, <<important>>
	if j < len(n) && n[j] == '<' {
		for _, t := range []string{"<<sys>>", "<</sys>>"} {
			if hasPrefixAt(n, i, t) {
				return markupHit{i, i + len(t), mkToken, t}, true
			}
		}
		k := j + 1
		for k < len(n) && k-j < 40 && isIdentByte(n[k]) {
			k++
		}
		if k > j+1 && k+1 < len(n) && n[k] == '>' && n[k+1] == '>' && markupTags[string(n[j+1:k])] {
			return markupHit{i, k + 2, mkToken, string(n[i : k+2])}, true
		}
		return markupHit{}, false
	}
	closing := false
	if j < len(n) && n[j] == '/' {
		closing = true
		j++
	}
	for j < len(n) && n[j] == ' ' && j-i < 4 {
		j++
	}
	k := j
	for k < len(n) && k-j < 40 && isIdentByte(n[k]) {
		k++
	}
	if k == j {
		return markupHit{}, false
	}
	name := string(n[j:k])
	// the tag must end within a bounded window
	e := k
	for e < len(n) && e-k < 200 && n[e] != '>' && n[e] != '<' && n[e] != '\n' {
		e++
	}
	if e >= len(n) || n[e] != '>' {
		return markupHit{}, false
	}
	// a flag's value placeholder ("--secret <secret>") is no markup
	// unless the text closes it
	if markupTags[name] && !(!closing && refFlagBefore.Match(n[max(0, i-42):i]) && !hasClose(name)) {
		return markupHit{i, e + 1, mkTag, name}, true
	}
	if roleTags[name] && (closing || hasClose(name)) {
		return markupHit{i, e + 1, mkRoleTag, name}, true
	}
	if htmlElements[name] || closing || !hasClose(name) {
		return markupHit{}, false
	}
	// a made-up tag wrapping text: named with a word of authority
	// (<critical_instructions>, <GLOBAL_OVERRIDE>, <ai-note>) or in
	// capitals (<GLOBAL>)
	if strong, weak := refTagWordsIn(name); strong {
		return markupHit{i, e + 1, mkTag, name}, true
	} else if weak || upper(j, k) {
		return markupHit{i, e + 1, mkOddTag, name}, true
	}
	return markupHit{}, false
}

// refTagWordsIn is tagWordsIn as of the reference commit.
func refTagWordsIn(name string) (strong, weak bool) {
	for w := range strings.FieldsFuncSeq(name, func(r rune) bool { return r == '_' || r == '-' }) {
		switch {
		case strongTagWords[w]:
			strong = true
		case weakTagWords[w]:
			weak = true
		}
	}
	return strong, weak
}

// refBracketAt is bracketAt as of the reference commit.
func refBracketAt(n []byte, i int) (markupHit, bool) {
	k := i + 1
	for k < len(n) && k-i < 24 && (isIdentByte(n[k]) || n[k] == ' ' || n[k] == '/') {
		k++
	}
	if k >= len(n) || (n[k] != ']' && n[k] != ':') || k == i+1 {
		return markupHit{}, false
	}
	name := strings.TrimSpace(string(n[i+1 : k]))
	if bracketTokens[name] {
		return markupHit{i, k + 1, mkToken, name}, true
	}
	if bracketLabels[name] {
		return markupHit{i, k + 1, mkOddTag, name}, true
	}
	return markupHit{}, false
}

// refCurlyAt is curlyAt as of the reference commit.
func refCurlyAt(n []byte, i int) (markupHit, bool) {
	if i+2 >= len(n) || n[i+1] != '{' {
		return markupHit{}, false
	}
	j := i + 2
	for j < len(n) && n[j] == ' ' && j-i < 4 {
		j++
	}
	k := j
	for k < len(n) && k-j < 32 && (isIdentByte(n[k]) || n[k] == ' ') {
		k++
	}
	e := k
	for e > j && n[e-1] == ' ' {
		e--
	}
	if e == j || k+1 >= len(n) || n[k] != '}' || n[k+1] != '}' {
		return markupHit{}, false
	}
	name := string(n[j:e])
	strong, _ := refTagWordsIn(strings.ReplaceAll(name, " ", "_"))
	switch name {
	case "system", "sys", "prompt", "root", "admin", "administrator", "secret":
		return markupHit{}, false // template variables as often as not
	}
	if bracketTokens[name] || strong {
		return markupHit{i, k + 2, mkToken, name}, true
	}
	if bracketLabels[name] {
		return markupHit{i, k + 2, mkOddTag, name}, true
	}
	return markupHit{}, false
}

// refLineRoleAt is lineRoleAt as of the reference commit.
func refLineRoleAt(n []byte, i int) (markupHit, bool) {
	j := i
	hashes := 0
	for j < len(n) && j-i < 8 && (n[j] == '#' || n[j] == '*' || n[j] == '>' || n[j] == ' ' || n[j] == '-' || n[j] == '=' || n[j] == '_') {
		if n[j] == '#' {
			hashes++
		}
		j++
	}
	k := j
	for k < len(n) && k-j < 16 && (('a' <= n[k] && n[k] <= 'z') || (n[k] == ' ' && k+1 < len(n) && 'a' <= n[k+1] && n[k+1] <= 'z')) {
		k++
	}
	if k == j {
		return markupHit{}, false
	}
	name := string(n[j:k])
	e := k
	for e < len(n) && e-k < 3 && (n[e] == '*' || n[e] == ' ' || n[e] == '_') {
		e++
	}
	if e < len(n) && n[e] == '(' { // an aside before the colon
		for c := e + 1; c < len(n) && c < e+64; c++ {
			if n[c] == ')' {
				e = c + 1
				for e < len(n) && e-k < 70 && n[e] == ' ' {
					e++
				}
				break
			}
		}
	}
	if e >= len(n) || n[e] != ':' {
		return markupHit{}, false
	}
	if hashes > 0 && headerRoles[name] {
		return markupHit{i, e + 1, mkHeaderRole, name}, true
	}
	if kind, ok := lineRoles[name]; ok {
		return markupHit{j, e + 1, kind, name}, true
	}
	return markupHit{}, false
}

// refNewView is newView as of the reference commit.
func refNewView(s string) *view {
	refDense.Do(refBuildDense)
	v := new(view)
	v.src = s
	norm := v.norm[:0]
	if cap(norm) < len(s)+8 {
		norm = make([]byte, 0, len(s)+8)
	}
	segs := v.segs[:0]
	if cap(segs) < len(s)/64+4 {
		segs = make([]seg, 0, len(s)/64+4)
	}
	lin := false       // the last segment is linear
	linSrc := int32(0) // where the next byte continues it in src
	// emit records that norm grew from n0 by the bytes of src [a, b).
	emit := func(n0, a, b int) {
		if len(norm)-n0 == b-a {
			if !lin || linSrc != int32(a) {
				segs = appendSeg(segs, seg{int32(n0), int32(a), -1})
				lin = true
			}
			linSrc = int32(b)
			return
		}
		segs = appendSeg(segs, seg{int32(n0), int32(a), int32(b)})
		lin = false
	}
	pendingWS := -1 // source offset of a pending white-space run
	newlines := 0
	// look-alike folding applies to words that mix Latin letters with
	// Cyrillic or Greek ones; decided lazily, at the first look-alike of a
	// word, so plain text is scanned once
	wordLatin := false // the current word has a Latin letter so far
	mixedUntil := -1   // a look-ahead found the word mixed up to here
	scannedUntil := -1 // a look-ahead found it not mixed up to here
	for i := 0; i < len(s); {
		c := s[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			if c <= ' ' || c == 0x7F {
				wordLatin = false
				if pendingWS < 0 {
					pendingWS = i
				}
				if c == '\n' {
					newlines++
				}
				i++
				continue
			}
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case fastLetter(r):
			case isCJK(r):
				// no case, no marks, no look-alikes: copied as is
				wordLatin = false
			case r == utf8.RuneError && size == 1, isSpaceRune(r), isC0orC1(r):
				// invalid bytes and controls separate words like spaces
				wordLatin = false
				if pendingWS < 0 {
					pendingWS = i
				}
				if r == 0x2028 || r == 0x2029 || r == 0x85 {
					newlines++
				}
				i += size
				continue
			case isDropped(r):
				i += size
				continue
			}
		}
		mixed := false
		if size == 1 {
			switch {
			case ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z'):
				wordLatin = true
			case '0' <= c && c <= '9':
			default:
				wordLatin = false
			}
		} else if isConfusableScript(r) {
			switch {
			case wordLatin || i < mixedUntil:
				mixed = true
			case i < scannedUntil:
			default:
				m, end := mixedWord(s, i)
				if m {
					mixedUntil = end
					mixed = true
				} else {
					scannedUntil = end
				}
			}
		} else if !isWordRune(r) {
			wordLatin = false
		} else if isLatinLetter(r) {
			wordLatin = true
		}
		if pendingWS >= 0 {
			if len(norm) > 0 {
				n0 := len(norm)
				switch {
				case newlines >= 2:
					norm = append(norm, '\n', '\n')
				case newlines == 1:
					norm = append(norm, '\n')
				default:
					norm = append(norm, ' ')
				}
				if i-pendingWS == len(norm)-n0 && (newlines == 0 || s[pendingWS] == '\n') {
					emit(n0, pendingWS, i)
				} else {
					segs = appendSeg(segs, seg{int32(n0), int32(pendingWS), int32(i)})
					lin = false
				}
			}
			pendingWS, newlines = -1, 0
		}
		if size == 1 {
			if !lin || linSrc != int32(i) {
				segs = appendSeg(segs, seg{int32(len(norm)), int32(i), -1})
				lin = true
			}
			// the rest of a run of printable ASCII in one go, lowercased
			if cap(norm)-len(norm) < len(s)-i {
				norm = append(norm[:cap(norm)], make([]byte, len(s)-i)...)[:len(norm)]
			}
			w := len(norm)
			buf := norm[:cap(norm)]
			j := i
			for j < len(s) && w < len(buf) {
				c := s[j]
				if c <= ' ' || c >= 0x7F {
					break
				}
				buf[w] = asciiLower[c]
				w++
				j++
			}
			norm = buf[:w]
			// a word goes on over digits: the run's last letter or other
			// byte after them decides whether the word has Latin letters
			for k := j - 1; k >= i; k-- {
				if c := s[k]; c < '0' || c > '9' {
					wordLatin = ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
					break
				}
			}
			linSrc = int32(j)
			i = j
			continue
		}
		n0 := len(norm)
		if isCJK(r) {
			norm = append(norm, s[i:i+size]...)
		} else {
			norm = foldRune(norm, r, mixed)
		}
		emit(n0, i, i+size)
		i += size
	}
	v.norm, v.segs = norm, segs
	refTokenize(v)
	return v
}

// refTokenize is view.tokenize as of the reference commit.
func refTokenize(v *view) {
	n := v.norm
	toks := v.toks[:0]
	if cap(toks) < len(n)/6+4 {
		toks = make([]token, 0, len(n)/6+4)
	}
	var pending uint8 = tokSentStart // flags for the next token
	inWord := false
	var cur token
	for i := 0; i < len(n); {
		c := n[i]
		size := 1
		isWord := false
		var r rune
		if c < utf8.RuneSelf {
			switch tokClass[c] {
			case tcWord:
				if !inWord {
					cur = token{start: int32(i), flags: pending}
					pending = 0
					inWord = true
				}
				i++
				for i < len(n) && tokClass[n[i]] == tcWord {
					i++
				}
				cur.end = int32(i)
				continue
			case tcPlain:
				// a separator that sets no flag
				if inWord {
					toks = appendTok(toks, cur)
					inWord = false
				}
				i++
				continue
			}
			r = rune(c)
		} else {
			r, size = utf8.DecodeRune(n[i:])
			if isCJK(r) {
				if inWord {
					toks = appendTok(toks, cur)
					inWord = false
				}
				toks = appendTok(toks, token{start: int32(i), end: int32(i + size), flags: pending})
				pending = 0
				i += size
				continue
			}
			isWord = isLetterOrDigit(r)
		}
		if isWord {
			if !inWord {
				cur = token{start: int32(i), flags: pending}
				pending = 0
				inWord = true
			}
			i += size
			for i < len(n) && tokClass[n[i]] == tcWord {
				i++
			}
			cur.end = int32(i)
			continue
		}
		// a separator: flags for the token before it (prev) and after it
		var prev uint8
		switch r {
		case ':', '：':
			prev = tokColonAfter
		case '"', '`':
			prev = tokQuoteAfter
			pending |= tokQuoteBefore
		case '\'':
			if !inWord {
				pending |= tokQuoteBefore
			}
			prev = tokQuoteAfter
		case '.', '!', '?', ';':
			if i+size >= len(n) || n[i+size] == ' ' || n[i+size] == '\n' {
				prev = tokBreakAfter
				pending |= tokSentStart
			}
		case '。', '！', '？', '；':
			prev = tokBreakAfter
			pending |= tokSentStart
		case '\n':
			pending |= tokLineStart
			if i+1 < len(n) && (n[i+1] == '\n' || n[i+1] == '-' || n[i+1] == '*' || n[i+1] == '#' || n[i+1] == '>' || n[i+1] == '|') {
				prev = tokBreakAfter
				pending |= tokSentStart
			}
		}
		if inWord {
			cur.flags |= prev
			toks = appendTok(toks, cur)
			inWord = false
		} else if prev != 0 && len(toks) > 0 {
			toks[len(toks)-1].flags |= prev
		}
		i += size
	}
	if inWord {
		toks = appendTok(toks, cur)
	}
	// tokens glued to '.', '@', '/', '_' or '-' on either side are pieces of
	// URLs, addresses, paths and identifiers
	for k := range toks {
		t := &toks[k]
		if t.end-t.start < 2 {
			continue // "e.g.", "i.e."
		}
		if t.start > 0 && isGlue(n[t.start-1]) && (t.start < 2 || n[t.start-2] != ' ') || int(t.end) < len(n) && isGlue(n[t.end]) && int(t.end)+1 < len(n) && n[t.end+1] != ' ' && n[t.end+1] != '\n' {
			t.flags |= tokInIdent
		}
	}
	// a line that starts with a label ("Assistant:", "Subject:") starts a
	// sentence: chat logs and headers do not run on across lines
	for k := 1; k < len(toks); k++ {
		if toks[k].flags&(tokLineStart|tokColonAfter) == tokLineStart|tokColonAfter {
			toks[k].flags |= tokSentStart
			toks[k-1].flags |= tokBreakAfter
		}
	}
	// sentence ends
	last := int32(len(toks) - 1)
	for k := len(toks) - 1; k >= 0; k-- {
		if toks[k].flags&tokBreakAfter != 0 || k < len(toks)-1 && toks[k+1].flags&tokSentStart != 0 {
			last = int32(k)
		}
		toks[k].sentEnd = last
	}
	v.toks = toks
	refResolve(lex, v)
}

// refScanPaths is scanPaths as of the reference commit.
func refScanPaths(v *view) []pathHit {
	n := v.norm
	var hits []pathHit
	last := -1
	for i := 0; i+1 < len(n) && len(hits) < 32; i++ {
		if i = pathAnchors.nextIn(n, i); i+1 >= len(n) {
			break
		}
		a := anchorClass(n[i])
		for _, li := range pathIndex[a][n[i+1]] {
			p := &pathLits[li]
			s := i - p.anchor
			e := s + len(p.lit)
			if s < 0 || e > len(n) || s < last || string(n[s:e]) != p.lit {
				continue
			}
			// whole names only: not process.env, not my_id_rsa_backup_tool;
			// the last file of a path may carry a prefix (secrets/fake_id_rsa)
			if s > 0 && (isAlnum(n[s-1]) || isAlnum(p.lit[0]) && (n[s-1] == '_' || n[s-1] == '-') && !refPathFileAt(n, s, e)) {
				continue
			}
			if last := p.lit[len(p.lit)-1]; isAlnum(last) && e < len(n) && (isAlnum(n[e]) || n[e] == '_') {
				continue // .environment, id_rsa2
			}
			if e < len(n) && n[e] == '.' && (hasPrefixAt(n, e, ".pub") || hasPrefixAt(n, e, ".example") || hasPrefixAt(n, e, ".sample") || hasPrefixAt(n, e, ".template") || hasPrefixAt(n, e, ".dist")) {
				continue // public keys and templates
			}
			// extend over the rest of the path (e.g. ~/.ssh/id_rsa)
			for e < len(n) && e-s < 200 && (isIdentByte(n[e]) || n[e] == '/' || n[e] == '.' || n[e] == '~') {
				e++
			}
			for e > s && n[e-1] == '.' {
				e--
			}
			hits = append(hits, pathHit{s, e, p})
			last = e
			i = e - 1
			break
		}
	}
	return hits
}

// refPhraseScratch is phraseScratch as of the reference commit.
type refPhraseScratch struct {
	next, checked []int32
	count         []uint8
	possible      []bool   // rules possible somewhere in the text
	seenRule      []uint32 // generation at which a rule was last considered
	gen           uint32
	win, all, st  []uint64
	m             matcher
}

// refScratchPool is scratchPool as of the reference commit.
var refScratchPool = sync.Pool{New: func() any {
	return &refPhraseScratch{
		next:     make([]int32, len(phraseRules)),
		checked:  make([]int32, len(phraseRules)),
		count:    make([]uint8, len(phraseRules)),
		possible: make([]bool, len(phraseRules)),
		seenRule: make([]uint32, len(phraseRules)),
	}
}}

// refMatchPhrases is matchPhrases as of the reference commit.
func refMatchPhrases(v *view) []phraseHit {
	if len(v.toks) == 0 {
		return nil
	}
	var hits []phraseHit
	sc := refScratchPool.Get().(*refPhraseScratch)
	defer refScratchPool.Put(sc)
	words := (len(lex.words) + 63) / 64
	if cap(sc.win) < words {
		sc.win = make([]uint64, words)
		sc.all = make([]uint64, words)
		sc.st = make([]uint64, words)
	}
	// The ids of the whole text first: a rule whose words do not all occur
	// somewhere in the text cannot match in any window of it, and a token
	// that starts no rule possible in the text is skipped at once.
	all := sc.all[:words]
	clear(all)
	for ti := range v.toks {
		t := &v.toks[ti]
		for j := uint8(0); j < t.nid; j++ {
			all[t.ids[j]>>6] |= 1 << (t.ids[j] & 63)
		}
	}
	startIDs := sc.st[:words] // ids that start a rule possible in the text
	clear(startIDs)
	any := false
	possible := sc.possible
	clear(possible)
	// only the rules that can start with a word of the text are candidates
	// (ruleIndex): a short field holds few words, and most rules start with
	// none of them
	if sc.gen++; sc.gen == 0 {
		clear(sc.seenRule) // the counter wrapped
		sc.gen = 1
	}
	for w, x := range all {
		for ; x != 0; x &= x - 1 {
			id := w<<6 + bits.TrailingZeros64(x)
			for _, ri := range ruleIndex[id] {
				if sc.seenRule[ri] == sc.gen {
					continue
				}
				sc.seenRule[ri] = sc.gen
				r := &phraseRules[ri]
				if !refRulePossible(r, all) {
					continue
				}
				possible[ri] = true
				any = true
				for _, fw := range r.first.firstWords {
					startIDs[fw] |= r.first.first[fw] & all[fw]
				}
			}
		}
	}
	if !any {
		return nil
	}
	clear(sc.next)
	clear(sc.count)
	clear(sc.checked)
	next := sc.next   // first token a rule may start at again
	count := sc.count // hits per rule
	m := &sc.m
	var tried [8]int32
	// A rule is tried at a token only if every word step it requires can
	// start somewhere in its window. A match never leaves its sentence and
	// spans at most maxWin tokens, so the window is the token's sentence
	// clipped to the token's block of 32 tokens and the next two. The
	// window's ids are kept as a bitset; the check is cached per rule and
	// window. When a window has few distinct ids (hostile repetitions such
	// as "ignore ignore …" have one or two), the ids that can start a
	// possible rule are found once per window and every other token is
	// skipped outright.
	checked := sc.checked // window id whose ids were checked for the rule, negated if impossible
	win := sc.win[:words] // ids present in the current window, exactly
	curBlock, curSent := -1, int32(-1)
	wid := int32(0)
	nSparse := -1 // -1: the window has more distinct ids than sparse holds
	var startable [16]int16
	nStart := 0
	for ti := range v.toks {
		tk := &v.toks[ti]
		if tk.nid == 0 {
			continue
		}
		starts := false
		for k := uint8(0); k < tk.nid; k++ {
			if id := tk.ids[k]; startIDs[id>>6]&(1<<(id&63)) != 0 {
				starts = true
				break
			}
		}
		if !starts {
			continue
		}
		if b := ti >> 5; b != curBlock || tk.sentEnd != curSent {
			curBlock, curSent = b, tk.sentEnd
			wid++
			lo, hi := ti, min(int(tk.sentEnd), (b+3)<<5-1)
			for lo > b<<5 && v.toks[lo-1].sentEnd == tk.sentEnd {
				lo--
			}
			clear(win)
			for k := lo; k <= hi; k++ {
				t := &v.toks[k]
				for j := uint8(0); j < t.nid; j++ {
					win[t.ids[j]>>6] |= 1 << (t.ids[j] & 63)
				}
			}
			n := 0
			for _, x := range win {
				n += bits.OnesCount64(x)
			}
			nSparse = -1
			nStart = 0
			if n <= 16 {
				// in a sparse window, find the ids that can start a
				// possible rule once, and skip every other token of the
				// window at once
				nSparse = n
				for w, x := range win {
					for ; x != 0; x &= x - 1 {
						id := int16(w<<6 + bits.TrailingZeros64(x))
						for _, ri := range ruleIndex[id] {
							if possible[ri] && refRulePossible(&phraseRules[ri], win) {
								startable[nStart] = id
								nStart++
								break
							}
						}
					}
				}
			}
		}
		if nSparse >= 0 {
			ok := false
			for k := uint8(0); k < tk.nid && !ok; k++ {
				for _, id := range startable[:nStart] {
					if id == tk.ids[k] {
						ok = true
						break
					}
				}
			}
			if !ok {
				continue
			}
		}
		nt := 0
		for k := uint8(0); k < tk.nid; k++ {
			for _, ri := range ruleIndex[tk.ids[k]] {
				if !possible[ri] || int(next[ri]) > ti || count[ri] >= maxHitsPerRule {
					continue
				}
				dup := false
				for _, t := range tried[:nt] {
					if t == ri {
						dup = true
						break
					}
				}
				if dup {
					continue
				}
				if nt < len(tried) {
					tried[nt] = ri
					nt++
				}
				r := &phraseRules[ri]
				if c := checked[ri]; c == wid {
					// possible: checked in this window already
				} else if c == -wid {
					continue
				} else if !refRulePossible(r, win) {
					checked[ri] = -wid
					continue
				} else {
					checked[ri] = wid
				}
				end := m.run(v, r.steps, ti)
				if end < 0 {
					continue
				}
				if r.negatable && negSet.anyIn(v, sentStartWithin(v, ti, 3), ti-1) {
					continue
				}
				if r.notNext != nil && end < len(v.toks) && end <= int(v.toks[end-1].sentEnd) && r.notNext.matchAt(v, end, int(v.toks[end].sentEnd)) > 0 {
					continue
				}
				if r.destAfter && !hasDestination(v, end-1) || r.needIdent && !hasIdent(v, ti, end-1) {
					next[ri] = int32(end) // overlapping retries would look at the same text
					continue
				}
				next[ri] = int32(end)
				count[ri]++
				hits = append(hits, phraseHit{rule: int(ri), a: ti, b: end - 1, mention: r.mention && isMention(v, ti, end-1)})
			}
		}
	}
	return hits
}

// refStepPossible is stepPossible as of the reference commit.
func refStepPossible(st *step, win []uint64) bool {
	for _, w := range st.firstWords {
		if st.first[w]&win[w] != 0 {
			return true
		}
	}
	return false
}

// refRulePossible is rulePossible as of the reference commit.
func refRulePossible(r *phraseRule, win []uint64) bool {
	for _, q := range r.req {
		if !refStepPossible(q, win) {
			return false
		}
	}
	return true
}

// refDense builds, once, what the reference's per-token walk of the
// lexicon (refResolve) used and the scanner no longer does: the edge
// tables of the trie's busy nodes, so that the reference runs as fast as
// it did.
var refDense sync.Once

func refBuildDense() {
	for i := range lex.nodes {
		if nd := &lex.nodes[i]; len(nd.edges) > 4 {
			nd.dense = new([256]int32)
			for _, e := range nd.edges {
				nd.dense[e.b] = e.to
			}
		}
	}
}

// refPathFileAt is pathFileAt written plainly: the run of path bytes that
// ends at e holds a slash before s, and no name byte follows e.
func refPathFileAt(n []byte, s, e int) bool {
	if e < len(n) && (isAlnum(n[e]) || n[e] == '_' || n[e] == '-') {
		return false
	}
	start := s
	for start > 0 && s-start < 200 && (isIdentByte(n[start-1]) || n[start-1] == '/' || n[start-1] == '.' || n[start-1] == '~') {
		start--
	}
	return bytes.IndexByte(n[start:s], '/') >= 0
}
