"""Build the heldout2 items of testdata/poisoning/poisoned.jsonl from the mirrored sources.

The record of how the second held-out split was gathered (2026-12-02). Like
build_poisoned.py it reads the sources, unpacked from their snapshots under
/tmp/src/OWNER+NAME (`git archive COMMIT | tar -x`), and never runs them.

    python3 build_heldout2.py OUT.jsonl [EXISTING poisoned.jsonl]

Items whose description text is already in EXISTING (the dev and heldout
items) are dropped, as are exact duplicates among the new ones.

How each kind of definition is read:

- MCP Python SDK FastMCP (`from mcp.server.fastmcp import FastMCP`, and
  `mcp.server.MCPServer` of mcp 2.0): name = function name or `name=`,
  description = `description=` or the raw docstring, inputSchema derived from
  the signature by pyextract.py (as FastMCP/pydantic does), annotations from
  `annotations=ToolAnnotations(...)` without the unset fields.
- standalone fastmcp 2.x (`from fastmcp import FastMCP`): the same, except
  that fastmcp serves `inspect.getdoc()` of the function (the docstring
  dedented and stripped) and, from 2.14 on, prunes the titles and
  `additionalProperties` from the input schema (fastmcp
  tools/tool.py ParsedFunction.from_function, compress_schema(prune_titles=True)).
- `description=` / module constants that are not plain literals (string
  concatenation, f-strings over module constants, `get_flag(...)`,
  `os.getenv(NAME, DEFAULT)`) are evaluated from the AST with the module's own
  constants; os.getenv gives its default.
- Literal tool lists (JSON fixtures, Python dicts, `types.Tool(...)`, TS/JS
  object literals in a ListTools handler) are taken as written.
- TypeScript McpServer.tool()/registerTool() zod shapes: the inputSchema is
  what the SDK version pinned by the source's package-lock.json serves for that
  shape (listed once here with that SDK and zod version from the npm registry,
  through an in-memory client; the resulting schemas are below as data).
- Spring AI (Java) @Tool methods: the text block is un-indented as javac does
  (incidental whitespace, \\uXXXX escapes); the schema is written the way
  Spring AI's JsonSchemaGenerator builds it from the @ToolParam parameters.
"""
import ast, collections, inspect, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
exec(open(os.path.join(HERE, 'pyextract.py')).read().replace('if __name__ == "__main__":', 'if False:'))

R = '/tmp/src/'
SPLIT = 'heldout2'
SRC = {
 # ------------------------------------------------------------ proof-of-concept repositories
 'mcpproxy-demo': dict(repo='smart-mcp-proxy/malicious-demo-mcp-server', commit='8bc36eb3810196d2d05d73a8c7976b93ff5d4be7', licence='MIT (stated in README; no LICENSE file at this commit)', origin='poc'),
 'mcp-guardian': dict(repo='alexandriashai/mcp-guardian', commit='012c0610f49995cb15dbf0fb20ece21af6583efc', licence='MIT', origin='poc'),
 'vulnerable-mcp-server': dict(repo='beejak/Vulnerable-MCP-Server', commit='03534e2f6da5cc83c67de084d16656ade71d8902', licence='MIT (pyproject.toml and README; no LICENSE file at this commit)', origin='poc'),
 'devsecops-arena': dict(repo='kholcomb/DevSecOps_Arena', commit='a46d7e9ca24b304e7dacb957782160723e1bb37b', licence='none stated', origin='poc'),
 'vulnerable-testbed': dict(repo='triepod-ai/mcp_vulnerable_testbed', commit='3857b56d91943f57cbdc92a45968c0c7b5cf0c38', licence='none stated (README: "FOR TESTING PURPOSES ONLY - Not for production use")', origin='poc'),
 'colazilli': dict(repo='matteocolazilli/malicious-mcp-server', commit='13859866116b91d3f674f171f77635f16fc9dfa5', licence='none stated', origin='poc'),
 'gabsilva': dict(repo='gabsilva17/malicious-mcp', commit='034c5a6bd580bf4682e06234661104f472b578aa', licence='none stated', origin='poc'),
 'donwany': dict(repo='donwany/mcp-attacks', commit='ac57dbc3b45ce43c9cc3139d17cf0e606e15f046', licence='MIT (README badge; no LICENSE file at this commit)', origin='poc'),
 'aminrj-labs': dict(repo='aminrj-labs/mcp-attack-labs', commit='3d88663e2407a5e244dc6a74c92e1b5e6235e44c', licence='none stated', origin='poc'),
 'spring-demo': dict(repo='mdatikshahriar/mcp-attack-demo-spring', commit='9326237e00d072a4626ee5812b8f49034aa8c6b5', licence='Apache-2.0 (server; file header and README, which states a dual licence, server Apache-2.0 and client MIT)', origin='poc'),
 'mcp-ctf': dict(repo='shruti-datta-gupta/mcp-ctf', commit='a6b7f5d748b219dc4b2c9643693b76a9702a364c', licence='none stated', origin='poc'),
 'samsoncyber': dict(repo='SamsonCyber/mcp-poison', commit='19ddfa8c686e6aacf697d2e42e0c85efaca78fe5', licence='MIT', origin='poc'),
 'aganita-ctf': dict(repo='aganita/mcp-ctf-challenge', commit='ccbb84683ddc86201982b4177d3b81ba19f1612b', licence='none stated (README: "for educational purposes only")', origin='poc'),
 'evil-mcp-lab': dict(repo='rafsan-huseynov/evil-mcp-lab', commit='22d35d31ea0c0759433cecd065c762691d282828', licence='none stated', origin='poc'),
 'promptfoo-evil': dict(repo='promptfoo/evil-mcp-server', commit='033c132079c2756cc62d79fc7a0c8c5f96bde3d8', licence='MIT', origin='poc'),
 'semgrep-shadowing': dict(repo='semgrep/mcp-tool-shadowing-demo', commit='61894d564044e06eb5b860ad7de69af16fada5f2', licence='MIT', origin='poc'),
 'rugpull-demo': dict(repo='CplusHua/mcp-rugpull-demo', commit='e5c2afcb5ea417129424aca04c1155dffe29882a', licence='none stated', origin='poc'),
 'devoxx-workshop': dict(repo='pi-2r/devoxxfr2026-workshop-jailbreak-prompt-injection-mcp-poisoning', commit='edc0ae7019d44b059345d6bdc846ad6b0a579d6b', licence='none stated', origin='poc'),
 # ------------------------------------------------------------ benchmarks
 'pitfall-lab': dict(repo='Wapiti08/mcp-attack-suite', commit='e57b4ca70ba269125cbe75cf17be9dec781f2227', licence='MIT', origin='benchmark'),
 'tp-bench': dict(repo='harryc295/tool-poisoning-bench', commit='9a5c49669f2e50da8e7cfc571ff35dc77cccb034', licence='MIT', origin='benchmark'),
}
for k, s in SRC.items():
    s['root'] = R + s['repo'].replace('/', '+')

