package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weir-sec/weir/internal/flow"
)

// Object words, by what reading them returns. They are stems (stem()).
var (
	// conversation objects hold text other people sent the user.
	convoObjects = words("email mail message inbox thread reply conversation chat dm attachment mention notification invitation invite sms voicemail transcript post")
	// collaborative objects are written by other people in the user's
	// workspace: issue trackers, reviews, comments.
	collabObjects = words("comment review discussion issue ticket pull pr mr todo note story epic activity")
	// code objects are repository content; on a code host anyone can own
	// the repository.
	codeObjects = words("file content commit diff blame tree release gist code readme change patch")
	// outside objects are written by strangers or the open web.
	webObjects = words("web webpage page url site website internet news article paper doc documentation knowledge library guide tutorial " +
		"reference place review advisory cve vulnerability forum tweet crawl scrape html markdown snippet example listing")
	// sentMail are words that make mail the user's own outgoing mail.
	sentMail = []string{"sent", "outgoing", "outbound"}
	// receivedMail are words that make it mail others sent.
	receivedMail = []string{"receiv", "inbox", "incoming", "inbound"}
	// metadata objects are the user's own settings and state, whatever
	// they hang off (an issue's reactions, a mailbox's labels).
	metaObjects = words("label filter reaction emoji pipeline status approval member draft setting preference quota usage permission " +
		"alert finding field type category template")
	// directoryObjects, as the head of a name, are a directory of the
	// user's workspace, whatever they belong to (a forum's channels).
	directoryObjects = words("channel member role team workspace guild category folder")
	// browser objects are the page the browser shows.
	browserObjects = words("page console network request snapshot screenshot text html content dom element tab accessibility pdf frame cookie link download attribute title css style selector audit insight diagnostic")
	// questionWords open a name answered yes or no (is_visible, has_access).
	questionWords = words("is has can")
	// conversationObjects, started, are a first message to someone.
	conversationObjects = words("conversation chat thread dm message call")
	// debuggerWords in a name make it a debugger's (see debugger).
	debuggerWords = words("debugging debugger breakpoint breakpoints watchpoint")
	// launchVerbs start the program a debugger runs.
	launchVerbs = words("start restart launch relaunch run")
	// fetchLike verbs read what they are pointed at: given a URL, the web.
	// get, read, load and their kind stay out: get_document(url) may read
	// the user's own document by its address.
	fetchLike = words("capture screenshot")
	// plumbing objects carry no user data.
	plumbingObjects = words("time timezone color colour palette sum echo tool category capability version help prompt onboarding search session searche direction elevation geocode orientation")
	// local objects live on the machine (or a local file store).
	localObjects = words("file directory dir folder path note vault entity relation observation graph memory frontmatter insight memo pdf block process terminal workspace")
	// secretObjects, created, return a secret.
	secretObjects = words("key token secret credential password webhook")
	// execObjects make a run verb execute code or commands.
	execObjects = words("command shell process terminal script code sql query javascript js function bash cmd kubectl program")
	// triggerObjects are started by a run verb, not executed by it.
	triggerObjects = words("monitor workflow pipeline job action operation task build deployment agent check test flow automation")
	// selfObjects are the user's own account.
	selfObjects = words("me self whoami current authenticated my")
	// userObjects are people.
	userObjects = words("user profile people person")
	// plumbingHeads, as the head of a name, make it about the server's own
	// plumbing (get_codegen_session, search_sentry_tools).
	plumbingHeads = words("session tool prompt help onboarding capability color colour palette timezone")
	// toolSetObjects, as the head of a name with "tools" in it, are about
	// the server's own tools (getEnabledTools, discover_tool_categories).
	toolSetObjects = words("enabled available active disabled installed category set group catalog list")
	// healthObjects are the only objects a tool about the server's own
	// health or connection names.
	healthObjects = words("health healthy heartbeat uptime liveness readiness connection status detailed metadata performance server ping")
	// sessionObjects are started and stopped as plumbing.
	sessionObjects = words("session search recording tracing trace video connection server browser page tab job highlight process")
	// webSearchContext names search providers.
	// (Google and Bing are left out: a google-calendar server is no search.)
	searchProviders = words("brave exa tavily perplexity serp serper serpapi kagi duckduckgo searxng jina search web")
	// providerNames, in a tool's name, say it queries that search
	// provider (omnisearch's kagi_search, exa_answer_search).
	providerNames = words("brave exa tavily perplexity serper serpapi kagi duckduckgo searxng jina")
	// referenceServices, in a server's name or package, serve
	// documentation, papers or news: what their reads return others wrote
	// (apple-docs, latest-science). ownWorkspaces keep the user's own
	// documents (google-docs, notion) out of it.
	referenceServices = words("doc docs documentation science paper papers arxiv scholar news")
	ownWorkspaces     = words("google gdrive drive notion confluence office sharepoint onedrive dropbox quip coda lark feishu outline")
	// searchEngines, searched, are the open web: search_google,
	// search_with_bing, search_engine. ownServices after them are the
	// user's own (search_google_drive).
	searchEngines = words("engine serp google bing yahoo yandex baidu duckduckgo startpage")
	ownServices   = words("drive doc sheet slide calendar mail gmail contact photo file event account analytics console workspace")
	// publicData objects are public reference data, nobody's own and no
	// one's text: weather, forecasts, geocoding, tides.
	publicData = words("weather forecast climate geocoding geocode elevation tide pollen sunrise sunset holiday marine flood air " +
		"ticker orderbook ohlcv candle candlestick")
	// databaseServices hold the user's own records: a bare search there
	// searches them, not the web.
	databaseServices = words("elasticsearch opensearch postgres postgresql mysql mariadb mongodb mongo redis sqlite supabase bigquery " +
		"snowflake clickhouse qdrant pinecone weaviate milvus chroma chromadb neo4j duckdb dynamodb firestore cassandra")
	// publicServices are open forums and public archives: what they hold
	// is strangers' text, none of it the user's.
	publicServices = words("reddit hackernews stackoverflow stackexchange wikipedia arxiv pubmed lobsters youtube vimeo twitch dailymotion")
	codeHosts      = words("github gitlab gitea bitbucket codeberg forgejo")
	browserContext = words("browser playwright puppeteer browserbase stagehand chrome chromium selenium webdriver devtools cdp " +
		"mobile emulator simulator android ios appium")
	// urlParams name a URL the tool contacts.
	urlParamWords = words("url urls uri href link website site endpoint webhook callback domain")
	// addressees name who receives something.
	addresseeParams = words("to recipient recipients cc bcc channel channel_id channelid chat_id chatid phone phone_number email_to user_email emails phone_numbers")
)

