#!/usr/bin/env bash
# Runs a command that must fail cleanly: a non-zero exit that is not a crash
# (signal), within a time limit, with `expected` in its stderr.
# Usage: expect_failure.sh EXPECTED_SUBSTRING COMMAND [ARGS...]
set -u
expected=$1
shift
stderr_file=$(mktemp)
timeout 120 "$@" >/dev/null 2>"$stderr_file"
status=$?
message=$(cat "$stderr_file")
rm -f "$stderr_file"
if [ "$status" -eq 0 ]; then
  echo "FAIL: command succeeded but should have failed: $*"
  exit 1
fi
if [ "$status" -eq 124 ] || [ "$status" -gt 128 ]; then
  echo "FAIL: command hung or crashed (status $status): $*"
  echo "$message"
  exit 1
fi
if [[ "$message" != *"$expected"* ]]; then
  echo "FAIL: stderr does not mention '$expected':"
  echo "$message"
  exit 1
fi
echo "ok: exit $status, stderr: $message"
