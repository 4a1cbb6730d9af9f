set -x
cd /work/wt
export PYTHONPATH=/work/wt WAYPOINT_DATA_DIR=/work/bench_data WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
D="-d /work/changed/hotpotqa -d /work/changed/2wikimultihopqa -d /work/changed/musique -d /work/changed/structured-chapters"
/work/main/.venv/bin/python scripts/bench_agent_sets.py $D -s agent -n 10 --block 10 --out /work/heads1
WAYPOINT_AGENT_FUSION_HEADS=0 /work/main/.venv/bin/python scripts/bench_agent_sets.py $D -s agent -n 10 --block 10 --out /work/heads0 --baseline /work/heads1:agent
