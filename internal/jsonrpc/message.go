package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The go-sdk's wire types, re-exported so the rest of Weir names one package.
type (
	ID       = sdk.ID
	Message  = sdk.Message
	Request  = sdk.Request
	Response = sdk.Response
	Error    = sdk.Error
)

// JSON-RPC error codes. The standard ones come from the specification; the
// server-error range (-32000 to -32099) holds Weir's own.
const (
	CodeParseError     = sdk.CodeParseError
	CodeInvalidRequest = sdk.CodeInvalidRequest
	CodeMethodNotFound = sdk.CodeMethodNotFound
	CodeInvalidParams  = sdk.CodeInvalidParams
	CodeInternalError  = sdk.CodeInternalError

	// CodeServerUnavailable answers a request the MCP server cannot answer
	// because it exited or closed its output.
	CodeServerUnavailable = -32001
	// CodeMessageTooLarge answers a message over the size limit.
	CodeMessageTooLarge = -32002
	// CodeBadServerMessage answers a request whose response from the MCP
	// server could not be relayed (oversized or malformed).
	CodeBadServerMessage = -32003
)

// BadMessageError is returned by Parse for a line that is not a JSON-RPC
// message. Code is the JSON-RPC error code to answer with, and ID the raw id
// if one could be recovered (so the sender's request still gets its answer).
type BadMessageError struct {
	Code   int
	ID     []byte
	Reason string
}

func (e *BadMessageError) Error() string { return e.Reason }

// Parse classifies one line. It returns a *Request (call or notification)
// or a *Response, or a *BadMessageError saying why the line is not a
// message. Params, Result and Error data alias line.
//
// It reads the envelope with exact member names and refuses duplicates
// (see ErrDuplicateKey), refuses values nested past MaxDepth (code
// CodeInvalidRequest, with the id when the top-level id is readable), and
// accepts what the go-sdk's DecodeMessage accepts otherwise: this is the
// relay's hot path, so it validates once and does not copy.
func Parse(line []byte) (Message, error) {
	m, _, err := ParseRaw(line)
	return m, err
}

// ParseRaw is Parse that also returns the raw value of the message's id, a
// slice of line (nil when it has none): the relay swaps ids with
// ReplaceValue, without scanning a large message again to find it.
func ParseRaw(line []byte) (Message, []byte, error) {
	var (
		version, method, params, result, errv, id []byte
		hasMethod                                 bool
	)
	// One pass validates the line, bounds its depth and reads the
	// envelope's members (see validMembers); nothing recurses, so a deep
	// line costs no stack.
	end, err := validMembers(line, MaxDepth-1, unique(func(name string, v []byte) error {
		if err := caseVariant(name, envelopeMembers); err != nil {
			return err
		}
		switch name {
		case "jsonrpc":
			version = v
		case "method":
			method, hasMethod = v, true
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			errv = v
		case "id":
			id = v
		}
		return nil
	}))
	if err == nil && SkipSpace(line, end) < len(line) {
		err = errSyntax
	}
	if err != nil {
		// diagnose checks the depth and validity of the whole line first.
		return nil, nil, diagnose(line, err)
	}
	if string(version) != `"2.0"` {
		return nil, nil, diagnose(line, fmt.Errorf("invalid message version tag %s; expected \"2.0\"", orMissing(version)))
	}
	var mid ID
	if len(id) > 0 {
		if mid, err = ParseID(id); err != nil {
			return nil, nil, diagnose(line, err)
		}
	}
	if hasMethod {
		var m string
		if err := json.Unmarshal(method, &m); err != nil {
			return nil, nil, diagnose(line, fmt.Errorf("method is not a string"))
		}
		return &Request{ID: mid, Method: m, Params: nullable(params)}, id, nil
	}
	if !mid.IsValid() {
		return nil, nil, diagnose(line, errors.New("a response needs an id"))
	}
	resp := &Response{ID: mid, Result: nullable(result)}
	if len(errv) > 0 && string(errv) != "null" {
		var we Error
		if err := json.Unmarshal(errv, &we); err != nil {
			return nil, nil, diagnose(line, fmt.Errorf("bad error object: %w", err))
		}
		resp.Error = &we
	}
	return resp, id, nil
}

