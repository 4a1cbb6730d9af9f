#!/bin/sh
# The default agent reading 7 passages a search (agent.top_k 7) on questions 21-40 of each dev set, right after
# the n = 50 run on the same machine and worktree (5f96a3d), whose agent records of the same questions read 5.
set -e
WT=/work/wt_n50
export PYTHONPATH=$WT
export WAYPOINT_DATA_DIR=/work/n50data
export WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
export WAYPOINT_AGENT_TOP_K=7
cd $WT
/work/main/.venv/bin/python scripts/bench_agent_sets.py -d musique -d hotpotqa -d 2wikimultihopqa -s agent \
  --skip 20 -n 20 --block 10 --out /work/topk7/out
