package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/jsonrpc"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/policy"
)

// This file defends the tool catalogue: the server's instructions and tool
// definitions are scanned for tool poisoning, definitions are pinned, and
// tools that changed or are flagged are withheld from the client until a
// person approves them (enforce mode).

// guardInstructions scans the instructions in an initialize or
// server/discover result. High-severity findings replace them with a notice
// (enforce mode). It returns the line to forward.
func (r *Relay) guardInstructions(line []byte, result json.RawMessage) []byte {
	var head struct {
		Instructions string `json:"instructions"`
	}
	if json.Unmarshal(result, &head) != nil {
		return line
	}
	r.mu.Lock()
	r.instructions = head.Instructions
	r.mu.Unlock()
	if head.Instructions == "" {
		return line
	}
	fs := detect.ScanCatalogue(detect.Catalogue{Server: r.opts.Server, Instructions: head.Instructions}, nil)[""]
	sev := detect.Max(fs)
	if sev == detect.None {
		return line
	}
	r.recordFindings("instructions", "initialize", "", fs, sev >= detect.High, "")
	if sev < detect.High || !r.enforcing() {
		return line
	}
	notice, _ := json.Marshal(fmt.Sprintf("[Weir withheld this server's instructions: they are flagged as tool poisoning (%s). See weir audit tail.]", strings.Join(detectorIDs(fs, detect.High), ", ")))
	newResult, ok := jsonrpc.ReplaceMember(result, "instructions", notice)
	if !ok {
		return line
	}
	out, _ := jsonrpc.ReplaceMember(line, "result", newResult)
	return out
}

// wireDefinition is a tool definition as the detectors and pins read it.
type wireDefinition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
}

// guardList scans and pins the tools of a tools/list result and withholds
// those that changed since approval or are flagged (enforce mode). It
// returns the line to forward.
func (r *Relay) guardList(ctx context.Context, line []byte, result json.RawMessage) []byte {
	r.updateCatalog(result)
	var raw []json.RawMessage
	_ = jsonrpc.EachMember(result, func(name string, v []byte) error {
		if name == "tools" && len(v) > 0 && v[0] == '[' {
			return jsonrpc.EachElement(v, func(_ int, e []byte) error {
				raw = append(raw, e)
				return nil
			})
		}
		return nil
	})
	if len(raw) == 0 {
		return line
	}
	tools := make([]detect.Tool, len(raw))
	for i, e := range raw {
		var d wireDefinition
		_ = json.Unmarshal(e, &d)
		tools[i] = detect.Tool{Server: r.opts.Server, Name: d.Name, Title: d.Title, Description: d.Description,
			InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, Annotations: d.Annotations}
	}
	others := r.otherServers(ctx)
	findings := make(map[string][]detect.Finding, len(tools))
	for _, t := range tools {
		if fs := detect.ScanTool(t, others); len(fs) > 0 {
			findings[t.Name] = fs
		}
	}
	r.mu.Lock()
	instructions := r.instructions
	r.mu.Unlock()
	results, err := pin.Check(ctx, r.opts.Store, r.opts.Identity, r.opts.Server, tools, instructions, findings, r.now())
	if err != nil {
		// Fail closed: without pins Weir cannot tell a rug pull from a tool
		// it knows, so nothing new reaches the model.
		r.log.Error("tool pins could not be checked; withholding the tool list", "err", err)
		results = make(map[string]pin.Result, len(tools))
		for _, t := range tools {
			results[t.Name] = pin.Result{State: pin.Quarantined, Why: fmt.Sprintf("Weir could not check the pin of %s/%s (%v)", r.opts.Server, t.Name, err)}
		}
	}
	enforce := r.enforcing()
	keep := make([]json.RawMessage, 0, len(raw))
	r.mu.Lock()
	for i, t := range tools {
		res := results[t.Name]
		if res.State.Withheld() {
			r.withheld[t.Name] = res.Why
		} else {
			delete(r.withheld, t.Name)
		}
		if !res.State.Withheld() || !enforce {
			keep = append(keep, raw[i])
		}
	}
	r.mu.Unlock()
	for _, t := range tools {
		res := results[t.Name]
		if res.State.Withheld() || len(findings[t.Name]) > 0 {
			r.recordFindings("definition", "tools/list", t.Name, findings[t.Name], res.State.Withheld(), res.Why)
		}
		if res.State.Withheld() {
			r.log.Warn("tool withheld", "tool", r.opts.Server+"/"+t.Name, "why", res.Why, "enforced", enforce)
		}
	}
	if len(keep) == len(raw) {
		return line
	}
	arr, _ := json.Marshal(keep)
	newResult, ok := jsonrpc.ReplaceMember(result, "tools", arr)
	if !ok {
		return line
	}
	out, _ := jsonrpc.ReplaceMember(line, "result", newResult)
	return out
}