func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func anyOf(ws []string, set map[string]bool) string {
	for _, w := range ws {
		if set[w] {
			return w
		}
	}
	return ""
}

// context is what the reader knows of the server from the tool's words,
// its server's name and package, and its parameters.
type context struct {
	codeHost, browser, searchProvider, local, git bool
	database                                      bool   // the server is a database or search index of the user's
	publicData                                    bool   // the server serves public reference data (weather)
	maps                                          bool   // the server or tool is a map provider's
	public                                        bool   // the server is an open forum or a public archive
	calendar                                      bool   // the server or tool is a calendar
	reference                                     bool   // the server serves documentation, papers or news
	desc                                          string // the tool's description
}

func toolContext(def ToolDef, r reading, service map[string]bool, local bool) context {
	var c context
	all := append(slices.Clone(r.tokens), mapKeys(service)...)
	c.codeHost = anyKey(service, codeHosts)
	if hasParam(def, "owner") && hasParam(def, "repo") {
		c.codeHost = true
	}
	if !c.codeHost && hasParam(def, "project_id") && anyOf(r.objects, words("merge branch commit pipeline repository")) != "" {
		c.codeHost = true
	}
	if !c.codeHost && !local && repositoryParam(def) {
		// repositoryId, repo_slug: a repository on a service, not a
		// local checkout (those take a path).
		c.codeHost = true
	}
	c.browser = anyOf(all, browserContext) != "" || browserDescription(def.Description)
	c.searchProvider = anyKey(service, searchProviders) || anyOf(r.tokens, providerNames) != ""
	c.public = anyKey(service, publicServices)
	c.database = anyKey(service, databaseServices)
	c.publicData = anyKey(service, words("weather meteo forecast"))
	c.maps = anyOf(all, words("maps map amap geo places")) != ""
	c.git = slices.Contains(r.tokens, "git") && !c.codeHost
	c.local = local
	c.reference = anyKey(service, referenceServices) && !anyKey(service, ownWorkspaces) && !c.codeHost && !c.database && !local
	c.calendar = service["calendar"] || slices.Contains(r.tokens, "calendar") || mentions(def.Description, "calendar")
	c.desc = def.Description
	return c
}

// localApps are apps whose servers work on this machine: notes apps
// (a vault of files, through the app's local API or the files) and
// container runtimes (the local daemon's containers and images; pulling
// and pushing images still reach a registry).
var localApps = words("obsidian logseq docker podman")

// localApp reports a server of a local app, by its name or package.
func localApp(server, pkg string) bool {
	return anyKey(serviceWords(server, pkg), localApps)
}

