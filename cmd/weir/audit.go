package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/store"
)

func newAuditCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read and verify the hash-chained audit log",
		Long: `Every decision Weir makes is appended to $WEIR_HOME/audit.log, one JSON
record per line, each carrying the hash of the one before. Records hold
labels, verdicts, rules, argument shapes and keyed hashes, never argument
values or result text.`,
		Example: `  weir audit tail -n 20
  weir audit tail -f --json
  weir audit verify`,
	}
	cmd.AddCommand(newAuditTailCmd(), newAuditVerifyCmd())
	return cmd
}

func auditPath(file string) (string, error) {
	if file != "" {
		return file, nil
	}
	home, err := store.Home()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "audit.log"), nil
}

func newAuditTailCmd() *cobra.Command {
	var (
		n      int
		follow bool
		asJSON bool
		file   string
	)
	cmd := &cobra.Command{
		Use:   "tail [-n N] [-f] [--json]",
		Short: "Show the latest decisions",
		Example: `  weir audit tail
  weir audit tail -n 100 --json | jq 'select(.verdict != "allow")'
  weir audit tail -f`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := auditPath(file)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			p := newPrinter(out)
			show := func(r audit.Record) error {
				if asJSON {
					b, err := json.Marshal(r)
					if err != nil {
						return err
					}
					_, err = fmt.Fprintf(out, "%s\n", b)
					return err
				}
				p.record(r)
				return nil
			}
			recs, err := audit.Tail(path, n)
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("no audit log at %s yet: it is created by the first decision of weir run", path)
			}
			if err != nil {
				return err
			}
			for _, r := range recs {
				if err := show(r); err != nil {
					return err
				}
			}
			if follow {
				return audit.Follow(cmd.Context(), path, show)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&n, "lines", "n", 10, "number of records to show")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing records as they are appended")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print raw JSON records, one per line")
	cmd.Flags().StringVar(&file, "file", "", "audit log to read (default $WEIR_HOME/audit.log)")
	return cmd
}

func newAuditVerifyCmd() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "verify [--file FILE]",
		Short: "Check the audit log's hash chain",
		Long: `Verify walks the audit log and checks that every record's hash matches its
content and the previous record's hash, and that sequence numbers have no
gaps, so an edited, inserted, reordered or deleted record is found. It
prints the head hash: keep it elsewhere to also detect a truncated log.

Exit status: 0 intact, 1 tampered or damaged, 2 the log could not be read.`,
		Example: `  weir audit verify
  weir audit verify --file /backup/audit.log`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := auditPath(file)
			if err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			defer f.Close()
			sum, err := audit.Verify(f)
			if err != nil {
				var ve *audit.VerifyError
				if errors.As(err, &ve) {
					return &exitError{code: 1, err: fmt.Errorf("%s: audit log is NOT intact: %w", path, err)}
				}
				return &exitError{code: 2, err: err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: intact, %d records (%s … %s)\nhead %s\n", path, sum.Records, sum.First, sum.Last, sum.Head)
			return nil
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "audit log to verify (default $WEIR_HOME/audit.log)")
	return cmd
}

// printer renders records for a terminal: colour when it is one.
type printer struct {
	w     io.Writer
	color bool
}

func newPrinter(w io.Writer) *printer { return &printer{w: w, color: isTerminal(w)} }

func (p *printer) paint(code, s string) string {
	if !p.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p *printer) verdict(v string) string {
	switch v {
	case "block":
		return p.paint("1;31", strings.ToUpper(v))
	case "escalate":
		return p.paint("1;35", strings.ToUpper(v))
	case "warn":
		return p.paint("33", strings.ToUpper(v))
	default:
		return p.paint("32", strings.ToUpper(v))
	}
}

func (p *printer) record(r audit.Record) {
	what := r.Tool
	if what == "" {
		what = r.Method
	}
	mode := ""
	if !r.Enforced {
		mode = " (monitor: not enforced)"
	}
	fmt.Fprintf(p.w, "%s %-8s %s/%s %s%s\n", p.paint("2", r.Time), p.verdict(r.Verdict), r.Server, what, p.paint("2", r.Event), mode)
	if r.Rule != "" {
		fmt.Fprintf(p.w, "    rule %s: %s\n", r.Rule, r.Reason)
	} else if r.Reason != "" {
		fmt.Fprintf(p.w, "    %s\n", r.Reason)
	}
}
