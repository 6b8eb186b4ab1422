# npm.sh - node packages for the tests that check restack's output with
# JavaScript tools; source it after tests/cli/lib.sh:
#
#   . "$TOP/tests/tools/npm.sh"
#   need_npm pprof-format@2 speedscope@1
#   NODE_PATH=$NPM_DIR/node_modules node ...
#
# Packages are installed once into $BUILD/npm (npm install --prefix) and
# reused.  The test is skipped (exit 77) when node or npm is missing or the
# npm registry cannot be reached; any other npm failure fails it.
NPM_DIR=$BUILD/npm

need_npm() {
	local spec missing="" log
	command -v node >/dev/null 2>&1 || skip_all "node is not installed"
	for spec in "$@"; do
		[ -f "$NPM_DIR/node_modules/${spec%@*}/package.json" ] ||
			missing="$missing $spec"
	done
	[ -z "$missing" ] && return 0
	command -v npm >/dev/null 2>&1 || skip_all "npm is not installed"
	mkdir -p "$NPM_DIR"
	log=$T/npm.log
	# shellcheck disable=SC2086
	if ! (cd "$NPM_DIR" && timeout 300 npm install --no-audit --no-fund \
		--no-save --prefix "$NPM_DIR" $missing) >"$log" 2>&1; then
		if grep -qiE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|network' "$log"; then
			skip_all "npm registry unreachable: $(grep -m1 -iE 'ENOTFOUND|EAI_AGAIN|ECONN|ETIMEDOUT|UNREACH|network' "$log")"
		fi
		fail "npm install$missing" "$(tail -n 10 "$log")"
		done_testing
	fi
}
