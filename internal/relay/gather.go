package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// Inputs is the part of the state store that gathering reads.
type Inputs interface {
	Sync(ctx context.Context, session string, mirror *flow.Session) error
	Take(ctx context.Context, session, key string, n int, per time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error)
	Pins(ctx context.Context, identity string) (map[string]pin.Pin, error)
	AllPins(ctx context.Context, server string) ([]pin.Pin, error)
}

// Gatherer gathers what a decision reads besides its event: the session
// synced from the store, rate limits counted, path arguments resolved on
// disk, pins, and the detectors' findings. It is all the I/O a decision
// needs, in one place, so that `weir run`, `weir policy check` and
// `weir scan` (and, later, replay and the HTTP fronts) decide the same
// event the same way: they differ only in the store they gather from.
type Gatherer struct {
	Store Inputs
	// Session keys the session state and rate limits; Server and Identity
	// name the server the events come from (Identity keys its pins), and
	// Command is how it was started (pin.CommandLine), which pins remember.
	Session, Server, Identity, Command string
	// Home and Cwd resolve ~ and relative path arguments.
	Home, Cwd string
	// Now is the clock rate limits count with.
	Now func() time.Time
	// Cache, when set, keeps definitions' encodings and findings across
	// lists of the same tools.
	Cache *ListCache
}

// Call gathers a call's inputs: its path arguments resolved, the rate
// limits it exceeds counted (a call that passes counts against them), and,
// when the decision reads the session — a sink, or a tool a rule matches —
// the mirror brought up to date. The caller holds the mirror's lock. An
// error means the call cannot be judged; the caller fails closed.
func (g *Gatherer) Call(ctx context.Context, pol *policy.Policy, c *engine.Call, mirror *flow.Session) error {
	if len(pol.PathArgs(c.Server, c.Tool)) > 0 {
		var args map[string]any
		if json.Unmarshal(c.Args, &args) == nil {
			c.Resolved = policyfile.ResolveArgs(pol, c.Server, c.Tool, args, g.Home, g.Cwd)
		}
	}
	for _, rule := range pol.RateLimits(c.Server, c.Tool) {
		ok, _, err := g.Store.Take(ctx, g.Session, rule.ID, rule.RateLimit.N, rule.RateLimit.Per, g.Now())
		if err != nil {
			return fmt.Errorf("the rate limit of rule %s could not be counted (%v)", rule.ID, err)
		}
		if !ok {
			c.RateExceeded = append(c.RateExceeded, rule.ID)
		}
	}
	if readsSession(pol, c) {
		mirror.MaxBytes = pol.SessionMaxBytes
		if err := g.Store.Sync(ctx, g.Session, mirror); err != nil && readsLegs(pol, c) {
			return fmt.Errorf("the session state could not be read (%v), so Weir cannot tell what %s would send", err, c.Name())
		}
		// A call that is not a sink is checked for secrets against the
		// mirror as last synced when the store cannot be read: a locked
		// state file does not stop reads.
	}
	return nil
}

// readsSession reports whether deciding c reads the session: sinks, the
// tools a rule matches (a rule's predicate may read session.legs and
// session.sources), and, while exfiltration is not allowed, every other
// call too: a secret read through another server must not reach any tool.
func readsSession(pol *policy.Policy, c *engine.Call) bool {
	return readsLegs(pol, c) || pol.Flow.Exfiltration != flow.Allow
}

// readsLegs reports whether deciding c reads the session's labels, which
// the injection detectors may still raise for a result in flight: sinks
// and the tools a rule matches. A call that can only be refused for a
// secret it carries reads the digests, which are recorded on arrival.
func readsLegs(pol *policy.Policy, c *engine.Call) bool {
	return c.Labels.Labels.Has(flow.Sink) || len(pol.RulesFor(c.Server, c.Tool)) > 0
}

