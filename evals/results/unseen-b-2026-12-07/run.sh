set -x
cd /work/wt
export PYTHONPATH=/work/wt WAYPOINT_DATA_DIR=/work/bench_data WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
U=evals/data/unseen-b
uptime
/work/main/.venv/bin/python scripts/bench_agent_sets.py -d $U/hotpotqa -d $U/2wikimultihopqa -d $U/musique -s agent -s single_shot_fused -s agent_first_pass_plain -n 24 --block 10 --out /work/unseenb_agent
uptime
