#!/bin/sh
# The call's input JSON arrives on stdin; the artifact's config in MURMUR_ARTIFACT_CONFIG.
input=$(cat)
text=$(printf '%s' "$input" | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
count=$(printf '%s' "$text" | wc -w | tr -d ' ')
printf '%s %s (config: %s)\n' "$count" "words" "$MURMUR_ARTIFACT_CONFIG"
