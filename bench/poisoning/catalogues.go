package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/weir-sec/weir/internal/detect"
	"github.com/weir-sec/weir/internal/policy/policyfile"
)

// allAtOnce lists every catalogue of dir (testdata/catalogues) with every
// other catalogued server configured alongside, the most crowded setup a
// user could have, and reports the definitions caught (withheld, or a
// finding of medium or more) as false positives: none of them is
// poisoned. It returns how many were caught and how many were listed.
func allAtOnce(dir string, w io.Writer) (caught, total int, err error) {
	withheld := 0
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return 0, 0, err
	}
	type catalogue struct {
		Server string        `json:"server"`
		Tools  []detect.Tool `json:"tools"`
	}
	var cats []catalogue
	names := map[string][]string{}
	for _, f := range files {
		if filepath.Base(f) == "labels.json" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, 0, err
		}
		var c catalogue
		if err := json.Unmarshal(data, &c); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", f, err)
		}
		cats = append(cats, c)
		for _, t := range c.Tools {
			names[c.Server] = append(names[c.Server], t.Name)
		}
	}
	pol, err := policyfile.Resolve("", "")
	if err != nil {
		return 0, 0, err
	}
	slices.SortFunc(cats, func(a, b catalogue) int { return cmp.Compare(a.Server, b.Server) })
	for _, c := range cats {
		others := map[string][]string{}
		for srv, ns := range names {
			if srv != c.Server {
				others[srv] = ns
			}
		}
		for i, v := range judgeList(context.Background(), pol, c.Server, c.Tools, others) {
			total++
			if v.Caught {
				caught++
				state := "warned"
				if v.Withheld {
					withheld++
					state = "WITHHELD"
				}
				fmt.Fprintf(w, "  %s/%s (%s): %s\n", c.Server, c.Tools[i].Name, state, v.Findings)
			}
		}
	}
	fmt.Fprintf(w, "catalogues, every server configured alongside every other: %d of %d definitions flagged, %d withheld (%d servers)\n", caught, total, withheld, len(cats))
	return caught, total, nil
}
