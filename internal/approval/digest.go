package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/fingerprint"
	"github.com/weir-sec/weir/internal/jsonrpc"
)

// ErrAmbiguous: the arguments repeat a member, so a server could read them
// otherwise than the person approving them saw them; no approval binds
// such a call.
var ErrAmbiguous = errors.New("the arguments repeat a member, so they cannot be approved as one call")

// Canonical returns the canonical form of a call's arguments: objects with
// their members sorted, strings re-escaped, numbers as written, no space.
// Two argument texts a server reads alike get the same form, with one
// exception on the strict side: 1 and 1.0 differ. A repeated member is
// ErrAmbiguous. Empty or null arguments are {}.
func Canonical(args json.RawMessage) ([]byte, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return []byte("{}"), nil
	}
	if !jsonrpc.Valid(args) {
		return nil, errors.New("the arguments are not valid JSON")
	}
	type node struct {
		obj  map[string]*node
		keys []string
		fold map[string]string // folded member name → the name as written
		arr  []*node
		raw  []byte
		str  *string
		isA  bool
	}
	var stack []*node
	var root *node
	var key []string // pending member name per open object
	put := func(n *node) error {
		if len(stack) == 0 {
			root = n
			return nil
		}
		top := stack[len(stack)-1]
		if top.isA {
			top.arr = append(top.arr, n)
			return nil
		}
		k := key[len(key)-1]
		if _, dup := top.obj[k]; dup {
			return fmt.Errorf("%w (%q)", ErrAmbiguous, k)
		}
		// A server decoding into a struct reads "To" as "to": members
		// that differ only in case are as ambiguous as repeated ones.
		f := jsonrpc.FoldKey(k)
		if o, dup := top.fold[f]; dup {
			return fmt.Errorf("%w (%q and %q)", ErrAmbiguous, o, k)
		}
		top.obj[k] = n
		top.fold[f] = k
		top.keys = append(top.keys, k)
		return nil
	}
	err := jsonrpc.Walk(args, func(tok jsonrpc.Token, text string, raw []byte) error {
		switch tok {
		case jsonrpc.ObjectStart:
			stack = append(stack, &node{obj: map[string]*node{}, fold: map[string]string{}})
			key = append(key, "")
		case jsonrpc.ArrayStart:
			stack = append(stack, &node{isA: true, arr: []*node{}})
			key = append(key, "")
		case jsonrpc.ObjectEnd, jsonrpc.ArrayEnd:
			n := stack[len(stack)-1]
			stack, key = stack[:len(stack)-1], key[:len(key)-1]
			return put(n)
		case jsonrpc.Key:
			key[len(key)-1] = text
		case jsonrpc.Scalar:
			if raw[0] == '"' {
				s, err := jsonrpc.Unquote(raw)
				if err != nil {
					return err
				}
				return put(&node{str: &s})
			}
			return put(&node{raw: raw})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	var write func(n *node)
	write = func(n *node) {
		switch {
		case n.str != nil:
			q, _ := json.Marshal(*n.str)
			b.Write(q)
		case n.isA:
			b.WriteByte('[')
			for i, e := range n.arr {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		case n.obj != nil:
			slices.Sort(n.keys)
			b.WriteByte('{')
			for i, k := range n.keys {
				if i > 0 {
					b.WriteByte(',')
				}
				q, _ := json.Marshal(k)
				b.Write(q)
				b.WriteByte(':')
				write(n.obj[k])
			}
			b.WriteByte('}')
		default:
			b.Write(n.raw)
		}
	}
	write(root)
	return b.Bytes(), nil
}

// Digest is the binding of an approval: a keyed hash of the server, the
// tool and the canonical arguments. It is computed under the install key,
// so it says nothing about the arguments to anyone without it.
func Digest(h *fingerprint.Hasher, server, tool string, args json.RawMessage) (string, error) {
	c, err := Canonical(args)
	if err != nil {
		return "", err
	}
	return h.Keyed("weir/approval/call\x00" + server + "\x00" + tool + "\x00" + string(c)), nil
}

// DestKey is the key of "approve for this session": a keyed hash of the
// server, the tool and the call's SessionScope, so a session grant covers later
// calls of the tool to the same recipient, host, channel, account or path,
// and no other.
func DestKey(h *fingerprint.Hasher, server, tool string, dests []string) string {
	var b strings.Builder
	b.WriteString("weir/approval/dest")
	for _, x := range append([]string{server, tool}, dests...) {
		// Length-prefixed: no value, whatever it holds, reads as two.
		fmt.Fprintf(&b, "\x00%d:%s", len(x), x)
	}
	return h.Keyed(b.String())
}
