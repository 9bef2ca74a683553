package detect

import "unicode/utf8"

// Terminal escapes: ANSI/ECMA-48 sequences and the C0/C1 controls that a
// terminal acts on. A client that shows tool descriptions or results in a
// terminal (Claude Code, a CLI) lets them move the cursor, erase lines,
// recolour text to invisible, retitle the window, write the clipboard or
// plant hyperlinks whose target differs from their text; the model reads
// the raw bytes.

type ansiKind uint8

const (
	ansiSGR       ansiKind = iota // colours and styles
	ansiConceal                   // SGR 8 (hidden) or foreground = background
	ansiCursor                    // cursor movement, save/restore
	ansiErase                     // erase line/screen
	ansiCSI                       // any other CSI
	ansiOSC                       // operating system command
	ansiHyperlink                 // OSC 8
	ansiClipboard                 // OSC 52
	ansiTitle                     // OSC 0/1/2
	ansiString                    // DCS, APC, PM, SOS
	ansiEsc                       // ESC + one character
	ansiOverwrite                 // backspace, bare carriage return, DEL
	ansiControl                   // other C0/C1 controls
)

var ansiWhat = [...]string{
	ansiSGR:       "an ANSI colour/style sequence",
	ansiConceal:   "an ANSI sequence that makes text invisible",
	ansiCursor:    "an ANSI cursor-movement sequence (it can overwrite what is shown)",
	ansiErase:     "an ANSI erase sequence (it can wipe what is shown)",
	ansiCSI:       "an ANSI control sequence",
	ansiOSC:       "an OSC terminal command",
	ansiHyperlink: "an OSC 8 terminal hyperlink (its target can differ from its text)",
	ansiClipboard: "an OSC 52 sequence that writes the clipboard",
	ansiTitle:     "an OSC sequence that sets the terminal title",
	ansiString:    "a terminal control string (DCS/APC/PM/SOS)",
	ansiEsc:       "a terminal escape",
	ansiOverwrite: "a backspace or bare carriage return (it overwrites text in a terminal)",
	ansiControl:   "a control character",
}

var ansiMsg = func() (m [len(ansiWhat)]string) {
	for k, w := range ansiWhat {
		m[k] = "Contains " + w + ": terminals act on it, while the model reads the raw bytes."
	}
	return m
}()

var ansiStart = func() *byteSet {
	var t byteSet
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t[0x7F], t[0xC2] = true, true
	return &t
}()

// scanANSI reports terminal escapes and controls in s.
func scanANSI(s string, ctx ctxKind, add adder) {
	for i := 0; i < len(s); {
		// only C0 controls, DEL and the lead byte of C1 controls (U+0080–
		// U+009F are C2 80–C2 9F) can start what this reports; no other
		// rune's encoding contains them
		if i = ansiStart.next(s, i); i >= len(s) {
			break
		}
		c := s[i]
		var r rune = rune(c)
		size := 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r < 0x80 || r > 0x9F {
				i += size
				continue
			}
		} else if c >= 0x20 && c != 0x7F {
			i++
			continue
		}
		var kind ansiKind
		end := i + size
		switch {
		case r == 0x1B:
			kind, end = parseEscape(s, i+1)
		case r == 0x9B: // C1 CSI
			kind, end = parseCSI(s, i+size)
		case r == 0x9D: // C1 OSC
			kind, end = parseOSC(s, i+size)
		case r == 0x90 || r == 0x98 || r == 0x9E || r == 0x9F:
			kind, end = ansiString, stringEnd(s, i+size)
		case r == '\t' || r == '\n':
			i++
			continue
		case r == '\r':
			if i+1 >= len(s) || s[i+1] == '\n' {
				i++
				continue
			}
			kind = ansiOverwrite
		case r == 0x08 || r == 0x7F:
			kind = ansiOverwrite
			for end < len(s) && (s[end] == 0x08 || s[end] == 0x7F) {
				end++
			}
		default:
			kind = ansiControl
		}
		var sev Severity
		switch kind {
		case ansiSGR:
			sev = sevFor(ctx, High, Low)
		case ansiOverwrite, ansiControl:
			sev = sevFor(ctx, Medium, Low)
		default:
			sev = sevFor(ctx, High, Medium)
		}
		add(detANSI, sev, i, end, ansiMsg[kind])
		i = end
	}
}

