package scan

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/store"
)

// PinReader reads the pins of a server identity: the state store weir run
// keeps them in. The scan only reads them.
type PinReader interface {
	Pins(ctx context.Context, identity string) (map[string]pin.Pin, error)
}

// judge decides what Weir makes of one listed server, by the code path
// weir run takes for the same tools/list: relay.Gatherer gathers the
// detectors' findings over the whole catalogue (tools, instructions,
// prompts, resources, compared with the tool names of the other servers,
// others, for shadowing) and the pins, and engine.Decide judges the list.
// Each tool report carries the labels weir run would give it, the
// findings, the definition hash, the pin state and whether weir run would
// withhold it, and why. The pins written by the decision are dropped: a
// scan changes nothing.
//
// server is the name Weir labels and pins with (the entry's weir run
// --name, else its name), command what weir run would start, url a remote
// server's address; either names the package labelling reads
// (engine.PackageOf, engine.PackageOfURL). pins nil
// judges every tool as on its first launch and reports its pin as
// unknown. The tools come back in the server's order, never nil; the
// caller sorts them.
func judge(ctx context.Context, server string, command []string, url string, pol *policy.Policy, cat *catalogue, others map[string][]string, pins PinReader) (tools []ToolReport, findings []Finding) {
	var src relay.Inputs = store.NewMemory()
	if pins != nil {
		src = pinsOnly{pins}
	}
	g := relay.Gatherer{Store: src, Server: server, Identity: pin.Identity(server), Command: pin.CommandLine(command, ""), Now: time.Now}
	l := engine.List{Tools: cat.tools, Instructions: cat.instructions}
	for i := range l.Tools {
		l.Tools[i].Server = server
	}
	g.List(ctx, &l, cat.prompts, cat.resources, others)
	d := engine.Decide(engine.Inputs{Policy: pol}, l)
	pkg := engine.PackageOf(command)
	if pkg == "" && url != "" {
		pkg = engine.PackageOfURL(url)
	}
	tools = make([]ToolReport, 0, len(cat.tools))
	for i, t := range l.Tools {
		tv := d.Tools[i]
		lb := engine.LabelDefs(pol, server, pkg, t.Name, []engine.ToolDef{engine.DefOf(t)})
		sum := detect.DefinitionHash(t)
		tr := ToolReport{
			Name: t.Name, Labels: labelNames(lb.Labels), Why: lb.Why, Listed: lb.Listed,
			Findings: convert(tv.Findings), Severity: detect.Max(tv.Findings).String(),
			Hash: hex.EncodeToString(sum[:]), Pin: PinUnknown,
			Withheld: tv.Withheld(), Rule: string(tv.Rule), Reason: tv.Reason,
		}
		if tr.Why == nil {
			tr.Why = []string{}
		}
		if pins != nil {
			tr.Pin = tv.State.String()
		}
		tools = append(tools, tr)
	}
	return tools, convert(l.Findings[""])
}

// pinsOnly gathers from a store the scan may only read pins from: nothing
// else is gathered for a tool list.
type pinsOnly struct{ PinReader }

var _ relay.Inputs = pinsOnly{}

func (pinsOnly) Sync(context.Context, string, *flow.Session) error {
	return errors.New("weir scan reads no session")
}

func (pinsOnly) Take(context.Context, string, string, int, time.Duration, time.Time) (bool, time.Duration, error) {
	return false, 0, errors.New("weir scan counts no rate limit")
}

func (pinsOnly) AllPins(context.Context, string) ([]pin.Pin, error) {
	return nil, errors.New("weir scan compares with the servers it scanned")
}

func labelNames(l flow.Labels) []string {
	n := l.Names()
	if n == nil {
		return []string{}
	}
	return n
}

func convert(fs []detect.Finding) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		out = append(out, Finding{Detector: f.Detector, Severity: f.Severity.String(), Field: f.Field, Evidence: f.Evidence, Message: f.Message})
	}
	return out
}
