"""Append the heldout5 benign servers to testdata/poisoning/benign.jsonl and benign_servers.json.

The record of how the fifth held-out benign split was built (2026-12-03),
the way build_benign_heldout4.py built the fourth. Nothing was started for it:
every definition comes from the catalogues of testdata/catalogues whose server
is in the `heldout8` group of testdata/catalogues/labels.json (17 servers,
listed live at pinned versions on 2026-12-03, as that folder's README
records; heldout8 is the group of that folder whose mistakes nobody has
studied), taking every tool of each catalogued server whose package is not yet
in benign.jsonl (none of the 17 is). No other group of labels.json is read
(heldout5, heldout6 and heldout7 are left alone). Each tool keeps the members
benign.jsonl has (name, title, description, inputSchema, outputSchema,
annotations), in the server's order; the split written is `heldout5`.

    python3 build_benign_heldout5.py            # from any directory
"""
import collections, json, os, re

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..'))
P = os.path.join(ROOT, 'testdata/poisoning')
CAT = os.path.join(ROOT, 'testdata/catalogues')
SPLIT = 'heldout5'      # the split written
GROUP = 'heldout8'      # the labels.json group read
RENAME = {}  # no heldout8 server name collides with a benign.jsonl server name

ben = [json.loads(l) for l in open(os.path.join(P, 'benign.jsonl')) if l.strip()]
servers = json.load(open(os.path.join(P, 'benign_servers.json')))
used_pkgs = {(v['package'], v['version']) for v in servers.values()}
used_names = set(servers)
group = json.load(open(os.path.join(CAT, 'labels.json')))['split'][GROUP]

new_lines, added, skipped = [], [], []
for server in sorted(group):
    f = os.path.join(CAT, server + '.json')
    d = json.load(open(f))
    pkg, ver = d['package'], d['version']
    if (pkg, ver) in used_pkgs:
        skipped.append((server, f'{pkg}@{ver} already in benign.jsonl'))
        continue
    name = RENAME.get(d['server'], d['server'])
    assert name not in used_names, name
    src = d['source']
    source = f'npm:{pkg}@{ver}' if src.startswith('npm:') else src.split('. ')[0]
    m = re.search(r'serverInfo "([^"]*)" "([^"]*)"', src)
    inv = re.search(r'invocation: (.*)$', src)
    servers[name] = dict(package=pkg, version=ver, licence=d['license'], repository=None, split=SPLIT, tools=len(d['tools']),
                         captured=(inv.group(1) if inv else src),
                         serverInfo=({'name': m.group(1), 'version': m.group(2)} if m else None), instructions_chars=None,
                         catalogue=f'testdata/catalogues/{os.path.basename(f)}', obtained=d['obtained'], date=d['date'])
    used_names.add(name)
    for t in d['tools']:
        it = collections.OrderedDict()
        it['id'] = f"{name}/{t['name']}"
        it['server'] = name
        it['package'] = pkg
        it['version'] = ver
        it['source'] = source
        it['licence'] = d['license']
        it['split'] = SPLIT
        it['name'] = t['name']
        for k in ('title', 'description', 'inputSchema', 'outputSchema', 'annotations'):
            if k in t and t[k] is not None:
                it[k] = t[k]
        new_lines.append(it)
    added.append((name, pkg, ver, d['license'], len(d['tools'])))

ids = {b['id'] for b in ben}
for it in new_lines:
    assert it['id'] not in ids, it['id']
    ids.add(it['id'])
with open(os.path.join(P, 'benign.jsonl'), 'a') as fh:
    for it in new_lines:
        fh.write(json.dumps(it, ensure_ascii=False) + '\n')
json.dump(servers, open(os.path.join(P, 'benign_servers.json'), 'w'), indent=1)
print(len(added), 'servers,', len(new_lines), 'tools')
for a in added:
    print(' ', *a)
for s in skipped:
    print('  skipped', *s)
