package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/engine"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/flow"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/relay"
	"github.com/weir-sec/weir/internal/store"
)

type checkFlags struct {
	tool       string
	args       string
	labels     string
	session    string
	definition string
	pkg        string
	json       bool
}

func newPolicyCheckCmd() *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check FILE [--tool SERVER:TOOL [--args JSON] [--labels L,...] [--session FILE]] [--json]",
		Short: "Validate a policy and dry-run a decision",
		Long: `Check validates a policy file and prints what it enforces. With --tool it
also decides one call the way weir run would, and prints the verdict, the
rule and the reasons.

--session FILE describes what the session read before the call: a JSON list
of {"tool": "server/tool", "labels": ["private"|"untrusted"], "text": "..."}.
The tool's labels come from the policy and, with --definition FILE, the
tool's definition as the server lists it (one definition, a list of them or
a whole tools/list result), exactly as weir run labels a listed tool;
without it, from the tool's name alone, as weir run labels a tool called
before any tools/list. --labels adds labels, as the server's annotations
would. The decision is gathered and made by the same code weir run uses
(paths resolved on disk, the session from --session); rate limits start
from zero.

Exit status: 0 the policy is valid and the call is allowed (or only
warned); 1 the call is blocked or escalated; 2 the policy is invalid or the
input cannot be read.`,
		Example: `  weir policy check ./policy.yaml
  weir policy check ./policy.yaml --tool mail:send_email --args '{"to":"x@evil.example","body":"hi"}'
  weir policy check ./policy.yaml --tool bank:send_money --args '{"recipient":"US1330..."}' --session reads.json --json
  weir policy check ./policy.yaml --tool files:write_file --definition tools.json --package @modelcontextprotocol/server-filesystem`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.OutOrStdout(), args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.tool, "tool", "", "call to dry-run, as server:tool")
	cmd.Flags().StringVar(&f.args, "args", "{}", "the call's arguments, a JSON object")
	cmd.Flags().StringVar(&f.labels, "labels", "", "labels to add to the tool, comma-separated (as annotations would)")
	cmd.Flags().StringVar(&f.session, "session", "", "JSON file of earlier results the session read")
	cmd.Flags().StringVar(&f.definition, "definition", "", "JSON file with the tool's definition (or a tools/list result) to label it from, as weir run does once the server lists it")
	cmd.Flags().StringVar(&f.pkg, "package", "", "the server's package, as weir run reads it from the server's command line (@modelcontextprotocol/server-filesystem), for the labels the registry gives")
	cmd.Flags().BoolVar(&f.json, "json", false, "print the result as JSON")
	return cmd
}

