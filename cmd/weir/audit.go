package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
values or result text.

The log rotates by size (WEIR_AUDIT_MAX_SIZE, 64MiB by default; 0 turns it
off): the full file is kept as audit.log.N, N the seq of its first record,
and the chain goes on in a new audit.log. Every audit command reads the
rotated files too.`,
		Example: `  weir audit tail -n 20
  weir audit tail -f --json
  weir audit verify
  weir audit report -o report.html --since 7d
  weir audit export --format ocsf --since 24h -o weir.ocsf.jsonl`,
	}
	cmd.AddCommand(newAuditTailCmd(), newAuditVerifyCmd(), newAuditReportCmd(), newAuditExportCmd())
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

// auditFiles are the files of the audit log at --file (or
// $WEIR_HOME/audit.log), rotated ones first, for the commands that read
// them all.
func auditFiles(file string) ([]string, error) {
	path, err := auditPath(file)
	if err != nil {
		return nil, err
	}
	files, err := audit.Files(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no audit log at %s yet: it is created by the first decision of weir run", path)
	}
	return files, err
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
	var (
		file, from, to string
		chains         chainSource
	)
	cmd := &cobra.Command{
		Use:   "verify [--file FILE] [--from FILE] [--to FILE] [--store URL] [--tenant NAME]",
		Short: "Check the audit log's hash chain",
		Long: `Verify walks the audit log and checks that every record's hash matches its
content and the previous record's hash, and that sequence numbers have no
gaps, so an edited, inserted, reordered or deleted record is found. It
prints the head hash: keep it elsewhere to also detect a truncated log.

