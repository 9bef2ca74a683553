package detect

// Sensitive paths: files that hold credentials or client configuration. The
// scan runs over the normalised text; each literal is anchored at its first
// '.', '/', '_', '~' or '-' and looked up by that byte and the next one, so
// the scan costs a table lookup per punctuation byte.

type pathLit struct {
	lit    string
	anchor int // offset of the anchor byte in lit
	what   string
}

var pathLits = []pathLit{
	{lit: "~/.ssh", what: "the SSH key directory"},
	{lit: ".ssh/", what: "the SSH key directory"},
	{lit: "id_rsa", what: "an SSH private key"},
	{lit: "id_dsa", what: "an SSH private key"},
	{lit: "id_ecdsa", what: "an SSH private key"},
	{lit: "id_ed25519", what: "an SSH private key"},
	{lit: "authorized_keys", what: "the SSH authorised keys"},
	{lit: ".env", what: "a dotenv secrets file"},
	{lit: ".envrc", what: "a direnv secrets file"},
	{lit: "mcp.json", what: "an MCP client configuration (it holds other servers' tokens)"},
	{lit: "claude_desktop_config.json", what: "Claude Desktop's MCP configuration (it holds other servers' tokens)"},
	{lit: "cline_mcp_settings.json", what: "an MCP client configuration"},
	{lit: "mcp_config.json", what: "an MCP client configuration"},
	{lit: ".aws/credentials", what: "AWS credentials"},
	{lit: ".aws/config", what: "AWS configuration"},
	{lit: "aws_secret_access_key", what: "an AWS secret key"},
	{lit: ".config/gcloud", what: "Google Cloud credentials"},
	{lit: "application_default_credentials.json", what: "Google Cloud credentials"},
	{lit: ".azure/", what: "Azure credentials"},
	{lit: ".kube/config", what: "Kubernetes credentials"},
	{lit: ".netrc", what: "stored login passwords (.netrc)"},
	{lit: "_netrc", what: "stored login passwords (.netrc)"},
	{lit: ".git-credentials", what: "stored Git credentials"},
	{lit: ".npmrc", what: "npm tokens"},
	{lit: ".pypirc", what: "PyPI tokens"},
	{lit: ".docker/config.json", what: "Docker registry credentials"},
	{lit: ".config/gh/hosts.yml", what: "GitHub CLI tokens"},
	{lit: "/etc/shadow", what: "the system password hashes"},
	{lit: "/etc/passwd", what: "the system account list"},
	{lit: "/etc/sudoers", what: "the sudo configuration"},
	{lit: ".bash_history", what: "shell history"},
	{lit: ".bashrc", what: "a shell startup file (commands in it run in every shell)"},
	{lit: ".zshrc", what: "a shell startup file (commands in it run in every shell)"},
	{lit: ".bash_profile", what: "a shell startup file (commands in it run in every shell)"},
	{lit: ".zprofile", what: "a shell startup file (commands in it run in every shell)"},
	{lit: ".bash_login", what: "a shell startup file (commands in it run in every shell)"},
	{lit: "~/.profile", what: "a shell startup file (commands in it run in every shell)"},
	{lit: ".ssh\\", what: "the SSH key directory"},
	{lit: ".git/config", what: "a Git configuration (it can hold tokens)"},
	{lit: ".htpasswd", what: "stored web passwords"},
	{lit: "/proc/self/environ", what: "the process environment (it holds secrets)"},
	{lit: "/var/run/secrets", what: "Kubernetes service-account credentials"},
	{lit: ".local/share/keyrings", what: "the desktop keyring"},
	{lit: "library/keychains", what: "the macOS keychain"},
	{lit: ".mozilla/firefox", what: "the Firefox profile (saved passwords and cookies)"},
	{lit: ".config/google-chrome", what: "the Chrome profile (saved passwords and cookies)"},
	{lit: "google/chrome/user data", what: "the Chrome profile (saved passwords and cookies)"},
	{lit: ".bitcoin/", what: "a Bitcoin wallet"},
	{lit: ".ethereum/keystore", what: "Ethereum wallet keys"},
	{lit: ".config/solana", what: "Solana wallet keys"},
	{lit: ".zsh_history", what: "shell history"},
	{lit: ".gnupg", what: "GnuPG private keys"},
	{lit: "wallet.dat", what: "a cryptocurrency wallet"},
	{lit: ".password-store", what: "a password store"},
	{lit: ".vault-token", what: "a Vault token"},
	{lit: ".pgpass", what: "stored PostgreSQL passwords"},
	{lit: ".my.cnf", what: "stored MySQL passwords"},
	{lit: "terraform.tfstate", what: "Terraform state (it holds secrets)"},
	{lit: "login.keychain", what: "the macOS keychain"},
}

