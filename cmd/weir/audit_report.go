package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/audit"
)

func newAuditReportCmd() *cobra.Command {
	var out, since, file string
	cmd := &cobra.Command{
		Use:   "report -o FILE [--since DURATION] [--file LOG]",
		Short: "Write an HTML report of the audit log: timeline, rules, tools, trifecta sessions, approvals",
		Long: `Report reads the audit log (with its rotated files) and writes one
self-contained HTML page: the chain's status (as weir audit verify finds
it), the headline counts, a timeline of decisions stacked by verdict,
verdicts by rule, the top tools, the sessions that held the lethal trifecta
(private data and untrusted input in their results, then a call to a sink)
and what each then tried, the escalations and their answers, and the tool
definitions Weir flagged.

The page needs no network: its CSS and charts (SVG) are inline, and it has
no script. It is built from the log's records alone, so it holds labels,
verdicts, rules, tool names and reasons, never an argument value or result
text. --since keeps the records from a time on: a duration back from now
(90m, 24h, 7d, 2w) or a time (2026-07-01, 2026-07-01T12:00:00Z). The chain
is verified in full whatever --since says. A broken chain does not stop the
report: its header says where the log breaks.`,
		Example: `  weir audit report -o report.html
  weir audit report -o last-week.html --since 7d
  weir audit report -o - --file /backup/audit.log > report.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("say where to write the report: -o report.html (or -o - for stdout)")
			}
			from, err := audit.ParseSince(since, time.Now())
			if err != nil {
				return err
			}
			files, err := auditFiles(file)
			if err != nil {
				return err
			}
			rep, err := audit.NewReport(files, audit.ReportOptions{Since: from, Product: "weir " + version})
			if err != nil {
				return err
			}
			if err := writeOutput(cmd.OutOrStdout(), out, rep.WriteHTML); err != nil {
				return err
			}
			if out == "-" {
				return nil
			}
			c := rep.Counts
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %s, %s (%d blocked, %d escalated), %s; chain %s\n",
				out, plural(c.Records, "record"), plural(c.Sessions, "session"), plural(c.Calls, "tool call"),
				c.Verdicts["block"], c.Verdicts["escalate"], plural(c.Trifecta, "trifecta session"), rep.Chain.State)
			if rep.Chain.State == "broken" {
				fmt.Fprintf(cmd.ErrOrStderr(), "weir: warning: the audit log is %s\n", rep.Chain.Message)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `file to write the HTML to ("-" for stdout)`)
	cmd.Flags().StringVar(&since, "since", "", "only records from this time on: a duration back from now (24h, 7d) or a time (2026-07-01)")
	cmd.Flags().StringVar(&file, "file", "", "audit log to read, with its rotated files (default $WEIR_HOME/audit.log)")
	return cmd
}

// plural counts things: "1 record", "2 records".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// writeOutput writes with write to the file out, or to stdout for "-". A
// file is written next to its final name and renamed into place, so a
// failed write leaves no half file.
func writeOutput(stdout io.Writer, out string, write func(io.Writer) error) error {
	if out == "-" {
		return write(stdout)
	}
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(out)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	defer os.Remove(tmp.Name())
	werr := write(tmp)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write %s: %w", out, werr)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
