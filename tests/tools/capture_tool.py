"""capture_tool.py - the command line the capture tools share
(crop_stack.py, perfswap.py, stack_copies.py): read one input file whole,
run the tool on its bytes, then write the result to the output file or
print it.  Exit 64 with a usage line when the arguments are wrong, 2 with
"TOOL: IN: why" on stderr when the tool refuses the input, else 0.
"""
import sys


def run(argv, usage, work, errors, args_ok=None):
    """argv: sys.argv; usage: "TOOL IN [OUT] ...", its words the arguments
    wanted; work(buf, argv): the bytes to write to argv[2], or a line to
    print; errors: the exceptions that mean the input was refused;
    args_ok(argv): further checks of the arguments."""
    words = usage.split()
    if (len(argv) != len([w for w in words if w.isupper()]) + 1 or
            (args_ok and not args_ok(argv))):
        sys.stderr.write("usage: %s\n" % usage)
        return 64
    with open(argv[1], "rb") as f:
        buf = f.read()
    try:
        out = work(buf, argv)
    except errors as e:
        sys.stderr.write("%s: %s: %s\n" % (words[0], argv[1], e))
        return 2
    if isinstance(out, str):
        print(out)
    else:
        with open(argv[2], "wb") as f:
            f.write(out)
    return 0
