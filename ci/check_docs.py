#!/usr/bin/env python3
"""Checks that the docs name only what exists.

Every Markdown file git tracks is read. A path into the project's folders
(docs/, ci/, engine/, tools/, tests/, ...) must name a file or folder of the
checkout; every option of an `omni-bench SUBCOMMAND ...` command line (in
code, inline or fenced) must be one that subcommand's --help lists; and no
doc may point outside the repository (../ paths, /work/ paths).

Usage: ci/check_docs.py OMNI_BENCH [--root DIR] [--plant]
  OMNI_BENCH  the built program, asked for each subcommand's --help
  --root DIR  the checkout to read (default: this script's)
  --plant     add a doc line naming a missing file, a missing option and a
              path outside, and succeed only if all three are caught (the
              check's own test)
Exit 0 when every name holds, 1 listing each that does not, 2 on bad usage.
"""
import os
import re
import subprocess
import sys

FOLDERS = ('.ci', 'ci', 'docs', 'engine', 'baselines', 'cuda', 'tools', 'tests', 'results', 'plots', 'fuzz', 'cmake')
PATH = re.compile(r'(?<![\w./-])((?:%s)/[\w./<>{}*-]*[\w/*>}])' % '|'.join(re.escape(f) for f in FOLDERS))
OUTSIDE = re.compile(r'(?<![\w.])(\.\./[\w.-]+/[\w./-]*|/work/[\w./-]+)')
CODE_SPAN = re.compile(r'`([^`]+)`')
OPTION = re.compile(r'(?<![\w-])(--[a-z][a-z0-9-]*)')
SUBCOMMANDS = ('allreduce', 'list', 'sweep', 'compare', 'net', 'trace', 'plot', 'simulate')
NESTED = {'trace': 'summarize', 'net': 'cleanup'}  # the subcommands with one of their own
PLANTED = ('See `docs/no-such-page.md`, run `omni-bench allreduce --no-such-option 1`, then '
           '`../elsewhere/no-such-tool.sh`.\n')


def tracked_docs(root):
    out = subprocess.run(['git', '-C', root, 'ls-files', '*.md'], capture_output=True, text=True, check=True)
    return [f for f in out.stdout.split() if f]


def help_options(bench, words):
    run = subprocess.run([bench] + words + ['--help'], capture_output=True, text=True, timeout=30)
    return set(OPTION.findall(run.stdout)) | {'--help'}


def known_options(bench):
    known = {}
    for sub in SUBCOMMANDS:
        words = [sub] + ([NESTED[sub]] if sub in NESTED else [])
        known[sub] = help_options(bench, words)
    # sweep hands every option it does not know to each allreduce run.
    known['sweep'] |= known['allreduce']
    known[''] = help_options(bench, [])
    return known


def code_lines(text):
    """(line number, code) for fenced blocks' lines and inline code spans."""
    fenced = False
    for n, line in enumerate(text.split('\n'), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if fenced:
            yield n, line
        else:
            for span in CODE_SPAN.findall(line):
                yield n, span


def command_problems(doc, text, known):
    problems = []
    for n, code in code_lines(text):
        # The program (a path ending in it too), not omni-bench.sbatch or "omni-bench:".
        for m in re.finditer(r'(?<![\w.-])omni-bench(?=\s|$)(?:\s+(\w+))?', code):
            sub = m.group(1) if m.group(1) in SUBCOMMANDS else ''
            rest = re.split(r'\s(?:\||&&|;|>)\s?', code[m.end():])[0]
            for opt in OPTION.findall(rest):
                if opt not in known[sub]:
                    problems.append(f'{doc}:{n}: `omni-bench {sub}` has no option {opt}'.replace('  ', ' '))
    return problems


def path_problems(root, doc, text):
    problems = []
    for n, line in enumerate(text.split('\n'), 1):
        for path in PATH.findall(line):
            path = re.sub(r':\d+(-\d+)?$', '', path).rstrip('.')
            if any(c in path for c in '*<>{}') or '...' in path or re.search(r'(?<![a-z])[A-Z]{3,}(?![a-z])', path):
                continue  # a pattern or a placeholder (fuzz/NAME_fuzz.cc), not a name
            if not os.path.exists(os.path.join(root, path)):
                problems.append(f'{doc}:{n}: {path} does not exist')
        for outside in OUTSIDE.findall(line):
            problems.append(f'{doc}:{n}: {outside} is outside the repository')
    return problems


def main(argv):
    args = argv[1:]
    plant = '--plant' in args
    args = [a for a in args if a != '--plant']
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if '--root' in args:
        i = args.index('--root')
        if i + 1 >= len(args):
            print('check_docs: --root needs a folder', file=sys.stderr)
            return 2
        root = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1 or not os.access(args[0], os.X_OK):
        print('usage: ci/check_docs.py OMNI_BENCH [--root DIR] [--plant]  (OMNI_BENCH: the built program)',
              file=sys.stderr)
        return 2
    known = known_options(args[0])
    problems = []
    docs = tracked_docs(root)
    for doc in docs:
        with open(os.path.join(root, doc), encoding='utf-8') as f:
            text = f.read()
        if plant and doc == 'README.md':
            text += PLANTED
        problems += path_problems(root, doc, text)
        problems += command_problems(doc, text, known)
    if plant:
        caught = [p for p in problems if 'no-such-' in p]
        print(f'check_docs: planted a missing page, a missing option and a path outside: {len(caught)} of 3 caught')
        for p in caught:
            print('  ' + p)
        return 0 if len(caught) == 3 else 1
    for p in problems:
        print('check_docs: ' + p)
    print(f'check_docs: {len(docs)} docs, {len(problems)} names that do not hold')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
