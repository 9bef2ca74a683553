package relay

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
)

// wireTool is the part of an MCP tool definition labelling reads.
type wireTool struct {
	Name        string `json:"name"`
	InputSchema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	} `json:"inputSchema"`
	Annotations struct {
		ReadOnlyHint    *bool `json:"readOnlyHint"`
		DestructiveHint *bool `json:"destructiveHint"`
		OpenWorldHint   *bool `json:"openWorldHint"`
	} `json:"annotations"`
}

func (t *wireTool) def() engine.ToolDef {
	d := engine.ToolDef{
		Name: t.Name,
		Annotations: engine.Annotations{
			ReadOnly:    t.Annotations.ReadOnlyHint,
			Destructive: t.Annotations.DestructiveHint,
			OpenWorld:   t.Annotations.OpenWorldHint,
		},
	}
	for p := range t.InputSchema.Properties {
		d.Params = append(d.Params, p)
	}
	slices.Sort(d.Params)
	return d
}

// catalogEntry is what the relay knows of one tool: every definition the
// server has shown under its name, and the labels computed from them under
// a given policy.
type catalogEntry struct {
	defs   []engine.ToolDef
	pol    *policy.Policy
	labels engine.ToolLabels
}

// toolLabels returns a tool's labels from the catalogue, or, for a tool no
// tools/list has shown (a client that cached the list, or calls blind),
// from its name alone. Labels are the union over every definition the
// server has shown for the name: a changed definition can widen a tool's
// labels, never narrow them. A policy reload relabels.
func (r *Relay) toolLabels(name string) engine.ToolLabels {
	pol := r.policy.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.catalog[name]
	if !ok {
		return engine.Label(pol, r.opts.Server, engine.ToolDef{Name: name})
	}
	if e.pol != pol {
		e.pol, e.labels = pol, engine.ToolLabels{}
		for _, d := range e.defs {
			l := engine.Label(pol, r.opts.Server, d)
			e.labels.Labels |= l.Labels
			e.labels.Listed = e.labels.Listed || l.Listed
			e.labels.Why = append(e.labels.Why, l.Why...)
		}
		e.labels.Why = slices.Compact(e.labels.Why)
	}
	return e.labels
}

// updateCatalog records the tools of a tools/list page.
func (r *Relay) updateCatalog(result json.RawMessage) {
	var page struct {
		Tools []wireTool `json:"tools"`
	}
	if err := json.Unmarshal(result, &page); err != nil {
		r.log.Warn("could not read the server's tool list; its tools are labelled by name", "server", r.opts.Server, "err", err)
		return
	}
	r.mu.Lock()
	for i := range page.Tools {
		d := page.Tools[i].def()
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
	r.mu.Unlock()
	var private, untrusted, sink int
	for _, t := range page.Tools {
		l := r.toolLabels(t.Name).Labels
		private += b2i(l.Has(flow.Private))
		untrusted += b2i(l.Has(flow.Untrusted))
		sink += b2i(l.Has(flow.Sink))
	}
	r.record(&audit.Record{Event: "list", Method: "tools/list", Verdict: "allow", Enforced: true,
		Reason: fmt.Sprintf("%d tools: %d private, %d untrusted, %d sink", len(page.Tools), private, untrusted, sink)}, nil)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
