package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// File is a gateway configuration file (weir gateway --config):
//
//	listen: 127.0.0.1:8931          # ignored with --stdio
//	policy: ./policy.yaml           # optional; the default preset otherwise
//	tokens_file: ./tokens.txt       # optional; WEIR_TOKENS works too
//	allow_origins: [http://localhost:3000]
//	rate: 100                       # requests per second per tenant
//	store: {url: "postgres://weir:${PGPASSWORD}@db:5432/weir"}   # optional; shared by replicas
//	servers:
//	  notes: {command: [npx, -y, "@modelcontextprotocol/server-filesystem", /home/me/notes]}
//	  web:   {url: "https://mcp.example.com/mcp", headers: {Authorization: "Bearer ${WEB_TOKEN}"}}
//
// Relative paths are relative to the file's directory. Unknown keys are
// errors naming the file, line and key.
type File struct {
	Path         string
	Listen       string
	Policy       string
	TokensFile   string
	AllowOrigins []string
	Rate         float64
	// StoreURL names a PostgreSQL state store that replicas share
	// (store: {url: ...}, ${VAR} expanded); empty: the SQLite file of
	// $WEIR_HOME, or WEIR_STORE_URL.
	StoreURL string
	Servers  []ServerConfig // in the file's order
}

// ServerConfig is one upstream: a command (stdio) or a URL (Streamable
// HTTP).
type ServerConfig struct {
	Name    string
	Line    int
	Command []string
	Env     map[string]string
	Cwd     string
	URL     *url.URL
	Header  http.Header
}

