package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/approval"
	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

// openBook opens the approval book of $WEIR_HOME: the state store and the
// install key that seals what a request shows — and the store, for the
// audit records of an answer.
func openBook(ctx context.Context) (*approval.Book, store.State, func(), error) {
	home, err := store.Home()
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := store.LoadKey(home)
	if err != nil {
		return nil, nil, nil, err
	}
	sealer, err := approval.NewSealer(key)
	if err != nil {
		return nil, nil, nil, err
	}
	st, err := store.Open(ctx, home, "")
	if err != nil {
		return nil, nil, nil, err
	}
	return &approval.Book{Store: st, Sealer: sealer}, st, func() { st.Close() }, nil
}

func newApprovalsCmd() *cobra.Command {
	var (
		asJSON  bool
		all     bool
		session string
	)
	cmd := &cobra.Command{
		Use:   "approvals [--session KEY] [--all] [--json]",
		Short: "List the calls waiting for a person's approval",
		Long: `When the policy escalates a call and the MCP client cannot ask a person
itself (it does not support elicitation), Weir refuses the call with an
approval id. This lists those requests with what each call would do, why
Weir asks and where the data came from; approve one with weir approve ID
(or refuse it with weir deny ID), then ask the agent to retry the same call.

An approval covers that exact call (the same tool and arguments in the same
session), once, until it expires (approval.ttl in the policy, 10 minutes by
default). By default only requests still waiting are listed; --all shows
the ones answered, used or asked through the client too.`,
		Example: `  weir approvals
  weir approvals --json
  weir approvals --session 4242 --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			book, _, done, err := openBook(cmd.Context())
			if err != nil {
				return err
			}
			defer done()
			now := time.Now()
			reqs, err := book.List(cmd.Context(), session, now)
			if err != nil {
				return err
			}
			if !all {
				kept := reqs[:0]
				for _, r := range reqs {
					if r.Status == approval.StatusPending && r.Channel == approval.CLI {
						kept = append(kept, r)
					}
				}
				reqs = kept
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if reqs == nil {
					reqs = []approval.Request{}
				}
				writeJSON(w, reqs)
				return nil
			}
			printApprovals(w, reqs, now, all)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&all, "all", false, "also list requests already answered, used, or asked through the client")
	cmd.Flags().StringVar(&session, "session", "", "only this session's requests (the key weir audit tail shows)")
	return cmd
}

// printApprovals renders requests for a terminal, newest first.
func printApprovals(w io.Writer, reqs []approval.Request, now time.Time, all bool) {
	if len(reqs) == 0 {
		if all {
			fmt.Fprintln(w, "no approval requests")
		} else {
			fmt.Fprintln(w, "no calls are waiting for approval")
		}
		return
	}
	p := newPrinter(w)
	// Names and reasons come from servers and the agent: escaped like values.
	esc := func(s string) string { return approval.Shorten(s, 1<<20) }
	for i, r := range reqs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		asked := now.Sub(time.UnixMilli(r.Created)).Round(time.Second)
		left := time.UnixMilli(r.Expires).Sub(now).Round(time.Second)
		status := ""
		if r.Status != approval.StatusPending || r.Channel != approval.CLI {
			status = fmt.Sprintf(" [%s via %s]", r.Status, r.Channel)
		}
		fmt.Fprintf(w, "%s  %s/%s  asked %s ago, expires in %s, session %s%s\n", p.paint("1", r.ID), esc(r.Server), esc(r.Tool), asked, left, esc(r.Session), status)
		if len(r.Facts) == 0 {
			fmt.Fprintln(w, "    its arguments name no recipient, host, path or amount")
		}
		for _, f := range r.Facts {
			fmt.Fprintf(w, "    %s: %s (%s)\n", f.Kind, f.Value, f.Path)
		}
		fmt.Fprintf(w, "    why (rule %s): %s\n", esc(r.Rule), esc(r.Reason))
		if len(r.Sources) > 0 {
			fmt.Fprintf(w, "    data from: %s", esc(strings.Join(r.Sources, ", ")))
			if len(r.Paths) > 0 {
				fmt.Fprintf(w, "; in the arguments %s", esc(strings.Join(r.Paths, ", ")))
			}
			fmt.Fprintln(w)
		}
		if r.Status == approval.StatusPending {
			session := ""
			if r.SessionScope {
				session = fmt.Sprintf(", weir approve %s --session", r.ID)
			}
			fmt.Fprintf(w, "    weir approve %s%s, weir deny %s\n", r.ID, session, r.ID)
		}
	}
}

func newApproveCmd() *cobra.Command {
	var session bool
	cmd := &cobra.Command{
		Use:   "approve ID [--session]",
		Short: "Let a call waiting for approval through, once",
		Long: `Approve answers a request that weir approvals lists: the agent's retry of
that exact call (the same tool and arguments, in the same session) is
forwarded, once. With --session, later calls of the same tool to the same
destination (recipient, host, channel, account or path) in that session
run without asking; this is refused for a call whose arguments were chosen
from untrusted content, which only ever gets a single approval.`,
		Example: `  weir approve 7kq2m4xdpe
  weir approve 7kq2m4xdpe --session`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideApproval(cmd, args[0], true, session)
		},
	}
	cmd.Flags().BoolVar(&session, "session", false, "also allow this tool to this destination for the rest of the session")
	return cmd
}

func newDenyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "deny ID",
		Short: "Refuse a call waiting for approval",
		Long: `Deny answers a request that weir approvals lists: the agent's retries of
that exact call are refused without asking again until the request
expires.`,
		Example: "  weir deny 7kq2m4xdpe",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideApproval(cmd, args[0], false, false)
		},
	}
}

func decideApproval(cmd *cobra.Command, id string, approve, session bool) error {
	id = strings.ToLower(strings.TrimSpace(id))
	if !approval.ValidID(id) {
		return &exitError{code: 2, err: fmt.Errorf("%q is not an approval id: ids are %d letters and digits, as weir approvals lists them", id, approval.IDLen)}
	}
	book, st, done, err := openBook(cmd.Context())
	if err != nil {
		return err
	}
	defer done()
	r, err := book.Decide(cmd.Context(), id, approve, session, "cli", time.Now())
	switch {
	case errors.Is(err, approval.ErrUnknown):
		return &exitError{code: 1, err: fmt.Errorf("no approval request %s: check the id with weir approvals (requests are kept a day after they expire)", id)}
	case err != nil:
		return &exitError{code: 1, err: err}
	}
	if err := auditDecision(r, approve, session, st); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "weir: the answer stands, but it could not be added to the audit log: %v\n", err)
	}
	w := cmd.OutOrStdout()
	switch {
	case !approve:
		fmt.Fprintf(w, "denied %s: %s/%s; the agent's retries of this call are refused\n", id, r.Server, r.Tool)
	case session:
		fmt.Fprintf(w, "approved %s: %s/%s, and this tool to the same destination for the rest of session %s; ask the agent to retry the call\n", id, r.Server, r.Tool, r.Session)
	default:
		fmt.Fprintf(w, "approved %s: %s/%s, once; ask the agent to retry the same call\n", id, r.Server, r.Tool)
	}
	return nil
}

// auditDecision records a person's answer in the audit log when it is
// given, not when the agent retries: a denial is evidence even if the call
// is never tried again.
func auditDecision(r approval.Request, approve, session bool, st store.State) error {
	home, err := store.Home()
	if err != nil {
		return err
	}
	// The log rotates as the proxies' policy says; a policy that does not
	// load is weir run's to report, and the default applies here.
	pol, _ := policyfile.Resolve("", home)
	log, err := openAuditLog(home, pol, st)
	if err != nil {
		return err
	}
	defer log.Close()
	answer := approval.Declined
	switch {
	case approve && session:
		answer = approval.ApprovedSession
	case approve:
		answer = approval.Approved
	}
	latency := r.Decided - r.Created
	return log.AppendAll([]*audit.Record{{
		Time: audit.FormatTime(time.UnixMilli(r.Decided)), Session: r.Session, Server: r.Server,
		Event: "approval", Method: "tools/call", Tool: r.Tool, Verdict: "escalate", Enforced: true, Rule: r.Rule,
		Approval: r.ID, Channel: string(approval.CLI), Answer: string(answer), AnsweredBy: answer.By(approval.CLI), LatencyMS: &latency,
	}})
}
