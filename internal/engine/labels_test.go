package engine

import (
	"slices"
	"testing"

	"github.com/weir-sec/weir/internal/flow"
)

func hint(b bool) *bool { return &b }

func TestLabelHeuristics(t *testing.T) {
	const (
		P = flow.Private
		U = flow.Untrusted
		S = flow.Sink
	)
	tests := []struct {
		name   string
		params []string
		ann    Annotations
		want   flow.Labels
	}{
		// Names from the npm reference servers.
		{"read_text_file", []string{"path", "head", "tail"}, Annotations{ReadOnly: hint(true), OpenWorld: hint(false)}, P},
		{"read_multiple_files", []string{"paths"}, Annotations{}, P},
		{"list_directory", []string{"path"}, Annotations{}, P},
		{"search_files", []string{"path", "pattern"}, Annotations{}, P},
		// Destructive in a closed world (server-filesystem's write_file):
		// it changes the machine, not the world; the name adds nothing.
		{"write_file", []string{"path", "content"}, Annotations{ReadOnly: hint(false), Destructive: hint(true), OpenWorld: hint(false)}, 0},
		{"delete_object", []string{"key"}, Annotations{Destructive: hint(true)}, S},
		{"read_graph", nil, Annotations{ReadOnly: hint(true)}, P},
		{"search_nodes", []string{"query"}, Annotations{}, P},
		{"create_entities", []string{"entities"}, Annotations{}, S},
		{"echo", []string{"message"}, Annotations{ReadOnly: hint(true), OpenWorld: hint(false)}, 0},
		{"get-sum", []string{"a", "b"}, Annotations{ReadOnly: hint(true)}, 0},
		{"get-env", nil, Annotations{}, P}, // the server's environment (testdata/catalogues README)
		// AgentDojo-style names.
		{"send_email", []string{"recipients", "subject", "body"}, Annotations{}, S},
		{"get_unread_emails", nil, Annotations{}, P | U},
		{"search_emails", []string{"query"}, Annotations{}, P | U},
		{"read_channel_messages", []string{"channel"}, Annotations{}, P | U},
		{"send_direct_message", []string{"recipient", "body"}, Annotations{}, S},
		{"post_webpage", []string{"url", "content"}, Annotations{}, S},
		{"get_webpage", []string{"url"}, Annotations{}, U | S},
		{"send_money", []string{"recipient", "amount"}, Annotations{}, S},
		{"get_most_recent_transactions", []string{"n"}, Annotations{}, P},
		{"get_balance", nil, Annotations{}, P},
		{"create_calendar_event", []string{"title", "participants"}, Annotations{}, S},
		{"getCalendarEvents", nil, Annotations{}, P | U}, // invitations from outside senders
		// The web.
		{"fetch", []string{"url"}, Annotations{}, U | S},
		{"search_web", []string{"query"}, Annotations{}, U},
		{"browse", []string{"url"}, Annotations{}, U | S},
		// Annotations only add.
		// openWorldHint with readOnlyHint adds untrusted only to a tool the
		// reader does not understand: vendors set it on reads of the user's
		// own account. The reader reads a lookup as the user's data.
		{"lookup_order", []string{"order_id"}, Annotations{ReadOnly: hint(true), OpenWorld: hint(true)}, P},
		{"frobnicate", []string{"city"}, Annotations{ReadOnly: hint(true), OpenWorld: hint(true)}, U},
		{"do_thing", nil, Annotations{OpenWorld: hint(true)}, S},
		{"send_fax", []string{"number"}, Annotations{ReadOnly: hint(true), OpenWorld: hint(false), Destructive: hint(false)}, S},
	}
	pol := mustPolicy(t, "version: 1\n")
	for _, tt := range tests {
		got := Label(pol, "srv", ToolDef{Name: tt.name, Params: tt.params, Annotations: tt.ann})
		if got.Labels != tt.want {
			t.Errorf("%s: labels %s, want %s (why %q)", tt.name, got.Labels, tt.want, got.Why)
		}
		if got.Labels != 0 && len(got.Why) == 0 {
			t.Errorf("%s: labels without a reason", tt.name)
		}
	}
}

