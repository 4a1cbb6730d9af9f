# Sample C's answers (evals/data/unseen-c/PLAN.md, addendum and items 2-4), from a clean worktree at 3c4af19:
#   git worktree add /work/wt 3c4af19 && cd /work/wt && sh run.sh
# Subsets: C's questions that agents.roles.checks.comparison_form marks (compare/) and the others (rest/), each
# set's corpus linked in.
export PYTHONPATH=$PWD WAYPOINT_DATA_DIR=/work/bench_data WAYPOINT_LOCAL_SERVER_BIN=/work/main/.waypoint/llama-native/bin/llama-server
PY=/work/main/.venv/bin/python
$PY - <<'PYEOF'
import json, os
from agents.roles.checks import comparison_form
for s in ["hotpotqa", "2wikimultihopqa", "musique"]:
    lines = open(f"evals/data/unseen-c/{s}/questions.jsonl").read().splitlines()
    for root, keep in (("/work/cmpq", True), ("/work/restq", False)):
        sel = [x for x in lines if bool(comparison_form(json.loads(x)["question"])) == keep]
        if sel:
            os.makedirs(f"{root}/{s}", exist_ok=True)
            open(f"{root}/{s}/questions.jsonl", "w").write("\n".join(sel) + "\n")
            if not os.path.exists(f"{root}/{s}/corpus.jsonl"):
                os.symlink(os.path.abspath(f"evals/data/unseen-c/{s}/corpus.jsonl"), f"{root}/{s}/corpus.jsonl")
PYEOF
# item 2 (+ single-shot for item 4): 1 HotpotQA + 28 2Wiki either/or questions
$PY scripts/bench_agent_sets.py -d /work/cmpq/hotpotqa -d /work/cmpq/2wikimultihopqa \
  -s agent -s agent_compare_direction -s single_shot_fused -n 28 --block 7 --out /work/out_cmp
# item 4: the other 6 / 26 / 50
$PY scripts/bench_agent_sets.py -d /work/restq/hotpotqa -d /work/restq/2wikimultihopqa -d /work/restq/musique \
  -s agent -s single_shot_fused -n 50 --block 10 --out /work/out_rest
# item 3: the 4 questions where the default's trace shows an ordering on a question that is not either/or
#   (scripts/planned_comparisons.py $WAYPOINT_DATA_DIR/runs.sqlite, "NO CHOICE"), in /work/choiceq/musique
$PY scripts/bench_agent_sets.py -d /work/choiceq/musique -s agent_compare_choice -n 4 --block 4 --out /work/out_choice
