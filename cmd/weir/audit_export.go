package main

import (
	"cmp"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/audit"
)

func newAuditExportCmd() *cobra.Command {
	var (
		format, out, since, file string
		chains                   chainSource
	)
	cmd := &cobra.Command{
		Use:   "export [--format jsonl|ocsf] [--since DURATION] [--file LOG | --store URL [--tenant NAME]] [-o FILE]",
		Short: "Export audit records for a SIEM: JSON Lines, or OCSF events",
		Long: `Export writes the audit log's records (with its rotated files, oldest
first) one JSON object per line, to stdout or to -o FILE.

  jsonl  each record exactly as the log holds it, byte for byte, hash and
         all: anyone can check each line's hash (see weir audit verify).
  ocsf   one OCSF ` + audit.OCSFVersion + ` event per record: API Activity (class 6003) for a
         decision that let a message through unflagged, Detection Finding
         (class 2004) for every other (a block, an escalation and its answer,
         a warning, a redaction, a poisoned tool); the README's "OCSF export"
         section maps every field.

Like the log, the export holds labels, shapes and keyed hashes, never an
argument value or result text. --since keeps the records from a time on: a
duration back from now (90m, 24h, 7d, 2w) or a time (2026-07-01,
2026-07-01T12:00:00Z). Export does not verify the chain: weir audit verify
does.

With a PostgreSQL state store (--store, or WEIR_STORE_URL, and no --file),
export reads the store's chains, one per tenant, tenant by tenant (or the
one --tenant names).`,
		Example: `  weir audit export > audit.jsonl
  weir audit export --format ocsf --since 24h -o weir.ocsf.jsonl
  weir audit export --format ocsf | jq 'select(.class_uid == 2004)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != audit.FormatJSONL && format != audit.FormatOCSF {
				return fmt.Errorf("--format %q: want jsonl or ocsf", format)
			}
			from, err := audit.ParseSince(since, time.Now())
			if err != nil {
				return err
			}
			opts := audit.ExportOptions{Format: format, Since: from, Version: version}
			st, err := chains.open(cmd, file)
			if err != nil {
				return err
			}
			var files []string
			if st != nil {
				defer st.Close()
			} else if files, err = auditFiles(file); err != nil {
				return err
			}
			var n int
			err = writeOutput(cmd.OutOrStdout(), cmp.Or(out, "-"), func(w io.Writer) error {
				var err error
				if st != nil {
					n, err = exportStore(cmd.Context(), w, &chains, st, opts)
				} else {
					n, err = audit.Export(w, files, opts)
				}
				return err
			})
			if err != nil {
				return err
			}
			if out != "" && out != "-" {
				fmt.Fprintf(cmd.ErrOrStderr(), "weir: exported %d records to %s (%s)\n", n, out, format)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", audit.FormatJSONL, "jsonl (the records as they are) or ocsf (OCSF "+audit.OCSFVersion+" events)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (default stdout)")
	cmd.Flags().StringVar(&since, "since", "", "only records from this time on: a duration back from now (24h, 7d) or a time (2026-07-01)")
	cmd.Flags().StringVar(&file, "file", "", "audit log to read, with its rotated files (default $WEIR_HOME/audit.log)")
	chains.flags(cmd)
	return cmd
}
