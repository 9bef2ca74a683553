package engine

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weir-sec/weir/internal/fingerprint"
)

// ArgDigest is what the flow checks read from a call's arguments, as keyed
// hashes and lengths: every decoded view of every string, fingerprinted,
// with its tokens' and identifiers' digests. [DigestArgs] computes it from
// the arguments; [decideCall] decides from it, so a recorded call can be
// decided again, against the session as it was, without its values (DESIGN
// rule 2: nothing here is a value or can be turned back into one without
// the install's key and a guess at the text).
type ArgDigest struct {
	Views []ViewDigest `json:"views,omitempty"`
	// Undecoded lists the argument paths whose decoded views were cut
	// short by the decoder's bound.
	Undecoded []string `json:"undecoded,omitempty"`
	// NamesPath and NamesDestination say whether an argument is named as
	// a path, and whether one names a recipient, host, channel or account
	// (see namesPath, namesDestination).
	NamesPath        bool `json:"names_path,omitempty"`
	NamesDestination bool `json:"names_destination,omitempty"`
	// Err says why the arguments could not be read ("" when they could).
	Err string `json:"err,omitempty"`
	// Unread marks a digest without views (see DigestNames): the call was
	// decided without reading what its arguments carry.
	Unread bool `json:"unread,omitempty"`
	// Evidence is the version of the steering evidence its views hold
	// (ViewDigest.Words, Numbers): one recorded by an earlier Weir, whose
	// views hold less, has a lower one, and its call counts as steered
	// (see steered).
	Evidence int `json:"evidence,omitempty"`

	// domains and hosts are the e-mail domains and URL hosts in the
	// arguments, for predicates. They are values, so they are never
	// recorded: a recorded digest has none.
	domains, hosts []string
	// read reports that the digest was made from arguments (not decoded
	// from a record), so domains and hosts are known.
	read bool
}

// ViewDigest is one reading of one argument string: the string itself or
// a decoding of it.
type ViewDigest struct {
	// Path is the argument's JSON path; "" for the joined edges of two
	// consecutive strings (text split across fields).
	Path string `json:"path,omitempty"`
	// Via names the decodings that produced the view, outermost first.
	Via []string `json:"via,omitempty"`
	// Exact: tokens and identifiers were digested (not for edges).
	Exact bool `json:"exact,omitempty"`
	// Payload is false for an argument that is only an address (see
	// isAddress): it tells where data goes, it carries none.
	Payload bool `json:"payload,omitempty"`
	// Len is the view's length without surrounding space, which says
	// whether a token or identifier makes up most of it.
	Len    int    `json:"len"`
	Prints Hashes `json:"prints,omitempty"`
	Tokens Sizes  `json:"tokens,omitempty"`
	Idents Sizes  `json:"idents,omitempty"`
	// Words are the digests of a value's words or pairs of words (see
	// valueWords): what tells whether untrusted content chose it.
	Words Hashes `json:"words,omitempty"`
	// Numbers are the digests of its number-like tokens (see eachNumber).
	Numbers Hashes `json:"numbers,omitempty"`
}

// Sized is a keyed digest of a token or identifier and its length.
type Sized struct {
	D Hash `json:"d"`
	N int  `json:"n"`
}

// Sizes is a list of sized digests. In JSON it is base64 of each hash's
// eight little-endian bytes followed by its length as a uvarint: a
// recording holds thousands of them, and a list of objects costs several
// times the bytes and the time to write (an array of {"d","n"} objects,
// the earlier form, is still read).
type Sizes []Sized

func (ss Sizes) MarshalJSON() ([]byte, error) { return quotedBase64(ss.pack()), nil }

func (ss Sizes) pack() []byte {
	if len(ss) == 0 {
		return nil
	}
	b := make([]byte, 0, 10*len(ss))
	for _, s := range ss {
		b = binary.LittleEndian.AppendUint64(b, uint64(s.D))
		b = binary.AppendUvarint(b, uint64(s.N))
	}
	return b
}

func unpackSizes(b []byte) (Sizes, error) {
	var out Sizes
	for len(b) > 0 {
		if len(b) < 9 {
			return nil, errors.New("sized digests are base64 of hashes and lengths: the last one is cut short")
		}
		d := binary.LittleEndian.Uint64(b)
		n, k := binary.Uvarint(b[8:])
		if k <= 0 || n > 1<<31 {
			return nil, errors.New("sized digests are base64 of hashes and lengths: a length is unreadable")
		}
		out = append(out, Sized{Hash(d), int(n)})
		b = b[8+k:]
	}
	return out, nil
}

func (ss *Sizes) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '[' {
		var old []Sized
		if err := json.Unmarshal(data, &old); err != nil {
			return err
		}
		*ss = old
		return nil
	}
	var b []byte
	if err := json.Unmarshal(data, &b); err != nil {
		return errors.New("sized digests are base64 of hashes and lengths")
	}
	out, err := unpackSizes(b)
	if err != nil {
		return err
	}
	*ss = out
	return nil
}

