#!/bin/sh
# agent.sections_by_vector on against off, the default agent (1.5B, native llama-server), on the mixed set's 38
# document questions (32 section + 6 two_docs) over the whole mixed knowledge base (its docs/ and passage corpus).
# Run at fc11cff on an otherwise idle 2-core Intel Xeon, one arm after the other, same data dir.
set -e
D=.waypoint/bench/mixed-docs
mkdir -p $D && cp -a evals/data/mixed/docs $D/ && cp evals/data/mixed/dev_corpus.jsonl $D/
python3 -c "
import json
rows = [json.loads(line) for line in open('evals/data/mixed/dev_questions.jsonl')]
with open('$D/dev_questions.jsonl', 'w') as f:
    f.writelines(json.dumps(r) + '\n' for r in rows if r.get('type') in ('section', 'two_docs'))
"
export WAYPOINT_DATA_DIR=.waypoint/bench/ab
WAYPOINT_AGENT_SECTIONS_BY_VECTOR=true .venv/bin/waypoint eval -d $D -s agent -o evals/results/sections-2026-12-06/on
WAYPOINT_AGENT_SECTIONS_BY_VECTOR=false .venv/bin/waypoint eval -d $D -s agent -o evals/results/sections-2026-12-06/off
.venv/bin/waypoint eval compare evals/results/sections-2026-12-06/off evals/results/sections-2026-12-06/on