// serverNameRE keeps names free of "_" and "+", so SERVER__tool and
// SERVER+uri split back unambiguously, and starting with a letter, so
// SERVER+scheme:… is still a URI.
var serverNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,62}$`)

// ConfigError is one problem in a configuration file.
type ConfigError struct {
	File      string
	Line, Col int
	Key       string
	Msg       string
}

func (e *ConfigError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// LoadFile reads and checks a gateway configuration. getenv expands
// ${VAR} in header values.
func LoadFile(path string, getenv func(string) (string, bool)) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	return ParseFile(path, data, getenv)
}

// ParseFile is LoadFile on data already read.
func ParseFile(path string, data []byte, getenv func(string) (string, bool)) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{File: path, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	p := &cfgParser{file: path}
	f := &File{Path: path}
	if len(doc.Content) == 0 {
		return nil, &ConfigError{File: path, Msg: "the file is empty; it needs at least a servers: section"}
	}
	root := doc.Content[0]
	dir := filepath.Dir(path)
	p.mapping(root, "", map[string]func(*yaml.Node, string){
		"listen":      func(n *yaml.Node, k string) { f.Listen = p.str(n, k) },
		"policy":      func(n *yaml.Node, k string) { f.Policy = rel(dir, p.str(n, k)) },
		"tokens_file": func(n *yaml.Node, k string) { f.TokensFile = rel(dir, p.str(n, k)) },
		"rate": func(n *yaml.Node, k string) {
			if err := n.Decode(&f.Rate); err != nil || f.Rate <= 0 {
				p.errAt(n, k, "want a positive number of requests per second")
			}
		},
		"store": func(n *yaml.Node, k string) {
			p.mapping(n, k, map[string]func(*yaml.Node, string){
				"url": func(n *yaml.Node, k string) {
					raw := p.str(n, k)
					v, err := expandEnv(raw, getenv)
					if err != nil {
						p.errAt(n, k, "%v", err)
						return
					}
					if err := CheckStoreURL(v); err != nil {
						p.errAt(n, k, "%v", err)
						return
					}
					f.StoreURL = v
				},
			})
		},
		"allow_origins": func(n *yaml.Node, k string) {
			f.AllowOrigins = p.strs(n, k)
			for i, o := range f.AllowOrigins {
				if u, err := url.Parse(o); err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
					p.errAt(n.Content[i], fmt.Sprintf("%s[%d]", k, i), "an origin is scheme://host[:port], e.g. http://localhost:3000")
				}
			}
		},
		"servers": func(n *yaml.Node, k string) {
			if n.Kind != yaml.MappingNode {
				p.errAt(n, k, "want a mapping of server names to {command: [...]} or {url: ...}")
				return
			}
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				name, body := n.Content[i], n.Content[i+1]
				key := k + "." + name.Value
				if seen[name.Value] {
					p.errAt(name, key, "set twice: each server needs a name of its own")
					continue
				}
				seen[name.Value] = true
				if !serverNameRE.MatchString(name.Value) {
					p.errAt(name, key, "a server name starts with a letter and holds only letters, digits and '-' (at most 63): tools are exposed as NAME__tool")
					continue
				}
				f.Servers = append(f.Servers, p.server(name.Value, body, key, dir, getenv))
			}
		},
	})
	if len(p.errs) == 0 && len(f.Servers) == 0 {
		p.errs = append(p.errs, &ConfigError{File: path, Key: "servers", Msg: "no servers configured"})
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return f, nil
}

func rel(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return filepath.Join(dir, p)
}

type cfgParser struct {
	file string
	errs []error
}

func (p *cfgParser) errAt(n *yaml.Node, key, format string, args ...any) {
	p.errs = append(p.errs, &ConfigError{File: p.file, Line: n.Line, Col: n.Column, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// mapping walks a mapping, handing each known key to its handler and
// reporting unknown and repeated ones.
func (p *cfgParser) mapping(n *yaml.Node, path string, known map[string]func(*yaml.Node, string)) {
	if n.Kind != yaml.MappingNode {
		p.errAt(n, strings.TrimPrefix(path, "."), "want a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := strings.TrimPrefix(path+"."+k.Value, ".")
		if seen[k.Value] {
			p.errAt(k, key, "set twice")
			continue
		}
		seen[k.Value] = true
		h, ok := known[k.Value]
		if !ok {
			names := make([]string, 0, len(known))
			for name := range known {
				names = append(names, name)
			}
			sort.Strings(names)
			p.errAt(k, key, "unknown key (known here: %s)", strings.Join(names, ", "))
			continue
		}
		h(v, key)
	}
}

func (p *cfgParser) str(n *yaml.Node, key string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errAt(n, key, "want a string")
		return ""
	}
	return n.Value
}

func (p *cfgParser) strs(n *yaml.Node, key string) []string {
	if n.Kind != yaml.SequenceNode {
		p.errAt(n, key, "want a list of strings")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, e := range n.Content {
		out = append(out, p.str(e, fmt.Sprintf("%s[%d]", key, i)))
	}
	return out
}

func (p *cfgParser) strMap(n *yaml.Node, key string) map[string]string {
	if n.Kind != yaml.MappingNode {
		p.errAt(n, key, "want a mapping of names to strings")
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out[n.Content[i].Value] = p.str(n.Content[i+1], key+"."+n.Content[i].Value)
	}
	return out
}

func (p *cfgParser) server(name string, n *yaml.Node, key, dir string, getenv func(string) (string, bool)) ServerConfig {
	s := ServerConfig{Name: name, Line: n.Line}
	var rawURL string
	var headers map[string]string
	var hdrNode *yaml.Node
	urlNode := n
	p.mapping(n, key, map[string]func(*yaml.Node, string){
		"command": func(v *yaml.Node, k string) { s.Command = p.strs(v, k) },
		"env":     func(v *yaml.Node, k string) { s.Env = p.strMap(v, k) },
		"cwd":     func(v *yaml.Node, k string) { s.Cwd = rel(dir, p.str(v, k)) },
		"url":     func(v *yaml.Node, k string) { rawURL, urlNode = p.str(v, k), v },
		"headers": func(v *yaml.Node, k string) { headers, hdrNode = p.strMap(v, k), v },
	})
	switch {
	case len(s.Command) > 0 && rawURL != "":
		p.errAt(n, key, "give either command (a stdio server) or url (a Streamable HTTP server), not both")
	case len(s.Command) == 0 && rawURL == "":
		p.errAt(n, key, "needs command: [PROGRAM, ARGS...] or url: https://…")
	case rawURL != "":
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.errAt(urlNode, key+".url", "want an http:// or https:// URL")
		} else if u.User != nil {
			p.errAt(urlNode, key+".url", "put credentials in headers, not in the URL")
		} else {
			s.URL = u
		}
		if len(s.Env) > 0 || s.Cwd != "" {
			p.errAt(n, key, "env and cwd are for command servers")
		}
	default:
		if len(headers) > 0 {
			p.errAt(hdrNode, key+".headers", "headers are for url servers")
		}
	}
	if len(headers) > 0 && s.URL != nil {
		vals := make([]string, 0, len(headers))
		for k, v := range headers {
			vals = append(vals, k+": "+v)
		}
		sort.Strings(vals)
		h, err := ExpandHeaders(vals, getenv)
		if err != nil {
			p.errAt(hdrNode, key+".headers", "%v", err)
		}
		s.Header = h
	}
	return s
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// CheckStoreURL checks that u names a PostgreSQL database the way a
// store URL must: postgres:// or postgresql://, with a host.
func CheckStoreURL(u string) error {
	v, err := url.Parse(u)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL (%v); want postgres://USER:PASSWORD@HOST:PORT/DATABASE", redactURLError(err))
	case v.Scheme != "postgres" && v.Scheme != "postgresql":
		return fmt.Errorf("scheme %q is not supported; want postgres://USER:PASSWORD@HOST:PORT/DATABASE (SQLite, the default, needs no URL)", v.Scheme)
	case v.Host == "" && v.Query().Get("host") == "":
		return errors.New("no host; want postgres://USER:PASSWORD@HOST:PORT/DATABASE")
	}
	return nil
}

// redactURLError drops the URL from a parse error: it may hold a password.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// expandEnv expands ${VAR} in s from the environment; an unset variable
// is an error.
func expandEnv(s string, getenv func(string) (string, bool)) (string, error) {
	var missing []string
	s = envRef.ReplaceAllStringFunc(s, func(ref string) string {
		val, ok := getenv(ref[2 : len(ref)-1])
		if !ok {
			missing = append(missing, ref)
		}
		return val
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%s is not set in Weir's environment", strings.Join(missing, ", "))
	}
	return s, nil
}

// ExpandHeaders parses 'Name: value' headers, expanding ${VAR} from the
// environment. An unset variable is an error: a request sent with an empty
// credential would fail later and less clearly.
func ExpandHeaders(vals []string, getenv func(string) (string, bool)) (http.Header, error) {
	h := http.Header{}
	for _, v := range vals {
		name, value, ok := strings.Cut(v, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("header %q: want 'Name: value'", v)
		}
		value, err := expandEnv(strings.TrimSpace(value), getenv)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", name, err)
		}
		if strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header %s: the value must be one line", name)
		}
		switch http.CanonicalHeaderKey(name) {
		case "Mcp-Session-Id", "Mcp-Protocol-Version", "Content-Type", "Accept", "Content-Length":
			return nil, fmt.Errorf("header %s: Weir sets that header itself", name)
		}
		h.Add(name, value)
	}
	return h, nil
}
