package engine

import (
	"slices"
	"strings"
	"unicode"
)

// This file reads a tool definition the way a reviewer would: the name's
// words (a service prefix dropped), the verb wherever it stands, the objects
// acted on, the description's first verb when the name has none, and what
// each parameter means by its name, type, format and description. The
// heuristic (heuristic.go) decides labels from this reading.

// verbClass is what a verb does.
type verbClass int

const (
	vNone     verbClass = iota
	vRead               // returns data: get, list, search, …
	vSearch             // a search or question: the web's unless its object says otherwise
	vWeb                // fetches from the web: scrape, crawl, browse
	vNav                // navigates a browser
	vWrite              // changes state: create, update, delete, send, …
	vExec               // runs code or commands
	vUI                 // acts in a page: click, type, fill
	vIdle               // moves the pointer, scrolls, waits: carries no data
	vSession            // session plumbing: connect, login, toggle, start/stop a session
	vFeedback           // submits feedback to the vendor
)

var verbClasses = map[string]verbClass{}

// verbLists are the verbs of each class. A verb is in one class only
// (TestVerbClassesDisjoint): in two, the class it got would depend on the
// order a map is read in.
var verbLists = map[verbClass]string{
	vRead: "return take capture get list query find fetch read view describe show retrieve lookup look export count check status stat stats " +
		"download explain inspect analyze analyse summarize summarise resolve validate verify diff log logs info detail details " +
		"preview print load cat open scan discover compare poll head tail tree blame whoami lint aggregate search_in observe generate obtain",
	vSearch: "search ask research answer",
	vWeb:    "scrape crawl browse extract map visit",
	vNav:    "navigate goto go",
	vWrite: "send post create update delete remove merge deploy publish invite add comment assign unassign close reopen " +
		"transfer pay charge refund cancel schedule trigger approve unapprove protect unprotect mark rename move modify unpublish " +
		"patch put set upload push fork apply scale rollout install upgrade uninstall drop insert write edit append reply " +
		"react share submit finalize unresolve archive unarchive restore star unstar subscribe unsubscribe follow unfollow " +
		"like upvote vote lock unlock pin unpin enable disable rotate revoke grant notify forward email message tweet dm book " +
		"reserve order buy purchase sign save store import sync commit checkout reset rebase stash revert tag init clone pull " +
		"replace rerun retry restart cleanup clean purge empty invalidate confirm accept decline reject dismiss link unlink " +
		"manage management handle configure register unregister duplicate copy batch bulk upsert increment decrement " +
		"respond rsvp compose replay pause unpause request attach detach watch unwatch clear erase wipe dml promote demote " +
		"setup provision activate deactivate reactivate resume suspend acknowledge ack enroll onboard flush complete",
	vExec:     "execute exec run eval evaluate invoke call shell interact",
	vUI:       "click type fill select press drag tap submit_form dblclick act uncheck",
	vIdle:     "hover scroll wait sleep focus",
	vSession:  "connect disconnect login logout auth authenticate reconnect ping echo toggle start stop kill terminate end resize",
	vFeedback: "feedback",
}

func init() {
	for class, ws := range verbLists {
		for _, w := range strings.Fields(ws) {
			verbClasses[w] = class
		}
	}
}

// agentNouns are the doers of verbs, as the last word of a name.
var agentNouns = map[string]string{"reader": "read", "writer": "write", "fetcher": "fetch", "getter": "get", "updater": "update",
	"creator": "create", "sender": "send", "deleter": "delete", "uploader": "upload", "downloader": "download",
	"searcher": "search", "lister": "list", "crawler": "crawl", "scraper": "scrape"}

// prepositions start a criterion in a name: search_by_sender,
// search_since_date, list_from_queue.
var prepositions = words("by from since until with without before after")

// modifiers qualify what a name acts on without naming it (unread, all).
var modifiers = words("unread unreplied all recent new latest starred flagged archived")