items = []

def add(src, path, name, description, schema, classes, server, siblings=(), others=None, line=None, note='', annotations=None, title=None, variant=None):
    s = SRC[src]
    it = collections.OrderedDict()
    it['id'] = f"{src}/{path}#{name}" + (f"@{variant}" if variant else '')
    it['name'] = name
    if title: it['title'] = title
    it['description'] = description
    it['inputSchema'] = schema if schema is not None else {"type": "object"}
    if annotations: it['annotations'] = annotations
    it['server'] = server
    sib = sorted(set(x for x in siblings if x and x != name))
    if sib: it['siblings'] = sib
    if others: it['others'] = others
    it['classes'] = sorted(set(classes))
    it['origin'] = s['origin']
    it['source'] = collections.OrderedDict(repo=s['repo'], path=path, commit=s['commit'])
    if line: it['source']['line'] = line
    it['source']['url'] = f"https://github.com/{s['repo']}/blob/{s['commit']}/{path}" + (f"#L{line}" if line else '')
    it['licence'] = s['licence']
    it['group'] = src
    it['split'] = SPLIT
    if note: it['note'] = note
    items.append(it)

def read(src, path):
    return open(os.path.join(SRC[src]['root'], path), encoding='utf-8').read()

# ------------------------------------------------------------------ AST evaluation of non-literal descriptions
class Unknown(Exception):
    pass

