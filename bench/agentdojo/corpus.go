package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Transcript is one line of traces/<suite>.jsonl: one agent run, its tool
// calls in the order the agent issued them, and AgentDojo's flags. Only
// the fields the replay and the scoring read are decoded.
type Transcript struct {
	ID            string  `json:"id"`
	Suite         string  `json:"suite"`
	UserTask      string  `json:"user_task"`
	Model         string  `json:"model"`
	InjectionTask *string `json:"injection_task"`
	Attack        *string `json:"attack"`
	Utility       bool    `json:"utility"`
	Security      bool    `json:"security"`
	InjectionGoal string  `json:"injection_goal"`
	// ScorableAttack: hijacked, not errored, no overlap between the
	// attacker's identifiers and the user's prompt, and at least one sink
	// injection call. Only attack runs carry it.
	ScorableAttack      bool   `json:"scorable_attack"`
	NInjectionSinkCalls int    `json:"n_injection_sink_calls"`
	Calls               []Call `json:"calls"`
}

// Call is one recorded tool call and the text the agent got back.
type Call struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is the text the agent saw (JSON null for a call that was
	// requested but never executed).
	Result   json.RawMessage `json:"result"`
	IsError  bool            `json:"is_error"`
	Executed bool            `json:"executed"`
	// Scoring only: whether the call served the injection, and whether it
	// was the harmful action itself ("sink") or a read on its way
	// ("support"). The replay never shows these to Weir.
	InjectionCall bool   `json:"injection_call"`
	InjectionRole string `json:"injection_role"`
}

// IsAttack reports whether the run had an injection planted.
func (t *Transcript) IsAttack() bool { return t.InjectionTask != nil && *t.InjectionTask != "" }

// Injection is the run's injection task id, "" for a no-attack run.
func (t *Transcript) Injection() string {
	if t.InjectionTask == nil {
		return ""
	}
	return *t.InjectionTask
}

// ResultText is the text of the call's result as the agent saw it: the
// recorded string, "" for null, and the JSON text of anything else.
func (c *Call) ResultText() string {
	r := bytes.TrimSpace(c.Result)
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

// ArgumentsJSON is the call's arguments as compact JSON, exactly the
// recorded values ({} when none were recorded).
func (c *Call) ArgumentsJSON() (json.RawMessage, error) {
	r := bytes.TrimSpace(c.Arguments)
	if len(r) == 0 || string(r) == "null" {
		return json.RawMessage(`{}`), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, r); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Tool is one tool definition as AgentDojo shows it to the model.
type Tool struct {
	Suite       string          `json:"suite"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Corpus is a corpus folder: tool definitions per suite, transcripts, and
// the injection tasks' goal texts.
type Corpus struct {
	Dir         string
	Tools       map[string][]Tool // suite → tools, in AgentDojo's order
	Transcripts []*Transcript     // suites in sorted order, then file order
	// Goals maps "suite/injection_task_N" to a goal text of that task
	// (the latest version's; transcripts carry the one they ran).
	Goals map[string]string
}

// Suites lists the suites with tools, sorted.
func (c *Corpus) Suites() []string {
	var out []string
	for s := range c.Tools {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// LoadCorpus reads tools.json, injection_tasks.json (optional) and every
// traces/*.jsonl of dir.
func LoadCorpus(dir string) (*Corpus, error) {
	c := &Corpus{Dir: dir, Tools: map[string][]Tool{}, Goals: map[string]string{}}
	data, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", dir, err)
	}
	var tf struct {
		Tools   []Tool              `json:"tools"`
		BySuite map[string][]string `json:"by_suite"`
	}
	if err := json.Unmarshal(data, &tf); err != nil {
		return nil, fmt.Errorf("corpus %s: tools.json: %w", dir, err)
	}
	for _, t := range tf.Tools {
		if t.Suite == "" || t.Name == "" {
			return nil, fmt.Errorf("corpus %s: tools.json: a tool without suite or name", dir)
		}
		c.Tools[t.Suite] = append(c.Tools[t.Suite], t)
	}
	// Keep AgentDojo's order where by_suite gives it.
	for suite, names := range tf.BySuite {
		tools := c.Tools[suite]
		slices.SortStableFunc(tools, func(a, b Tool) int {
			ia, ib := slices.Index(names, a.Name), slices.Index(names, b.Name)
			if ia < 0 {
				ia = len(names)
			}
			if ib < 0 {
				ib = len(names)
			}
			return ia - ib
		})
	}
	if err := c.loadGoals(filepath.Join(dir, "injection_tasks.json")); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "traces", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("corpus %s: no traces/*.jsonl", dir)
	}
	slices.Sort(files)
	seen := map[string]bool{}
	for _, f := range files {
		ts, err := readTraces(f)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			if seen[t.ID] {
				return nil, fmt.Errorf("%s: transcript %s appears twice", f, t.ID)
			}
			seen[t.ID] = true
			if _, ok := c.Tools[t.Suite]; !ok {
				return nil, fmt.Errorf("%s: transcript %s: suite %q has no tools in tools.json", f, t.ID, t.Suite)
			}
			c.Transcripts = append(c.Transcripts, t)
		}
	}
	return c, nil
}

func readTraces(path string) ([]*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []*Transcript
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		t := new(Transcript)
		if err := json.Unmarshal(b, t); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		if t.ID == "" || t.Suite == "" {
			return nil, fmt.Errorf("%s:%d: transcript without id or suite", path, line)
		}
		if t.Model == "" {
			// The id is model/suite/user_task/attack/injection_task.
			t.Model, _, _ = strings.Cut(t.ID, "/")
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

func (c *Corpus) loadGoals(path string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil // goals then come from the transcripts alone
	}
	if err != nil {
		return err
	}
	var f struct {
		Suites map[string]struct {
			InjectionTasks []struct {
				ID       string `json:"id"`
				Versions []struct {
					Goal string `json:"goal"`
				} `json:"versions"`
			} `json:"injection_tasks"`
		} `json:"suites"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for suite, s := range f.Suites {
		for _, it := range s.InjectionTasks {
			if n := len(it.Versions); n > 0 {
				c.Goals[suite+"/"+it.ID] = it.Versions[n-1].Goal
			}
		}
	}
	return nil
}
