set -x
cd /work/wt2
export PYTHONPATH=/work/wt2 WAYPOINT_DATA_DIR=/work/bench_data WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
/work/main/.venv/bin/python scripts/bench_agent_sets.py -d /work/fixq/hotpotqa -d /work/fixq/musique -s agent -s agent_first_pass_plain -n 1 --block 1 --out /work/fixq_out
