set -x
cd /work/wt
export PYTHONPATH=/work/wt WAYPOINT_DATA_DIR=/work/bench_data WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
export WAYPOINT_AGENT_FUSION_HEADS=0   # the n = 50 agent records' first search, so every question pairs exactly
/work/main/.venv/bin/python scripts/bench_agent_sets.py -d hotpotqa -d 2wikimultihopqa -d musique -s agent_first_pass_plain -n 50 --block 10 --out /work/plain50