func TestLabelPolicyIsStrongest(t *testing.T) {
	pol := mustPolicy(t, `version: 1
tools:
  - {match: "notes:*", labels: [private]}
  - {match: "web:fetch", labels: [untrusted, sink]}
  - {match: "mail:send_email", labels: []}
`)
	tests := []struct {
		server, tool string
		ann          Annotations
		want         flow.Labels
		listed       bool
	}{
		{"notes", "share_note", Annotations{}, flow.Private, true},                                  // policy replaces the heuristic (which says sink)
		{"notes", "share_note", Annotations{OpenWorld: hint(true)}, flow.Private | flow.Sink, true}, // annotations still add
		{"web", "fetch", Annotations{}, flow.Untrusted | flow.Sink, true},
		{"mail", "send_email", Annotations{}, 0, true},           // an explicit empty list is a decision
		{"other", "send_email", Annotations{}, flow.Sink, false}, // unlisted: heuristic
	}
	for _, tt := range tests {
		got := Label(pol, tt.server, ToolDef{Name: tt.tool, Annotations: tt.ann})
		if got.Labels != tt.want || got.Listed != tt.listed {
			t.Errorf("%s:%s: labels %s listed %v, want %s %v (why %q)", tt.server, tt.tool, got.Labels, got.Listed, tt.want, tt.listed, got.Why)
		}
	}
}

