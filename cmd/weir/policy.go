package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/store"
)

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Inspect, check and dry-run policies",
		Long: `A policy labels tools, sets what happens to each kind of flow, constrains
arguments, rate-limits and takes CEL predicates. Presets are built in
(` + strings.Join(policyfile.PresetNames(), ", ") + `); a policy file layers on one.`,
		Example: `  weir policy show strict
  weir policy check ./policy.yaml
  weir policy check ./policy.yaml --tool mail:send_email --args '{"to":"x@evil.example"}'
  weir policy schema > policy.schema.json
  weir policy schemas`,
	}
	cmd.AddCommand(newPolicyShowCmd(), newPolicySchemaCmd(), newPolicySchemasCmd(), newPolicyCheckCmd())
	return cmd
}

func newPolicyShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show PRESET",
		Short: "Print a built-in preset, every key commented",
		Example: `  weir policy show default
  weir policy show dataflow`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: policyfile.PresetNames(),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := policyfile.PresetText(args[0])
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			_, err = cmd.OutOrStdout().Write(text)
			return err
		},
	}
}

func newPolicySchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of policy files, for editors",
		Long: `Schema prints the JSON Schema (draft 2020-12) of Weir policy files. Point
your editor's YAML language server at it to get completion and checks:

  # yaml-language-server: $schema=./policy.schema.json`,
		Example: `  weir policy schema > policy.schema.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(policyfile.Schema())
			return err
		},
	}
}

func newPolicySchemasCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "schemas [NAME] [--json]",
		Short: "List the named schemas a tools entry can declassify results by",
		Long: `A tools entry's declassify lets results that validate against a schema
enter the session without a label (untrusted by default):

  tools:
    - match: "shop:get_price"
      labels: [untrusted]
      declassify: {schema: currency_amount}

Schemas lists the named schemas; with a NAME it prints that schema as JSON.
A schema written inline must admit no free text: every string bounded by
enum or const, a format (date, date-time, time, email, uuid, ipv4, ipv6, or
uri with hosts), or a pattern with a maxLength of at most 64.`,
		Example: `  weir policy schemas
  weir policy schemas currency_amount
  weir policy schemas --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			type named struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Schema      json.RawMessage `json:"schema"`
			}
			var list []named
			for _, s := range policyfile.Schemas() {
				if len(args) == 0 || args[0] == s.Name {
					list = append(list, named{s.Name, s.Description, s.JSON})
				}
			}
			w := cmd.OutOrStdout()
			switch {
			case len(list) == 0:
				var names []string
				for _, s := range policyfile.Schemas() {
					names = append(names, s.Name)
				}
				return &exitError{code: 2, err: fmt.Errorf("no schema named %q; the named schemas are %s", args[0], strings.Join(names, ", "))}
			case asJSON:
				writeJSON(w, list)
			case len(args) == 1:
				writeJSON(w, list[0].Schema)
			default:
				width := 0
				for _, s := range list {
					width = max(width, len(s.Name))
				}
				for _, s := range list {
					fmt.Fprintf(w, "%-*s  %s\n", width, s.Name, s.Description)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the names, descriptions and schemas as JSON")
	return cmd
}

func newInitCmd() *cobra.Command {
	var preset string
	var force bool
	cmd := &cobra.Command{
		Use:   "init [--preset NAME] [--force]",
		Short: "Write a documented policy to $WEIR_HOME/policy.yaml",
		Long: `Init writes a policy file that layers on a preset and spells out every key
with a comment, so you can read what Weir enforces and change it in place.
weir run uses $WEIR_HOME/policy.yaml when no --policy is given. Init refuses
to overwrite an existing file unless --force is given.`,
		Example: `  weir init
  weir init --preset strict --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			text, err := policyfile.PresetText(preset)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			home, err := store.Home()
			if err != nil {
				return err
			}
			path := filepath.Join(home, policyfile.FileName)
			flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
			if force {
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return &exitError{code: 1, err: fmt.Errorf("%s already exists; use --force to overwrite it", path)}
			}
			if err != nil {
				return err
			}
			if _, err := f.Write(initText(preset, text)); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			// Check what was written, as weir run will read it.
			if _, err := policyfile.Load(path); err != nil {
				return fmt.Errorf("the policy written to %s does not load (a bug in weir): %w", path, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (preset %s); weir run uses it when no --policy is given\n", path, preset)
			return nil
		},
	}
	cmd.Flags().StringVar(&preset, "preset", "default", "preset to start from: "+strings.Join(policyfile.PresetNames(), ", "))
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing policy file")
	return cmd
}

// initText turns a preset's text into a user policy that layers on it: a
// header, and a preset key after the version line.
func initText(preset string, text []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Weir policy, written by `weir init --preset %s`.\n", preset)
	b.WriteString("# weir run reads it from $WEIR_HOME/policy.yaml when no --policy is given.\n")
	b.WriteString("# It layers on the preset named below and repeats every value of it, so\n")
	b.WriteString("# you can see what is enforced and change it here. Check your changes with\n")
	b.WriteString("#   weir policy check " + "$WEIR_HOME/" + policyfile.FileName + "\n\n")
	lines := strings.SplitAfter(string(text), "\n")
	// Skip the preset's own title comment block.
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "#") {
		i++
	}
	for _, l := range lines[i:] {
		b.WriteString(l)
		if strings.HasPrefix(l, "version:") {
			fmt.Fprintf(&b, "\n# The built-in preset this file layers on: %s.\n", strings.Join(policyfile.PresetNames(), ", "))
			fmt.Fprintf(&b, "preset: %s\n", preset)
		}
	}
	return b.Bytes()
}