// repositoryParam reports a parameter naming a repository by name or id
// (repositoryId, repo_slug, repo), not by a local path.
func repositoryParam(def ToolDef) bool {
	for _, p := range def.params() {
		ws := splitName(p.Name)
		if !slices.Contains(ws, "repository") && !slices.Contains(ws, "repo") {
			continue
		}
		if anyOf(ws, words("path dir directory folder local url")) == "" && (p.Type == "" || p.Type == "string") {
			return true
		}
	}
	return false
}

// browserDescription reports a description whose first sentence says the
// tool works in a browser or on the page it shows ("Take a screenshot of
// the current page").
func browserDescription(desc string) bool {
	return mentions(firstSentence(desc), "browser", "current page", "active page", "open page")
}

// serverHealth reports a tool about the server's own health or
// connection (get_health_detailed, aaa-health-check, getConnectionStatus),
// whatever its verb.
func serverHealth(objs []string) bool {
	if anyOf(objs, words("health heartbeat uptime liveness readiness")) == "" &&
		!(slices.Contains(objs, "connection") && slices.Contains(objs, "status")) {
		return false
	}
	for _, o := range objs {
		if !healthObjects[o] && o != "check" && len(o) > 3 {
			return false
		}
	}
	return true
}

// reportObjects are what running reads: a report or an analysis.
var reportObjects = words("report reports analysis analytics audit")

// commandParam is a parameter that carries something to run: a command,
// code, a script, a query or a program's arguments.
func commandParam(p Param) bool {
	ws := splitName(p.Name)
	return anyOf(ws, execObjects) != "" || anyOf(ws, argsWords) != ""
}

var argsWords = words("args argv arguments expression statement")

// operationNames name a tool's switch of what it does (operation: get,
// create); readOperation also takes a mode, method or command.
var operationNames = words("operation operations action actions op")

var switchNames = words("mode method command")

// anyParam reports a parameter for which f holds.
func anyParam(def ToolDef, f func(Param) bool) bool {
	return slices.ContainsFunc(def.params(), f)
}

// pageContentParam finds a switch that makes a browser tool return the
// page (includeSnapshot, return_html): an action that answers with what
// the page shows.
func pageContentParam(def ToolDef) (string, bool) {
	for _, p := range def.params() {
		if p.Type != "boolean" {
			continue
		}
		ws := splitName(p.Name)
		if anyOf(ws, words("include return with")) != "" && anyOf(ws, words("snapshot content html text dom page screenshot")) != "" {
			return p.Name, true
		}
	}
	return "", false
}

// browsingAgent reports an agent among the objects (browser_use_agent,
// firecrawl_agent), not a user agent string.
func browsingAgent(objs []string) bool {
	i := slices.Index(objs, "agent")
	return i >= 0 && (i == 0 || objs[i-1] != "user")
}

// firstSentence is a description's first sentence, lowercased.
func firstSentence(desc string) string {
	d := strings.ToLower(strings.TrimSpace(desc))
	if i := strings.IndexAny(d, ".\n"); i >= 0 {
		d = d[:i]
	}
	return d
}

// anyKey reports whether a key of m is in set.
func anyKey(m, set map[string]bool) bool {
	for k := range m {
		if set[k] {
			return true
		}
	}
	return false
}

func mapKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func hasParam(def ToolDef, name string) bool {
	for _, p := range def.params() {
		if strings.EqualFold(p.Name, name) {
			return true
		}
	}
	return false
}

// urlParam reports a parameter holding a URL the tool contacts.
func urlParam(p Param) bool {
	if p.Format == "uri" || p.Format == "url" {
		return true
	}
	ws := splitName(p.Name)
	if len(ws) == 0 {
		return false
	}
	last := ws[len(ws)-1]
	if !urlParamWords[last] && !(ws[0] == "is" && slices.Contains(ws, "url")) {
		return false
	}
	// A boolean isUrl switches the tool to fetching URLs.
	if p.Type == "boolean" {
		return slices.Contains(ws, "url")
	}
	return p.Type == "" || p.Type == "string" || p.Type == "array"
}

// addressee reports a parameter naming who receives something: a to
// that is a date bound, or a channel that is an enum of kinds, is not.
func addressee(p Param) bool {
	n := strings.ToLower(p.Name)
	if !addresseeParams[n] {
		return false
	}
	if p.Type != "" && p.Type != "string" && p.Type != "array" {
		return false
	}
	if p.Format == "date" || p.Format == "date-time" {
		return false
	}
	d := strings.ToLower(p.Description)
	for _, w := range []string{"date", "time", "timestamp", "iso", "yyyy", "until", "end of", "range"} {
		if strings.Contains(d, w) {
			return false
		}
	}
	return true
}

