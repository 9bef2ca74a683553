package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "weir",
		Short: "An MCP security gateway that stops prompt-injected agents from leaking data",
		Long: `Weir sits between an MCP client and its servers. It labels where every byte
came from (private data, untrusted content), and refuses the tool calls that
would move private data out or act on an attacker's behalf, even when the
agent encodes the data first.

Put a server behind Weir by prefixing its command in your client's config:

  weir run --name notes -- npx -y @modelcontextprotocol/server-filesystem ~/notes

State, the install key, the audit log and an optional policy.yaml live in
$WEIR_HOME (default ~/.weir).`,
		Example: `  weir run --name memory -- npx -y @modelcontextprotocol/server-memory
  weir audit tail -n 20
  weir audit verify`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.AddCommand(newDemoCmd(), newRunCmd(), newServeCmd(), newGatewayCmd(), newInitCmd(), newPolicyCmd(), newPinsCmd(), newApprovalsCmd(), newApproveCmd(), newDenyCmd(), newAuditCmd(), newReplayCmd(), newLearnCmd(), newVersionCmd(), newDemoServerCmd(), newClientsCmd(), newScanCmd(), newWrapCmd(), newUnwrapCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print Weir's version",
		Example: "  weir version",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "weir %s\n", version)
			return err
		},
	}
}
