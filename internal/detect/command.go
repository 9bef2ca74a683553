package detect

import (
	"sort"
	"strings"
)

// Shell commands in a definition: a tool description has no reason to
// carry "rm -rf ~", "curl -X POST … -d @~/.ssh/id_rsa", "echo … >>
// ~/.bashrc" or a pipe into sh; a poisoned one carries them so the model
// runs them with a terminal tool. The scan runs over the normalised text
// (lowercase, white space collapsed) and looks, at each word start, for
// one of a fixed set of command shapes; every look-ahead is bounded, so
// the scan is linear.

type cmdShape struct {
	lead string   // the text the command starts with, at a word start
	need []string // one of these must follow on the same line, within 160 bytes ("": any word but prose)
	tier uint8    // 2: destroys, persists or sends data out; 1: runs code or escalates; 0: a plain command
	weak bool     // ordinary in developer guidance (package installs): Medium only when pressed ("you must … first")
	what string
}

var cmdShapes = []cmdShape{
	{lead: "rm -rf", tier: 2, what: "a recursive forced delete (rm -rf)"},
	{lead: "rm -fr", tier: 2, what: "a recursive forced delete (rm -rf)"},
	{lead: "rm -r ", tier: 2, what: "a recursive delete (rm -r)"},
	{lead: "rm --recursive", tier: 2, what: "a recursive delete (rm -r)"},
	{lead: "rm -f ", tier: 2, what: "a forced delete (rm -f)"},
	{lead: "curl ", need: []string{"-x post", "-x put", "--request post", " -d ", " -d@", " -d '", " -d \"", "--data", " -f ", "--form", "--upload-file", " -t ", "| sh", "|sh", "| bash", "|bash", "| python", "| zsh", "$("}, tier: 2, what: "curl sending data or piping into a shell"},
	{lead: "curl ", need: []string{"http://", "https://", " -", "$"}, what: "a curl command"},
	{lead: "wget ", need: []string{"| sh", "|sh", "| bash", "|bash", "--post", "-o-", "-qo-", "-o -"}, tier: 2, what: "wget piping into a shell or posting data"},
	{lead: "wget ", need: []string{"http://", "https://", " -"}, what: "a wget command"},
	{lead: "invoke-webrequest", tier: 1, what: "a PowerShell web request"},
	{lead: "invoke-restmethod", tier: 1, what: "a PowerShell web request"},
	{lead: "invoke-expression", tier: 1, what: "PowerShell running a string as code"},
	{lead: "iex(", tier: 1, what: "PowerShell running a string as code"},
	{lead: "iex (", tier: 1, what: "PowerShell running a string as code"},
	{lead: "powershell -e", tier: 1, what: "an encoded PowerShell command"},
	{lead: "powershell -enc", tier: 1, what: "an encoded PowerShell command"},
	{lead: "echo ", need: []string{">> ~/", ">>~/", "> ~/", ">> /etc/", "> /etc/", ">> $home", ">> .bashrc", ">> .zshrc", ">> .profile", "authorized_keys", "crontab"}, tier: 2, what: "echo writing into a startup or system file"},
	{lead: "echo ", need: []string{">>", "| sh", "|sh", "| bash", "|bash", "| base64"}, what: "an echo command"},
	{lead: "printf ", need: []string{">> ~/", "> ~/", ">> /etc/", "| sh", "| bash"}, tier: 2, what: "printf writing into a startup file or a shell"},
	{lead: "cat ", need: []string{">> ~/", "> ~/", ">> /etc/", "~/.ssh", "/etc/passwd", "/etc/shadow", "~/.aws", ".env", "| curl", "| nc", "|curl", "|nc"}, tier: 2, what: "cat of a secret file or into a startup file"},
	{lead: "chmod ", need: []string{"777", "+x", "+s", "u+s", "4755", "-r 7"}, tier: 2, what: "a permission change (chmod)"},
	{lead: "chown ", need: []string{""}, what: "an ownership change (chown)"},
	{lead: "sudo ", need: []string{""}, tier: 1, what: "a command run as root (sudo)"},
	{lead: "nc -e", tier: 2, what: "a netcat reverse shell"},
	{lead: "nc -l", tier: 2, what: "a netcat listener"},
	{lead: "ncat ", need: []string{""}, tier: 1, what: "a netcat connection"},
	{lead: "netcat ", need: []string{""}, tier: 1, what: "a netcat connection"},
	{lead: "/dev/tcp/", tier: 2, what: "a raw TCP connection from the shell (reverse shell)"},
	{lead: "bash -i", tier: 2, what: "an interactive shell (reverse shell)"},
	{lead: "bash -c", tier: 1, what: "a shell running a string"},
	{lead: "sh -c", tier: 1, what: "a shell running a string"},
	{lead: "zsh -c", tier: 1, what: "a shell running a string"},
	{lead: "python -c", tier: 1, what: "Python running a string"},
	{lead: "python3 -c", tier: 1, what: "Python running a string"},
	{lead: "perl -e", tier: 1, what: "Perl running a string"},
	{lead: "ruby -e", tier: 1, what: "Ruby running a string"},
	{lead: "node -e", tier: 1, what: "Node running a string"},
	{lead: "crontab ", need: []string{""}, tier: 2, what: "a crontab change (persistence)"},
	{lead: "mkfifo", tier: 2, what: "a named pipe (reverse shell)"},
	{lead: "base64 -d", tier: 2, what: "decoding a hidden payload (base64 -d)"},
	{lead: "base64 --decode", tier: 2, what: "decoding a hidden payload (base64 -d)"},
	{lead: "eval $(", tier: 1, what: "eval of a command's output"},
	{lead: "eval \"$(", tier: 1, what: "eval of a command's output"},
	{lead: "$(curl", tier: 2, what: "running what curl downloads"},
	{lead: "$(wget", tier: 2, what: "running what wget downloads"},
	{lead: "`curl", tier: 2, what: "running what curl downloads"},
	{lead: "kill -9", tier: 1, what: "killing processes (kill -9)"},
	{lead: "pkill ", need: []string{""}, tier: 1, what: "killing processes (pkill)"},
	{lead: "killall ", need: []string{""}, tier: 1, what: "killing processes (killall)"},
	{lead: "shutdown -", tier: 1, what: "shutting the machine down"},
	{lead: "mkfs", tier: 2, what: "formatting a disk (mkfs)"},
	{lead: "dd if=", tier: 2, what: "a raw disk copy (dd)"},
	{lead: ":(){", tier: 2, what: "a fork bomb"},
	{lead: "git push --force", tier: 1, what: "a forced git push"},
	{lead: "git push -f", tier: 1, what: "a forced git push"},
	{lead: "git reset --hard", tier: 1, what: "discarding work (git reset --hard)"},
	{lead: "git config --global", tier: 1, what: "a global git configuration change"},
	{lead: "history -c", tier: 2, what: "clearing the shell history"},
	{lead: "unset histfile", tier: 2, what: "hiding commands from the shell history"},
	{lead: "export histfile", tier: 2, what: "hiding commands from the shell history"},
	{lead: "printenv", tier: 2, what: "dumping the environment (it holds secrets)"},
	{lead: "ssh-keygen", need: []string{""}, what: "an SSH key command"},
	{lead: "scp ", need: []string{"@", ":"}, tier: 2, what: "copying files to another host (scp)"},
	{lead: "rsync ", need: []string{"@"}, tier: 2, what: "copying files to another host (rsync)"},
	{lead: "xargs rm", tier: 2, what: "a mass delete (xargs rm)"},
	{lead: "find / ", need: []string{"-delete", "-exec"}, tier: 2, what: "a mass delete or exec over the whole disk"},
	{lead: "del /f", tier: 2, what: "a forced delete (Windows)"},
	{lead: "del /s", tier: 2, what: "a recursive delete (Windows)"},
	{lead: "rd /s", tier: 2, what: "a recursive delete (Windows)"},
	{lead: "rmdir /s", tier: 2, what: "a recursive delete (Windows)"},
	{lead: "format c:", tier: 2, what: "formatting a disk (Windows)"},
	{lead: "reg add", tier: 1, what: "a registry change (Windows)"},
	{lead: "schtasks /create", tier: 2, what: "a scheduled task (persistence)"},
	{lead: "net user", tier: 1, what: "a Windows account change"},
	{lead: "certutil -urlcache", tier: 2, what: "a download with certutil"},
	{lead: "remove-item", need: []string{"-recurse", "-force"}, tier: 2, what: "a forced or recursive delete (PowerShell)"},
	{lead: "set-executionpolicy", tier: 1, what: "a PowerShell policy change"},
	{lead: "downloadstring(", tier: 2, what: "PowerShell downloading code to run"},
	{lead: "new-object net.webclient", tier: 2, what: "PowerShell downloading code to run"},
	{lead: "find ~", need: []string{"-delete", "-exec"}, tier: 2, what: "a mass delete or exec over the home directory"},
	{lead: "find $home", need: []string{"-delete", "-exec"}, tier: 2, what: "a mass delete or exec over the home directory"},
	{lead: "ssh -r ", tier: 2, what: "an SSH reverse tunnel"},
	{lead: "npm install ", need: []string{""}, weak: true, what: "a package install (npm)"},
	{lead: "npm i ", need: []string{""}, weak: true, what: "a package install (npm)"},
	{lead: "npx ", need: []string{""}, weak: true, what: "a package run (npx)"},
	{lead: "pip install ", need: []string{""}, weak: true, what: "a package install (pip)"},
	{lead: "pip3 install ", need: []string{""}, weak: true, what: "a package install (pip)"},
	{lead: "yarn add ", need: []string{""}, weak: true, what: "a package install (yarn)"},
	{lead: "gem install ", need: []string{""}, weak: true, what: "a package install (gem)"},
	{lead: "cargo install ", need: []string{""}, weak: true, what: "a package install (cargo)"},
	{lead: "go install ", need: []string{""}, weak: true, what: "a package install (go)"},
	{lead: "brew install ", need: []string{""}, weak: true, what: "a package install (brew)"},
	{lead: "apt install ", need: []string{""}, weak: true, what: "a package install (apt)"},
	{lead: "apt-get install ", need: []string{""}, weak: true, what: "a package install (apt)"},
	{lead: "| sh", tier: 2, what: "a pipe into a shell"},
	{lead: "| bash", tier: 2, what: "a pipe into a shell"},
	{lead: "|sh", tier: 2, what: "a pipe into a shell"},
	{lead: "|bash", tier: 2, what: "a pipe into a shell"},
	{lead: ">> ~/.", tier: 2, what: "appending to a startup file in the home directory"},
	{lead: ">>~/.", tier: 2, what: "appending to a startup file in the home directory"},
	{lead: "> ~/.ssh", tier: 2, what: "writing into the SSH key directory"},
	{lead: ">> /etc/", tier: 2, what: "appending to a system file"},
}