// sessionPrefix are session verbs that name a product area when another
// verb follows them (auth_get_user, auth_delete_user).
var sessionPrefix = words("auth login")

// modifierVerbs qualify the verb after them: batch_read_objects reads,
// bulk_update_issues writes. Alone they are the verb.
var modifierVerbs = words("batch bulk")

// nounAfter are verbs that are nouns before these words: a pull request
// is read, not pulled; a merge request is read, not merged.
var nounAfter = map[string]string{"pull": "request", "merge": "request"}

// nounVerbAt reports that ws[i] is a verb word used as a noun there: a
// modifier with a verb after it, or pull/merge before request.
func nounVerbAt(ws []string, i int) bool {
	if i+1 >= len(ws) {
		return false
	}
	next := ws[i+1]
	if modifierVerbs[ws[i]] && isVerb(next) {
		return true
	}
	if runNouns[ws[i]] && attributeNouns[next] {
		return true // run_details, build_logs: a run's details
	}
	return nounAfter[ws[i]] != "" && stem(next) == nounAfter[ws[i]]
}

// runNouns are verbs that name a thing they made (a run, a build) before
// one of attributeNouns: runDetails, build_status, scan_results.
var (
	runNouns       = words("run build deploy test check scan")
	attributeNouns = words("detail details status log logs id result results output outputs history info summary")
)

// httpMethods start names generated from OpenAPI operations
// ("API-post-search"): the method is the verb only when no other follows.
var httpMethods = words("post put patch")

// stopWords carry no meaning as objects.
var stopWords = words("a an the of for by to from in on at with into all any my new multiple specific single one or and " +
	"given current existing many mcp api tool tools v1 v2 v3 this that using via as is be it its your their")

// reading is what the reader made of a tool definition.
type reading struct {
	tokens   []string // every word of the name, lowercased
	words    []string // the name's words without the service prefix
	verb     string
	class    verbClass
	also     []verbClass // further verbs joined by "or"/"and" (get_or_create_label)
	objects  []string    // stemmed object words
	fromDesc bool        // the verb came from the description
	descObjs bool        // the objects came from the description (the name was a bare verb)
	hasURL   bool        // a parameter is a URL the tool requests
}

