"""How the small-talk gate (``agents.roles.smalltalk``, ``agent.small_talk``) sorts messages, no LLM:

- every question of the committed eval sets (the three multi-hop dev sets, the mixed set, the structured-docs
  set): each one flagged as small talk would lose its search, so the count to keep at zero;
- a list of conversational messages written for this benchmark (below; a development list, not held out);
- a held-out pair of lists written after the gate's vocabulary was fixed and not tuned on: conversational
  messages (should be flagged) and short requests dressed in social words (must not be).

    python scripts/bench_small_talk.py --out docs/bench/small_talk
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from agents.roles.smalltalk import small_talk

ROOT = Path(__file__).resolve().parent.parent
QUESTION_FILES = (
    "evals/data/hotpotqa/dev_questions.jsonl",
    "evals/data/2wikimultihopqa/dev_questions.jsonl",
    "evals/data/musique/dev_questions.jsonl",
    "evals/data/mixed/dev_questions.jsonl",
    "evals/data/structured/questions.jsonl",
)
# Written for this benchmark: greetings, thanks, farewells, acknowledgements, questions to the assistant itself.
CONVERSATION = (
    "Thanks, Waypoint!",
    "thank you",
    "Thank you so much!",
    "thanks a lot",
    "cheers",
    "Hello",
    "hi",
    "Hey there!",
    "Good morning",
    "good evening!",
    "Hi Waypoint",
    "Bye",
    "Goodbye!",
    "See you later",
    "ok",
    "Okay, thanks",
    "Great, thanks!",
    "Perfect",
    "cool",
    "Awesome, that helps",
    "That's helpful, thank you",
    "Got it",
    "Understood",
    "Sorry",
    "No worries",
    "Who are you?",
    "What can you do?",
    "How are you?",
    "How are you doing today?",
    "What is your name?",
    "Can you help me?",
    "Nice one",
    "wow",
    "haha",
    "Yes please",
    "no thanks",
    "Well done!",
    "Much appreciated",
    "Take care",
    "Have a nice day!",
)

# Held out: written after the vocabulary above was settled; misses are reported, not fixed.
HELD_OUT_CHAT = (
    "hey!",
    "Thanks again",
    "thank u",
    "Many thanks.",
    "Good afternoon, Waypoint",
    "hello again",
    "Cheers mate",
    "ok cool",
    "Sounds good",
    "Makes sense, thanks",
    "Great answer",
    "That was helpful",
    "Bye for now",
    "Goodnight",
    "See ya",
    "Nice, thank you!",
    "Sorry, my mistake",
    "Are you a robot?",
    "What are you?",
    "Who made you?",
    "Are you there?",
    "You're great",
    "lol ok",
    "Fair enough",
    "Thanks, that's all",
    "Hi, how's it going?",
    "Excellent, thank you very much",
    "Alright then",
    ":)",
    "👍",
)
HELD_OUT_REQUESTS = (
    "Thanks! Who designed the lighthouse?",
    "Hi, when was Harrow Point founded?",
    "Hello, what does uuid store?",
    "Good morning! Summarise the manual please",
    "Can you help me find the release notes?",
    "Thanks, and who founded the company?",
    "OK, what about the second author?",
    "Nice. Where was he born?",
    "Hey, what is a hash index?",
    "Who are you named after?",
    "What can you tell me about Python's asyncio?",
    "Great, how do I create a table?",
    "Sorry, I meant the 1990 film",
    "Cool, and the year it closed?",
    "Thank you. What is the capital of Peru?",
    "Bye! Oh wait, who wrote Dune?",
    "hello world in python",
    "Good night, Mister Tom: who wrote it?",
    "Is that helpful for vacuum tuning?",
    "Well, what is VACUUM FULL?",
)


def questions() -> list[tuple[str, str]]:
    """(file, question) for every question of ``QUESTION_FILES``."""
    out = []
    for rel in QUESTION_FILES:
        for line in (ROOT / rel).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append((rel, json.loads(line)["question"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    args = ap.parse_args()
    qs = questions()
    t0 = time.perf_counter()
    flagged_q = [(f, q) for f, q in qs if small_talk(q)]
    chat = {m: small_talk(m) for m in CONVERSATION}
    per_message_us = (time.perf_counter() - t0) / (len(qs) + len(CONVERSATION)) * 1e6
    by_file = {rel: sum(1 for f, _ in qs if f == rel) for rel in QUESTION_FILES}
    missed = [m for m, hit in chat.items() if not hit]
    held_missed = [m for m in HELD_OUT_CHAT if not small_talk(m)]
    held_false = [m for m in HELD_OUT_REQUESTS if small_talk(m)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    payload = {
        "commit": commit.stdout.strip(),
        "questions": by_file,
        "questions_flagged": [{"file": f, "question": q} for f, q in flagged_q],
        "conversation": len(CONVERSATION),
        "conversation_flagged": len(CONVERSATION) - len(missed),
        "conversation_missed": missed,
        "held_out_chat": len(HELD_OUT_CHAT),
        "held_out_chat_missed": held_missed,
        "held_out_requests": len(HELD_OUT_REQUESTS),
        "held_out_requests_flagged": held_false,
        "mean_us_per_message": round(per_message_us, 1),
    }
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    rows = "\n".join(f"| `{rel}` | {n} | {sum(1 for f, _ in flagged_q if f == rel)} |" for rel, n in by_file.items())
    md = (
        "# Small talk told from questions, no LLM (`agents.roles.smalltalk`)\n\n"
        f"Commit {payload['commit']}; `scripts/bench_small_talk.py`; {per_message_us:.0f} µs a message.\n\n"
        "| question file | questions | flagged as small talk |\n|---|---|---|\n"
        f"{rows}\n\n"
        f"Conversational messages (written for this benchmark, a development list): "
        f"{payload['conversation_flagged']} / {len(CONVERSATION)} flagged. Missed: "
        f"{', '.join(repr(m) for m in missed) or 'none'}.\n\n"
        "Held out (written after the vocabulary was fixed, not tuned on):\n\n"
        f"- conversational: {len(HELD_OUT_CHAT) - len(held_missed)} / {len(HELD_OUT_CHAT)} flagged; missed "
        f"(searched as questions instead): {', '.join(repr(m) for m in held_missed) or 'none'};\n"
        f"- requests dressed in social words: {len(held_false)} / {len(HELD_OUT_REQUESTS)} wrongly flagged"
        f"{': ' + ', '.join(repr(m) for m in held_false) if held_false else ''}.\n"
    )
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