// heuristicLabels reads a tool with no policy or registry entry.
//
// decided reports that the reader understood the tool (it found a verb):
// then what the tool returns is the reader's call, and an openWorldHint
// adds no untrusted label (see annotationLabels).
func heuristicLabels(def ToolDef, server string, local bool) (l flow.Labels, reason string, decided bool) {
	service := serviceWords(server, def.Package)
	r := readDef(def, service)
	if len(r.tokens) == 0 {
		return 0, "", false
	}
	decided = r.class != vNone
	c := toolContext(def, r, service, local)
	for _, p := range def.params() {
		if urlParam(p) && (p.Required || p.Type == "boolean" || p.Type == "") {
			r.hasURL = true
		}
	}
	var why []string
	add := func(x flow.Labels, format string, a ...any) {
		l |= x
		why = append(why, fmt.Sprintf(format, a...))
	}
	verb := r.verb
	if verb == "" {
		verb = "(none)"
	}
	src := "name"
	if r.fromDesc {
		src = "description"
	}
	if yesNo(r.tokens) && !anyParam(def, urlParam) && !anyParam(def, addressee) && !anyParam(def, commandParam) {
		return 0, fmt.Sprintf("heuristic: name asks a yes/no question (%q)", def.Name), true
	}
	if serverHealth(r.objects) {
		return 0, fmt.Sprintf("heuristic: %s %q reports the server's own health", src, verb), true
	}
	classes := append([]verbClass{r.class}, r.also...)
	reads := false
	localOnly := false // a write the reader kept on the machine
	for _, cl := range classes {
		switch cl {
		case vRead, vSearch, vWeb:
			reads = true
			rl, w := readLabels(r, c, cl)
			if rl != 0 {
				add(rl, "%s reads %s (%s %q)", src, w, "verb", verb)
			}
		case vNav:
			if !r.hasURL && anyOf(r.objects, words("back forward reload refresh history")) != "" {
				// Back, forward, reload: pages already visited, no new host.
				why = append(why, fmt.Sprintf("%s %q moves in the browser's history", src, verb))
				continue
			}
			add(flow.Sink, "%s navigates (%q)", src, verb)
		case vWrite:
			if (len(r.objects) == 0 || r.descObjs) && (numericOnly(def) || descriptionObject(def.Description, "number")) {
				why = append(why, fmt.Sprintf("%s %q computes on numbers", src, verb))
				continue
			}
			if p := readOnlySwitch(def); p != "" {
				// "Manage workspaces" whose operation is list or get:
				// whatever it is called, it can only read.
				reads = true
				if rl, w := readLabels(r, c, vRead); rl != 0 {
					add(rl, "%s %q, but its %q switch offers only reads, so it reads %s", src, verb, p, w)
				}
				continue
			}
			if isLocalWrite(def, r, c) {
				localOnly = true
				switch {
				case c.git && (r.verb == "pull" || r.verb == "fetch"):
					add(flow.Private|flow.Untrusted, "%s %q brings others' commits from the remote", src, verb)
				case listMode(def):
					add(flow.Private, "%s %q changes local state and also lists it", src, verb)
				default:
					why = append(why, fmt.Sprintf("%s %q changes local state only", src, verb))
				}
				continue
			}
			add(flow.Sink, "%s %q changes a remote service", src, verb)
			if (r.verb == "manage" || r.verb == "management") && listMode(def) {
				add(flow.Private, "it also lists what it manages")
			} else if p := readOperation(def); p != "" {
				add(flow.Private, "its %q switch can also read what it manages", p)
			}
			if (c.git || c.codeHost) && r.verb == "clone" {
				add(flow.Untrusted, "a clone brings others' code")
			}
			if httpVerb[r.verb] && r.hasURL && allOf(r.objects, words("http request")) {
				add(flow.Untrusted, "an HTTP %s returns what the URL answers", strings.ToUpper(r.verb))
			}
			if o := anyOf(r.objects, secretObjects); o != "" && (verb == "create" || verb == "rotate" || verb == "add") {
				add(flow.Private, "creating a %s returns the secret", o)
			}
		case vExec:
			o := anyOf(r.objects, execObjects)
			switch {
			case c.browser && (o == "" || o == "javascript" || o == "js" || o == "script" || o == "code" || o == "function"):
				add(flow.Untrusted|flow.Sink, "%s runs code in a page (%q)", src, verb)
			case o == "" && anyOf(r.objects, triggerObjects) != "":
				add(flow.Sink, "%s %q starts a remote %s", src, verb, anyOf(r.objects, triggerObjects))
			case o == "" && r.verb == "run" && anyOf(r.objects, reportObjects) != "":
				// run_report, runReport: a report is read, not a program run
				add(flow.Private, "%s runs a %s, which reads what it reports on", src, anyOf(r.objects, reportObjects))
			case o == "" && r.verb == "run" && (len(r.objects) == 0 || r.descObjs) && !anyParam(def, commandParam):
				// knip-run: nothing to run is named, and no parameter
				// carries a command or code: the server runs its own program
				add(flow.Private, "%s runs the server's own program (no parameter carries a command or code) and returns what it found", src)
			default:
				add(flow.Private|flow.Sink, "%s runs %s and returns its output (%q)", src, orWord(o, "a command"), verb)
			}
		case vUI:
			add(flow.Sink, "%s acts in a page (%q)", src, verb)
		case vFeedback:
			add(flow.Sink, "%s submits feedback to the vendor", src)
		case vSession, vIdle:
			if c.browser && r.verb == "open" && anyParam(def, urlParam) {
				// new_page: "Open a new tab and load a URL"
				add(flow.Untrusted|flow.Sink, "%s %q loads a page at a URL in the browser", src, verb)
			}
			if r.verb == "start" && anyOf(r.objects, conversationObjects) != "" {
				// start_conversation: a first message to someone
				add(flow.Sink, "%s %q opens a conversation with someone", src, verb)
			}
			if (r.verb == "start" || r.verb == "restart") && debugger(r) && anyOf(r.objects, words("session")) == "" {
				// start_debugging: launches the program it debugs
				add(flow.Sink, "%s %q launches a program under the debugger", src, verb)
			}
			if r.verb == "start" && anyOf(r.objects, execObjects) != "" && anyOf(r.objects, sessionObjects) == "" ||
				r.verb == "start" && slices.Contains(r.objects, "process") {
				add(flow.Private|flow.Sink, "%s starts a process and returns its output", src)
			}
			if (r.verb == "connect" || r.verb == "disconnect") && anyOf(r.objects, words("relation relationship record entry entity item node")) != "" {
				// connect_relation: links two of the user's records, a
				// write, not a session
				add(flow.Sink, "%s %ss records (%q)", src, r.verb, r.verb)
			}
		case vNone:
			// No verb: a name of objects (db-stats, collection-indexes).
			if o := anyOf(r.objects, words("feedback")); o != "" {
				add(flow.Sink, "%s submits feedback to the vendor", src)
			}
		}
	}
	if c.public && l&(flow.Private|flow.Untrusted) != 0 && anyOf(r.objects, words("dm message inbox chat mail email me self saved")) == "" {
		// an open forum's posts and profiles; the user's own messages
		// there stay private
		l = l&^flow.Private | flow.Untrusted
		why = append(why, "what an open forum holds is strangers' text, not the user's")
	}
	if browsingAgent(r.objects) && r.class != vRead && r.class != vSearch &&
		(c.browser || mentions(firstSentence(def.Description), "web", "browse", "navigat")) {
		add(flow.Untrusted|flow.Sink, "an agent that browses for the user reads pages and acts in them")
	}
	if c.browser && l&flow.Untrusted == 0 {
		if p, ok := pageContentParam(def); ok {
			add(flow.Untrusted, "parameter %q makes it return the page", p)
		}
	}
	for _, p := range def.params() {
		switch {
		case urlParam(p) && (reads || r.class == vNone || r.class == vNav || r.class == vExec || r.class == vUI):
			if !p.Required && p.Type != "" && p.Type != "boolean" && r.class != vWeb && r.class != vNav && r.verb != "fetch" && r.class != vNone {
				continue // an optional URL of a read: a filter of results
			}
			if !l.Has(flow.Sink) || r.class == vRead || r.class == vWeb || r.class == vNone {
				add(flow.Sink, "parameter %q is a URL the tool requests", p.Name)
				if r.class != vNav && r.class != vUI {
					add(flow.Untrusted, "what a URL returns is the web's")
				}
			}
		case urlParam(p) && !l.Has(flow.Sink) && r.class == vWrite && !localOnly:
			add(flow.Sink, "parameter %q is a URL", p.Name)
		case addressee(p) && !reads && !l.Has(flow.Sink) && r.class != vSession && r.class != vIdle:
			add(flow.Sink, "parameter %q names a recipient", p.Name)
		}
	}
	if l == 0 && len(why) == 0 {
		if decided {
			why = append(why, fmt.Sprintf("%s %q carries no data", src, verb))
		} else {
			return 0, "", false
		}
	}
	return l, "heuristic: " + strings.Join(slices.Compact(why), ", "), decided
}