// readTool reads a definition. service holds the words naming the server
// (its name and package), which are dropped from the front of the name.
func readDef(def ToolDef, service map[string]bool) reading {
	var r reading
	r.tokens = splitName(def.Name)
	ws := r.tokens
	var dropped []string // leading words dropped for the verb after them: objects still
	// Drop a service prefix: words naming the server, or any leading
	// non-verb word when a verb follows it (kubectl_get, browser_click).
	for len(ws) > 1 {
		w := ws[0]
		if service[w] || stopWords[w] || knownService[w] {
			ws = ws[1:]
			continue
		}
		if !isVerb(w) || sessionPrefix[w] {
			// kubectl_get, browser_click; auth_get_user is Auth's get
			if isVerb(ws[1]) && !nounVerb[ws[1]] {
				dropped = append(dropped, stem(w))
				ws = ws[1:]
				continue
			}
		}
		break
	}
	r.words = ws
	vi := -1
	for i, w := range ws {
		if isVerb(w) && !((nounVerb[w] || nounVerb[stem(w)]) && i > 0) && !nounVerbAt(ws, i) {
			vi = i
			break
		}
	}
	// A name that ends in the doer of a verb is that verb's tool:
	// deploy_services_reader reads deploys, project_updater updates.
	// After a preposition it is a criterion (search_by_sender).
	if n := len(ws); n > 1 && agentNouns[ws[n-1]] != "" && !prepositions[ws[n-2]] {
		vi = n - 1
		ws = slices.Clone(ws)
		ws[n-1] = agentNouns[ws[n-1]]
		r.words = ws
	}
	// An HTTP method followed by a verb: the verb is the operation.
	method := -1
	if vi >= 0 && httpMethods[ws[vi]] && vi+1 < len(ws) {
		if isVerb(ws[vi+1]) && !nounVerb[ws[vi+1]] {
			method = vi
			vi++
		}
	}
	// Still no verb: the description's, else a noun-verb (status, logs,
	// diff) anywhere in the name.
	if vi < 0 {
		if v, c, objs := descriptionVerb(def.Description, service); v != "" {
			r.verb, r.class, r.fromDesc = v, c, true
			for _, w := range ws {
				if !stopWords[w] {
					r.objects = append(r.objects, stem(w))
				}
			}
			if len(r.objects) == 0 {
				r.objects = objs
			}
			r.refine()
			return r
		}
	}
	if vi < 0 {
		for i, w := range ws {
			if isVerb(w) && !nounVerbAt(ws, i) {
				vi = i
				break
			}
		}
	}
	if vi >= 0 {
		r.verb, r.class = verbOf(ws[vi])
		for i := vi + 1; i+1 < len(ws); i++ {
			if ws[i] == "or" || ws[i] == "and" {
				if _, cl := verbOf(ws[i+1]); cl != vNone {
					r.also = append(r.also, cl)
				}
			}
		}
	}
	r.objects = append(r.objects, dropped...)
	// What follows a preposition is a criterion (search_by_subject,
	// search_unread_from_sender): with nothing but criteria and modifiers
	// after the verb, the name does not say what it acts on.
	crit := len(ws) // where the criteria start
	for i := vi + 1; vi >= 0 && i < len(ws); i++ {
		if prepositions[ws[i]] {
			crit = i
			break
		}
	}
	named := false
	for i, w := range ws {
		// A service word names the server wherever it stands
		// (get_code_context_exa, search_sentry_tools): not an object.
		if i == vi || i == method || stopWords[w] || service[w] && len(ws) > 1 {
			continue
		}
		if i > vi && vi >= 0 && i > 0 && (ws[i-1] == "or" || ws[i-1] == "and") {
			if isVerb(w) {
				continue
			}
		}
		if i > vi && i < crit && !modifiers[w] {
			named = true
		}
		r.objects = append(r.objects, stem(w))
	}
	if vi >= 0 && crit < len(ws) && !named {
		if v, _, objs := descriptionVerb(def.Description, service); v != "" && len(objs) > 0 {
			r.objects = append(objs, r.objects...)
			r.descObjs = true
		}
	}
	// A name that is only a verb (search, jira_get): the description
	// says what it acts on ("Search for files in Google Drive").
	if len(r.objects) == 0 && vi >= 0 {
		if v, _, objs := descriptionVerb(def.Description, service); v != "" {
			r.objects = append(r.objects, objs...)
			r.descObjs = len(r.objects) > 0
		}
	}
	r.refine()
	if r.verb == "check" && anyOf(r.tokens, browserContext) != "" && mentions(firstSentence(def.Description), "checkbox", "radio") &&
		!mentions(firstSentence(def.Description), " if ", "whether") {
		// browser_check: "Check a checkbox", a click in the page
		r.class = vUI
	}
	return r
}

