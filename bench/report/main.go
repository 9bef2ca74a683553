// Command report writes RESULTS.md from the results files under
// bench/results/ (core.json, agentdojo-*.json, overhead.json) and the
// headline block of README.md between <!-- results:start --> and
// <!-- results:end -->. Nothing in either is typed by hand: every number is
// read from a results file, and each section names the file, machine,
// commit, date and command behind it.
//
//	go run ./bench/report
//	go run ./bench/report --results DIR --out FILE --readme ""   # no README update
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	dir := flag.String("results", "bench/results", "folder of results files")
	out := flag.String("out", "RESULTS.md", "page to write")
	readme := flag.String("readme", "README.md", "README whose results block to regenerate (empty: none)")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*dir, *out, *readme); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(dir, out, readme string) error {
	in, err := load(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, []byte(Results(in)), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	if readme == "" {
		return nil
	}
	data, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	s, err := splice(string(data), Headline(in))
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	if err := os.WriteFile(readme, []byte(s), 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "updated", readme)
	return nil
}

// splice replaces what lies between the markers with block.
func splice(doc, block string) (string, error) {
	i := strings.Index(doc, readmeStart)
	j := strings.Index(doc, readmeEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("no %s … %s block", readmeStart, readmeEnd)
	}
	if strings.Count(doc, readmeStart) != 1 || strings.Count(doc, readmeEnd) != 1 {
		return "", fmt.Errorf("more than one %s … %s block", readmeStart, readmeEnd)
	}
	return doc[:i+len(readmeStart)] + "\n" + block + doc[j:], nil
}
