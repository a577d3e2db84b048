# The program's process of a bash program suite run apart from its tests (sandbox/runner.py run_suite_apart; after
# plain_data.sh): the program runs as the main script ($0), then answers the tests' requests on fd 3 with replies on
# fd 4 until the tests' process is done. Its functions run here, each in a subshell as `$(...)` runs them.
source "$0"
while judge_field judge_kind <&3; do
    if [[ $judge_kind == names ]]; then
        judge_field judge_count <&3 || break
        judge_defined=()
        for (( judge_index = 0; judge_index < judge_count; judge_index++ )); do
            judge_field judge_name <&3 || break 2
            declare -F -- "$judge_name" > /dev/null && judge_defined+=("$judge_name")
        done
        printf '%s\0' "${#judge_defined[@]}" "${judge_defined[@]}" >&4
    else
        judge_field judge_name <&3 && judge_field judge_count <&3 || break
        judge_args=()
        for (( judge_index = 0; judge_index < judge_count; judge_index++ )); do
            judge_field judge_arg <&3 || break 2
            judge_args+=("$judge_arg")
        done
        judge_output=$(declare -F -- "$judge_name" > /dev/null || exit 127; "$judge_name" "${judge_args[@]}" 3<&- 4>&-
            judge_status=$?; printf .; exit "$judge_status")
        judge_status=$?
        printf '%s\0%s\0' "$judge_status" "${judge_output%.}" >&4
    fi
done