// oneExactID reports whether a valid envelope has exactly one member whose
// name is "id" in any case, and that one is spelled "id": then a message
// refused for another member's ambiguity can still be answered under it.
func oneExactID(obj []byte) bool {
	n, exact := 0, false
	_ = EachMember(obj, func(name string, _ []byte) error {
		if strings.EqualFold(name, "id") {
			n++
			exact = name == "id"
		}
		return nil
	})
	return n == 1 && exact
}

// envelopeMembers are the members of a JSON-RPC envelope. One written in
// another case ("Method") is refused: a Go peer decoding the envelope into
// a struct would read it as the real one, and Weir, reading names exactly,
// would not — a call Weir took for a response would run unjudged.
var envelopeMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}

func nullable(v []byte) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	return v
}

func orMissing(v []byte) string {
	if len(v) == 0 {
		return "(missing)"
	}
	return string(v)
}

func diagnose(line []byte, cause error) *BadMessageError {
	trimmed := bytes.TrimSpace(line)
	if errors.Is(cause, errTooDeep) || TooDeep(trimmed) {
		// Refused before parsing, valid or not: the parsers recurse per
		// level. The envelope scanner does not, and holds O(1) state.
		var sc envelopeScanner
		sc.feed(trimmed)
		return &BadMessageError{Code: CodeInvalidRequest, ID: sc.id(), Reason: fmt.Sprintf("invalid request: %v", errTooDeep)}
	}
	if !Valid(trimmed) {
		// Recover the id where one can be read, so a cut-off or damaged
		// request (or response) still gets matched to its answer.
		var sc envelopeScanner
		sc.feed(trimmed)
		return &BadMessageError{Code: CodeParseError, ID: sc.id(), Reason: "parse error: the message is not valid JSON"}
	}
	switch trimmed[0] {
	case '[':
		return &BadMessageError{Code: CodeInvalidRequest, Reason: "invalid request: JSON-RPC batches are not supported by MCP; send one message per line"}
	case '{':
	default:
		return &BadMessageError{Code: CodeInvalidRequest, Reason: "invalid request: a JSON-RPC message must be a JSON object"}
	}
	var sc envelopeScanner
	sc.feed(trimmed)
	id := sc.id()
	if IsAmbiguous(cause) && !oneExactID(trimmed) {
		id = nil // which id is meant is exactly what is ambiguous
	}
	return &BadMessageError{
		Code:   CodeInvalidRequest,
		ID:     id,
		Reason: fmt.Sprintf("invalid request: %v", cause),
	}
}

// IsCall reports whether m is a request that expects a response.
func IsCall(m Message) bool {
	r, ok := m.(*Request)
	return ok && r.ID.IsValid()
}

// EncodeID returns the JSON encoding of an id, for answers Weir originates.
// It equals the client's id as a JSON value (ids are integers or strings).
func EncodeID(id ID) []byte {
	b, err := json.Marshal(id.Raw())
	if err != nil {
		return []byte("null")
	}
	return b
}

// ParseID parses a raw JSON id.
func ParseID(raw []byte) (ID, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return ID{}, fmt.Errorf("bad id %q: %w", raw, err)
	}
	return sdk.MakeID(v)
}

// ErrorResponse encodes an error response for the request with the raw id
// (nil means null, for a message whose id could not be read).
func ErrorResponse(rawID []byte, code int, message string) []byte {
	if len(rawID) == 0 {
		rawID = []byte("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(rawID)
	b.WriteString(`,"error":{"code":`)
	fmt.Fprintf(&b, "%d", code)
	b.WriteString(`,"message":`)
	writeString(&b, message)
	b.WriteString("}}")
	return b.Bytes()
}

// ResultResponse encodes a success response carrying result, which must be
// valid JSON.
func ResultResponse(rawID []byte, result []byte) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(rawID)
	b.WriteString(`,"result":`)
	b.Write(result)
	b.WriteString("}")
	return b.Bytes()
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
