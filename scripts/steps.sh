# Sourced by the device scripts: timed steps under one deadline and a summary.
#   deadline=$((SECONDS + N)); step NAME LIMIT COMMAND...; ...; finish
summary=()
failed=0

# step NAME SECONDS COMMAND...: runs COMMAND under timeout (SECONDS, or what is
# left before the deadline if less) and records the outcome.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - SECONDS))
  if [ "$left" -lt 10 ]; then
    summary+=("SKIPPED ${name} (out of time)")
    failed=1
    return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "=== ${name} (limit ${limit}s)"
  local begin=$SECONDS rc=0
  timeout --kill-after=10 "$limit" "$@" || rc=$?
  local took=$((SECONDS - begin))
  if [ "$rc" -eq 0 ]; then
    summary+=("ok      ${name} (${took}s)")
  else
    [ "$rc" -eq 124 ] && summary+=("TIMEOUT ${name} (${took}s)") || summary+=("FAIL    ${name} (exit ${rc}, ${took}s)")
    failed=1
  fi
  return "$rc"
}

finish() {
  echo
  echo "=== summary"
  printf '%s\n' "${summary[@]}"
  exit "$failed"
}
