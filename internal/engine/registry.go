package engine

import (
	_ "embed"
	"fmt"
	"net/url"
	"path"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/weir-sec/weir/internal/flow"
)

// The registry holds reviewed labels for the tools of widely used MCP
// servers, keyed by the server's package identity ([PackageOf]) and the
// tool's name. A registry entry replaces the heuristic for that tool, as a
// policy tools: entry does (and a policy entry still wins); the server's
// annotations still add. A tool the entry does not list (a newer version's)
// falls to the heuristic, which learns from the entry whether the server
// is local.
//
// registry.yaml is reviewed like code: one line per tool with a short why.

//go:embed registry.yaml
var registryYAML []byte

type registryFile struct {
	Servers []registryServerYAML `yaml:"servers"`
}

type registryServerYAML struct {
	ID    string   `yaml:"id"`
	Also  []string `yaml:"also"`
	Local bool     `yaml:"local"`
	Tools []struct {
		Tool   string   `yaml:"tool"`
		Labels []string `yaml:"labels"`
		Why    string   `yaml:"why"`
	} `yaml:"tools"`
}

// registryServer is one server's entry.
type registryServer struct {
	ID    string
	Also  []string
	Local bool // every write stays on the machine (files, local git, a memory file)
	Tools map[string]registryEntry
}

type registryEntry struct {
	labels flow.Labels
	why    string
}

func (s *registryServer) tool(name string) (registryEntry, bool) {
	if s == nil {
		return registryEntry{}, false
	}
	e, ok := s.Tools[name]
	return e, ok
}

var registry = sync.OnceValues(func() (map[string]*registryServer, error) { return parseRegistry(registryYAML) })

func parseRegistry(b []byte) (map[string]*registryServer, error) {
	var f registryFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	out := map[string]*registryServer{}
	for _, s := range f.Servers {
		if s.ID == "" {
			return nil, fmt.Errorf("registry: a server without id")
		}
		rs := &registryServer{ID: s.ID, Also: s.Also, Local: s.Local, Tools: map[string]registryEntry{}}
		for _, t := range s.Tools {
			if t.Tool == "" || t.Why == "" {
				return nil, fmt.Errorf("registry %s: an entry without tool or why", s.ID)
			}
			if _, dup := rs.Tools[t.Tool]; dup {
				return nil, fmt.Errorf("registry %s: tool %s twice", s.ID, t.Tool)
			}
			var l flow.Labels
			for _, n := range t.Labels {
				x, err := flow.ParseLabel(n)
				if err != nil {
					return nil, fmt.Errorf("registry %s/%s: %v", s.ID, t.Tool, err)
				}
				l |= x
			}
			rs.Tools[t.Tool] = registryEntry{labels: l, why: t.Why}
		}
		for _, k := range append([]string{s.ID}, s.Also...) {
			k = normPackage(k)
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("registry: identity %s twice", k)
			}
			out[k] = rs
		}
	}
	return out, nil
}

// registryFor returns the registry's entry for a package identity, or nil.
func registryFor(pkg string) *registryServer {
	if pkg == "" {
		return nil
	}
	m, err := registry()
	if err != nil {
		return nil // TestRegistry keeps the embedded file valid
	}
	return m[normPackage(pkg)]
}

// normPackage folds the spellings of one identity: case, and PyPI's
// equivalence of "_", "." and "-".
func normPackage(p string) string {
	p = strings.ToLower(strings.TrimSpace(p))
	if !strings.HasPrefix(p, "@") && !strings.Contains(p, "/") {
		p = strings.NewReplacer("_", "-", ".", "-").Replace(p)
	}
	return p
}