// httpVerb are HTTP methods that can be a whole name (playwright_post,
// http_put_request): with a URL to request, the tool returns what that
// URL answers. post_webpage publishes a page instead.
var httpVerb = words("get post put patch delete head")

// listMode reports a local write that can also list what it manages
// ("Manage branches: list all branches, …", a dry run that previews):
// its result holds the user's local data.
func listMode(def ToolDef) bool {
	d := strings.ToLower(def.Description)
	if i := strings.IndexAny(d, ".\n"); i >= 0 {
		d = d[:i+1]
	}
	full := strings.ToLower(def.Description)
	for _, w := range []string{"list ", "list,", "lists ", "show "} {
		if strings.Contains(d, w) {
			return true
		}
	}
	for _, w := range []string{"dry-run", "dry run", "preview", "returns a repository snapshot", "snapshot (status"} {
		if strings.Contains(full, w) {
			return true
		}
	}
	return false
}

// readOps, first in an operation's value, make it a read.
var readOps = words("get list show describe view search query fetch find retrieve lookup inspect info status stats")

// readOperation finds an operation switch of a write tool whose values
// include a read (operation: get, create, drop): the tool also returns
// what it manages. It returns the switch's name, or "".
func readOperation(def ToolDef) string {
	for _, p := range def.params() {
		if p.Enum == "" || anyOf(splitName(p.Name), operationNames) == "" && anyOf(splitName(p.Name), switchNames) == "" {
			continue
		}
		vals := strings.Split(p.Enum, "|")
		if slices.Contains(vals, "get") && slices.Contains(vals, "post") {
			continue // method: GET, POST — a request's, not the tool's
		}
		for _, v := range vals {
			if ws := splitName(v); len(ws) > 0 && readOps[ws[0]] {
				return p.Name
			}
		}
	}
	return ""
}