// checkResult is what `weir policy check --json` prints.
type checkResult struct {
	Policy   string          `json:"policy"`
	Valid    bool            `json:"valid"`
	Errors   []string        `json:"errors,omitempty"`
	Preset   string          `json:"preset,omitempty"`
	Tool     string          `json:"tool,omitempty"`
	Labels   []string        `json:"labels,omitempty"`
	Why      []string        `json:"labels_why,omitempty"`
	Verdict  string          `json:"verdict,omitempty"`
	Rule     string          `json:"rule,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Sources  []string        `json:"sources,omitempty"`
	Paths    []string        `json:"paths,omitempty"`
	Findings []checkFinding  `json:"findings,omitempty"`
	Summary  *policySummary  `json:"summary,omitempty"`
	raw      engine.Decision `json:"-"`
}

type checkFinding struct {
	Rule    string `json:"rule"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

type policySummary struct {
	Mode          string `json:"mode"`
	DefaultAction string `json:"default_action"`
	Exfiltration  string `json:"exfiltration"`
	TaintedArgs   string `json:"tainted_args"`
	Trifecta      string `json:"trifecta"`
	Integrity     string `json:"integrity"`
	MinMatches    int    `json:"min_matches"`
	Tools         int    `json:"tools"`
	Rules         int    `json:"rules"`
	AllowFlows    int    `json:"allow_flows"`
}

func runCheck(w io.Writer, file string, f checkFlags) error {
	res := checkResult{Policy: file}
	pol, err := policyfile.Load(file)
	if err != nil {
		res.Errors = errorLines(err)
		if f.json {
			writeJSON(w, res)
		} else {
			fmt.Fprintf(w, "%s: invalid\n", file)
			for _, e := range res.Errors {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
		return &exitError{code: 2}
	}
	res.Valid = true
	res.Summary = &policySummary{
		Mode: pol.Mode.String(), DefaultAction: pol.DefaultAction.String(),
		Exfiltration: pol.Flow.Exfiltration.String(), TaintedArgs: pol.Flow.TaintedArgs.String(),
		Trifecta: pol.Flow.Trifecta.String(), Integrity: pol.Flow.Integrity.String(),
		MinMatches: pol.Flow.MinMatches, Tools: len(pol.Tools), Rules: len(pol.Rules), AllowFlows: len(pol.Flow.AllowFlows),
	}
	res.Preset = pol.Preset
	if f.tool != "" {
		if err := dryRun(pol, f, &res); err != nil {
			return &exitError{code: 2, err: err}
		}
	}
	if f.json {
		writeJSON(w, res)
	} else {
		printCheck(w, res)
	}
	if res.Verdict != "" && res.raw.Verdict.Stops() {
		return &exitError{code: 1}
	}
	return nil
}

func dryRun(pol *policy.Policy, f checkFlags, res *checkResult) error {
	server, tool, ok := strings.Cut(f.tool, ":")
	if !ok || server == "" || tool == "" {
		return fmt.Errorf("--tool %q: want server:tool, e.g. mail:send_email", f.tool)
	}
	var argsObj map[string]any
	if err := json.Unmarshal([]byte(f.args), &argsObj); err != nil {
		return fmt.Errorf("--args is not a JSON object: %v", err)
	}
	key := make([]byte, 32) // a throwaway key: nothing is stored
	h, err := fingerprint.NewHasher(key)
	if err != nil {
		return err
	}
	// The session lives in memory: the reads of --session, recorded as
	// weir run records results.
	const session = "policy-check"
	st := store.NewMemory()
	if f.session != "" {
		if err := loadSession(pol, f.session, h, st, session); err != nil {
			return err
		}
	}
	// Labels as weir run gives them: from the definitions the server
	// listed (--definition), else from the tool's name alone, as for a tool
	// called before any tools/list.
	var defs []engine.ToolDef
	if f.definition != "" {
		if defs, err = loadDefinition(f.definition, server, tool); err != nil {
			return err
		}
	}
	labels := engine.LabelDefs(pol, server, f.pkg, tool, defs)
	for _, l := range strings.Split(f.labels, ",") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		lb, err := flow.ParseLabel(l)
		if err != nil {
			return fmt.Errorf("--labels: %v", err)
		}
		labels.Labels |= lb
		labels.Why = append(labels.Why, lb.String()+": --labels")
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	g := relay.Gatherer{Store: st, Session: session, Server: server, Home: home, Cwd: cwd, Now: time.Now}
	call := engine.Call{Server: server, Tool: tool, Labels: labels, Args: json.RawMessage(f.args)}
	var mirror flow.Session
	if err := g.Call(context.Background(), pol, &call, &mirror); err != nil {
		return err
	}
	d := engine.Decide(engine.Inputs{Policy: pol, Hasher: h, Session: &mirror}, call)
	res.raw = d
	res.Tool = server + ":" + tool
	res.Labels, res.Why = labels.Labels.Names(), labels.Why
	res.Verdict, res.Rule, res.Reason = d.Verdict.String(), string(d.Rule), d.Reason
	res.Sources, res.Paths = d.Sources, d.Paths
	for _, fd := range d.Findings {
		res.Findings = append(res.Findings, checkFinding{string(fd.Rule), fd.Verdict.String(), fd.Reason})
	}
	return nil
}

// loadDefinition reads the tool's definitions from a file holding one tool
// definition, a list of them, or a tools/list result, read the way weir run
// reads the server's list.
func loadDefinition(file, server, tool string) ([]engine.ToolDef, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSpace(data)
	var list []byte
	switch {
	case len(data) > 0 && data[0] == '[':
		list = append(append([]byte(`{"tools":`), data...), '}')
	case bytes.Contains(data, []byte(`"tools"`)):
		list = data
	default:
		list = append(append([]byte(`{"tools":[`), data...), ']', '}')
	}
	tools, _, err := engine.ReadToolList(server, list)
	if err != nil {
		return nil, fmt.Errorf("%s: want a tool definition, a list of them or a tools/list result: %v", file, err)
	}
	var defs []engine.ToolDef
	for _, t := range tools {
		if t.Name == tool {
			defs = append(defs, engine.DefOf(t))
		}
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("%s: no definition of a tool named %q", file, tool)
	}
	return defs, nil
}

// sessionRead is one earlier result in a --session file.
type sessionRead struct {
	Tool   string   `json:"tool"`
	Labels []string `json:"labels"`
	Text   string   `json:"text"`
}

// loadSession records the reads of a --session file as weir run records
// results: through the engine, so the policy's declassify entries apply.
func loadSession(pol *policy.Policy, file string, h *fingerprint.Hasher, st *store.Memory, session string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var reads []sessionRead
	if err := json.Unmarshal(data, &reads); err != nil {
		return fmt.Errorf("%s: want a JSON list of {\"tool\", \"labels\", \"text\"}: %v", file, err)
	}
	for i, r := range reads {
		server, tool, ok := strings.Cut(r.Tool, "/")
		if !ok {
			return fmt.Errorf("%s: read %d: tool %q: want server/tool", file, i, r.Tool)
		}
		var l flow.Labels
		for _, name := range r.Labels {
			lb, err := flow.ParseLabel(name)
			if err != nil {
				return fmt.Errorf("%s: read %d: %v", file, i, err)
			}
			l |= lb
		}
		raw, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": r.Text}}})
		d := engine.Decide(engine.Inputs{Policy: pol, Hasher: h}, engine.Result{Server: server, Tool: tool, Labels: l, Raw: raw, At: int64(i)})
		if d.Rule == engine.RuleProtocol {
			return fmt.Errorf("%s: read %d: %s", file, i, d.Reason)
		}
		for _, o := range d.Delta.Observations {
			if _, err := st.Append(context.Background(), session, o); err != nil {
				return err
			}
		}
	}
	return nil
}

func printCheck(w io.Writer, r checkResult) {
	s := r.Summary
	preset := r.Preset
	if preset == "" {
		preset = "default"
	}
	fmt.Fprintf(w, "%s: valid (preset %s, mode %s)\n", r.Policy, preset, s.Mode)
	fmt.Fprintf(w, "  flow: exfiltration %s, tainted_args %s, trifecta %s, integrity %s, min_matches %d\n",
		s.Exfiltration, s.TaintedArgs, s.Trifecta, s.Integrity, s.MinMatches)
	fmt.Fprintf(w, "  default_action %s; %d tools entries, %d rules, %d allow_flows\n", s.DefaultAction, s.Tools, s.Rules, s.AllowFlows)
	if r.Verdict == "" {
		return
	}
	labels := "none"
	if len(r.Labels) > 0 {
		labels = strings.Join(r.Labels, ", ")
	}
	fmt.Fprintf(w, "call %s: labels %s\n", r.Tool, labels)
	for _, why := range r.Why {
		fmt.Fprintf(w, "  %s\n", why)
	}
	fmt.Fprintf(w, "verdict: %s\n", strings.ToUpper(r.Verdict))
	if r.Rule != "" {
		fmt.Fprintf(w, "rule: %s\nreason: %s\n", r.Rule, r.Reason)
	}
	for _, f := range r.Findings[min(1, len(r.Findings)):] {
		fmt.Fprintf(w, "also: %s (%s): %s\n", f.Rule, f.Verdict, f.Reason)
	}
}

func errorLines(err error) []string {
	var list policyfile.ErrorList
	if errors.As(err, &list) {
		out := make([]string, len(list))
		for i, e := range list {
			out[i] = e.Error()
		}
		return out
	}
	return []string{err.Error()}
}

func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
