# The tests' process of a bash program suite run apart from the program (sandbox/runner.py run_suite_apart; after
# plain_data.sh). It reads the tests' code on stdin and runs it; the commands the tests name that are neither theirs
# nor bash's (functions, builtins, keywords, programs on PATH) are the program's functions: asked for on fd 4,
# answered on fd 3, run there, their output and exit status handed back. fd 5 hears that the tests all ran.
judge_call() {
    local judge_name=$1 judge_status judge_output
    shift
    printf 'call\0%s\0%s\0' "$judge_name" "$#" >&4
    (( $# )) && printf '%s\0' "$@" >&4
    if ! judge_field judge_status <&3 || ! judge_field judge_output <&3; then
        echo "the program ended before its tests did" >&2
        exit 1
    fi
    [[ $judge_status =~ ^[0-9]+$ ]] || judge_status=1
    printf '%s' "$judge_output"
    return "$judge_status"
}

judge_define_program_functions() {
    local judge_words=() judge_word judge_count judge_name
    local -A judge_seen=()
    for judge_word in $(grep -oE '[A-Za-z_][A-Za-z0-9_]*' <<< "$1"); do
        [[ -z ${judge_seen[$judge_word]} && -z $(type -t -- "$judge_word") ]] && judge_words+=("$judge_word")
        judge_seen[$judge_word]=1
    done
    printf 'names\0%s\0' "${#judge_words[@]}" >&4
    (( ${#judge_words[@]} )) && printf '%s\0' "${judge_words[@]}" >&4
    judge_field judge_count <&3 && [[ $judge_count =~ ^[0-9]+$ ]] || return
    for (( ; judge_count > 0; judge_count-- )); do
        judge_field judge_name <&3 || return
        # only a name it was asked about (so never one the tests or bash have)
        [[ -n ${judge_seen[$judge_name]} && $judge_name =~ ^[A-Za-z_][A-Za-z0-9_]*$ && -z $(type -t -- "$judge_name") ]] &&
            eval "$judge_name() { judge_call $judge_name \"\$@\"; }"
    done
}

IFS= read -r -d '' judge_tests
judge_define_program_functions "$judge_tests"
trap '(( $? == 0 )) && printf done >&5' EXIT
eval "$judge_tests"
