package audit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Export formats: the records as they are, or as OCSF events.
const (
	FormatJSONL = "jsonl"
	FormatOCSF  = "ocsf"
)

// OCSFVersion is the version of the Open Cybersecurity Schema Framework
// the OCSF export follows (https://schema.ocsf.io/1.8.0/).
const OCSFVersion = "1.8.0"

// ExportOptions say what an export covers and how it is written.
type ExportOptions struct {
	Format  string    // FormatJSONL or FormatOCSF
	Since   time.Time // records from this time on; zero for all
	Version string    // Weir's version, for OCSF metadata.product.version
}

// Export writes the records of files (oldest first, as [Files] lists them)
// since opts.Since to w, one JSON object per line, and returns how many it
// wrote.
//
// FormatJSONL writes each record's line as it is in the log, byte for
// byte, so that an exported record still carries a hash anyone can check
// (see the package documentation). FormatOCSF writes one OCSF event per
// record (see [OCSF]). Neither verifies the chain: `weir audit verify`
// does, and a SIEM that needs the guarantee checks the JSONL lines.
func Export(w io.Writer, files []string, opts ExportOptions) (int, error) {
	return export(w, opts, func(fn func(r *Record, line []byte) error) error {
		return ReadFiles(files, opts.Since, fn)
	})
}

// ExportReader is [Export] for a log read from r, JSON Lines as a log file
// holds them (a state store's chain of one tenant, say).
func ExportReader(w io.Writer, r io.Reader, opts ExportOptions) (int, error) {
	return export(w, opts, func(fn func(r *Record, line []byte) error) error {
		return readRecords(r, "log", opts.Since, fn)
	})
}

