#!/bin/sh
# The default agent and single-shot RAG on all 50 dev questions of each set, at 5f96a3d (from a worktree).
# Questions 1-20: the agent's records are those of follow-links-2026-12-06/*/on (4243df0, the same code);
# single-shot runs them here. Questions 21-50: both strategies, alternating blocks of 10.
set -e
WT=/work/wt_n50
OUT=/work/n50
export PYTHONPATH=$WT
export WAYPOINT_DATA_DIR=/work/n50data
export WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
cd $WT
PY=/work/main/.venv/bin/python
$PY scripts/bench_agent_sets.py -d hotpotqa -d 2wikimultihopqa -d musique -s single_shot_fused -n 20 --block 10 --out $OUT/first
$PY scripts/bench_agent_sets.py -d hotpotqa -d 2wikimultihopqa -d musique -s agent -s single_shot_fused \
  --skip 20 -n 30 --block 10 --baseline /work/main/evals/results/answers:agent --out $OUT/rest
