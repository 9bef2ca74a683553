package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/weir-sec/weir/internal/audit"
	"github.com/weir-sec/weir/internal/store"
)

// The audit commands read the chains a PostgreSQL state store keeps, one
// per tenant, when --store or WEIR_STORE_URL names one and no --file is
// given: that is where every replica, weir run and weir approve on that
// store write their records (openAuditLog).

// chainSource says where an audit command reads: the store URL and the
// tenants to read (all of them when none is chosen).
type chainSource struct {
	url    string
	tenant string
	only   bool // --tenant was given ("" chooses the chain of sessions without a tenant)
}

func (c *chainSource) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.url, "store", "", "PostgreSQL state store whose audit chains to read (default $"+store.URLEnv+")")
	cmd.Flags().StringVar(&c.tenant, "tenant", "", `only this tenant's chain (--tenant "" for sessions without a tenant; default every tenant's)`)
}

// open opens the store the chains are read from, or returns nil when no
// store is named (the file log is read instead) or --file was given.
func (c *chainSource) open(cmd *cobra.Command, file string) (store.State, error) {
	c.only = cmd.Flags().Changed("tenant")
	url := c.url
	if url == "" && file == "" {
		url = os.Getenv(store.URLEnv)
	}
	if url == "" {
		if c.only || c.url != "" {
			return nil, errors.New("--tenant reads a state store's audit chains: name the store with --store or " + store.URLEnv)
		}
		return nil, nil
	}
	if file != "" {
		return nil, errors.New("--file reads a log file and --store a state store's chains: give one")
	}
	st, err := store.Open(cmd.Context(), "", url)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// tenants lists the chains to read.
func (c *chainSource) tenants(ctx context.Context, st store.State) ([]string, error) {
	if c.only {
		return []string{c.tenant}, nil
	}
	return st.AuditTenants(ctx)
}

// tenantName names a tenant's chain in output.
func tenantName(t string) string {
	if t == "" {
		return "sessions without a tenant"
	}
	return "tenant " + strconv.Quote(t)
}

// readChain streams tenant's chain from st into read, as a log file's
// bytes, without holding it all in memory.
func readChain(ctx context.Context, st store.State, tenant string, read func(io.Reader) error) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := st.WriteAudit(ctx, tenant, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	rerr := read(pr)
	pr.CloseWithError(errors.New("read stopped")) // lets the writer stop early
	werr := <-done
	if rerr != nil {
		return rerr
	}
	if werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return werr
	}
	return nil
}

// verifyStore verifies each chosen tenant's chain in st. A store's rows
// are written whole in a transaction, so any break, a torn line included,
// is tampering or damage: exit status 1.
func verifyStore(cmd *cobra.Command, src *chainSource, st store.State) error {
	ctx := cmd.Context()
	tenants, err := src.tenants(ctx, st)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	w := cmd.OutOrStdout()
	if len(tenants) == 0 {
		fmt.Fprintf(w, "%s: no audit records yet (every decision adds one)\n", st)
		return nil
	}
	var broken []error
	for _, t := range tenants {
		var sum audit.Summary
		err := readChain(ctx, st, t, func(r io.Reader) error {
			var err error
			sum, err = audit.Verify(r)
			return err
		})
		var ve *audit.VerifyError
		switch {
		case errors.As(err, &ve):
			broken = append(broken, fmt.Errorf("%s, %s: audit chain is NOT intact at its record %d (seq %d): %s", st, tenantName(t), ve.Line, ve.Seq, ve.Reason))
		case err != nil:
			return &exitError{code: 2, err: err}
		case sum.Records == 0:
			fmt.Fprintf(w, "%s: no records\n", tenantName(t))
		default:
			fmt.Fprintf(w, "%s: intact, %d records (%s … %s)\nhead %s\n", tenantName(t), sum.Records, sum.First, sum.Last, sum.Head)
		}
	}
	if len(broken) > 0 {
		return &exitError{code: 1, err: errors.Join(broken...)}
	}
	return nil
}

// exportStore writes the chosen tenants' chains to w, tenant by tenant.
func exportStore(ctx context.Context, w io.Writer, src *chainSource, st store.State, opts audit.ExportOptions) (int, error) {
	tenants, err := src.tenants(ctx, st)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, t := range tenants {
		err := readChain(ctx, st, t, func(r io.Reader) error {
			n, err := audit.ExportReader(w, r, opts)
			total += n
			return err
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
