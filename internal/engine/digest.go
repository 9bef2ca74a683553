package engine

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
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
	Len    int     `json:"len"`
	Prints Hashes  `json:"prints,omitempty"`
	Tokens []Sized `json:"tokens,omitempty"`
	Idents []Sized `json:"idents,omitempty"`
}

// Sized is a keyed digest of a token or identifier and its length.
type Sized struct {
	D Hash `json:"d"`
	N int  `json:"n"`
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

func (hs Hashes) MarshalJSON() ([]byte, error) {
	b := make([]byte, 8*len(hs))
	for i, h := range hs {
		binary.LittleEndian.PutUint64(b[8*i:], h)
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

func (hs *Hashes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%8 != 0 {
		return errors.New("fingerprints are base64 of 8-byte hashes")
	}
	out := make(Hashes, len(b)/8)
	for i := range out {
		out[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	*hs = out
	return nil
}

// DigestArgs reads a call's arguments into the digest the flow checks
// decide from: every string leaf expanded into its decoded views, each view
// fingerprinted, its tokens and identifiers digested; and the joined edges
// of consecutive strings.
func DigestArgs(h *fingerprint.Hasher, args json.RawMessage) *ArgDigest {
	dg := &ArgDigest{read: true, NamesPath: namesPath(args), NamesDestination: namesDestination(args)}
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
				v.Tokens = append(v.Tokens, Sized{Hash(h.Digest(tok)), len(tok)})
			})
			fingerprint.Identifiers(text, func(kind fingerprint.IdentKind, canon string) {
				if len(via) == 0 && path != "" {
					dg.addressee(kind, canon)
				}
				v.Idents = append(v.Idents, Sized{Hash(identDigest(h, kind, canon)), len(canon)})
			})
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
	dg.Undecoded = uniqueSorted(dg.Undecoded)
	dg.domains, dg.hosts = uniqueSorted(dg.domains), uniqueSorted(dg.hosts)
	return dg
}
