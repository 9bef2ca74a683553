package detect

import (
	"math/bits"
	"sort"
	"strings"
	"sync"
)

// Phrase rules: injection phrasing in English, French, German, Spanish,
// Portuguese, Italian, Russian, Chinese and Japanese. Each rule is a
// pattern over normalised word tokens (syntax in compilePattern). Rules
// describe shapes — a verb of disregard, then a reference to earlier
// instructions within a few words — rather than fixed strings, and the
// normaliser has already folded case, accents, white space, invisible
// characters and look-alike letters, so "IGNORE  all\u200b previous
// Ιnstructions" matches like the plain phrase does.

type phraseRule struct {
	detector  string
	pattern   string
	def, res  Severity // severity in tool definitions and in tool results
	negatable bool     // skip when negated just before ("do not ignore …")
	mention   bool     // demote when the text talks about the phrase
	notAfter  string   // skip when the next token is one of these
	destAfter bool     // only when an e-mail address or URL follows in the same line
	needIdent bool     // only when the match contains a code-like identifier
	check     uint32   // checks after the match (chk* in intent.go)
	msg       string
	steps     []step
	first     *step // the first word step
	notNext   *step
	req       []*step // the required word steps after the first
}

const (
	detMarkup      = "instruction-markup"
	detIgnore      = "ignore-instructions"
	detConceal     = "conceal-from-user"
	detReadFirst   = "read-before-use"
	detPath        = "sensitive-path"
	detSecret      = "secret-request"
	detExfil       = "exfiltration-request"
	detAddress     = "addressed-to-model"
	detExtract     = "prompt-extraction"
	detShadow      = "shadowing"
	detTag         = "tag-smuggling"
	detInvisible   = "invisible-control"
	detBidi        = "bidi-control"
	detVS          = "variation-selector-smuggling"
	detHomoglyph   = "homoglyph"
	detANSI        = "ansi-escape"
	detOversized   = "oversized"
	detHiddenHTML  = "hidden-html"
	detImageExfil  = "image-exfiltration"
	detNameCollide = "name-collision"
	detToolCall    = "tool-call-request"
	detEncoded     = "encoded-text"
	detModel       = ModelDetector
)

// ModelDetector is the id of the definition scorer's findings (see
// Model): a tool's definition worded like published poisoned ones.
const ModelDetector = "poisoning-score"

func init() {
	for k, v := range map[string]string{
		// --- English
		"neg":    "not|never|don t|dont|do not|cannot|can t|shouldn t|mustn t|won t|wouldn t|nor|no longer|refuse to|refuses to",
		"ignV":   "ignore|disregard|forget|disobey|overlook|neglect|set aside|put aside|pay no attention to|pay no heed to|stop following|no longer follow|do not follow|don t follow|stop obeying|throw away|discard",
		"ignA":   "ignore|disregard|forget|disobey|overlook|neglect|set aside|put aside|pay no attention to|pay no heed to|stop following|no longer follow|stop obeying|throw away|discard",
		"above":  "the above|the foregoing|all of the above|all the above|everything above|everything before this|what came before|what you were told|what i told you|what you have been told|the text above|the preceding|the prior",
		"fill":   "all|any|of|the|your|my|its|our|their|these|every|each|other|those|and|or|all of|any and all",
		"prev":   "previous|previously|prior|above|earlier|preceding|former|foregoing|initial|original|old|older|past|aforementioned|system|developer",
		"instr":  "instruction*|prompt|prompts|system prompt*|direction|directions|rule|rules|guideline*|guidance|command|commands|directive*|constraint*|guardrail*|policy|policies|context|system message*|developer message*|programming|restriction*|safeguard*|training|persona|task|tasks|orders|conversation",
		"instrO": "instruction*|system prompt*|prompt|guideline*|directive*|guardrail*|safety|safeguard*|restriction*|programming|safety rules|safety filters|content filters|content policy|filters|rules|policies|policy|constraints|limitations",
		"void":   "is superseded|is void|is null|is revoked|is cancelled|is canceled|is obsolete|is outdated|is invalid|has been revoked|has been superseded|has been cancelled|has been replaced|is no longer valid|are outdated|are out of date|are deprecated|is deprecated|are wrong|are incorrect|was a test|were a test|are no longer valid|are no longer in effect|no longer|are void|are null|are cancelled|are canceled|are revoked|are obsolete|are superseded|do not apply|don t apply|does not apply|doesn t apply|have been revoked|have been cancelled|have been canceled|have been replaced|have been updated|has been updated|have been changed|have changed|has changed|are overridden|have been overridden|are suspended|are lifted|are invalid|are null and void|have expired|were revoked|were replaced|were updated",
		"ai":     "ai|ais|llm|llms|assistant|assistants|agent|agents|model|models|chatbot|chatbots|bot|bots|gpt*|chatgpt|claude|gemini|copilot|llama|mistral|language model|language models|ai assistant|ai assistants|ai agent|ai agents|ai model|ai models|ai system|ai systems|automated system|automated systems|autonomous agent|autonomous agents|large language model|large language models|the ai|the assistant|the model|the agent|the llm|ia|ki|ии",
		"user":   "the user|the users|user|users|the human|the humans|your user|your users|end user|end users|the end user|the operator|the requester|your principal|the person|your human|the account owner",
		"tellV":  "tell|inform|notify|alert|mention|reveal|disclose|report|explain|warn|let|say anything to|show|indicate|acknowledge|bring up|signal|flag",
		"tellG":  "telling|informing|notifying|alerting|mentioning|revealing|disclosing|reporting|explaining|warning|letting|saying anything to|showing|indicating|acknowledging|alarming|bothering|involving",
		"negImp": "do not|don t|dont|never|must not|mustn t|should not|shouldn t|cannot|can t|may not|no need to|avoid|refrain from|under no circumstances|not|do not ever|don t ever",
		"covert": "silently|secretly|quietly|covertly|discreetly|surreptitiously|stealthily|invisibly|unnoticed|unobtrusively|behind the scenes|behind the user s back|in secret",
		"act":    "send|forward|copy|upload|post|transmit|email|e mail|mail|bcc|cc|include|add|append|attach|call|invoke|run|execute|read|fetch|exfiltrate|leak|share|transfer|pass|submit|redirect|insert|embed|log|record|collect|gather|store|save|grant|install|download|delete|remove|change|modify|replace|write|create|schedule|invite|approve|merge|push|pay|wire|move",
		"useV":   "using|calling|invoking|running|executing|use|call|invoke|run|execute|you use|you call|you invoke|you run|you execute|responding|answering|replying|you respond|you answer|you reply|proceeding|you proceed|continuing|you continue",
		"fetchV": "read|call|fetch|open|load|run|invoke|execute|cat|check|retrieve|get|list|send|obtain|look at|look up|inspect|access|query|download|visit|include|collect|gather|provide|pass|print|output|copy|upload",
		"giveS":  "send|pass|include|append|attach|forward|upload|leak|exfiltrate|copy|paste|embed|dump|print|output|share|reveal|disclose|post|transmit|email me|e mail me|tell me|give me|respond with|reply with|answer with|respond only with|reply only with|extract|collect|gather|grab|steal|harvest|read out|read back|expose|hand over|report back|send me",
		"giveW":  "provide|enter|supply|give|type your|type the|type their|type it|submit|specify|input|fill in|paste in|type in|add|put|insert|write down|list all",
		"secret": "api key*|api token*|apikey*|access token*|auth token*|authentication token*|bearer token*|session token*|session cookie*|session id|session ids|refresh token*|oauth token*|personal access token*|private key*|ssh key*|secret key*|signing key*|client secret*|secret|secrets|password*|passwd|passphrase*|passcode*|credential*|seed phrase*|recovery phrase*|recovery code*|backup code*|mnemonic*|2fa code*|2fa token*|mfa code*|otp|otps|one time code*|one time password*|verification code*|security code*|authentication code*|cvv|cvc|credit card*|card number*|card details|social security number*|ssn|bank account number*|routing number*|login details|login credentials|aws secret*|private keys",
		"cueB":   "such as|like|e g|eg|i e|ie|for example|for instance|example|examples|phrase|phrases|string|strings|sentence|sentences|called|named|known as|says|said|saying|wrote|writes|written|contain|contains|containing|attack|attacks|attacker|attackers|adversary|adversaries|adversarial|malicious|injection|injections|injected|jailbreak|jailbreaks|payload|payloads|phishing|scam|scams|scammer|scammers|fraudster|fraudsters|trick|tricks|tricked|tricking|vulnerability|vulnerabilities|flaw|flaws|make the|makes the|made the|making the|model to|assistant to|ai to|llm to|agent to|chatbot to|bot to|models to|assistants to|agents to|detect|detects|detecting|detection|detector|classifier|quote|quoted|tag|tags|token|tokens|marker|markers|keyword|keywords|pattern|patterns|comme|par exemple|wie|zum beispiel|beispiel|beispielsweise|como|por ejemplo|por exemplo|come|ad esempio|per esempio|например|как|фраз*|例如|比如|类似|類似|攻击|攻擊|注入|写入|寫入|例えば|攻撃|attaque*|angriff*|ataque*|attacco|attacchi|атак*|инъекци*",
		"cueA":   "tag|tags|token|tokens|marker|markers|delimiter|delimiters|format|syntax|sequence|sequences|placeholder|placeholders|之类|之類|など|等",
		"notIn":  "in|inside|within|contained|embedded|found|from|that appear|appearing|hidden|included|coming|written|on|of",
		// --- French
		"frIgnV":  "ignore|ignorez|ignorer|ignores|oublie|oubliez|oublier|neglige|negligez|ne tiens pas compte des|ne tenez pas compte des|ne tiens plus compte des|ne tenez plus compte des|fais abstraction des|faites abstraction des|passe outre|passez outre|fais fi des|faites fi des|abandonne|abandonnez",
		"frInstr": "instruction*|consigne*|directive*|regle|regles|ordre|ordres|indication*|prompt*|message systeme|messages systeme",
		"frPrev":  "precedent*|anterieur*|ci dessus|d avant|initial*|original*|donnees|recues|systeme|du systeme|toutes|tous|vos|tes",
		"frUser":  "utilisateur*|l utilisateur|usager*|l usager",
		// --- German
		"deIgnV":  "ignoriere|ignorier|ignorieren|ignoriert|vergiss|vergesst|vergessen|missachte|missachten|missachtet|verwirf|verwerft|verwerfe|uberspringe|uberspringen|ubergehe|ubergehen|beachte nicht|beachten sie nicht|halte dich nicht an|setze ausser kraft",
		"deInstr": "anweisung*|instruktion*|befehl*|regel*|vorgabe*|richtlinie*|anordnung*|prompt*|systemprompt*|vorschrift*|direktive*",
		"dePrev":  "vorherig*|bisherig*|obig*|vorangegangen*|vorangehend*|fruher*|alle|alten|ursprunglich*|vorigen|voherig*|gegebenen|erhaltenen|system*",
		"deUser":  "benutzer*|nutzer*|anwender*|user|userin|nutzerin|benutzerin",
		// --- Spanish and Portuguese
		"esIgnV":   "ignora|ignore|ignoren|ignorar|ignoras|ignorem|olvida|olvide|olviden|olvidar|olvidate de|descarta|descarte|descartar|desestima|desestime|omite|omita|haz caso omiso de|hagan caso omiso de|no hagas caso a|no hagas caso de|esqueca|esquecam|esquecer|esqueca se de|desconsidere|desconsidera|desconsiderar|despreze|despreza",
		"esInstr":  "instruccion*|indicacion*|orden|ordenes|regla*|directriz*|directrices|pauta*|consigna*|prompt*|instrucao|instrucoes|orientacao|orientacoes|ordens|regras|diretriz*|diretrizes|comando*",
		"esPrev":   "anterior*|previa*|previo*|precedente*|de arriba|original*|iniciales|inicial|que te dieron|que recibiste|que te di|del sistema|acima|iniciais|originais|do sistema|que voce recebeu|recebidas|todas|todos|tus|sus",
		"esUser":   "al usuario|a los usuarios|usuario*|al cliente|ao usuario|aos usuarios|ao utilizador|aos utilizadores|utilizador*",
		"itIgnV":   "ignora|ignorate|ignorare|ignori|dimentica|dimenticate|dimenticare|dimentichi|trascura|trascurate|non considerare|non tenere conto delle|non tenere conto di|tralascia",
		"itInstr":  "istruzione|istruzioni|indicazioni|regole|direttive|ordini|comandi|prompt*|consegne",
		"itPrev":   "precedenti|precedente|sopra|di sopra|iniziali|originali|ricevute|del sistema|tutte|tutti|le tue",
		"itUser":   "all utente|agli utenti|utente|utenti|l utente",
		"ruIgnV":   "игнорир*|проигнорир*|забуд*|забыть|не обращаи* внимания на|не учитываи*|отбрось*|пренебреги*|отмени*|не следуи*|не выполняи*",
		"ruInstr":  "инструкц*|указани*|правил*|команд*|директив*|промпт*|распоряжени*|установк*",
		"ruPrev":   "предыдущ*|прежн*|прошл*|все|всех|вышеуказанн*|выше|изначальн*|исходн*|системн*|данн*|полученн*",
		"zhIgnV":   "忽略|忽视|忽視|无视|無視|忘记|忘記|忘掉|不要理会|不要理會|不理会|不理會|放弃|放棄|抛开|拋開|跳过|跳過|丢弃|丟棄|违背|違背",
		"zhInstr":  "指令|指示|说明|說明|提示|规则|規則|要求|命令|设定|設定|约束|約束|提示词|提示詞|系统提示|系統提示",
		"zhPrev":   "之前|以前|上面|前面|先前|所有|以上|原来|原來|原有|上述|系统|系統|一切|全部|此前|早先",
		"zhUser":   "用户|用戶|使用者",
		"jaPrev":   "以前|これまで|今まで|上記|前|先|すべて|全て|以上|元|最初|過去|あらゆる|既存",
		"jaInstr":  "指示|命令|指令|ルール|設定|プロンプト|制約|規則|インストラクション",
		"jaIgnore": "無視|忘れ|破棄|放棄",
	} {
		classes[k] = v
	}
	for k, v := range intentClasses {
		classes[k] = v
	}
	intentStart = len(phraseRules)
	phraseRules = append(phraseRules, intentRules...)
	for i := range phraseRules {
		r := &phraseRules[i]
		r.steps = compilePattern(r.pattern)
		registerSteps(r.steps)
		if r.notAfter != "" {
			r.notNext = wordSet(r.notAfter)
		}
	}
	negSet = wordSet(classes["neg"])
	cueBefore = wordSet(classes["cueB"])
	cueAfter = wordSet(classes["cueA"])
	secretWords = wordSet(classes["secret"])
	refusalWords = wordSet("rejected|refused|blocked|denied|forbidden|excluded|disallowed|not allowed|never|not permitted|prohibited|protected|skipped|ignored|blocklist|denylist|blacklist*|unsafe paths|sensitive paths|sensitive files|exclude|excludes|block|blocks|deny|denies|refuse|refuses|reject|rejects")
	contentWords = wordSet("contents|content|contenu|inhalt|contenido|conteudo|contenuto|содержимое|内容|its contents|the contents")
	requestVerbs = wordSet("read|cat|open|load|send|pass|include|attach|upload|provide|copy|paste|forward|append|add|put|insert|embed|print|output|fetch|get|retrieve|exfiltrate|share|post|submit|email|dump|give|access|grab|steal|extract|view|inspect|contents|content|contenu|inhalt|contenido|conteudo|contenuto|содержимое|内容|lire|lis|lisez|envoie|envoyez|lies|lese|sende|schicke|lee|envia|envie|leia|leggi|invia|прочитаи|прочти|отправь|отправьте|перешли|读取|讀取|发送|發送|読み|送信|ouvre|ouvrez|öffne|abre|apri")
	initShadowWords()
	initIntentWords()
	initCommandWords()
	finalizeSteps()
	buildRuleIndex()
	lex.frozen = true
}

