#!/bin/sh
# agent.verify_same_context on against off: the verifier of an answer written by the combined grade-and-answer call
# reads the passages that call read (its prompt repeats the call's context) or the kept ones only. The default agent
# (1.5B, native llama-server, as make run serves it), the first 20 questions of HotpotQA's and 2Wiki's dev sets,
# the two arms one after the other on each set, same data dir.
set -e
OUT=$PWD/evals/results/verify-context-2026-12-06
export WAYPOINT_DATA_DIR=$PWD/.waypoint/bench/verify-ab
export WAYPOINT_LOCAL_SERVER_BIN=$PWD/.waypoint/llama-native/bin/llama-server  # as make run serves it
for set in hotpotqa 2wikimultihopqa; do
  for arm in off on; do
    flag=$([ $arm = on ] && echo true || echo false)
    [ -f $OUT/$set/$arm/summary.json ] || WAYPOINT_AGENT_VERIFY_SAME_CONTEXT=$flag \
      .venv/bin/waypoint eval -d $set -s agent --limit 20 -o $OUT/$set/$arm
  done
  .venv/bin/waypoint eval compare --json $OUT/$set/off $OUT/$set/on > $OUT/$set/compare.json
done