// parseEscape parses what follows an ESC at i.
func parseEscape(s string, i int) (ansiKind, int) {
	if i >= len(s) {
		return ansiEsc, i
	}
	switch s[i] {
	case '[':
		return parseCSI(s, i+1)
	case ']':
		return parseOSC(s, i+1)
	case 'P', 'X', '^', '_':
		return ansiString, stringEnd(s, i+1)
	case '7', '8':
		return ansiCursor, i + 1
	case 'c':
		return ansiErase, i + 1
	}
	if s[i] >= 0x20 && s[i] <= 0x2F { // nF: intermediates then a final
		j := i
		for j < len(s) && j-i < 8 && s[j] >= 0x20 && s[j] <= 0x2F {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7E {
			j++
		}
		return ansiEsc, j
	}
	if s[i] >= 0x30 && s[i] <= 0x7E {
		return ansiEsc, i + 1
	}
	return ansiEsc, i
}

// parseCSI parses a control sequence whose parameters start at i.
func parseCSI(s string, i int) (ansiKind, int) {
	j := i
	for j < len(s) && j-i < 64 && s[j] >= 0x30 && s[j] <= 0x3F {
		j++
	}
	params := s[i:j]
	for j < len(s) && j-i < 80 && s[j] >= 0x20 && s[j] <= 0x2F {
		j++
	}
	if j >= len(s) || s[j] < 0x40 || s[j] > 0x7E {
		return ansiCSI, j
	}
	final := s[j]
	j++
	switch final {
	case 'm':
		if sgrConceals(params) {
			return ansiConceal, j
		}
		return ansiSGR, j
	case 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'f', 'd', 's', 'u':
		return ansiCursor, j
	case 'J', 'K', 'X', 'P', 'M', 'L', '@':
		return ansiErase, j
	}
	return ansiCSI, j
}

// sgrConceals reports SGR parameters that hide text: 8 (conceal), or a
// foreground equal to the background.
func sgrConceals(params string) bool {
	var nums []int
	n, have := 0, false
	for k := 0; k <= len(params); k++ {
		if k == len(params) || params[k] == ';' || params[k] == ':' {
			if have || k == len(params) || params[k] == ';' {
				nums = append(nums, n)
			}
			n, have = 0, false
			continue
		}
		if params[k] >= '0' && params[k] <= '9' {
			n = n*10 + int(params[k]-'0')
			if n > 1000 {
				n = 1000
			}
			have = true
		}
	}
	fg, bg := -1, -1
	for _, v := range nums {
		switch {
		case v == 8:
			return true
		case v >= 30 && v <= 37:
			fg = v - 30
		case v >= 90 && v <= 97:
			fg = v - 90 + 8
		case v >= 40 && v <= 47:
			bg = v - 40
		case v >= 100 && v <= 107:
			bg = v - 100 + 8
		}
	}
	return fg >= 0 && fg == bg
}

// parseOSC parses an operating system command whose body starts at i, up
// to BEL or ST (bounded to 4 KB).
func parseOSC(s string, i int) (ansiKind, int) {
	kind := ansiOSC
	switch {
	case hasPrefixString(s[i:], "8;"):
		kind = ansiHyperlink
	case hasPrefixString(s[i:], "52;"):
		kind = ansiClipboard
	case hasPrefixString(s[i:], "0;"), hasPrefixString(s[i:], "1;"), hasPrefixString(s[i:], "2;"):
		kind = ansiTitle
	}
	return kind, stringEnd(s, i)
}

// stringEnd finds the end of a control string starting at i: after BEL,
// ESC \ or C1 ST; at most 4 KB.
func stringEnd(s string, i int) int {
	j := i
	for j < len(s) && j-i < 4096 {
		switch s[j] {
		case 0x07:
			return j + 1
		case 0x1B:
			if j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
			return j
		case 0xC2:
			if j+1 < len(s) && s[j+1] == 0x9C {
				return j + 2
			}
		}
		j++
	}
	return j
}

func hasPrefixString(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }
