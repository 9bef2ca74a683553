package main

import (
	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/demo"
)

func newDemoServerCmd() *cobra.Command {
	var journal, injection string
	cmd := &cobra.Command{
		Use:    "demo-server notes|web|mail",
		Short:  "Run one of the demo's toy MCP servers on stdio",
		Hidden: true,
		Example: `  weir demo-server notes
  weir demo-server mail --journal /tmp/sent.jsonl`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: demo.Servers,
		RunE: func(cmd *cobra.Command, args []string) error {
			return demo.ServeStdio(cmd.Context(), args[0], journal, injection)
		},
	}
	cmd.Flags().StringVar(&journal, "journal", "", "file where the mail server records what it sends")
	cmd.Flags().StringVar(&injection, "injection", "", "instruction hidden in the web server's page")
	return cmd
}