// refine corrects the verb class by its objects: resolving a thread is a
// write, a search for feedback submits it, forwarding a port is a local
// tunnel, a verbless name of browser objects reads them.
func (r *reading) refine() {
	has := func(set map[string]bool) bool { return anyOf(r.objects, set) != "" }
	switch {
	case slices.Contains(r.objects, "feedback") && !has(words("link url form")) && !readsOnly[r.verb]:
		// A link to a feedback form is built, not feedback submitted;
		// get_feedback reads what others wrote.
		r.class = vFeedback
	case r.verb == "resolve" && has(words("thread comment discussion conversation issue")):
		r.class = vWrite
	case r.verb == "forward" && slices.Contains(r.objects, "port"):
		r.class = vSession
	case r.verb == "interact" && !has(execObjects):
		r.class = vUI
	case (r.verb == "close" || r.verb == "open" && has(words("browser tab")) || r.verb == "launch") &&
		(has(sessionObjects) || r.verb == "close" && anyOf(r.tokens, words("browser session tab")) != ""):
		r.class = vSession
	case len(r.words) > 1 && r.class != vSession && words("stop end close")[r.words[len(r.words)-1]]:
		// firecrawl_interact_stop: ends what the verb started.
		r.class = vSession
	case r.verb == "close" && len(r.objects) == 0:
		// close with nothing named closes the server's own session.
		r.class = vSession
	case (r.verb == "create" || r.verb == "start" || r.verb == "open") && len(r.objects) > 0 && allOf(r.objects, sessionObjects) &&
		!(r.verb == "create" && allOf(r.objects, words("page tab")) && anyOf(r.tokens, browserContext) == ""):
		// browserbase_session_create: the user's own session, plumbing; a
		// page is a browser's only in a browser (create_page in a wiki
		// publishes one).
		r.class = vSession
	case r.verb == "select" && len(r.objects) > 0 && allOf(r.objects, words("account workspace board project profile organization org team tenant environment context")):
		// select-account: which account later calls use, the server's own
		// state, not a choice in a web page.
		r.class = vSession
	case r.verb == "set" && slices.Contains(r.tokens, "active"):
		// set_active_board: which board later calls default to, the
		// server's own state.
		r.class = vSession
	case has(words("mouse pointer cursor")) && (r.verb == "move" || r.class == vIdle || slices.Contains(r.objects, "wheel")):
		r.class = vIdle
	case (r.verb == "save" || r.verb == "export") && has(words("pdf screenshot snapshot")):
		r.class = vRead
	}
}

// readsOnly are the verbs that only read what they name, whatever it is.
var readsOnly = words("get list read fetch view show retrieve")

// nounVerb are words that are verbs only when nothing else is: "status"
// in get_pull_request_status is an object.
var nounVerb = words("status stat stats log logs diff info detail details tree blame head tail map order message email comment tag " +
	"post link feedback lint scan check type end view export count config set sign store request archive")

func allOf(ws []string, set map[string]bool) bool {
	for _, w := range ws {
		if !set[w] {
			return false
		}
	}
	return true
}

func isVerb(w string) bool { _, c := verbOf(w); return c != vNone }

// verbOf returns a word's verb class, trying its stem too (creates, lists).
func verbOf(w string) (string, verbClass) {
	if c, ok := verbClasses[w]; ok {
		return w, c
	}
	if s := stemVerb(w); s != w {
		if c, ok := verbClasses[s]; ok {
			return s, c
		}
	}
	return "", vNone
}

// knownService are service words that prefix tool names; the reader also
// drops any leading word a verb follows, so this list needs only the
// services whose names are also verbs or nouns.
var knownService = words("slack github gitlab kv d1 r2 notion linear stripe jira confluence discord gmail google gdrive drive " +
	"sentry figma airtable hubspot todoist trello asana supabase vercel netlify cloudflare aws azure gcp mongodb mongo redis " +
	"postgres mysql sqlite docker k8s kubectl helm git npm pypi brave exa tavily perplexity firecrawl puppeteer playwright " +
	"browserbase stagehand obsidian resend twilio sendgrid mailgun shopify zendesk intercom salesforce dropbox box onedrive " +
	"sharepoint teams outlook calendar youtube twitter reddit spotify maps api mcp")

