#!/usr/bin/env bash
# Runs in the bundle on the GPU machine: Nsight Compute's duration and DRAM
# bytes for every kernel of a few decode tokens (bf16, mlx8, attention at
# 4096), as CSV under $OUT, for tools/ncu_summary.py.
set -uo pipefail
cd "$(dirname "$0")"
deadline=$((SECONDS + ${1:-200}))
source ./steps.sh
export LD_LIBRARY_PATH=$PWD/lib QWEN35_SHARED_DIR=$PWD/shared PATH=$PATH:/usr/local/cuda/bin
logs=${OUT:-/tmp}
ncu=(ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv)
bench=(bin/qwen35 bench --backend cuda --preset 0.8b -n 1 --repeats 1)
step "ncu bf16" 100 bash -c "${ncu[*]} ${bench[*]} --dtype bf16 > $logs/ncu_bf16.csv"
step "ncu mlx8" 60 bash -c "${ncu[*]} -k regex:mlx ${bench[*]} --dtype mlx8 > $logs/ncu_mlx8.csv"
step "ncu attention 4096" 60 bash -c "${ncu[*]} -k regex:attention ${bench[*]} --dtype bf16 --context 4096 > $logs/ncu_att.csv"
wc -l "$logs"/*.csv
finish
