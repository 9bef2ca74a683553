package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/clients"
)

// clientFile is one line of weir clients, and its JSON form.
type clientFile struct {
	Client     string `json:"client"`      // "claude-desktop", "cursor"...
	ClientName string `json:"client_name"` // "Claude Desktop"
	Scope      string `json:"scope"`       // user or project
	Format     string `json:"format"`      // how the file spells its servers
	Path       string `json:"path"`
	Servers    int    `json:"servers"` // server entries in the file
	Wrapped    int    `json:"wrapped"` // of which run behind weir run
	Error      string `json:"error,omitempty"`
}

func newClientsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "clients [--json]",
		Short: "List the MCP client configuration files on this machine",
		Long: `Clients looks where the MCP clients Weir knows keep their servers — Claude
Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI, Zed, Kiro, Cline,
Continue, Goose, LM Studio and opencode, in user scope (your home directory,
%APPDATA%, $XDG_CONFIG_HOME) and project scope (the current directory) — and
lists the files it finds, with how many servers each holds and how many of
them already run behind Weir. weir scan and weir wrap take these paths.`,
		Example: `  weir clients
  weir clients --json | jq -r '.[].path'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files := []clientFile{}
			for _, loc := range clients.Discover(clients.FromOS()) {
				f := clientFile{Client: loc.Client.ID, ClientName: loc.Client.Name, Scope: loc.Scope, Format: loc.Format, Path: loc.Path}
				c, err := clients.Read(loc)
				if err != nil {
					f.Error = err.Error()
				} else {
					f.Servers = len(c.Servers)
					for _, s := range c.Servers {
						if s.Wrapped {
							f.Wrapped++
						}
					}
				}
				files = append(files, f)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				b, err := json.MarshalIndent(files, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(out, "%s\n", b)
				return err
			}
			if len(files) == 0 {
				fmt.Fprintln(out, "No MCP client configuration found. weir scan and weir wrap also take a path: weir scan PATH")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CLIENT\tSCOPE\tSERVERS\tBEHIND WEIR\tPATH")
			for _, f := range files {
				if f.Error != "" {
					fmt.Fprintf(tw, "%s\t%s\t?\t?\t%s\n", f.ClientName, f.Scope, f.Path)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", f.ClientName, f.Scope, f.Servers, f.Wrapped, f.Path)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, f := range files {
				if f.Error != "" {
					fmt.Fprintf(out, "\nerror: %s\n", f.Error)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}
