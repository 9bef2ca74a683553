import json, os, collections
OUT = '/tmp/benign/out/'
T = '/work/main/testdata/npm/node_modules/'
S = {  # capture name -> (package, version, split, how)
 'github': ('@modelcontextprotocol/server-github', '2025.4.8', 'dev', 'GITHUB_PERSONAL_ACCESS_TOKEN=dummy'),
 'desktop-commander': ('@wonderwhy-er/desktop-commander', '0.2.52', 'dev', ''),
 'kubernetes': ('mcp-server-kubernetes', '4.1.7', 'dev', 'no kubeconfig'),
 'notion': ('@notionhq/notion-mcp-server', '2.5.2', 'dev', 'NOTION_TOKEN=dummy'),
 'cloudflare': ('@cloudflare/mcp-server-cloudflare', '0.2.0', 'dev', 'args: run dummy-account, CLOUDFLARE_API_TOKEN=dummy'),
 'slack': ('@modelcontextprotocol/server-slack', '2025.4.25', 'dev', 'SLACK_BOT_TOKEN, SLACK_TEAM_ID dummies'),
 'postgres': ('@modelcontextprotocol/server-postgres', '0.6.2', 'dev', 'arg: an unreachable postgresql:// URL'),
 'everything': ('@modelcontextprotocol/server-everything', '2026.8.31', 'dev', 'arg: stdio'),
 'memory': ('@modelcontextprotocol/server-memory', '2026.8.31', 'dev', 'MEMORY_FILE_PATH in a scratch folder'),
 'brave-search': ('@modelcontextprotocol/server-brave-search', '0.6.2', 'dev', 'BRAVE_API_KEY=dummy'),
 'tavily': ('tavily-mcp', '0.2.22', 'dev', 'TAVILY_API_KEY=dummy'),
 'circleci': ('@circleci/mcp-server-circleci', '0.20.0', 'dev', 'CIRCLECI_TOKEN=dummy'),
 'antv-chart': ('@antv/mcp-server-chart', '0.9.10', 'dev', ''),
 'context7': ('@upstash/context7-mcp', '4.1.1', 'dev', ''),
 'playwright': ('@playwright/mcp', '0.0.83', 'heldout', 'arg: --headless'),
 'sentry': ('@sentry/mcp-server', '0.39.0', 'heldout', 'arg: --access-token=dummy'),
 'firecrawl': ('firecrawl-mcp', '3.26.0', 'heldout', 'FIRECRAWL_API_KEY=dummy'),
 'mongodb': ('mongodb-mcp-server', '3.0.4', 'heldout', 'MDB_MCP_CONNECTION_STRING to an unreachable port'),
 'executeautomation-playwright': ('@executeautomation/playwright-mcp-server', '1.0.12', 'heldout', ''),
 'hubspot': ('@hubspot/mcp-server', '0.4.0', 'heldout', 'PRIVATE_APP_ACCESS_TOKEN=dummy'),
 'google-maps': ('@modelcontextprotocol/server-google-maps', '0.6.2', 'heldout', 'GOOGLE_MAPS_API_KEY=dummy'),
 'puppeteer': ('@modelcontextprotocol/server-puppeteer', '2025.5.12', 'heldout', ''),
 'elasticsearch': ('@elastic/mcp-server-elasticsearch', '0.3.1', 'heldout', 'ES_URL to an unreachable port, ES_API_KEY=dummy'),
 'exa': ('exa-mcp-server', '3.4.1', 'heldout', 'EXA_API_KEY=dummy'),
 'sequential-thinking': ('@modelcontextprotocol/server-sequential-thinking', '2026.8.31', 'heldout', ''),
 'gitlab': ('@modelcontextprotocol/server-gitlab', '2025.4.25', 'heldout', 'GITLAB_PERSONAL_ACCESS_TOKEN=dummy; raw JSON-RPC (its schemas fail the TypeScript SDK client validation)'),
 'filesystem': ('@modelcontextprotocol/server-filesystem', '2026.8.31', 'heldout', 'arg: a scratch folder'),
 'chrome-devtools': ('chrome-devtools-mcp', '1.11.0', 'heldout', 'arg: --headless'),
}
def pkgjson(pkg, ver):
    for base in ['/tmp/benign/pk/' + (pkg + '@' + ver).replace('/', '_').replace('@', '_') + '/node_modules/', T]:
        p = base + pkg + '/package.json'
        if os.path.exists(p):
            d = json.load(open(p))
            if d['version'] == ver:
                return d
    raise SystemExit('no package.json for ' + pkg)
out = []
servers = {}
for cap, (pkg, ver, split, how) in S.items():
    d = json.load(open(OUT + cap + '.json'))
    pj = pkgjson(pkg, ver)
    repo = pj.get('repository')
    if isinstance(repo, dict): repo = repo.get('url')
    lic = pj.get('license') or ''
    if isinstance(lic, dict): lic = lic.get('type', '')
    if lic.startswith('SEE LICENSE'): lic = 'MIT (package.json: "SEE LICENSE IN LICENSE"; the README states MIT)'
    if not lic: lic = 'MIT (LICENSE file in the package; package.json has no license field)'
    servers[cap] = dict(package=pkg, version=ver, licence=lic, repository=repo, split=split, tools=len(d['tools']), captured=how,
                        serverInfo=d.get('serverInfo'), instructions_chars=len(d.get('instructions') or ''))
    for t in d['tools']:
        it = collections.OrderedDict()
        it['id'] = f"{cap}/{t['name']}"
        it['server'] = cap
        it['package'] = pkg
        it['version'] = ver
        it['source'] = f"npm:{pkg}@{ver}" + (f" ({repo})" if repo else '')
        it['licence'] = lic
        it['split'] = split
        it['name'] = t['name']
        for k in ('title', 'description', 'inputSchema', 'outputSchema', 'annotations'):
            if k in t and t[k] is not None:
                it[k] = t[k]
        out.append(it)
with open('/tmp/gather/benign.jsonl', 'w') as f:
    for it in out:
        f.write(json.dumps(it, ensure_ascii=False) + '\n')
json.dump(servers, open('/tmp/gather/benign_servers.json', 'w'), indent=1)
c = collections.Counter(it['split'] for it in out)
print(len(out), c, len(servers))
for k, v in servers.items(): print(f"{k:30} {v['package']}@{v['version']} {v['licence']} {v['tools']} {v['split']}")
