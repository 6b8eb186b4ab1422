# bash completion for restack; `make install` puts it in
# $(PREFIX)/share/bash-completion/completions/restack.
#
# The commands, each command's options and the formats of --to are read
# from the help of the restack being completed (`restack --help`,
# `restack CMD --help`), so they are always that binary's; an option's
# argument is completed by its name in the help: DIR directories, FILE
# files, FORMAT the formats --to lists; --stitch, --weight, --profile,
# --split and --from their values.  Anything else that is not an option
# completes as a file.

# _restack_run PROG ARGS...: PROG's output, or restack's on $PATH when
# PROG (the word being completed, e.g. ./restack) does not run.
_restack_run()
{
	local prog=$1
	shift
	if [[ $prog != */* ]] || [[ ! -x $prog ]]; then
		prog=restack
	fi
	"$prog" "$@" 2>/dev/null
}

# The commands, from the lines after "commands:" up to a blank line.
_restack_commands()
{
	_restack_run "$1" --help |
		awk '/^commands:/ { on = 1; next } on && !NF { exit }
		     on { print $1 }'
}

# "--long ARG" (ARG empty when it takes none; "=ARG" for --opt=ARG) for
# each option line of `restack CMD --help`.
_restack_options()
{
	local re='^ \{2,6\}\(-[A-Za-z0-9], \)\{0,1\}\(--[a-z0-9][a-z0-9-]*\)'

	re=$re'\([= ][A-Z][A-Z0-9_]*\)\{0,1\}\( .*\)\{0,1\}$'
	_restack_run "$1" "$2" --help | sed -n "s/$re/\\2 \\3/p"
}

# _restack_arg OPTIONS OPTION: OPTION's argument name in OPTIONS (the
# output of _restack_options).
_restack_arg()
{
	printf '%s\n' "$1" | awk -v o="$2" '$1 == o { print $2 }'
}

# The formats --to lists in `restack convert --help`: its text up to
# "(default", split at commas and "or".
_restack_formats()
{
	_restack_run "$1" convert --help |
		awk '/^ +--to [A-Z]+ / { on = 1; sub(/^ +--to [A-Z]+ /, "") }
		     on { t = t " " $0; if (t ~ /\(default/) exit }
		     END { sub(/\(default.*/, "", t); gsub(/,| or /, " ", t)
			   print t }'
}

# _restack_reply COMPGEN-ARGS...: COMPREPLY, one word a line (a file
# name may have spaces).
_restack_reply()
{
	mapfile -t COMPREPLY < <(compgen "$@")
}

# _restack_value PROG OPTION ARG CUR: COMPREPLY for OPTION's argument.
_restack_value()
{
	local prog=$1 opt=$2 arg=$3 cur=$4
	case $opt in
	--to) _restack_reply -W "$(_restack_formats "$prog")" -- "$cur" ;;
	--stitch) _restack_reply -W "on strict off" -- "$cur" ;;
	--weight) _restack_reply -W "samples period" -- "$cur" ;;
	--profile) _restack_reply -W "cpu offcpu wall" -- "$cur" ;;
	--split) _restack_reply -W "thread process" -- "$cur" ;;
	--from) _restack_reply -W "folded pprof chrome capture" -- "$cur" ;;
	*)
		case $arg in
		DIR)
			compopt -o filenames 2>/dev/null
			_restack_reply -d -- "$cur"
			;;
		FILE)
			compopt -o filenames 2>/dev/null
			_restack_reply -f -- "$cur"
			;;
		esac
		;;
	esac
}

_restack()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev='' prog=${COMP_WORDS[0]}
	local cmd opts arg opt='' val words

	COMPREPLY=()
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
	if [ "$COMP_CWORD" -le 1 ]; then
		words="$(_restack_commands "$prog") --help --version"
		_restack_reply -W "$words" -- "$cur"
		return 0
	fi
	cmd=${COMP_WORDS[1]}
	opts=$(_restack_options "$prog" "$cmd")

	# --opt=VALUE: one word, or three when '=' breaks words (the default).
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*} val=${cur#*=}
	elif [ "$cur" = "=" ]; then
		opt=$prev val=
	elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 3 ]; then
		opt=${COMP_WORDS[COMP_CWORD - 2]} val=$cur
	fi
	if [ -n "$opt" ]; then
		arg=$(_restack_arg "$opts" "$opt")
		_restack_value "$prog" "$opt" "${arg#=}" "$val"
		if [[ $cur == --*=* ]]; then
			COMPREPLY=("${COMPREPLY[@]/#/$opt=}")
		fi
		return 0
	fi

	# The argument of an option given as "--opt VALUE" or "-o VALUE".
	if [[ $prev == -* ]]; then
		case $prev in
		-o) prev=--output ;;
		-j) prev=--jobs ;;
		esac
		arg=$(_restack_arg "$opts" "$prev")
		if [ -n "$arg" ] && [[ $arg != =* ]]; then
			_restack_value "$prog" "$prev" "$arg" "$cur"
			return 0
		fi
	fi

	if [[ $cur == -* ]]; then
		words=$(printf '%s\n' "$opts" |
			awk '{ print $1 ($2 ~ /^=/ ? "=" : "") }')
		_restack_reply -W "$words" -- "$cur"
		if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
			compopt -o nospace 2>/dev/null
		fi
		return 0
	fi
	compopt -o filenames 2>/dev/null
	_restack_reply -f -- "$cur"
	return 0
}

complete -F _restack restack