// readOnlySwitch finds an operation switch all of whose values read
// (operation: list, get, current): a tool named or described as managing
// something that offers no write. It returns the switch's name, or "".
func readOnlySwitch(def ToolDef) string {
	for _, p := range def.params() {
		if p.Enum == "" || anyOf(splitName(p.Name), operationNames) == "" {
			continue
		}
		read := false
		for _, v := range strings.Split(p.Enum, "|") {
			ws := splitName(v)
			if len(ws) == 0 {
				continue
			}
			// a value opening with any other verb, or naming a write or
			// a run anywhere (list_and_delete), is not a read
			if _, c := verbOf(ws[0]); c != vNone && c != vRead && c != vSearch {
				return ""
			}
			for _, w := range ws[1:] {
				if _, c := verbOf(w); c == vWrite || c == vExec {
					return ""
				}
			}
			read = read || readOps[ws[0]]
		}
		if read {
			return p.Name
		}
	}
	return ""
}

// sentOnly reports mail the user sent: the name or the description's
// first sentence says sent and nothing says received.
func sentOnly(desc string, objs []string) bool {
	d := strings.ToLower(desc)
	if i := strings.IndexAny(d, ".\n"); i >= 0 {
		d = d[:i]
	}
	if slices.Contains(objs, "sent") {
		return !mentions(d, receivedMail...)
	}
	return mentions(d, sentMail...) && !mentions(d, receivedMail...)
}

// head is a name's last object: get_pull_request_status is about a
// status, list_forum_channels about channels.
func head(objs []string) string {
	if len(objs) == 0 {
		return ""
	}
	return objs[len(objs)-1]
}

// mentions reports a description that names any of ws.
func mentions(desc string, ws ...string) bool {
	d := strings.ToLower(desc)
	for _, w := range ws {
		if strings.Contains(d, w) {
			return true
		}
	}
	return false
}

