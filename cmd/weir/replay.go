package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/policy"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/recording"
	"github.com/weir-sec/weir/internal/store"
)

// openRecordings opens $WEIR_HOME's state store and the install key that
// the recordings' hashes are keyed with.
func openRecordings(ctx context.Context) (store.State, *fingerprint.Hasher, error) {
	home, err := store.Home()
	if err != nil {
		return nil, nil, err
	}
	key, err := store.LoadKey(home)
	if err != nil {
		return nil, nil, err
	}
	h, err := fingerprint.NewHasher(key)
	if err != nil {
		return nil, nil, err
	}
	st, err := store.Open(ctx, home, "")
	if err != nil {
		return nil, nil, err
	}
	return st, h, nil
}

// loadCandidate reads --policy: a file, or the name of a preset.
func loadCandidate(arg string) (*policy.Policy, error) {
	for _, name := range policyfile.PresetNames() {
		if arg == name {
			return policyfile.Preset(name)
		}
	}
	return policyfile.Load(arg)
}

// sinceMillis turns --since (a duration back from now, 90m, 24h, 7d, 2w,
// or a time) into the Unix millisecond it starts at (0: all).
func sinceMillis(since string) (int64, error) {
	t, err := audit.ParseSince(since, time.Now())
	if err != nil || t.IsZero() {
		return 0, err
	}
	return t.UnixMilli(), nil
}

func newReplayCmd() *cobra.Command {
	var (
		policyArg, session, failOn, since string
		asJSON                            bool
	)
	cmd := &cobra.Command{
		Use:   "replay [--policy FILE|PRESET] [--since DURATION] [--session ID] [--fail-on changed|blocked] [--json]",
		Short: "Decide recorded sessions again: check the record, or try a policy on them",
		Long: `Weir records each session's decisions (labels, argument shapes and keyed
hashes, never values; record.enabled in the policy). Replay decides every
recorded call again from its recording and the session as it was.

Without --policy each call is decided under the policy it was made under,
and any difference is a mismatch (exit status 1): the engine is
deterministic, so a mismatch is a bug or a tampered record.

With --policy FILE or a preset name, the recorded sessions are replayed in
order against that policy, and every call it would newly block, escalate or
allow is listed with the rule and reason. --fail-on blocked exits 1 when
anything is newly blocked or escalated (review a policy change in CI like
code); --fail-on changed when anything changed at all.

A recording keeps no argument values, so a rule that reads them (deny/allow
patterns, one_of, min/max, when predicates) keeps its recorded finding when
the candidate has it unchanged, and is reported as not re-evaluated when it
is new or changed; within, hosts, max_length and rate_limit are checked
from the recording's keyed hashes.`,
		Example: `  weir replay
  weir replay --policy strict --since 24h
  weir replay --policy ./policy.yaml --fail-on blocked --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch failOn {
			case "", "changed", "blocked":
			default:
				return &exitError{code: 2, err: fmt.Errorf("--fail-on %q: want changed or blocked", failOn)}
			}
			from, err := sinceMillis(since)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			opts := recording.ReplayOptions{Since: from, Session: session}
			if policyArg != "" {
				p, err := loadCandidate(policyArg)
				if err != nil {
					return &exitError{code: 2, err: err}
				}
				opts.Candidate = p
			}
			ctx := cmd.Context()
			st, h, err := openRecordings(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := recording.Replay(ctx, st, h, opts)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				writeJSON(w, rep)
			} else {
				printReplay(w, rep)
			}
			c := rep.Counts
			switch {
			case c.Mismatch > 0:
				return &exitError{code: 1}
			case failOn == "blocked" && c.NewlyBlocked+c.NewlyEscalated > 0,
				failOn == "changed" && c.NewlyBlocked+c.NewlyEscalated+c.NewlyAllowed+c.Changed > 0:
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&policyArg, "policy", "", "replay against this policy file or preset instead of the recorded ones")
	cmd.Flags().StringVar(&since, "since", "", "only records since then: 90m, 24h, 7d, 2w or a time (default: all)")
	cmd.Flags().StringVar(&session, "session", "", "only this session")
	cmd.Flags().StringVar(&failOn, "fail-on", "", "exit 1 when a call is newly blocked (blocked) or changed at all (changed)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func printReplay(w io.Writer, rep *recording.Report) {
	for _, o := range rep.Outcomes {
		if o.Change == recording.Unchanged {
			fmt.Fprintf(w, "%s  %s/%s  unchanged (%s), but not re-evaluated: rules %s\n", o.At, o.Server, o.Tool, o.Verdict, strings.Join(o.NotReevaluated, ", "))
			continue
		}
		fmt.Fprintf(w, "%s  %s/%s  %s: %s → %s\n", o.At, o.Server, o.Tool, strings.ToUpper(o.Change), o.RecordedVerdict, o.Verdict)
		if o.Rule != "" {
			fmt.Fprintf(w, "    rule: %s\n    reason: %s\n", o.Rule, o.Reason)
		}
		if o.Change == recording.Mismatch || o.Rule == "" {
			fmt.Fprintf(w, "    recorded: %s %s %s\n", o.RecordedVerdict, o.RecordedRule, o.RecordedReason)
		}
		fmt.Fprintf(w, "    record %d, session %s\n", o.Seq, o.Session)
		if len(o.NotReevaluated) > 0 {
			fmt.Fprintf(w, "    not re-evaluated: rules %s\n", strings.Join(o.NotReevaluated, ", "))
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	c := rep.Counts
	if rep.Candidate == "" {
		fmt.Fprintf(w, "%d calls replayed from %d sessions under their recorded policies: %d mismatches, %d unchanged\n",
			rep.Calls, rep.Sessions, c.Mismatch, c.Unchanged)
		return
	}
	fmt.Fprintf(w, "%d calls replayed from %d sessions against %s: %d newly blocked, %d newly escalated, %d newly allowed, %d otherwise changed, %d unchanged\n",
		rep.Calls, rep.Sessions, rep.Candidate, c.NewlyBlocked, c.NewlyEscalated, c.NewlyAllowed, c.Changed, c.Unchanged)
}
