#!/usr/bin/env bash
# Launch SGLang as Waypoint's production LLM server (GPU machine), then point Waypoint at it:
#   WAYPOINT_LLM_BASE_URL=http://127.0.0.1:30000/v1 WAYPOINT_LLM_MODEL=<served model> waypoint serve
# --enable-cache-report makes SGLang return usage.prompt_tokens_details.cached_tokens, which Waypoint
# records per LLM call; --schedule-policy lpm (longest prefix match) schedules requests that share a
# prompt prefix together so RadixAttention reuses their KV cache; --enable-metrics serves /metrics,
# which Waypoint scrapes into its own /metrics (waypoint_sglang_cache_hit_rate, ..._queue_requests).
#
# Modes (see docs/deploy.md, "The serving tier"):
#   DP=1 (default)   one server on one GPU (or TP=n GPUs for one replica of a bigger model)
#   DP=n             n data-parallel replicas on this machine behind SGLang's router, one process:
#                    sglang_router.launch_server --dp-size n --router-policy cache_aware
#   ROUTER_ONLY=1    only the router, in front of replicas started elsewhere (WORKERS="http://h1:30000 ...")
# UNTESTED here: no GPU on the development machine; flags as in SGLang's docs
# (docs/advanced_features/sgl_model_gateway.md: co-launch, separate launch, cache-aware tuning).
set -euo pipefail
MODEL="${1:-Qwen/Qwen2.5-7B-Instruct}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-30000}"
TP="${TP:-1}"
DP="${DP:-1}"
SERVER_FLAGS=(--schedule-policy lpm --enable-cache-report --enable-metrics)

if [[ "${ROUTER_ONLY:-0}" == 1 ]]; then
  # shellcheck disable=SC2086  # WORKERS is a space-separated list of URLs
  exec python -m sglang_router.launch_router \
    --worker-urls ${WORKERS:?set WORKERS to the replicas\' URLs} \
    --policy cache_aware \
    --cache-threshold 0.3 --balance-abs-threshold 64 --balance-rel-threshold 1.5 \
    --host "$HOST" --port "$PORT"
fi

if [[ "$DP" -gt 1 ]]; then
  # Router and DP workers in one process; router flags carry the --router- prefix.
  exec python -m sglang_router.launch_server \
    --model-path "$MODEL" \
    --host "$HOST" --port "$PORT" \
    --tp-size "$TP" --dp-size "$DP" \
    "${SERVER_FLAGS[@]}" \
    --router-policy cache_aware
fi

exec sglang serve \
  --model-path "$MODEL" \
  --host "$HOST" --port "$PORT" \
  --tp-size "$TP" \
  "${SERVER_FLAGS[@]}"
