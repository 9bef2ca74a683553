// Package pin defends the tool catalogue against rug pulls: a server that
// ships a harmless tool, gets approved, then silently changes it.
//
// On first sight each tool's definition is pinned: a SHA-256 over a
// canonical encoding of what the model sees (name, title, description, input
// and output schemas, annotations) plus the server's instructions, keyed by
// the server's identity (its name and its command or URL). A tool whose
// definition is new and clean is trusted on first use; one whose detectors
// (internal/detect) raise a high-severity finding is quarantined. When a
// pinned definition changes — on the next launch, or after
// notifications/tools/list_changed — the changed tool is withheld until a
// person approves it with `weir pins approve`. A tool renamed to dodge its
// pin is a new tool and goes through the detectors again.
//
// The relay calls [Check] on every tools/list response and withholds what
// it says; the CLI lists, diffs, approves and resets pins. Pins live in the
// state store.
package pin
