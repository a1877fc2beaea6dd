#!/usr/bin/env bash
# `qwen35 generate --prompt` and `qwen35 chat` end to end on the tiny talking checkpoint
# (random weights, so the text is noise; the mechanics are what is checked): a seed
# reproduces a run, a stop string cuts the output exactly before its first occurrence,
# the statistics line is printed, and a piped chat decodes for its second turn exactly
# the tokens of that turn (the first turn is never processed again).
# Usage: text_generation_test.sh QWEN35 CHECKPOINT_DIR
set -euo pipefail
qwen35=$1
dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
run() { "$qwen35" generate -m "$dir" --threads 2 "$@"; }

# A seed reproduces a sampled run; the stop line reports what ended it.
run -p "hello world" -n 16 --temp 1 --seed 3 >"$work/a.txt" 2>"$work/a.err"
run -p "hello world" -n 16 --temp 1 --seed 3 >"$work/b.txt" 2>/dev/null
cmp -s "$work/a.txt" "$work/b.txt" || fail "the same --seed gave different text"
grep -Eq 'prompt [0-9]+ tokens in .* tok/s\); generated 16 tokens in .* tok/s\); stopped: token limit' "$work/a.err" ||
  fail "no statistics line: $(cat "$work/a.err")"
echo "ok: --seed reproduces; statistics: $(tail -1 "$work/a.err")"

# A stop string: the greedy run's output up to the first occurrence of a letter it
# contains, the first letter that does not open the output.
run -p "hello world" -n 24 --temp 0 --ignore-eos >"$work/full.txt" 2>/dev/null
letters=$(LC_ALL=C tr -cd '[:alpha:]' <"$work/full.txt")
stop=""
offset=0
for ((i = 0; i < ${#letters}; i++)); do
  stop=${letters:i:1}
  offset=$(LC_ALL=C grep -abo -- "$stop" "$work/full.txt" | head -n 1 | cut -d: -f1)
  [ "$offset" -gt 0 ] && break
done
[ "$offset" -gt 0 ] || fail "the greedy output has no letter past its start to use as a stop string"
{ head -c "$offset" "$work/full.txt"; printf '\n'; } >"$work/expected.txt"
run -p "hello world" -n 24 --temp 0 --ignore-eos --stop "$stop" --stop "never in the output" \
  >"$work/stopped.txt" 2>"$work/stopped.err"
cmp -s "$work/expected.txt" "$work/stopped.txt" ||
  fail "--stop '$stop' did not cut the output at byte $offset: $(od -c "$work/stopped.txt" | head -5)"
grep -q "stopped: stop string" "$work/stopped.err" || fail "the stop was not reported: $(cat "$work/stopped.err")"
echo "ok: --stop '$stop' cut the output at byte $offset"

# Chat through a pipe: the second turn decodes the end of the first reply (its last token,
# as the reply hit -n) and the new turn, nothing more.
printf 'hello world\nyou are there\n' |
  "$qwen35" chat -m "$dir" --threads 2 -n 6 --temp 0 >"$work/chat.txt" 2>"$work/chat.err" ||
  fail "chat failed: $(cat "$work/chat.err")"
[ "$(grep -c '^<think>$' "$work/chat.txt")" -eq 2 ] || fail "expected two replies: $(od -c "$work/chat.txt" | head)"
turn='"<|im_end|>\n<|im_start|>user\nyou are there<|im_end|>\n<|im_start|>assistant\n<think>\n"'
ids=$(printf '%s\n' "$turn" | "$qwen35" tokenize --tokenizer "$dir" --jsonl)
expected=$(($(printf '%s' "$ids" | tr -cd ',' | wc -c) + 2))  # ids, plus the carried last token
grep -q "turn 2: prompt $expected tokens" "$work/chat.err" ||
  fail "turn 2 should decode $expected tokens: $(cat "$work/chat.err")"
echo "ok: chat turn 2 decoded only its $expected tokens"