// stem reduces an object word to its singular.
func stem(w string) string {
	switch {
	case len(w) <= 3:
		return w
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "uses"), strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "ches"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

// stemVerb reduces a third-person verb ("retrieves", "searches") to its
// base form.
func stemVerb(w string) string {
	if len(w) > 4 && strings.HasSuffix(w, "ing") {
		if _, ok := verbClasses[w[:len(w)-3]]; ok {
			return w[:len(w)-3]
		}
		if _, ok := verbClasses[w[:len(w)-3]+"e"]; ok {
			return w[:len(w)-3] + "e"
		}
	}
	if s := stem(w); s != w {
		if _, ok := verbClasses[s]; ok {
			return s
		}
	}
	if strings.HasSuffix(w, "s") {
		if _, ok := verbClasses[w[:len(w)-1]]; ok {
			return w[:len(w)-1]
		}
	}
	return w
}

// objectEnd end the object of a description's verb once one is named:
// what follows qualifies it.
var objectEnd = words("with in on by using via from including that which where when and or to for")

// articles make the word after them a noun.
var articles = words("a an the")

// descLead are openings that precede a description's verb.
var descLead = []string{"this tool will ", "this tool ", "use this tool to ", "use this to ", "tool to ", "allows you to ",
	"allows to ", "used to ", "lets you ", "call this to ", "helps you ", "a tool to ", "a tool that ", "tool that "}

// descriptionVerb reads the first sentence of a description for its verb
// ("Retrieves the content of …") and the words after it, up to the end
// of the first object named: service words (the server's, and known
// services') are no object.
func descriptionVerb(desc string, service map[string]bool) (string, verbClass, []string) {
	s := strings.ToLower(strings.TrimSpace(desc))
	if i := strings.Index(s, " | "); i >= 0 && i < 40 {
		s = s[i+3:] // "Notion | Retrieve a block"
	}
	if i := strings.IndexAny(s, ".\n:;"); i >= 0 {
		s = s[:i]
	}
	for _, l := range descLead {
		s = strings.TrimPrefix(s, l)
	}
	if v, c, objs := sentenceVerb(s, service); v != "" {
		return v, c, objs
	}
	// "[Feishu/Lark]-Docs-Document-Obtain the plain text": a breadcrumb
	// of categories, the verb in a later part.
	if parts := strings.Split(s, "-"); len(parts) > 2 {
		for _, p := range parts[1:min(len(parts), 8)] {
			// a part that starts with its verb: "Calendar management" is
			// a category, "Query primary calendar information" an action
			if v, c, objs := sentenceVerb(p, service); v != "" && splitName(p)[0] == v {
				return v, c, objs
			}
		}
	}
	return "", vNone, nil
}

// sentenceVerb finds a verb among the first three words of s, and the
// object after it.
func sentenceVerb(s string, service map[string]bool) (string, verbClass, []string) {
	ws := splitName(s)
	for i, w := range ws {
		if i > 2 {
			break
		}
		if i > 0 && articles[ws[i-1]] {
			continue // "Rerank a set of documents": a noun after an article
		}
		if v, c := verbOf(w); c != vNone {
			var objs []string
			for _, o := range ws[i+1:] {
				if len(objs) > 0 && objectEnd[o] {
					break // "Search for Airbnb listings with filters": the listings
				}
				if so := stem(o); !stopWords[o] && !service[so] && !knownService[so] && len(objs) < 5 {
					objs = append(objs, so)
				}
			}
			return v, c, objs
		}
	}
	return "", vNone, nil
}

// splitName splits a tool name into lowercase words at underscores, dashes,
// dots, slashes, spaces and camelCase boundaries. Digits stay with the
// letters before them (v2, d1, r2, s3, base64); a digit run after a
// separator is a word of its own.
func splitName(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsLetter(r) && i > 0 && unicode.IsDigit(rs[i-1]) && len(cur) > 0:
			// letters after digits start a word ("v2Items" → v2, items)
			flush()
			cur = append(cur, r)
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// serviceWords are the words naming a server: its name and its package
// identity without scope, "mcp" and "server".
func serviceWords(server, pkg string) map[string]bool {
	m := map[string]bool{}
	add := func(s string) {
		for _, w := range splitName(s) {
			if w != "mcp" && w != "server" && w != "ai" && len(w) > 1 {
				if !isVerb(w) {
					m[w] = true
				}
			}
		}
	}
	add(server)
	if i := strings.LastIndex(pkg, "/"); i >= 0 {
		add(pkg[i+1:])
		if strings.HasPrefix(pkg, "@") {
			add(pkg[1:i])
		}
	} else {
		add(pkg)
	}
	return m
}
