package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// ToolDef is the part of an MCP tool definition that labelling reads.
type ToolDef struct {
	Name   string
	Params []string // names of the input schema's top-level properties
	// Schema describes each top-level property (name, type, format,
	// description, required), in Params' order; when nil, Params alone.
	Schema []Param
	// Description is the tool's description: its first sentence's verb
	// stands in for a name that has none.
	Description string
	// Package is the server's identity ([PackageOf]: npm or PyPI package,
	// docker image, URL host), "" when unknown. It selects the registry
	// entry and names the service whose name prefixes tool names.
	Package     string
	Annotations Annotations
}

// Annotations are the MCP tool annotation hints that matter for labels. A nil
// hint was not set by the server; only hints set explicitly count, because
// the specification's defaults (openWorldHint and destructiveHint true) would
// make every unannotated tool a sink and drown the signal.
type Annotations struct {
	ReadOnly    *bool
	Destructive *bool
	OpenWorld   *bool
}

// Param is one input-schema property.
type Param struct {
	Name, Type, Format, Description string
	// Enum is the property's string enum values, lowercased and joined
	// by "|" (at most maxEnum of them): an operation switch's values say
	// what the tool can do (get, list, create, drop).
	Enum     string `json:",omitempty"`
	Required bool
}

// params returns the definition's parameters, from Schema or Params.
func (d ToolDef) params() []Param {
	if d.Schema != nil {
		return d.Schema
	}
	out := make([]Param, len(d.Params))
	for i, p := range d.Params {
		out[i] = Param{Name: p}
	}
	return out
}

// ToolLabels are a tool's labels and the reasons for each, for block
// messages, the audit log and `weir scan`.
type ToolLabels struct {
	Labels flow.Labels
	// Listed reports whether a policy tools: entry matched the tool.
	Listed bool
	Why    []string
}

// Label computes a tool's labels. Sources, strongest first: the policy's
// tools: entries; the embedded registry of known servers (by def.Package);
// and the name, schema and description heuristic. The server's
// annotations may only add labels to whichever decided.
func Label(p *policy.Policy, server string, def ToolDef) ToolLabels {
	return LabelWith(p, server, def, LabelOptions{})
}

// LabelOptions change how [LabelWith] labels.
type LabelOptions struct {
	// NoRegistry ignores the embedded registry: the heuristic alone
	// (bench/labels measures both).
	NoRegistry bool
}

// LabelWith is [Label] with options.
func LabelWith(p *policy.Policy, server string, def ToolDef, o LabelOptions) ToolLabels {
	var out ToolLabels
	add := func(l flow.Labels, why string) {
		if l == 0 {
			return
		}
		out.Labels |= l
		out.Why = append(out.Why, fmt.Sprintf("%s: %s", l, why))
	}
	decided := false // a source placed what the tool returns
	var reg *registryServer
	if !o.NoRegistry {
		reg = registryFor(def.Package)
	}
	// The server works on the machine: the registry says so, or it is a
	// local app (a notes vault, a container runtime).
	local := reg != nil && reg.Local || localApp(server, def.Package)
	if l, entry := p.ToolLabels(server, def.Name); entry != nil {
		out.Listed, decided = true, true
		if l == 0 {
			out.Why = append(out.Why, fmt.Sprintf("none: policy tools entry %q (line %d)", entry.Match.String(), entry.Line))
		}
		add(l, fmt.Sprintf("policy tools entry %q (line %d)", entry.Match.String(), entry.Line))
	} else if e, ok := reg.tool(def.Name); ok {
		decided = true
		why := fmt.Sprintf("registry %s: %s", reg.ID, e.why)
		if e.labels == 0 {
			out.Why = append(out.Why, "none: "+why)
		}
		add(e.labels, why)
	} else {
		var l flow.Labels
		var why string
		l, why, decided = heuristicLabels(def, server, local)
		if l == 0 && why != "" {
			out.Why = append(out.Why, "none: "+why)
		}
		add(l, why)
	}
	add(annotationLabels(def, server, out.Labels, decided, local))
	return out
}

// isTrue reports an explicitly set true hint. An explicit false never
// removes a label: hints come from the server, which is not trusted.
func isTrue(b *bool) bool { return b != nil && *b }

// annotationLabels are the labels the server's hints add to base, the
// labels the stronger sources gave. Hints only ever add:
//
//   - openWorldHint with readOnlyHint adds untrusted to a tool no other
//     source understood (decided false: no policy or registry entry, and
//     no verb the reader knows). Vendors set it on reads of the user's own
//     account ("talks to a remote API": 82 of 149 such tools in
//     testdata/catalogues are not untrusted), so where a policy, the
//     registry or the reader placed what the tool returns, that stands.
//   - openWorldHint or destructiveHint without readOnlyHint adds sink,
//     except a destructive hint in a closed world (openWorldHint false) on a
//     tool whose verb and objects say local file, git, note or graph work:
//     that changes the machine, not the world. Servers also mark remote
//     operations closed-world ("only our own API"), so the exception needs
//     the tool's own words to agree. A server known to be local (the
//     registry's local servers, a notes app's vault) needs no closed-world
//     hint: its destructive hints are about the machine's files.
func annotationLabels(def ToolDef, server string, base flow.Labels, decided, local bool) (flow.Labels, string) {
	a := def.Annotations
	var l flow.Labels
	var why []string
	if isTrue(a.OpenWorld) && isTrue(a.ReadOnly) && !decided && base&(flow.Private|flow.Untrusted) == 0 {
		l |= flow.Untrusted
		why = append(why, "openWorldHint with readOnlyHint")
	}
	closed := a.OpenWorld != nil && !*a.OpenWorld
	if (isTrue(a.OpenWorld) || isTrue(a.Destructive) && !((closed || local) && localTool(def, server, local))) && !isTrue(a.ReadOnly) {
		l |= flow.Sink
		if isTrue(a.OpenWorld) {
			why = append(why, "openWorldHint without readOnlyHint")
		} else {
			why = append(why, "destructiveHint without readOnlyHint")
		}
	}
	return l, "annotation " + strings.Join(why, ", ")
}

// Equal reports whether two definitions label the same way.
func (d ToolDef) Equal(o ToolDef) bool {
	return d.Name == o.Name && slices.Equal(d.Params, o.Params) && slices.Equal(d.Schema, o.Schema) &&
		d.Description == o.Description && d.Package == o.Package &&
		eqHint(d.Annotations.ReadOnly, o.Annotations.ReadOnly) &&
		eqHint(d.Annotations.Destructive, o.Annotations.Destructive) &&
		eqHint(d.Annotations.OpenWorld, o.Annotations.OpenWorld)
}

func eqHint(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// LabelDefs labels a tool from every definition the server has shown
// under its name: the union of their labels, so that a changed definition
// can widen a tool's labels, never narrow them. With no definition (a
// client that cached the list, or calls blind) the tool is labelled from
// its name alone. pkg is the server's package identity ([PackageOf]),
// which a definition without one takes.
func LabelDefs(p *policy.Policy, server, pkg, name string, defs []ToolDef) ToolLabels {
	if len(defs) == 0 {
		return Label(p, server, ToolDef{Name: name, Package: pkg})
	}
	var out ToolLabels
	for _, d := range defs {
		if d.Package == "" {
			d.Package = pkg
		}
		l := Label(p, server, d)
		out.Labels |= l.Labels
		out.Listed = out.Listed || l.Listed
		out.Why = append(out.Why, l.Why...)
	}
	out.Why = slices.Compact(out.Why)
	return out
}