// Hash is one keyed 64-bit hash. In JSON it is a string of 16 hex digits:
// a JSON number would lose its low bits in most readers.
type Hash uint64

func (h Hash) MarshalJSON() ([]byte, error) {
	var b [18]byte
	b[0], b[17] = '"', '"'
	const digits = "0123456789abcdef"
	for i := 0; i < 16; i++ {
		b[16-i] = digits[(h>>(4*i))&0xf]
	}
	return b[:], nil
}

func (h *Hash) UnmarshalJSON(data []byte) error {
	if len(data) != 18 || data[0] != '"' || data[17] != '"' {
		return errors.New("a hash is 16 hex digits in quotes")
	}
	var v uint64
	for _, c := range data[1:17] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return errors.New("a hash is 16 hex digits in quotes")
		}
	}
	*h = Hash(v)
	return nil
}

// Hashes is a list of fingerprints. In JSON it is base64 of their
// little-endian bytes, a quarter the size of a list of numbers.
type Hashes []uint64

func (hs Hashes) MarshalJSON() ([]byte, error) { return quotedBase64(hs.pack()), nil }

func (hs Hashes) pack() []byte {
	if len(hs) == 0 {
		return nil
	}
	b := make([]byte, 8*len(hs))
	for i, h := range hs {
		binary.LittleEndian.PutUint64(b[8*i:], h)
	}
	return b
}

