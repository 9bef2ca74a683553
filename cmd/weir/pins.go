package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/pin"
	"github.com/weir-sec/weir/internal/store"
)

func newPinsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pins",
		Short: "Review, approve and reset tool-definition pins",
		Long: `On first sight Weir pins every tool's definition (what the model reads:
name, title, description, schemas, annotations, and the server's
instructions). A definition that changes later — a rug pull — is withheld
from the client until you approve it, and so is a new tool that the
detectors flag as tool poisoning. Pins are kept per server in
$WEIR_HOME/state.db.`,
		Example: `  weir pins list
  weir pins diff notes
  weir pins approve notes:search
  weir pins reset notes`,
	}
	cmd.AddCommand(newPinsListCmd(), newPinsDiffCmd(), newPinsApproveCmd(), newPinsResetCmd())
	return cmd
}

func openPinStore(ctx context.Context) (store.State, error) {
	home, err := store.Home()
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, home, "")
}

func pinState(p pin.Pin) string {
	switch {
	case p.PendingHash == "":
		return "approved"
	case strings.HasPrefix(p.PendingWhy, "quarantined"):
		return "QUARANTINED"
	default:
		return "CHANGED"
	}
}

func newPinsListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list [SERVER]",
		Short:   "List pinned tools and what waits for approval",
		Example: "  weir pins list\n  weir pins list notes --json",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openPinStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			server := ""
			if len(args) > 0 {
				server = args[0]
			}
			pins, err := st.AllPins(cmd.Context(), server)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				type row struct {
					Server, Tool, State, Why string
					Hash, PendingHash        string `json:",omitempty"`
					Updated                  string
				}
				var rows []row
				for _, p := range pins {
					rows = append(rows, row{p.Server, p.Tool, strings.ToLower(pinState(p)), p.PendingWhy, p.Hash, p.PendingHash, time.UnixMilli(p.Updated).UTC().Format(time.RFC3339)})
				}
				writeJSON(w, rows)
				return nil
			}
			if len(pins) == 0 {
				fmt.Fprintln(w, "no pins yet: they are taken when weir run first sees a server's tools")
				return nil
			}
			pr := newPrinter(w)
			for _, p := range pins {
				state := pinState(p)
				shown := state
				if state != "approved" {
					shown = pr.paint("1;31", state)
				}
				fmt.Fprintf(w, "%-12s %s/%s", shown, p.Server, p.Tool)
				if p.PendingWhy != "" {
					fmt.Fprintf(w, "  (%s)", p.PendingWhy)
				}
				fmt.Fprintln(w)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newPinsDiffCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "diff SERVER[:TOOL]",
		Short:   "Show what changed in the definitions waiting for approval",
		Example: "  weir pins diff notes\n  weir pins diff notes:search",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, tool, _ := strings.Cut(args[0], ":")
			st, err := openPinStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			pins, err := st.AllPins(cmd.Context(), server)
			if err != nil {
				return err
			}
			n := 0
			for _, p := range pins {
				if p.PendingHash == "" || (tool != "" && p.Tool != tool) {
					continue
				}
				n++
				if err := printPinDiff(cmd.OutOrStdout(), p); err != nil {
					return err
				}
			}
			if n == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "nothing waits for approval on %s\n", args[0])
			}
			return nil
		},
	}
}

func printPinDiff(w io.Writer, p pin.Pin) error {
	d, err := pin.Diff(p.Definition, p.PendingDef)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s/%s: %s\n", p.Server, p.Tool, p.PendingWhy)
	if len(p.Definition) == 0 {
		fmt.Fprintln(w, "  (never approved: the whole definition is new)")
	}
	for _, l := range strings.Split(strings.TrimRight(d, "\n"), "\n") {
		fmt.Fprintf(w, "  %s\n", l)
	}
	if t, _, err := pin.Tool(p.Server, p.PendingDef); err == nil {
		for _, f := range detect.ScanTool(t, nil) {
			fmt.Fprintf(w, "  finding: %s (%s) in %s: %s\n", f.Detector, f.Severity, f.Field, f.Message)
			if f.Evidence != "" {
				fmt.Fprintf(w, "    evidence: %q\n", f.Evidence)
			}
		}
	}
	fmt.Fprintf(w, "approve with: weir pins approve %s:%s\n\n", p.Server, p.Tool)
	return nil
}

func newPinsApproveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "approve SERVER[:TOOL]",
		Short: "Approve the definitions waiting for approval",
		Long: `Approve makes the waiting definition of a tool (or of every tool of a
server) the pinned one, so weir run shows and allows it again. Review it
first with weir pins diff. Running proxies pick the approval up on the
server's next tools/list.`,
		Example: "  weir pins approve notes:search\n  weir pins approve notes",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			server, tool, _ := strings.Cut(args[0], ":")
			st, err := openPinStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			n, err := st.ApprovePins(cmd.Context(), server, tool, time.Now().UnixMilli())
			if err != nil {
				return err
			}
			if n == 0 {
				return &exitError{code: 1, err: fmt.Errorf("nothing waits for approval on %s (see weir pins list)", args[0])}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "approved %d definition(s) on %s\n", n, args[0])
			return nil
		},
	}
}

func newPinsResetCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "reset SERVER | --all",
		Short: "Forget pins, so tools are pinned afresh on next sight",
		Example: `  weir pins reset notes
  weir pins reset --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 0) != all {
				return &exitError{code: 2, err: fmt.Errorf("name a server, or pass --all to forget every pin")}
			}
			server := ""
			if len(args) > 0 {
				server = args[0]
			}
			st, err := openPinStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			n, err := st.ResetPins(cmd.Context(), server)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "forgot %d pin(s)\n", n)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "forget the pins of every server")
	return cmd
}
