"""Append the heldout2 benign servers to testdata/poisoning/benign.jsonl and benign_servers.json.

The record of how the second held-out benign split was built (2026-12-02).
Nothing was started for it: every definition comes from the catalogues in
testdata/catalogues/*.json (each server's tools/list as listed at a pinned
version, or built from its source, as that folder's README describes), taking
every tool of each catalogued server whose package is not yet in
benign.jsonl. Two names already used in benign.jsonl for other packages are
renamed (github -> github-official, gitlab -> gitlab-zereight). Each tool keeps
the members benign.jsonl has (name, title, description, inputSchema,
outputSchema, annotations), in the server's order.

    python3 build_benign_heldout2.py            # from the repository root
"""
import collections, glob, json, os, re

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..'))
P = os.path.join(ROOT, 'testdata/poisoning')
CAT = os.path.join(ROOT, 'testdata/catalogues')
SPLIT = 'heldout2'
RENAME = {'github': 'github-official', 'gitlab': 'gitlab-zereight'}

ben = [json.loads(l) for l in open(os.path.join(P, 'benign.jsonl')) if l.strip()]
servers = json.load(open(os.path.join(P, 'benign_servers.json')))
used_pkgs = {v['package'] for v in servers.values()}
used_names = set(servers)

new_lines, added = [], []
for f in sorted(glob.glob(os.path.join(CAT, '*.json'))):
    if os.path.basename(f) == 'labels.json':
        continue
    d = json.load(open(f))
    pkg, ver = d['package'], d['version']
    if pkg in used_pkgs:
        continue  # already in benign.jsonl (possibly listed with other options)
    name = RENAME.get(d['server'], d['server'])
    assert name not in used_names, name
    src = d['source']
    if src.startswith('npm:'):
        source = f'npm:{pkg}@{ver}'
    else:
        source = src.split('. ')[0]
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
