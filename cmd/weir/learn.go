package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/policy/policyfile"
	"github.com/weir-sec/weir/internal/recording"
)

func newLearnCmd() *cobra.Command {
	var (
		out, preset, since string
	)
	cmd := &cobra.Command{
		Use:   "learn -o policy.yaml [--since DURATION] [--preset NAME]",
		Short: "Write a least-privilege policy from the recorded sessions",
		Long: `Learn reads the recorded sessions (see weir replay) and writes a policy that
allows what they did and nothing more: every tool an allowed call used,
listed with its labels; every other tool refused (default_action: deny); the
directories path arguments read as within rules; the sites URL arguments
named as hosts rules; a rate limit at three times each tool's busiest
minute. Flow control is never weakened: the flow actions are those the
sessions were decided with, blocked calls are left out, and flows blocked as
exfiltration are written as commented-out allow_flows for a person to
review. The output is checked before it is written; replay it against the
recordings to see that it changes no allowed call.`,
		Example: `  weir learn -o policy.yaml
  weir learn -o policy.yaml --since 72h
  weir policy check policy.yaml && weir replay --policy policy.yaml --fail-on blocked`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return &exitError{code: 2, err: fmt.Errorf("-o FILE is required: where to write the learned policy")}
			}
			ctx := cmd.Context()
			st, _, err := openRecordings(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			from, err := sinceMillis(since)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			text, err := recording.Learn(ctx, st, recording.LearnOptions{Since: from, Preset: preset})
			if err != nil {
				return err
			}
			if _, err := policyfile.Parse(out, text); err != nil {
				return fmt.Errorf("the learned policy does not load (a bug in weir): %w", err)
			}
			if err := os.WriteFile(out, text, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s; check it with weir policy check %s and weir replay --policy %s --fail-on blocked\n", out, out, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "the policy file to write")
	cmd.Flags().StringVar(&since, "since", "", "only records since then: 72h, 7d or a time (default: all)")
	cmd.Flags().StringVar(&preset, "preset", "", "the preset to layer on (default: the one the sessions ran under)")
	return cmd
}