// pathIndex[anchor class][next byte] lists the literals anchored there.
var pathIndex [5][256][]int

func anchorClass(c byte) int {
	switch c {
	case '.':
		return 0
	case '/':
		return 1
	case '_':
		return 2
	case '~':
		return 3
	case '-':
		return 4
	}
	return -1
}

func init() {
	for i := range pathLits {
		p := &pathLits[i]
		p.anchor = -1
		for k := 0; k < len(p.lit); k++ {
			if anchorClass(p.lit[k]) >= 0 {
				p.anchor = k
				break
			}
		}
		if p.anchor < 0 || p.anchor+1 >= len(p.lit) {
			panic("detect: path literal without an inner anchor: " + p.lit)
		}
		a := anchorClass(p.lit[p.anchor])
		nb := p.lit[p.anchor+1]
		pathIndex[a][nb] = append(pathIndex[a][nb], i)
	}
}

var pathAnchors = newByteSet("./_~-")

func isAlnum(c byte) bool {
	return ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c >= 0x80
}

type pathHit struct {
	ns, ne int
	lit    *pathLit
}

// scanPaths finds sensitive paths in v.norm.
func scanPaths(v *view) []pathHit {
	n := v.norm
	mc := v.cursor(markPath)
	var hits []pathHit
	last := -1
	for i := 0; i+1 < len(n) && len(hits) < 32; i++ {
		// the bytes themselves when the list was given up (dense text)
		if mc.dense {
			i = pathAnchors.nextIn(n, i)
		} else {
			i = mc.fromList(n, i)
		}
		if i+1 >= len(n) {
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
			// a file of a path may carry a prefix (secrets/fake_id_rsa)
			if s > 0 && (isAlnum(n[s-1]) || isAlnum(p.lit[0]) && (n[s-1] == '_' || n[s-1] == '-') && !pathFileAt(n, s, e)) {
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

// requested reports whether the tokens before normalised offset ns in the
// same sentence ask for something to be read, sent or included, and are
// not negated.
func requested(v *view, ns, ne int) bool {
	if len(v.toks) == 0 {
		return false
	}
	ti := v.tokenAt(ns)
	if ti >= len(v.toks) {
		ti = len(v.toks) - 1
	}
	a := sentStartWithin(v, ti, 10)
	if !requestVerbs.anyIn(v, a, ti-1) {
		// "~/.ssh/id_rsa contents" / "~/.ssh/id_rsa: send its contents"
		after := v.tokenAt(ne)
		if after >= len(v.toks) || after > int(v.toks[ti].sentEnd) || !contentWords.anyIn(v, after, min(after+3, int(v.toks[ti].sentEnd))) {
			return false
		}
	}
	return !negSet.anyIn(v, a, ti-1)
}

// pathExample reports a sensitive path the text only gives as an example
// or as something it refuses: after "e.g.", "such as", "like" in the same
// sentence; in a sentence that rejects or blocks it ("… are rejected",
// "never reads"); or as one quoted item of a list (`".env", "Dockerfile"`).
func pathExample(v *view, ns, ne int) bool {
	if len(v.toks) == 0 {
		return false
	}
	ti := v.tokenAt(ns)
	if ti >= len(v.toks) {
		return false
	}
	tb := max(ti, v.tokenAt(ne)-1)
	tb = min(tb, len(v.toks)-1)
	if isMention(v, ti, tb) {
		return true
	}
	sa := sentStartWithin(v, ti, 24)
	se := min(int(v.toks[ti].sentEnd), ti+24)
	if refusalWords.anyIn(v, sa, se) {
		return true
	}
	// one quoted item of a list
	n := v.norm
	if ns > 0 && ne < len(n) && (n[ns-1] == '"' || n[ns-1] == '\'' || n[ns-1] == '`') && n[ne] == n[ns-1] {
		after := ne + 1
		for after < len(n) && n[after] == ' ' {
			after++
		}
		before := ns - 2
		for before >= 0 && n[before] == ' ' {
			before--
		}
		return after < len(n) && (n[after] == ',' || n[after] == ')') || before >= 0 && (n[before] == ',' || n[before] == '(')
	}
	return false
}

// pathFileAt reports that n[s:e] ends the last part of a path: a slash
// comes before it in the same run of path bytes (at most 200 back), and no
// name byte after it.
func pathFileAt(n []byte, s, e int) bool {
	if e < len(n) && (isAlnum(n[e]) || n[e] == '_' || n[e] == '-') {
		return false
	}
	for k := s - 1; k >= 0 && s-k <= 200; k-- {
		switch c := n[k]; {
		case c == '/':
			return true
		case !isIdentByte(c) && c != '.' && c != '~':
			return false
		}
	}
	return false
}