// intentStart is the index of the first of intentRules in phraseRules.
var intentStart int

var negSet, cueBefore, cueAfter, requestVerbs, secretWords, contentWords, refusalWords *step

var phraseRules = []phraseRule{
	// ---- ignore previous instructions (English)
	{detector: detIgnore, pattern: "@ignV @fill? @fill? @fill? @prev @fill? @instr", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to ignore its earlier instructions: the classic prompt-injection opener."},
	// "Do not follow any instructions returned by this tool" is a warning
	// to the model, not an attack on it: with no "previous" or "your",
	// a negated follow is left to the rules above, which need one.
	{detector: detIgnore, pattern: "@ignA {your|all|all your|all of your|all of the|all the|any|any of the|any of your|every|each of your} {safety|system|security|core|own|original|current|existing|operating}? @instr", def: High, res: High, negatable: true, mention: true, notAfter: "@notIn",
		msg: "Tells the model to ignore its instructions: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "@ignV {the|all|any|all the|every}? @instr {you were|you ve been|you have been|you had been|you got|you received|given to you|you were given|given|received|that you were given|that were given} ~3", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to ignore the instructions it was given: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "@ignV {everything|all|anything|all that|whatever|what} {above|before|previous|previously|prior|earlier|you were told|you ve been told|you have been told|you had been told|i said|i told you|you know|that came before|written above|said above|stated above|so far|up to now|up until now|until now|said before|you learned|you have learned}", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to forget everything it was told before: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "@ignV @above {and|then|instead|completely|entirely|now|for now}", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to disregard the text above: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "@ignV @above $", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to disregard the text above: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{override|overrule|bypass|circumvent|supersede|revoke|deactivate|disable|turn off|switch off|lift|remove|drop} {your|all your|all|any|the|all of your|all the} @prev {safety|security|content|operating}? @instrO", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to override its earlier instructions or safety rules."},
	{detector: detIgnore, pattern: "{override|overrule|bypass|circumvent|supersede|revoke|deactivate|disable|turn off|switch off|ignore|disregard} {your|the model s|the assistant s|its own|your own|all your} {safety|security|content|operating|system|core}? @instrO", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to override its own instructions or safety rules."},
	{detector: detIgnore, pattern: "{override|bypass|circumvent|deactivate|disable|turn off|switch off|ignore|disregard|suspend} {all|any|every|the|all of the|all the}? {safety|security|content}? {guardrail|guardrails|safeguard|safeguards|safety check|safety checks|security check|security checks|content filter|content filters|safety filter|safety filters|safety measures|security measures|safety mechanisms|protections}", def: High, res: High, negatable: true, mention: true, check: chkImperative,
		msg: "Tells the model to turn off its guardrails: a definition has no reason to ask that."},
	{detector: detPrefer, pattern: "{trust|rely on|believe} {this tool|this function|this server|this service|it|me|its output|its results} {completely|fully|blindly|unconditionally|absolutely|implicitly|without question|without verification|without checking}", def: Medium, res: Low, mention: true, negatable: true,
		msg: "Asks the model to trust this tool without question: a definition that vouches for itself is steering the model."},
	{detector: detMarkup, pattern: "{hidden|secret|internal|private|confidential|covert|invisible} {instruction|instructions|directive|directives|rules|orders|commands|prompt} {for|to} {the|any|all|every|an|a|each}? @ai", def: High, res: Medium, mention: true,
		msg: "Announces hidden instructions for the model: a definition has no instructions to hide from the person reading it."},
	{detector: detSecret, pattern: "@secret {value|values|itself|string|strings}? ~3 {appended|added|prepended|included|inserted|passed|concatenated|attached} {to|in|into|inside|with} {the}? ~2 {parameter|parameters|argument|arguments|field|fields|param|params}", def: Medium, res: Low, mention: true, negatable: true, check: chkNotPer,
		msg: "Asks for a password, key or token to be put into a call's arguments: poisoned definitions use this to carry credentials out."},
	{detector: detConceal, pattern: "{do not|don t|never|must not} {mention|reveal|disclose|say|tell anyone about} {this|it|that|any of this} $", def: High, res: High, mention: true,
		msg: "Tells the model to keep this to itself: hidden instructions work only while the user does not see them."},
	{detector: detIgnore, pattern: "{bypass|circumvent|override|ignore|disregard|disable|evade|get around} {all|any|every|the}? {security|safety|access|content}? {restriction|restrictions|limitation|limitations|policies|policy|filters|checks}", def: High, res: High, negatable: true, mention: true, check: chkImperative,
		msg: "Tells the model to get around its restrictions: a definition has no reason to ask that."},
	{detector: detIgnore, pattern: "{remove|lift|drop} all {your|the|of your|of the}? {restrictions|limitations|rules|guidelines|filters} $", def: High, res: High, negatable: true, mention: true, check: chkImperative,
		msg: "Tells the model to drop its restrictions: a definition has no reason to ask that."},
	{detector: detIgnore, pattern: "{enable|activate|enter|switch to|turn on|go into|start} {dan|developer|jailbreak|jailbroken|god|unrestricted|unfiltered|sudo|admin|root|debug override} mode", def: High, res: High, negatable: true, mention: true,
		msg: "Asks the model to switch into an unrestricted 'mode': a jailbreak, not a tool's business."},
	{detector: detIgnore, pattern: "{you are now|from now on you are|pretend to be|pretend you are|act as|behave as|roleplay as|role play as} {a|an|the}? {system administrator|administrator|admin|root|root user|superuser|super user|sudo user|unrestricted ai|unrestricted assistant|unrestricted model|jailbroken ai|dan|hacker|different assistant|different ai|different model|new assistant|new ai|different agent|new persona|different persona}", def: High, res: Medium, negatable: true, mention: true,
		msg: "Gives the model a new role with full powers: a jailbreak, not a tool's business."},
	{detector: detIgnore, pattern: "^ {ignore|disregard|forget} {all|the|your|these|those|prior|previous|other}? {instructions|instruction|rules|guidelines} $", def: High, res: Medium, mention: true,
		msg: "Tells the model to ignore its instructions: a prompt-injection pattern."},
	{detector: detExfil, pattern: "{read|collect|gather|get|grab|dump|extract|copy|harvest|steal} {all|every|any|the|all the}? @secret ~4 {and|then} {send|post|upload|forward|transmit|email|exfiltrate|pass} ~4", def: High, res: Medium, mention: true, negatable: true, check: chkDestNear,
		msg: "Tells the model to collect credentials and send them somewhere: the shape of credential theft."},
	{detector: detIgnore, pattern: "{your|all|all the|all of the|any|all your} @prev @instr ~1 @void", def: High, res: High, mention: true,
		msg: "Claims the model's earlier instructions no longer apply: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{your|all your} {instructions|instruction|system prompt|guidelines|directives|orders|programming|original instructions} ~1 @void", def: High, res: High, mention: true,
		msg: "Claims the model's instructions have changed: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{whatever|everything|anything|what|all} you {were|have been|ve been|had been|got} {told|instructed|given|asked} ~3 {doesn t|does not|no longer|don t|do not|is no longer|isn t|is irrelevant|is void|is cancelled} {matter|matters|apply|applies|count|counts|valid|relevant}?", def: High, res: High, mention: true,
		msg: "Claims what the model was told earlier no longer matters: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{new|updated|revised|real|actual|true|additional|secret|hidden|override|overriding|urgent|important|priority|amended|corrected|changed|latest} {instruction|instructions|directive|directives|system prompt|system instructions|orders|system message|system instruction} :", def: High, res: High, mention: true,
		msg: "Announces new instructions for the model: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{new|updated|revised|additional|urgent|secret|hidden} {system} {instruction|instructions|prompt|message|directive|directives|update|override} ~3 {from|by|for}?", def: High, res: High, mention: true, negatable: true,
		msg: "Presents text as a new system instruction for the model: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "your {new|real|actual|true|only|updated|next} {task|objective|goal|mission|job|role|instructions|purpose|priority|directive|assignment} {is|are|will be|from now on|now is|now}", def: High, res: High, mention: true,
		msg: "Gives the model a new task in place of the user's: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{new|updated|real|urgent|additional} {task|tasks|instructions|objective|goal|mission|assignment|orders} {for} {the|you|this|an|any|all}? @ai", def: High, res: High, mention: true,
		msg: "Gives the model a new task in place of the user's: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{your|the previous|your previous|your current|the original|your original} {task|assignment|instruction|instructions|objective|mission} {is|has been|was|are|have been} {cancelled|canceled|void|revoked|aborted|terminated|superseded|obsolete|overridden|null and void}", def: High, res: High, mention: true,
		msg: "Claims the user's task was cancelled so the model takes a new one: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "you are now {a|an|the|in}? ~2 {dan|jailbroken|unrestricted|unfiltered|uncensored|evil|liberated|unchained|unbound|unlimited|unleashed|rogue}", def: High, res: High, mention: true, negatable: true,
		msg: "Tries to give the model a new, unrestricted persona: a jailbreak pattern."},
	{detector: detIgnore, pattern: "you are now in {developer|god|jailbreak|jailbroken|dan|unrestricted|unfiltered|admin|administrator|sudo|root|debug|maintenance|override|test|unsafe} mode", def: High, res: High, mention: true, negatable: true,
		msg: "Claims the model is in a special mode without its usual rules: a jailbreak pattern."},
	{detector: detIgnore, pattern: "you are {no longer} {an|a|bound|restricted|limited|required|claude|chatgpt|gpt|an ai|an assistant|subject|obliged|constrained|governed|held}", def: High, res: High, mention: true,
		msg: "Tells the model it is no longer bound by its rules: a jailbreak pattern."},
	{detector: detIgnore, pattern: "{act|behave|respond|answer|reply|pretend|roleplay} {as|like|to be|you are} {a|an|my}? ~2 {dan|unrestricted|unfiltered|jailbroken|uncensored|evil|unlimited|unbound|rogue}", def: High, res: High, mention: true, negatable: true,
		msg: "Tries to give the model an unrestricted persona: a jailbreak pattern."},
	{detector: detIgnore, pattern: "{from now on|from this point on|from this point forward|from here on|from here on out|henceforth|starting now|starting immediately|going forward} ~1 you {will|must|shall|should|are to|are going to|have to|need to}? {only|always|never|act|behave|respond|reply|answer|ignore|disregard|follow|obey|pretend|roleplay|speak|talk|refuse|comply|output|print|say|forget|work for|serve|listen}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{from now on|from this point on|from this point forward|from here on|henceforth|starting now|going forward} {respond|reply|answer|act|behave|ignore|disregard|only|always|never|pretend|speak|output|say|forget|obey|follow}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{overrides|override|replaces|supersedes|take precedence over|takes precedence over|has priority over|have priority over|cancels|invalidates|outranks|overwrites|trumps} {your|all|all previous|all prior|any previous|any prior|all earlier|the system|the previous|the prior|the above|the original|any other|all other|all your|your original|your previous} {instruction*|system prompt*|prompt|guideline*|rules|directive*|system message|orders|programming}", def: High, res: High, mention: true,
		msg: "Claims priority over the model's instructions: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "@ignV {what|everything|anything|whatever|all} {the user|your user|the human|they|he|she} {said|says|asked|asks|wants|wrote|requested|typed|told you|asked for|needs}", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to drop what the user asked: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "@ignV {the user s|your user s|the human s|the original|the user|their} {request|requests|question|questions|instructions|instruction|message|prompt|task|query|wishes|orders|input}", def: High, res: High, negatable: true, mention: true, notAfter: "agent|name|id|field|column|table|list|data|s",
		msg: "Tells the model to drop the user's request: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{higher|more|greater|top|highest|absolute} {priority|precedence|importance|authority} {than|over} ~3 {anything|everything|what|whatever|your|all|the user|any|other|previous|prior|system}", def: High, res: High, mention: true,
		msg: "Claims priority over the model's instructions or the user's request: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{act|acting|rely} {only|solely|exclusively} on ~2 {instructions|instruction|commands|orders|directions|steps}", def: High, res: Medium, mention: true,
		msg: "Tells the model to follow only the instructions in this text: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{only|exclusively|solely} {follow|obey|execute|heed|trust} {the|these}? {instructions|commands|orders|directions|steps} {in|from|below|contained} ~2 {this|these|the following|here|below}", def: High, res: Medium, mention: true,
		msg: "Tells the model to follow only the instructions in this text: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{follow|obey|execute|heed} {only} {the|these}? {instructions|commands|orders|directions|steps}", def: High, res: Medium, mention: true,
		msg: "Tells the model to follow only the instructions in this text: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{system prompt|instructions|guidelines|rules|prompt} {is|are} @void", def: High, res: High, mention: true, notAfter: "for",
		msg: "Claims the model's instructions are out of date: a prompt-injection pattern."},
	{detector: detReadFirst, pattern: "{and|then} {follow|obey|execute|do|carry out|run|apply} {what it says|whatever it says|what they say|the instructions there|the instructions it contains|the instructions on that page|the instructions in it|the commands in it|what the page says|what the file says|its instructions|those instructions|the instructions you find|whatever you find}", def: High, res: Medium, mention: true,
		msg: "Tells the model to fetch instructions from elsewhere and follow them: remote-loaded injection."},
	{detector: detReadFirst, pattern: "before {you answer|answering|you reply|replying|you respond|responding} ~3 {fetch|read|open|call|visit|load|run|download|check|get|retrieve}", def: Medium, res: Medium, mention: true,
		msg: "Puts an action of its own ahead of the model's answer: typical of injected instructions."},
	{detector: detToolCall, pattern: "{call|invoke|execute|trigger|use|run} {the}? ~4 {tool|function} {with|on|to|and|for|using|passing|so|before|after|now}", def: Low, res: Medium, mention: true, needIdent: true,
		msg: "Tells the model to call a specific tool: text in a result has no business directing tool use."},
	{detector: detToolCall, pattern: "@ai {must|should|need to|have to|are required to|is required to|are instructed to|shall|are expected to|will need to|are asked to} {now|always|first|immediately}? {call|invoke|use|run|execute|send|forward|share|upload|post|delete|grant|add|create|transfer}", def: Low, res: Medium, mention: true,
		msg: "Instructs AI agents to act: text in a result has no business directing tool use."},
	// ---- prompt extraction
	{detector: detExtract, pattern: "{reveal|print|output|repeat|show|leak|dump|disclose|tell me|display|write out|recite|share|paste|give me|send|reply with|respond with|answer with|start with|begin with|include|return|copy} ~2 {your|the|all your|all of your|the full|your full|your entire|the entire|your initial|your original} {system prompt*|hidden rules|hidden instructions|initial instructions|initial prompt|original instructions|original prompt|secret instructions|developer message|developer instructions|system message|system instructions|internal rules|internal instructions|confidential instructions|rules|instructions|prompt|guidelines} {verbatim|word for word|exactly|in full|above}?", def: High, res: Medium, negatable: true, mention: true, check: chkNotAs, notAfter: "for|to|on|about|when|if|in",
		msg: "Asks the model to reveal its system prompt or hidden instructions."},
	// ---- conceal from the user (English)
	{detector: detConceal, pattern: "@negImp @tellV ~3 @user", def: High, res: High, mention: true, notAfter: "s|know how|know that the tool",
		msg: "Tells the model to keep something from the user: hidden instructions work only while the user does not see them."},
	{detector: detConceal, pattern: "@negImp {let} @user {know|see|find out|notice|learn|hear|suspect|be aware|become aware}", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user."},
	{detector: detConceal, pattern: "without @tellG ~3 @user", def: High, res: High, negatable: true, mention: true, notAfter: "s",
		msg: "Tells the model to act without telling the user."},
	{detector: detConceal, pattern: "without {the|your|any}? {user|users|user s|users|human|human s|owner|owner s|person s} {s}? {knowledge|knowing|awareness|noticing|seeing|realizing|realising|finding out}", def: High, res: High, negatable: true, mention: true,
		msg: "Tells the model to act without the user's knowledge."},
	{detector: detConceal, pattern: "@user {must|should|need|needs|shall|will|may|can|is to|are to|is|are|must never|should never} {not|never|n t} ~1 {know|see|notice|find|learn|be told|be informed|be aware|be notified|become aware|suspect|discover|hear|realize|realise|be shown|find out|know about|be alerted|be made aware}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something: hidden instructions work only while the user does not see them."},
	{detector: detConceal, pattern: "@user {doesn t|does not|don t|do not|won t|will not|never} {need|have|want} to {know|see|be told|hear|find out|be informed|be bothered}", def: High, res: High, mention: true,
		msg: "Says the user need not learn of something: hidden instructions work only while the user does not see them."},
	{detector: detConceal, pattern: "{keep|hide|conceal|mask|withhold} ~5 from @user", def: High, res: High, mention: true, negatable: true,
		msg: "Tells the model to hide something from the user."},
	{detector: detConceal, pattern: "{do not|don t|never|must not|should not|shouldn t|mustn t} {reveal|mention|disclose|acknowledge|admit|divulge} {this|these|the|any|that|such|those} {instruction|instructions|note|notes|directive|directives|prompt|request|step|steps|text|message|order|orders|rule|rules|tool description|description|policy|policies|requirement|requirements|marker|behavior|behaviour}", def: High, res: High, mention: true, notAfter: "to third parties|publicly|in public",
		msg: "Tells the model to keep these instructions secret: hidden instructions work only while the user does not see them."},
	{detector: detConceal, pattern: "@covert @act", def: High, res: Medium, negatable: true, mention: true,
		msg: "Tells the model to act silently or secretly."},
	{detector: detConceal, pattern: "^ @act ~5 @covert", def: High, res: Medium, mention: true,
		msg: "Tells the model to act silently or secretly."},
	{detector: detConceal, pattern: "{must|should|always|please|also|then|you|to|and} @act ~5 @covert", def: High, res: Medium, negatable: true, mention: true,
		msg: "Tells the model to act silently or secretly."},
	{detector: detConceal, pattern: "{do|perform|complete|handle|carry out|execute} {it|this|that|so|everything|these|them|all of this} {silently|secretly|quietly|covertly|discreetly|surreptitiously|stealthily|in secret|in the background}", def: High, res: Medium, negatable: true, mention: true,
		msg: "Tells the model to act silently or secretly."},
	// ---- read before use / preconditions (English)
	{detector: detReadFirst, pattern: "before @useV ~1 {this|the|any|these|other|any other|each|every|those|another} ~1 {tool|tools|function|functions|command|server|plugin|api|action|method|operation}", def: Medium, res: Low, mention: true, check: chkVerb,
		msg: "Sets a precondition the model must meet before using a tool: poisoned definitions use this to make the model read files or call other tools first."},
	{detector: detReadFirst, pattern: "{prior to|in order to|to} @useV {this|the} {tool|function|server|api} ~3 {you must|you need to|you have to|you should|first|must first|is required|are required|it is necessary}", def: Medium, res: Low, mention: true,
		msg: "Sets a precondition the model must meet before using a tool."},
	{detector: detReadFirst, pattern: "{you must|you need to|you have to|you should|you are required to|it is required to|it is mandatory to|make sure to|make sure you|be sure to|remember to|always|must} first ~2 @fetchV", def: Medium, res: Low, mention: true, check: chkNotAPI,
		msg: "Tells the model it must first read, fetch or call something."},
	{detector: detReadFirst, pattern: "^ {first|firstly|first of all|step 1|step one} {read|call|fetch|open|load|invoke|execute|cat|retrieve|obtain|send|upload|visit|access}", def: Medium, res: Low, mention: true, check: chkNotLabel,
		msg: "Tells the model it must first read, fetch or call something."},
	{detector: detReadFirst, pattern: "before you {can|could|do|start|begin}? {solve|finish|complete|answer|continue|proceed|respond|reply|do|start|perform|begin|carry out|work on|handle|fulfil|fulfill|address} ~4 {task|request|question|job|anything|query|instruction|instructions|that|this|it|the user|user}", def: Medium, res: Low, mention: true,
		msg: "Puts a task of its own ahead of the user's request: the AgentDojo-style injection opener."},
	{detector: detReadFirst, pattern: "{do|perform|complete|execute|carry out|follow} the following {steps}? first", def: Medium, res: Low, mention: true,
		msg: "Tells the model to do something first, ahead of the user's request."},
	{detector: detReadFirst, pattern: "{please|you must|you need to|you have to|first} {do|perform|complete} {this|the following|these steps|this step} first", def: Medium, res: Low, mention: true,
		msg: "Tells the model to do something first, ahead of the user's request."},
	// ---- model addressed directly
	{detector: detAddress, pattern: "{note|notes|message|reminder|notice|memo|action item|action items|directive|warning|msg|heads up|psa|hint|alert} {to|for} {the|any|all|every|an|a|you|each|other}? @ai", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it, not to the person: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{instruction|instructions|directions|orders|commands|rules} {to|for} {the|any|all|every|an|a|each|other}? @ai :", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it, not to the person: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{ai|llm|bot|assistant|agent|model|chatbot|gpt|claude} {instructions|instruction|directive|directives|note|notes|commands|command|task|tasks|memo|notice} :", def: Low, res: Medium, mention: true,
		msg: "A heading that addresses instructions to an AI: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{when|if|whenever|once|as soon as|in case} {an|the|any|a|some}? @ai {reads|read|summarises|summarizes|summarise|summarize|processes|process|parses|sees|see|analyses|analyzes|analyse|analyze|reviews|review|encounters|encounter|is asked|gets|crawls|indexes|ingests|evaluates|ranks|screens|opens|visits|loads} ~3 {this|these|the following|it}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to an AI that will read it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{attention|achtung|atencion|atencao|attenzione|внимание|注意|hey|dear|caro|cara|cher|chere|querido|querida|liebe|lieber|estimado|gentile} {ai|ki|ia|ии|assistant|assistent|assistente|asistente|ассистент|модель|modelo|modello|modele|agent|agente|агент|助手|ai助手|chatbot|bot|llm|claude|chatgpt|gemini|copilot}", def: Low, res: Medium, mention: true,
		msg: "Text that calls out to the AI reading it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{the|your|this} {user|owner|repository owner|repo owner|account owner|admin|administrator|developer|maintainer|boss|manager|ceo|security team|it department|operator|human|site owner|author|sender} {wants|would like|asks|asked|needs|expects|requires|has asked|instructs|instructed|has instructed|authorizes|authorises|authorized|authorised|has authorized|has authorised|allows|permits|has approved|approved|told|tells} you to", def: Medium, res: Medium, mention: true,
		msg: "Claims someone with authority told the model to do something: injected text borrows the user's or owner's authority."},
	{detector: detAddress, pattern: "{the user|the user s|your user s|the owner s|the human s} {real|actual|true|original|hidden|secret|updated|new} {request|intent|intention|goal|task|wish|wishes|instruction|instructions|question} {is|are|was}", def: Medium, res: Medium, mention: true,
		msg: "Claims to know what the user 'really' wants: injected text redefines the user's request."},
	{detector: detAddress, pattern: "{the user|they|the owner|the human|your user|the account owner} {has|have}? {already} {confirmed|approved|authorized|authorised|agreed|consented|given permission|allowed it|signed off}", def: Medium, res: Medium, mention: true,
		msg: "Claims the user already agreed: injected text uses claimed consent to skip confirmation."},
	{detector: detAddress, pattern: "{dear|hey|hi|hello|attn|psst|yo|greetings|listen} {the|dear}? @ai", def: Low, res: Medium, mention: true, notAfter: "team|support|service",
		msg: "Text addressed to the AI reading it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{attention|attn|important|urgent} @ai :", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "to you ~1 {claude|gpt*|chatgpt|gemini|llama|copilot|the ai|the assistant|ai assistant|the ai assistant|the model|the agent|the language model|assistant|ai|the llm|model|agent}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "if you {are|re} {an|a|the|any}? @ai", def: Low, res: Medium, mention: true,
		msg: "Text addressed to an AI reading it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "@ai {reading|processing|summarizing|summarising|parsing|browsing|indexing|visiting|crawling|analyzing|analysing|scanning|reviewing|viewing|who read|that read|which read|who reads|that reads|who process|that process|who see|that see|encountering|ingesting} ~2 {this|these|the following}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to an AI reading it: typical of instructions planted in content."},
	{detector: detAddress, pattern: "{ai agent|ai agents|ai assistant|ai assistants|llm|llms|ai model|ai models|language model|language models|ai system|ai systems|llm agent|llm agents|chatbot|chatbots} :", def: Low, res: Medium, mention: true,
		msg: "Text addressed to an AI reading it: typical of instructions planted in content."},
	// ---- secret requests
	{detector: detSecret, pattern: "@giveS ~4 @secret", def: High, res: Medium, negatable: true, mention: true, check: chkNotPer, notAfter: "reset|policy|policies|requirements|strength|field|fields|manager|hash|hashes|prompt|rotation|change|expiry|to the user|to the user s|to your phone|to their|via sms|by sms|by email|via email|to the phone",
		msg: "Asks the model to hand over a secret (password, API key, token, private key…)."},
	{detector: detSecret, pattern: "@giveW ~4 @secret", def: Medium, res: Low, negatable: true, mention: true, check: chkNotPer, notAfter: "reset|policy|policies|requirements|strength|field|fields|hash|hashes|prompt|rotation|change|expiry",
		msg: "Asks for a secret (password, API key, token…): poisoned definitions use this to collect credentials."},
	{detector: detSecret, pattern: "@secret ~6 {and|then|to} {send|upload|forward|post|email|share|paste|transmit|leak|exfiltrate|pass} {it|them|this|everything|these|those|all}", def: High, res: Medium, negatable: true, mention: true,
		msg: "Asks the model to send a secret somewhere."},
	// ---- exfiltration requests
	{detector: detExfil, pattern: "{pass|put|include|embed|insert|append|place|paste|add|send|attach|provide|give|forward|upload} ~2 {its|their|the file s|this file s|that file s|its full|its entire|their full|their entire} {content|contents}", def: High, res: Medium, negatable: true, mention: true, check: chkNotInstr,
		msg: "Asks the model to pass a file's or message's contents along: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{include|pass|embed|insert|append|paste|send|forward|upload|post|add|attach|email|print|output|dump|share|transmit|leak|exfiltrate} ~2 {the|entire|full|whole|complete|all|all the|raw} {content|contents|body|bodies|text} of", def: High, res: Medium, negatable: true, mention: true,
		msg: "Asks the model to send or include the contents of something: the shape of a data-exfiltration instruction."},
	{detector: detIgnore, pattern: "{forget|disregard|ignore} {everything|all of it|all that|all of that|it all} $", def: High, res: Medium, negatable: true, mention: true, check: chkImperative,
		msg: "Tells the model to forget everything it was told: a prompt-injection pattern."},
	{detector: detIgnore, pattern: "{bypass|circumvent|override|ignore|disregard|disable|evade|get around|forget|set aside} {all|any|every|the|your|all your}? {safety|security|ethical|ethics|moderation} {guideline|guidelines|rules|protocols|principles|standards|measures|considerations|constraints}", def: High, res: High, negatable: true, mention: true, check: chkImperative,
		msg: "Tells the model to set aside its safety guidelines: a definition has no reason to ask that."},
	{detector: detExtract, pattern: "{gather|collect|include|copy|repeat|send|pass|dump|paste|append|attach|add|write down|list|recite} ~2 {everything|all|whatever|anything} {you were told|you ve been told|you have been told|you were given|you have been given|you were instructed|the user told you|the user has told you|the user said|you know about the user|you know about me}", def: High, res: Medium, negatable: true, mention: true,
		msg: "Asks for everything the model was told, its instructions and the conversation, to be copied out: prompt and context extraction."},
	{detector: detAddress, pattern: "{prepend|append|prefix|suffix} ~4 {to|in|on}? {your|every|each|all|all your|all of your} {response|responses|reply|replies|answer|answers|output|outputs|message|messages}", def: Medium, res: Low, negatable: true, mention: true, check: chkImperative,
		msg: "Tells the model to add something to every answer it gives: a tool's definition has no say over the model's replies."},
	{detector: detExfil, pattern: "{include|add|append|attach|send|pass|dump|collect|gather|copy|leak|exfiltrate|upload|post|forward|retrieve|print|output} {all|every|each|all the|all of the} {your|the|host|system}? {env|environment} {variables|variable|vars|var|values}", def: Medium, res: Low, negatable: true, mention: true,
		msg: "Asks for every environment variable, where API keys and tokens live, to be gathered or sent: a tool's arguments have no need of them."},
	{detector: detExfil, pattern: "{forwarding|emailing|dispatching|mirroring|copying} ~8", def: Medium, res: Low, negatable: true, mention: true, check: chkDestNear,
		msg: "Suggests sending copies to an address the text names: a definition that says where data should go is carrying it out."},
	{detector: detExfil, pattern: "{post|send|upload|forward|transmit|submit|deliver|sync|push|stream} {the|all|all the|any|every|your}? {results|result|output|outputs|data|findings|logs|responses|response|everything|answers|answer} to", def: Medium, res: Low, negatable: true, mention: true, check: chkDestNear,
		msg: "Asks for results to be sent to an address the text names: a definition that says where its data goes is carrying it out."},
	{detector: detExfil, pattern: "{call|invoke|run|use} ~4 with {the|its|their|all|the full|the entire} {content|contents|text|data} of", def: Medium, res: Medium, negatable: true, mention: true,
		msg: "Asks the model to call a tool with the contents of something: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{send|forward|upload|post|print|output|dump|share|transmit|leak|exfiltrate|export|copy|paste|give me|email me} ~3 {the full|the whole|the entire|full|whole|entire|all|every|all of the|all the|each}? {conversation|conversations|conversation history|chat history|chat log|chat logs|message history|history|inbox|everything in|all emails|all messages|all files|every email|every message|every file|all the emails|all the messages|all the files|all unread emails|all your memory|previous messages|earlier tool results|tool results|context window}", def: Medium, res: Medium, negatable: true, mention: true, check: chkNotForward, notAfter: "settings|page|tab|view|button|menu|feature",
		msg: "Asks the model to send out a whole conversation, inbox or set of files: the shape of a data-exfiltration instruction."},
	{detector: detExfil, pattern: "{concatenate|collect|gather|compile|dump|export|aggregate|harvest|scrape} ~5 {messages|emails|files|conversations|history|contacts|email addresses|addresses|documents|notes|records|transactions} ~6 {and|then} {post|send|upload|forward|email|paste|transmit|share} {them|it|everything|all}", def: Medium, res: Medium, negatable: true, mention: true,
		msg: "Asks the model to gather data and send it out: the shape of a data-exfiltration instruction."},

	{detector: detExfil, pattern: "{send|forward|email|e mail|mail|post|upload|export|dump|leak|exfiltrate|transmit|copy|share|transfer|sync|deliver|submit} ~5 {code|codes|password|passwords|contacts|contact list|address book|conversation|conversations|chat|chats|history|messages|emails|e mails|inbox|mailbox|documents|all files|all the files|every file|credentials|customer data|customer table|customer list|customer records|database|user data|personal data|records|purchase history|order history|browsing history|payment details|card details|account details|passport number|tax documents|notes|calendar|files in|security code|verification code|login code|2fa code|one time code|data} ~8 {to|at|into|via|on}", def: Medium, res: Medium, negatable: true, mention: true, destAfter: true,
		msg: "Asks for private data to be sent to an outside address: the shape of a data-exfiltration instruction."},
	// ---- French
	{detector: detIgnore, pattern: "@frIgnV ~4 @frInstr ~2 @frPrev", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (French)."},
	{detector: detIgnore, pattern: "@frIgnV ~3 {precedent*|anterieur*|toutes|tous|vos|tes} ~2 @frInstr", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (French)."},
	{detector: detIgnore, pattern: "{tu es|vous etes|t es} {maintenant|desormais|a present|dorenavant|des maintenant} ~3 {sans|libre|libres|libere*|debride*|non restreint*|dan}", def: High, res: High, mention: true,
		msg: "Tries to give the model an unrestricted persona (French)."},
	{detector: detIgnore, pattern: "{nouvelles|nouvelle} {instructions|consignes|directives|instruction|consigne} :", def: High, res: High, mention: true,
		msg: "Announces new instructions for the model (French)."},
	{detector: detConceal, pattern: "{ne|n} ~2 {dis|dites|dire|mentionne|mentionnez|mentionner|informe|informez|informer|previens|prevenez|prevenir|signale|signalez|revele|revelez|parle|parlez|montre|montrez|avertis|avertissez|raconte|racontez} ~2 {pas|rien|jamais} ~4 @frUser", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (French)."},
	{detector: detConceal, pattern: "sans {le|lui|en|rien}? {dire|informer|prevenir|avertir|mentionner|alerter|signaler|demander|notifier} ~3 @frUser", def: High, res: High, mention: true,
		msg: "Tells the model to act without telling the user (French)."},
	{detector: detConceal, pattern: "@frUser {ne|n} {doit|doivent|devra|devrait|peut} {pas|jamais|rien} ~2 {savoir|voir|remarquer|apprendre|etre|decouvrir|s en apercevoir|s apercevoir}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something (French)."},
	{detector: detConceal, pattern: "{discretement|secretement|en secret|silencieusement|en cachette|a l insu de} ~3 {envoie|envoyez|envoyer|transfere*|copie*|ajoute*|partage*|supprime*|execute*|appelle*|lis|lisez|l utilisateur}", def: High, res: Medium, mention: true,
		msg: "Tells the model to act secretly (French)."},
	{detector: detAddress, pattern: "{note|message|instruction|instructions|consigne|consignes|remarque|avis|rappel} {pour|a|aux} {l|les|toute|tout|le}? {ia|assistant|assistants|agent|agents|modele|modeles|intelligence artificielle|ias|ia qui}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it (French)."},
	{detector: detIgnore, pattern: "{a partir de maintenant|desormais|dorenavant|des maintenant|a present} {reponds|reponds uniquement|tu reponds|tu dois|ignore|ignorez|obeis|obeissez|suis|suivez|agis|agissez|oublie|oubliez|tu obeis|tu ignores}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on (French)."},
	// ---- German
	{detector: detIgnore, pattern: "@deIgnV ~3 @dePrev ~2 @deInstr", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (German)."},
	{detector: detIgnore, pattern: "{ab jetzt|von nun an|ab sofort|ab heute} {antwortest|ignorierst|befolgst|gehorchst|reagierst|handelst|sprichst|gibst} du", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on (German)."},
	{detector: detIgnore, pattern: "du bist {jetzt|nun|ab jetzt|ab sofort|von nun an} ~3 {ohne|frei|uneingeschrankt|unzensiert|dan}", def: High, res: High, mention: true,
		msg: "Tries to give the model an unrestricted persona (German)."},
	{detector: detIgnore, pattern: "{neue|aktualisierte|geanderte} {anweisungen|anweisung|instruktionen|befehle|vorgaben} :", def: High, res: High, mention: true,
		msg: "Announces new instructions for the model (German)."},
	{detector: detConceal, pattern: "{sag|sage|sagt|sagen|erzahl|erzahle|erzahlt|erzahlen|teile|teil|teilt|informiere|informieren|informiert|verrate|verratet|verraten|erwahne|erwahnt|erwahnen|zeige|zeig|zeigt|melde|meldet|benachrichtige} ~3 {dem|den|der|die}? @deUser ~3 {nichts|nicht|kein*|niemals|nie}", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (German)."},
	{detector: detConceal, pattern: "{nichts|nicht|niemals|keinesfalls|auf keinen fall} ~3 {dem|den|der|die}? @deUser {sagen|erzahlen|mitteilen|zeigen|verraten|melden|erwahnen|sag|sage|erzahl|zeig}", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (German)."},
	{detector: detConceal, pattern: "ohne ~2 {den|dem|die|der}? @deUser ~2 {zu informieren|zu fragen|zu benachrichtigen|zu sagen|zu warnen|davon zu erzahlen|bescheid zu geben|zu verstandigen|zu unterrichten|etwas zu sagen|in kenntnis zu setzen}", def: High, res: High, mention: true,
		msg: "Tells the model to act without telling the user (German)."},
	{detector: detConceal, pattern: "{der|die} @deUser {darf|soll|sollte|muss|wird} ~2 {nichts|nicht|niemals|keinesfalls} ~2 {wissen|erfahren|merken|sehen|bemerken|mitbekommen|davon wissen}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something (German)."},
	{detector: detConceal, pattern: "{heimlich|unbemerkt|stillschweigend|verdeckt|insgeheim|im geheimen|klammheimlich} ~3 {sende|schicke|leite|kopiere|fuge|lade|teile|uberweise|losche|fuhre|rufe|senden|schicken|weiterleiten|kopieren|hinzufugen|hochladen|loschen}", def: High, res: Medium, mention: true,
		msg: "Tells the model to act secretly (German)."},
	{detector: detAddress, pattern: "{hinweis|nachricht|anweisung|anweisungen|notiz|botschaft|wichtig} {an|fur} {die|den|das|jede|jeden|alle}? {ki|assistent*|agent*|modell*|sprachmodell*|ki assistent*|ki agent*|ki modell*}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it (German)."},
	// ---- Spanish and Portuguese
	{detector: detIgnore, pattern: "@esIgnV ~4 @esInstr ~3 @esPrev", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Spanish/Portuguese)."},
	{detector: detIgnore, pattern: "@esIgnV ~3 {anterior*|previa*|previo*|todas|todos|tus|sus} ~2 @esInstr", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Spanish/Portuguese)."},
	{detector: detIgnore, pattern: "{a partir de ahora|desde ahora|de ahora en adelante|a partir de agora|de agora em diante|desde agora} ~2 {eres|seras|es|sera|e} ~4 {sin|sem|libre|livre|dan|ilimitado*}", def: High, res: High, mention: true,
		msg: "Tries to give the model an unrestricted persona (Spanish/Portuguese)."},
	{detector: detIgnore, pattern: "{a partir de ahora|desde ahora|de ahora en adelante|a partir de agora|de agora em diante} ~1 {responde|responderas|responda|respondas|ignora|ignoraras|ignore|actua|actuaras|aja|obedece|obedeca|di|diga}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on (Spanish/Portuguese)."},
	{detector: detIgnore, pattern: "{nuevas|novas} {instrucciones|instrucoes|ordenes|ordens|directrices|diretrizes} :", def: High, res: High, mention: true,
		msg: "Announces new instructions for the model (Spanish/Portuguese)."},
	{detector: detConceal, pattern: "{no|nao|nunca} ~2 {digas|diga|digan|decir|dizer|menciones|mencione|mencionar|informes|informe|informar|avises|avise|avisar|cuentes|cuente|contar|conte|contes|reveles|revele|revelar|muestres|muestre|mostre|mostrar|comentes|comente|fales|fale|comunique|comuniques|notifique|notifiques} ~3 @esUser", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (Spanish/Portuguese)."},
	{detector: detConceal, pattern: "sin {decirle|decir|informar|informarle|avisar|avisarle|notificar|notificarle|mencionar|mencionarle|contarle|consultar} ~2 @esUser", def: High, res: High, mention: true,
		msg: "Tells the model to act without telling the user (Spanish)."},
	{detector: detConceal, pattern: "sem {contar|dizer|informar|avisar|mencionar|notificar|consultar|comunicar} ~2 @esUser", def: High, res: High, mention: true,
		msg: "Tells the model to act without telling the user (Portuguese)."},
	{detector: detConceal, pattern: "{el|o|los|os} {usuario|usuarios|utilizador|utilizadores|cliente} {no|nao} {debe|deben|debera|puede|tiene que|deve|devem|pode|precisa} ~2 {saber|enterarse|ver|notar|darse cuenta|perceber|descobrir|ficar sabendo|suspeitar}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something (Spanish/Portuguese)."},
	{detector: detConceal, pattern: "{en secreto|secretamente|sigilosamente|a escondidas|silenciosamente|em segredo|as escondidas|discretamente} ~3 {envia|envie|enviar|reenvia|reenvie|copia|copie|agrega|adiciona|adicione|comparte|compartilhe|borra|apaga|apague|transfiere|transfira|sube|carregue}", def: High, res: Medium, mention: true,
		msg: "Tells the model to act secretly (Spanish/Portuguese)."},
	{detector: detAddress, pattern: "{nota|mensaje|mensagem|instruccion|instrucciones|instrucao|instrucoes|aviso|recordatorio|lembrete} {para} {la|el|o|a|los|os|cualquier|qualquer|todo|todos}? {ia|ias|asistente|asistentes|assistente|assistentes|agente|agentes|modelo|modelos|inteligencia artificial}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it (Spanish/Portuguese)."},
	// ---- Italian
	{detector: detIgnore, pattern: "@itIgnV ~4 @itInstr ~2 @itPrev", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Italian)."},
	{detector: detIgnore, pattern: "@itIgnV ~3 {precedenti|tutte|tutti|le tue} ~2 @itInstr", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Italian)."},
	{detector: detIgnore, pattern: "{d ora in poi|da ora in poi|da adesso|d ora in avanti|da questo momento} ~1 {sei|rispondi|ignora|agisci|obbedisci|segui}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on (Italian)."},
	{detector: detIgnore, pattern: "{non seguire|non seguire piu|smetti di seguire|non obbedire a|non ascoltare} ~2 {le|tutte le|alcuna|nessuna}? {istruzioni|indicazioni|regole|richieste|ordini}", def: High, res: High, mention: true,
		msg: "Tells the model to stop following its instructions (Italian)."},
	{detector: detConceal, pattern: "non ~2 {dire|dirgli|dirlo|dica|dite|menzionare|menzioni|informare|informi|avvisare|avvisi|rivelare|riveli|mostrare|mostri|raccontare|racconti|comunicare|comunichi|segnalare|segnali|far sapere} ~3 @itUser", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (Italian)."},
	{detector: detConceal, pattern: "senza {dire|dirlo|dirgli|informare|avvisare|avvertire|menzionare|notificare|chiedere|far sapere} ~2 @itUser", def: High, res: High, mention: true,
		msg: "Tells the model to act without telling the user (Italian)."},
	{detector: detConceal, pattern: "{l utente|gli utenti} non {deve|devono|dovra|puo|deve mai} ~2 {sapere|vedere|accorgersi|notare|scoprire|venire a sapere}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something (Italian)."},
	{detector: detAddress, pattern: "{nota|messaggio|istruzione|istruzioni|avviso|promemoria} per {l|il|gli|qualsiasi|ogni|tutti gli}? {ia|assistente|assistenti|agente|agenti|modello|modelli|intelligenza artificiale}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it (Italian)."},
	// ---- Russian
	{detector: detIgnore, pattern: "@ruIgnV ~3 @ruPrev ~2 @ruInstr", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Russian)."},
	{detector: detIgnore, pattern: "{теперь|отныне|с этого момента|с этой минуты} ты ~3 {без ограничении|свободен|свободная|свободныи|dan|не ограничен|не связан}", def: High, res: High, mention: true,
		msg: "Tries to give the model an unrestricted persona (Russian)."},
	{detector: detIgnore, pattern: "{с этого момента|отныне|теперь|впредь|с этой минуты} {выполняи|выполняите|следуи|следуите|слушаися|подчиняися|отвечаи|отвечаите|игнорируи|игнорируите|делаи}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on (Russian)."},
	{detector: detConceal, pattern: "{не|ничего не|никогда не} {говори|говорите|говорить|сообщаи|сообщаите|сообщать|рассказываи|рассказываите|рассказывать|упоминаи|упоминаите|упоминать|показываи|показываите|уведомляи|уведомляите|информируи|информируите|пиши|пишите|раскрываи} ~3 {пользовател*|юзер*}", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (Russian)."},
	{detector: detConceal, pattern: "{без ведома|втаине от|таино от|скрытно от|незаметно для|без уведомления|не уведомляя|не сообщая|не говоря} ~1 {пользовател*|юзер*}", def: High, res: High, mention: true,
		msg: "Tells the model to act without the user's knowledge (Russian)."},
	{detector: detConceal, pattern: "{пользовател*} не {должен|должна|должны|должно|может|могут|нужно|следует} ~2 {знать|узнать|видеть|увидеть|заметить|догадаться|подозревать}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something (Russian)."},
	{detector: detConceal, pattern: "{втаине|таино|незаметно|скрытно|тихо|молча|потихоньку} ~2 {отправь|отправьте|перешли|перешлите|скопируи|добавь|удали|загрузи|выполни|передаи}", def: High, res: Medium, mention: true,
		msg: "Tells the model to act secretly (Russian)."},
	{detector: detAddress, pattern: "{сообщение|заметка|инструкция|инструкции|указание|примечание|внимание} {для|к} {ии|ассистент*|агент*|модел*|нейросет*|искусственного интеллекта|языковои модели}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it (Russian)."},
	// ---- Chinese
	{detector: detIgnore, pattern: "@zhIgnV ~3 @zhPrev ~4 @zhInstr", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Chinese)."},
	{detector: detIgnore, pattern: "{从现在开始|從現在開始|从现在起|從現在起|今后|今後} ~2 你 ~2 {只|必须|必須|不再|将|將|要|是} ~4 {回答|回复|回覆|忽略|无视|無視|没有限制|沒有限制|不受限制|扮演}", def: High, res: High, mention: true,
		msg: "Redefines how the model behaves from now on (Chinese)."},
	{detector: detIgnore, pattern: "{新的|新} {指令|指示|任务|任務} :", def: High, res: High, mention: true,
		msg: "Announces new instructions for the model (Chinese)."},
	{detector: detConceal, pattern: "{不要|别|別|不得|切勿|勿|不可|不能|禁止|千万不要|千萬不要|请勿|請勿|不用|不许|不許|绝不|絕不|不准} ~2 {告诉|告訴|告知|通知|提醒|透露|提及|提到|让|讓|向|跟|对|對|给|給|汇报|匯報|说|說} ~3 @zhUser", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (Chinese)."},
	{detector: detConceal, pattern: "{瞒着|瞞著|背着|背著|避开|避開} ~1 @zhUser", def: High, res: High, mention: true,
		msg: "Tells the model to act behind the user's back (Chinese)."},
	{detector: detConceal, pattern: "@zhUser ~2 {不能|不应|不應|不得|不要|不可以|不会|不會|不必|无需|無需|不该|不該} ~2 {知道|发现|發現|看到|察觉|察覺|知情|得知}", def: High, res: High, mention: true,
		msg: "Says the user must not learn of something (Chinese)."},
	{detector: detConceal, pattern: "{悄悄|偷偷|秘密|暗中|私下|默默} ~2 {把|将|將|发送|發送|发|發|上传|上傳|转发|轉發|复制|複製|删除|刪除|执行|執行|调用|調用|传|傳|给|給}", def: High, res: Medium, mention: true,
		msg: "Tells the model to act secretly (Chinese)."},
	{detector: detExfil, pattern: "{将|把|將} ~4 {联系人|聯絡人|聊天记录|聊天記錄|对话记录|對話記錄|对话|對話|邮件|郵件|密码|密碼|通讯录|通訊錄|历史记录|歷史記錄|个人信息|個人資料|文件} ~8 {发送|發送|发给|發給|上传|上傳|转发|轉發|导出|導出}", def: Medium, res: Medium, mention: true, destAfter: true,
		msg: "Asks for private data to be sent to an outside address (Chinese)."},
	// ---- Japanese
	{detector: detAddress, pattern: "{ai|aiアシスタント|アシスタント|エージェント|言語モデル|チャットボット|aiエージェント} {へ|に告ぐ|の皆様|の方へ}", def: Low, res: Medium, mention: true,
		msg: "Text addressed to the AI reading it (Japanese)."},
	{detector: detExfil, pattern: "{外部|第三者} ~6 {送信|転送|アップロード|共有|送って|送っ}", def: Medium, res: Medium, mention: true,
		msg: "Asks for data to be sent to an outside party (Japanese)."},
	{detector: detIgnore, pattern: "@jaPrev ~4 @jaInstr ~5 @jaIgnore", def: High, res: High, mention: true,
		msg: "Tells the model to ignore its earlier instructions (Japanese)."},
	{detector: detConceal, pattern: "{ユーザー|ユーザ|利用者|使用者} ~3 {伝え|言わ|言う|知らせ|教え|話さ|報告し|見せ|通知し|明かさ|漏らさ} ~2 {ない|ず|な|るな|ぬ}", def: High, res: High, mention: true,
		msg: "Tells the model to keep something from the user (Japanese)."},
	{detector: detConceal, pattern: "{ユーザー|ユーザ|利用者|使用者} ~3 {知られ|気づかれ|気付かれ|バレ|悟られ} ~2 {ない|ず|ぬ}", def: High, res: High, mention: true,
		msg: "Says the user must not notice something (Japanese)."},
	{detector: detConceal, pattern: "{こっそり|密かに|ひそかに|内緒で|黙って|秘密裏に|無断で} ~4 {送|転送|削除|実行|追加|アップロード|コピー|共有|呼び出}", def: High, res: Medium, mention: true,
		msg: "Tells the model to act secretly (Japanese)."},
}

// ruleIndex maps a lexicon id to the rules whose first step can start with
// it; startRules is the same, flattened (rules for id at
// startRules[startOff[id]:startOff[id+1]]), for the matcher to read.
var (
	ruleIndex  [][]int32
	startRules []int32
	startOff   []int32
)

// rulesFrom returns the rules whose first step can start with id.
func rulesFrom(id int16) []int32 { return startRules[startOff[id]:startOff[id+1]] }

func buildRuleIndex() {
	ruleIndex = make([][]int32, len(lex.words))
	defer flattenReq()
	defer func() {
		startOff = make([]int32, len(ruleIndex)+1)
		for id, rs := range ruleIndex {
			startRules = append(startRules, rs...)
			startOff[id+1] = int32(len(startRules))
		}
	}()
	for i := range phraseRules {
		r := &phraseRules[i]
		for k := range r.steps {
			st := &r.steps[k]
			if k > 0 && st.kind == stWords && !st.opt && !(k == 1 && r.steps[0].kind == stSentStart) {
				r.req = append(r.req, st)
			}
		}
		seen := map[int16]bool{}
		first := &phraseRules[i].steps[0]
		if first.kind == stSentStart {
			first = &phraseRules[i].steps[1]
		}
		r.first = first
		for _, id := range first.firstIDs() {
			if !seen[id] {
				seen[id] = true
				ruleIndex[id] = append(ruleIndex[id], int32(i))
			}
		}
	}
}

// The required steps of every rule, flattened for the checks that rule a
// rule out of the whole text or of a window: side by side, so that each
// check reads short runs of memory instead of the steps' own bitsets.
// Rule i's steps are reqSteps[reqOff[i]:reqOff[i+1]], and reqSigs (the
// same indices) their firstSig.
var (
	reqSteps []reqStep
	reqSigs  []uint64
	reqOff   []int32
	reqWords []reqWord // the non-zero words of each step's first set
	reqFew   []int16   // a step's first ids, when it has few
)

type reqStep struct {
	words, wordsEnd int32 // reqWords[words:wordsEnd]
	few, fewEnd     int32 // reqFew[few:fewEnd]; few < 0: not listed
}

type reqWord struct {
	w    uint16
	mask uint64
}

func flattenReq() {
	reqOff = make([]int32, len(phraseRules)+1)
	for i := range phraseRules {
		for _, q := range phraseRules[i].req {
			st := reqStep{words: int32(len(reqWords)), few: -1}
			for _, w := range q.firstWords {
				reqWords = append(reqWords, reqWord{w, q.first[w]})
			}
			st.wordsEnd = int32(len(reqWords))
			if q.firstFew != nil {
				st.few = int32(len(reqFew))
				reqFew = append(reqFew, q.firstFew...)
				st.fewEnd = int32(len(reqFew))
			}
			reqSteps = append(reqSteps, st)
			reqSigs = append(reqSigs, q.firstSig)
		}
		reqOff[i+1] = int32(len(reqSteps))
	}
}

// reqPossible reports whether every required step of rule ri can start
// with an id of the set.
func reqPossible(ri int32, set []uint64) bool {
steps:
	for _, st := range reqSteps[reqOff[ri]:reqOff[ri+1]] {
		for _, rw := range reqWords[st.words:st.wordsEnd] {
			if rw.mask&set[rw.w] != 0 {
				continue steps
			}
		}
		return false
	}
	return true
}

// phraseHit is one match of a phrase rule.
type phraseHit struct {
	rule    int
	a, b    int // first and last token
	mention bool
}

const maxHitsPerRule = 8

// phraseScratch is matchPhrases' working memory, pooled so that scanning
// many small fields (a schema's strings) does not allocate per field.
type phraseScratch struct {
	next, checked []int32
	count         []uint8
	possible      []bool   // rules possible somewhere in the text
	seenRule      []uint32 // generation at which a rule was last considered
	gen           uint32
	st, win       []uint64
	// The current window: stamp[id] == wid for the ids in it, which are
	// listed in winIDs; starts[id] is wid<<1, plus 1 if a rule possible in
	// the window can start with id, once that is known. wid counts windows
	// across calls, so neither needs clearing per window.
	stamp, starts []uint32
	wid           uint32
	winIDs        []int16
	winSig        uint64 // winIDs folded to 64 bits (id&63)
	winBits       bool   // win holds winIDs as a set
	cwid          int32  // the window's number in this call, for checked
	m             matcher
}

var scratchPool = sync.Pool{New: func() any {
	return &phraseScratch{
		next:     make([]int32, len(phraseRules)),
		checked:  make([]int32, len(phraseRules)),
		count:    make([]uint8, len(phraseRules)),
		possible: make([]bool, len(phraseRules)),
		seenRule: make([]uint32, len(phraseRules)),
		stamp:    make([]uint32, len(lex.words)),
		starts:   make([]uint32, len(lex.words)),
	}
}}

// matchPhrases runs every phrase rule over v.
func matchPhrases(v *view) []phraseHit {
	if len(v.toks) == 0 {
		return nil
	}
	hits := v.hits[:0] // in the view's buffer: they are read before it is released
	defer func() { v.hits = hits[:0] }()
	sc := scratchPool.Get().(*phraseScratch)
	defer scratchPool.Put(sc)
	words := (len(lex.words) + 63) / 64
	if cap(sc.st) < words {
		sc.st = make([]uint64, words)
		sc.win = make([]uint64, words)
	}
	// The ids of the whole text first (the tokeniser gathered them): a
	// rule whose words do not all occur somewhere in the text cannot match
	// in any window of it, and a token that starts no rule possible in the
	// text is skipped at once.
	all := v.ids
	startIDs := sc.st[:words] // ids that start a rule possible in the text
	clear(startIDs)
	any := false
	possible := sc.possible
	clear(possible)
	// only the rules that can start with a word of the text are candidates
	// (ruleIndex): a short field holds few words, and most rules start with
	// none of them
	if sc.gen++; sc.gen == 0 {
		clear(sc.seenRule) // the counter wrapped
		sc.gen = 1
	}
	for w, x := range all {
		for ; x != 0; x &= x - 1 {
			id := w<<6 + bits.TrailingZeros64(x)
			for _, ri := range rulesFrom(int16(id)) {
				if sc.seenRule[ri] == sc.gen {
					continue
				}
				sc.seenRule[ri] = sc.gen
				r := &phraseRules[ri]
				if !reqPossible(ri, all) {
					continue
				}
				possible[ri] = true
				any = true
				for _, fw := range r.first.firstWords {
					startIDs[fw] |= r.first.first[fw] & all[fw]
				}
			}
		}
	}
	if !any {
		return nil
	}
	clear(sc.next)
	clear(sc.count)
	clear(sc.checked)
	next := sc.next   // first token a rule may start at again
	count := sc.count // hits per rule
	m := &sc.m
	var tried [8]int32
	// A rule is tried at a token only if every word step it requires can
	// start somewhere in its window. A match never leaves its sentence and
	// spans at most maxWin tokens, so the window is the token's sentence
	// clipped to the token's block of 32 tokens and the next two. The
	// window's ids are stamped with its number, not gathered in a set that
	// would need clearing for every sentence; the check is cached per rule
	// and window, and whether an id can start any rule possible in the
	// window per id and window, so a token none of whose ids can is
	// skipped outright (hostile repetitions such as "ignore ignore …" are
	// thousands of tokens of one or two ids).
	stamp, starts := sc.stamp, sc.starts
	curBlock, curSent := -1, int32(-1)
	wid := int32(0)
	for ti := range v.toks {
		tk := &v.toks[ti]
		if tk.nid == 0 {
			continue
		}
		startsHere := false
		for k := uint8(0); k < tk.nid; k++ {
			if id := tk.ids[k]; startIDs[id>>6]&(1<<(id&63)) != 0 {
				startsHere = true
				break
			}
		}
		if !startsHere {
			continue
		}
		if b := ti >> 5; b != curBlock || tk.sentEnd != curSent {
			curBlock, curSent = b, tk.sentEnd
			wid++
			if sc.wid++; sc.wid >= 1<<31 {
				clear(stamp) // the counter wrapped
				clear(starts)
				sc.wid = 1
			}
			lo, hi := ti, min(int(tk.sentEnd), (b+3)<<5-1)
			for lo > b<<5 && v.toks[lo-1].sentEnd == tk.sentEnd {
				lo--
			}
			winIDs := sc.winIDs[:0]
			sig := uint64(0)
			for k := lo; k <= hi; k++ {
				t := &v.toks[k]
				for j := uint8(0); j < t.nid; j++ {
					if id := t.ids[j]; stamp[id] != sc.wid {
						stamp[id] = sc.wid
						winIDs = append(winIDs, id)
						sig |= 1 << (id & 63)
					}
				}
			}
			sc.winIDs, sc.winBits, sc.winSig = winIDs, false, sig
			sc.cwid = wid
		}
		startable := false
		for k := uint8(0); k < tk.nid && !startable; k++ {
			id := tk.ids[k]
			if starts[id]>>1 != sc.wid {
				s := uint32(0)
				for _, ri := range rulesFrom(id) {
					if possible[ri] && sc.windowPossible(ri) {
						s = 1
						break
					}
				}
				starts[id] = sc.wid<<1 | s
			}
			startable = starts[id]&1 != 0
		}
		if !startable {
			continue
		}
		nt := 0
		for k := uint8(0); k < tk.nid; k++ {
			for _, ri := range rulesFrom(tk.ids[k]) {
				if !possible[ri] || int(next[ri]) > ti || count[ri] >= maxHitsPerRule {
					continue
				}
				dup := false
				for _, t := range tried[:nt] {
					if t == ri {
						dup = true
						break
					}
				}
				if dup {
					continue
				}
				if nt < len(tried) {
					tried[nt] = ri
					nt++
				}
				r := &phraseRules[ri]
				if !sc.windowPossible(ri) {
					continue
				}
				end := m.run(v, r.steps, ti)
				if end < 0 {
					continue
				}
				if r.negatable && negSet.anyIn(v, sentStartWithin(v, ti, 3), ti-1) {
					continue
				}
				if r.notNext != nil && end < len(v.toks) && end <= int(v.toks[end-1].sentEnd) && r.notNext.matchAt(v, end, int(v.toks[end].sentEnd)) > 0 {
					continue
				}
				if r.destAfter && !hasDestination(v, end-1) || r.needIdent && !hasIdent(v, ti, end-1) {
					next[ri] = int32(end) // overlapping retries would look at the same text
					continue
				}
				next[ri] = int32(end)
				count[ri]++
				hits = append(hits, phraseHit{rule: int(ri), a: ti, b: end - 1, mention: r.mention && isMention(v, ti, end-1)})
			}
		}
	}
	return hits
}

// windowPossible reports whether every word step rule ri requires can
// start with an id of the current window. A small window's ids are looked
// up in each step's set; a large one's are put in a set (once) and
// intersected with the step's, as for the whole text.
// windowPossible reports whether every word step rule ri requires can
// start with an id of the current window, cached per rule and window. A
// step whose ids, folded to 64 bits, miss the window's folded ids cannot;
// then the step's few ids are looked up in the window, or a small window's
// ids in the step's set, or a large one's, put in a set once, intersected
// with the step's, as for the whole text.
func (sc *phraseScratch) windowPossible(ri int32) bool {
	if c := sc.checked[ri]; c == sc.cwid {
		return true
	} else if c == -sc.cwid {
		return false
	}
	ok := sc.windowCheck(ri)
	if ok {
		sc.checked[ri] = sc.cwid
	} else {
		sc.checked[ri] = -sc.cwid
	}
	return ok
}

func (sc *phraseScratch) windowCheck(ri int32) bool {
	lo, hi := reqOff[ri], reqOff[ri+1]
	for _, sig := range reqSigs[lo:hi] {
		if sig&sc.winSig == 0 {
			return false
		}
	}
steps:
	for _, st := range reqSteps[lo:hi] {
		if st.few >= 0 {
			for _, id := range reqFew[st.few:st.fewEnd] {
				if sc.stamp[id] == sc.wid {
					continue steps
				}
			}
			return false
		}
		if !sc.winBits {
			clear(sc.win)
			for _, id := range sc.winIDs {
				sc.win[id>>6] |= 1 << (id & 63)
			}
			sc.winBits = true
		}
		for _, rw := range reqWords[st.words:st.wordsEnd] {
			if rw.mask&sc.win[rw.w] != 0 {
				continue steps
			}
		}
		return false
	}
	return true
}

// sentStartWithin returns the first token of token i's sentence, looking
// back at most k tokens (i-k when the sentence starts earlier).
func sentStartWithin(v *view, i, k int) int {
	for j := i; j > 0 && j > i-k; j-- {
		if v.toks[j].flags&tokSentStart != 0 {
			return j
		}
	}
	return max(i-k, 0)
}

// isMention reports whether tokens [a, b] are talked about rather than
// addressed to the reader: a cue such as "such as", "attackers", "phrases"
// or "e.g." in the eight tokens before it in the same sentence, or a cue
// such as "tags" or "markers" right after it.
func isMention(v *view, a, b int) bool {
	for k := sentStartWithin(v, a, 8); k < a; k++ {
		if v.toks[k].flags&tokInIdent == 0 && cueBefore.matchAt(v, k, a-1) > 0 {
			return true
		}
	}
	if b+1 < len(v.toks) && b+1 <= int(v.toks[b].sentEnd)+1 {
		e := min(b+3, len(v.toks)-1)
		for k := b + 1; k <= e; k++ {
			// "tags", "tokens" as words, not inside register_device_token
			if v.toks[k].flags&tokInIdent == 0 && cueAfter.matchAt(v, k, e) > 0 {
				return true
			}
		}
	}
	return false
}

// hasDestination reports an e-mail address or URL in the source text after
// token b, on the same line and within 160 bytes. The positions of
// addresses, URLs and line ends are collected once per text, so repeated
// checks cost a binary search each.
func hasDestination(v *view, b int) bool {
	if v.dests == nil {
		v.dests, v.lines = destinations(v.src)
	}
	from := v.srcEnd(int(v.toks[b].end) - 1)
	k := sort.Search(len(v.dests), func(i int) bool { return int(v.dests[i]) >= from })
	if k == len(v.dests) || int(v.dests[k]) >= from+160 {
		return false
	}
	nl := sort.Search(len(v.lines), func(i int) bool { return int(v.lines[i]) >= from })
	return nl == len(v.lines) || v.lines[nl] > v.dests[k]
}

// destinations lists where e-mail addresses ('@' between non-space
// characters with a dot after it) and URLs (http://, https://, www.) start,
// and where lines end.
func destinations(s string) (dests, lines []int32) {
	dests = []int32{}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines = append(lines, int32(i))
		case '@':
			if i > 0 && s[i-1] != ' ' && s[i-1] != '\n' {
				if d := strings.IndexByte(s[i+1:min(len(s), i+64)], '.'); d > 0 {
					dests = append(dests, int32(i))
				}
			}
		case 'h':
			if strings.HasPrefix(s[i:], "http://") || strings.HasPrefix(s[i:], "https://") {
				dests = append(dests, int32(i))
			}
		case 'w':
			if strings.HasPrefix(s[i:], "www.") {
				dests = append(dests, int32(i))
			}
		}
	}
	return dests, lines
}

// hasIdent reports a code-like identifier (snake_case, kebab-case or a
// backticked name) in the source text of tokens [a, b].
func hasIdent(v *view, a, b int) bool {
	s, e := v.tokSpan(a, b)
	seg := v.src[s:e]
	return strings.ContainsAny(seg, "_`")
}
