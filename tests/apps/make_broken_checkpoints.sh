#!/usr/bin/env bash
# Builds broken copies of the golden `tiny` checkpoint under OUT_DIR, one
# folder per defect, for the command-line error tests.
# Usage: make_broken_checkpoints.sh GOLDEN_TINY_DIR OUT_DIR
set -eu
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
model="$src/model.safetensors"
size=$(stat -c %s "$model")

new() { mkdir -p "$out/$1"; cp "$src/config.json" "$out/$1/"; }

# Data cut off half-way.
new truncated
head -c $((size / 2)) "$model" >"$out/truncated/model.safetensors"

# A header length far beyond the file.
new lying_header
{ printf '\xff\xff\xff\x00\x00\x00\x00\x00'; tail -c +9 "$model"; } >"$out/lying_header/model.safetensors"

# No config.json.
mkdir -p "$out/missing_config"
cp "$model" "$out/missing_config/"

# config.json that is not JSON.
mkdir -p "$out/bad_config_json"
cp "$model" "$out/bad_config_json/"
echo '{"text_config": {"hidden_size": 256,' >"$out/bad_config_json/config.json"

# Heads that do not divide.
mkdir -p "$out/bad_heads"
cp "$model" "$out/bad_heads/"
sed 's/"num_key_value_heads": 1/"num_key_value_heads": 3/' "$src/config.json" >"$out/bad_heads/config.json"

# An unknown layer type.
mkdir -p "$out/bad_layer_type"
cp "$model" "$out/bad_layer_type/"
sed '0,/"linear_attention"/s//"sliding_attention"/' "$src/config.json" >"$out/bad_layer_type/config.json"

# A config whose hidden size disagrees with the tensors.
mkdir -p "$out/wrong_shape"
cp "$model" "$out/wrong_shape/"
sed 's/"intermediate_size": 512/"intermediate_size": 640/' "$src/config.json" >"$out/wrong_shape/config.json"

# No tensor files at all.
new no_weights
