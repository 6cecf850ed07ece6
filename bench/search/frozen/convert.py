#!/usr/bin/env python3
"""Builds the frozen check set (seal-tools.json, seal-tools.jsonl) from Seal-Tools.

Usage: convert.py SEAL_TOOLS_DATASET_DIR
  where the directory is `Seal-Tools_Dataset/` of github.com/fairyshine/Seal-Tools
  (commit ce753ecd, Apache-2.0).

Requests: every single-tool request (one call in `calling`) of the two test
splits, `test_in_domain.jsonl` (200) and `test_out_domain.jsonl` (94), with the
called API as `expected`. Catalog: every tool of `tool.jsonl` whose `field`
(e.g. "Chemical Engineering/Forensic engineering") is the field of an expected
tool, so each request competes with the tools written beside its own. Output
is sorted and compact so a rebuild is byte-identical.
"""
import json
import sys
from pathlib import Path

TYPES = {'str': 'string', 'int': 'integer', 'float': 'number', 'bool': 'boolean',
         'list': 'array', 'dict': 'object'}


def schema(tool):
    props = {}
    for name, p in tool.get('parameters', {}).items():
        prop = {'type': TYPES.get(p.get('type', 'str'), 'string')}
        if p.get('description'):
            prop['description'] = p['description']
        props[name] = prop
    return {'type': 'object', 'properties': props, 'required': tool.get('required', [])}


def main(src):
    src = Path(src)
    tools = {}
    for line in open(src / 'tool.jsonl', encoding='utf-8'):
        t = json.loads(line)
        tools.setdefault(t['api_name'], t)
    queries = []
    for split in ('test_in_domain', 'test_out_domain'):
        for line in open(src / f'{split}.jsonl', encoding='utf-8'):
            q = json.loads(line)
            if len(q['calling']) == 1 and q['calling'][0]['api'] in tools:
                queries.append({'query': q['query'], 'expected': [q['calling'][0]['api']]})
    fields = {tools[q['expected'][0]]['field'] for q in queries}
    catalog = {
        'name': 'seal-tools',
        'source': 'fairyshine/Seal-Tools Seal-Tools_Dataset/tool.jsonl (commit ce753ecd)',
        'license': 'Apache-2.0',
        'tools': [{'name': n, 'description': t['api_description'], 'inputSchema': schema(t)}
                  for n, t in sorted(tools.items()) if t['field'] in fields],
    }
    here = Path(__file__).parent
    with open(here / 'seal-tools.json', 'w', encoding='utf-8') as f:
        json.dump(catalog, f, ensure_ascii=False, separators=(',', ':'))
        f.write('\n')
    with open(here / 'seal-tools.jsonl', 'w', encoding='utf-8') as f:
        for q in queries:
            f.write(json.dumps(q, ensure_ascii=False) + '\n')
    print(f"{len(catalog['tools'])} tools, {len(queries)} requests", file=sys.stderr)


if __name__ == '__main__':
    main(sys.argv[1])
