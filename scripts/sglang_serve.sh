#!/usr/bin/env bash
# Launch SGLang as Waypoint's production LLM server (GPU machine), then point Waypoint at it:
#   WAYPOINT_LLM_BASE_URL=http://127.0.0.1:30000/v1 WAYPOINT_LLM_MODEL=<served model> waypoint serve
# --enable-cache-report makes SGLang return usage.prompt_tokens_details.cached_tokens, which Waypoint
# records per LLM call; --schedule-policy lpm (longest prefix match) schedules requests that share a
# prompt prefix together so RadixAttention reuses their KV cache.
set -euo pipefail
MODEL="${1:-Qwen/Qwen2.5-7B-Instruct}"
PORT="${PORT:-30000}"
exec sglang serve \
  --model-path "$MODEL" \
  --host 127.0.0.1 --port "$PORT" \
  --schedule-policy lpm \
  --enable-cache-report \
  --enable-metrics
# Several GPUs: one worker per GPU behind the cache-aware router, e.g.
#   python -m sglang_router.launch_server --model-path "$MODEL" --dp-size 4 --policy cache_aware
