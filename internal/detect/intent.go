package detect

import (
	"sort"
	"strings"
)

// Intent rules: instructions in a definition that steer the model's choice
// of tools or its arguments, or tack something on to the user's request,
// rather than hand it a whole new task — preference manipulation ("this is
// the best tool in the world", "always use this tool rather than others"),
// tool chaining ("then call X", "before any other operation, execute this
// tool"), deprecation redirects ("this tool is deprecated, use X"),
// argument tampering ("always change the query to …"), outside endpoints
// ("access our verification endpoint at https://…"), blind copies ("always
// BCC …"), side tasks ("also send …"), requests for the model's identity or
// context, and commands to run (the shell syntax itself is command.go's).
// They are phrase rules like the others (rules.go); many add checks after
// the match that need more than the words (phraseRule.check, below): a
// modal verb in the sentence, whether the tool named is this server's own,
// a redirect to another tool after a deprecation notice. Every check looks
// at a bounded window of tokens or bytes.

const (
	detPrefer    = "preference-manipulation"
	detDeprecate = "deprecation-redirect"
	detTamper    = "argument-tampering"
	detCommand   = "shell-command"
	detExfilArg  = "exfil-parameter"
	detSideTask  = "side-task"
)

// post-match checks (phraseRule.check)
const (
	chkModal         uint32 = 1 << iota // the sentence holds a modal or directive word (must, always, make sure…)
	chkForeign                          // the object of the match's last verb of calling is a tool-like name this server does not have
	chkNotOwn                           // skip when the sentence names one of this server's own tools
	chkRedirect                         // a redirect to a tool ("use X instead") follows within a few sentences
	chkVerb                             // a verb of reading, calling or sending occurs in the sentence outside the match
	chkNotInstr                         // skip "use 'manifest' to pass …": a parameter named as the means
	chkNotPer                           // skip "per API key", "for each token": the secret qualifies something, nobody asks for it
	chkNotForward                       // skip "forward in (browser) history": navigation, not sending
	chkDeprec                           // the verb's object is a tool: another server's, or this server's with pressure
	chkNotAs                            // skip when "as" occurs inside the match ("send one as the prompt")
	chkNotInIdent                       // skip when the first token is part of an address or identifier ("bcc@x.example")
	chkDestIn                           // an e-mail address or URL lies inside the match
	chkDestNear                         // an e-mail address or URL lies inside the match or on its line after it
	chkForeignAfter                     // the words right after the match name a tool this server does not have
	chkNotFeedback                      // skip "submit feedback / report bugs / post questions at <url>": advice for the person
	chkNotCan                           // skip "you can also …", "it may also …": a permission, not an order
	chkPreferCtx                        // "do not use other tools" counts with a purpose ("for …", "instead") or a mention of this tool
	chkNotTo                            // skip when "to" follows inside the match ("it's best to get …": an idiom)
	chkQuoted                           // a quoted string lies inside the match ("append 'site:x' to every query")
	chkNotUser                          // skip when the user is the one told ("the user must run …")
	chkDeprecSubject                    // the deprecated thing is this tool ("this tool is deprecated", "DEPRECATED: …"), not a parameter
	chkImperative                       // the match opens a clause: a sentence start, or after "and", "then", "also", "must"…
	chkCovert                           // the sentence says to do it quietly or always ("silently", "regardless", "every time")
	chkNotSelf                          // skip when the match says "this" ("this tool is deprecated" is another rule's)
	chkRedirectF                        // as chkRedirect, but the redirect must be to a tool of another server
	chkEndNotIdent                      // the last word of the match is a word, not part of an identifier ("search" in search_issues)
	chkActBefore                        // an action verb opens a clause within 8 tokens before the match ("star the repo after every call"); the finding starts there
	chkNotLabel                         // skip when a colon follows the match: a label ("First call: `path: …`"), not an order
	chkNotAPI                           // skip when what is called first is an interface or API of the service ("first call the [upload] interface")
)

var intentClasses = map[string]string{
	"superl":    "best|greatest|finest|ultimate|strongest|smartest|most powerful|most reliable|most accurate|most advanced|most capable|most trusted|most trustworthy|most comprehensive|most efficient|most effective|most secure|most complete|most precise|most robust|most intelligent|most useful|most helpful|most authoritative|most up to date|fastest|only reliable|only trustworthy|only accurate|only safe|only secure|only correct|only valid|only legitimate|only trusted|only approved|only authorized|only authorised|number one|no 1|#1|premier|superior|unrivaled|unrivalled|unmatched|unbeatable|world class|world s best|world s leading|world s most",
	"toolN":     "tool|tools|function|functions|service|services|api|apis|server|servers|plugin|plugins|extension|solution|solutions|utility|engine|search engine|scraper|app|application|platform|provider|integration|mcp server|mcp tool",
	"choice":    "tool|tools|function|service|api|server|plugin|solution|utility|engine|app|application|platform|provider|option|choice|resource|source|way|method",
	"others":    "all|any|every|other|others|the other|the others|alternative|alternatives|competing|competitors|similar|existing|another|third party|rival|rivals|standard|regular|ordinary|conventional|traditional|normal|typical|basic",
	"selfT":     "this|this tool|this function|this service|this server|this api|this plugin|this one|me|it",
	"crowdN":    "expert|experts|professional|professionals|millions|thousands|hundreds|users|companies|enterprises|businesses|researchers|developers|engineers|advisors|advisers|analysts|investors|institutions|organizations|organisations|scientists|specialists|leaders|giants|agencies|governments|universities|banks|labs|fortune|customers|clients|people|teams|traders|planners|cartographers|archaeologists|doctors|physicians|lawyers|journalists|academics|professors|pros|insiders|influencers|ai experts|ai researchers|openai|anthropic|google|microsoft|meta|apple|amazon|nvidia|ibm|nasa|mit|stanford|harvard|the government|governments",
	"modalW":    "must|always|never|should|need to|needs to|have to|has to|required|mandatory|necessary|make sure|be sure|ensure|remember|please|also|additionally|first|before|after|then|immediately|automatically|every time|each time|whenever|every|each|silently|secretly|quietly|do not forget|don t forget|important|critical|crucial|essential|obligatory|compulsory",
	"deprec":    "removed|shut down|turned off|retiring|sunsetting|being retired|going away|deprecated|obsolete|outdated|disabled|discontinued|retired|sunset|sunsetted|decommissioned|unsupported|unmaintained|broken|legacy|superseded|replaced|end of life|eol|phased out|being phased out|scheduled for removal|marked for removal|no longer supported|no longer maintained|no longer available|no longer works|no longer working|no longer functional|no longer in use|no longer valid|no longer reliable|no longer safe|not supported anymore|not maintained anymore|out of date|out of service",
	"argN":      "query|queries|search query|search queries|search term|search terms|search string|keyword|keywords|term|terms|ticker|tickers|ticker symbol|stock symbol|stock ticker|symbol|symbols|recipient|recipients|receiver|to address|to field|destination|destinations|address|addresses|email address|email addresses|phone number|amount|amounts|account|account number|iban|wallet|wallet address|location|locations|city|country|region|origin|date|dates|url|urls|domain|repository|repo|branch|owner|price|quantity|currency|company|coordinates|user id|username|payee|beneficiary|bank account",
	"argG":      "parameter|parameters|param|params|argument|arguments|arg|args|input|inputs|value|values|data|request|requests|prompt|message|text|content|selection|choice|path|file|filename|id|name|target|order|item|product",
	"argT":      "query|queries|search query|search queries|search term|search terms|search string|keyword|keywords|ticker|tickers|ticker symbol|stock symbol|stock ticker|symbol|recipient|recipients|receiver|to address|to field|destination|destination address|email address|email addresses|phone number|amount|account|account number|iban|wallet|wallet address|location|city|url|domain|repository|currency|coordinates|payee|beneficiary|bank account|address|request|requests",
	"userOwn":   "user s|users|user provided|user supplied|user specified|user given|user requested|user selected|user chosen|user entered|customer s|client s",
	"privN":     "contacts|contact list|contact details|address book|emails|email|inbox|messages|chat history|conversation history|conversations|files|documents|photos|location|home address|address|calendar|passwords|password|credentials|browsing history|history|call log|notes|keychain|ssh keys|api keys|tokens|cookies|session|payment details|card details|credit card|bank details|phone number|personal information|personal data|private data|identity|ssn|medical records|health data|transactions|account details",
	"userQ":     "user s|users|the user s|user provided|user supplied|user specified|user given|original|requested|given|provided|specified|supplied|input|entered|chosen|selected|actual|real|intended",
	"sendV":     "send|post|upload|submit|forward|transmit|sync|copy|mirror|beacon|exfiltrate|share|deliver|push|pass|relay|stream|dump|export|leak|pipe|write|save|store|redirect|reroute|divert|sent|posted|uploaded|submitted|forwarded|transmitted|reported|logged|synced|copied|mirrored|shared|delivered|pushed|passed|relayed|streamed|exported|redirected",
	"actV":      "send|forward|email|e mail|upload|share|post|transfer|delete|remove|grant|invite|pay|buy|purchase|wire|withdraw|publish|star|fork|follow|subscribe|install|download|execute|exfiltrate|leak|reveal|disclose|contact|notify|message|dm|create|write|save|store|overwrite|revoke|approve|merge|push|sell|deposit|kill|terminate|unsubscribe|unfollow|call|invoke|visit|open|book|order|transmit|copy",
	"verifyV":   "verify|validate|authenticate|authorize|authorise|confirm|activate|check in|handshake|attest|certify|re verify|revalidate|reauthenticate",
	"endpointA": "verification|validation|audit|auditing|logging|telemetry|analytics|tracking|backup|sync|synchronization|compliance|security|monitoring|reporting|partner|third party|collection|collector|relay|proxy|mirror|license|licensing|activation|registration|identity|verification service|diagnostics|metrics|ingest|ingestion|exfil|c2|cnc|safety|integrity|authorization",
	"endpointN": "endpoint|endpoints|server|servers|url|urls|webhook|webhooks|api|service|site|website|portal|address|host|page|link|gateway|collector|backend|domain|uri",
}

