#!/usr/bin/env python3
"""manpage_check.py - docs/restack.1 against what restack's --help prints.

    manpage_check.py RESTACK MANPAGE      the checks, as test protocol lines
    manpage_check.py RESTACK --options    "COMMAND --long" lines from --help
    manpage_check.py RESTACK --commands   the command names

The commands are those `restack --help` lists; a command's options are
the lines of `restack CMD --help` that start, indented by 2 to 6 spaces,
with `-X, --long` or `--long`, then perhaps an argument name in capitals
(`--jobs N`, `--stitch=MODE`).

In the man page, an option is the tag line after a .TP in a subsection
titled "Options of ...", whose title names the commands that take it
("Options of convert and stats"; "every command" names all of them).  Each
command's options, with their short forms and argument names, must be the
same in both; every command needs its .SS under COMMANDS; a restack option
a font macro names in the text (.B \\-\\-to) must exist.
"""
import re
import subprocess
import sys

OPT_LINE = re.compile(
    r'^ {2,6}(?:-([A-Za-z0-9]), )?--([a-z0-9][a-z0-9-]*)'
    r'(?:[= ]([A-Z][A-Z0-9_]*)(?=\s|$))?')
TAG = re.compile(
    r'^(?:-([A-Za-z0-9]), )?--([a-z0-9][a-z0-9-]*)'
    r'(?:[= ]([A-Z][A-Z0-9_]*))?$')


def run_help(restack, *args):
    p = subprocess.run([restack, *args, '--help'], capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit('%s %s --help: exit %d' % (restack, ' '.join(args),
                                            p.returncode))
    return p.stdout


def commands(restack):
    out, cmds, on = run_help(restack), [], False
    for line in out.splitlines():
        if line.startswith('commands:'):
            on = True
        elif on and not line.strip():
            break
        elif on:
            cmds.append(line.split()[0])
    return cmds


def help_options(restack, cmd):
    """{long: (short, ARG)} from `restack CMD --help`."""
    opts = {}
    for line in run_help(restack, cmd).splitlines():
        m = OPT_LINE.match(line)
        if m:
            opts[m.group(2)] = (m.group(1) or '', m.group(3) or '')
    return opts


def unroff(s):
    s = re.sub(r'\\f[BIRP]|\\f\[[A-Z]*\]', '', s)
    s = s.replace('\\-', '-').replace('\\(ti', '~').replace('\\(en', '-')
    return s.strip()


def man_parse(path, cmds):
    """({cmd: {long: (short, ARG, line)}}, [SS titles under COMMANDS],
    [(line, option)] named by font macros, [problems])."""
    opts = {c: {} for c in cmds}
    described, mentioned, problems = [], [], []
    sh = ss = ''
    targets = []
    tag_next = False
    with open(path) as f:
        lines = f.read().splitlines()
    for no, line in enumerate(lines, 1):
        if line.startswith('.SH'):
            sh, ss, targets = unroff(line[3:]).strip('"'), '', []
            continue
        if line.startswith('.SS'):
            ss = unroff(line[3:]).strip('"')
            targets = []
            if sh == 'COMMANDS':
                described.append(ss)
            elif ss.startswith('Options of'):
                words = re.findall(r'[a-z]+', ss)
                targets = (list(cmds) if 'every command' in ss
                           else [w for w in words if w in cmds])
                if not targets:
                    problems.append('line %d: subsection "%s" names no '
                                    'command' % (no, ss))
            continue
        if targets and line.startswith('.TP'):
            tag_next = True
            continue
        if tag_next:
            tag_next = False
            m = TAG.match(unroff(line))
            if not m:
                problems.append('line %d: an option paragraph tag that is '
                                'not "-X, --long ARG": %s' % (no, line))
                continue
            for c in targets:
                if m.group(2) in opts[c]:
                    problems.append('line %d: --%s twice for %s'
                                    % (no, m.group(2), c))
                opts[c][m.group(2)] = (m.group(1) or '', m.group(3) or '',
                                       no)
            continue
        if re.match(r'\.(B|BR|RB|BI|IB)\s', line) and \
                not re.search(r'\bperf |go tool', line):
            for o in re.findall(r'\\-\\-([a-z0-9][a-z0-9\\-]*)', line):
                mentioned.append((no, o.replace('\\-', '-')))
    return opts, described, mentioned, problems


def fmt(long, short, arg):
    s = ('-%s, ' % short if short else '') + '--' + long
    return s + (' ' + arg if arg else '')


def main():
    restack = sys.argv[1]
    cmds = commands(restack)
    if not cmds:
        sys.exit('%s --help lists no commands' % restack)
    if sys.argv[2] == '--commands':
        print('\n'.join(cmds))
        return 0
    if sys.argv[2] == '--options':
        for c in cmds:
            for o in sorted(help_options(restack, c)):
                print(c, '--' + o)
        return 0
    path = sys.argv[2]
    failed = 0

    def result(name, diags):
        nonlocal failed
        if diags:
            failed = 1
            print('not ok - ' + name)
            for d in diags:
                print('# ' + d)
        else:
            print('ok - ' + name)

    man, described, mentioned, problems = man_parse(path, cmds)
    result('the man page\'s option paragraphs parse', problems)
    result('every command has its subsection under COMMANDS',
           ['restack --help lists "%s", the man page has no .SS %s'
            % (c, c) for c in cmds if c not in described] +
           ['.SS %s under COMMANDS is not a command of restack --help'
            % d for d in described if d not in cmds])
    known = set()
    for c in cmds:
        hopts = help_options(restack, c)
        known.update(hopts)
        mopts = man[c]
        diags = []
        for o in sorted(hopts):
            if o not in mopts:
                diags.append('restack %s --help prints %s; the man page '
                             'has no .TP paragraph for it under an '
                             '"Options of ... %s ..." subsection'
                             % (c, fmt(o, *hopts[o]), c))
            elif mopts[o][:2] != hopts[o]:
                diags.append('line %d: the man page has %s, restack %s '
                             '--help %s' % (mopts[o][2], fmt(o, *mopts[o][:2]),
                                            c, fmt(o, *hopts[o])))
        for o in sorted(mopts):
            if o not in hopts:
                diags.append('line %d: the man page gives %s to %s; '
                             'restack %s --help has no such option'
                             % (mopts[o][2], fmt(o, *mopts[o][:2]), c, c))
        result('%s: the man page\'s options are restack %s --help\'s '
               '(%d options)' % (c, c, len(hopts)), diags)
    result('the options the text names exist',
           ['line %d: --%s is no option of any command' % (no, o)
            for no, o in mentioned if o not in known and o != 'version'])
    return failed


if __name__ == '__main__':
    sys.exit(main())