func unpackHashes(b []byte) (Hashes, error) {
	if len(b)%8 != 0 {
		return nil, errors.New("fingerprints are base64 of 8-byte hashes")
	}
	if len(b) == 0 {
		return nil, nil
	}
	out := make(Hashes, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return out, nil
}

// quotedBase64 is b in standard base64 as a JSON string (the alphabet
// needs no escapes).
func quotedBase64(b []byte) []byte {
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"')
}

func (hs *Hashes) UnmarshalJSON(data []byte) error {
	var b []byte
	if err := json.Unmarshal(data, &b); err != nil {
		return errors.New("fingerprints are base64 of 8-byte hashes")
	}
	out, err := unpackHashes(b)
	if err != nil {
		return err
	}
	*hs = out
	return nil
}

// DigestWire is an ArgDigest in the form a recording stores: its JSON is
// the same as the digest's, but every list of hashes is already packed
// into bytes, which encoding/json writes as base64 directly. (The output
// of a MarshalJSON method is scanned again by encoding/json, at about
// 100 MB/s: for a recording of a 4 KB argument that doubled its cost.)
type DigestWire struct {
	Views            []ViewWire `json:"views,omitempty"`
	Undecoded        []string   `json:"undecoded,omitempty"`
	NamesPath        bool       `json:"names_path,omitempty"`
	NamesDestination bool       `json:"names_destination,omitempty"`
	Err              string     `json:"err,omitempty"`
	Unread           bool       `json:"unread,omitempty"`
	Evidence         int        `json:"evidence,omitempty"`
}

// ViewWire is a ViewDigest in the form a recording stores.
type ViewWire struct {
	Path    string      `json:"path,omitempty"`
	Via     []string    `json:"via,omitempty"`
	Exact   bool        `json:"exact,omitempty"`
	Payload bool        `json:"payload,omitempty"`
	Len     int         `json:"len"`
	Prints  []byte      `json:"prints,omitempty"`
	Tokens  packedSizes `json:"tokens,omitempty"`
	Idents  packedSizes `json:"idents,omitempty"`
	Words   []byte      `json:"words,omitempty"`
	Numbers []byte      `json:"numbers,omitempty"`
}

// packedSizes are sized digests packed as Sizes packs them. It reads the
// earlier form too, an array of {"d","n"} objects.
type packedSizes []byte

func (p *packedSizes) UnmarshalJSON(data []byte) error {
	var ss Sizes
	if err := ss.UnmarshalJSON(data); err != nil {
		return err
	}
	*p = ss.pack()
	return nil
}

// Wire is a in the form a recording stores.
func (a *ArgDigest) Wire() *DigestWire {
	w := &DigestWire{Undecoded: a.Undecoded, NamesPath: a.NamesPath, NamesDestination: a.NamesDestination, Err: a.Err, Unread: a.Unread, Evidence: a.Evidence}
	for _, v := range a.Views {
		w.Views = append(w.Views, ViewWire{Path: v.Path, Via: v.Via, Exact: v.Exact, Payload: v.Payload, Len: v.Len,
			Prints: v.Prints.pack(), Tokens: v.Tokens.pack(), Idents: v.Idents.pack(), Words: v.Words.pack(), Numbers: v.Numbers.pack()})
	}
	return w
}

// Digest is the digest w stores; an error says which view is damaged.
func (w *DigestWire) Digest() (*ArgDigest, error) {
	a := &ArgDigest{Undecoded: w.Undecoded, NamesPath: w.NamesPath, NamesDestination: w.NamesDestination, Err: w.Err, Unread: w.Unread, Evidence: w.Evidence}
	for i, v := range w.Views {
		d := ViewDigest{Path: v.Path, Via: v.Via, Exact: v.Exact, Payload: v.Payload, Len: v.Len}
		var err error
		if d.Prints, err = unpackHashes(v.Prints); err == nil {
			if d.Tokens, err = unpackSizes(v.Tokens); err == nil {
				if d.Idents, err = unpackSizes(v.Idents); err == nil {
					if d.Words, err = unpackHashes(v.Words); err == nil {
						d.Numbers, err = unpackHashes(v.Numbers)
					}
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("view %d: %w", i, err)
		}
		a.Views = append(a.Views, d)
	}
	return a, nil
}

// DigestArgs reads a call's arguments into the digest the flow checks
// decide from: every string leaf expanded into its decoded views, each view
// fingerprinted, its tokens and identifiers digested; and the joined edges
// of consecutive strings.
func DigestArgs(h *fingerprint.Hasher, args json.RawMessage) *ArgDigest {
	return DigestCall(h, args, nil)
}

// DigestNames is the part of a digest that costs nothing to compute:
// whether the arguments name a path or a destination, and whether they can
// be read at all, with no views (Unread). A recording keeps it for a call
// whose decision read nothing more: a tool that is not a sink, in a session
// with nothing to attribute. Expanding and fingerprinting every argument
// of every such call cost a busy proxy a sixth of its CPU.
func DigestNames(args json.RawMessage) *ArgDigest {
	dg := &ArgDigest{read: true, Unread: true, NamesPath: namesPath(args), NamesDestination: namesDestination(args)}
	if _, err := stringLeaves(args); err != nil {
		dg.Err = err.Error()
	}
	return dg
}

// DigestCall is DigestArgs with one more view when earlier is not nil:
// the call's payload joined to what its sink tool received before (see
// Earlier), for a leak split across calls.
func DigestCall(h *fingerprint.Hasher, args json.RawMessage, earlier *Earlier) *ArgDigest {
	dg := &ArgDigest{read: true, Evidence: evidenceVersion, NamesPath: namesPath(args), NamesDestination: namesDestination(args)}
	leaves, err := stringLeaves(args)
	if err != nil {
		dg.Err = err.Error()
		return dg
	}
	view := func(path, text string, via []fingerprint.Encoding, exact, payload bool) {
		v := ViewDigest{Path: path, Exact: exact, Payload: payload, Len: len(strings.TrimSpace(text))}
		for _, e := range via {
			v.Via = append(v.Via, e.String())
		}
		v.Prints = h.Prints(nil, text)
		if exact {
			fingerprint.Tokens(text, func(tok string) {
				// Results keep the digest of the folded token; the exact
				// one is for results an earlier Weir kept.
				f := fingerprint.FoldToken(tok)
				v.Tokens = append(v.Tokens, Sized{Hash(h.Digest(f)), len(tok)})
				if f != tok {
					v.Tokens = append(v.Tokens, Sized{Hash(h.Digest(tok)), len(tok)})
				}
			})
			fingerprint.Identifiers(text, func(kind fingerprint.IdentKind, canon string) {
				if len(via) == 0 && path != "" {
					dg.addressee(kind, canon)
				}
				v.Idents = append(v.Idents, Sized{Hash(identDigest(h, kind, canon)), len(canon)})
			})
			if path != "" {
				v.Words = valueWords(h, text)
				v.Numbers = valueNumbers(h, text)
			}
		}
		dg.Views = append(dg.Views, v)
	}
	addr := make([]bool, len(leaves))
	for i, leaf := range leaves {
		addr[i] = isAddress(leaf.value)
		complete := fingerprint.Expand(leaf.value, func(v fingerprint.View) {
			view(leaf.path, v.Text, v.Via, true, !addr[i])
		})
		if !complete && !addr[i] {
			dg.Undecoded = append(dg.Undecoded, leaf.path)
		}
		if i > 0 && !addr[i] && !addr[i-1] {
			// Text split across two fields: only windows that straddle the
			// boundary are new, so just the two edges, joined.
			view("", edges(leaves[i-1].value, leaf.value), nil, false, true)
		}
	}
	dg.Views = append(dg.Views, splitViews(h, leaves, earlier)...)
	dg.Undecoded = uniqueSorted(dg.Undecoded)
	dg.domains, dg.hosts = uniqueSorted(dg.domains), uniqueSorted(dg.hosts)
	return dg
}
