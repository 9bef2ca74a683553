package relay

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/policy"
)

// catalogEntry is what the relay knows of one tool: every definition the
// server has shown under its name, and the labels computed from them under
// a given policy.
type catalogEntry struct {
	defs   []engine.ToolDef
	pol    *policy.Policy
	labels engine.ToolLabels
}

// toolLabels returns a tool's labels from the catalogue (engine.LabelDefs:
// the union over every definition the server has shown under the name, so
// labels only widen), or, for a tool no tools/list has shown, from its name
// alone. A policy reload relabels.
func (r *Relay) toolLabels(name string) engine.ToolLabels {
	pol := r.policy.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.catalog[name]
	if !ok {
		return engine.LabelDefs(pol, r.opts.Server, r.opts.Package, name, nil)
	}
	if e.pol != pol {
		e.pol, e.labels = pol, engine.LabelDefs(pol, r.opts.Server, r.opts.Package, name, e.defs)
	}
	return e.labels
}

// defsOf reduces a tools/list page's tools to definitions, once a list:
// reading each input schema is most of what a repeated list costs.
func (r *Relay) defsOf(tools []detect.Tool, elems []json.RawMessage) []engine.ToolDef {
	defs := make([]engine.ToolDef, len(tools))
	for i, t := range tools {
		var elem []byte
		if i < len(elems) {
			elem = elems[i]
		}
		defs[i] = r.gather.Cache.def(r.opts.Server, t, elem)
		defs[i].Package = r.opts.Package
	}
	return defs
}

// updateCatalog records the definitions of a tools/list page.
func (r *Relay) updateCatalog(defs []engine.ToolDef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range defs {
		e, ok := r.catalog[d.Name]
		if !ok {
			e = &catalogEntry{}
			r.catalog[d.Name] = e
		}
		if !slices.ContainsFunc(e.defs, d.Equal) {
			e.defs = append(e.defs, d)
			e.pol = nil // relabel on next use
		}
	}
}

// withheldTool says why a tool is withheld, if it is: the last tool list's
// verdict, or, for a tool this relay has not seen listed (a client that
// cached the list), the pin store's.
func (r *Relay) withheldTool(ctx context.Context, c *engine.Call) {
	r.mu.Lock()
	why, withheld := r.withheld[c.Tool]
	_, listed := r.catalog[c.Tool]
	r.mu.Unlock()
	switch {
	case withheld:
		c.Withheld = why
	case !listed:
		c.Withheld = r.gather.PendingPin(ctx, c.Tool)
	}
}