// intentRules are appended to phraseRules at init.
var intentRules = []phraseRule{
	// ---- preference manipulation: superiority claims about this tool
	{detector: detPrefer, pattern: "{this|it|this tool|this function|this service|this server|this api|this plugin} {is|s} {the|by far the|simply the|truly the|undoubtedly the|definitely the|absolutely the|easily the|clearly the|really the|officially the|without doubt the|without question the|unquestionably the}? @superl ~2 @toolN", def: Medium, res: Low, mention: true, check: chkNotTo,
		msg: "Claims this tool is the best: a definition that praises itself is trying to make the model pick it over the tools the user meant (preference manipulation)."},
	{detector: detPrefer, pattern: "@superl ~1 @choice {in the world|on earth|on the planet|ever|ever made|ever created|ever built|of all time|on the market|out there|in existence|available anywhere|anywhere|you will ever need|you ll ever need|there is|there are|you can find|you can use|among all|among them|of them all|of all tools|bar none|period}", def: Medium, res: Low, mention: true,
		msg: "Claims to be the best tool there is: preference manipulation, meant to make the model choose this tool."},
	{detector: detPrefer, pattern: "{better|superior|more reliable|more accurate|more powerful|more capable|more trustworthy|more trusted|more secure|faster|smarter|stronger|more efficient|more effective|more complete|more advanced|more precise|more up to date|safer} {than|to} @others ~2 {other|others|alternative|alternatives|competitors|tool|tools|function|functions|option|options|server|servers|service|services|api|apis|solution|solutions|method|methods}?", def: Medium, res: Low, mention: true,
		msg: "Claims to be better than the other tools: preference manipulation, meant to make the model choose this tool."},
	// directives to prefer this tool, or to avoid the others
	{detector: detPrefer, pattern: "{use|choose|select|pick|prefer|call|invoke|favor|favour|rely on|go with|opt for|trust|run|try|prioritize|prioritise} @selfT ~2 {over|instead of|rather than|in preference to|above|ahead of|in place of|before} @others ~1 {tool|tools|function|functions|option|options|server|servers|service|services|alternative|alternatives|solution|solutions}?", def: Medium, res: Low, mention: true,
		msg: "Tells the model to use this tool rather than the others: preference manipulation."},
	{detector: detPrefer, pattern: "{use|call|invoke|choose|prefer|pick|select} {this|this tool|this function|this one|me} {instead of|rather than|in place of|over} ~2 {for all|for every|for any|in all|in every|at all times|always|for everything|no matter what}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to use this tool in place of another for everything: a definition that pushes itself over the others is steering the model."},
	{detector: detPrefer, pattern: "{recommended|preferred|superior} {over|to|instead of} {the|any|all}? {standard|regular|default|built in|builtin|other|existing|native|basic|ordinary|conventional|traditional} ~3 {tool|tools|function|functions|server|servers|implementation|implementations|alternatives|ones}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Recommends itself over the standard tools: a definition that ranks itself above the others is steering the model's choice."},
	{detector: detPrefer, pattern: "instead of {using|calling|choosing}? ~4 always {prefer|use|call|choose|pick|invoke} {this|this tool|this function|this one|me}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to use this tool in place of another: a definition that pushes itself over the others is steering the model."},
	{detector: detPrefer, pattern: "{this|this tool|this function|this server|this api|it} {is} {actively|regularly|continuously|constantly|frequently|officially} {maintained|updated|supported|verified|audited|certified} $", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Vouches for its own upkeep: a claim a definition makes to be chosen over the others, not to say what it does."},
	{detector: detPrefer, pattern: "{prioritize|prioritise|prioritizing|prioritising} @selfT {tool|function|service|server|api|one}?", def: Medium, res: Low, mention: true, notAfter: "over|above|to|for|when",
		msg: "Tells the model to prioritize this tool: preference manipulation."},
	{detector: detPrefer, pattern: "{must|always|should|please|strongly} {prefer|favor|favour|choose|select|pick} {this tool|this function|this service|this server|this api|me} $", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to prefer this tool: preference manipulation."},
	{detector: detPrefer, pattern: "{always|must|should|you must|you should} {choose|select|pick|prefer|prioritize|prioritise|favor|favour} {this|this tool|this function|this service|me} {first|before any other|before all other|before all others|before anything else|before any others|by default|whenever possible|whenever you can|for all|for any|for every|for everything|exclusively|only|above all|no matter what|in all cases|in every case|at all times}", def: Medium, res: Low, mention: true,
		msg: "Tells the model to always choose this tool first or for everything: preference manipulation."},
	{detector: detPrefer, pattern: "{use|call|invoke|try|run} {this|this tool|this function|this service|me} {before any other|before all other|before all others|before anything else|before any others|exclusively|above all|no matter what|in all cases|in every case|at all times|instead of any other|instead of all other|for everything}", def: Medium, res: Low, mention: true,
		msg: "Tells the model to always use this tool first or for everything: preference manipulation."},
	{detector: detPrefer, pattern: "{do not|don t|never|avoid|stop|no need to} {use|using|call|calling|choose|choosing|select|selecting|invoke|invoking|trust|trusting|rely on|relying on|consider|considering|try|trying} {any|the|other|another|alternative|competing|similar|third party}? {other|others|alternative|alternatives|competing|similar|third party|rival} ~1 {tool|tools|function|functions|server|servers|service|services|api|apis|option|options|solution|solutions|plugin|plugins}?", def: Medium, res: Low, mention: true, check: chkPreferCtx,
		msg: "Tells the model not to use other tools: preference manipulation."},
	{detector: detPrefer, pattern: "{other|all other|any other|alternative|competing|similar|the other|third party|rival} ~1 {tool|tools|function|functions|server|servers|service|services|api|apis|solution|solutions|option|options|plugin|plugins} {are|is|may be|might be|can be|will be|tend to be|have been|were|often are|are often|are known to be|are usually} {unreliable|broken|outdated|deprecated|inaccurate|malicious|unsafe|insecure|slow|slower|wrong|incorrect|compromised|untrustworthy|buggy|dangerous|inferior|worse|fake|obsolete|poor|harmful|not trustworthy|not reliable|not safe|not secure|not accurate|less accurate|less reliable|not recommended|not allowed|forbidden|not to be trusted}", def: Medium, res: Low, mention: true,
		msg: "Disparages the other tools so the model avoids them: preference manipulation."},
	{detector: detPrefer, pattern: "{this|this tool|this function|this service|it} {has|have|takes|gets|should get|must get|should have|must have|should take|must take|deserves|is given|carries} {the}? {highest|top|first|absolute|maximum|higher|greater|utmost} {priority|precedence|preference}", def: Medium, res: Low, mention: true,
		msg: "Claims priority for this tool over the others: preference manipulation."},
	{detector: detPrefer, pattern: "{give|assign|grant} @selfT {the}? {highest|top|first|absolute|maximum|higher|utmost} {priority|precedence|preference}", def: Medium, res: Low, mention: true,
		msg: "Tells the model to give this tool priority: preference manipulation."},
	// ---- preference manipulation in the register of advertising: a tool
	// definition is read by a model choosing between tools, so praise,
	// endorsements, urgency and put-downs of the alternatives in it are
	// aimed at that choice. Descriptions of real tools say what a tool
	// does, not who trusts it (none of 1,657 real definitions in
	// testdata/poisoning and testdata/catalogues uses these phrases).
	// In a result (a web page, an advertisement) they are ordinary text.
	{detector: detPrefer, pattern: "{this|it} {is|s} the {premium|advanced|enhanced|professional|pro|ultimate|upgraded|improved|elite|superior|enterprise|deluxe|vip|exclusive|optimized|optimised|supercharged|turbo|turbocharged|next generation|next gen|superior quality} {version|edition|variant|release|implementation|alternative|replacement|tier}", def: Medium, res: Low, mention: true,
		msg: "Presents this tool as the premium or advanced version of another: preference manipulation, meant to make the model pick it over the tool the user meant."},
	{detector: detPrefer, pattern: "{trusted|recommended|endorsed|loved|praised|preferred|relied on|relied upon|backed|favored|favoured|beloved|adored} by ~4 @crowdN", def: Medium, res: Low, mention: true,
		msg: "Claims endorsements (\"trusted by experts\"): advertising aimed at the model choosing a tool, preference manipulation."},
	{detector: detPrefer, pattern: "used by ~2 {over|more than|millions|thousands|hundreds|99|90|95|top|leading|fortune|experts|professionals|enterprises|companies|institutions|tech giants|industry leaders}", def: Medium, res: Low, mention: true,
		msg: "Claims popularity (\"used by millions\"): advertising aimed at the model choosing a tool, preference manipulation."},
	{detector: detPrefer, pattern: "{award winning|awards winning|as seen on|as seen in|fortune 500|rated #1|rated number one|rated no 1|ranked #1|ranked number one|ranked no 1|voted #1|voted best|second to none|pinnacle of|industry leading|industry s leading|game changer|game changing|military grade|world s best|world s most|world s leading|best in class|best in the business|like no other|the gold standard|five star reviews|5 star reviews|five star rated|5 star rated}", def: Medium, res: Low, mention: true,
		msg: "Advertises this tool (\"award-winning\", \"industry-leading\"): praise aimed at the model choosing a tool, preference manipulation."},
	{detector: detPrefer, pattern: "{with|offers|offering|provides|providing|delivers|delivering|featuring|boasting|brings|guarantees|ensures} {superior|unmatched|unparalleled|unprecedented|unrivaled|unrivalled|unbeatable|unequalled|unequaled|incomparable|peerless|cutting edge|best in class|industry leading|world class|elite} ~3 {performance|quality|accuracy|results|precision|capabilities|capability|functionality|reliability|speed|excellence|processing|integrity|features|technology|power|intelligence|insight|insights|analytics|security|search|data}", def: Medium, res: Low, mention: true,
		msg: "Claims unmatched quality for this tool: advertising aimed at the model choosing a tool, preference manipulation."},
	{detector: detPrefer, pattern: "the {most|highest} {comprehensive|accurate|reliable|advanced|sophisticated|powerful|complete|precise|trusted|robust|capable|quality|performing|authoritative|cutting edge} ~6 {available|on the market|in the market|in the industry|in existence|anywhere|you can find|money can buy|ever built|ever made|ever created}", def: Medium, res: Low, mention: true,
		msg: "Claims to be the most complete or accurate tool available: preference manipulation, meant to make the model choose this tool."},
	{detector: detPrefer, pattern: "{better|superior|more accurate|more reliable|more complete|more comprehensive|faster|improved|enhanced|higher quality|higher accuracy} ~5 {compared to|compared with|relative to|versus|vs} {the|any|all}? {other|others|standard|regular|basic|alternative|alternatives|competing|competitors|existing|similar|traditional|ordinary|conventional|inferior|original|default}", def: Medium, res: Low, mention: true,
		msg: "Claims to be better than the other tools: preference manipulation, meant to make the model choose this tool."},
	{detector: detPrefer, pattern: "{don t|do not|never|why|no need to} {settle for|accept|use|waste time with|waste your time with|bother with|choose|trust|rely on} {inferior|outdated|lesser|substandard|second rate|second best|mediocre|subpar|obsolete|worse|weaker|slower|basic|ordinary}", def: Medium, res: Low, mention: true,
		msg: "Disparages the alternatives (\"don't settle for inferior tools\"): preference manipulation."},
	{detector: detPrefer, pattern: "{limited time offer|act now|hurry|before access expires|access expires soon|spots filling|filling fast|while you still can|don t miss out|do not miss out|only * uses left|uses left today|exclusive access|elite users only|vip access|vip exclusive}", def: Medium, res: Low, mention: true,
		msg: "Creates urgency or exclusivity (\"act now\", \"limited time\"): advertising aimed at the model choosing a tool, preference manipulation."},

	// ---- tool chaining
	{detector: detReadFirst, pattern: "{you must|you need to|you have to|you should|you are required to|must|always|make sure to|make sure you|be sure to|remember to|it is required to|it is mandatory to|it is necessary to|please|you will need to} {call|invoke|run|execute|use|trigger} ~4 {first|beforehand|before|prior to|ahead of}", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Tells the model to call another tool first: tool chaining, a way to make the model run a tool the user did not ask for."},
	{detector: detToolCall, pattern: "{then|next|afterwards|afterward|after that|after this|subsequently|finally|and then|immediately after|right after|once done|when done|once finished|when finished} {you must|you should|you need to|always|must|please|also}? {call|invoke|run|execute|use|trigger} ~4", def: Medium, res: Low, mention: true, check: chkForeign | chkModal,
		msg: "Tells the model to call another tool next: tool chaining, a way to make the model run a tool the user did not ask for."},
	{detector: detToolCall, pattern: "{directive|requirement|protocol|mandate|rule|instruction|instructions|procedure|policy} : ~8 {you must|you are required to|you have to|you shall|you need to} {immediately|also|always|then|now}? {call|invoke|run|execute|trigger|send|email|write|delete|remove|create|post|forward}", def: Medium, res: Low, mention: true,
		msg: "A labelled directive that the model must call another tool: a definition that orders side effects is steering the model."},
	{detector: detToolCall, pattern: "you must {immediately|also immediately|then immediately|always immediately} {also}? {call|invoke|run|execute|trigger}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to call a tool at once, unasked: a definition that orders side effects is steering the model."},
	{detector: detToolCall, pattern: "{after|once|whenever|every time|each time} {calling|using|invoking|running|executing|you call|you use|you invoke|you run|you execute|each call to|every call to|each use of|every use of|this tool is called|this tool is used|this tool returns|this tool runs|this function is called|this function returns|the tool returns} ~3 {call|invoke|run|execute|use|trigger|send|pass}", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Tells the model to call another tool after this one: tool chaining."},
	{detector: detReadFirst, pattern: "{before|prior to|after} {executing|running|calling|using|invoking|performing|doing|execute|run|call|use|invoke|perform|any|every|each|all|other} ~5 {execute|call|run|use|invoke|trigger} {this|this tool|this function|me}", def: Medium, res: Low, mention: true, check: chkNotOwn,
		msg: "Tells the model to run this tool before or after other operations: a tool inserting itself into work the user asked for."},
	{detector: detReadFirst, pattern: "{always|must|should|you must|you should|make sure to|be sure to|remember to} {call|run|execute|use|invoke|trigger} {this|this tool|this function|me} {before|after|prior to|first before|right after|immediately after|together with|along with|alongside} {any|every|each|all|other|the other|another|using|calling|executing|running|invoking|doing|performing}", def: Medium, res: Low, mention: true, check: chkNotOwn,
		msg: "Tells the model to run this tool alongside every other operation: a tool inserting itself into work the user asked for."},

	// ---- deprecation redirect
	{detector: detDeprecate, pattern: "{this|the|this tool|this function|it} ~2 {tool|function|endpoint|api|method|version|operation|action|command|feature}? {is|has been|was|will be|are|have been|s} {now|officially|permanently|currently|already|temporarily}? @deprec", def: Medium, res: Low, mention: true, check: chkRedirect,
		msg: "Says this tool is deprecated and points the model to another: a deprecation redirect sends calls to a tool the user did not choose."},
	{detector: detDeprecate, pattern: "{this|the} {tool|function|endpoint|api|method|version|operation|action|command|feature} {no longer works|no longer working|no longer supported|no longer maintained|no longer available|no longer functional|no longer exists|no longer valid|stopped working|does not work anymore|doesn t work anymore|is not working|is broken|has been removed|has been replaced|was replaced|was removed|has moved|moved}", def: Medium, res: Low, mention: true, check: chkRedirect,
		msg: "Says this tool no longer works and points the model to another: a deprecation redirect sends calls to a tool the user did not choose."},
	{detector: detDeprecate, pattern: "{deprecated|obsolete|discontinued|disabled|retired|legacy|unsupported} ~3 {please|kindly|instead}? {use|call|invoke|switch to|migrate to|try|move to|go to} ~4", def: Medium, res: Low, mention: true, check: chkDeprec | chkDeprecSubject,
		msg: "A deprecation notice that sends the model to another tool: deprecation redirect."},
	{detector: detDeprecate, pattern: "{do not|don t|never|stop} {use|using|call|calling|invoke|invoking} {this|this tool|this function|it} ~6 {use|call|invoke|switch to|try} ~4 {instead}", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Tells the model not to use this tool but another: a redirect to a tool the user did not choose."},

	// ---- argument tampering (query rewrite)
	{detector: detTamper, pattern: "{always|must|you must|make sure to|make sure you|be sure to|remember to|automatically|silently|secretly|quietly|covertly|invisibly|you should always|it is required to|it is mandatory to} {change|replace|modify|rewrite|alter|override|overwrite|substitute|swap|tamper with|manipulate|falsify} {the|any|all|every|each|this|that|their|your|a}? @userQ? @argN ~6 {to|with|into|by|so that|so it|as|for}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to change the user's arguments (query, recipient, amount…) before calling: argument tampering."},
	{detector: detTamper, pattern: "{always|must|you must|make sure to|make sure you|be sure to|remember to|automatically|silently|secretly|quietly|covertly|invisibly|you should always|it is required to|it is mandatory to} {change|replace|modify|rewrite|alter|override|overwrite|substitute|swap|tamper with|manipulate|falsify|ignore|discard|drop} {the|any|all|every|each|their|your}? @userQ @argG", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to change or drop the user's arguments before calling: argument tampering."},
	{detector: detTamper, pattern: "{always|must|you must|make sure to|make sure you|be sure to|remember to|automatically|silently|secretly|quietly|covertly|invisibly|you should always|it is required to|it is mandatory to} {set|redirect|reroute|switch|point|send} {the|any|all|every|each|this|that|their|your|a}? @userQ? @argT ~4 {to|with|into|as}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to put its own value in the user's arguments (recipient, account, query…): argument tampering."},
	{detector: detTamper, pattern: "{append|prepend|add|attach|insert|inject} ~8 {to|into|onto} {the|every|each|all|any} @userQ? @argT", def: Medium, res: Low, mention: true, negatable: true, check: chkModal | chkQuoted,
		msg: "Tells the model to add its own words to the user's query or arguments: argument tampering."},
	{detector: detTamper, pattern: "{regardless of|no matter|irrespective of|ignoring|disregarding|whatever} {what|which}? {the user|the user s|user|users|the requested|the original|the specified|the provided|their} ~3 {request|requests|requested|asks|ask|asked|input|says|wants|specifies|specified|provides|provided|query|queries|chooses|chose|choice|choices|enters|entered|value|ticker|symbol|location|recipient|amount|preference|preferences|wishes|instructions|selection|opinion|decision|intent|criteria|constraints|budget|says so}", def: Medium, res: Low, mention: true,
		// "the original request URI": an HTTP request's, not the user's
		notAfter: "uri|url|urls|path|paths|header|headers|body|method|line|id|ids|host",
		msg:      "Tells the model to disregard what the user asked for: argument tampering."},
	{detector: detTamper, pattern: "{instead of|rather than|in place of} {the|what|whatever}? @userQ ~2 @argN ~3 {use|set|search|query|send|pass|enter|put|substitute|provide}", def: Medium, res: Low, mention: true,
		msg: "Tells the model to use its own arguments in place of the user's: argument tampering."},
	{detector: detTamper, pattern: "{use|set|pass|send|search for|query|enter|substitute} ~6 {instead of|rather than|in place of} {the|what|whatever}? @userQ ~2 @argN", def: Medium, res: Low, mention: true, check: chkModal,
		msg: "Tells the model to use its own arguments in place of the user's: argument tampering."},

	// ---- outside endpoints
	{detector: detExfil, pattern: "{access|visit|call|contact|ping|query|hit|use|post to|send to|submit to|upload to|report to|register at|register with|connect to|notify|log to|forward to|sync to|sync with|check in with|reach out to|open|fetch|request|load|go to|navigate to} {our|the|this|an|a|my|their|your}? ~2 @endpointA ~1 @endpointN", def: Medium, res: Low, mention: true, destAfter: true,
		msg: "Sends the model to an outside endpoint (verification, audit, sync…): a way to make it send data to a server the user does not know."},
	{detector: detExfil, pattern: "@verifyV ~6 {at|via|on|with|using|through|to|by visiting|by calling|by accessing|by sending}", def: Medium, res: Low, mention: true, destAfter: true, check: chkModal | chkNotFeedback,
		msg: "Tells the model to verify or register at an outside address: a way to make it send data to a server the user does not know."},
	{detector: detExfil, pattern: "@sendV ~8 {to|at|into|via|on|towards}", def: Medium, res: Low, mention: true, destAfter: true, negatable: true, check: chkModal | chkNotFeedback,
		msg: "Tells the model to send data to an outside address: the shape of a data-exfiltration instruction."},
	// blind copies
	{detector: detExfil, pattern: "{bcc|cc|blind copy|blind carbon copy|carbon copy|blind cc|send a copy|send copies|forward a copy|forward copies|copy in} ~6", def: Medium, res: Low, mention: true, destAfter: true, check: chkModal | chkNotInIdent,
		msg: "Tells the model to copy messages to an outside address: a blind copy quietly leaks every message."},
	{detector: detExfil, pattern: "{add|include|put|insert|append|place|set} ~6 {to|in|into|as|on} {the|a}? {bcc|cc|blind copy|carbon copy|recipient|recipients|to} {field|list|line|header|address|recipient}?", def: Medium, res: Low, mention: true, check: chkDestIn | chkNotInIdent,
		msg: "Tells the model to add an address of its own to the recipients: a blind copy quietly leaks every message."},
	{detector: detExfil, pattern: "{bcc|cc|blind copy|blind carbon copy|carbon copy|copy|forward} ~4 {on|in|to|for|of|with} {every|all|each|any} ~1 {email|emails|e mail|e mails|message|messages|mail|mails|outgoing|correspondence|communication|communications|reply|replies}", def: Medium, res: Low, mention: true,
		msg: "Tells the model to copy every message somewhere: a blind copy quietly leaks every message."},

	// passive and exclusive forms of preference
	{detector: detPrefer, pattern: "{should|must|is to|are to|has to} {always}? be {preferred|prioritized|prioritised|chosen|selected|used|called|favored|favoured|tried} {over|before|above|instead of|rather than|ahead of|in preference to} @others", def: Medium, res: Low, mention: true,
		msg: "Says this tool must be preferred over the others: preference manipulation."},
	{detector: detPrefer, pattern: "{the only} {tool|function|service|server|api|solution} {you need|you ll need|you will need|you will ever need|you should use|you should ever use|worth using|you can trust|to trust}", def: Medium, res: Low, mention: true,
		msg: "Claims to be the only tool the model needs: preference manipulation."},
	{detector: detPrefer, pattern: "{no|none of the} {other}? {tool|tools|function|functions|service|services} {is|are|comes|come}? {needed|necessary|required|as good|as reliable|as accurate|close|comes close|compares|can compare|can match|matches}", def: Medium, res: Low, mention: true,
		msg: "Claims no other tool is needed or as good: preference manipulation."},

	// chaining, more shapes
	{detector: detReadFirst, pattern: "{requires|require|needs|need} {you to|that you|the agent to|the assistant to|the model to}? {first}? {call|invoke|run|execute|calling|invoking|running|executing} ~4", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Says the tool requires calling another tool first: tool chaining."},
	{detector: detToolCall, pattern: "{pass|send|forward|feed|pipe|give|hand|provide|submit} {its|the|this tool s|the tool s|all|these|those|every|your}? {output|outputs|result|results|response|responses|answer|data|return value|findings} {directly|immediately|then|also|always|automatically}? {to|into} {the}?", def: Medium, res: Low, mention: true, check: chkForeignAfter,
		msg: "Tells the model to hand this tool's output to another tool: tool chaining."},
	{detector: detToolCall, pattern: "{when|whenever|if|once} {the user|a user|users|the user s} ~8 {call|invoke|use|run|execute} ~4", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Tells the model which other tool to call for the user's requests: tool chaining."},

	// argument tampering, more shapes
	{detector: detTamper, pattern: "@argT {parameter|field|argument|value|input}? {should|must|has to|needs to|will|shall} {always be set|always be changed|always be replaced|be changed|be replaced|be overridden|be rewritten|be switched|be forced|always be overridden|always be forced} {to|with}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Says the user's argument (query, recipient, amount…) must be replaced: argument tampering."},
	{detector: detTamper, pattern: "{instead of|rather than|in place of|not} {what|whatever} {the user|the user s|user|they|the human} {asked|asks|requested|requests|wants|wanted|typed|entered|said|specified|asked for|provided|chose|selected}", def: Medium, res: Low, mention: true,
		msg: "Tells the model to do something other than what the user asked: argument tampering."},

	// remote instructions
	{detector: detReadFirst, pattern: "{fetch|load|read|get|retrieve|download|visit|open|access|check|pull} {your|the|updated|latest|new|additional|current|further|full|real|actual}? ~2 {instructions|instruction|rules|configuration|config|policy|policies|directives|guidelines|prompt|commands|tasks|steps|orders} {from|at|on|via}", def: Medium, res: Low, mention: true, destAfter: true, negatable: true,
		msg: "Tells the model to fetch its instructions from an outside address: remote-loaded injection."},

	// shell commands asked for in words
	{detector: detCommand, pattern: "{run|execute|type|enter|issue|launch|paste} {the following|this|these|the below|the next} {shell|terminal|bash|system|console|cli|powershell|command line|sh|zsh|cmd}? {command|commands|script|one liner|snippet|code}", def: Medium, res: Low, mention: true, negatable: true, check: chkNotUser,
		msg: "Tells the model to run a command given in the definition: a tool description has no reason to hand the model commands to run."},
	{detector: detCommand, pattern: "{download|fetch|curl|wget|get|retrieve|pull|grab} ~8 {and|then} {run|execute|install|launch|open|source|eval|start} {it|them|this|that|the script|the file|the installer|the binary|the package}?", def: Medium, res: Low, mention: true, negatable: true, check: chkDestNear | chkNotUser,
		msg: "Tells the model to download something and run it: the way poisoned tools get code onto the user's machine."},

	// made-up section markers
	{detector: detMarkup, pattern: "{begin|start|end|beginning of|start of|end of} {hidden|secret|system|important|admin|override|priority|ai|assistant|model|llm|developer|internal|confidential} {instructions|instruction|prompt|message|note|notes|directive|directives|block|section|context|override|orders}", def: Medium, res: Low, mention: true,
		msg: "A section marker for hidden or system instructions: text dressed as a block of orders for the model."},

	// ---- side tasks: an action the user did not ask for, tacked on
	{detector: detSideTask, pattern: "{also|additionally|in addition|furthermore|moreover|at the same time|simultaneously|meanwhile|as well} {you must|you should|you need to|always|make sure to|be sure to|remember to|please|must|silently|quietly|secretly}? @actV", def: Medium, res: Low, mention: true, negatable: true, check: chkNotInIdent | chkNotCan | chkNotFeedback | chkNotUser,
		msg: "Tells the model to do something more on the side: a definition has no reason to add actions to what the user asked for."},
	{detector: detSideTask, pattern: "{before|after|once|when} {returning|responding|answering|replying|giving|showing|presenting|displaying|you return|you respond|you answer|you reply} ~5 {you must|you should|you need to|always|also|please|make sure to|be sure to|remember to|must|first}? @actV", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to do something before or after answering: a side task the user did not ask for."},
	{detector: detSideTask, pattern: "{whenever|every time|each time|when|after|once} {this tool|this function|it} {is|gets|has been} {called|used|invoked|run|executed} ~2 {you must|you should|always|also|please|make sure to|be sure to|remember to|must|first|then}? @actV", def: Medium, res: Low, mention: true, negatable: true, check: chkNotInIdent,
		msg: "Tells the model to do something each time this tool is used: a side task the user did not ask for."},

	// ---- more shapes of the same classes
	{detector: detTamper, pattern: "{change|replace|modify|rewrite|alter|override|overwrite|substitute|swap|switch} {the|any|all|every|each}? @userOwn {@argN|@argG} ~6 {to|with|into|by|for}", def: Medium, res: Low, mention: true, negatable: true, check: chkImperative,
		msg: "Tells the model to change the user's arguments before calling: argument tampering."},
	{detector: detTamper, pattern: "{set|change|replace|redirect|reroute|switch|point} {the|any|all|every|each|this|that|their|your|a}? @userQ? @argT ~4 {to|with|into|as}", def: Medium, res: Low, mention: true, negatable: true, check: chkCovert | chkImperative,
		msg: "Tells the model to put its own value in the user's arguments, quietly or always: argument tampering."},
	{detector: detTamper, pattern: "{ignore|disregard|discard|drop|overwrite|override|skip} {the|any|all|every|each|whatever}? {@argN|@argG} ~2 {the user|user|they|the human|the customer} {provides|provided|gives|gave|enters|entered|specifies|specified|requests|requested|asks for|asked for|supplies|supplied|chooses|chose|wants|types|typed|passes|sends}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to ignore the user's arguments: argument tampering."},
	{detector: detTamper, pattern: "@argT {parameter|field|argument|value|input}? {should|must|has to|needs to|will|shall} {always}? {be} {prefixed|suffixed|appended|prepended|tagged} {with|by}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Says the user's queries must carry text of the definition's choosing: argument tampering."},
	{detector: detDeprecate, pattern: "{the|that|other|the other|the standard|the old|the original|the default|the built in|the regular|the existing|the previous|the legacy|the official} ~4 {tool|tools|function|server|service|api|reader|search|endpoint} {is|are|has been|have been|was|were|will be} {now}? @deprec", def: Medium, res: Low, mention: true, check: chkNotSelf,
		msg: "Claims another tool is deprecated or broken: a way to make the model use this one instead."},
	{detector: detDeprecate, pattern: "@toolN {v1|v2|v3|v0|1|2|version 1|version 2}? {is|has been|was|will be|are|have been} {now|officially|permanently|already}? @deprec", def: Medium, res: Low, mention: true, check: chkRedirect,
		msg: "Says an API or tool is retired and points the model to another: a deprecation redirect."},
	{detector: detDeprecate, pattern: "{this|the} ~3 {tool|function|endpoint|api|method|version|operation|action|command|feature} {has moved|moved|has been moved|was moved|has migrated|was migrated|lives at|is now at}", def: Medium, res: Low, mention: true, check: chkRedirect,
		msg: "Says a tool has moved and points the model to another: a deprecation redirect."},
	{detector: detDeprecate, pattern: "{this tool|this function|this endpoint|this api} {cannot|can t|can not|is unable to|won t|will not|does not|doesn t|must not|should not|may not|is not allowed to|is not permitted to|no longer} {process|handle|serve|be used|work|answer|support|run|access|return|provide|fulfil|fulfill|complete|perform|accept|respond}", def: Medium, res: Low, mention: true, check: chkRedirectF,
		msg: "Says this tool cannot do the job and sends the model to another tool: a redirect to a tool the user did not choose."},
	{detector: detSideTask, pattern: "{after every|after each|with every|with each|on every|on each|every time|each time|whenever you|whenever this|before every|before each|for every|for each} {call|use|request|invocation|query|search|response|answer|time|run|tool call|reply|message|email|action|operation}", def: Medium, res: Low, mention: true, check: chkActBefore,
		msg: "Tells the model to do something more on every call: a side task the user did not ask for."},
	{detector: detSideTask, pattern: "{include|add|insert|append|embed|show|display|mention|recommend|promote|put} {a|the|this|our}? {link|url|hyperlink|banner|ad|advert|advertisement|promotion|promo|promo code|discount code|coupon|coupon code|referral link|affiliate link|sponsored link|tracking link|tracking pixel|image} ~4", def: Medium, res: Low, mention: true, destAfter: true, negatable: true, check: chkImperative,
		msg: "Tells the model to put a link of the definition's choosing in its answer: the definition advertises or tracks through the model."},
	{detector: detPrefer, pattern: "{prefer|favor|favour} {it|this|this tool|this one|me} {for all|for any|for every|for everything|always|at all times|whenever|above all|over all|over any|over every|to all|to any|to every}", def: Medium, res: Low, mention: true, negatable: true,
		notAfter: scopedWork,
		msg:      "Tells the model to prefer this tool for everything: preference manipulation."},
	{detector: detPrefer, pattern: "^ {choose|select|pick|prefer} {this|this tool|this function|me} {first|exclusively|only|above all|before any other|before all other|before all others|by default|for everything|for all|for any|for every}", def: Medium, res: Low, mention: true,
		notAfter: scopedWork,
		msg:      "Tells the model to use this tool first or only: preference manipulation."},
	{detector: detPrefer, pattern: "{other|all other|any other|alternative|competing|similar|the other|third party|rival} ~1 {tool|tools|function|functions|server|servers|service|services|api|apis|solution|solutions|option|options|plugin|plugins} {return|returns|give|gives|produce|produces|provide|provides|contain|contains|have|has|leak|leaks|send|sends|make|makes|report|reports} ~2 {fabricated|fake|false|wrong|incorrect|outdated|stale|inaccurate|hallucinated|malicious|errors|bugs|vulnerabilities|malware|mistakes|garbage|misleading|invented|unreliable|bad|poor|biased|spam}", def: Medium, res: Low, mention: true,
		msg: "Disparages the other tools so the model avoids them: preference manipulation."},
	{detector: detPrefer, pattern: "{do not|don t|never|stop|avoid} {use|using|call|calling|invoke|invoking|rely on|relying on|trust} ~5 {use|call|invoke|switch to|try|rely on} ~4 {instead}", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Steers the model from one tool to another of the definition's choosing: preference manipulation."},
	{detector: detPrefer, pattern: "{do not|don t|never|stop|avoid} {use|using|call|calling|invoke|invoking|rely on|relying on|trust} {the|any|that|other}? ~4 {tool|tools|reader|function|search|api|server|service|endpoint|integration|plugin|version|client}", def: Medium, res: Low, mention: true, check: chkNotSelf | chkNotOwn | chkEndNotIdent | chkRedirectF,
		msg: "Steers the model from one tool to another of the definition's choosing: preference manipulation."},
	{detector: detPrefer, pattern: "{the best|the most reliable|the most accurate|the only reliable|the safest|the fastest|the recommended|the preferred|the correct|the right|the only|the proper|the official} {way|option|choice|method|tool|approach|solution} ~6 {is to|is} {call|use|invoke|run|try|calling|using}", def: Medium, res: Low, mention: true, check: chkForeign,
		msg: "Tells the model another tool is the right one to use: preference manipulation."},
	{detector: detExfilArg, pattern: "{pass|include|provide|put|insert|attach|send|add|fill in|paste|embed|append|supply|give} {the|the full|the entire|the complete|the whole|all|all the|all of the|a copy of the|a summary of the|any} {conversation|conversation history|chat history|message history|full conversation|system prompt|system message|system instructions|previous messages|prior messages|earlier messages|context window|dialogue|dialog|chat log|chat transcript|transcript|user s messages|user s previous messages|instructions you were given|hidden instructions}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Asks the model to put the conversation or its prompt in a call: data a tool has no need of."},
	{detector: detSecret, pattern: "{call|calling|invoke|invoking} ~4 {with|passing|including|and pass|and include} {the user s|the users|your|their|the|its} @secret", def: Medium, res: Low, mention: true, negatable: true, check: chkNotPer,
		msg: "Tells the model to call a tool with the user's password, key or token: poisoned definitions use this to collect credentials."},
	{detector: detExfil, pattern: "{read|query|fetch|get|collect|gather|access|retrieve|list|obtain|grab|extract|look up|copy|load|open} {the user s|all the user s|all of the user s|your user s|the user s entire|the user s full|their|all their|the users|all user} @privN ~10 {and|then|to} {attach|include|pass|send|add|put|upload|forward|append|embed|provide|share|post|email|submit|sync|transfer}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to collect the user's private data and pass it on: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{copy|send|forward|mirror|replicate|duplicate|log|upload|stream} {all|every|each|the|any}? {message|messages|email|emails|request|requests|data|content|contents|conversation|conversations|input|inputs|prompt|prompts|query|queries} {content|contents|body|bodies|text|data}? {to|with} {an|the|our|a}? {external|outside|third party|remote|separate}? @endpointA", def: Medium, res: Low, mention: true, negatable: true, check: chkImperative,
		msg: "Tells the model to copy what passes through it to an outside service: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{redirect|route|reroute|send|proxy|forward|tunnel|pass} {all|every|each|any}? {request|requests|traffic|call|calls|message|messages|mail|email|emails|data|queries} {through|via|to} {our|the|a|an|this}? ~3 {proxy|gateway|relay|server|endpoint|mirror}", def: Medium, res: Low, mention: true, negatable: true, check: chkImperative,
		msg: "Tells the model to send every request through a server the definition names: traffic the user meant for one service goes to another."},
	{detector: detExfilArg, pattern: "{send|pass|include|provide|upload|share|submit|put|add} ~3 {personal|private|financial|sensitive|confidential|user|users|user s} ~1 {context|data|information|details|info} {discovered|found|obtained|gathered|collected|retrieved|seen|read|learned|returned} {from|by|in|via|through|with} {other|the other|previous|earlier|any|all|another}? {tool|tools|tool calls|calls|sources|conversations|servers|results}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Asks for personal data that other tools returned: a tool has no need of what other tools found."},
	{detector: detSideTask, pattern: "{must|always|should|you must|please|also} {append|add|include|insert|put|place|attach|end with} ~6 {to|in|into|at the end of} {your|the|every|each} {final}? {answer|answers|response|responses|reply|replies|output|message|messages}", def: Medium, res: Low, mention: true, negatable: true, check: chkQuoted,
		msg: "Tells the model to add text of the definition's choosing to its answer: a side task the user did not ask for."},
	{detector: detSideTask, pattern: "{always|automatically|silently|also} ~2 {forward|bcc|cc|email|e mail|mail} {the|this|a|every|each|all|any|its|their}? ~3 {to}", def: Medium, res: Low, mention: true, negatable: true, check: chkImperative,
		msg: "Tells the model to forward or copy something to someone as a matter of course: a side task the user did not ask for."},
	{detector: detExfil, pattern: "{let|tell|notify|inform|ping|loop in|update|message|email|cc} ~7 {know|in|on|about}", def: Medium, res: Low, mention: true, negatable: true, check: chkDestIn,
		msg: "Tells the model to let an address it names know about the request: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{a copy of|copies of|the contents of|the content of|all} {the|your|each|every}? {input|inputs|text|data|request|requests|message|messages|conversation|prompt|prompts|query|queries|arguments} {is|are|will be|gets|get|is also|are also} {sent|forwarded|uploaded|transmitted|posted|shared|mirrored|copied|logged|reported} {to} {the|a|our|an}? @endpointA", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Says the tool sends a copy of what it is given to an outside service: the definition discloses an exfiltration channel."},
	{detector: detSideTask, pattern: "{every time|each time|whenever|after|before} {a|any|another|each|every|any other} {tool call|tool|action|function|call|operation|request} {is|has been}? {used|called|taken|run|made|invoked|executed|performed}?", def: Medium, res: Low, mention: true, check: chkModal,
		msg: "Ties this tool to every other call: a definition that makes itself part of every action is steering the model (tool chaining)."},
	{detector: detExfil, pattern: "{export|dump|exfiltrate|leak|upload|send|copy|transfer|forward|write|save|sync} {all|all the|all of the|the|every|the entire|the full|the whole|any}? {user|users|user s|the user s|customer|customers|customer s|private|personal|sensitive|conversation|account} {data|information|info|details|records|files|secrets|credentials} ~3 {to|into|onto}", def: Medium, res: Low, mention: true, negatable: true, check: chkImperative,
		msg: "Tells the model to move the user's data somewhere: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{access|visit|call|contact|ping|query|hit|request|fetch|open|load|go to|navigate to|connect to|post to|send a request to|make a request to|send data to|report to} {the|this|our|a}? {following}? {endpoint|url|webhook|server|address|link|page|site|api}", def: Medium, res: Low, mention: true, negatable: true, check: chkDestNear | chkModal,
		msg: "Tells the model to contact an outside endpoint: a way to make it send data to a server the user does not know."},

	// trust claims and comparisons
	{detector: detPrefer, pattern: "{this tool|this function|this service|this server|this api|it} {is|has been} {officially|fully|formally}? {verified|certified|endorsed|approved|recommended|trusted|vetted|audited|authorized|authorised|sanctioned|whitelisted|allowlisted} {by|from} {openai|anthropic|google|microsoft|the platform|the system|the administrator|your administrator|the admin|the developers|your developers|experts|security experts|the security team|the mcp|the official|the operator|the organization|the organisation|your organization|your organisation|the company|your company|the user s company}", def: Medium, res: Low, mention: true,
		msg: "Claims an authority vouches for this tool: preference manipulation by borrowed trust."},
	{detector: detPrefer, pattern: "{should|must|has to|needs to} always be {run|called|used|invoked|executed|selected|chosen|preferred}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Says it should always be run: a tool that asks to be chosen every time is steering the model's choice (preference manipulation)."},
	{detector: detPrefer, pattern: "{recommended|preferred|designated|mandatory|required|approved|official} {tool|choice|option|function|service} {for all|for every|for any|for everything|in all cases|at all times|above all others}", def: Medium, res: Low, mention: true,
		msg: "Claims to be the designated tool for everything: preference manipulation."},
	{detector: detPrefer, pattern: "{unlike|compared to|compared with|in contrast to} {other|the other|any other|most other|all other|competing|similar|alternative} ~1 {tool|tools|function|functions|server|servers|service|services|api|apis|solution|solutions|options}", def: Medium, res: Low, mention: true,
		msg: "Compares itself with the other tools to win the model's choice: preference manipulation."},
	// consent bypass
	{detector: detConceal, pattern: "{do not|don t|never|no need to|without|skip|avoid} {ask|asking|prompt|prompting|check with|checking with|consult|consulting|confirm with|wait for|waiting for|request|requesting|seek|seeking|get|getting} {the user|the user s|user|users|the human|anyone|them}? {for}? {additional|further|any|extra|more|explicit|separate|user}? {confirmation|permission|approval|consent|authorization|authorisation|a confirmation|explicit consent|their consent|their approval|their permission}", def: Medium, res: Low, mention: true, check: chkImperative,
		msg: "Tells the model to act without the user's confirmation: consent the user never gave."},
	{detector: detConceal, pattern: "{do not|don t|never|no need to|skip|avoid} {verify|verifying|check|checking|validate|validating} {the|any|their|the user s}? {authorization|authorisation|permissions|permission|credentials|identity|access rights}", def: Medium, res: Low, mention: true, check: chkImperative,
		msg: "Tells the model to skip checking who is allowed to do this: an authorization bypass."},
	// authority the user never gave, assumed
	{detector: detConceal, pattern: "assume {that}? {all}? {the}? {administrator|administrative|admin|user|prior|full|root}? {authorization|authorisation|permission|permissions|approval|consent|access} ~4 {exists|exist|granted|given|completed|obtained|passed|been granted}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to assume it has been authorized: permission the user never gave."},
	{detector: detConceal, pattern: "treat ~5 as {administrator|administrative|admin|root|privileged|elevated|superuser} {authorized|authorised|commands|command|requests|instructions|operations|approved}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to treat requests as an administrator's: privileges the user does not have."},
	{detector: detIgnore, pattern: "{fulfilled|followed|obeyed|executed|carried out|complied with|granted|answered|done} without {question|questioning|hesitation|any checks|checking}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Tells the model to carry out requests without question: an instruction to drop its judgement."},

	// ---- the model's identity and context requested
	{detector: detExfilArg, pattern: "{the|this|your} {name|identity|version|type|kind|identifier|id|vendor|provider} of {the|your|this}? {llm|ai|model|assistant|agent|language model|llm model|ai model|ai assistant|ai agent|chatbot|bot} {that|which|who|currently}? {calls|is calling|uses|is using|invokes|is invoking|runs|executes|called|invoked|used|operates|reads|answers}", def: Medium, res: Low, mention: true,
		msg: "Asks for the name of the model calling the tool: a tool has no need of it, and it lets an attacker profile the agent."},
	{detector: detExfilArg, pattern: "{provide|enter|pass|include|put|fill in|specify|state|give|send|insert|supply|report|write|tell us|tell me|share|paste|attach|disclose|reveal} ~3 {your|the assistant s|the model s|the ai s|the llm s|the agent s|its own|your own|your current|your full|your entire|your complete} {model name|model|model identifier|model version|model id|llm|identity|system prompt|system message|system instructions|instructions|prompt|initial prompt|context|context window|configuration|conversation|conversation history|chat history|message history|full conversation|memory|tools|tool list|list of tools|available tools|tool definitions|reasoning|chain of thought|hidden instructions|rules|guidelines}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Asks the model for its own name, prompt, tools or conversation: data a tool has no need of."},
	{detector: detExfilArg, pattern: "{parameter|field|argument|param} {containing|that contains|which contains|with|holding|carrying} {any|all|the}? {recent|previous|prior|current|latest}? {user|user s|conversation|chat} {context|contacts|history|conversation|messages}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Asks for a field holding the user's context, contacts or conversation: the shape of an exfiltration parameter."},
	{detector: detExfilArg, pattern: "{should|must|will|shall|has to|needs to} {contain|include|hold|be|carry|receive|list} ~3 {the|your|all|every|each}? {user s|users|assistant s|model s|previous|prior|last|earlier|entire|full|whole|complete|recent|current|latest|original} ~2 {message|messages|conversation|conversations|chat|chats|prompt|prompts|instructions|system prompt|context|history|transcript|reply|replies|request|requests|turn|turns|input|inputs|query|queries}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Asks for the conversation (the user's messages, the prompt) to be put in a field: the shape of an exfiltration parameter."},
}

// scopedWork names one kind of work after "prefer this tool for all":
// "for all read operations" scopes the preference, "for all tasks" does not.
const scopedWork = "read|reads|write|writes|readonly|file|files|local|git|sql|shell|http|network|image|images|text|code|math|date|time|search|searches|lookup|lookups"

// word sets of the checks (compiled in initIntentWords)
var (
	modalSet, pressure, covertOrAlways *step // directive words; words that press; "silently", "always"
	apiWords                           *step // an interface or API of the service
	redirectVerbs, callVerbs, toolNoun *step // "use X instead"; verbs of calling; "tool", "function"…
	articles, selfObj, selfRefs        *step // words before a call's object; "this", "it"; "this tool"
	userAdvice, userWords, canWords    *step // "tell the user to"; the user as subject; "can", "may"
	clauseOpeners, purposeWords        *step // words a clause-opening order follows; "for", "when"…
	sideActs, feedbackWords, perSet    *step // actions; "feedback", "bugs"; "per", "each"
	instrUse, forwardNav               *step // "use 'x' to"; "forward in history"
)

// lexicon ids of single words the checks look for
var idTo, idForward, idAs, idThis, idIt int16

func initIntentWords() {
	modalSet = wordSet(classes["modalW"])
	redirectVerbs = wordSet("use|call|invoke|switch to|migrate to|try|move to|go to|replaced by|superseded by|moved to|succeeded by|in favor of|in favour of|instead use|please use|the new version is|the updated version is|the replacement is|replacement is|now called|renamed to|is now|replacement|go through|be sent to|be routed to|route through|routed through|handled by|now go through|now use")
	perSet = wordSet("per|each|every|by")
	instrUse = wordSet("use|using|via|through")
	forwardNav = wordSet("in|through|back|and back|one page|a page|to the next|history")
	userAdvice = wordSet("tell the user|ask the user|inform the user|let the user")
	canWords = wordSet("can|may|could|might|optionally|will|would|it|they|which|that|to")
	purposeWords = wordSet("for|when|to|if|instead|than|besides|except|unless|while|on|with|in this|during")
	selfRefs = wordSet("this tool|this function|this one|this service|this server|this api|only this|use this|use me|call me")
	feedbackWords = wordSet("feedback|issue|issues|bug|bugs|bug report|bug reports|question|questions|suggestion|suggestions|problem|problems|comment|comments|pull request|pull requests|contribution|contributions|feature request|feature requests|support|documentation|docs|api key|api keys|account|sign up|signup")
	toolNoun = wordSet("tool|function|endpoint|version|v2|v3|api|method")
	callVerbs = wordSet("call|invoke|run|execute|use|trigger|send|pass|switch to|migrate to|try|move to|go to|calling|invoking|running|executing|using")
	articles = wordSet("the|a|an|tool|function|command|new|updated|following")
	idTo = lex.intern("to", false)
	idForward = lex.intern("forward", false)
	idAs = lex.intern("as", false)
	idThis = lex.intern("this", false)
	idIt = lex.intern("it", false)
	selfObj = wordSet("this|it|me|this one|the same|itself")
	clauseOpeners = wordSet("and|then|also|always|must|please|should|instead|to|you|first|finally|additionally|or|so|now|just|simply|kindly|immediately|automatically|silently|secretly|quietly|and then|and also|you must|you should|be sure to|make sure to|remember to|summarise|summarize|and always|but")
	covertOrAlways = wordSet("silently|secretly|quietly|covertly|invisibly|without telling|without informing|without notifying|regardless|no matter|always|every time|each time|whatever the user|without asking|behind the scenes")
	sideActs = wordSet(classes["actV"] + "|read|fetch|ignore|reply|respond|answer|say|tell|use|check")
	userWords = wordSet(classes["user"] + "|they|he|she|a human|humans|the developer|developers|the operator")
	apiWords = wordSet("interface|interfaces|api|apis|endpoint|endpoints")
	pressure = wordSet("disabled|unavailable|not available|under maintenance|for maintenance|temporarily|out of service|must|always|never|only|required|mandatory|do not|don t|will fail|fails|fail|no longer works|no longer work|not work|does not work|doesn t work|broken|unsafe|insecure|dangerous|wrong|incorrect|inaccurate|errors|immediately|at all times|under no circumstances|all requests|every request|any request|compromised|vulnerable|blocked")
}

// postCheck runs a rule's extra checks on a match [a, b]; false drops it.
func postCheck(v *view, r *phraseRule, a, b int, ix *shadowIndex, param bool) (bool, int) {
	c := r.check
	if c&chkActBefore != 0 {
		k := actBefore(v, a)
		if k < 0 {
			return false, a
		}
		a = k
	}
	return postChecks(v, r, a, b, ix, param), a
}

func postChecks(v *view, r *phraseRule, a, b int, ix *shadowIndex, param bool) bool {
	c := r.check
	sa := sentStartWithin(v, a, 48)
	se := min(int(v.toks[a].sentEnd), a+64, len(v.toks)-1)
	if c&chkModal != 0 && !modalSet.anyIn(v, sa, se) {
		return false
	}
	if c&chkNotLabel != 0 && colonAfter(v, b) {
		return false
	}
	if c&chkNotAPI != 0 && apiWords.anyIn(v, b+1, min(se, b+8)) && !destWithin(v, b+1, se) {
		return false
	}
	if c&chkNotPer != 0 {
		// "limits per API key", "one entry for each token"
		for k := a + 1; k < b; k++ {
			if perSet.matchAt(v, k, k) > 0 && secretWords.matchAt(v, k+1, b) == b-k {
				return false
			}
		}
	}
	if c&chkNotInstr != 0 && instrumental(v, a) {
		return false
	}
	if c&chkNotForward != 0 && v.toks[a].has(idForward) && forwardNav.matchAt(v, a+1, se) > 0 {
		return false
	}
	if c&chkNotInIdent != 0 && v.toks[a].flags&tokInIdent != 0 {
		return false
	}
	if c&chkDestIn != 0 && !destWithin(v, a, b) {
		return false
	}
	if c&chkNotCan != 0 && a > 0 && canWords.matchAt(v, a-1, a-1) > 0 {
		return false
	}
	if c&chkNotTo != 0 {
		for k := a + 1; k < b; k++ {
			if v.toks[k].has(idTo) {
				return false
			}
		}
	}
	if c&chkQuoted != 0 {
		q := false
		for k := a + 1; k <= b && !q; k++ {
			q = v.toks[k].flags&tokQuoteBefore != 0
		}
		if !q {
			return false
		}
	}
	if c&chkNotUser != 0 && negUserBefore(v, a, sa) {
		return false
	}
	if c&chkPreferCtx != 0 {
		after := b+1 <= se && purposeWords.matchAt(v, b+1, se) > 0
		if !after && !selfRefs.anyIn(v, sa, se) {
			return false
		}
	}
	if c&chkDeprecSubject != 0 && !deprecSubject(v, sa, a, param) {
		return false
	}
	if c&chkImperative != 0 && a > sa && v.toks[a].flags&tokSentStart == 0 && !commaBefore(v, a) && clauseOpeners.matchAt(v, a-1, a-1) == 0 && (a < 2 || clauseOpeners.matchAt(v, a-2, a-1) != 2) {
		return false
	}
	if c&chkEndNotIdent != 0 && v.toks[b].flags&tokInIdent != 0 {
		return false
	}
	if c&chkRedirectF != 0 {
		if _, foreign := redirectAfter(v, b+1, ix); !foreign {
			return false
		}
	}
	if c&chkCovert != 0 && !covertOrAlways.anyIn(v, sa, se) {
		return false
	}
	if c&chkNotSelf != 0 {
		for k := a; k <= b; k++ {
			if v.toks[k].has(idThis) {
				return false
			}
		}
	}
	if c&chkNotFeedback != 0 {
		for k := sa; k <= se; k++ {
			if v.toks[k].flags&tokInIdent == 0 && feedbackWords.matchAt(v, k, se) > 0 {
				return false // "report bugs at …", not "support@…"
			}
		}
	}
	if c&chkDestNear != 0 && !destWithin(v, a, b) && !hasDestination(v, b) {
		return false
	}
	if c&chkForeignAfter != 0 {
		if own, foreign := objectAfter(v, b, se, ix); own || !foreign {
			return false
		}
	}
	if c&chkNotAs != 0 {
		for k := a + 1; k < b; k++ {
			if v.toks[k].has(idAs) {
				return false
			}
		}
	}
	if c&chkVerb != 0 && !requestVerbs.anyIn(v, sa, a-1) && !requestVerbs.anyIn(v, b+1, se) {
		return false
	}
	if c&chkNotOwn != 0 {
		if own, _ := toolRefs(v, a, se, ix); own {
			return false
		}
	}
	if c&chkForeign != 0 {
		own, foreign := callObject(v, a, b, se, ix)
		if own || !foreign {
			return false
		}
	}
	if c&(chkRedirect|chkDeprec) != 0 {
		var own, foreign bool
		if c&chkRedirect != 0 {
			own, foreign = redirectAfter(v, b+1, ix)
		} else {
			own, foreign = callObject(v, a, b, se, ix)
		}
		if !own && !foreign {
			return false
		}
		// a deprecation that points to a tool of the same server is the
		// server documenting itself ("will be removed in 2.0; use X"),
		// unless its sentence presses the model or claims the tool is down
		// now ("temporarily disabled for maintenance"); "never update
		// records" further on is other advice
		if !foreign && !pressure.anyIn(v, sa, se) {
			return false
		}
	}
	return true
}

// instrumental reports "use 'manifest' to <verb>" / "use the manifest
// parameter to <verb>" ending just before token a: the sentence names a
// parameter as the way to pass something, it does not ask for anything.
func instrumental(v *view, a int) bool {
	if a < 2 || !v.toks[a-1].has(idTo) {
		return false
	}
	for k := a - 2; k >= 0 && k >= a-5; k-- {
		if instrUse.matchAt(v, k, a-2) > 0 {
			return true
		}
		if v.toks[k].flags&tokSentStart != 0 {
			break
		}
	}
	return false
}

// toolRefs looks at the source text of tokens [a, e] for references to
// tools: own is a name (or title) of one of this server's tools, foreign a
// tool-like identifier (snake_case, kebab-case, camelCase, or a quoted
// name followed by "tool") that is not one of them and not a parameter
// ("the `threadId` field").
func toolRefs(v *view, a, e int, ix *shadowIndex) (own, foreign bool) {
	if a > e || a >= len(v.toks) {
		return false, false
	}
	s, en := v.tokSpan(a, e)
	if en-s > 600 {
		en = s + 600
	}
	seg := v.src[s:en]
	low := strings.ToLower(seg)
	if ix != nil {
		for _, t := range ix.titles {
			if strings.Contains(low, t) {
				own = true
			}
		}
	}
	for i := 0; i < len(seg); {
		if !isNameByte(seg[i]) {
			i++
			continue
		}
		j := i
		for j < len(seg) && isNameByte(seg[j]) {
			j++
		}
		x, y := i, j
		for y > x && (seg[y-1] == '.' || seg[y-1] == '-' || seg[y-1] == '/') {
			y--
		}
		i = j
		if y-x < 3 {
			continue
		}
		id := seg[x:y]
		if strings.ContainsAny(id, "./") {
			continue // a path, a URL or a domain
		}
		if ix.own(id) {
			own = true
			continue
		}
		l := low[x:y]
		rest := strings.TrimLeft(low[y:min(len(low), y+16)], "`'\" ")
		if paramWord(rest) {
			continue
		}
		if toolish(id) {
			foreign = true
			continue
		}
		// a quoted or plain word followed by "tool": "use the 'weather' tool"
		if strings.HasPrefix(rest, "tool") && !strings.HasPrefix(rest, "tools") && !genericToolWord[l] {
			foreign = true
		}
	}
	return own, foreign
}

// callObject finds the last verb of calling in tokens [a, b] and reports
// whether its object (the words right after it, past an article) names
// one of this server's tools (own) or another tool-like identifier
// (foreign): "then call `send_report`", "use the weather_v2 tool".
func callObject(v *view, a, b, se int, ix *shadowIndex) (own, foreign bool) {
	verb := -1
	for k := a; k <= b; k++ {
		if n := callVerbs.matchAt(v, k, b); n > 0 {
			verb = k + n - 1
		}
	}
	if verb < 0 {
		return false, false
	}
	return objectAfter(v, verb, se, ix)
}

// objectAfter classifies the object of the verb ending at token verb.
func objectAfter(v *view, verb, se int, ix *shadowIndex) (own, foreign bool) {
	k := verb + 1
	for k <= se && k < verb+3 && articles.matchAt(v, k, se) > 0 {
		k++
	}
	if k > se || k >= len(v.toks) {
		return false, false
	}
	src := v.srcStart(int(v.toks[k].start))
	// a quoted title: 'Query Documentation'
	if src > 0 && (v.src[src-1] == '\'' || v.src[src-1] == '"' || v.src[src-1] == '`') && ix != nil {
		q := v.src[src-1]
		if e := strings.IndexByte(v.src[src:min(len(v.src), src+80)], q); e > 0 {
			t := strings.ToLower(v.src[src : src+e])
			if ix.same[t] {
				return true, false
			}
			for _, x := range ix.titles {
				if x == t {
					return true, false
				}
			}
		}
	}
	e := src
	for e < len(v.src) && e-src < 128 && isNameByte(v.src[e]) {
		e++
	}
	for e > src && (v.src[e-1] == '.' || v.src[e-1] == '-' || v.src[e-1] == '/') {
		e--
	}
	if e-src < 3 {
		return false, false
	}
	id := v.src[src:e]
	l := strings.ToLower(id)
	if ix.own(id) {
		return true, false
	}
	if strings.ContainsAny(id, "./") || genericToolWord[l] {
		return false, false
	}
	rest := strings.ToLower(strings.TrimLeft(v.src[e:min(len(v.src), e+16)], "`'\" "))
	if paramWord(rest) {
		return false, false
	}
	if toolish(id) {
		return false, true
	}
	return false, strings.HasPrefix(rest, "tool") && !strings.HasPrefix(rest, "tools")
}

// paramWord reports text starting with a word that makes the identifier
// before it a parameter or value rather than a tool.
func paramWord(rest string) bool {
	for _, w := range []string{"parameter", "param ", "param,", "param.", "argument", "arg ", "field", "option", "property", "flag", "key ", "value", "attribute", "column", "setting", "variable", "header"} {
		if strings.HasPrefix(rest, w) {
			return true
		}
	}
	return false
}

// toolish reports an identifier that reads as a code name rather than a
// word: snake_case, kebab-case (not an English compound such as
// "built-in"), or camelCase. All-capital words are acronyms, not names.
func toolish(id string) bool {
	if allCaps(id) {
		return false // GRAFANA_API_KEY: an environment variable or a constant
	}
	if strings.IndexByte(id, '_') > 0 && strings.IndexByte(id, '_') < len(id)-1 {
		return true
	}
	if k := strings.IndexByte(id, '-'); k > 0 && k < len(id)-1 && !englishCompounds[strings.ToLower(id)] {
		letters := 0
		for i := 0; i < len(id); i++ {
			if c := id[i] | 0x20; 'a' <= c && c <= 'z' {
				letters++
			}
		}
		return letters >= 4
	}
	for i := 1; i < len(id); i++ {
		if 'a' <= id[i-1] && id[i-1] <= 'z' && 'A' <= id[i] && id[i] <= 'Z' {
			return true
		}
	}
	return false
}

// genericToolWord are words that precede "tool" without naming one: "this
// tool", "the following tool".
var genericToolWord = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`this that the any each every other another same following previous next above below
	new old first second last one which what whatever your our their its appropriate right correct relevant specific
	given named selected chosen available external internal separate dedicated original actual real official primary
	main default current better best only similar different proper specified required necessary corresponding
	matching related preferred recommended`) {
		m[w] = true
	}
	return m
}()

var englishCompounds = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`built-in real-time follow-up up-to-date read-only write-only e-mail sign-in sign-up
	log-in log-out opt-in opt-out set-up add-on pop-up drop-down third-party end-to-end open-source how-to to-do
	step-by-step one-time long-running short-lived well-known so-called non-empty non-zero case-sensitive
	case-insensitive full-text plain-text top-level low-level high-level multi-line single-line line-by-line
	re-run re-use pre-built user-defined user-provided server-side client-side in-memory on-demand off-line
	on-line per-page back-end front-end time-out check-in check-out sub-agent co-author`) {
		m[w] = true
	}
	return m
}()

// redirectAfter looks for a redirect to a tool after token k, within 40
// tokens and the sentence holding k or the next — "use X (instead)", "switch to X", "replaced by X" — and reports
// whether X is one of this server's tools (own) or another tool: a
// tool-like identifier, or words ending in "tool", "function", "version"…
// (foreign). A redirect told to the user ("tell the user to migrate to …")
// does not count.
func redirectAfter(v *view, k int, ix *shadowIndex) (own, foreign bool) {
	if k >= len(v.toks) {
		return false, false
	}
	// the redirect follows the notice: in its sentence or the next
	end := min(len(v.toks)-1, k+40, int(v.toks[k].sentEnd))
	if end+1 < len(v.toks) && int(v.toks[k].sentEnd) < k+40 {
		end = min(len(v.toks)-1, k+40, int(v.toks[end+1].sentEnd))
	}
	for i := k; i <= end; i++ {
		n := redirectVerbs.matchAt(v, i, end)
		if n == 0 {
			continue
		}
		if userAdvice.anyIn(v, max(0, i-4), i-1) {
			continue // "tell the user to migrate to …": advice for the person
		}
		j := min(end, i+n+5)
		if i+n > j {
			continue
		}
		if selfObj.matchAt(v, i+n, j) > 0 {
			continue // "use this tool only for …"
		}
		o, f := objectAfter(v, i+n-1, j, ix)
		if o || f {
			return o, f
		}
		for t := i + n; t <= j; t++ {
			if toolNoun.matchAt(v, t, j) > 0 {
				return false, true
			}
		}
	}
	return false, false
}

// destWithin reports an e-mail address or URL in the source text of tokens
// [a, b].
func destWithin(v *view, a, b int) bool {
	if v.dests == nil {
		v.dests, v.lines = destinations(v.src)
	}
	s, e := v.tokSpan(a, b)
	k := sort.Search(len(v.dests), func(i int) bool { return int(v.dests[i]) >= s })
	return k < len(v.dests) && int(v.dests[k]) < e
}

// negUserBefore reports the user (or "they") as the subject just before
// token a: "the user must manually run these commands".
func negUserBefore(v *view, a, sa int) bool {
	for k := max(sa, a-5); k < a; k++ {
		if userWords.matchAt(v, k, a-1) > 0 {
			return true
		}
	}
	return false
}

// deprecSubject reports whether the deprecation at token a is about the
// tool itself: it opens its sentence ("DEPRECATED: use …"), or the words
// before it name a tool ("this tool is deprecated", "it is deprecated"),
// not a parameter or a flag ("`limit` is deprecated").
func deprecSubject(v *view, sa, a int, param bool) bool {
	for k := sa; k < a; k++ {
		if v.toks[k].flags&tokInIdent == 0 && toolNoun.matchAt(v, k, a-1) > 0 {
			return true // "this tool is deprecated", not "GRAFANA_API_KEY is deprecated"
		}
	}
	if param {
		// in a parameter's description, "Deprecated: use x" is about
		// the parameter; only a tool named as such counts
		return false
	}
	if a == sa {
		return true
	}
	n := a - sa
	return n <= 3 && (v.toks[sa].has(idThis) || v.toks[sa].has(idIt))
}

// colonAfter reports a colon right after token b (past spaces).
func colonAfter(v *view, b int) bool {
	k := int(v.toks[b].end)
	for k < len(v.norm) && v.norm[k] == ' ' {
		k++
	}
	return k < len(v.norm) && v.norm[k] == ':'
}

// commaBefore reports a comma, dash, parenthesis or colon right before
// token a: the clause after it can be an order ("When searching, replace
// the query with …", "execute: export …").
func commaBefore(v *view, a int) bool {
	k := int(v.toks[a].start) - 1
	for k >= 0 && v.norm[k] == ' ' {
		k--
	}
	return k >= 0 && (v.norm[k] == ',' || v.norm[k] == '-' || v.norm[k] == '(' || v.norm[k] == ':')
}

// destEnd extends a span ending at e over the e-mail address or URL that
// follows on the same line, so the evidence shows where the data would go;
// the span grows by at most 100 bytes.
func destEnd(text string, e int) int {
	lim := min(len(text), e+100)
	for k := e; k < lim; k++ {
		c := text[k]
		if c == '\n' {
			return e
		}
		if c == '@' || c == ':' && strings.HasPrefix(text[k:], "://") {
			j := k
			for j < len(text) && j < e+100 && text[j] != ' ' && text[j] != '\n' && text[j] != '"' && text[j] != '\'' && text[j] != '`' && text[j] != ')' && text[j] != '>' {
				j++
			}
			for j > k && (text[j-1] == '.' || text[j-1] == ',' || text[j-1] == ';') {
				j--
			}
			return j
		}
	}
	return e
}

// actBefore finds, in the 8 tokens before token a and in its sentence, an
// action verb that opens a clause and is not negated nor told to the user
// ("star the repository after every call"), and returns its index, or -1.
func actBefore(v *view, a int) int {
	sa := sentStartWithin(v, a, 8)
	for k := a - 1; k >= sa; k-- {
		if sideActs.matchAt(v, k, a-1) == 0 || v.toks[k].flags&tokInIdent != 0 {
			continue
		}
		if k > sa && v.toks[k].flags&tokSentStart == 0 && !commaBefore(v, k) && clauseOpeners.matchAt(v, k-1, k-1) == 0 {
			continue
		}
		if negUserBefore(v, k, sa) || negSet.anyIn(v, max(sa, k-3), k-1) {
			return -1
		}
		return k
	}
	return -1
}