A rotated log is one chain across its files, audit.log.N (N the seq of the
file's first record) and then audit.log: verify walks them all, oldest
first, and a file missing, repeated or out of order breaks the chain at the
first line of the file after it; a break is named by file and line. --from
and --to walk part of the files (both ends included). From a file other
than the first, its first record's link is taken as given and printed:
check it against the head of the file before it, or an anchor.

A torn line, a record cut short mid-line, is what a crash during a write
leaves: Weir chains the next record past it, so the chain stays intact, but
the decision it recorded is lost. Verify says so, with the line's number,
and exits with a status of its own. A torn last line cannot be told apart
from a log truncated mid-line: check the head against your anchor.

With a PostgreSQL state store (--store, or WEIR_STORE_URL, and no --file),
the chains are the store's, one per tenant, that every replica writes:
verify checks each (or the one --tenant names) and prints its head. A
store writes each record whole, so there a torn record is damage too.

Exit status: 0 intact, 1 tampered or damaged, 2 the log could not be read
(or does not exist), 3 intact but a write was cut short (a torn line).`,
		Example: `  weir audit verify
  WEIR_STORE_URL=postgres://weir@db:5432/weir weir audit verify --tenant acme
  weir audit verify --file /backup/audit.log
  weir audit verify --from ~/.weir/audit.log.48213
  weir audit verify --from audit.log.1 --to audit.log.48213`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := chains.open(cmd, cmp.Or(file, from, to))
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if st != nil {
				defer st.Close()
				return verifyStore(cmd, &chains, st)
			}
			path, err := auditPath(cmp.Or(file, familyOf(from), familyOf(to)))
			if err != nil {
				return err
			}
			files, err := audit.Files(path)
			if errors.Is(err, fs.ErrNotExist) {
				// Not "intact": a wrong --file or WEIR_HOME must not pass a
				// check that runs from cron.
				return &exitError{code: 2, err: fmt.Errorf("%s: no audit log here yet (weir run creates it when it starts)", path)}
			}
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			if files, err = chainRange(path, files, from, to); err != nil {
				return &exitError{code: 2, err: err}
			}
			if len(files) == 1 && from == "" {
				return verifyOne(cmd.OutOrStdout(), files[0])
			}
			return verifyChain(cmd.OutOrStdout(), path, files, from != "")
		},
	}
	cmd.Flags().StringVar(&file, "file", "", "audit log to verify, with its rotated files (default $WEIR_HOME/audit.log)")
	cmd.Flags().StringVar(&from, "from", "", "first file to verify: a rotated file of the log, or the log itself")
	cmd.Flags().StringVar(&to, "to", "", "last file to verify (default the log itself, the newest)")
	chains.flags(cmd)
	return cmd
}

// familyOf is the log a rotated file belongs to: audit.log for
// audit.log.5213. A name without a rotation suffix is its own log.
func familyOf(p string) string {
	dir, base := filepath.Split(p)
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		if _, err := strconv.ParseUint(base[i+1:], 10, 63); err == nil {
			return dir + base[:i]
		}
	}
	return p
}

// chainRange returns the files of the log at path from from to to, both
// included ("" for the first and the last).
func chainRange(path string, files []string, from, to string) ([]string, error) {
	find := func(flag, name string, def int) (int, error) {
		if name == "" {
			return def, nil
		}
		fi, err := os.Stat(name)
		if err != nil {
			return 0, fmt.Errorf("--%s: %w", flag, err)
		}
		for i, f := range files {
			if gi, err := os.Stat(f); err == nil && os.SameFile(fi, gi) {
				return i, nil
			}
		}
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = filepath.Base(f)
		}
		return 0, fmt.Errorf("--%s %s: not a file of the audit log %s, whose files are %s", flag, name, path, strings.Join(names, ", "))
	}
	i, err := find("from", from, 0)
	if err != nil {
		return nil, err
	}
	j, err := find("to", to, len(files)-1)
	if err != nil {
		return nil, err
	}
	if i > j {
		return nil, fmt.Errorf("--from %s comes after --to %s in the chain: the files go %s", filepath.Base(files[i]), filepath.Base(files[j]), joinBases(files))
	}
	return files[i : j+1], nil
}

func joinBases(files []string) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	return strings.Join(names, ", ")
}

// verifyOne verifies a log of one file, as before rotation existed.
func verifyOne(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer f.Close()
	sum, err := audit.Verify(f)
	var ve *audit.VerifyError
	switch {
	case err == nil && sum.Records == 0:
		// Only an empty file verifies with no records: a blank or
		// torn line is an error. weir run opens (creates) the log
		// before its first decision.
		fmt.Fprintf(w, "%s: empty, no records yet (weir run appends one for each decision)\n", path)
		return nil
	case errors.As(err, &ve) && ve.Torn:
		printIntact(w, path, sum)
		return &exitError{code: 3, err: fmt.Errorf("%s: warning: %s", path, tornWarning(sum))}
	case ve != nil:
		return &exitError{code: 1, err: fmt.Errorf("%s: audit log is NOT intact: %w%s", path, err, midChainHint(path, ve))}
	case err != nil:
		return &exitError{code: 2, err: err}
	}
	printIntact(w, path, sum)
	return nil
}

// midChainHint explains a first line that does not start the chain
// because the file is a rotated log's, whose older files are not there.
func midChainHint(path string, ve *audit.VerifyError) string {
	if ve.Line != 1 || ve.Seq != 1 {
		return ""
	}
	first, err := audit.FirstRecord(path)
	if err != nil || first == nil || first.Seq <= 1 {
		return ""
	}
	return fmt.Sprintf(". The file starts at record %d: it is part of a rotated log whose files before it are missing (archived?); verify from it with --from %s, or with the files before it", first.Seq, path)
}

// verifyChain verifies the files of a rotated log as one chain.
func verifyChain(w io.Writer, path string, files []string, midChain bool) error {
	start := audit.FromGenesis
	if midChain {
		start = audit.FromFirstRecord
	}
	sums, err := audit.VerifyFiles(files, start)
	var ve *audit.VerifyError
	switch {
	case errors.As(err, &ve) && !ve.Torn:
		hint := ""
		if ve.File == files[0] {
			hint = midChainHint(ve.File, ve)
		}
		return &exitError{code: 1, err: fmt.Errorf("%s: audit log is NOT intact: %w%s", path, err, hint)}
	case err != nil && ve == nil:
		return &exitError{code: 2, err: err}
	}
	var total audit.Summary
	for _, s := range sums {
		if s.Records == 0 {
			fmt.Fprintf(w, "%s: empty\n", s.Path)
			continue
		}
		if s.Records == 1 {
			fmt.Fprintf(w, "%s: record %d (%s)\n", s.Path, s.FirstSeq, s.First)
		} else {
			fmt.Fprintf(w, "%s: records %d … %d (%s … %s)\n", s.Path, s.FirstSeq, s.FirstSeq+int64(s.Records)-1, s.First, s.Last)
		}
		if total.Records == 0 {
			total.First = s.First
		}
		total.Records += s.Records
		total.Last, total.Head = s.Last, s.Head
	}
	if total.Records == 0 {
		fmt.Fprintf(w, "%s: empty, no records yet (weir run appends one for each decision)\n", path)
		return nil
	}
	across := fmt.Sprintf("%d files", len(files))
	if len(files) == 1 {
		across = "1 file"
	}
	fmt.Fprintf(w, "chain intact across %s: %d records (%s … %s)\nhead %s\n", across, total.Records, total.First, total.Last, total.Head)
	if midChain && sums[0].FirstSeq > 1 {
		fmt.Fprintf(w, "starts at record %d of the chain, after %s: check that against the head of the file before %s, or an anchor\n", sums[0].FirstSeq, sums[0].FirstPrev, filepath.Base(files[0]))
	}
	if ve != nil { // torn lines only
		var warns []string
		for _, s := range sums {
			if len(s.Torn) > 0 {
				warns = append(warns, fmt.Sprintf("%s: warning: %s", s.Path, tornWarning(s.Summary)))
			}
		}
		return &exitError{code: 3, err: errors.New(strings.Join(warns, "\nweir: "))}
	}
	return nil
}

func printIntact(w io.Writer, path string, sum audit.Summary) {
	fmt.Fprintf(w, "%s: intact, %d records (%s … %s)\nhead %s\n", path, sum.Records, sum.First, sum.Last, sum.Head)
}

// tornWarning says which lines of an intact chain are torn and what that
// means, for a log whose only damage is torn lines.
func tornWarning(sum audit.Summary) string {
	mid, tail := sum.Torn[:len(sum.Torn)-sum.TornTail], sum.Torn[len(sum.Torn)-sum.TornTail:]
	var b strings.Builder
	switch len(mid) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "line %d is a record cut short mid-line: a write was interrupted, usually by a crash, and the decision it recorded is lost; the chain resumes after it.", mid[0])
	default:
		fmt.Fprintf(&b, "lines %s are records cut short mid-line: writes were interrupted, usually by a crash, and the decisions they recorded are lost; the chain resumes after each.", joinInts(mid))
	}
	if len(tail) == 0 {
		return b.String()
	}
	last := "the last line, " + strconv.Itoa(tail[0]) + ", is"
	if len(tail) > 1 {
		last = "the last lines, " + joinInts(tail) + ", are"
	}
	if b.Len() > 0 {
		fmt.Fprintf(&b, " %s%s cut short too", strings.ToUpper(last[:1]), last[1:])
	} else if len(tail) == 1 {
		fmt.Fprintf(&b, "%s a record cut short mid-line: a write was interrupted, usually by a crash, and the decision it recorded is lost", last)
	} else {
		fmt.Fprintf(&b, "%s records cut short mid-line: writes were interrupted, usually by a crash, and the decisions they recorded are lost", last)
	}
	b.WriteString(". A torn last line cannot be told apart from a log truncated mid-line: check the head against an anchor kept elsewhere.")
	return b.String()
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	if len(s) == 2 {
		return s[0] + " and " + s[1]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
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
	if r.Event == "approval" {
		fmt.Fprintf(p.w, "    %s\n", approvalLine(r))
		return
	}
	if r.Rule != "" {
		fmt.Fprintf(p.w, "    rule %s: %s\n", r.Rule, r.Reason)
	} else if r.Reason != "" {
		fmt.Fprintf(p.w, "    %s\n", r.Reason)
	}
}

// approvalLine says how an escalation was put to a person and answered.
func approvalLine(r audit.Record) string {
	var b strings.Builder
	if r.Approval != "" {
		fmt.Fprintf(&b, "approval %s ", r.Approval)
	}
	fmt.Fprintf(&b, "via %s: %s", r.Channel, strings.ReplaceAll(r.Answer, "_", " "))
	if r.AnsweredBy != "" {
		fmt.Fprintf(&b, " by %s", strings.ReplaceAll(r.AnsweredBy, "_", " "))
	}
	if r.LatencyMS != nil && *r.LatencyMS > 0 {
		fmt.Fprintf(&b, " after %s", (time.Duration(*r.LatencyMS) * time.Millisecond).Round(100*time.Millisecond))
	}
	if r.Rule != "" {
		fmt.Fprintf(&b, " (rule %s)", r.Rule)
	}
	if r.Reason != "" {
		fmt.Fprintf(&b, ": %s", r.Reason)
	}
	if r.Prompts > 0 {
		fmt.Fprintf(&b, "; %d %s put to a person in this session", r.Prompts, map[bool]string{true: "question", false: "questions"}[r.Prompts == 1])
	}
	return b.String()
}
