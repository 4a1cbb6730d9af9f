set -e
cd /work/main
for v in off on; do
  if [ $v = off ]; then F=false; else F=true; fi
  WAYPOINT_INGEST_FIT_CHUNKS=$F WAYPOINT_DATA_DIR=.waypoint/bench/fit_answers/$v/data WAYPOINT_LOCAL_SERVER_BIN=.waypoint/llama-native/bin/llama-server \
    .venv/bin/waypoint eval -d evals/data/mixed -s single_shot_fused --limit 20 --out .waypoint/bench/fit_answers/$v/eval > /dev/null 2>&1
  echo "$v done $(date +%T)"
done