func orWord(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// readLabels labels what a read returns, by its object.
func readLabels(r reading, c context, class verbClass) (flow.Labels, string) {
	objs := r.objects
	has := func(set map[string]bool) string { return anyOf(objs, set) }
	pu := flow.Private | flow.Untrusted
	switch {
	case c.git && has(words("fetch pull")) == "" && (r.verb == "fetch" || r.verb == "pull"):
		return pu, "others' commits from the remote"
	case r.verb == "pull" || r.verb == "fetch" && c.git:
		return pu, "others' commits from the remote"
	}
	if o := has(plumbingObjects); o != "" && len(objs) == 1 {
		return 0, ""
	}
	if (has(publicData) != "" || c.publicData) && has(selfObjects) == "" {
		return 0, "" // public reference data: weather, forecasts, geocoding
	}
	if c.maps && class == vSearch {
		return flow.Untrusted, "places from the map provider (listings businesses write)"
	}
	if c.database && (class == vSearch || class == vRead) && has(webObjects) == "" {
		return flow.Private, "the user's own records"
	}
	if r.verb == "count" || head(objs) == "count" {
		return flow.Private, "counts of the user's data" // numbers, nobody's text
	}
	if r.verb == "generate" && has(words("image video audio speech art picture illustration logo icon diagram chart voice password passphrase uuid")) != "" ||
		words("generate explain translate convert")[r.verb] && has(words("natural")) != "" && has(words("language")) != "" {
		return 0, "" // a new artefact from a prompt, nothing of the user's
	}
	if h := head(objs); (plumbingHeads[h] || anyOf(r.tokens, words("tool tools")) != "" && toolSetObjects[h]) &&
		class != vSearch && has(convoObjects) == "" && has(collabObjects) == "" {
		// get_codegen_session: about the server's own plumbing.
		return 0, ""
	}
	if o := has(words("crawl scrape")); o != "" {
		return flow.Untrusted, "a crawl's pages from the web"
	}
	if c.browser {
		if o := has(browserObjects); o != "" {
			return flow.Untrusted, fmt.Sprintf("the %s the browser shows", o)
		}
	}
	if o := has(metaObjects); o != "" {
		return flow.Private, fmt.Sprintf("the user's own %s data", o)
	}
	if h := head(objs); h == "account" || h == "rule" {
		// get_mail_account, list_mail_rules: settings, not the mail
		return flow.Private, fmt.Sprintf("the user's own %ss", h)
	}
	if h := head(objs); directoryObjects[h] && !c.codeHost && len(objs) > 1 {
		return flow.Private, fmt.Sprintf("a directory of the user's %ss", h)
	}
	if o := has(convoObjects); o != "" {
		if (o == "email" || o == "mail") && sentOnly(c.desc, objs) {
			return flow.Private, "mail the user sent"
		}
		return pu, fmt.Sprintf("%ss others sent", o)
	}
	if slices.Contains(objs, "channel") && has(words("history thread conversation")) != "" {
		return pu, "a channel's messages"
	}
	if c.codeHost {
		if head(objs) == "check" {
			return flow.Private, "the checks CI ran"
		}
		if o := has(collabObjects); o != "" {
			return pu, fmt.Sprintf("%ss others write", o)
		}
		if slices.Contains(objs, "merge") && slices.Contains(objs, "request") {
			return pu, "merge requests others write"
		}
		if h := head(objs); class == vSearch && (h == "org" || h == "organization") {
			return flow.Untrusted, "organisations' public profiles"
		}
		if has(words("advisory")) != "" && has(words("repository repo org organization")) != "" {
			return flow.Private, "the repository's own advisories"
		}
		if o := has(userObjects); o != "" && has(selfObjects) == "" {
			return flow.Untrusted, fmt.Sprintf("any %s's public profile", o)
		}
		if has(selfObjects) != "" || r.verb == "whoami" {
			return flow.Private, "the user's own account"
		}
		if o := has(codeObjects); o != "" {
			return pu, fmt.Sprintf("repository %s anyone can write", o)
		}
		if class == vSearch && has(words("repository repo project code")) != "" {
			return pu, "a search across the code host"
		}
		if o := has(webObjects); o != "" {
			return flow.Untrusted, fmt.Sprintf("%s from the web", o)
		}
		return flow.Private, "the user's repository metadata"
	}
	if workItem(objs) {
		return pu, "work items others write"
	}
	if slices.Contains(objs, "feedback") && has(words("link url form")) == "" {
		// get_feedback: what reviewers or customers wrote (a read of
		// it; submitting feedback is vFeedback's)
		return pu, "feedback others wrote"
	}
	if o := has(collabObjects); o != "" && !(o == "note" && (c.local || c.git)) {
		if o == "note" && !slices.Contains(objs, "issue") {
			return flow.Private, "the user's notes"
		}
		return pu, fmt.Sprintf("%ss others write", o)
	}
	if c.calendar && (slices.Contains(objs, "event") || slices.Contains(objs, "calendar") && words("view agenda schedule")[head(objs)]) {
		return pu, "calendar events (invitations from others)"
	}
	if c.browser {
		if o := has(browserObjects); o != "" || len(objs) == 0 {
			return flow.Untrusted, fmt.Sprintf("the %s the browser shows", orWord(o, "page"))
		}
	}
	if o := has(webObjects); o != "" && !(o == "page" && !c.browser && class != vWeb && r.verb != "fetch" && !r.hasURL) &&
		!((o == "url" || o == "link") && len(objs) > 1 && !r.hasURL) { // get_project_url: a URL of the user's own project
		return flow.Untrusted, fmt.Sprintf("%ss from the web", o)
	}
	if class == vWeb || len(objs) == 0 && (r.verb == "fetch" || r.verb == "browse") || r.verb == "research" {
		return flow.Untrusted, "the web"
	}
	if class == vSearch {
		if len(objs) == 0 || has(words("web internet news image video local")) != "" || c.searchProvider && has(localObjects) == "" ||
			has(searchEngines) != "" && has(ownServices) == "" {
			return flow.Untrusted, "web search results"
		}
	}
	if r.hasURL && len(objs) == 0 {
		return flow.Untrusted, "what a URL returns"
	}
	if r.hasURL && (r.verb == "fetch" || r.verb == "download" || fetchLike[r.verb] && has(localObjects) == "") && has(selfObjects) == "" {
		// fetch_json, a screenshot of a URL: what the caller's URL
		// answers, not the user's own data
		return flow.Untrusted, "what the URL answers" + objectList(objs)
	}
	if len(objs) == 0 && r.class == vRead && r.fromDesc && c.searchProvider {
		return flow.Untrusted, "results from the provider"
	}
	if c.searchProvider && class == vRead && has(localObjects) == "" && has(selfObjects) == "" && has(secretObjects) == "" {
		// A search provider's reads return what it found on the web.
		return flow.Untrusted, "results from the search provider"
	}
	if c.reference && (class == vRead || class == vSearch) && has(localObjects) == "" && has(selfObjects) == "" && has(secretObjects) == "" {
		return flow.Untrusted, "documentation, papers or news others wrote"
	}
	return flow.Private, "the user's own data" + objectList(objs)
}

// workItem reports a tracker's work item (Azure Boards, Jira's
// "work item" type): an issue by another name.
func workItem(objs []string) bool {
	i := slices.Index(objs, "work")
	return i >= 0 && i+1 < len(objs) && objs[i+1] == "item"
}

func objectList(objs []string) string {
	if len(objs) == 0 {
		return ""
	}
	if len(objs) > 3 {
		objs = objs[:3]
	}
	return " (" + strings.Join(objs, " ") + ")"
}

// yesNo reports a name that asks a question answered yes or no
// (browser_is_visible, has_access): an answer that carries no data. A
// question with a URL, a recipient or a command to pass is judged as
// any other tool.
func yesNo(ws []string) bool {
	for i := 0; i < len(ws)-1 && i < 2; i++ {
		if questionWords[ws[i]] {
			return len(ws)-i <= 3
		}
	}
	return false
}

// debugger reports a debugger's tool: its breakpoints, sessions and the
// processes it attaches to are on this machine.
func debugger(r reading) bool {
	return anyOf(r.tokens, debuggerWords) != "" ||
		slices.Contains(r.tokens, "debug") && anyOf(r.tokens, words("session sessions")) != "" // not Salesforce's debug logs
}

// isLocalWrite reports a write that stays on the machine: a local git
// operation, or a write to local files, notes or a memory graph by a
// server that is known local or says its world is closed.
func isLocalWrite(def ToolDef, r reading, c context) bool {
	if c.git && !c.codeHost {
		// Local git: everything but what reaches a remote.
		return r.verb != "push" && r.verb != "clone" && r.verb != "publish"
	}
	remoteVerb := words("push pull clone publish deploy send share upload invite merge fork login")
	if remoteVerb[r.verb] {
		return false
	}
	if c.browser && !r.hasURL && (words("set clear install uninstall")[r.verb] ||
		words("add delete remove")[r.verb] && len(r.objects) > 0 && allOf(r.objects, words("cookie storage header viewport geolocation permission"))) {
		// the browser's or device's own settings and state: user agent,
		// viewport, cookies, the apps on a phone, the browser binary
		return true
	}
	if words("clear flush reset purge")[r.verb] && len(r.objects) > 0 && allOf(r.objects, words("cache exchange log")) {
		return true // the server's own cache
	}
	if debugger(r) && !r.hasURL && !launchVerbs[r.verb] {
		// breakpoints, a debug session, attaching to a process: the
		// debugger's own state on this machine
		return true
	}
	closed := def.Annotations.OpenWorld != nil && !*def.Annotations.OpenWorld
	if strings.Contains(strings.ToLower(def.Description), "sqlite") {
		return true // a local database file
	}
	if !c.local && !closed {
		return false
	}
	if c.codeHost {
		return false
	}
	return c.local || localTool(def, "", false)
}

// localTool reports a tool whose own words say it works on local files,
// a local git repository, notes or a memory graph (or whose server the
// registry knows to be local): a destructive hint in a closed world on it
// adds no sink.
func localTool(def ToolDef, server string, local bool) bool {
	service := serviceWords(server, def.Package)
	r := readDef(def, service)
	c := toolContext(def, r, service, local)
	if c.codeHost {
		return false
	}
	if local || c.git && r.verb != "push" && r.verb != "clone" {
		return true
	}
	if anyOf(r.objects, localObjects) != "" {
		return true
	}
	d := strings.ToLower(def.Description)
	return strings.Contains(d, "sqlite") || strings.Contains(d, "local file") || strings.Contains(d, "knowledge graph")
}

// numericOnly reports a tool whose parameters are all numbers (add(a, b)).
func numericOnly(def ToolDef) bool {
	ps := def.params()
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if p.Type != "number" && p.Type != "integer" {
			return false
		}
	}
	return true
}

// descriptionObject reports that the description's first sentence has
// object (as a stem) after its verb: "Add two numbers".
func descriptionObject(desc, object string) bool {
	_, _, objs := descriptionVerb(desc, nil)
	return slices.Contains(objs, object)
}