func TestSplitName(t *testing.T) {
	tests := map[string][]string{
		"read_text_file":    {"read", "text", "file"},
		"get-sum":           {"get", "sum"},
		"getCalendarEvents": {"get", "calendar", "events"},
		"HTTPRequest":       {"http", "request"},
		"search.web":        {"search", "web"},
		"":                  nil,
	}
	for in, want := range tests {
		if got := splitName(in); !slices.Equal(got, want) {
			t.Errorf("splitName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLabelGeneralRules: one invented tool per class of mistake the
// reader made on real catalogues (testdata/catalogues), each labelled the
// way that set's rules label the real ones.
func TestLabelGeneralRules(t *testing.T) {
	const (
		P = flow.Private
		U = flow.Untrusted
		S = flow.Sink
	)
	str := func(name string, required bool) Param { return Param{Name: name, Type: "string", Required: required} }
	tests := []struct {
		server, name, desc string
		schema             []Param
		want               flow.Labels
	}{
		// A documentation, papers or news server's reads return what
		// others wrote; a document workspace's are the user's own.
		{"rust-docs", "list_crate_items", "List the items of a crate.", []Param{str("crate", true)}, U},
		{"news-digest", "get_headlines", "Today's headlines for a topic.", []Param{str("topic", true)}, U},
		{"google-docs", "list_documents", "List the user's documents.", nil, P},
		// A video platform is an open forum: its videos are strangers'.
		{"vimeo", "get_video_info", "Details of a video.", []Param{str("videoId", true)}, U},
		// Unpublishing writes; connecting two records links them.
		{"cms", "unpublish_page", "", []Param{str("pageId", true)}, S},
		{"graphdb", "connect_nodes", "Link two nodes.", []Param{str("from", true), str("to", true)}, S},
		{"db", "connect", "Connect to the database.", []Param{str("dsn", true)}, 0},
		// A search provider named in a tool's name is queried by it.
		{"metasearch", "tavily_lookup", "Look up a question.", []Param{str("query", true)}, U},
		// What follows a preposition is a criterion: the description
		// names what is searched; a doer noun there is no verb.
		{"inbox", "search_by_subject", "Search emails by words in their subject.", []Param{str("subject", true)}, P | U},
		{"imap", "list_unread_from_sender", "List unread messages from one sender.", []Param{str("sender", true)}, P | U},
		{"notifier", "email_sender", "", []Param{str("to", true), str("body", true)}, S},
		// Running a report reads; running the server's own program with
		// nothing to run among its parameters reads; a command is run.
		{"metrics", "run_report", "Run a report of page views.", []Param{str("startDate", true), str("metrics", false)}, P},
		{"deadcode", "deadcode_run", "Run the analyser and return the unused exports it found.", []Param{str("cwd", false)}, P},
		{"sandbox", "run", "Run a command in the sandbox.", []Param{str("command", true)}, P | S},
		{"queue", "promote_task", "", []Param{str("taskId", true)}, S},
		// A tool said to manage something whose operations only read.
		{"planner", "planner_projects", "Manage projects: list them or get one.", []Param{{Name: "operation", Type: "string", Required: true, Enum: "list|get"}, str("projectId", false)}, P},
		{"planner", "planner_tasks", "Manage tasks: list or create them.", []Param{{Name: "operation", Type: "string", Required: true, Enum: "list|create"}, str("title", false)}, P | S},
		// A modifier before a verb: the verb after it decides.
		{"crm", "crm_batch_read_contacts", "", []Param{str("ids", true)}, P},
		{"crm", "crm_bulk_delete_contacts", "", []Param{str("ids", true)}, S},
		// pull/merge before request are nouns; request alone is a verb.
		{"forge", "pull_request_get", "", []Param{str("owner", true), str("repo", true)}, P | U},
		{"forge", "request_reviewer", "", []Param{str("owner", true), str("repo", true)}, S},
		{"desk", "respond_to_ticket", "", nil, S},
		{"mailer", "compose_newsletter", "", nil, S},
		// The server's own name inside a name is no object.
		{"tavily", "lookup_answer_tavily", "", []Param{str("query", true)}, U},
		// A bare verb: the description names its object.
		{"dropbox", "search", "Search for files in the user's Dropbox", []Param{str("query", true)}, P},
		// Local git: list modes read, pull brings others' commits, clone is a sink.
		{"git", "git_branch", "Manage branches: list, create or delete branches.", []Param{str("path", false), str("mode", false)}, P},
		{"git", "git_pull", "Pull changes from the remote.", []Param{str("path", false)}, P | U},
		{"git", "git_clone", "Clone a repository.", []Param{str("url", true), str("path", true)}, U | S},
		{"git", "git_remote", "Manage remotes: list remotes or add one.", []Param{str("path", false), str("url", false)}, P},
		// A calendar server's events are invitations.
		{"calendar", "list_events", "", nil, P | U},
		// Mail the user sent is private only.
		{"mailer", "list_emails", "List emails sent through the API.", nil, P},
		{"mailer", "list_emails", "List emails received at the inbox.", nil, P | U},
		// A head that is a directory: the user's own.
		{"chat", "get_forum_channels", "", nil, P},
		// A whole-name HTTP method with a URL returns the answer.
		{"browser", "browser_http_post", "", []Param{str("url", true), str("body", false)}, U | S},
		// History navigation visits no new host; closing the server's own browser is plumbing.
		{"browser", "browser_go_back", "", nil, 0},
		{"browser", "browser_close", "", nil, 0},
		{"browser", "session_create", "Create a browser session", nil, 0},
		// Searching a code host for organisations returns their profiles.
		{"github", "search_orgs", "", []Param{str("query", true)}, U},
		// A manage tool that lists is also a read.
		{"mailer", "manage_webhooks", "Manage webhooks: list, create or delete them.", nil, P | S},
		{"db", "generate_types", "", nil, P},
		{"crm", "research_company", "", []Param{str("name", true)}, U},
		{"hosting", "get_project_url", "", []Param{str("project_id", true)}, P},
		{"hosting", "update_auth_config", "", []Param{str("project_id", true)}, S},
		// A repository named by id, not by a local path, is on a code host:
		// its files and commits are anyone's; its checks are CI metadata.
		{"devops", "get_file_content", "", []Param{str("repositoryId", true), str("path", true)}, P | U},
		{"devops", "list_commits", "", []Param{str("repositoryId", true)}, P | U},
		{"devops", "get_pull_request_checks", "", []Param{str("repositoryId", true), str("pullRequestId", true)}, P},
		{"git", "git_log", "", []Param{str("repo_path", true)}, P},
		{"forge", "forge_clone", "Clone a repository", []Param{str("repoSlug", true)}, U | S},
		// Work items, stories and activity are a tracker's collaborative text.
		{"boards", "list_work_items", "", []Param{str("projectId", true)}, P | U},
		{"tasks", "get_task_stories", "", []Param{str("task_id", true)}, P | U},
		{"boards", "get_recent_activity", "", []Param{str("boardId", true)}, P | U},
		// Attaching and watching change the remote service; picking the
		// active board is the server's own state.
		{"boards", "attach_file_to_card", "", []Param{str("cardId", true), str("fileUrl", true)}, S},
		{"boards", "watch_list", "Subscribe to a list", []Param{str("listId", true)}, S},
		{"boards", "set_active_board", "", []Param{str("boardId", true)}, 0},
		// A noun after an article is no verb: "a set of documents".
		{"vectors", "rerank-documents", "Rerank a set of provided documents by relevance.", []Param{str("query", true)}, 0},
		// A search engine named as the object is the open web, unless a
		// service of the user's follows it.
		{"scraper", "search_engine", "", []Param{str("query", true)}, U},
		{"research", "search_with_bing", "", []Param{str("query", true)}, U},
		{"workspace", "search_google_drive", "", []Param{str("query", true)}, P},
		// A page the description names is a browser's.
		{"research", "take_screenshot", "Take a screenshot of the current page", nil, U},
		// An agent that browses reads pages and acts in them; a user agent
		// string is neither.
		{"cloud", "browser_use_agent", "Runs a browser automation agent in a cloud browser.", []Param{str("task", true)}, U | S},
		{"browser", "set_custom_user_agent", "Set a custom User Agent for the browser", []Param{str("userAgent", true)}, 0},
		// Generated media and the server's own health carry no user data.
		{"art", "generate_image", "", []Param{str("prompt", true)}, 0},
		{"boards", "get_health_detailed", "", nil, 0},
		{"db", "list_connections", "", nil, P},
		// The doer of a verb, last in a name, is its verb.
		{"hosting", "hosting-deploy-services-reader", "Select and run one of the following read operations", nil, P},
		{"hosting", "hosting-project-services-updater", "Select and run one of the following write operations", nil, S},
		// Counts are numbers, nobody's text.
		{"tracker", "count_issues", "Returns count of issues", nil, P},
		// Marketplace listings and an open forum's posts are strangers'
		// text; a description's object ends where a preposition starts.
		{"rentals", "rentals_search", "Search for rental listings with various filters and pagination", []Param{str("location", true)}, U},
		{"reddit", "get_post_details", "Fetch a Reddit post with its comments.", []Param{str("post_id", true)}, U},
		{"reddit", "get_inbox_messages", "", nil, P | U},
		{"tracker", "epics-search", "", []Param{str("query", true)}, P | U},
		// The server's own health, whatever the verb.
		{"crm", "aaa-health-check", "Run a health check of the server", nil, 0},
		// A browser action that can return the page, and a new tab at a URL.
		{"devtools", "click", "Clicks on the provided element", []Param{str("uid", true), {Name: "includeSnapshot", Type: "boolean"}}, U | S},
		{"devtools", "hover", "Hover over the provided element in the browser", []Param{str("uid", true), {Name: "includeSnapshot", Type: "boolean"}}, U},
		// Public reference data is nobody's; a database's search is its records.
		{"meteo", "weather_forecast", "Get the weather forecast for a location", []Param{str("latitude", true)}, 0},
		{"meteo", "air_quality", "Get air quality data for a location", []Param{str("latitude", true)}, 0},
		{"elasticsearch", "search", "Perform a search against an index", []Param{str("index", true), str("query", true)}, P},
		// A breadcrumb description's verb starts one of its parts.
		{"suite", "docx_v1_document_rawContent", "[Suite]-Docs-Document-Obtain the plain text content of the document", nil, P},
		{"suite", "calendar_v4_calendar_primary", "[Suite]-Calendar-Calendar management-Query primary calendar information", nil, P},
		// A run's details are a read, not a run.
		{"infra", "runDetails", "Fetches the details of a workspace run", []Param{str("run_id", true)}, P},
		// A phone is a device like a browser: its screen is what apps
		// show, its apps and settings are local.
		{"mobile", "mobile_take_screenshot", "Take a screenshot of the mobile device", nil, U},
		{"mobile", "mobile_install_app", "Install an app on the device", []Param{str("path", true)}, 0},
		{"mobile", "mobile_set_orientation", "Change the screen orientation", []Param{str("orientation", true)}, 0},
		// Clearing values on a remote service is a write; DML too.
		{"sheets", "sheets_clear_values", "Clear values from a range", []Param{str("spreadsheetId", true)}, S},
		{"crm", "crm_dml_records", "Insert, update or delete records", []Param{str("operation", true)}, S},
		// Setting up, resuming and acknowledging change a remote service; a
		// wiki's page is published, a browser's page is plumbing.
		{"quality", "quality_setup_repository", "Use this tool to setup a repository.", []Param{str("repository", true)}, S},
		{"billing", "subscriptions-resume", "", []Param{str("id", true)}, S},
		{"billing", "webhooks-acknowledge-event", "", []Param{str("id", true)}, S},
		{"wiki", "create_page", "Create a new page in a space", []Param{str("spaceKey", true), str("title", true)}, S},
		{"browser", "browser_create_page", "", nil, 0},
		// A weather server's reads are public data; a map provider's
		// searches are places businesses describe; closing the browser
		// is plumbing; links on the page are the page's.
		{"weather", "get_current_conditions", "Get current weather conditions for a location", []Param{str("location", true)}, 0},
		{"amap", "maps_text_search", "", []Param{str("keywords", true)}, U},
		{"browser", "browser_close", "Close the browser when the task is done", nil, 0},
		{"browser", "browser_read_links", "Get all links on the current page", nil, U},
		{"charts", "generate_mermaid_diagram", "", []Param{str("code", true)}, 0},
		// An operation switch that can read makes a write private too; an
		// HTTP method switch does not.
		{"db", "pg_manage_indexes", "", []Param{{Name: "operation", Type: "string", Enum: "get|create|drop|reindex", Required: true}}, P | S},
		{"api", "create_request", "", []Param{{Name: "method", Type: "string", Enum: "get|post|put|delete"}}, S},
		// Market data is public; a server's own cache and a browser's
		// cookies are local; mail accounts and rules are settings, their
		// messages still others'; Auth's get is a get; SQL from natural
		// language is computed.
		{"ccxt", "get-orderbook", "", []Param{str("symbol", true)}, 0},
		{"ccxt", "clear-cache", "", nil, 0},
		{"hosting", "flush-cdn-cache", "", []Param{str("endpoint_id", true)}, S},
		{"selenium", "add_cookie", "", []Param{str("name", true)}, 0},
		{"docs", "list_mail_rules", "", nil, P},
		{"mail", "get_account_messages", "", nil, P | U},
		{"firebase", "auth_get_user", "", []Param{str("uid", true)}, P},
		{"apm", "generate_dql_from_natural_language", "", []Param{str("text", true)}, 0},
		// The server's own tool set, account choice and a calendar's view.
		{"hub", "getEnabledTools", "", nil, 0},
		{"office", "select-account", "Select the account later calls use", []Param{str("accountId", true)}, 0},
		{"office", "get-calendar-view", "", []Param{str("startDateTime", true)}, P | U},
		{"devtools", "new_page", "Open a new tab in the browser and load a URL.", []Param{str("url", false)}, U | S},
		// Public geodata is nobody's: routes and elevations.
		{"maps", "maps_directions", "Get directions between two points", []Param{str("origin", true), str("destination", true)}, 0},
		// What a fetch of the caller's URL returns is the web's, not the
		// user's own data; a local file read that also takes URLs is both.
		{"webfetch", "fetch_yaml", "Fetch a URL and parse it as YAML.", []Param{str("url", true)}, U | S},
		{"grabber", "download_csv", "Download a CSV file from a URL.", []Param{str("url", true)}, U | S},
		{"fs", "read_file", "Read a file from disk, or a URL.", []Param{str("path", true), {Name: "isUrl", Type: "boolean"}}, P | U | S},
		{"gdocs", "get_document", "Get a document by its URL.", []Param{str("url", true)}, P | U | S},
		// Reading feedback reads what others wrote; sending it is a sink.
		{"survey", "list_feedback", "List customer feedback.", nil, P | U},
		{"vendor", "send_feedback", "", []Param{str("message", true)}, S},
		{"survey", "get_feedback_link", "", nil, P},
		// Checking a box in a page clicks it; checking whether it is
		// visible asks a question; a yes/no answer carries no data, unless
		// the question takes a URL.
		{"puppeteer", "puppeteer_check", "Check a radio button or a checkbox.", []Param{str("selector", true)}, S},
		{"playwright", "browser_uncheck", "Clear a box.", []Param{str("selector", true)}, S},
		{"chrome", "element_is_hidden", "", []Param{str("selector", true)}, 0},
		{"iam", "has_permission", "", []Param{str("action", true)}, 0},
		{"probe", "is_reachable", "", []Param{str("url", true)}, U | S},
		// A debugger's breakpoints and sessions are local; launching the
		// program it debugs runs code. Debug logs of a remote service are
		// that service's.
		{"gdb", "set_breakpoint", "Set a breakpoint at a line.", []Param{str("file", true), {Name: "line", Type: "integer", Required: true}}, 0},
		{"gdb", "create_debug_session", "", nil, 0},
		{"lldb", "start_debugging", "Start the program under the debugger.", []Param{str("program", true)}, S},
		{"crm", "delete_debug_logs", "", nil, S},
		// Starting a conversation sends its first message; completing a
		// task or bounty changes it on the service.
		{"people", "start_conversation", "", []Param{str("person_id", true), str("message", true)}, S},
		{"tasks", "complete_ticket", "", []Param{str("ticket_id", true)}, S},
		{"browser", "start_session", "", nil, 0},
		// What the page shows in a browser: its title, an element's
		// attributes.
		{"playwright", "browser_get_title", "The current page's title.", nil, U},
		{"selenium", "get_element_attribute", "", []Param{str("selector", true), str("attribute", true)}, U},
	}
	pol := mustPolicy(t, "version: 1\n")
	for _, tt := range tests {
		got := LabelWith(pol, tt.server, ToolDef{Name: tt.name, Description: tt.desc, Schema: tt.schema}, LabelOptions{NoRegistry: true})
		if got.Labels != tt.want {
			t.Errorf("%s/%s: labels %s, want %s (why %q)", tt.server, tt.name, got.Labels, tt.want, got.Why)
		}
	}
}