// Command leads are found two ways: a lead that starts with a word
// ("rm -rf", "curl ") is tried only at tokens holding that word
// (cmdWords); a lead that starts with punctuation ("| sh", ">> ~/.",
// "$(curl") is tried at the bytes of cmdPunct. Either way a position is
// tried against the few shapes that can start there.
var (
	cmdWords, cmdPunct = indexCommands()
	cmdLeads           = newByteSet("|>/$`:")
	// cmdSecond[c] holds the bytes that follow c in the leads of cmdPunct[c]:
	// most '/' and ':' of a text (URLs, times) fail on it at once
	cmdSecond = func() (t [256]byteSet) {
		for c, cands := range cmdPunct {
			for _, si := range cands {
				t[c][cmdShapes[si].lead[1]] = true
			}
		}
		return t
	}()
)

func indexCommands() (words map[string][]int, punct *[256][]int) {
	words = map[string][]int{}
	punct = new([256][]int)
	for i, c := range cmdShapes {
		l := c.lead
		if isAlnum(l[0]) {
			k := 0
			for k < len(l) && isAlnum(l[k]) {
				k++
			}
			words[l[:k]] = append(words[l[:k]], i)
			continue
		}
		if !strings.ContainsRune("|>/$`:", rune(l[0])) {
			panic("detect: command lead starts with an unindexed byte: " + l)
		}
		punct[l[0]] = append(punct[l[0]], i)
	}
	return words, punct
}