func export(w io.Writer, opts ExportOptions, read func(fn func(r *Record, line []byte) error) error) (int, error) {
	var conv func(*Record) (any, error)
	switch opts.Format {
	case FormatJSONL:
	case FormatOCSF:
		conv = func(r *Record) (any, error) { return OCSF(r, opts.Version), nil }
	default:
		return 0, fmt.Errorf("audit: export: unknown format %q (want %s or %s)", opts.Format, FormatJSONL, FormatOCSF)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	n := 0
	err := read(func(r *Record, line []byte) error {
		if conv != nil {
			ev, err := conv(r)
			if err != nil {
				return err
			}
			if line, err = json.Marshal(ev); err != nil {
				return fmt.Errorf("audit: export record %d: %w", r.Seq, err)
			}
		}
		n++
		bw.Write(line)
		return bw.WriteByte('\n')
	})
	if err != nil {
		return n, err
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("audit: export: %w", err)
	}
	return n, nil
}

// OCSF classes and categories used by the export.
const (
	ocsfAPIActivity      = 6003 // API Activity, in Application Activity (6)
	ocsfDetectionFinding = 2004 // Detection Finding, in Findings (2)
)

// OCSFEvent is one OCSF 1.8.0 event: an API Activity (class 6003) for a
// decision that let a message through unflagged, a Detection Finding
// (class 2004) for any other. Field order follows the schema's grouping;
// empty fields are left out. Everything Weir records that OCSF has no
// attribute for is under unmapped, by the audit record's own names.
type OCSFEvent struct {
	ClassUID     int    `json:"class_uid"`
	ClassName    string `json:"class_name"`
	CategoryUID  int    `json:"category_uid"`
	CategoryName string `json:"category_name"`
	ActivityID   int    `json:"activity_id"`
	ActivityName string `json:"activity_name"`
	TypeUID      int    `json:"type_uid"`
	TypeName     string `json:"type_name"`
	Time         int64  `json:"time"`
	SeverityID   int    `json:"severity_id"`
	Severity     string `json:"severity"`
	StatusID     int    `json:"status_id,omitempty"`
	Status       string `json:"status,omitempty"`
	Message      string `json:"message,omitempty"`

	// The Security Control profile: what Weir did about it.
	ActionID      int         `json:"action_id"`
	Action        string      `json:"action"`
	DispositionID int         `json:"disposition_id"`
	Disposition   string      `json:"disposition"`
	IsAlert       bool        `json:"is_alert,omitempty"`
	Policy        *ocsfPolicy `json:"policy,omitempty"`

	Metadata ocsfMetadata `json:"metadata"`

	// API Activity.
	Actor       *ocsfActor     `json:"actor,omitempty"`
	API         *ocsfAPI       `json:"api,omitempty"`
	SrcEndpoint *ocsfEndpoint  `json:"src_endpoint,omitempty"`
	DstEndpoint *ocsfEndpoint  `json:"dst_endpoint,omitempty"`
	Resources   []ocsfResource `json:"resources,omitempty"`

	// Detection Finding.
	FindingInfo *ocsfFindingInfo `json:"finding_info,omitempty"`
	Evidences   []ocsfEvidence   `json:"evidences,omitempty"`

	Unmapped ocsfUnmapped `json:"unmapped"`
}

type ocsfMetadata struct {
	Version          string      `json:"version"`
	Product          ocsfProduct `json:"product"`
	Profiles         []string    `json:"profiles"`
	UID              string      `json:"uid"`
	OriginalTime     string      `json:"original_time"`
	Sequence         int64       `json:"sequence"`
	LogName          string      `json:"log_name"`
	CorrelationUID   string      `json:"correlation_uid,omitempty"`
	OriginalEventUID string      `json:"original_event_uid,omitempty"`
}

type ocsfProduct struct {
	Name       string `json:"name"`
	VendorName string `json:"vendor_name"`
	Version    string `json:"version,omitempty"`
}

type ocsfPolicy struct {
	Name      string `json:"name"`
	UID       string `json:"uid"`
	IsApplied bool   `json:"is_applied"`
	Desc      string `json:"desc,omitempty"`
}

type ocsfActor struct {
	Session ocsfSession `json:"session"`
}

type ocsfSession struct {
	UID string `json:"uid"`
}

type ocsfAPI struct {
	Operation string      `json:"operation"`
	Service   ocsfService `json:"service"`
}

type ocsfService struct {
	Name string `json:"name"`
}

type ocsfEndpoint struct {
	UID     string `json:"uid,omitempty"`
	SvcName string `json:"svc_name,omitempty"`
}

type ocsfResource struct {
	Type   string   `json:"type"`
	Name   string   `json:"name"`
	UID    string   `json:"uid"`
	Labels []string `json:"labels,omitempty"`
}

type ocsfFindingInfo struct {
	UID      string       `json:"uid"`
	Title    string       `json:"title"`
	Desc     string       `json:"desc,omitempty"`
	Types    []string     `json:"types,omitempty"`
	Analytic ocsfAnalytic `json:"analytic"`
}

type ocsfAnalytic struct {
	Name     string `json:"name"`
	UID      string `json:"uid"`
	TypeID   int    `json:"type_id"`
	Type     string `json:"type"`
	Category string `json:"category,omitempty"`
}

type ocsfEvidence struct {
	Actor       *ocsfActor    `json:"actor,omitempty"`
	API         *ocsfAPI      `json:"api,omitempty"`
	SrcEndpoint *ocsfEndpoint `json:"src_endpoint,omitempty"`
	DstEndpoint *ocsfEndpoint `json:"dst_endpoint,omitempty"`
}

// ocsfUnmapped is the audit record's own fields that OCSF has no
// attribute for: labels, shapes, keyed hashes, the chain.
type ocsfUnmapped struct {
	Event      string            `json:"event"`
	Verdict    string            `json:"verdict"`
	Enforced   bool              `json:"enforced"`
	Rule       string            `json:"rule,omitempty"`
	Labels     []string          `json:"labels,omitempty"`
	Sources    []string          `json:"sources,omitempty"`
	Shape      json.RawMessage   `json:"shape,omitempty"`
	Hashes     map[string]string `json:"hashes,omitempty"`
	Prints     int               `json:"prints,omitempty"`
	Approval   string            `json:"approval,omitempty"`
	Channel    string            `json:"channel,omitempty"`
	Answer     string            `json:"answer,omitempty"`
	AnsweredBy string            `json:"answered_by,omitempty"`
	LatencyMS  *int64            `json:"latency_ms,omitempty"`
	Prompts    int               `json:"prompts,omitempty"`
	Declassify string            `json:"declassify,omitempty"`
	Seq        int64             `json:"seq"`
	Prev       string            `json:"prev"`
	Hash       string            `json:"hash"`
}

// OCSF maps one audit record to an OCSF event; version is Weir's, for
// metadata.product.version. The README's "OCSF export" table documents the
// mapping field by field.
func OCSF(r *Record, version string) OCSFEvent {
	v := verdictOf(r)
	ev := OCSFEvent{
		Message: ocsfMessage(r, v),
		Metadata: ocsfMetadata{
			Version:      OCSFVersion,
			Product:      ocsfProduct{Name: "Weir", VendorName: "Weir", Version: version},
			Profiles:     []string{"security_control"},
			UID:          r.Hash,
			OriginalTime: r.Time,
			Sequence:     r.Seq,
			LogName:      "audit.log",
		},
		Unmapped: ocsfUnmapped{
			Event: r.Event, Verdict: r.Verdict, Enforced: r.Enforced, Rule: r.Rule, Labels: r.Labels, Sources: r.Sources,
			Shape: r.Shape, Hashes: r.Hashes, Prints: r.Prints, Approval: r.Approval, Channel: r.Channel, Answer: r.Answer,
			AnsweredBy: r.AnsweredBy, LatencyMS: r.LatencyMS, Prompts: r.Prompts, Declassify: r.Declassify,
			Seq: r.Seq, Prev: r.Prev, Hash: r.Hash,
		},
	}
	if t, ok := RecordTime(r); ok {
		ev.Time = t.UnixMilli()
	}
	ev.SeverityID, ev.Severity = ocsfSeverity(v)
	ev.ActionID, ev.Action, ev.DispositionID, ev.Disposition = ocsfDisposition(r, v)
	if r.Rule != "" {
		ev.Policy = &ocsfPolicy{Name: r.Rule, UID: r.Rule, IsApplied: r.Enforced}
	}

	actor := &ocsfActor{Session: ocsfSession{UID: r.Session}}
	api := &ocsfAPI{Operation: cmpOr(r.Method, r.Event), Service: ocsfService{Name: r.Server}}
	src := &ocsfEndpoint{UID: r.Session}
	dst := &ocsfEndpoint{SvcName: r.Server}
	var resources []ocsfResource
	if r.Tool != "" {
		resources = []ocsfResource{{Type: "MCP tool", Name: r.Tool, UID: r.Server + "/" + r.Tool, Labels: r.Labels}}
	}

	if v == "allow" && r.Event != "approval" {
		ev.ClassUID, ev.ClassName = ocsfAPIActivity, "API Activity"
		ev.CategoryUID, ev.CategoryName = 6, "Application Activity"
		ev.ActivityID, ev.ActivityName = ocsfAPIActivityOf(r)
		ev.StatusID, ev.Status = 1, "Success"
		ev.Actor, ev.API, ev.SrcEndpoint, ev.DstEndpoint, ev.Resources = actor, api, src, dst, resources
	} else {
		ev.ClassUID, ev.ClassName = ocsfDetectionFinding, "Detection Finding"
		ev.CategoryUID, ev.CategoryName = 2, "Findings"
		ev.ActivityID, ev.ActivityName = 1, "Create"
		ev.StatusID, ev.Status = 1, "New"
		if r.Event == "approval" && r.Answer != "" && r.Answer != "pending" {
			// A person's (or Weir's) answer updates the escalation.
			ev.ActivityID, ev.ActivityName = 2, "Update"
			ev.StatusID, ev.Status = 4, "Resolved"
		}
		ev.IsAlert = (r.Enforced && (v == "block" || v == "escalate")) || r.Event == "approval" || r.Event == "definition"
		uid := r.Hash
		if r.Approval != "" {
			uid = "approval:" + r.Approval
		}
		ev.FindingInfo = &ocsfFindingInfo{
			UID:   uid,
			Title: ocsfTitle(r, v),
			Desc:  r.Reason,
			Types: ocsfTypes(r),
			Analytic: ocsfAnalytic{Name: cmpOr(r.Rule, "weir"), UID: cmpOr(r.Rule, "weir"), TypeID: 1, Type: "Rule",
				Category: ruleCategory(r.Rule)},
		}
		ev.Resources = resources
		ev.Evidences = []ocsfEvidence{{Actor: actor, API: api, SrcEndpoint: src, DstEndpoint: dst}}
	}
	ev.TypeUID = ev.ClassUID*100 + ev.ActivityID
	ev.TypeName = ev.ClassName + ": " + ev.ActivityName
	return ev
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ocsfAPIActivityOf is the API Activity activity of an allowed record: a
// listing is a Read; a call or a result is none of Create, Read, Update or
// Delete that Weir could know, so it is Other, named by the event.
func ocsfAPIActivityOf(r *Record) (int, string) {
	switch r.Event {
	case "list", "definition":
		return 2, "Read"
	case "call":
		return 99, "Tool Call"
	case "result":
		return 99, "Tool Result"
	default:
		return 99, cmpOr(r.Event, "Other")
	}
}

// ocsfSeverity maps a verdict to severity_id and its caption.
func ocsfSeverity(v string) (int, string) {
	switch v {
	case "block":
		return 4, "High"
	case "escalate":
		return 3, "Medium"
	case "redact", "warn":
		return 2, "Low"
	default:
		return 1, "Informational"
	}
}

// ocsfDisposition maps what happened to the Security Control profile's
// action_id and disposition_id. A verdict in monitor mode (not enforced)
// changed nothing: Observed, and Detected.
func ocsfDisposition(r *Record, v string) (int, string, int, string) {
	if r.Event == "approval" {
		switch r.Answer {
		case "approved", "approved_session":
			return 1, "Allowed", 8, "Approved"
		case "pending":
			return 4, "Modified", 14, "Delayed"
		default:
			return 2, "Denied", 25, "Rejected"
		}
	}
	if !r.Enforced && v != "allow" {
		return 3, "Observed", 15, "Detected"
	}
	switch v {
	case "block":
		return 2, "Denied", 2, "Blocked"
	case "escalate":
		// Held until a person answers; the approval record says how.
		return 4, "Modified", 14, "Delayed"
	case "redact":
		return 4, "Modified", 11, "Corrected"
	case "warn":
		return 1, "Allowed", 19, "Alert"
	default:
		return 1, "Allowed", 1, "Allowed"
	}
}

// ocsfTitle is a finding's one-line title.
func ocsfTitle(r *Record, v string) string {
	what := r.Server
	if r.Tool != "" {
		what += "/" + r.Tool
	}
	if r.Event == "approval" {
		return fmt.Sprintf("escalated call to %s: %s via %s", what, strings.ReplaceAll(cmpOr(r.Answer, "unknown"), "_", " "), cmpOr(r.Channel, "unknown channel"))
	}
	mode := ""
	if !r.Enforced {
		mode = " (monitor: not enforced)"
	}
	rule := ""
	if r.Rule != "" {
		rule = " by " + r.Rule
	}
	return fmt.Sprintf("%s %s %s%s%s", strings.ToUpper(v), r.Event, what, rule, mode)
}

// ocsfTypes are a finding's types: what kind of thing Weir found.
func ocsfTypes(r *Record) []string {
	var t []string
	switch {
	case r.Event == "approval":
		t = append(t, "Escalation")
	case r.Event == "definition" || r.Event == "instructions" || strings.HasPrefix(r.Rule, "pin."):
		t = append(t, "Tool Poisoning")
	case strings.HasPrefix(r.Rule, "flow."):
		t = append(t, "Data Flow")
	}
	if c := ruleCategory(r.Rule); c != "" && !slices.Contains(t, c) {
		t = append(t, c)
	}
	return t
}

// ruleCategory names the family of a rule, from its prefix.
func ruleCategory(rule string) string {
	switch {
	case rule == "flow.exfiltration":
		return "Exfiltration"
	case rule == "flow.trifecta":
		return "Lethal Trifecta"
	case rule == "flow.integrity", rule == "flow.tainted_args":
		return "Integrity"
	case strings.HasPrefix(rule, "pin."):
		return "Tool Pinning"
	case strings.HasPrefix(rule, "detect."):
		return "Detector"
	case strings.HasPrefix(rule, "rule "):
		return "Policy Rule"
	case rule == "redact_secrets":
		return "Secret"
	case rule == "protocol", rule == "arguments":
		return "Protocol"
	case rule == "internal":
		return "Internal Error"
	case rule == "default_action":
		return "Policy Default"
	case rule == "hygiene.hidden":
		return "Hidden Content"
	}
	return ""
}

// ocsfMessage is the event's message: the reason when there is one.
func ocsfMessage(r *Record, v string) string {
	if r.Reason != "" {
		return r.Reason
	}
	return ocsfTitle(r, v)
}
