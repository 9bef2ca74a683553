package jsonrpc

import (
	"errors"
	"fmt"
	"strings"
)

// ErrCaseVariant reports a member whose name equals a name the reader
// knows but for case ("Method" for "method"). A peer that decodes into a
// Go struct with encoding/json reads it as the known member; one that
// matches names exactly does not. Weir must read what every peer reads, so
// such a message is refused rather than guessed at.
var ErrCaseVariant = errors.New("member name differs from a known member only in case")

// Fields is [Members] for an object whose member names the reader knows:
// besides refusing repeated names (case-folded), it refuses a member whose
// name matches one of known only when case is ignored (ErrCaseVariant).
// Members with other names are passed to fn like the known ones.
func Fields(obj []byte, known []string, fn func(name string, value []byte) error) error {
	return Members(obj, func(name string, v []byte) error {
		if err := caseVariant(name, known); err != nil {
			return err
		}
		return fn(name, v)
	})
}

// caseVariant returns ErrCaseVariant for a name that is one of known but
// for case.
func caseVariant(name string, known []string) error {
	for _, k := range known {
		if name != k && strings.EqualFold(name, k) {
			return fmt.Errorf("%w: %q (want %q)", ErrCaseVariant, name, k)
		}
	}
	return nil
}

// IsAmbiguous reports whether err says a message could be read two ways: a
// repeated member or a case variant of a known one.
func IsAmbiguous(err error) bool {
	return errors.Is(err, ErrDuplicateKey) || errors.Is(err, ErrCaseVariant)
}

// CodeRequestTimeout answers a request the MCP server did not answer
// within the relay's request timeout.
const CodeRequestTimeout = -32004