// PendingPin says why a tool this relay has not seen listed is withheld,
// from the pin store: a client that cached the tool list can still call a
// tool whose definition waits for approval. It returns "" for a tool that
// is not withheld.
func (g *Gatherer) PendingPin(ctx context.Context, tool string) string {
	pins, err := g.Store.Pins(ctx, g.Identity)
	if err != nil {
		return fmt.Sprintf("Weir could not check the pin of %s/%s (%v)", g.Server, tool, err)
	}
	if p, ok := pins[tool]; ok && p.PendingHash != "" {
		return fmt.Sprintf("the definition of %s/%s is waiting for approval (%s)", g.Server, tool, p.PendingWhy)
	}
	return ""
}

// List gathers a tool list's inputs: the pins of the server's identity and
// the detectors' findings over its catalogue: the listed tools and
// instructions, and the prompts and resources the caller knows of (weir
// scan lists them; the relay passes none). others lists the other
// servers' tools (server → names) the shadowing detector compares with;
// nil means the ones pinned in the store under other servers.
func (g *Gatherer) List(ctx context.Context, l *engine.List, prompts, resources []detect.NamedText, others map[string][]string) {
	l.Server, l.Identity, l.Command, l.At = g.Server, g.Identity, g.Command, g.Now().UnixMilli()
	pins, err := g.Store.Pins(ctx, g.Identity)
	if err != nil {
		l.PinsErr = err.Error()
	}
	l.Pins = pins
	cat := detect.Catalogue{Instructions: l.Instructions, Tools: l.Tools, Prompts: prompts, Resources: resources}
	if g.Cache == nil || len(l.Elems) != len(l.Tools) {
		l.Findings = g.Catalogue(ctx, cat, others)
		return
	}
	if others == nil {
		others = g.otherServers(ctx)
	}
	elems := make([][]byte, len(l.Elems))
	for i, e := range l.Elems {
		elems[i] = e
	}
	l.Findings = g.Cache.scan(g.Server, cat, elems, others)
	g.Cache.encode(l)
}

// Instructions gathers the detectors' findings over a server's
// instructions. The server's tools are not listed yet when they arrive;
// the ones pinned for it stand in, so that instructions naming the
// server's own tools do not count as shadowing another's.
func (g *Gatherer) Instructions(ctx context.Context, ins *engine.Instructions) {
	var own []detect.Tool
	if pins, err := g.Store.Pins(ctx, g.Identity); err == nil {
		for name := range pins {
			own = append(own, detect.Tool{Server: g.Server, Name: name})
		}
	}
	ins.Server = g.Server
	ins.Findings = g.Catalogue(ctx, detect.Catalogue{Instructions: ins.Text, Tools: own}, nil)[""]
}

// Catalogue runs the tool-poisoning detectors over a server's catalogue
// the one way every caller does: the whole catalogue at once, so that a
// definition naming a sibling tool (or prompt) of its own server is never
// taken for shadowing another server's. The result maps a tool name to its
// findings and "" to those of the instructions, prompts and resources.
// others as for [Gatherer.List].
func (g *Gatherer) Catalogue(ctx context.Context, c detect.Catalogue, others map[string][]string) map[string][]detect.Finding {
	if others == nil {
		others = g.otherServers(ctx)
	}
	c.Server = g.Server
	return detect.ScanCatalogue(c, others)
}

// otherServers lists the tools of the other servers Weir has pinned. A
// store that cannot be read gives none: shadowing then goes unchecked for
// this list, which the other detectors and the pins still judge.
func (g *Gatherer) otherServers(ctx context.Context) map[string][]string {
	pins, err := g.Store.AllPins(ctx, "")
	if err != nil {
		return map[string][]string{}
	}
	out := map[string][]string{}
	for _, p := range pins {
		if p.Identity != g.Identity && p.Server != g.Server {
			out[p.Server] = append(out[p.Server], p.Tool)
		}
	}
	return out
}