// PackageOf returns the identity of the server a command line starts: the
// npm package of npx, npm exec, bunx, pnpm dlx and yarn dlx, or of a
// node_modules path node runs; the PyPI package of uvx, uv tool run and
// pipx run, or the module of python -m; the image of docker or podman run;
// the host of a URL. Versions and tags are dropped. "" when it cannot tell.
func PackageOf(argv []string) string {
	for len(argv) > 0 {
		base := strings.ToLower(path.Base(strings.ReplaceAll(argv[0], `\`, "/")))
		base = strings.TrimSuffix(strings.TrimSuffix(base, ".cmd"), ".exe")
		rest := argv[1:]
		switch {
		case strings.HasPrefix(argv[0], "http://") || strings.HasPrefix(argv[0], "https://"):
			return PackageOfURL(argv[0])
		case base == "env":
			// env [-i] [NAME=value…] cmd…
			i := 0
			for i < len(rest) && (strings.HasPrefix(rest[i], "-") || strings.Contains(rest[i], "=")) {
				i++
			}
			argv = rest[i:]
			continue
		case base == "cmd" && len(rest) > 0 && strings.EqualFold(rest[0], "/c"):
			argv = rest[1:]
			continue
		case base == "npx" || base == "bunx" || base == "pnpx":
			return npmPackage(firstOperand(rest, npxValueFlags, "--package", "-p"))
		case (base == "npm" || base == "pnpm" || base == "yarn" || base == "bun") && len(rest) > 0 &&
			(rest[0] == "exec" || rest[0] == "x" || rest[0] == "dlx"):
			return npmPackage(firstOperand(rest[1:], npxValueFlags, "--package", "-p"))
		case base == "uvx":
			return pypiPackage(firstOperand(rest, uvxValueFlags, "--from", ""))
		case base == "uv" && len(rest) > 1 && rest[0] == "tool" && rest[1] == "run":
			return pypiPackage(firstOperand(rest[2:], uvxValueFlags, "--from", ""))
		case base == "pipx" && len(rest) > 0 && rest[0] == "run":
			return pypiPackage(firstOperand(rest[1:], pipxValueFlags, "--spec", ""))
		case base == "docker" || base == "podman":
			if len(rest) > 0 && (rest[0] == "run" || rest[0] == "container" && len(rest) > 1 && rest[1] == "run") {
				if rest[0] == "container" {
					rest = rest[1:]
				}
				return dockerImage(firstOperand(rest[1:], dockerValueFlags, "", ""))
			}
			return ""
		case strings.HasPrefix(base, "python") || base == "py":
			for i, a := range rest {
				if a == "-m" && i+1 < len(rest) {
					mod, _, _ := strings.Cut(rest[i+1], ".")
					return normPackage(mod)
				}
				if !strings.HasPrefix(a, "-") {
					return nodeModulesPackage(a)
				}
			}
			return ""
		case base == "node" || base == "bun" || base == "deno" || base == "tsx" || base == "ts-node":
			for _, a := range rest {
				if !strings.HasPrefix(a, "-") {
					return nodeModulesPackage(a)
				}
			}
			return ""
		default:
			return nodeModulesPackage(argv[0])
		}
	}
	return ""
}

// PackageOfURL is the identity of a remote server: its URL's host.
func PackageOfURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	return strings.ToLower(p.Hostname())
}

var (
	npxValueFlags    = words("--package -p --call -c --registry --cache --userconfig --prefix -w --workspace")
	uvxValueFlags    = words("--from --with --python -p --index --index-url --extra-index-url --default-index --with-requirements --constraints --env-file")
	pipxValueFlags   = words("--spec --python --pip-args --index-url")
	dockerValueFlags = words("-e --env --env-file -v --volume --mount --name -p --publish -w --workdir -u --user --network --net " +
		"--entrypoint -l --label --add-host --platform --pull --memory -m --cpus --device --cap-add --cap-drop --hostname -h " +
		"--security-opt --tmpfs --ulimit --log-driver --log-opt --restart --runtime --shm-size --ipc --pid --dns --expose --gpus --init-path --stop-signal --label-file --cidfile --group-add --health-cmd")
)

// firstOperand returns the first argument that is not an option (skipping
// the values of options in valueFlags), or the value of the option named
// from (npx --package PKG, uvx --from PKG) when given.
func firstOperand(args []string, valueFlags map[string]bool, from, fromShort string) string {
	var first string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if first == "" && i+1 < len(args) {
				first = args[i+1]
			}
			break
		}
		if strings.HasPrefix(a, "-") {
			name, val, hasVal := strings.Cut(a, "=")
			if from != "" && (name == from || fromShort != "" && name == fromShort) {
				if hasVal {
					return val
				}
				if i+1 < len(args) {
					return args[i+1]
				}
			}
			if !hasVal && valueFlags[name] {
				i++
			}
			continue
		}
		if first == "" {
			first = a
			break
		}
	}
	return first
}

// npmPackage drops a version from an npm package spec ("@scope/pkg@1.2").
func npmPackage(spec string) string {
	if spec == "" {
		return ""
	}
	if i := strings.LastIndex(spec, "@"); i > 0 {
		spec = spec[:i]
	}
	return strings.ToLower(spec)
}

// pypiPackage drops a version or extras from a PyPI spec ("pkg==1.0",
// "pkg[x]@latest").
func pypiPackage(spec string) string {
	if i := strings.IndexAny(spec, "=<>~!@[; "); i >= 0 {
		spec = spec[:i]
	}
	if spec == "" || strings.Contains(spec, "/") {
		return ""
	}
	return normPackage(spec)
}

// dockerImage drops the tag, digest and default registry from an image.
func dockerImage(img string) string {
	if img == "" {
		return ""
	}
	if i := strings.Index(img, "@"); i >= 0 {
		img = img[:i]
	}
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		img = img[:i]
	}
	img = strings.TrimPrefix(img, "docker.io/")
	img = strings.TrimPrefix(img, "index.docker.io/")
	img = strings.TrimPrefix(img, "library/")
	return strings.ToLower(img)
}

// nodeModulesPackage returns the package a node_modules path belongs to
// ("…/node_modules/@scope/pkg/dist/index.js" → "@scope/pkg").
func nodeModulesPackage(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	i := strings.LastIndex(p, "node_modules/")
	if i < 0 {
		return ""
	}
	parts := strings.Split(p[i+len("node_modules/"):], "/")
	if len(parts) == 0 || parts[0] == "" || parts[0] == ".bin" {
		if len(parts) > 1 && parts[0] == ".bin" {
			return strings.ToLower(parts[1])
		}
		return ""
	}
	if strings.HasPrefix(parts[0], "@") && len(parts) > 1 {
		return strings.ToLower(parts[0] + "/" + parts[1])
	}
	return strings.ToLower(parts[0])
}
