#!/bin/sh
# agent.follow_links on against off: the fused search's last place goes to a further hit whose document its best hit
# names by title. The default agent (1.5B, native llama-server, as make run serves it), the first 20 questions of
# HotpotQA's and MuSiQue's dev sets (the largest first-search gains offline), then 2Wiki's; off then on for each
# set, same data dir.
set -e
OUT=$PWD/evals/results/follow-links-2026-12-06
export WAYPOINT_DATA_DIR=$PWD/.waypoint/bench/follow-links
export WAYPOINT_LOCAL_SERVER_BIN=$PWD/.waypoint/llama-native/bin/llama-server  # as make run serves it
for set in hotpotqa musique 2wikimultihopqa; do
  for arm in off on; do
    flag=$([ $arm = on ] && echo true || echo false)
    [ -f $OUT/$set/$arm/summary.json ] || WAYPOINT_AGENT_FOLLOW_LINKS=$flag \
      .venv/bin/waypoint eval -d $set -s agent --limit 20 -o $OUT/$set/$arm
  done
  .venv/bin/waypoint eval compare --json $OUT/$set/off $OUT/$set/on > $OUT/$set/compare.json
done
