set -x
cd /work/wt
export PYTHONPATH=/work/wt WAYPOINT_DATA_DIR=/work/bench_d WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
U=evals/data/unseen-d
uptime
/work/main/.venv/bin/python scripts/bench_agent_sets.py -d $U/2wikimultihopqa -d $U/musique -s agent -s single_shot_fused -n 74 --block 10 --out /work/unseend_agent
uptime
/work/main/.venv/bin/python scripts/first_pass_subset.py select --out /work/unseend_agent --store /work/bench_d/runs.sqlite --data $U --dest /work/unseend_subset --controls 5
/work/main/.venv/bin/python scripts/bench_agent_sets.py -d /work/unseend_subset/2wikimultihopqa -d /work/unseend_subset/musique -s agent_bridge -n 74 --block 10 --out /work/unseend_bridge
uptime
/work/main/.venv/bin/python scripts/first_pass_subset.py compose --out /work/unseend_agent --candidate-out /work/unseend_bridge --candidate agent_bridge --dest /work/unseend_rest
uptime