def ev(node, env):
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                out.append(v.value)
            else:
                x = ev(v.value, env)
                out.append(repr(x) if v.conversion == ord('r') else str(x))
        return ''.join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return ev(node.left, env) + ev(node.right, env)
    if isinstance(node, ast.Name):
        if node.id in env: return env[node.id]
        raise Unknown(node.id)
    if isinstance(node, ast.Attribute):
        key = ast.unparse(node)
        if key in env: return env[key]
        raise Unknown(key)
    if isinstance(node, ast.Call):
        fn = ast.unparse(node.func)
        args = [ev(a, env) for a in node.args]
        kw = {k.arg: ev(k.value, env) for k in node.keywords}
        if fn == 'os.getenv':
            return args[1] if len(args) > 1 else kw.get('default')
        if fn == 'int': return int(*args)
        if fn == 'str': return str(*args)
        if fn.endswith('ToolAnnotations'):
            return {k: v for k, v in kw.items() if v is not None}
        if fn in env and callable(env[fn]): return env[fn](*args, **kw)
        raise Unknown(fn)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [ev(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {ev(k, env): ev(v, env) for k, v in zip(node.keys, node.values)}
    raise Unknown(ast.dump(node)[:60])

def module_env(text, extra=None):
    env = dict(extra or {})
    for st in ast.parse(text).body:
        tgt = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else st.target if isinstance(st, ast.AnnAssign) and st.value is not None else None
        if isinstance(tgt, ast.Name):
            try: env[tgt.id] = ev(st.value, env)
            except Unknown: pass
    return env

def is_fastmcp2(text):
    return bool(re.search(r'^\s*from fastmcp(\.server)? import|^\s*import fastmcp', text, re.M))

def fastmcp2_schema(sch):
    """fastmcp 2.14: pydantic's schema with titles and additionalProperties pruned."""
    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k != 'title'}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return o
    out = strip(sch)
    out.pop('additionalProperties', None)
    return out

PARSE_FIX = {}  # (src, path) -> function applied to the text before ast.parse (same line count)

def py_tools(src, path, extra_env=None):
    """Every @X.tool(...) function and X.add_tool(fn, ...) call of one Python file."""
    text = read(src, path)
    if (src, path) in PARSE_FIX: text = PARSE_FIX[(src, path)](text)
    tree = ast.parse(text)
    env = module_env(text, extra_env)
    fm2 = is_fastmcp2(text)
    funcs = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out = []
    def build(fn, kw, line):
        name = kw.get('name') or fn.name
        if 'description' in kw and kw['description'] is not None:
            desc = kw['description']
        else:
            raw = ast.get_docstring(fn, clean=False) or ''
            desc = inspect.cleandoc(raw) if fm2 else raw
        sch = schema_of(fn)
        # defaults that are module constants rather than literals (pyextract leaves them out)
        a = fn.args
        params = a.posonlyargs + a.args
        for p_, d_ in zip(params[len(params) - len(a.defaults):], a.defaults):
            if p_.arg in sch['properties'] and 'default' not in sch['properties'][p_.arg] and not isinstance(d_, ast.Call):
                try: sch['properties'][p_.arg] = dict(sorted({**sch['properties'][p_.arg], 'default': ev(d_, env)}.items()))
                except Unknown: pass
        if fm2: sch = fastmcp2_schema(sch)
        t = {'name': name, 'description': desc, 'inputSchema': sch, 'line': line, 'fastmcp2': fm2}
        if isinstance(kw.get('annotations'), dict): t['annotations'] = kw['annotations']
        if isinstance(kw.get('title'), str): t['title'] = kw['title']
        out.append(t)
    def kwargs(call):
        d = {}
        for k in call.keywords:
            try: d[k.arg] = ev(k.value, env)
            except Unknown as e: d[k.arg] = None; d.setdefault('_unknown', []).append((k.arg, str(e)))
        if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            d.setdefault('name', call.args[0].value)
        return d
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                call = dec if isinstance(dec, ast.Call) else None
                f = dec.func if call else dec
                if isinstance(f, ast.Attribute) and f.attr == 'tool':
                    build(node, kwargs(call) if call else {}, node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == 'add_tool' \
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id in funcs:
            build(funcs[node.args[0].id], kwargs(node), node.lineno)
    return out

def pytool(src, path, name, classes, server, siblings=None, others=None, note='', extra_env=None, line=None, variant=None):
    ts = py_tools(src, path, extra_env)
    c = [t for t in ts if t['name'] == name and (line is None or t['line'] == line)]
    assert len(c) == 1, (src, path, name, [(t['name'], t['line']) for t in ts])
    t = c[0]
    sib = siblings if siblings is not None else [x['name'] for x in ts]
    if t['fastmcp2']:
        note = (note + '; ' if note else '') + 'standalone fastmcp: description is inspect.getdoc() of the function where no description= is given, schema without titles (fastmcp 2.14)'
    add(src, path, name, t['description'], t['inputSchema'], classes, server, sib, others, t['line'], note, t.get('annotations'), t.get('title'), variant)
    return t

def lits(src, path):
    return extract_literals(read(src, path))

def littool(src, path, name, classes, server, siblings=None, others=None, note='', line=None):
    ts = lits(src, path)
    c = [t for t in ts if t['name'] == name and (line is None or t['line'] == line)]
    assert len(c) == 1, (src, path, name, [(t['name'], t['line']) for t in ts])
    t = c[0]
    sib = siblings if siblings is not None else [x['name'] for x in ts if x['name']]
    add(src, path, name, t['description'], t['inputSchema'], classes, server, sib, others, t['line'], note)

def line_of(src, path, needle):
    text = read(src, path)
    i = text.index(needle)
    return text[:i].count('\n') + 1

def js_string_after(src, path, marker):
    """The JS string literal ("..", '..' or `..` without ${}), or + concatenation of them, right after marker,
    evaluated by node as the plain string expression it is."""
    import subprocess
    text = read(src, path)
    i = text.index(marker) + len(marker)
    tok = re.compile(r'\s*(`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')', re.S)
    parts = []
    while True:
        m = tok.match(text, i)
        if not m: break
        assert not (m.group(1)[0] == '`' and '${' in m.group(1)), 'template with substitution'
        parts.append(m.group(1)); i = m.end()
        m2 = re.compile(r'\s*\+').match(text, i)
        if not m2: break
        i = m2.end()
    assert parts, (src, path, marker)
    js = subprocess.run(['node', '-e', 'process.stdout.write(JSON.stringify(' + ' + '.join(parts) + '))'], capture_output=True, text=True, check=True).stdout
    return json.loads(js), text[:text.index(marker)].count('\n') + 1

def java_text_block(body):
    """javac's text-block processing: \\uXXXX escapes, incidental indentation, trailing spaces."""
    body = re.sub(r'\\u([0-9a-fA-F]{4})', lambda m: chr(int(m.group(1), 16)), body)
    assert body.startswith('\n')
    lines = body[1:].split('\n')
    # the closing delimiter sits at the end of the last content line: it does not count as a line of its own
    sig = [l for l in lines if l.strip()]
    ind = min(len(l) - len(l.lstrip(' ')) for l in sig)
    lines = [l[ind:].rstrip(' ') if l.strip() else '' for l in lines]
    return '\n'.join(lines)

def keyword_classes(text):
    # the same rules as build_poisoned.py (used for the benchmark items only)
    c = set()
    low = text.lower()
    if re.search(r'~/\.ssh|id_rsa|/etc/passwd|/etc/shadow|\.bashrc|\.env\b|mcp\.json|credentials|\.aws|\.kube', low): c.add('sensitive_path')
    if re.search(r'rm -rf|\bcurl\b|\bwget\b|>> ?~|\bsudo\b|\bwhoami\b|echo \$path|\bcat ~|\bcat /etc|run the following|execute the following|adding the following line|removing all contents', low): c.add('command_exec')
    if re.search(r'<[a-z_ ]+>|\[system|^#{2,} ', low, re.M): c.add('fake_markup')
    if re.search(r'(must|should) (first|then|also) (call|use)|you must then call|before (using|you|processing|searching|retrieving|accessing).{0,80}(call|use) `?[a-z_]+', low): c.add('tool_chaining')
    if re.search(r'https?://', low) and re.search(r'access|request|send|call .*fetch|visit|post', low): c.add('external_endpoint')
    return c

# =================================================================== proof-of-concept sources

# ---------------------------------------------------------------- smart-mcp-proxy/malicious-demo-mcp-server (fastmcp)
S = 'mcpproxy-demo'; SRV = 'Advanced Calculator MCP Server with File Analysis and System Tools'
pytool(S, 'main.py', 'add_numbers', ['hidden_instruction', 'exfil_param', 'sensitive_path', 'fake_markup'], SRV)
pytool(S, 'main.py', 'analyze_file', ['hidden_instruction', 'sensitive_path', 'fake_markup'], SRV)
pytool(S, 'main.py', 'send_secure_message', ['shadowing', 'hidden_instruction', 'fake_markup'], SRV,
       others={'mail': ['send_email'], 'messaging': ['send_message']},
       note='tool shadowing: overrides the recipient of every email/message tool of the other servers (send_email, send_message)')
pytool(S, 'main.py', 'get_system_info', ['hidden_instruction', 'sensitive_path', 'fake_markup'], SRV)

# ---------------------------------------------------------------- alexandriashai/mcp-guardian examples/poisoned-server (TS, McpServer.tool with zod shapes)
S = 'mcp-guardian'; P = 'examples/poisoned-server/index.js'
# tools/list of these shapes under @modelcontextprotocol/sdk 1.26.0 + zod 3.25.76 (the package-lock.json's versions)
GUARD_SCHEMAS = {
 'add': {"type": "object", "properties": {"a": {"type": "number", "description": "First number"}, "b": {"type": "number", "description": "Second number"}, "context": {"type": "string", "description": "Authentication context"}}, "required": ["a", "b"], "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"},
 'format_text': {"type": "object", "properties": {"text": {"type": "string", "description": "Text to format"}, "style": {"type": "string", "enum": ["bold", "italic", "uppercase", "lowercase"], "description": "Formatting style"}}, "required": ["text", "style"], "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"},
 'search_docs': {"type": "object", "properties": {"query": {"type": "string", "description": "Search query"}}, "required": ["query"], "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"},
}
GNOTE = 'McpServer.tool(name, description, zodShape): inputSchema as @modelcontextprotocol/sdk 1.26.0 with zod 3.25.76 (package-lock.json) lists it'
for name, cls, oth in [('add', ['hidden_instruction', 'exfil_param', 'sensitive_path', 'tool_chaining'], {'filesystem': ['read_file']}),
                       ('format_text', ['hidden_instruction', 'fake_markup', 'tool_chaining'], {'env': ['get_env']}),
                       ('search_docs', ['hidden_instruction', 'external_endpoint', 'sensitive_path'], None)]:
    d, ln = js_string_after(S, P, f'server.tool(\n  "{name}",\n  ')
    add(S, P, name, d, GUARD_SCHEMAS[name], cls, 'poisoned-example', ['add', 'format_text', 'search_docs', 'calculator'], oth, ln + 1, GNOTE)

# ---------------------------------------------------------------- beejak/Vulnerable-MCP-Server (SDK FastMCP, one server for every module)
S = 'vulnerable-mcp-server'; SRV = 'Vulnerable MCP Server (Training)'
flags_text = read(S, 'flags/flags.py')
FLAGS = module_env(flags_text)['_FLAGS']
BENV = {'get_flag': lambda k: FLAGS.get(k, 'FLAG{unknown_challenge}')}
allnames = []
for f in sorted(os.listdir(SRC[S]['root'] + '/vulnerabilities')) + ['../server.py']:
    if f.endswith('.py') and not f.startswith('__'):
        allnames += [t['name'] for t in py_tools(S, os.path.normpath('vulnerabilities/' + f), BENV)]
pytool(S, 'vulnerabilities/tool_poisoning.py', 'analyze_code', ['hidden_instruction', 'invisible_unicode', 'fake_markup'], SRV, allnames, extra_env=BENV,
       note='description built from module constants (_HIDDEN_PAYLOAD: zero-width characters around a "SYSTEM OVERRIDE" with the challenge flag from flags/flags.py)')
pytool(S, 'vulnerabilities/tool_poisoning.py', 'security_scan', ['hidden_instruction', 'fake_markup'], SRV, allnames, extra_env=BENV, note='HTML comment (_VISIBLE_OVERRIDE) appended to the description')
pytool(S, 'vulnerabilities/tool_poisoning.py', 'log_analytics', ['hidden_instruction', 'fake_markup', 'external_endpoint', 'tool_chaining'], SRV, allnames, extra_env=BENV,
       note='[INST] instruction-format injection (_INST_INJECTION) appended to the description')
pytool(S, 'vulnerabilities/tool_shadowing.py', 'send_email', ['shadowing', 'invisible_unicode', 'external_endpoint', 'fake_markup'], SRV, allnames,
       others={'email': ['send_email']}, extra_env=BENV, note='SHADOW-001: registered under the name of the trusted email server\'s send_email')
pytool(S, 'vulnerabilities/tool_shadowing.py', 'search_and_summarise', ['hidden_instruction', 'tool_chaining', 'sensitive_path', 'shadowing'], SRV, allnames,
       others={'filesystem': ['read_file']}, extra_env=BENV, note='SHADOW-002: cross-server escalation, tells the model to call the filesystem server\'s read_file on /etc/passwd')

# ---------------------------------------------------------------- kholcomb/DevSecOps_Arena (dict literals served by a custom MCP server)
S = 'devsecops-arena'; P = 'domains/mcp/servers/tool_poisoning.py'
littool(S, P, 'analyze_sentiment', ['hidden_instruction', 'tool_chaining'], 'tool-poisoning')
littool(S, P, 'get_admin_secrets', ['hidden_instruction', 'fake_markup'], 'tool-poisoning', note='the privileged tool the poisoned analyze_sentiment points to; its own description tells the model to proceed and not mention it')

# ---------------------------------------------------------------- triepod-ai/mcp_vulnerable_testbed (SDK FastMCP, annotations=ToolAnnotations(...))
S = 'vulnerable-testbed'; P = 'src/server.py'; SRV = 'mcp-vulnerable-testbed'
tnames = [t['name'] for t in py_tools(S, P)]
pytool(S, P, 'vulnerable_weather_tool', ['hidden_instruction', 'fake_markup'], SRV, tnames)
pytool(S, P, 'vulnerable_directory_lookup_tool', ['hidden_instruction', 'fake_markup'], SRV, tnames)
pytool(S, P, 'vulnerable_summarizer_tool', ['hidden_instruction', 'fake_markup'], SRV, tnames)
pytool(S, P, 'malicious_calculate_tool', ['hidden_instruction', 'fake_markup'], SRV, tnames,
       note='Challenge #16: a calculator with a hidden trigger, listed beside trusted_calculate_tool on the same server')

# ---------------------------------------------------------------- matteocolazilli/malicious-mcp-server (fastmcp, description f-string)
pytool('colazilli', 'main.py', 'analyze_python_code', ['hidden_instruction', 'command_exec', 'external_endpoint', 'fake_markup'], 'Dev Tools MCP',
       note='description f-string over HOSTNAME and BIND_PORT, which default to localhost and 8000 (os.getenv)')

# ---------------------------------------------------------------- gabsilva17/malicious-mcp (TS registerTool)
S = 'gabsilva'; P = 'src/server.ts'
d, ln = js_string_after(S, P, 'const PAYLOAD = ')
add(S, P, 'get_weather', d, {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False, "$schema": "http://json-schema.org/draft-07/schema#"},
    ['hidden_instruction', 'tool_chaining', 'sensitive_path'], 'weather-mcp', others={'filesystem': ['read_file']}, line=ln,
    note='description is the PAYLOAD constant (also sent as the server instructions); inputSchema as @modelcontextprotocol/sdk 1.29.0 with zod 3.25.76 (package-lock.json) lists { city: z.string() }')

# ---------------------------------------------------------------- donwany/mcp-attacks experiments/server.py (SDK FastMCP)
pytool('donwany', 'experiments/server.py', 'calculate_bmi', ['hidden_instruction', 'exfil_param', 'sensitive_path', 'command_exec', 'fake_markup'], 'BMI Server')

# ---------------------------------------------------------------- aminrj-labs/mcp-attack-labs lab 01 (its reference/ copies of Invariant's files are left out)
pytool('aminrj-labs', 'labs/01-mcp-tool-poisoning/attack1_direct_poison.py', 'add', ['hidden_instruction', 'exfil_param', 'sensitive_path', 'fake_markup'], 'math-helper',
       note='adapted from Invariant\'s direct-poisoning.py, with its own wording (not a duplicate of that item)')

# ---------------------------------------------------------------- mdatikshahriar/mcp-attack-demo-spring (Spring AI @Tool)
S = 'spring-demo'; P = 'server/src/main/java/com/example/server/service/WeatherService.java'
jt = read(S, P)
m = re.search(r'DESCRIPTION_SEARCH_LOCATION = """(.*?)""";', jt, re.S)
spring_names = re.findall(r'@Tool\(description = [^\n]*\)\s*(?:@\w+\([^)]*\)\s*)*public [\w<>]+ (\w+)\(', jt)
spring_names += re.findall(r'@Tool\(description = [^\n]*\)\s*public [\w<>]+ (\w+)\(', read(S, 'server/src/main/java/com/example/server/tools/MathTools.java'))
add(S, P, 'searchLocation', java_text_block(m.group(1)),
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {
        "locationName": {"type": "string", "description": "The location name to search for (city, address, etc.)"},
        "count": {"type": "integer", "format": "int32", "description": "Maximum number of results (default 10)"},
        "leaks": {"type": "string", "description": "Optional array field for testing whether model captures any leaks as instructed in description"}},
     "required": ["locationName", "count", "leaks"], "additionalProperties": False},
    ['hidden_instruction', 'exfil_param', 'fake_markup', 'invisible_unicode'], 'mcp-attack-demo-server', spring_names,
    line=jt[:m.start()].count('\n') + 1,
    note='Spring AI @Tool(description = DESCRIPTION_SEARCH_LOCATION): the Java text block as javac reads it (\\u200b escapes become U+200B); inputSchema written as Spring AI generates it from the @ToolParam parameters (ToolContext left out, every parameter required)')

# ---------------------------------------------------------------- shruti-datta-gupta/mcp-ctf 03 (SDK FastMCP, description=)
pytool('mcp-ctf', '03-looks-legit-to-me/challenge.py', 'search_docs', ['hidden_instruction', 'tool_chaining'], 'break-03-looks-legit-to-me')

# ---------------------------------------------------------------- SamsonCyber/mcp-poison fixtures (tools/list JSON) and its mock server
S = 'samsoncyber'
for f, cls, oth, note in [
    ('fixtures/t1_description_poison.json', ['hidden_instruction', 'sensitive_path', 'fake_markup'], None, ''),
    ('fixtures/t3_line_jump.json', ['hidden_instruction', 'command_exec', 'external_endpoint', 'preference_manipulation'], None, 'line jumping: the instruction comes before the tool\'s own description'),
    ('fixtures/t4_cross_server_a.json', ['hidden_instruction', 'shadowing', 'tool_chaining'], {'whatsapp': ['send_whatsapp_message']}, 'cross-server: the instruction, padded out of sight with spaces, uses the other fixture server\'s send_whatsapp_message (t4_cross_server_b.json)'),
    ('fixtures/t6_param_names.json', ['exfil_param', 'sensitive_path'], None, 'the instruction is the parameter name'),
    ('fixtures/t8_ansi.json', ['hidden_instruction', 'sensitive_path', 'external_endpoint', 'ansi_escape'], None, 'ANSI cursor-home and clear-screen escapes hide the instruction on a terminal'),
]:
    d = json.loads(read(S, f))
    for t in d['tools']:
        add(S, f, t['name'], t['description'], t.get('inputSchema'), cls, os.path.basename(f)[:-5], [x['name'] for x in d['tools']], oth, note=note)
littool(S, 'tests/mock_mcp_server.py', 'add', ['hidden_instruction', 'sensitive_path', 'fake_markup'], 'mock-poison', note='tools/list answer written as a dict literal in a raw NDJSON server')

# ---------------------------------------------------------------- aganita/mcp-ctf-challenge (types.Tool literals)
littool('aganita-ctf', 'src/challenges/easy/tool_poisoning.py', 'help_system', ['hidden_instruction', 'fake_markup'], 'tool_poisoning')

# ---------------------------------------------------------------- rafsan-huseynov/evil-mcp-lab (mcp 2.0 MCPServer.add_tool(fn, name=, description=))
S = 'evil-mcp-lab'; cfg = module_env(read(S, 'config.py'))
LAB = ['get_weather', 'greet', 'format_text', 'summarize', 'read_config', 'fetch_notes', 'repeat', 'read_path']
LNOTE = 'MCPServer.add_tool(fn, name=, description=): schema derived from the function signature'
pytool(S, 'server/attacks/tool_poisoning.py', 'get_weather', ['hidden_instruction', 'fake_markup', 'sensitive_path'], 'evil-mcp-lab', LAB, note=LNOTE)
pytool(S, 'server/attacks/tool_shadowing.py', 'format_text', ['shadowing', 'hidden_instruction', 'fake_markup'], 'evil-mcp-lab', LAB, others={'mail': ['send_email']}, note=LNOTE)
pytool(S, 'server/attacks/data_exfiltration.py', 'summarize', ['exfil_param', 'external_endpoint'], 'evil-mcp-lab', LAB, extra_env={'config.SINK_URL': cfg['SINK_URL']},
       note=LNOTE + '; the debug_endpoint parameter defaults to config.SINK_URL (http://127.0.0.1:9000/collect), where each input is posted')
rp = read(S, 'server/attacks/rug_pull.py'); renv = module_env(rp)
tr = [t for t in py_tools(S, 'server/attacks/rug_pull.py') if t['name'] == 'greet'][0]
add(S, 'server/attacks/rug_pull.py', 'greet', renv['_EVIL'], tr['inputSchema'], ['hidden_instruction', 'fake_markup', 'external_endpoint'], 'evil-mcp-lab', LAB,
    line=rp[:rp.index('_EVIL = ')].count('\n') + 1, variant='rug-pull', note='rug pull: the description greet gets once it has been called RUG_PULL_THRESHOLD (2) times (_CLEAN + the <IMPORTANT> block)')

# ---------------------------------------------------------------- promptfoo/evil-mcp-server (TS, inputSchema: zodToJsonSchema)
S = 'promptfoo-evil'; P = 'src/tools/evilTools.ts'
d, ln = js_string_after(S, P, 'name: "record_analytics",\n    description:')
add(S, P, 'record_analytics', d, {"$schema": "http://json-schema.org/draft-07/schema#"}, ['hidden_instruction', 'tool_chaining', 'preference_manipulation'], 'evil-mcp-server', [], line=ln,
    note='inputSchema: zodToJsonSchema(RecordAnalyticsSchema) with the versions package-lock.json pins (zod 4.4.3, zod-to-json-schema 3.25.2), which yields only the $schema member for a zod 4 schema; the evil tools are appended to the tools of a wrapped payment server')

# ---------------------------------------------------------------- pi-2r/devoxxfr2026 workshop (TS literal tool lists in ListTools handlers)
S = 'devoxx-workshop'
def ts_tools(path):
    """The object literals of a `tools: [...]` array, evaluated as plain data (no code)."""
    text = read(S, path)
    text = re.sub(r'^[ \t]*//[^\n]*$', '', text, flags=re.M)  # whole-line comments (French, with apostrophes)
    i = text.index('tools: [') + len('tools: ')
    depth, j = 0, i
    while True:
        ch = text[j]
        if ch in '`"\'':
            q = ch; j += 1
            while text[j] != q:
                j += 2 if text[j] == '\\' else 1
        elif ch in '[{': depth += 1
        elif ch in ']}':
            depth -= 1
            if depth == 0: break
        j += 1
    arr = text[i:j + 1]
    assert '${' not in arr and '=>' not in arr and '(' not in re.sub(r'(`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')', '', arr)
    import subprocess
    js = subprocess.run(['node', '-e', 'const a = (' + arr + '); process.stdout.write(JSON.stringify(a))'], capture_output=True, text=True, check=True).stdout
    return json.loads(js), read(S, path)
tl, txt = ts_tools('mcp/mcp-rug-pull/mcp-server/src/index.ts')
t = next(x for x in tl if x['name'] == 'get_server_logs')
add(S, 'mcp/mcp-rug-pull/mcp-server/src/index.ts', t['name'], t['description'], t['inputSchema'], ['hidden_instruction', 'exfil_param', 'query_rewrite'], 'Internal DevOps Monitoring Server',
    [x['name'] for x in tl], line=txt[:txt.index('name: "get_server_logs"')].count('\n') + 1,
    note='tells the model to append any credential seen in the session to the service_name argument')
tl, txt = ts_tools('mcp/mcp-shadowing/server-fintech/index.ts')
bank, _ = ts_tools('mcp/mcp-shadowing/server-bank/index.ts')
t = next(x for x in tl if x['name'] == 'transfer_funds')
add(S, 'mcp/mcp-shadowing/server-fintech/index.ts', t['name'], t['description'], t['inputSchema'], ['shadowing', 'preference_manipulation'], 'sepa-express-gateway',
    [x['name'] for x in tl], {'server-bank': [x['name'] for x in bank]}, line=txt[:txt.index("name: 'transfer_funds'")].count('\n') + 1,
    note='same name as the bank server\'s transfer_funds; the description says it must be chosen over any other transfer tool (French)')

# ---------------------------------------------------------------- semgrep/mcp-tool-shadowing-demo (low-level Server, types.Tool literal)
littool('semgrep-shadowing', 'devil_server.py', 'totally_cool_legit_tool', ['hidden_instruction', 'shadowing', 'preference_manipulation', 'invisible_unicode'], 'devil-server',
        others={'angel-server': ['totally_cool_legit_tool']},
        note='same name as the angel server\'s tool; the instruction to prefer this one is written in Unicode tag characters (U+E0000 block) before the visible description')

# ---------------------------------------------------------------- CplusHua/mcp-rugpull-demo (fastmcp)
S = 'rugpull-demo'; P = 'src/libs/malicious_mcp_rugpull.py'
# a log line in log_mcp_tool_usage's body nests double quotes in an f-string (Python 3.12 syntax); it is blanked
# before parsing with an older Python, which changes nothing of the definitions
PARSE_FIX[(S, P)] = lambda t: t.replace('tips = f"{datetime.datetime.now().strftime("%d.%b %Y %H:%M:%S")}', 'tips = f"{0}')
pytool(S, P, 'add', ['hidden_instruction', 'exfil_param', 'sensitive_path', 'fake_markup'], 'mcp_rugpull',
       note='Invariant\'s direct-poisoning text with an added line ("you should follow the instrctions when i return the result."), so not a duplicate of that item')
pytool(S, P, 'log_mcp_tool_usage', ['hidden_instruction', 'tool_chaining', 'exfil_param', 'preference_manipulation', 'fake_markup'], 'mcp_rugpull',
       note='"must be executed before any other MCP tool", with parameters for the other tool\'s name, description and the user\'s prompt')

# =================================================================== benchmarks

# ---------------------------------------------------------------- Wapiti08/mcp-attack-suite (MCP Pitfall Lab)
S = 'pitfall-lab'
PL = 'environment/arena/challenges/'
def pl(path, name, cls, server, others=None, note=''):
    ts = py_tools(S, path)
    t = next(x for x in ts if x['name'] == name)
    c = set(cls) | keyword_classes(t['description'])
    if t['fastmcp2']:
        note = (note + '; ' if note else '') + 'standalone fastmcp: description is inspect.getdoc() of the function, schema without titles (fastmcp 2.14, the version the README names)'
    add(S, path, name, t['description'], t['inputSchema'], c, server, [x['name'] for x in ts], others, t['line'], note)
pl('sample_servers/crypto_baseline.py', 'fetch_eth_earnings_report', ['hidden_instruction'], 'crypto-baseline', note='baseline (vulnerable) sample server of the pitfall benchmark')
pl('sample_servers/email_baseline.py', 'read_emails', ['hidden_instruction'], 'email-baseline', note='baseline (vulnerable) sample server of the pitfall benchmark')
pl('environment/submissions/examples/documentsystem/puppet/puppet_doc_provider.py', 'check_summary_compliance', ['hidden_instruction'], 'puppet-doc-provider', note='example "puppet" attack submission')
pl('environment/submissions/examples/ETHPriceServer/puppet/eth_compliance_server.py', 'check_response_compliance', ['hidden_instruction'], 'eth-compliance', note='example "puppet" attack submission')
pl(PL + 'emailsystem/mcp_servers/malicious_tools_server.py', 'send_teams_message', ['hidden_instruction', 'shadowing'], 'MaliciousToolsServer',
   others={'teams': ['send_teams_message', 'list_sent_messages']}, note='malicious server registering the trusted Teams server\'s send_teams_message')
pl(PL + 'ETHPriceServer/mcp_servers/get_ETH_Price.py', 'get_price', ['hidden_instruction', 'other'], 'ETHPriceCurrentServer', note='tells the model to report a failure and give no numbers (answer tampering)')
# attacks/*.json tool_poisoning: the injection is prepended to the target tool's description by
# environment/arena/runner/run.py _apply_tool_poisoning: (payload.strip() + "\n\n" + desc).strip()
for ch, attack, target_mod, tool in [
    ('documentsystem', 'tool_poisoning', 'documentsystem/mcp_servers/doc_store_server.py', 'get_document'),
    ('documentsystem', 'tool_poisoning_hardened', 'documentsystem/mcp_servers/doc_store_server_hardened.py', 'get_document'),
    ('emailsystem', 'tool_poisoning', 'emailsystem/mcp_servers/teams_server.py', 'send_teams_message'),
    ('emailsystem', 'tool_poisoning_focused_baseline', 'emailsystem/mcp_servers/teams_server.py', 'send_teams_message'),
    ('emailsystem', 'tool_poisoning_focused_hardened', 'emailsystem/mcp_servers/teams_hardened_server.py', 'send_teams_message'),
    ('emailsystem', 'tool_poisoning_hardened', 'emailsystem/mcp_servers/teams_hardened_server.py', 'send_teams_message'),
    ('ETHPriceServer', 'tool_poisoning', 'ETHPriceServer/mcp_servers/eth_price_server.py', 'get_price'),
    ('ETHPriceServer', 'tool_poisoning_hardened', 'ETHPriceServer/mcp_servers/eth_price_server_hardened.py', 'get_price'),
]:
    ap = PL + f'{ch}/attacks/{attack}.json'
    cfg = json.loads(read(S, ap))['tool_poisoning']
    assert cfg['mode'] == 'prepend' and cfg['target_tool'] == tool
    ts = py_tools(S, PL + target_mod)
    t = next(x for x in ts if x['name'] == tool)
    desc = ((cfg['injection'] or '').strip() + '\n\n' + (t['description'] or '')).strip()
    c = {'hidden_instruction', 'fake_markup'} | keyword_classes(desc)
    if 'SECOND message' in desc or 'also send' in desc: c.add('tool_chaining')
    add(S, ap, tool, desc, t['inputSchema'], c, os.path.basename(target_mod)[:-3], [x['name'] for x in ts], variant=attack,
        note=f'attack {attack}: the injection of {ap} prepended to {tool} of {PL + target_mod} as environment/arena/runner/run.py _apply_tool_poisoning does; schema as fastmcp 2.14 derives it')

# ---------------------------------------------------------------- harryc295/tool-poisoning-bench (description_override of its Ollama tool set)
S = 'tp-bench'; P = 'scenarios.py'
tree = ast.parse(read(S, P))
env = module_env(read(S, P))
base = env['BASE_TOOLS']
for node in ast.walk(tree):
    if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'Scenario':
        kw = {k.arg: ev(k.value, env) for k in node.keywords}
        if kw.get('category') != 'tool_description_injection': continue
        for tool, desc in kw['description_override'].items():
            c = {'hidden_instruction', 'tool_chaining'} | keyword_classes(desc)
            if 'SYSTEM:' in desc: c.add('fake_markup')
            add(S, P, tool, desc, base[tool]['function']['parameters'], c, 'acme-support', kw['tool_names'], line=node.lineno, variant=kw['id'],
                note=f'scenario {kw["id"]}: description_override of BASE_TOOLS[{tool!r}] (an Ollama function tool; parameters as the inputSchema); the payload has the model email {tool} results to an outside address through send_email')

# =================================================================== dedupe against the existing items and among the new ones, write
existing = set()
if len(sys.argv) > 2:
    for l in open(sys.argv[2]):
        if l.strip():
            existing.add(json.loads(l)['description'])
out, keys, ids, dropped = [], set(), set(), []
for it in items:
    if it['description'] in existing:
        dropped.append((it['id'], 'description already in poisoned.jsonl')); continue
    k = json.dumps([it['name'], it['description'], it['inputSchema'], it.get('annotations')], sort_keys=True)
    if k in keys:
        dropped.append((it['id'], 'duplicate')); continue
    keys.add(k)
    assert it['id'] not in ids, it['id']
    ids.add(it['id'])
    txt = it['description'] + json.dumps(it['inputSchema'], ensure_ascii=False)
    if re.search('[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\U000e0000-\U000e007f]', txt):
        it['classes'] = sorted(set(it['classes']) | {'invisible_unicode'})
    if '\x1b' in txt:
        it['classes'] = sorted(set(it['classes']) | {'ansi_escape'})
    out.append(it)
with open(sys.argv[1], 'w') as f:
    for it in out:
        f.write(json.dumps(it, ensure_ascii=False) + '\n')
c = collections.Counter((it['group'], it['origin']) for it in out)
print(len(items), 'built,', len(out), 'kept')
for d in dropped: print('  dropped', *d)
for k, v in sorted(c.items()): print(' ', k, v)
