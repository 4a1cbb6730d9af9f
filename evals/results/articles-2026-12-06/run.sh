#!/bin/sh
# Short articles under headings: the section rule before (any heading hit routes to the vector search alone, at
# 29d1294) against after (only a document of more than agent.top_k passages, at fd2dae5). The default agent (1.5B,
# native llama-server, as make run serves it), the first 20 questions of 2WikiMultihopQA's dev set with its corpus written as one Markdown
# article per passage (scripts/bench_first_search.py: articles_as_eval). One arm after the other, same data dir;
# OLD is a git worktree of 29d1294 run with this checkout's venv (its own modules first on the path).
set -e
OLD=${OLD:-/work/old}
HERE=$PWD
D=$PWD/.waypoint/bench/2wikimultihopqa-articles
OUT=$PWD/evals/results/articles-2026-12-06
[ -d $D ] || .venv/bin/python -c "
import sys; sys.path.insert(0, 'scripts')
from pathlib import Path
from bench_first_search import articles_as_eval
articles_as_eval('2wikimultihopqa', Path('$D'))
"
export WAYPOINT_DATA_DIR=$PWD/.waypoint/bench/articles-ab
export WAYPOINT_LOCAL_SERVER_BIN=$HERE/.waypoint/llama-native/bin/llama-server  # as make run serves it
# arm 1 (29d1294): any heading hit is a section lookup; a fresh-clone CI run shared the CPU from its 1st question
(cd $OLD && $HERE/.venv/bin/python -c 'import cli; cli.main()' eval -d $D -s agent --limit 20 -o $OUT/any_heading)
# arm 2 (fd2dae5): only documents of more than top_k passages (checkout at fd2dae5)
# arm 3 (3478200): also tree_search not offered, no document having more than one heading (checkout at 3478200)
for arm in long_docs no_title_trees; do
  [ -f $OUT/$arm/summary.json ] || .venv/bin/waypoint eval -d $D -s agent --limit 20 -o $OUT/$arm
done
.venv/bin/waypoint eval compare --json $OUT/any_heading $OUT/long_docs > $OUT/compare_long_docs.json
.venv/bin/waypoint eval compare --json $OUT/long_docs $OUT/no_title_trees > $OUT/compare_no_title_trees.json