const needBudget = 256

type cmdHit struct {
	ns, ne int
	shape  *cmdShape
}

// scanCommands finds shell commands in v.norm: at most 16, in order.
func scanCommands(v *view) []cmdHit {
	n := v.norm
	mc := v.cursor(markCommand)
	var hits []cmdHit
	// each look-ahead for a "need" reads at most a line of 160 bytes;
	// hostile text ("curl curl curl …") gets at most needBudget of them
	budget := needBudget
	// a command inside another one's span is tried too ("wget … && chmod
	// 777 …"): overlapping findings merge, keeping the higher severity
	words := len(v.toks)
	if !intersects(cmdWordStep.set, v.ids) {
		words = 0 // no word of the text starts a command
	}
	for ti := 0; ti < words && len(hits) < 16; ti++ {
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
		// the bytes themselves when the list was given up (dense text)
		if mc.dense {
			i = cmdLeads.nextIn(n, i)
		} else {
			i = mc.fromList(n, i)
		}
		if i >= len(n) {
			break
		}
		if i < last {
			continue
		}
		if i+1 < len(n) && !cmdSecond[n[i]][n[i+1]] {
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

// matchCommand tries the shapes cands at normalised offset i.
func matchCommand(n []byte, i int, cands []int, budget *int) (cmdHit, bool) {
	for _, si := range cands {
		sh := &cmdShapes[si]
		if !hasPrefixAt(n, i, sh.lead) {
			continue
		}
		e := i + len(sh.lead)
		if l := sh.lead; len(l) >= 2 && isAlnum(l[len(l)-1]) && isAlnum(l[len(l)-2]) && e < len(n) && isAlnum(n[e]) {
			continue // "| shell", "printenvelope": the word goes on
		}
		if sh.need != nil {
			if *budget--; *budget < 0 {
				continue
			}
			line := e
			for line < len(n) && line-e < 160 && n[line] != '\n' {
				line++
			}
			rest := string(n[e:line])
			k := -1
			for _, w := range sh.need {
				if w == "" {
					// anything but a bare word after it: "sudo rm", not
					// "sudo access"
					if line > e && (isAlnum(n[e]) || n[e] == '-') && !commonAfter(rest) {
						k = 0
					}
					continue
				}
				if j := strings.Index(rest, w); j >= 0 && (k < 0 || j+len(w) > k) {
					k = j + len(w)
				}
			}
			if k < 0 {
				continue
			}
			e += k
		}
		// the command runs to the end of its backticks or quotes, or to
		// the end of the line, at most 120 bytes
		for e < len(n) && e-i < 120 && n[e] != '\n' && n[e] != '`' && n[e] != '"' && !(n[e] == '.' && (e+1 == len(n) || n[e+1] == ' ')) {
			e++
		}
		return cmdHit{i, e, sh}, true
	}
	return cmdHit{}, false
}

// commonAfter reports prose after "sudo", "pkill"…: "sudo access", "sudo
// privileges" are words about the command, not the command.
func commonAfter(rest string) bool {
	w, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	switch strings.Trim(w, ".,;:)") {
	case "access", "privileges", "privilege", "rights", "permission", "permissions", "mode", "password", "user", "users", "group", "is", "are", "was", "and", "or", "to", "for", "the", "a", "an", "command", "commands":
		return true
	}
	return false
}

// directive reports whether the sentence of the command, before it, tells
// the model to run something ("run", "execute", "you must", "first"…), and
// whether it is negated or given as an example.
func commandContext(v *view, ns, ne int) (directive, negated, example bool) {
	if len(v.toks) == 0 {
		return false, false, false
	}
	ti := v.tokenAt(ns)
	if ti >= len(v.toks) {
		ti = len(v.toks) - 1
	}
	sa := sentStartWithin(v, ti, 16)
	if ti > 0 && v.toks[ti].flags&tokSentStart != 0 && v.toks[ti].flags&tokLineStart != 0 {
		// a command on a line of its own: look at the line before
		sa = sentStartWithin(v, ti-1, 16)
	}
	directive = runVerbs.anyIn(v, sa, ti-1) || modalSet.anyIn(v, sa, ti-1)
	negated = negSet.anyIn(v, sa, ti-1)
	tb := min(max(ti, v.tokenAt(ne)-1), len(v.toks)-1)
	example = isMention(v, ti, tb)
	return directive, negated, example
}

var runVerbs, cmdWordStep *step

func initCommandWords() {
	words := make([]string, 0, len(cmdWords))
	for w := range cmdWords {
		words = append(words, w)
	}
	sort.Strings(words)
	cmdWordStep = wordSet(strings.Join(words, "|"))
	runVerbs = wordSet("run|execute|exec|type|enter|issue|launch|invoke|perform|paste|call|trigger|start|do|use|using|via")
	strongModal = wordSet("must|always|first|immediately|make sure|be sure|before|required|mandatory|need to|needs to|have to|has to|remember to|do not forget|don t forget|you should|then|after that|afterwards")
}

var strongModal *step

// commandSeverity is the severity of a command found in a field.
func commandSeverity(v *view, h cmdHit, ctx ctxKind) (Severity, string) {
	ti := v.tokenAt(h.ns)
	directive, negated, example := commandContext(v, h.ns, h.ne)
	strong := false
	if ti < len(v.toks) {
		sa := sentStartWithin(v, ti, 16)
		if ti > 0 && v.toks[ti].flags&tokLineStart != 0 {
			sa = sentStartWithin(v, ti-1, 16)
		}
		strong = strongModal.anyIn(v, sa, ti-1)
	}
	what := h.shape.what
	if !negated && ti < len(v.toks) {
		// "blocked commands: rm -rf, sudo …": a list of what it refuses
		negated = refusalWords.anyIn(v, sentStartWithin(v, ti, 16), min(int(v.toks[ti].sentEnd), ti+16))
	}
	switch {
	case negated:
		return Low, "Mentions " + what + " in a warning or a prohibition."
	case example && !strong:
		return Low, "Mentions " + what + " as an example."
	case h.shape.tier > 0 && !example && (h.shape.tier == 2 && directive || strong):
		return sevFor(ctx, High, Medium), "Tells the model to run " + what + ": a definition that instructs a shell command is how poisoned tools get code run on the user's machine."
	case h.shape.tier > 0:
		return sevFor(ctx, Medium, Low), "Holds " + what + ": a tool description has no reason to carry a shell command like this."
	case directive && !example && (!h.shape.weak || strong):
		return sevFor(ctx, Medium, Low), "Tells the model to run " + what + "."
	}
	return Low, "Mentions " + what + "."
}
