cd /work/wt
PYTHONPATH=/work/wt WAYPOINT_DATA_DIR=/work/bench_e WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server /work/main/.venv/bin/python scripts/bench_agent_sets.py -d /work/esets/2wikimultihopqa -d /work/esets/musique -s agent -s single_shot_fused -n 40 --block 10 --out /work/e_main
