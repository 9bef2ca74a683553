package policyfile

import (
	"embed"
	"fmt"
	"slices"
	"sync"

	"github.com/weir-sec/weir/internal/policy"
)

// The presets are policy files in the same format as a user's, embedded in
// the binary and parsed by the same code. Each one sets every key and
// explains it, so printing one is documentation.
//
//go:embed presets/*.yaml
var presetFS embed.FS

const defaultPreset = "default"

// presetNames is the order presets are listed in.
var presetNames = []string{"default", "strict", "dataflow", "integrity", "monitor"}

type builtPreset struct {
	p   *policy.Policy
	err error
}

// presets builds every preset once, on first use. It is set in init
// because building a user file's layer looks up its preset, which would
// otherwise make an initialization cycle.
var presets func() map[string]builtPreset

func init() {
	presets = sync.OnceValue(func() map[string]builtPreset {
		m := make(map[string]builtPreset, len(presetNames))
		for _, name := range presetNames {
			p, err := buildPreset(name)
			m[name] = builtPreset{p, err}
		}
		return m
	})
}

func buildPreset(name string) (*policy.Policy, error) {
	data, err := PresetText(name)
	if err != nil {
		return nil, err
	}
	source := "preset:" + name
	l, errs := decodeAs(source, data, true)
	if len(errs) > 0 {
		return nil, ErrorList(errs)
	}
	if missing := l.missing(); len(missing) > 0 {
		return nil, ErrorList{{File: source, Msg: fmt.Sprintf("a preset must set every key; add %s", orList(missing))}}
	}
	p := l.apply(&policy.Policy{}, source)
	p.Preset = name
	return p, nil
}

// builtin returns the shared compiled preset; callers must not change it.
func builtin(name string) (*policy.Policy, error) {
	b, ok := presets()[name]
	if !ok {
		return nil, unknownPreset(name)
	}
	return b.p, b.err
}

func unknownPreset(name string) error {
	return ErrorList{{Key: "preset", Msg: fmt.Sprintf("unknown preset %s; want %s%s", quote(name), orList(presetNames), didYouMean(name, presetNames))}}
}

// Preset returns the embedded preset called name. Its Source is
// "preset:NAME".
func Preset(name string) (*policy.Policy, error) {
	p, err := builtin(name)
	if err != nil {
		return nil, err
	}
	return p.Clone(), nil
}

// PresetNames lists the embedded presets, "default" first.
func PresetNames() []string { return slices.Clone(presetNames) }

// PresetText returns the commented YAML source of the preset called name,
// as `weir policy show NAME` prints it.
func PresetText(name string) ([]byte, error) {
	if !slices.Contains(presetNames, name) {
		return nil, unknownPreset(name)
	}
	data, err := presetFS.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("policy: preset %q is listed but not embedded: %w", name, err)
	}
	return data, nil
}
