package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/clients"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

func newWrapCmd() *cobra.Command {
	var (
		inPlace          bool
		policyFile, weir string
	)
	cmd := &cobra.Command{
		Use:   "wrap CONFIG [--in-place] [--policy FILE] [--weir PATH]",
		Short: "Rewrite an MCP client config so that every server (stdio or Streamable HTTP) runs behind Weir",
		Long: `Wrap rewrites each stdio server entry of CONFIG (any file weir clients
lists, or one named by path) to start

  WEIR run --name NAME [--policy FILE] -- COMMAND ARGS...

instead of the server itself, and each remote (Streamable HTTP) entry into a
stdio entry that starts

  WEIR run --name NAME [--policy FILE] --upstream URL [--header 'NAME: ${WEIR_HEADER_1}']...

each header value moved into a WEIR_HEADER_N variable of the entry's env, so
no credential shows in the process list (Claude Code, which expands every
${...} in args itself, keeps its header values in the --header flags). Only
the members involved change: the command and args values, or a remote
entry's type, URL and headers, which become command, args and env. The
original members are kept, base64 encoded, in the env variable WEIR_UNWRAP,
which weir run ignores and weir unwrap reads. Comments, key order,
indentation and every other byte of the file stay as they were. Entries
already behind weir run are left alone, so wrapping twice changes nothing.

Refused, listed with the reason and left as they are: entries Weir cannot
run under their name or edit safely; legacy HTTP+SSE entries (weir run
--upstream speaks Streamable HTTP only); remote entries that sign in some
other way (oauth, auth, headersHelper, requestOptions...) or have members
weir run cannot carry over, since Weir drops nothing silently; and remote
entries whose headers hold a variable reference the client would not expand
in env the same way. A remote
entry with no headers is wrapped, with a note: sign-in the client did itself
(OAuth) does not carry over, so if the server needs it, add a token with
--header.

Without --in-place the wrapped file goes to stdout and what changed to
stderr (header values masked); nothing is written. With --in-place the file
is first copied to CONFIG.weir-backup-TIMESTAMP (read back and verified),
then replaced atomically; the backup's path and what was done to each server
are printed. weir unwrap CONFIG undoes it byte for byte.

WEIR is --weir: by default the absolute path of the weir binary running this
command (the PATH entry when it leads to the same binary, so that a package
manager's upgrade keeps it valid), because desktop clients start servers with
a minimal PATH. Pass --weir weir to rely on the client's PATH instead.
--policy is made absolute and must load.

Exit status: 0 done, 1 done but some entry was refused (it still runs
without Weir), 2 the file could not be read, parsed or written (nothing was
changed).`,
		Example: `  weir wrap ~/Library/Application\ Support/Claude/claude_desktop_config.json
  weir wrap .mcp.json --in-place
  weir wrap ~/.cursor/mcp.json --in-place --policy ~/.weir/strict.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := clients.WrapOptions{WeirPath: weir}
			if opts.WeirPath == "" {
				opts.WeirPath = selfPath()
			}
			if policyFile != "" {
				abs, err := filepath.Abs(policyFile)
				if err != nil {
					return &exitError{code: 2, err: err}
				}
				if _, err := policyfile.Load(abs); err != nil {
					return &exitError{code: 2, err: err}
				}
				opts.Policy = abs
			}
			res, err := clients.WrapFile(args[0], opts, inPlace, time.Now())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			report := stderr
			if inPlace {
				report = stdout
			} else if _, err := stdout.Write(res.Out); err != nil {
				return err
			}
			path, backup := shownPaths(args[0], res)
			switch {
			case res.Written:
				fmt.Fprintf(report, "wrote %s (backup %s)\n", path, backup)
			case !res.Changed:
				fmt.Fprintf(report, "%s: nothing to change\n", path)
			default:
				fmt.Fprintf(report, "%s: would change (use --in-place to write it)\n", path)
			}
			printChanges(report, res.Changes)
			for _, c := range res.Changes {
				if c.Action == clients.ActionRefused {
					return &exitError{code: 1}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&inPlace, "in-place", false, "write the file (after a verified backup) instead of printing it")
	cmd.Flags().StringVar(&policyFile, "policy", "", "policy file every wrapped entry runs with (weir run --policy)")
	cmd.Flags().StringVar(&weir, "weir", "", "command the wrapped entries run (default: this weir binary's absolute path)")
	return cmd
}

func newUnwrapCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unwrap CONFIG",
		Short: "Undo weir wrap: every server runs directly again",
		Long: `Unwrap restores CONFIG as it was before weir wrap. When the file is exactly
what weir wrap made of one of its backups, that backup is copied back byte
for byte. When the file was edited since (or the backup is gone), each entry
behind weir run is unwrapped in place instead, after a backup of the current
content, and Unwrap says so; a remote entry gets its original members back
from its WEIR_UNWRAP record, and is left as it is, with the reason, when it
was edited since weir wrap rewrote it. Backups are never deleted.

Exit status: 0 done, 2 the file could not be read, parsed or written.`,
		Example: `  weir unwrap .mcp.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := clients.UnwrapFile(args[0])
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			out := cmd.OutOrStdout()
			path, backup := shownPaths(args[0], res)
			switch {
			case res.Restored:
				fmt.Fprintf(out, "restored %s from %s, byte for byte\n", path, backup)
			case res.Written:
				fmt.Fprintf(out, "unwrapped %s in place (backup %s)\n", path, backup)
			default:
				fmt.Fprintf(out, "%s: nothing to change\n", path)
			}
			if res.Note != "" && !res.Restored {
				fmt.Fprintf(out, "%s\n", res.Note)
			}
			printChanges(out, res.Changes)
			return nil
		},
	}
}

// shownPaths says which file was changed and where its backup is, in the
// terms the user gave: the path as typed, and the backup beside it; or,
// when the path is a symbolic link, the file it leads to as well.
func shownPaths(arg string, res clients.Result) (path, backup string) {
	abs, err := filepath.Abs(arg)
	if err != nil || abs != res.Path {
		return fmt.Sprintf("%s (%s)", arg, res.Path), res.Backup
	}
	if res.Backup == "" || filepath.Dir(res.Backup) != filepath.Dir(res.Path) {
		return arg, res.Backup
	}
	return arg, filepath.Join(filepath.Dir(arg), filepath.Base(res.Backup))
}

// printChanges lists what happened to each server.
func printChanges(w io.Writer, changes []clients.Change) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range changes {
		detail := c.Detail
		if c.Action == clients.ActionUnchanged && detail == "" {
			detail = "nothing to do"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Action, c.Server, detail)
	}
	tw.Flush()
}

// selfPath is the weir that wrapped entries run: the PATH entry when it is
// this very binary (a stable link a package manager updates), else this
// binary's absolute path, else plain "weir".
func selfPath() string {
	self, err := os.Executable()
	if err != nil {
		return "weir"
	}
	real, err := filepath.EvalSymlinks(self)
	if err != nil {
		real = self
	}
	if p, err := exec.LookPath("weir"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			if r, err := filepath.EvalSymlinks(abs); err == nil && r == real {
				return abs
			}
		}
	}
	return self
}
