// Package fingerprint holds Weir's content-attribution primitives: it lets
// the engine notice that a sink call's arguments carry text the agent read
// from a private tool result, even when the agent re-encoded it, without
// Weir ever storing that text.
//
// # Three primitives
//
// Prints are winnowed fingerprints of long text. The text is normalised
// (lowercased, everything but letters and digits dropped, see Normalize),
// every K-byte k-gram is hashed with a keyed Rabin–Karp polynomial, and the
// minimum of every window of W hashes is kept. Two texts that share a run
// of K+W−1 = 35 normalised bytes share at least one print, whatever
// surrounds the run; reformatting, re-quoting or re-wrapping the text does
// not change its prints.
//
// Tokens finds short high-entropy values that prints miss because they are
// shorter than 35 bytes: API keys, passwords, tokens, account and card
// numbers. Each is digested whole with Hasher.Digest and compared exactly.
//
// Expand turns a sink argument into views: the argument itself and every
// decoding of it, nested up to four deep, so that base64 of a private
// document fingerprints like the document. It peels the alphabets (URL,
// base64 in both alphabets, base32, hex), and undoes what a model can do
// to text in its head or with an escape: Caesar shifts and ROT13,
// reversal, leetspeak, letters spaced out or interleaved with invisible
// characters, JSON and other backslash escapes, HTML entities,
// quoted-printable, punycode, NFKC compatibility forms, look-alike letters
// of other scripts, ASCII hidden in tag characters or variation
// selectors, and data split across the labels of a host name or the
// segments and query of a URL. Each rewrite is tried only where a cheap
// test of the text's shape says it can apply; the Caesar shift and the
// reversal are recognised by how English the letter pairs read, against
// a table of English letter-pair frequencies (english_table.go, made by
// gen_english.go). It also reports whether it decoded everything it
// could: an argument can hold more encoded text than the bounds below
// allow.
//
// # Data flow
//
// The engine calls this package; flow.Observation stores its outputs.
//
//	private result text ──Prints──▶ SortUnique ──▶ Observation.Prints
//	                    ──Tokens──▶ Digest ──▶ SortUnique ──▶ Observation.Digests
//
//	sink argument ──Expand──▶ each View.Text ──Prints──▶ Session.PrintSources
//	                                         ──Tokens──▶ Digest ──▶ Session.DigestSources
//	              ──Expand's result──▶ false: treat the argument as private
//
// A print or digest of a sink argument that some observation also holds
// attributes the argument to that observation's source; View.Via tells the
// audit log and the block reason how the agent disguised it ("base64,
// hex", "rot13", "base64, reversed"). The same functions run on both
// sides, which is what makes a match meaningful.
//
// # Keys and what is stored
//
// All hashes are keyed by the per-install secret given to NewHasher: the
// Rabin–Karp base, the output finaliser, the token digest key and the audit
// key are each derived from it with HMAC-SHA256 under their own label.
// Without the key a stored print or digest cannot be recomputed, so it
// cannot be tested against guessed text, and values from two installs do
// not compare. Only these 64-bit values (and Hasher.Keyed strings in audit
// records) ever leave the package; no text does.
//
// # Cost
//
// Prints runs in one pass over the text with constant scratch memory
// (pooled), at a few nanoseconds per byte. Expand is bounded to 64 views,
// each at most 2×len(s)+64 bytes, and 8×len(s)+64 KiB decoded bytes per
// argument, so a hostile argument cannot make the engine fingerprint
// unbounded text. Besides decoding, each view costs one more pass of
// table lookups (about the cost of Prints) that decides which rewrites
// to try; a rewrite that changes a few places of a long view yields
// those places, not a copy of the view; and a chain holds at most two
// rewrites, so that ordinary prose, code, JSON and images, which may pass
// a test or two, make a few small views at most. A Hasher is safe for
// concurrent use; make one per process and share it.
//
// # When the bounds are reached
//
// Expand spends its budget one depth at a time (breadth first), and within
// a depth on the longest encoded runs first: every candidate run is
// decoded and tested, decodings that are binary noise or repeat a view
// cost nothing, and the rest become views in order of run length, so
// decoy runs in front of a payload do not push it out unless they are at
// least as long and there are more of them than the bound. A decoding
// left out because the views or the bytes ran out makes the expansion
// incomplete, and Expand returns false: the caller must treat the
// undecoded remainder as if it could hold anything, and Weir decides as
// if it were private. So is a rewrite left out for being longer than a
// view may be. The depth limit is a design choice, not a budget: views
// four decodings deep are not decoded further, and that does not make an
// expansion incomplete; neither does a rewrite whose test did not pass,
// nor a chain already two rewrites long.
//
// # What is not undone
//
// The tests are heuristics, and some disguises pass them: a Caesar shift
// or reversal of text that is not English-like (a random key, most
// non-Latin scripts) or shorter than about 20 letters; a shift of
// leetspeak (the 1 of l and i is read by English letter pairs, and
// shifted text reads as nothing); leetspeak of an encoding (4 and a are
// both base64); a shift or reversal applied on top of an escape; case
// games on a token (prints ignore case, digests of tokens do not); and
// anything three rewrites deep.
package fingerprint