// otherServers lists the tools of the other servers Weir has pinned, for
// the shadowing detector: a description that names another server's tool
// is steering the model across servers.
func (r *Relay) otherServers(ctx context.Context) map[string][]string {
	pins, err := r.opts.Store.AllPins(ctx, "")
	if err != nil {
		r.log.Warn("could not read other servers' tools for the shadowing check", "err", err)
		return nil
	}
	out := map[string][]string{}
	for _, p := range pins {
		if p.Identity != r.opts.Identity && p.Server != r.opts.Server {
			out[p.Server] = append(out[p.Server], p.Tool)
		}
	}
	return out
}

// withheldTool reports why a tool is withheld, if it is. A tool this relay
// has not seen listed (a client that cached the list) is looked up in the
// pin store.
func (r *Relay) withheldTool(ctx context.Context, name string) (string, bool) {
	r.mu.Lock()
	why, ok := r.withheld[name]
	_, listed := r.catalog[name]
	r.mu.Unlock()
	if ok || listed {
		return why, ok
	}
	pins, err := r.opts.Store.Pins(ctx, r.opts.Identity)
	if err != nil {
		return fmt.Sprintf("Weir could not check the pin of %s/%s (%v)", r.opts.Server, name, err), true
	}
	if p, ok := pins[name]; ok && p.PendingHash != "" {
		return fmt.Sprintf("the definition of %s/%s is waiting for approval (%s)", r.opts.Server, name, p.PendingWhy), true
	}
	return "", false
}

// withheldMessage is what the model reads when it calls a withheld tool.
func (r *Relay) withheldMessage(tool, why string) string {
	return fmt.Sprintf("Weir withheld the tool %s/%s: %s. It will not run until a person reviews it "+
		"(`weir pins diff %s` shows what changed; `weir pins approve %s:%s` approves it). "+
		"Do not retry; tell the user that this tool needs their review.",
		r.opts.Server, tool, why, r.opts.Server, r.opts.Server, tool)
}

func (r *Relay) enforcing() bool { return r.policy.Load().Mode == policy.Enforce }

// recordFindings audits what the detectors found in a definition or in the
// instructions, and whether it is withheld. Evidence stays out of the log
// (it can quote the text); detector ids and fields go in.
func (r *Relay) recordFindings(event, method, tool string, fs []detect.Finding, withheld bool, why string) {
	verdict, rule := "warn", ""
	if withheld {
		verdict = "block"
	}
	switch {
	case strings.Contains(why, "changed since"):
		rule = "pin.changed"
	case len(fs) > 0:
		rule = "detect." + fs[0].Detector
	case why != "":
		rule = "pin.unchecked"
	}
	reason := why
	if len(fs) > 0 {
		var parts []string
		for _, f := range fs {
			parts = append(parts, fmt.Sprintf("%s (%s) in %s", f.Detector, f.Severity, f.Field))
		}
		parts = slices.Compact(parts)
		if reason != "" {
			reason += "; "
		}
		reason += "findings: " + strings.Join(parts, ", ")
	}
	r.record(&audit.Record{Event: event, Method: method, Tool: tool, Verdict: verdict, Enforced: r.enforcing(),
		Rule: rule, Reason: reason}, nil)
}

func detectorIDs(fs []detect.Finding, min detect.Severity) []string {
	var ids []string
	for _, f := range fs {
		if f.Severity >= min && !slices.Contains(ids, f.Detector) {
			ids = append(ids, f.Detector)
		}
	}
	return ids
}
